//! The run: which requirements each row has (wrk, oha, a reachable PostgreSQL database), which
//! server each row uses, in which order.
//!
//! | server | rows | why a fresh one |
//! |---|---|---|
//! | see [`crate::throughput`] | 1, 2, 3, 7a–7c, 8a, 8b, 9 | — |
//! | fixture B | 4 lifecycle | CPU time per task of that row alone |
//! | fixture C | 5a stored | RSS of that row alone |
//! | fixture D | 5b parked | RSS of that row alone |
//! | SQLite fixture T (FULL) | 7d stored: database size | size and RSS of that row alone |
//! | two PostgreSQL nodes | 8c cross-node resume latency | — |
//! | two PostgreSQL nodes per round | 8d takeover (one of them is killed) | a fresh schema per kill |
//!
//! The PostgreSQL rows are left out of the default set, with the reason in the report, when the
//! database is unreachable, and row 9 when oha does not run; named with `--rows`, they fail the
//! run instead.

use std::time::Duration;

use crate::cli::{Row, RunArgs};
use crate::database::Database;
use crate::fixtures::{self, Servers};
use crate::generator::{self, LoadSpec};
use crate::pin::Pinning;
use crate::report::{self, Report};
use crate::{lifecycle, memory, resume, takeover, throughput};

/// Runs the selected rows.
pub(crate) async fn run(args: &RunArgs, pinning: &Pinning) -> Result<Report, String> {
    let (mut args, mut report) = (args.clone(), Report::default());
    // Leaves out the rows `kind` selects for `reason`, or fails when they were named.
    let mut skip = |args: &mut RunArgs, rows: &'static str, kind: fn(Row) -> bool, reason| {
        if args.rows.iter().any(|&row| kind(row)) {
            return Err(reason);
        }
        eprintln!("rows {rows} skipped: {reason}");
        *args = args.without(kind);
        report.skipped.push((rows, reason));
        Ok(())
    };
    let mut database = None;
    if args.runs_any(Row::is_postgres) {
        match Database::connect(&args.database_url).await {
            Ok(connected) => database = Some(connected),
            Err(reason) => skip(&mut args, "8a–8d", Row::is_postgres, reason)?,
        }
    }
    let oha = generator::oha_version(&args.oha);
    if oha.is_none() && args.runs(Row::Latency) {
        let (path, version) = (args.oha.display(), generator::OHA_VERSION);
        let reason = format!("{path} does not run (install it with `cargo install oha --locked --version {version}`, or pass --oha PATH)");
        skip(&mut args, "9", |row| row == Row::Latency, reason)?;
    }
    let wrk = std::process::Command::new("wrk").arg("--version").output();
    if wrk.is_err() {
        return Err("wrk is not installed: install Debian's wrk package".into());
    }
    let logs = fixtures::log_dir();
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
    let fixture = args
        .fixture
        .clone()
        .unwrap_or(exe.with_file_name("tasks-fixture"));
    let spec = LoadSpec {
        connections: args.connections,
        warmup: Duration::from_millis(args.warmup_ms),
        duration: Duration::from_millis(args.duration_ms),
    };
    let servers = Servers {
        args: &args,
        pinning,
        spec,
        sqlite_dir: args.sqlite_dir.clone().unwrap_or_else(|| logs.clone()),
        logs,
        fixture,
        database,
    };
    let rows = rows(&servers, oha, &mut report).await;
    let dropped = match &servers.database {
        Some(database) => database.drop_schemas().await,
        None => Ok(()),
    };
    rows.and(dropped).map(|()| report)
}

/// Runs the rows `servers.args` selects into `report` (row 9 with the oha of `oha`'s version
/// line).
async fn rows(
    servers: &Servers<'_>,
    oha: Option<String>,
    report: &mut Report,
) -> Result<(), String> {
    let (args, pinning) = (servers.args, servers.pinning);
    report.setup = report::describe(args.rounds, args.server_threads, pinning, servers.spec);
    report.pinning = pinning.clone();
    if let Some(database) = &servers.database {
        report.postgres = Some(database.describe().await?);
    }
    if args.runs_any(Row::is_sqlite) {
        eprintln!("fsync latency of {}", servers.sqlite_dir.display());
        let dir = &servers.sqlite_dir;
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        report.fsync = Some(memory::fsync_latency(dir)?);
    }
    report.throughput = throughput::interleaved(servers).await?;
    if args.runs(Row::Lifecycle) {
        eprintln!("row 4: lifecycle");
        let b = servers.fixture("fixture-b")?;
        report.lifecycle = Some(lifecycle::run(&b, args.connections).await?);
    }
    if args.runs(Row::Stored) {
        eprintln!("row 5a: stored tasks");
        let c = servers.fixture("fixture-c")?;
        report.stored = Some(memory::run(servers, &c, args.memory_tasks, false, true).await?);
    }
    if args.runs(Row::Parked) {
        eprintln!("row 5b: parked tasks");
        let d = servers.fixture("fixture-d")?;
        report.parked = Some(memory::run(servers, &d, args.memory_tasks, true, true).await?);
    }
    if args.runs(Row::StoredSqlite) {
        eprintln!("row 7d: stored tasks, SQLite");
        let t = servers
            .for_row(Row::StoredSqlite, "fixture-stored-sqlite")
            .await?;
        report.stored_sqlite = Some(memory::stored(servers, t, args.sqlite_tasks).await?);
    }
    if args.runs(Row::ResumePostgres) {
        eprintln!("row 8c: cross-node resume latency, PostgreSQL");
        let mut cluster = servers.cluster("fixture-resume-postgres").await?;
        for node in ["fixture-resume-postgres-a", "fixture-resume-postgres-b"] {
            servers.add_node(&mut cluster, node, None)?;
        }
        let levels = &args.resume_concurrency;
        report.resume = Some(resume::run(&cluster, args.resume_tasks, levels).await?);
    }
    if args.runs(Row::TakeoverPostgres) {
        eprintln!("row 8d: takeover, PostgreSQL");
        report.takeover = Some(takeover::run(servers).await?);
    }
    if let (true, Some(version)) = (args.runs(Row::Latency), oha) {
        eprintln!("row 9: open-loop latency (oha)");
        report.latency = Some((version, throughput::latency(servers, &args.oha).await?));
    }
    Ok(())
}
