//! `rmcp-app`'s command line.

use std::net::SocketAddr;
use std::num::NonZeroU64;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use tasks_conformance::store::{StoreParser, StoreSpec};
use tasks_runtime::{LeaseConfig, Limits, ListChanges, RuntimeConfig};

/// An rmcp server (the official Rust SDK) whose long-running tools are durable MCP tasks
/// (SEP-2663) on MCP 2026-07-28, through tasks-rmcp. Serves `/mcp` over HTTP and prints its
/// URL on stdout, or speaks MCP over stdio (`--stdio`).
#[derive(Debug, Clone, Parser)]
#[command(name = "rmcp-app", version)]
pub struct Settings {
    /// Address to listen on (port 0 picks a free port; the URL line says which).
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub listen: SocketAddr,
    /// Where tasks are kept: `memory`, `sqlite:PATH` (durable) or `postgres://USER@HOST/DB`
    /// (durable, shared by every node on the same database and schema).
    #[arg(long, default_value = "memory", value_parser = StoreParser)]
    pub store: StoreSpec,
    /// With `--store postgres://…`: the schema holding the tables (created if missing).
    #[arg(long, default_value = "mcp_tasks")]
    pub postgres_schema: String,
    /// File holding the server secret (created owner-only with 32 random bytes if missing):
    /// the keys of MRTR `requestState` and of caller scopes derive from it, so every node and
    /// every restart must share it. Default: `PATH.secret` beside a SQLite database; none
    /// (random keys per process) with the memory store or PostgreSQL.
    #[arg(long, value_name = "FILE")]
    pub secret_file: Option<PathBuf>,
    /// Speak MCP over stdin and stdout instead of HTTP; every request is the caller
    /// `--principal`.
    #[arg(long)]
    pub stdio: bool,
    /// With `--stdio`: the principal the tasks belong to.
    #[arg(long, default_value = "stdio")]
    pub principal: String,
    /// `ttlMs` of new tasks, in milliseconds, measured from creation; 0 means unlimited
    /// (`null`), as the fixture's flag.
    #[arg(long, default_value_t = 3_600_000)]
    pub ttl_ms: u64,
    /// `pollIntervalMs` suggested to clients, in milliseconds; 0 omits it.
    #[arg(long, default_value_t = 100)]
    pub poll_interval_ms: u64,
    /// Workers running at once (tasks parked in `input_required` hold none); beyond it creation
    /// is -32603 "Task capacity exhausted".
    #[arg(long, default_value_t = 32)]
    pub max_workers: usize,
    /// How long this node's lease lasts without renewal, in milliseconds: once it has run out
    /// (a crash, a `kill -9`), another node on the same PostgreSQL, or the next start, takes
    /// over the node's unfinished tasks.
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1_000..))]
    pub lease_ms: u64,
    /// How long running tasks may finish at a graceful shutdown (Ctrl-C, SIGTERM), in
    /// milliseconds.
    #[arg(long, default_value_t = 10_000)]
    pub drain_ms: u64,
    /// Appends `<idempotencyKey> <attempt>` to FILE each time a `resumable_job` run starts
    /// (for fault tests that count runs across processes).
    #[arg(long, value_name = "FILE")]
    pub run_log: Option<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings::parse_from(["rmcp-app"])
    }
}

impl Settings {
    /// The secret file in effect: `--secret-file`, else `PATH.secret` beside a SQLite
    /// database, else none.
    pub fn secret_path(&self) -> Option<PathBuf> {
        self.secret_file
            .clone()
            .or_else(|| self.store.default_secret_path())
    }

    /// The runtime configuration of these settings, announcing tool-list changes on
    /// `changes`.
    pub fn runtime_config(&self, changes: ListChanges) -> RuntimeConfig {
        let lease = Duration::from_millis(self.lease_ms);
        RuntimeConfig::default()
            .with_ttl_ms((self.ttl_ms > 0).then_some(self.ttl_ms))
            .with_limits(Limits::default().with_max_workers(self.max_workers))
            .with_poll_interval_ms(NonZeroU64::new(self.poll_interval_ms))
            .with_leases(
                LeaseConfig::default()
                    .with_lease(lease)
                    .with_tick((lease / 3).min(Duration::from_secs(2))),
            )
            .with_list_changes(changes)
    }

    /// The drain period of a graceful shutdown.
    pub fn drain(&self) -> Duration {
        Duration::from_millis(self.drain_ms)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::Settings;

    fn config(args: &[&str]) -> tasks_runtime::RuntimeConfig {
        let settings =
            Settings::parse_from(std::iter::once("rmcp-app").chain(args.iter().copied()));
        settings.runtime_config(tasks_runtime::ListChanges::new())
    }

    #[test]
    fn zero_means_unlimited_ttl_and_no_poll_interval() {
        let defaults = config(&[]);
        assert_eq!(defaults.ttl_ms, Some(3_600_000));
        assert_eq!(defaults.poll_interval_ms.map(u64::from), Some(100));
        assert_eq!(defaults.limits.max_workers, 32);
        let zero = config(&[
            "--ttl-ms",
            "0",
            "--poll-interval-ms",
            "0",
            "--max-workers",
            "2",
        ]);
        assert_eq!(zero.ttl_ms, None);
        assert_eq!(zero.poll_interval_ms, None);
        assert_eq!(zero.limits.max_workers, 2);
    }

    #[test]
    fn a_sqlite_store_keeps_its_secret_beside_it() {
        let settings = Settings::parse_from(["rmcp-app", "--store", "sqlite:/data/t.db"]);
        assert_eq!(
            settings.secret_path(),
            Some(std::path::PathBuf::from("/data/t.db.secret"))
        );
        assert_eq!(Settings::default().secret_path(), None);
    }
}
