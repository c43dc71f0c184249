//! Fixtures on the durable SQLite store (rows 7a–7d): each gets a fresh directory for its
//! database, removed once the fixture has stopped; and row 7d, the database size per stored
//! small completed task.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::conn::Endpoint;
use crate::memory::{self, StoredResult};
use crate::pool::Pool;
use crate::server::ServerProcess;

/// The database file's name inside its fresh directory.
const DB_FILE: &str = "tasks.db";

/// `--sqlite-synchronous` of a SQLite fixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Synchronous {
    /// Every acknowledged write is fsynced (the fixture's default).
    Full,
    /// Acknowledged writes survive a crash of the process, not of the machine.
    Normal,
}

impl Synchronous {
    /// The flag's value.
    pub(crate) fn flag(self) -> &'static str {
        match self {
            Synchronous::Full => "full",
            Synchronous::Normal => "normal",
        }
    }
}

/// A fresh directory holding one fixture's database (and its `-wal`, `-shm` and
/// `.secret` files); removed with everything in it when dropped.
#[derive(Debug)]
pub(crate) struct TempDb {
    dir: PathBuf,
}

impl TempDb {
    /// Creates `<parent>/sqlite-<name>-<pid>`, emptied first if a killed earlier run left it.
    pub(crate) fn create(parent: &Path, name: &str) -> Result<Self, String> {
        let dir = parent.join(format!("sqlite-{name}-{}", std::process::id()));
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(TempDb { dir })
    }

    /// The fixture's `--store` value: `sqlite:<dir>/tasks.db`.
    pub(crate) fn store_flag(&self) -> OsString {
        let mut flag = OsString::from("sqlite:");
        flag.push(self.dir.join(DB_FILE));
        flag
    }

    /// Sizes in bytes of `tasks.db` and `tasks.db-wal` (0 for a file that does not exist).
    pub(crate) fn sizes(&self) -> io::Result<(u64, u64)> {
        let size = |name: &str| match fs::metadata(self.dir.join(name)) {
            Ok(meta) => Ok(meta.len()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(e),
        };
        Ok((size(DB_FILE)?, size(&format!("{DB_FILE}-wal"))?))
    }

    /// Whether `tasks.db-wal` exists (SQLite deletes it when the last connection closes
    /// cleanly, after checkpointing it into the database).
    pub(crate) fn has_wal(&self) -> bool {
        self.dir.join(format!("{DB_FILE}-wal")).exists()
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        if let Err(error) = fs::remove_dir_all(&self.dir) {
            eprintln!("cannot remove {}: {error}", self.dir.display());
        }
    }
}

/// A fixture on a SQLite store. The server is stopped before its directory is removed (fields
/// drop in declaration order).
pub(crate) struct SqliteFixture {
    /// The running fixture.
    pub server: ServerProcess,
    /// Its database directory.
    pub db: TempDb,
}

/// Row 7d's result.
#[derive(Debug)]
pub(crate) struct StoredSqliteResult {
    /// Resident memory per stored task, measured as in row 5a.
    pub stored: StoredResult,
    /// Tasks in the database at the end: row 5a's warm-up and payload tasks included.
    pub tasks: usize,
    /// `tasks.db` while the fixture runs, after every task completed.
    pub db_bytes: u64,
    /// `tasks.db-wal` at the same moment.
    pub wal_bytes: u64,
    /// `tasks.db` after a clean stop (the WAL checkpointed into it and deleted); `None` when
    /// the fixture did not stop cleanly and left its WAL.
    pub closed_bytes: Option<u64>,
}

impl StoredSqliteResult {
    /// (`tasks.db` + `tasks.db-wal`) per task while running, in bytes.
    pub(crate) fn running_per_task(&self) -> f64 {
        (self.db_bytes + self.wal_bytes) as f64 / self.tasks as f64
    }

    /// `tasks.db` per task after a clean stop, in bytes.
    pub(crate) fn closed_per_task(&self) -> Option<f64> {
        self.closed_bytes
            .map(|bytes| bytes as f64 / self.tasks as f64)
    }
}

/// Row 7d: row 5a's procedure (warm-up, then `count` small completed tasks) on `fixture`, then
/// the database size while running, then again after stopping the fixture.
pub(crate) async fn stored(
    fixture: SqliteFixture,
    connections: usize,
    count: usize,
) -> Result<StoredSqliteResult, String> {
    let pool = Pool::open(&Endpoint::parse(fixture.server.url())?, connections).await?;
    let stored = memory::stored(&pool, &fixture.server, count, None).await?;
    let (db_bytes, wal_bytes) = fixture
        .db
        .sizes()
        .map_err(|e| format!("database size: {e}"))?;
    // Close the connections first: a graceful stop waits for open ones.
    drop(pool);
    let SqliteFixture { server, db } = fixture;
    drop(server);
    let closed_bytes = if db.has_wal() {
        None
    } else {
        Some(db.sizes().map_err(|e| format!("database size: {e}"))?.0)
    };
    Ok(StoredSqliteResult {
        stored,
        tasks: count + memory::TASKS_BEFORE,
        db_bytes,
        wal_bytes,
        closed_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temp_db_is_fresh_sized_and_removed() {
        let parent =
            std::env::temp_dir().join(format!("tasks-bench-durable-{}", std::process::id()));
        let db = TempDb::create(&parent, "t").unwrap();
        assert!(db.store_flag().to_string_lossy().starts_with("sqlite:"));
        assert!(db.store_flag().to_string_lossy().ends_with("tasks.db"));
        assert_eq!(db.sizes().unwrap(), (0, 0));
        assert!(!db.has_wal());
        fs::write(db.dir.join(DB_FILE), [0; 10]).unwrap();
        fs::write(db.dir.join("tasks.db-wal"), [0; 3]).unwrap();
        assert_eq!(db.sizes().unwrap(), (10, 3));
        assert!(db.has_wal());
        let dir = db.dir.clone();
        drop(db);
        assert!(!dir.exists());
        fs::remove_dir(&parent).unwrap();
    }
}
