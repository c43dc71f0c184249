//! Opening a store: the single-process lock, owner-only files, pragmas, migrations, and the
//! read model and counters loaded from the rows.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, Row};
use tasks_core::{Task, TaskId};
use tasks_runtime::{Scope, Work};

use crate::counters::Counters;
use crate::error::OpenError;
use crate::model::{Entry, Model};
use crate::options::SqliteOptions;
use crate::quarantine::{quarantine, Unreadable};
use crate::schema::{self, Found};
use crate::sql;

/// SQLite's `busy_timeout`, for other processes (a backup, the `sqlite3` shell) holding a lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Permissions of the files the store creates: owner read and write only.
const PRIVATE: u32 = 0o600;

/// An opened, migrated and loaded database.
pub(crate) struct Opened {
    pub(crate) conn: Connection,
    pub(crate) lock: File,
    pub(crate) model: Model,
    pub(crate) counters: Counters,
    /// The clock's high-water mark (ms since the Unix epoch).
    pub(crate) high_water_ms: i64,
    /// How many rows the load quarantined ([`crate::quarantine`]).
    pub(crate) quarantined: u64,
}

/// Locks, opens, migrates and loads the database at `path`.
pub(crate) fn open(path: &Path, options: &SqliteOptions) -> Result<Opened, OpenError> {
    let io = |file: &Path| {
        let file = file.to_path_buf();
        move |source| OpenError::Io { path: file, source }
    };
    if path.is_dir() {
        return Err(OpenError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::IsADirectory, "it is a directory"),
        });
    }
    // Created owner-only before SQLite sees it; SQLite gives -wal and -shm the same mode.
    // The single-process lock is an `flock` on the database file itself, so every path to the
    // file (a symlink, a hard link, another spelling) meets the same lock. SQLite's own locks
    // are POSIX record locks, which `flock` does not touch on Linux. This descriptor stays open
    // until the connection is closed: closing a descriptor of the file would drop the record
    // locks SQLite holds through its own.
    let lock = create_private(path).map_err(io(path))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            return Err(OpenError::Locked {
                path: path.to_path_buf(),
            })
        }
        Err(TryLockError::Error(source)) => {
            return Err(OpenError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    }

    let db = |error: rusqlite::Error| sqlite_error(path, error);
    let mut conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(db)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(db)?;
    let corrupt = |reason: String| OpenError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let version = match schema::inspect(&conn).map_err(db)? {
        Found::Empty => {
            // Must precede the first table.
            conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")
                .map_err(db)?;
            0
        }
        Found::Ours(version) => version,
        Found::Newer(found) => {
            return Err(OpenError::NewerSchema {
                path: path.to_path_buf(),
                found,
                supported: schema::LATEST,
            })
        }
        Found::Foreign(reason) => return Err(corrupt(reason)),
    };
    set_pragmas(&conn, options).map_err(|reason| OpenError::Database {
        path: path.to_path_buf(),
        reason,
    })?;
    schema::migrate(&mut conn, version).map_err(db)?;
    if let Some(reason) = schema::verify(&conn).map_err(db)? {
        return Err(corrupt(reason));
    }
    if version < schema::LATEST {
        // A new or migrated schema goes into the database file itself at once, not only into
        // the WAL: a database whose WAL is later lost still reads as a task database of this
        // version (with the commits the WAL held missing), never as an empty file to set up.
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(db)?;
    }
    // The lock proves the previous process is gone: its tasks are orphans at once, for the
    // runtime's recovery (`claim_orphans`) to take over.
    conn.execute("DELETE FROM nodes", []).map_err(db)?;
    let high_water_ms: i64 = conn
        .query_row(sql::HIGH_WATER, [], |row| row.get(0))
        .optional()
        .map_err(db)?
        .unwrap_or(0);
    let now_ms = high_water_ms.max(wall_clock_ms());
    let (model, counters, quarantined) = load(&conn, now_ms).map_err(db)?;
    conn.set_prepared_statement_cache_capacity(32);
    Ok(Opened {
        conn,
        lock,
        model,
        counters,
        high_water_ms,
        quarantined,
    })
}

/// Opens `path` for reading and writing, creating it owner-only if missing. An existing
/// file keeps its permissions and contents.
fn create_private(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(PRIVATE)
        .open(path)
}

