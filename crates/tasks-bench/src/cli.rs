//! Command-line interface.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Loopback benchmark of the MCP Tasks fixture server against a bare hyper baseline (run on
/// demand; see docs/benchmarks.md).
#[derive(Debug, Parser)]
#[command(name = "tasks-bench", version)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the benchmark rows and print the markdown report.
    Run(Box<RunArgs>),
    /// Serve the bare hyper baseline (started by `run` as a child process).
    BaselineServer(BaselineArgs),
}

/// One benchmark row; its doc comment is its `--help` text and its name in the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub(crate) enum Row {
    /// 1 baseline: bare hyper, fixed response
    Baseline,
    /// 2 `tasks/get`, completed task
    Get,
    /// 3 creation: `tools/call` `slow_compute` `seconds: 0`
    Create,
    /// 4 full lifecycles: tasks started at once, each polled until completed
    Lifecycle,
    /// 5a memory per stored completed task, and `tasks/get` on one of them
    Stored,
    /// 5b memory per parked task, and `tasks/get` on one of them
    Parked,
    /// 7a `tasks/get`, SQLite FULL
    GetSqlite,
    /// 7b creation, SQLite FULL
    CreateSqlite,
    /// 7c creation, SQLite NORMAL
    CreateSqliteNormal,
    /// 7d database size (and memory) per stored completed task, SQLite FULL
    StoredSqlite,
    /// 8a `tasks/get`, PostgreSQL
    GetPostgres,
    /// 8b creation, PostgreSQL
    CreatePostgres,
    /// 8c cross-node update-to-resume latency, two nodes on one PostgreSQL schema
    ResumePostgres,
    /// 8d takeover time of a killed node's tasks, two nodes on one PostgreSQL schema
    TakeoverPostgres,
    /// 9 open-loop latency of rows 1–3 at fixed request rates (oha)
    Latency,
}

impl Row {
    /// Its `--rows` name.
    pub(crate) fn name(self) -> String {
        self.to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_owned())
    }

    /// Its number and description (its doc comment), as the report names it.
    pub(crate) fn title(self) -> String {
        let help = self.to_possible_value().and_then(|v| v.get_help().cloned());
        help.map_or_else(String::new, |help| help.to_string())
    }

    /// Whether the row runs a fixture on a SQLite store.
    pub(crate) fn is_sqlite(self) -> bool {
        self.name().contains("sqlite")
    }

    /// Whether the row runs fixtures on PostgreSQL.
    pub(crate) fn is_postgres(self) -> bool {
        self.name().ends_with("postgres")
    }
}

