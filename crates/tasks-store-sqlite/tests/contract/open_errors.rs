//! What `SqliteStore::open` refuses, and how: a held lock, a newer schema, a file that is not
//! a task database, a path that cannot hold a database. Refused files stay unchanged. Files
//! are created owner-only.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use tasks_store_sqlite::{OpenError, SqliteOptions, SqliteStore};

fn open(path: &Path) -> Result<SqliteStore, OpenError> {
    SqliteStore::open(path, SqliteOptions::default())
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn a_second_open_is_locked_until_the_first_store_is_dropped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let first = open(&path).expect("first open");
    let second = open(&path).expect_err("a second open must fail");
    assert!(
        matches!(&second, OpenError::Locked { path: p, .. } if p == &path),
        "{second:?}"
    );
    let message = second.to_string();
    assert!(
        message.contains("is in use by another process"),
        "{message}"
    );
    assert!(
        message.contains("tasks.db"),
        "the message names the database: {message}"
    );
    drop(first);
    open(&path).expect("the lock is released when the store is dropped");
}

#[test]
fn a_symlink_or_a_hard_link_to_an_open_database_is_locked_too() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let first = open(&path).expect("first open");
    let symlink = dir.path().join("symlink.db");
    std::os::unix::fs::symlink(&path, &symlink).expect("symlink");
    let hard = dir.path().join("hard.db");
    std::fs::hard_link(&path, &hard).expect("hard link");
    for other in [&symlink, &hard] {
        let refused = open(other).expect_err("another path to the same file must be refused");
        assert!(matches!(refused, OpenError::Locked { .. }), "{refused:?}");
    }
    drop(first);
    open(&hard).expect("free again once the first store is dropped");
}

#[test]
fn files_are_created_owner_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let store = open(&path).expect("open");
    assert_eq!(mode(&path), 0o600, "database file");
    // WAL mode is on, and SQLite gave its files the database's mode.
    for sidecar in ["tasks.db-wal", "tasks.db-shm"] {
        assert_eq!(mode(&dir.path().join(sidecar)), 0o600, "{sidecar}");
    }
    drop(store);
}

#[test]
fn a_newer_schema_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.execute_batch("CREATE TABLE future (x INTEGER); PRAGMA user_version = 99;")
            .expect("write a future schema");
    }
    let before = std::fs::read(&path).expect("read");
    let error = open(&path).expect_err("a newer schema must be refused");
    assert!(
        matches!(
            error,
            OpenError::NewerSchema {
                found: 99,
                supported: 6,
                ..
            }
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("schema version 99"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "the file is unchanged"
    );
}

#[test]
fn random_bytes_are_corrupt_and_left_unchanged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    // Deterministic noise (a xorshift generator), 64 KiB.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..65_536)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect();
    std::fs::write(&path, &bytes).expect("write");
    let error = open(&path).expect_err("random bytes must be refused");
    assert!(matches!(error, OpenError::Corrupt { .. }), "{error:?}");
    assert!(
        error.to_string().contains("not a SQLite database"),
        "{error}"
    );
    assert_eq!(
        std::fs::read(&path).expect("read"),
        bytes,
        "the file is unchanged"
    );
    assert!(!dir.path().join("tasks.db-wal").exists());
}

#[test]
fn another_programs_database_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.execute_batch("CREATE TABLE tasks (id TEXT PRIMARY KEY, title TEXT);")
            .expect("write another schema");
    }
    let before = std::fs::read(&path).expect("read");
    let error = open(&path).expect_err("a foreign database must be refused");
    assert!(matches!(error, OpenError::Corrupt { .. }), "{error:?}");
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "the file is unchanged"
    );
}

#[test]
fn a_directory_or_an_impossible_path_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let error = open(dir.path()).expect_err("a directory is not a database");
    assert!(matches!(error, OpenError::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("directory"), "{error}");

    let missing = dir.path().join("no-such-dir").join("tasks.db");
    let error = open(&missing).expect_err("a missing directory");
    assert!(matches!(error, OpenError::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("no-such-dir"), "{error}");

    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").expect("write");
    let error = open(&file.join("tasks.db")).expect_err("a path under a regular file");
    assert!(matches!(error, OpenError::Io { .. }), "{error:?}");
}

#[test]
fn open_works_inside_a_tokio_runtime() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    runtime.block_on(async {
        let store = open(&path).expect("open inside a runtime");
        drop(store);
    });
}
