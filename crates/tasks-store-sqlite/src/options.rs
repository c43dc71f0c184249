//! How a store is opened: durability level and batch size.

/// SQLite's `synchronous` setting: when a commit reaches the disk.
///
/// The database runs in WAL mode, where an acknowledged write survives a crash of the process
/// (`kill -9`, a panic, an OOM kill) under either setting. They differ on a crash of the
/// machine (power loss, kernel panic).
///
/// `#[non_exhaustive]`: SQLite has other levels (`EXTRA`, `OFF`) that a minor release may add.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Synchronous {
    /// `PRAGMA synchronous=FULL`: the WAL is synced at every commit, so an acknowledged write
    /// also survives power loss. One fsync per batch of writes (see [`SqliteOptions::max_batch`]).
    #[default]
    Full,
    /// `PRAGMA synchronous=NORMAL`: the WAL is synced only at checkpoints, so an acknowledged
    /// write survives a process crash but the last writes before a power loss or OS crash may
    /// be rolled back. Faster per commit.
    Normal,
}

impl Synchronous {
    /// The pragma value.
    pub(crate) fn pragma(self) -> &'static str {
        match self {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        }
    }
}

/// Options of [`crate::SqliteStore::open`].
///
/// `#[non_exhaustive]`, so that an option can be added in a minor release: start from
/// `SqliteOptions::default()` and chain the `with_*` setters.
///
/// ```
/// use tasks_store_sqlite::{SqliteOptions, Synchronous};
///
/// let options = SqliteOptions::default().with_synchronous(Synchronous::Normal).with_max_batch(64);
/// assert_eq!(options.max_batch, 64);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SqliteOptions {
    /// Durability of an acknowledged write (default [`Synchronous::Full`]).
    pub synchronous: Synchronous,
    /// The most writes committed in one transaction (group commit; default 256). The writer
    /// takes whatever is queued, up to this many, so a lone write commits at once and a burst
    /// shares one fsync. `0` is treated as 1.
    pub max_batch: usize,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            synchronous: Synchronous::Full,
            max_batch: 256,
        }
    }
}

impl SqliteOptions {
    /// Sets [`SqliteOptions::synchronous`].
    #[must_use]
    pub fn with_synchronous(mut self, synchronous: Synchronous) -> Self {
        self.synchronous = synchronous;
        self
    }

    /// Sets [`SqliteOptions::max_batch`].
    #[must_use]
    pub fn with_max_batch(mut self, max_batch: usize) -> Self {
        self.max_batch = max_batch;
        self
    }
}