/// Settings of `run`.
#[derive(Debug, Clone, Args)]
pub(crate) struct RunArgs {
    /// Keep-alive connections of the load generator (wrk, oha, and the MCP client of the
    /// lifecycle and memory rows).
    #[arg(long, default_value_t = 64, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub connections: usize,
    /// Warm-up before each throughput run and each latency run (row 9, at that run's rate),
    /// in milliseconds.
    #[arg(long, default_value_t = 2000)]
    pub warmup_ms: u64,
    /// Measurement window of each throughput run and each latency run (row 9), in
    /// milliseconds.
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
    /// `taskset` CPU list of the load generators (this process, and wrk and oha, which it
    /// starts).
    #[arg(long, default_value = "1")]
    pub client_cpus: String,
    /// Do not pin anything.
    #[arg(long)]
    pub no_pin: bool,
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
    /// The PostgreSQL database of rows 8a–8d; each row gets a fresh schema in it, dropped
    /// afterwards. Without `--rows`, those rows run only when it is reachable.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    pub database_url: String,
    /// `--lease-ms` of the two nodes of the takeover row (8d).
    #[arg(long, default_value_t = 6000, value_parser = clap::value_parser!(u64).range(1_000..))]
    pub lease_ms: u64,
    /// `resumable_job` tasks started on the node that is killed, per takeover round (8d).
    #[arg(long, default_value_t = 20)]
    pub takeover_tasks: usize,
    /// Kills of the takeover row (8d), each on a fresh pair of nodes and a fresh schema, spread
    /// over a k × k grid of the two nodes' tick offsets (k = ⌈√rounds⌉; 4 and 9 fill it).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..))]
    pub takeover_rounds: u64,
    /// Tasks answered across nodes per concurrency level of the resume row (8c).
    #[arg(long, default_value_t = 300)]
    pub resume_tasks: usize,
    /// Concurrency levels of the resume row (8c): tasks in flight at once (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [1, 16])]
    pub resume_concurrency: Vec<usize>,
    /// Request rates of the open-loop latency row (9), requests per second (comma-separated);
    /// each rate is sent to the baseline, `tasks/get` and creation in turn.
    #[arg(long, value_delimiter = ',', default_values_t = [5_000, 20_000],
          value_parser = clap::value_parser!(u32).range(1..))]
    pub latency_rates: Vec<u32>,
    /// The oha binary of row 9 (`cargo install oha --locked --version 1.16.0`). When it does
    /// not run, a run without `--rows` leaves row 9 out, with the reason in the report, and
    /// `--rows latency` fails.
    #[arg(long, default_value = "oha")]
    pub oha: PathBuf,
    /// The fixture binary; default: `tasks-fixture` next to this binary.
    #[arg(long)]
    pub fixture: Option<PathBuf>,
    /// The directory of the built peer servers (`peer-rmcp`, `peer-tower-mcp`, from
    /// `bench/peers`): rows 2 and 3 run on each of them too, in the same rounds.
    #[arg(long)]
    pub peers: Option<PathBuf>,
    /// Rows to run (comma-separated); default: all.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub rows: Vec<Row>,
    /// Also write the report to this file.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

impl RunArgs {
    /// Whether `row` runs.
    pub(crate) fn runs(&self, row: Row) -> bool {
        self.rows.is_empty() || self.rows.contains(&row)
    }

    /// Whether any selected row satisfies `kind`.
    pub(crate) fn runs_any(&self, kind: fn(Row) -> bool) -> bool {
        Row::value_variants()
            .iter()
            .any(|&row| kind(row) && self.runs(row))
    }

    /// Leaves out the rows `drop` selects (their requirement is missing).
    pub(crate) fn without(&self, drop: fn(Row) -> bool) -> RunArgs {
        let mut args = self.clone();
        if args.rows.is_empty() {
            args.rows = Row::value_variants().to_vec();
        }
        args.rows.retain(|&row| !drop(row));
        args
    }
}

/// Settings of `baseline-server`.
#[derive(Debug, Clone, Args)]
pub(crate) struct BaselineArgs {
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

    fn run(argv: &[&str]) -> RunArgs {
        let all = [&["tasks-bench", "run"], argv].concat();
        let Command::Run(args) = Cli::parse_from(all).command else {
            panic!("run");
        };
        *args
    }

    #[test]
    fn rows_default_to_all_and_can_be_left_out() {
        let args = run(&[]);
        assert!(args.runs(Row::Baseline) && args.runs(Row::TakeoverPostgres));
        assert!(args.runs_any(Row::is_sqlite) && args.runs_any(Row::is_postgres));
        let without = args.without(Row::is_postgres);
        assert!(without.runs(Row::StoredSqlite) && !without.runs_any(Row::is_postgres));
        let args = run(&[
            "--rows",
            "get,create-postgres",
            "--resume-concurrency",
            "1,4",
        ]);
        assert!(args.runs(Row::Get) && !args.runs(Row::Baseline) && !args.runs_any(Row::is_sqlite));
        assert_eq!(args.resume_concurrency, [1, 4]);
        let without = args.without(|row| row == Row::Latency);
        assert!(without.runs(Row::CreatePostgres) && !without.runs(Row::Create));
        assert_eq!(run(&[]).latency_rates, [5_000, 20_000]);
        assert!(Cli::try_parse_from(["tasks-bench", "run", "--latency-rates", "0"]).is_err());
        assert_eq!(Row::GetSqlite.title(), "7a `tasks/get`, SQLite FULL");
    }
}
