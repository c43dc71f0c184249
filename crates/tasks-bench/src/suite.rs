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
//!
//! Every fixture runs with [`FIXTURE_LIMITS`]: capacity limits far above what a row creates, so
//! no creation is refused, and unlimited TTL, so nothing is reaped during a row. A SQLite
//! fixture also gets `--store sqlite:<fresh dir>/tasks.db` and `--sqlite-synchronous`; its
//! directory is removed once it has stopped (see [`crate::durable`]).

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{Row, RunArgs};
use crate::conn::Endpoint;
use crate::durable::{self, SqliteFixture, Synchronous, TempDb};
use crate::load::{self, LoadResult, LoadSpec};
use crate::mcp::{Call, Expect};
use crate::pin::Pinning;
use crate::pool::Pool;
use crate::report::{Report, Setup};
use crate::server::{self, ServerProcess};
use crate::{fsync, lifecycle, memory, rounds};

/// Fixture flags of every row.
pub const FIXTURE_LIMITS: &[&str] = &[
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
pub struct Servers<'a> {
    pub(crate) args: &'a RunArgs,
    pub(crate) pinning: &'a Pinning,
    pub(crate) logs: PathBuf,
    fixture: PathBuf,
    /// Where SQLite fixtures get their fresh directories.
    sqlite_dir: PathBuf,
}

/// Where a creation row's fixture keeps its tasks.
#[derive(Debug, Clone, Copy)]
pub enum StoreKind {
    /// The in-memory store (the fixture's default).
    Memory,
    /// A fresh SQLite database.
    Sqlite(Synchronous),
}

impl Servers<'_> {
    /// A fixture on the memory store.
    pub fn fixture(&self, name: &str) -> Result<ServerProcess, String> {
        self.start_fixture(name, &[])
    }

    /// A fixture on a fresh SQLite database.
    pub fn sqlite(&self, name: &str, synchronous: Synchronous) -> Result<SqliteFixture, String> {
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
    pub async fn creation(
        &self,
        name: &str,
        store: StoreKind,
        create: &Call,
        spec: LoadSpec,
    ) -> Result<LoadResult, String> {
        let (server, _db) = match store {
            StoreKind::Memory => (self.fixture(name)?, None),
            StoreKind::Sqlite(synchronous) => {
                let SqliteFixture { server, db } = self.sqlite(name, synchronous)?;
                (server, Some(db))
            }
        };
        let target = Endpoint::parse(server.url())?;
        let run = load::run(&target, create, Expect::Created, spec, server.pid()).await;
        drop(server); // before its database directory goes
        run
    }

    /// The bare hyper baseline, answering with the bytes of `body_file`.
    pub fn baseline(&self, body_file: &std::path::Path) -> Result<ServerProcess, String> {
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
        ServerProcess::start("baseline", command, &self.logs.join("baseline.log"))
    }
}

/// Runs the selected rows.
pub async fn run(args: &RunArgs, pinning: &Pinning) -> Result<Report, String> {
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
    };
    let spec = LoadSpec {
        connections: args.connections,
        warmup: Duration::from_millis(args.warmup_ms),
        duration: Duration::from_millis(args.duration_ms),
    };
    let mut report = Report::new(Setup::describe(args, pinning, spec));
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
        report.stored = Some(memory::stored(&pool, &c, args.memory_tasks).await?);
    }
    if args.runs(Row::Parked) {
        eprintln!("row 5b: parked tasks");
        let d = servers.fixture("fixture-d")?;
        let pool = Pool::open(&Endpoint::parse(d.url())?, args.connections).await?;
        let rounds = usize::try_from(args.rounds).unwrap_or(1);
        report.parked =
            Some(memory::parked(&pool, &d, spec, args.memory_tasks, rounds, pinning).await?);
    }
    if args.runs(Row::StoredSqlite) {
        eprintln!("row 7d: stored tasks, SQLite");
        let t = servers.sqlite("fixture-stored-sqlite", Synchronous::Full)?;
        report.stored_sqlite = Some(durable::stored(t, args.connections, args.sqlite_tasks).await?);
    }
    Ok(report)
}
