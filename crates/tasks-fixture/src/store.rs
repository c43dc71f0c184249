//! The `--store` choice: in memory, or a durable SQLite database.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tasks_runtime::{MemoryStore, Store};
use tasks_store_sqlite::{SqliteOptions, SqliteStore};

/// Where the fixture keeps tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// The in-memory store: nothing survives the process.
    Memory,
    /// A SQLite database at this path.
    Sqlite(PathBuf),
}

impl StoreSpec {
    /// Parses `memory` or `sqlite:PATH`.
    ///
    /// # Errors
    /// Anything else, with what is accepted.
    pub fn parse(text: &str) -> Result<StoreSpec, String> {
        match text.split_once(':') {
            None if text == "memory" => Ok(StoreSpec::Memory),
            Some(("sqlite", path)) if !path.is_empty() => Ok(StoreSpec::Sqlite(path.into())),
            _ => Err(format!(
                "unknown store {text:?}: use `memory` or `sqlite:PATH`"
            )),
        }
    }
}

/// `synchronous` of a SQLite store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Synchronous {
    /// Every acknowledged change survives power loss.
    Full,
    /// Acknowledged changes survive a crash of the process, not of the machine.
    Normal,
}

/// Opens the store `spec` names.
///
/// # Errors
/// A clear, one-line reason the store cannot be opened (locked, corrupt, newer schema,
/// unwritable); nothing is changed then.
pub fn open(spec: &StoreSpec, synchronous: Synchronous) -> Result<Arc<dyn Store>, String> {
    match spec {
        StoreSpec::Memory => Ok(Arc::new(MemoryStore::new())),
        StoreSpec::Sqlite(path) => open_sqlite(path, synchronous),
    }
}

fn open_sqlite(path: &Path, synchronous: Synchronous) -> Result<Arc<dyn Store>, String> {
    let options = SqliteOptions {
        synchronous: match synchronous {
            Synchronous::Full => tasks_store_sqlite::Synchronous::Full,
            Synchronous::Normal => tasks_store_sqlite::Synchronous::Normal,
        },
        ..SqliteOptions::default()
    };
    SqliteStore::open(path, options)
        .map(|store| Arc::new(store) as Arc<dyn Store>)
        .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_memory_and_sqlite_paths() {
        assert_eq!(StoreSpec::parse("memory"), Ok(StoreSpec::Memory));
        assert_eq!(
            StoreSpec::parse("sqlite:/tmp/tasks.db"),
            Ok(StoreSpec::Sqlite("/tmp/tasks.db".into()))
        );
        assert_eq!(
            StoreSpec::parse("sqlite:a:b"),
            Ok(StoreSpec::Sqlite("a:b".into()))
        );
        for bad in ["", "sqlite:", "sqlite", "postgres://x", "Memory"] {
            let error = StoreSpec::parse(bad).unwrap_err();
            assert!(error.contains("memory` or `sqlite:PATH"), "{bad}: {error}");
        }
    }
}
