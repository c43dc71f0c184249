//! Why a store could not be opened.

use std::path::PathBuf;

/// Why [`crate::SqliteStore::open`] failed. Nothing in the database file was changed in any
/// of these cases, except that a schema migration may have been rolled back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Another process (or another store in this process) has the database open, through this
    /// path or any other (a symlink, a hard link).
    #[error(
        "database {} is in use by another process (it holds the lock on the file); stop that \
         process or choose another path",
        path.display()
    )]
    Locked {
        /// The database path.
        path: PathBuf,
    },
    /// The database was written by a newer version of this software.
    #[error(
        "database {} has schema version {found}, newer than the {supported} this build supports; \
         run a newer build, or move the file away to start empty",
        path.display()
    )]
    NewerSchema {
        /// The database path.
        path: PathBuf,
        /// The schema version found in the file (`PRAGMA user_version`).
        found: i64,
        /// The newest schema version this build knows.
        supported: i64,
    },
    /// The file is not a SQLite database, is not a task database, or its contents do not load.
    /// The file was left as it is.
    #[error(
        "database {} is not a readable task database ({reason}); it was left unchanged: restore \
         it from a backup, or move it away to start empty",
        path.display()
    )]
    Corrupt {
        /// The database path.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A file could not be created or opened (missing directory, permissions, a directory
    /// where the file should be, ...).
    #[error("cannot open {}: {source}; check that the directory exists and is writable", path.display())]
    Io {
        /// The file that could not be opened.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// SQLite refused to set the database up (a read-only or full file system, a file system
    /// without the shared memory WAL mode needs, ...).
    #[error("cannot set up database {}: {reason}", path.display())]
    Database {
        /// The database path.
        path: PathBuf,
        /// SQLite's error.
        reason: String,
    },
}
