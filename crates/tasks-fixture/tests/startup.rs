//! Start-up refusals of the real binary: a database it cannot use ends the process at once
//! with one clear line and exit status 1, never a panic, and the file is left as it was.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn fixture(db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasks-fixture"));
    command
        .args(["--listen", "127.0.0.1:0", "--store"])
        .arg(format!("sqlite:{}", db.display()))
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    command
}

fn refused(output: &Output, reason: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(reason), "expected {reason:?} in: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(output.stdout.is_empty(), "no URL is printed");
}

#[test]
fn a_file_that_is_not_a_task_database_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&db, &bytes).unwrap();
    let output = fixture(&db).output().unwrap();
    refused(&output, "is not a readable task database");
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "the file is unchanged");
    assert!(
        !dir.path().join("tasks.db.secret").exists(),
        "no secret file is left behind"
    );
}

#[test]
fn a_database_of_a_newer_schema_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let connection = rusqlite::Connection::open(&db).unwrap();
    connection
        .execute_batch("CREATE TABLE t(x); PRAGMA user_version = 99;")
        .unwrap();
    drop(connection);
    let before = std::fs::read(&db).unwrap();
    let output = fixture(&db).output().unwrap();
    refused(&output, "newer than");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the file is unchanged");
}

#[test]
fn a_missing_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("missing").join("tasks.db");
    let output = fixture(&db).output().unwrap();
    refused(&output, "check that the directory exists and is writable");
}

#[test]
fn a_database_in_use_is_refused_while_the_first_server_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let mut first = fixture(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(first.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("http://"),
        "the first server runs: {line:?}"
    );
    let output = fixture(&db).output().unwrap();
    first.kill().unwrap();
    first.wait().unwrap();
    refused(&output, "is in use by another process");
}

#[test]
fn a_malformed_store_url_is_refused_without_echoing_its_password() {
    let output = Command::new(env!("CARGO_BIN_EXE_tasks-fixture"))
        .args(["--store", "postgres:postgres:hunter2@127.0.0.1/test"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unknown store"), "{stderr}");
    assert!(
        !stderr.contains("hunter2"),
        "the password was echoed: {stderr}"
    );
}
