//! Rows 1, 2, 3, 7a, 7b, 7c, 8a and 8b: measured in interleaved rounds (one run of each selected row
//! per round, in that order) so that a disturbance of the shared machine hits them alike and
//! their ratios compare runs made minutes apart at most.

use serde_json::json;

use crate::cli::Row;
use crate::conn::Endpoint;
use crate::durable::Synchronous;
use crate::load::{self, LoadSpec, Watch};
use crate::mcp::{self, Call, Expect};
use crate::pool::Pool;
use crate::report::Report;
use crate::series::Series;
use crate::settle::settle;
use crate::suite::{Servers, StoreKind};

/// The rows measured in interleaved rounds: 1, 2, 3, 7a, 7b, 7c, 8a, 8b.
const INTERLEAVED: [Row; 8] = [
    Row::Baseline,
    Row::Get,
    Row::Create,
    Row::GetSqlite,
    Row::CreateSqlite,
    Row::CreateSqliteNormal,
    Row::GetPostgres,
    Row::CreatePostgres,
];

/// The series of an interleaved row.
fn series_of(report: &mut Report, row: Row) -> Option<&mut Series> {
    match row {
        Row::Baseline => Some(&mut report.baseline),
        Row::Get => Some(&mut report.get),
        Row::Create => Some(&mut report.create),
        Row::GetSqlite => Some(&mut report.get_sqlite),
        Row::CreateSqlite => Some(&mut report.create_sqlite),
        Row::CreateSqliteNormal => Some(&mut report.create_sqlite_normal),
        Row::GetPostgres => Some(&mut report.get_postgres),
        Row::CreatePostgres => Some(&mut report.create_postgres),
        Row::Lifecycle
        | Row::Latency
        | Row::Stored
        | Row::Parked
        | Row::StoredSqlite
        | Row::ResumePostgres
        | Row::TakeoverPostgres => None,
    }
}

/// Rows 1, 2, 3, 7a, 7b, 7c, 8a and 8b in interleaved rounds (one run of each selected row per round)
/// until each has `--rounds` clean runs (see [`Series::wants_more`]).
pub(crate) async fn interleaved(
    servers: &Servers<'_>,
    spec: LoadSpec,
    report: &mut Report,
) -> Result<(), String> {
    let (args, pinning) = (servers.args, servers.pinning);
    let rows: Vec<Row> = INTERLEAVED
        .into_iter()
        .filter(|&row| args.runs(row))
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    let a = servers.fixture("fixture-a")?;
    let endpoint = Endpoint::parse(a.url())?;
    let get = completed_task(&endpoint).await?;
    let body = capture(&endpoint, &get).await?;
    report.get_response_bytes = Some(body.len());
    let postgres_get = if args.runs(Row::GetPostgres) {
        let p = servers.postgres("fixture-get-postgres", 1, None).await?;
        let endpoint = Endpoint::parse(p.node(0)?.server.url())?;
        let get = completed_task(&endpoint).await?;
        Some((p, endpoint, get))
    } else {
        None
    };
    let baseline = if args.runs(Row::Baseline) {
        let server = servers.baseline("baseline", &body)?;
        let endpoint = Endpoint::parse(server.url())?;
        Some((server, endpoint))
    } else {
        None
    };
    let durable_get = if args.runs(Row::GetSqlite) {
        let s = servers.sqlite("fixture-get-sqlite", Synchronous::Full)?;
        let endpoint = Endpoint::parse(s.server.url())?;
        let get = completed_task(&endpoint).await?;
        Some((s, endpoint, get))
    } else {
        None
    };
    let create = Call::tools_call("slow_compute", json!({"seconds": 0}))?;
    let completed = Expect::Status("completed");
    let rounds = usize::try_from(args.rounds).unwrap_or(1);
    let mut round = 0;
    while rows
        .iter()
        .any(|&row| series_of(report, row).is_some_and(|s| s.wants_more(rounds)))
    {
        round += 1;
        for &row in &rows {
            let run = match row {
                Row::Baseline => {
                    let Some((server, base)) = &baseline else {
                        continue;
                    };
                    eprintln!("round {round}: row 1, baseline");
                    load::run(base, &get, completed, spec, server.pid()).await?
                }
                Row::Get => {
                    eprintln!("round {round}: row 2, tasks/get");
                    load::run(&endpoint, &get, completed, spec, a.pid()).await?
                }
                Row::Create => {
                    eprintln!("round {round}: row 3, creation");
                    let name = format!("fixture-create-{round}");
                    servers
                        .creation(&name, StoreKind::Memory, &create, spec)
                        .await?
                }
                Row::GetSqlite => {
                    let Some((s, endpoint, get)) = &durable_get else {
                        continue;
                    };
                    eprintln!("round {round}: row 7a, tasks/get, SQLite");
                    load::run(endpoint, get, completed, spec, s.server.pid()).await?
                }
                Row::CreateSqlite => {
                    eprintln!("round {round}: row 7b, creation, SQLite FULL");
                    let name = format!("fixture-create-sqlite-{round}");
                    let store = StoreKind::Sqlite(Synchronous::Full);
                    servers.creation(&name, store, &create, spec).await?
                }
                Row::CreateSqliteNormal => {
                    eprintln!("round {round}: row 7c, creation, SQLite NORMAL");
                    let name = format!("fixture-create-sqlite-normal-{round}");
                    let store = StoreKind::Sqlite(Synchronous::Normal);
                    servers.creation(&name, store, &create, spec).await?
                }
                Row::GetPostgres => {
                    let Some((p, endpoint, get)) = &postgres_get else {
                        continue;
                    };
                    eprintln!("round {round}: row 8a, tasks/get, PostgreSQL");
                    let node = p.node(0)?;
                    let watch = Watch {
                        server_pid: node.server.pid(),
                        database: Some((servers.database()?, &node.app)),
                    };
                    load::run_watched(endpoint, get, completed, spec, watch).await?
                }
                Row::CreatePostgres => {
                    eprintln!("round {round}: row 8b, creation, PostgreSQL");
                    let name = format!("fixture-create-postgres-{round}");
                    servers
                        .creation(&name, StoreKind::Postgres, &create, spec)
                        .await?
                }
                Row::Lifecycle
                | Row::Latency
                | Row::Stored
                | Row::Parked
                | Row::StoredSqlite
                | Row::ResumePostgres
                | Row::TakeoverPostgres => continue,
            };
            if let Some(series) = series_of(report, row) {
                series.push(run, pinning);
            }
        }
    }
    Ok(())
}

/// Creates a `slow_compute` task with `seconds: 0`, waits until it is completed, and returns
/// the `tasks/get` call of it.
pub(crate) async fn completed_task(endpoint: &Endpoint) -> Result<Call, String> {
    let pool = Pool::open(endpoint, 1).await?;
    let created = pool
        .call(&Call::tools_call("slow_compute", json!({"seconds": 0}))?)
        .await?;
    Expect::Created.check_task(&created)?;
    let id = created.task_id;
    let (errors, first_error) = settle(&pool, vec![id.clone()], "completed", "working").await;
    if errors > 0 {
        return Err(first_error.unwrap_or_default());
    }
    Call::tasks_get(&id)
}

/// The raw body of one checked `call` response.
pub(crate) async fn capture(endpoint: &Endpoint, call: &Call) -> Result<bytes::Bytes, String> {
    Ok(mcp::checked(endpoint, call, Expect::Status("completed"))
        .await?
        .body)
}
