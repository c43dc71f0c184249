//! Command-line interface.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Loopback benchmark of the MCP Tasks fixture server against a bare hyper baseline (run on
/// demand; see docs/benchmarks.md).
#[derive(Debug, Parser)]
#[command(name = "tasks-bench", version)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the benchmark rows and print the markdown report.
    Run(RunArgs),
    /// Serve the bare hyper baseline (started by `run` as a child process).
    BaselineServer(BaselineArgs),
}

/// One benchmark row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Row {
    /// 1: the bare hyper baseline.
    Baseline,
    /// 2: `tasks/get` on a completed task.
    Get,
    /// 3: task creation.
    Create,
    /// 4: full lifecycles.
    Lifecycle,
    /// 5a: memory per stored completed task.
    Stored,
    /// 5b: memory per parked task, and `tasks/get` on one of them.
    Parked,
    /// 7a: `tasks/get` on a completed task of a fixture on a durable SQLite store.
    GetSqlite,
    /// 7b: task creation on a durable SQLite store, `--sqlite-synchronous full`.
    CreateSqlite,
    /// 7c: task creation on a durable SQLite store, `--sqlite-synchronous normal`.
    CreateSqliteNormal,
    /// 7d: database size (and memory) per stored completed task on a SQLite store.
    StoredSqlite,
}

impl Row {
    /// Whether the row runs a fixture on a SQLite store.
    pub fn is_sqlite(self) -> bool {
        matches!(
            self,
            Row::GetSqlite | Row::CreateSqlite | Row::CreateSqliteNormal | Row::StoredSqlite
        )
    }
}

/// Settings of `run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Keep-alive connections of the load generator (one request in flight on each).
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// Warm-up before each throughput measurement, in milliseconds.
    #[arg(long, default_value_t = 2000)]
    pub warmup_ms: u64,
    /// Measurement window of each throughput row, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    pub duration_ms: u64,
    /// Clean runs wanted of each throughput row (rounds are interleaved, and repeated up to
    /// twice this while runs are disturbed by other processes); the report shows the median.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub rounds: u64,
    /// Tokio worker threads of the fixture and of the baseline (the same for both).
    #[arg(long, default_value_t = 1)]
    pub server_threads: u16,
    /// `taskset` CPU list of the servers.
    #[arg(long, default_value = "0")]
    pub server_cpus: String,
    /// `taskset` CPU list of the load generator (this process).
    #[arg(long, default_value = "1")]
    pub client_cpus: String,
    /// Do not pin anything.
    #[arg(long)]
    pub no_pin: bool,
    /// Tasks of the lifecycle row.
    #[arg(long, default_value_t = 10_000)]
    pub lifecycle_tasks: usize,
    /// `seconds` of each lifecycle task.
    #[arg(long, default_value_t = 0.05)]
    pub lifecycle_seconds: f64,
    /// Tasks of the memory rows (stored and parked).
    #[arg(long, default_value_t = 100_000)]
    pub memory_tasks: usize,
    /// Tasks of the SQLite stored-size row (7d).
    #[arg(long, default_value_t = 100_000)]
    pub sqlite_tasks: usize,
    /// Directory under which each SQLite fixture gets a fresh directory for its database
    /// (removed afterwards); default: the log directory. Its disk's fsync latency is measured.
    #[arg(long)]
    pub sqlite_dir: Option<PathBuf>,
    /// The fixture binary; default: `tasks-fixture` next to this binary.
    #[arg(long)]
    pub fixture: Option<PathBuf>,
    /// Rows to run (comma-separated); default: all.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub rows: Vec<Row>,
    /// Also write the report to this file.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

impl RunArgs {
    /// Whether `row` runs.
    pub fn runs(&self, row: Row) -> bool {
        self.rows.is_empty() || self.rows.contains(&row)
    }

    /// Whether any row on a SQLite store runs.
    pub fn runs_sqlite(&self) -> bool {
        self.rows.is_empty() || self.rows.iter().any(|row| row.is_sqlite())
    }
}

/// Settings of `baseline-server`.
#[derive(Debug, Clone, Args)]
pub struct BaselineArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Tokio worker threads (tokio's default when absent).
    #[arg(long)]
    pub worker_threads: Option<u16>,
    /// File whose bytes are the body of every response.
    #[arg(long)]
    pub body_file: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_default_to_all() {
        let Command::Run(args) = Cli::parse_from(["tasks-bench", "run"]).command else {
            panic!("run");
        };
        assert!(args.runs(Row::Baseline) && args.runs(Row::Parked));
        let Command::Run(args) =
            Cli::parse_from(["tasks-bench", "run", "--rows", "get,create"]).command
        else {
            panic!("run");
        };
        assert!(args.runs(Row::Get) && args.runs(Row::Create) && !args.runs(Row::Baseline));
        assert!(!args.runs_sqlite());
    }

    #[test]
    fn sqlite_rows_are_selectable_and_in_the_default() {
        let Command::Run(args) = Cli::parse_from(["tasks-bench", "run"]).command else {
            panic!("run");
        };
        assert!(args.runs(Row::GetSqlite) && args.runs(Row::StoredSqlite) && args.runs_sqlite());
        let Command::Run(args) = Cli::parse_from([
            "tasks-bench",
            "run",
            "--rows",
            "get-sqlite,create-sqlite,create-sqlite-normal,stored-sqlite",
        ])
        .command
        else {
            panic!("run");
        };
        assert!(args.runs(Row::CreateSqliteNormal) && !args.runs(Row::Get));
        assert!(args.runs_sqlite());
    }
}
