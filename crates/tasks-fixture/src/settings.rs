//! Command-line settings of the fixture.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::store::{StoreParser, StoreSpec, Synchronous};
use tasks_runtime::{LeaseConfig, Limits};

/// MCP Tasks conformance fixture: serves `http://<listen>/mcp` (MCP 2026-07-28 with the
/// `io.modelcontextprotocol/tasks` extension) and prints that URL on stdout once it accepts
/// requests. Logs go to stderr; set `RUST_LOG` (e.g. `RUST_LOG=debug`) to change the level.
#[derive(Debug, Clone, Parser)]
#[command(name = "tasks-fixture", version)]
pub struct Settings {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub listen: SocketAddr,
    /// `ttlMs` of new tasks, in milliseconds, measured from creation; 0 means unlimited (`null`).
    #[arg(long, default_value_t = 3_600_000)]
    pub ttl_ms: u64,
    /// `pollIntervalMs` suggested to clients, in milliseconds; 0 omits it.
    #[arg(long, default_value_t = 100)]
    pub poll_interval_ms: u64,
    /// Workers running at once (tasks parked in `input_required` hold none); beyond it creation
    /// is -32603 "Task capacity exhausted" (limit `max_jobs`).
    #[arg(long, default_value_t = 32)]
    pub max_workers: usize,
    /// Tasks stored at once, terminal ones included (limit `max_tasks`). The default fits
    /// 1 000 000 small completed tasks in about 0.5 GB on the memory store (docs/benchmarks.md).
    #[arg(long, default_value_t = 1_000_000)]
    pub max_tasks: usize,
    /// Non-terminal tasks per scope (limit `max_active_tasks_per_scope`). The default lets
    /// 100 000 tasks wait in `input_required` at once.
    #[arg(long, default_value_t = 100_000)]
    pub max_active_per_scope: usize,
    /// Longest a task's worker may run, in milliseconds, before the task fails with -32603.
    #[arg(long, default_value_t = 3_600_000)]
    pub max_runtime_ms: u64,
    /// How often expired tasks are deleted, in milliseconds.
    #[arg(long, default_value_t = 60_000)]
    pub reap_interval_ms: u64,
    /// On SIGTERM or Ctrl-C, how long running tasks may take to finish before the server exits
    /// (tasks still running then are stopped: lost with the memory store, recovered by policy
    /// at the next start with a durable one), in milliseconds; tasks parked for input are not
    /// waited for.
    #[arg(long, default_value_t = 10_000)]
    pub drain_ms: u64,
    /// Largest accepted request body, in bytes (over it: HTTP 413).
    #[arg(long, default_value_t = 1_048_576)]
    pub max_body_bytes: usize,
    /// Largest result a task may store, in bytes (over it the task fails with -32603).
    #[arg(long, default_value_t = 4 * 1_048_576)]
    pub max_result_bytes: usize,
    /// Where tasks are kept: `memory` (nothing survives the process), `sqlite:PATH` (a
    /// durable SQLite database at PATH, created owner-only if missing; one process per file),
    /// or `postgres://USER@HOST:PORT/DB` (a PostgreSQL database; tables in
    /// `--postgres-schema`). Prefer a password in `~/.pgpass` to one in the URL.
    #[arg(long, default_value = "memory", value_parser = StoreParser)]
    pub store: StoreSpec,
    /// With `--store postgres://…`: the schema holding the tables (created if missing).
    #[arg(long, default_value = "mcp_tasks")]
    pub postgres_schema: String,
    /// With `--store sqlite:…`: `full` (an acknowledged change survives power loss) or
    /// `normal` (it survives a crash of the process, not of the machine; faster).
    #[arg(long, value_enum, default_value_t = Synchronous::Full)]
    pub sqlite_synchronous: Synchronous,
    /// File holding the server secret, created owner-only with 32 random bytes if missing; the
    /// keys of `requestState` and of scopes derive from it. Default: `PATH.secret` beside a
    /// SQLite database; none (random keys per process) with the memory store or PostgreSQL.
    /// Nodes sharing a PostgreSQL database must share this file (an MRTR retry may reach
    /// another node). Also read from the environment variable `TASKS_SECRET_FILE`.
    #[arg(long, env = "TASKS_SECRET_FILE")]
    pub secret_file: Option<PathBuf>,
    /// How long this node's lease lasts without renewal, in milliseconds: once it has run out
    /// (a crash, a `kill -9`, a paused process), another node sharing the PostgreSQL database,
    /// or the next start, takes over the node's unfinished tasks. Renewed every third of it, at
    /// most every 2 s.
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1_000..))]
    pub lease_ms: u64,
    /// Accepts requests addressed to HOST (a name or `name:port` in the `Host` header, e.g. the
    /// name a load balancer forwards, or this machine's address), beside the loopback names;
    /// requests for other hosts are HTTP 403 (DNS-rebinding protection). Repeatable.
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,
    /// Lets a browser app served from ORIGIN (e.g. `https://inspector.example.com`: scheme,
    /// host and port) call the endpoint: CORS preflights are answered for it (the MCP request
    /// headers, `Mcp-Param-*` included, are allowed by mirroring the request's list), and it
    /// joins the `Origin` allow-list (any other foreign origin stays HTTP 403). Repeatable; off
    /// by default.
    #[arg(long = "cors-origin", value_name = "ORIGIN", value_parser = parse_origin)]
    pub cors_origins: Vec<String>,
    /// Scopes tasks by caller, to try scoping out: `Authorization: Bearer <token>` makes
    /// `<token>` the principal (any non-empty token is accepted: this is not authentication),
    /// and a request without one is HTTP 401. Each token then sees only its own tasks, and
    /// 2025-11-25 sessions are offered `tasks/list`. Off by default.
    #[arg(long)]
    pub bearer_scope: bool,
    /// How logs are written to stderr: `text` (for people) or `json` (one JSON object per line,
    /// with the span fields, for log shippers).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Appends one line, `<idempotencyKey> <attempt>`, to FILE each time a `resumable_job` run
    /// starts (on any node writing to the same file), so a fault test can count the runs of a
    /// task across processes and restarts. Off by default.
    #[arg(long, value_name = "FILE")]
    pub run_log: Option<PathBuf>,
    /// Worker threads of the tokio runtime (the binary only); default: tokio's default, one per
    /// core the process may run on.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub worker_threads: Option<u16>,
    /// Serves the operator's console (tasks-admin) at `/admin`, behind the admin token held in
    /// FILE (trimmed; the fixture refuses to start when it is empty). The console lists every
    /// task of every scope: give the token to operators only, never to MCP clients. Off by
    /// default.
    #[arg(long, value_name = "FILE")]
    pub admin_token_file: Option<PathBuf>,
}

