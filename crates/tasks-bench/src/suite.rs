//! The run: which server each row uses, with which flags, in which order.
//!
//! | server | rows | why a fresh one |
//! |---|---|---|
//! | fixture A | 2 `tasks/get` (also supplies the baseline's response body) | — |
//! | baseline | 1 (alive beside fixture A: the rounds interleave rows 1, 2, 3) | — |
//! | one fixture per round | 3 creation | a round stores every task it creates (~0.5 M) |
//! | fixture B | 4 lifecycle | CPU time per task of that row alone |
//! | fixture C | 5a stored | RSS of that row alone |
//! | fixture D | 5b parked | RSS of that row alone |
//! | SQLite fixture S (FULL) | 7a `tasks/get` (alive beside fixture A: interleaved with 1, 2, 3) | — |
//! | one SQLite fixture per round | 7b creation (FULL), 7c creation (NORMAL) | a fresh database per round |
//! | SQLite fixture T (FULL) | 7d stored: database size | size and RSS of that row alone |
//! | PostgreSQL fixture P | 8a `tasks/get` (alive beside fixture A: interleaved with 1, 2, 3) | — |
//! | one PostgreSQL fixture per round | 8b creation | a fresh schema per round |
//! | two PostgreSQL nodes | 8c cross-node resume latency | — |
//! | two PostgreSQL nodes per round | 8d takeover (one of them is killed) | a fresh schema per kill |
//! | fixture L, a baseline serving its response, fixture M | 9 open-loop latency (`tasks/get` on L, creation on M) | started after the rows above have stopped their servers |
//!
//! Every fixture runs with [`FIXTURE_LIMITS`]: capacity limits far above what a row creates, so
//! no creation is refused, and unlimited TTL, so nothing is reaped during a row. A SQLite
//! fixture also gets `--store sqlite:<fresh dir>/tasks.db` and `--sqlite-synchronous`; its
//! directory is removed once it has stopped (see [`crate::durable`]). A PostgreSQL fixture gets
//! the database, a fresh schema and a secret file shared by the nodes of its row (see
//! [`crate::cluster`]); the schema is dropped once they have stopped. The PostgreSQL rows are
//! left out of the default set, with the reason in the report, when the database is
//! unreachable; named with `--rows`, they fail the run instead.

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{Row, RunArgs};
use crate::cluster::{Cluster, Node};
use crate::conn::Endpoint;
use crate::database::Database;
use crate::durable::{self, SqliteFixture, Synchronous, TempDb};
use crate::load::{self, LoadResult, LoadSpec, Watch};
use crate::mcp::{Call, Expect};
use crate::pin::Pinning;
use crate::pool::Pool;
use crate::report::{Report, Setup};
use crate::server::{self, ServerProcess};
use crate::{fsync, latency, lifecycle, memory, resume, rounds, takeover};

/// Fixture flags of every row.
pub(crate) const FIXTURE_LIMITS: &[&str] = &[
    "--max-tasks",
    "10000000",
    "--max-active-per-scope",
    "10000000",
    "--max-workers",
    "1000000",
    "--ttl-ms",
    "0",
];

/// Starts the servers of a run: fixtures (on the memory store or a fresh SQLite database) and
/// the baseline.
pub(crate) struct Servers<'a> {
    pub(crate) args: &'a RunArgs,
    pub(crate) pinning: &'a Pinning,
    pub(crate) logs: PathBuf,
    fixture: PathBuf,
    /// Where SQLite fixtures get their fresh directories.
    sqlite_dir: PathBuf,
    /// The PostgreSQL database, when a PostgreSQL row runs.
    pub(crate) database: Option<Database>,
}

/// Where a creation row's fixture keeps its tasks.
#[derive(Debug, Clone, Copy)]
pub(crate) enum StoreKind {
    /// The in-memory store (the fixture's default).
    Memory,
    /// A fresh SQLite database.
    Sqlite(Synchronous),
    /// A fresh schema of the PostgreSQL database.
    Postgres,
}