fn set_pragmas(conn: &Connection, options: &SqliteOptions) -> Result<(), String> {
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(|e| format!("journal_mode=WAL: {e}"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(format!(
            "the file system does not support WAL mode (journal_mode is {mode})"
        ));
    }
    for (name, value) in [
        ("synchronous", options.synchronous.pragma()),
        ("foreign_keys", "ON"),
        ("temp_store", "MEMORY"),
        ("journal_size_limit", "67108864"),
        ("mmap_size", "0"),
    ] {
        conn.pragma_update(None, name, value)
            .map_err(|e| format!("{name}={value}: {e}"))?;
    }
    Ok(())
}

/// The wall clock in ms since the Unix epoch (0 before it): the `lastUpdatedAt` of a
/// quarantined task, when later than the store's high-water mark.
fn wall_clock_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Streams every row into the read model and counts them. A row that does not decode is
/// quarantined ([`crate::quarantine`]) and loaded as the `failed` task standing in its place;
/// returns how many were.
fn load(conn: &Connection, now_ms: i64) -> rusqlite::Result<(Model, Counters, u64)> {
    let model = Model::default();
    let mut counters = Counters::default();
    let mut unreadable = Vec::new();
    let mut statement = conn.prepare(sql::LOAD)?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        // SQLite does not check that TEXT is UTF-8: a column that is not is a row that does
        // not decode, not a failed open.
        let (id, scope, status, task) =
            (utf8(row, 0)?, utf8(row, 1)?, utf8(row, 3)?, utf8(row, 4)?);
        let work = match row.get_ref(5)? {
            ValueRef::Null => None,
            _ => Some(utf8(row, 5)?),
        };
        let revision: i64 = row.get(2)?;
        let decoded = match (&id, &scope, &status, &task, &work) {
            (Ok(id), Ok(_), Ok(status), Ok(task), None | Some(Ok(_))) => {
                let work = work.as_ref().and_then(|w| w.as_deref().ok());
                decode(id, revision, status, task, work)
            }
            _ => Err("a column is not UTF-8 text".to_owned()),
        };
        match decoded {
            Ok((task_id, task, work)) => {
                let (scope, status) = (scope.unwrap_or_default(), status.unwrap_or_default());
                counters.count_loaded(&scope, sql::is_active(&status));
                model.load(
                    task_id,
                    Entry {
                        task: Arc::new(task),
                        scope: Scope::new(scope),
                        work: work.map(Arc::new),
                    },
                );
            }
            Err(reason) => unreadable.push(Unreadable {
                rowid: row.get(8)?,
                id,
                scope,
                revision,
                created_at_ms: row.get(6)?,
                expires_at_ms: row.get(7)?,
                reason,
            }),
        }
    }
    drop(rows);
    drop(statement);
    let replaced = quarantine(conn, &unreadable, now_ms)?;
    for (task, scope) in replaced {
        counters.count_loaded(&scope, false);
        model.load(
            task.id().clone(),
            Entry {
                task: Arc::new(task),
                scope: Scope::new(scope),
                work: None,
            },
        );
    }
    model.set_total(counters.total());
    Ok((model, counters, unreadable.len() as u64))
}

/// Column `i` of `row` as text: its UTF-8 text, or, for bytes that are not UTF-8 (which
/// SQLite stores as TEXT unchecked), their lossy form as the error (for the log).
fn utf8(row: &Row<'_>, i: usize) -> rusqlite::Result<Result<String, String>> {
    Ok(match row.get_ref(i)? {
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| String::from_utf8_lossy(bytes).into_owned()),
        other => Err(format!("{other:?}")),
    })
}

/// A row's id, task and work, decoded and checked against its columns; why not, otherwise.
fn decode(
    id: &str,
    revision: i64,
    status: &str,
    task: &str,
    work: Option<&str>,
) -> Result<(TaskId, Task, Option<Work>), String> {
    let task_id = TaskId::parse(id).map_err(|e| format!("invalid id: {e}"))?;
    // Checked with plain member names first (a marker name is refused, not read specially).
    let task: Task = tasks_core::json::check_text(task)
        .and_then(|()| serde_json::from_str(task))
        .map_err(|e| format!("task does not decode: {e}"))?;
    if task.id() != &task_id
        || i64::try_from(task.revision()).ok() != Some(revision)
        || task.status().as_str() != status
    {
        return Err("columns disagree with the stored task".into());
    }
    let work = work
        .map(|work| {
            tasks_core::json::check_text(work).and_then(|()| serde_json::from_str::<Work>(work))
        })
        .transpose()
        .map_err(|e| format!("work does not decode: {e}"))?;
    Ok((task_id, task, work))
}

/// A SQLite error at open: a file that is not a database, or is damaged, is `Corrupt`.
fn sqlite_error(path: &Path, error: rusqlite::Error) -> OpenError {
    let path = path.to_path_buf();
    match error.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => OpenError::Corrupt {
            path,
            reason: "it is not a SQLite database".into(),
        },
        Some(ErrorCode::DatabaseCorrupt) => OpenError::Corrupt {
            path,
            reason: format!("SQLite reports damage: {error}"),
        },
        _ => OpenError::Database {
            path,
            reason: error.to_string(),
        },
    }
}