/// The format of the fixture's logs (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// An origin: `http` or `https`, a host and an optional port, nothing after (a trailing `/`
/// is dropped). Lowercased, as browsers send it (the CORS layer compares bytes).
fn parse_origin(text: &str) -> Result<String, String> {
    let lower = text.to_ascii_lowercase();
    let origin = lower.strip_suffix('/').unwrap_or(&lower);
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .ok_or("an origin starts with http:// or https://")?;
    let valid = !rest.is_empty()
        && !rest.contains(['/', '?', '#', '@', ' '])
        && http::HeaderValue::from_str(origin).is_ok();
    if valid {
        Ok(origin.to_owned())
    } else {
        Err("an origin is scheme://host[:port], with no path".to_owned())
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings::parse_from(["tasks-fixture"])
    }
}

impl Settings {
    /// The admin credential of `--admin-token-file`: `Ok(None)` without the flag.
    ///
    /// # Errors
    /// A one-line reason when the file cannot be read or holds only whitespace.
    pub fn admin_credential(&self) -> Result<Option<tasks_admin::AdminCredential>, String> {
        let Some(path) = &self.admin_token_file else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read admin token file {}: {error}", path.display()))?;
        tasks_admin::AdminCredential::new(text.trim())
            .map(Some)
            .ok_or_else(|| format!("admin token file {} is empty", path.display()))
    }

