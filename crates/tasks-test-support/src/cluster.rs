//! A cluster for the multi-process PostgreSQL tests: server processes (the fixture's, or
//! `rmcp-app`'s) on one fresh schema with a shared secret file, and what the tests read from
//! the tasks they serve.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::client::{result_text, Client};
use crate::postgres as pg;
use crate::process::Fixture;

/// The lease of the test nodes, in milliseconds.
pub const LEASE_MS: u64 = 6_000;
/// How long an outcome that needs a takeover may take: the lease, a claim tick, the re-run,
/// and a wide margin for two loaded cores.
pub const TAKEOVER: Duration = Duration::from_secs(45);
/// How long an outcome that needs no takeover may take.
pub const PROMPT: Duration = Duration::from_secs(20);

/// One test's database schema, secret file and nodes.
#[derive(Debug)]
pub struct Cluster {
    /// The test database.
    pub db: pg::Database,
    /// The schema every node uses.
    pub schema: String,
    /// Holds the secret file and the nodes' logs.
    pub dir: tempfile::TempDir,
    /// The server binary every node runs.
    pub binary: &'static str,
}

impl Cluster {
    /// A cluster of `binary` nodes on a fresh schema, or `None` when there is no database
    /// (skipped, said on stdout; under `CI=true` a panic instead).
    pub async fn new(binary: &'static str) -> Option<Cluster> {
        let db = pg::Database::open().await?;
        let schema = db.schema();
        Some(Cluster {
            db,
            schema,
            dir: tempfile::tempdir().expect("a temporary directory"),
            binary,
        })
    }

    /// The secret file every node shares (its `--secret-file`).
    pub fn secret(&self) -> PathBuf {
        self.dir.path().join("cluster.secret")
    }

    /// Starts node `name` on the shared database with the shared secret and `extra` flags.
    pub fn node(&self, name: &str, extra: &[&str]) -> Fixture {
        self.node_at(&self.db.url, name, extra)
    }

    /// [`Cluster::node`] reaching the shared database at `db_url` (e.g. through a proxy).
    pub fn node_at(&self, db_url: &str, name: &str, extra: &[&str]) -> Fixture {
        let url = with_application_name(db_url, name);
        let mut args: Vec<String> = vec![
            "--store".into(),
            url,
            "--postgres-schema".into(),
            self.schema.clone(),
            "--drain-ms".into(),
            "0".into(),
            "--poll-interval-ms".into(),
            "50".into(),
            "--ttl-ms".into(),
            "600000".into(),
        ];
        if !extra.contains(&"--lease-ms") {
            args.push("--lease-ms".into());
            args.push(LEASE_MS.to_string());
        }
        if !extra.contains(&"--no-shared-secret") {
            args.push("--secret-file".into());
            args.push(self.secret().display().to_string());
        }
        args.extend(
            extra
                .iter()
                .filter(|a| **a != "--no-shared-secret")
                .map(|a| (*a).to_owned()),
        );
        Fixture::start(
            self.binary,
            &args,
            &self.dir.path().join(format!("{name}.log")),
        )
    }

    /// Terminates the database sessions whose `application_name` is `name`; how many.
    pub async fn terminate(&self, name: &str) -> i64 {
        let admin = self.db.admin().await;
        let row = admin
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE application_name = $1",
                &[&name],
            )
            .await
            .expect("pg_terminate_backend runs");
        row.get(0)
    }

    /// How many sessions named `name` are connected.
    pub async fn sessions(&self, name: &str) -> i64 {
        let admin = self.db.admin().await;
        admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                &[&name],
            )
            .await
            .expect("pg_stat_activity reads")
            .get(0)
    }
}

/// `url` with `application_name=name` (the store names its listener `<name>-listen` and its
/// notifier `<name>-notify`), so a test can find one node's sessions.
pub fn with_application_name(url: &str, name: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}application_name={name}")
}

/// A task's `status` (empty when absent).
pub fn status(task: &Value) -> &str {
    task["status"].as_str().unwrap_or_default()
}

/// Whether a task is completed, failed or cancelled.
pub fn is_terminal(task: &Value) -> bool {
    matches!(status(task), "completed" | "failed" | "cancelled")
}

/// A task's `statusMessage` (empty when absent).
pub fn message(task: &Value) -> &str {
    task["statusMessage"].as_str().unwrap_or_default()
}

/// Whether a task waits for input and asks for `key`.
pub fn parked_on(task: &Value, key: &str) -> bool {
    status(task) == "input_required" && task["inputRequests"].get(key).is_some()
}

/// The `inputResponses` answering `confirm_delete`'s question with `yes`.
pub fn confirm(yes: bool) -> Value {
    json!({"confirm-delete": {"action": "accept", "content": {"confirm": yes}}})
}

/// A `confirm_delete` task created on `a`, read parked on `b` and answered on `b` (the answer
/// acknowledged): it completes with the answer, wherever its worker is parked. Its id and the
/// completed task as `b` reads it.
pub async fn answered_across(a: &Client, b: &Client) -> (String, Value) {
    let id = a
        .create("confirm_delete", json!({"filename": "a.txt"}))
        .await;
    b.wait_until(&id, PROMPT, "parked, read on B", |t| {
        parked_on(t, "confirm-delete")
    })
    .await;
    let ack = b.update_task(&id, confirm(true)).await;
    assert_eq!(ack["resultType"], "complete", "{ack}");
    let done = b.wait_until(&id, PROMPT, "completed", is_terminal).await;
    assert_eq!(status(&done), "completed", "{done}");
    assert_eq!(result_text(&done), "Delete confirmed: true");
    (id, done)
}

/// An MRTR round of `test_tool_with_task` begun on `a` (its `requestState` asks for a name),
/// retried with the answer: `stranger` (another server secret) refuses the state, `b` (the
/// shared secret) verifies it and creates the task, which completes with the answer as `a`
/// reads it.
pub async fn mrtr_retry_across(a: &Client, b: &Client, stranger: &Client) {
    let first = a
        .result(
            "tools/call",
            json!({"name": "test_tool_with_task", "arguments": {}}),
        )
        .await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let state = first["requestState"].as_str().expect("a requestState");
    let retry = json!({
        "name": "test_tool_with_task",
        "arguments": {},
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": state,
    });

    let refused = stranger
        .try_request("tools/call", retry.clone())
        .await
        .expect("an answer");
    assert_eq!(
        (&refused["error"]["code"], &refused["error"]["message"]),
        (&json!(-32602), &json!("Invalid requestState")),
        "a node with another secret refuses the state: {refused}"
    );

    let created = b.result("tools/call", retry).await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().expect("a taskId");
    let done = a
        .wait_until(id, PROMPT, "completed, read on A", is_terminal)
        .await;
    assert_eq!(status(&done), "completed", "{done}");
    assert_eq!(result_text(&done), "Hello, Ada");
}