impl Servers<'_> {
    /// A fixture on the memory store.
    pub(crate) fn fixture(&self, name: &str) -> Result<ServerProcess, String> {
        self.start_fixture(name, &[])
    }

    /// A fixture on a fresh SQLite database.
    pub(crate) fn sqlite(
        &self,
        name: &str,
        synchronous: Synchronous,
    ) -> Result<SqliteFixture, String> {
        let db = TempDb::create(&self.sqlite_dir, name)?;
        let store = [
            "--store".into(),
            db.store_flag(),
            "--sqlite-synchronous".into(),
            synchronous.flag().into(),
        ];
        let server = self.start_fixture(name, &store)?;
        Ok(SqliteFixture { server, db })
    }

    /// `nodes` fixtures named `<name>-a`, `<name>-b`, … (or one named `name`) on a fresh
    /// schema of the database, sharing a secret file, with `--lease-ms` when given.
    pub(crate) async fn postgres(
        &self,
        name: &str,
        nodes: usize,
        lease_ms: Option<u64>,
    ) -> Result<Cluster, String> {
        let mut cluster = self.cluster(name).await?;
        for i in 0..nodes {
            let node = if nodes == 1 {
                name.to_owned()
            } else {
                format!("{name}-{}", char::from(b'a' + (i % 26) as u8))
            };
            self.add_node(&mut cluster, &node, lease_ms)?;
        }
        Ok(cluster)
    }

    /// A cluster with no node yet, on a fresh schema of the database.
    pub(crate) async fn cluster(&self, name: &str) -> Result<Cluster, String> {
        let schema = self.database()?.schema(name).await?;
        Ok(Cluster::new(schema, &self.logs, name))
    }

    /// Starts fixture `node` as one more node of `cluster`, with `--lease-ms` when given.
    pub(crate) fn add_node(
        &self,
        cluster: &mut Cluster,
        node: &str,
        lease_ms: Option<u64>,
    ) -> Result<(), String> {
        let app = Cluster::app_name(node);
        let flags = cluster.flags(self.database()?, &app, lease_ms);
        let server = self.start_fixture(node, &flags)?;
        cluster.nodes.push(Node { server, app });
        Ok(())
    }

    /// The PostgreSQL database.
    pub(crate) fn database(&self) -> Result<&Database, String> {
        self.database
            .as_ref()
            .ok_or_else(|| "no PostgreSQL database".to_owned())
    }

    fn start_fixture(
        &self,
        name: &str,
        extra: &[std::ffi::OsString],
    ) -> Result<ServerProcess, String> {
        let mut command = self.pinning.server_command(&self.fixture);
        command
            .args(["--listen", "127.0.0.1:0", "--worker-threads"])
            .arg(self.args.server_threads.to_string())
            .args(FIXTURE_LIMITS)
            .args(extra);
        ServerProcess::start(name, command, &self.logs.join(format!("{name}.log")))
    }

    /// One creation run on a fresh fixture (a round stores every task it creates).
    pub(crate) async fn creation(
        &self,
        name: &str,
        store: StoreKind,
        create: &Call,
        spec: LoadSpec,
    ) -> Result<LoadResult, String> {
        if let StoreKind::Postgres = store {
            let cluster = self.postgres(name, 1, None).await?;
            let node = cluster.node(0)?;
            let target = Endpoint::parse(node.server.url())?;
            let watch = Watch {
                server_pid: node.server.pid(),
                database: Some((self.database()?, &node.app)),
            };
            return load::run_watched(&target, create, Expect::Created, spec, watch).await;
        }
        let (server, _db) = match store {
            StoreKind::Sqlite(synchronous) => {
                let SqliteFixture { server, db } = self.sqlite(name, synchronous)?;
                (server, Some(db))
            }
            StoreKind::Memory | StoreKind::Postgres => (self.fixture(name)?, None),
        };
        let target = Endpoint::parse(server.url())?;
        let run = load::run(&target, create, Expect::Created, spec, server.pid()).await;
        drop(server); // before its database directory goes
        run
    }

    /// The bare hyper baseline named `name`, answering every request with `body` (written to
    /// `<name>-body.json` in the log folder).
    pub(crate) fn baseline(&self, name: &str, body: &[u8]) -> Result<ServerProcess, String> {
        let body_file = self.logs.join(format!("{name}-body.json"));
        std::fs::write(&body_file, body).map_err(|e| format!("{}: {e}", body_file.display()))?;
        let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
        let mut command = self.pinning.server_command(&exe);
        command
            .args([
                "baseline-server",
                "--listen",
                "127.0.0.1:0",
                "--worker-threads",
            ])
            .arg(self.args.server_threads.to_string())
            .arg("--body-file")
            .arg(body_file);
        ServerProcess::start(name, command, &self.logs.join(format!("{name}.log")))
    }
}