    /// The secret file in effect: `--secret-file`, else `PATH.secret` beside a SQLite
    /// database, else none.
    pub fn secret_path(&self) -> Option<PathBuf> {
        self.secret_file
            .clone()
            .or_else(|| self.store.default_secret_path())
    }

    /// The PostgreSQL schema holding the tables (`--postgres-schema`) when the store is
    /// PostgreSQL, else none: the start-up line names it, since nodes share tasks only within
    /// one schema.
    pub fn postgres_schema_in_use(&self) -> Option<&str> {
        match self.store {
            StoreSpec::Postgres(_) => Some(&self.postgres_schema),
            StoreSpec::Memory | StoreSpec::Sqlite(_) => None,
        }
    }

    /// The node lease these settings describe (`--lease-ms`).
    pub fn leases(&self) -> LeaseConfig {
        let lease = Duration::from_millis(self.lease_ms);
        LeaseConfig::default()
            .with_lease(lease)
            .with_tick((lease / 3).min(Duration::from_secs(2)))
    }

    /// The runtime limits these settings describe.
    pub fn limits(&self) -> Limits {
        Limits::default()
            .with_max_workers(self.max_workers)
            .with_max_tasks(self.max_tasks)
            .with_max_active_per_scope(self.max_active_per_scope)
            .with_max_runtime(Duration::from_millis(self.max_runtime_ms))
            .with_max_result_bytes(self.max_result_bytes)
            .with_reap_interval(Duration::from_millis(self.reap_interval_ms.max(1)))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::{parse_origin, Settings};

    #[test]
    fn the_admin_token_file_is_trimmed_and_must_not_be_empty() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("admin-token");
        let settings = |path: &std::path::Path| {
            Settings::try_parse_from([
                "tasks-fixture",
                "--admin-token-file",
                path.to_str().expect("UTF-8 path"),
            ])
            .expect("valid arguments")
        };
        assert!(Settings::default()
            .admin_credential()
            .expect("no flag")
            .is_none());
        std::fs::write(&path, "  \n").expect("written");
        let empty = settings(&path).admin_credential().map(|c| c.is_some());
        assert_eq!(
            empty,
            Err(format!("admin token file {} is empty", path.display()))
        );
        std::fs::write(&path, "s3cret\n").expect("written");
        let credential = settings(&path).admin_credential().expect("readable");
        assert!(credential.expect("a credential").matches(b"s3cret"));
        let missing = settings(&dir.path().join("none")).admin_credential();
        assert!(missing.is_err());
    }

    #[test]
    fn only_a_postgres_store_has_a_schema() {
        let parse = |args: &[&str]| {
            Settings::try_parse_from(["tasks-fixture"].iter().chain(args)).expect("valid arguments")
        };
        let pg = "postgres://postgres@127.0.0.1:5432/test";
        assert_eq!(
            parse(&["--store", pg]).postgres_schema_in_use(),
            Some("mcp_tasks")
        );
        assert_eq!(
            parse(&["--store", pg, "--postgres-schema", "node_a"]).postgres_schema_in_use(),
            Some("node_a")
        );
        assert_eq!(parse(&[]).postgres_schema_in_use(), None);
        assert_eq!(
            parse(&["--store", "sqlite:t.db", "--postgres-schema", "x"]).postgres_schema_in_use(),
            None
        );
    }

    #[test]
    fn origins_are_checked_and_lowercased() {
        assert_eq!(
            parse_origin("https://App.Example.com:8443/").as_deref(),
            Ok("https://app.example.com:8443")
        );
        assert_eq!(
            parse_origin("http://localhost:6274").as_deref(),
            Ok("http://localhost:6274")
        );
        for bad in [
            "app.example.com",
            "ftp://app.example.com",
            "https://",
            "https://app.example.com/path",
            "https://user@app.example.com",
            "https://app.example.com?x",
        ] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
    }
}
