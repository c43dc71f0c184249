//! A cluster for the multi-process PostgreSQL tests: fixture processes on one fresh schema
//! with a shared secret file, and what the tests read from the tasks they serve.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::pg;
use crate::support::Fixture;

/// The lease of the test nodes, in milliseconds.
pub(crate) const LEASE_MS: u64 = 6_000;
/// How long an outcome that needs a takeover may take: the lease, a claim tick, the re-run,
/// and a wide margin for two loaded cores.
pub(crate) const TAKEOVER: Duration = Duration::from_secs(45);
/// How long an outcome that needs no takeover may take.
pub(crate) const PROMPT: Duration = Duration::from_secs(20);

/// One test's database schema, secret file and nodes.
pub(crate) struct Cluster {
    pub(crate) db: pg::Database,
    pub(crate) schema: String,
    pub(crate) dir: tempfile::TempDir,
}

impl Cluster {
    /// A cluster on a fresh schema, or `None` when there is no database (skipped).
    pub(crate) async fn new() -> Option<Cluster> {
        let db = pg::Database::open().await?;
        let schema = db.schema();
        Some(Cluster {
            db,
            schema,
            dir: tempfile::tempdir().expect("a temporary directory"),
        })
    }

    pub(crate) fn secret(&self) -> PathBuf {
        self.dir.path().join("cluster.secret")
    }

    /// Starts node `name` on the shared database with the shared secret and `extra` flags.
    pub(crate) fn node(&self, name: &str, extra: &[&str]) -> Fixture {
        self.node_at(&self.db.url, name, extra)
    }

    /// [`Cluster::node`] reaching the shared database at `db_url` (e.g. through a proxy).
    pub(crate) fn node_at(&self, db_url: &str, name: &str, extra: &[&str]) -> Fixture {
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
        Fixture::start(&args, &self.dir.path().join(format!("{name}.log")))
    }

    /// Terminates the database sessions whose `application_name` is `name`; how many.
    pub(crate) async fn terminate(&self, name: &str) -> i64 {
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
    pub(crate) async fn sessions(&self, name: &str) -> i64 {
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
pub(crate) fn with_application_name(url: &str, name: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}application_name={name}")
}

pub(crate) fn status(task: &Value) -> &str {
    task["status"].as_str().unwrap_or_default()
}

pub(crate) fn is_terminal(task: &Value) -> bool {
    matches!(status(task), "completed" | "failed" | "cancelled")
}

pub(crate) fn message(task: &Value) -> &str {
    task["statusMessage"].as_str().unwrap_or_default()
}

pub(crate) fn parked_on(task: &Value, key: &str) -> bool {
    status(task) == "input_required" && task["inputRequests"].get(key).is_some()
}

pub(crate) fn confirm(yes: bool) -> Value {
    json!({"confirm-delete": {"action": "accept", "content": {"confirm": yes}}})
}