/// Runs the selected rows.
pub(crate) async fn run(args: &RunArgs, pinning: &Pinning) -> Result<Report, String> {
    let (database, skipped) = if args.runs_postgres() {
        match Database::connect(&args.database_url).await {
            Ok(database) => (Some(database), None),
            Err(reason) if args.rows_named() => return Err(reason),
            Err(reason) => (None, Some(reason)),
        }
    } else {
        (None, None)
    };
    let without_postgres;
    let args = if skipped.is_some() {
        without_postgres = args.without_postgres();
        &without_postgres
    } else {
        args
    };
    // Row 9 needs oha; by default it is left out, with the reason, when oha does not run.
    let oha_version = crate::oha::version(&args.oha);
    let latency_skipped = match &oha_version {
        None if args.runs(Row::Latency) => {
            let reason = format!(
                "{} does not run (install it with `cargo install oha --locked --version {}`, or pass --oha PATH)",
                args.oha.display(),
                crate::oha::VERSION
            );
            if args.rows.contains(&Row::Latency) {
                return Err(reason);
            }
            Some(reason)
        }
        _ => None,
    };
    let without_latency;
    let args = if latency_skipped.is_some() {
        without_latency = args.without_latency();
        &without_latency
    } else {
        args
    };
    let logs = server::log_dir();
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let fixture = match &args.fixture {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .map_err(|e| format!("own path: {e}"))?
            .with_file_name("tasks-fixture"),
    };
    let sqlite_dir = args.sqlite_dir.clone().unwrap_or_else(|| logs.clone());
    let servers = Servers {
        args,
        pinning,
        logs,
        fixture,
        sqlite_dir,
        database,
    };
    if !crate::wrk::available() {
        return Err("wrk is not installed: install Debian's wrk package".into());
    }
    let spec = LoadSpec {
        connections: args.connections,
        warmup: Duration::from_millis(args.warmup_ms),
        duration: Duration::from_millis(args.duration_ms),
    };
    let mut report = Report::new(Setup::describe(args, pinning, spec));
    if let Some(reason) = skipped {
        eprintln!("rows 8a–8d skipped: {reason}");
        report.postgres_skipped = Some(reason);
    }
    if let Some(reason) = latency_skipped {
        eprintln!("row 9 skipped: {reason}");
        report.latency_skipped = Some(reason);
    }
    if let Some(database) = &servers.database {
        report.postgres_version = Some(database.version().await?);
        report.postgres_url = Some(database.shown());
    }
    if args.runs_sqlite() {
        eprintln!("fsync latency of {}", servers.sqlite_dir.display());
        std::fs::create_dir_all(&servers.sqlite_dir)
            .map_err(|e| format!("{}: {e}", servers.sqlite_dir.display()))?;
        report.fsync = Some(fsync::measure(&servers.sqlite_dir, fsync::SYNCS)?);
    }
    rounds::interleaved(&servers, spec, &mut report).await?;
    if args.runs(Row::Lifecycle) {
        eprintln!("row 4: lifecycle");
        let b = servers.fixture("fixture-b")?;
        let pool = Pool::open(&Endpoint::parse(b.url())?, args.connections).await?;
        report.lifecycle =
            Some(lifecycle::run(&pool, &b, args.lifecycle_tasks, args.lifecycle_seconds).await?);
    }
    if args.runs(Row::Stored) {
        eprintln!("row 5a: stored tasks");
        let c = servers.fixture("fixture-c")?;
        let pool = Pool::open(&Endpoint::parse(c.url())?, args.connections).await?;
        let get = memory::GetLoad {
            spec,
            rounds: usize::try_from(args.rounds).unwrap_or(1),
            pinning,
        };
        report.stored = Some(memory::stored(&pool, &c, args.memory_tasks, Some(get)).await?);
    }
    if args.runs(Row::Parked) {
        eprintln!("row 5b: parked tasks");
        let d = servers.fixture("fixture-d")?;
        let pool = Pool::open(&Endpoint::parse(d.url())?, args.connections).await?;
        let get = memory::GetLoad {
            spec,
            rounds: usize::try_from(args.rounds).unwrap_or(1),
            pinning,
        };
        report.parked = Some(memory::parked(&pool, &d, args.memory_tasks, get).await?);
    }
    if args.runs(Row::StoredSqlite) {
        eprintln!("row 7d: stored tasks, SQLite");
        let t = servers.sqlite("fixture-stored-sqlite", Synchronous::Full)?;
        report.stored_sqlite = Some(durable::stored(t, args.connections, args.sqlite_tasks).await?);
    }
    if args.runs(Row::ResumePostgres) {
        eprintln!("row 8c: cross-node resume latency, PostgreSQL");
        let cluster = servers.postgres("fixture-resume-postgres", 2, None).await?;
        report.resume =
            Some(resume::run(&cluster, args.resume_tasks, &args.resume_concurrency).await?);
    }
    if args.runs(Row::TakeoverPostgres) {
        eprintln!("row 8d: takeover, PostgreSQL");
        report.takeover = Some(takeover::run(&servers).await?);
    }
    if let (true, Some(version)) = (args.runs(Row::Latency), oha_version) {
        eprintln!("row 9: open-loop latency (oha)");
        let rates = &args.latency_rates;
        report.latency = Some(latency::run(&servers, &args.oha, version, rates, spec).await?);
    }
    Ok(report)
}
