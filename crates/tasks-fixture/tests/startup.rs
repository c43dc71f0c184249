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

/// A hostile request (a tool argument spelt through serde_json's RawValue marker) is refused
/// and stores nothing; after `kill -9`, and a row damaged by hand while the server was down,
/// the server starts again on the same file: the damaged task alone reads `failed` ("The
/// stored state of this task could not be read", logged once with its id), every other task is
/// there and recovers by its policy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_request_and_a_damaged_row_never_stop_the_server_from_starting() {
    use serde_json::json;
    use tasks_test_support::{Client, Fixture};
    const FIXTURE: &str = env!("CARGO_BIN_EXE_tasks-fixture");

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let args = vec!["--store".to_owned(), format!("sqlite:{}", db.display())];
    let mut server = Fixture::start(FIXTURE, &args, &dir.path().join("first.log"));
    let client = Client::new(server.url.clone());
    let done = client.create("slow_compute", json!({"seconds": 0})).await;
    let done_view = client.poll_until_terminal(&done).await;
    assert_eq!(done_view["status"], "completed", "{done_view}");
    let running = client.create("slow_compute", json!({"seconds": 600})).await;
    let arguments = json!({"seconds": {"$serde_json::private::RawValue": "1"}, "label": "x"});
    let hostile = Client::send(client.post(
        json!(99),
        "tools/call",
        json!({"name": "slow_compute", "arguments": arguments}),
        tasks_test_support::protocol::tasks_caps(),
    ))
    .await;
    hostile.error(400, -32600, tasks_core::json::MARKER_MESSAGE);
    server.signal("KILL");
    assert!(server.wait_exit(std::time::Duration::from_secs(10)));

    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let stored: i64 = conn
            .query_row("SELECT count(*) FROM tasks", [], |row| row.get(0))
            .unwrap();
        assert_eq!(stored, 2, "the hostile request stored nothing");
        conn.execute(
            "INSERT INTO tasks (id, scope, revision, status, created_at_ms, expires_at_ms, \
             task, work, owner_node, generation, attempt, tool, updated_at_ms) \
             SELECT 'poison', scope, revision, status, created_at_ms, \
             expires_at_ms, '{\"taskId\":\"poison\",', work, owner_node, generation, attempt, \
             tool, updated_at_ms FROM tasks WHERE id = ?1",
            [&running],
        )
        .unwrap();
    }

    let log = dir.path().join("second.log");
    let server = Fixture::start(FIXTURE, &args, &log);
    let client = Client::new(server.url.clone());
    assert_eq!(client.get_task(&done).await, done_view);
    let poison = client.get_task("poison").await;
    assert_eq!(poison["status"], "failed", "{poison}");
    assert_eq!(
        poison["error"]["message"],
        tasks_core::MESSAGE_UNREADABLE,
        "{poison}"
    );
    // slow_compute's policy after a crash: it fails as interrupted.
    let after = client.poll_until_terminal(&running).await;
    assert_eq!(after["status"], "failed", "{after}");
    assert_ne!(after["error"]["message"], tasks_core::MESSAGE_UNREADABLE);
    let log = std::fs::read_to_string(&log).unwrap();
    assert_eq!(log.matches("could not be read").count(), 1, "{log}");
    assert!(log.contains("poison"), "{log}");
}
