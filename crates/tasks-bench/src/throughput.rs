//! The rows driven by an external load generator: rows 1, 2, 3, 7a–7c, 8a and 8b with wrk in
//! interleaved rounds (one run of each selected row per round, so that a disturbance of the
//! shared machine hits them alike and their ratios compare runs minutes apart at most), and
//! row 9 with oha at fixed rates.
//!
//! | server | rows | why a fresh one |
//! |---|---|---|
//! | fixture A | 2 `tasks/get` (also supplies the baseline's response body) | — |
//! | baseline | 1 (alive beside fixture A) | — |
//! | one fixture per round | 3 creation | a round stores every task it creates |
//! | SQLite fixture S (FULL) | 7a `tasks/get` | — |
//! | one SQLite fixture per round | 7b creation (FULL), 7c creation (NORMAL) | a fresh database per round |
//! | PostgreSQL node P | 8a `tasks/get` | — |
//! | one PostgreSQL node per round | 8b creation | a fresh schema per round |
//! | fixture L, a baseline serving its response, fixture M | 9 (`tasks/get` on L, creation on M) | started after the others stopped |

use serde_json::json;

use crate::call::{Call, Expect};
use crate::cli::Row;
use crate::fixtures::{Servers, Synchronous};
use crate::generator::{self, Generator, Run, Watch};
use crate::mcp;
use crate::series::Series;

/// The series of each interleaved row, and the size of the `tasks/get` response the baseline
/// serves.
#[derive(Debug, Default)]
pub(crate) struct Throughput {
    pub get_response_bytes: Option<usize>,
    pub baseline: Series,
    pub get: Series,
    pub create: Series,
    pub get_sqlite: Series,
    pub create_sqlite: Series,
    pub create_sqlite_normal: Series,
    pub get_postgres: Series,
    pub create_postgres: Series,
}

impl Throughput {
    /// The series of an interleaved row.
    fn series(&mut self, row: Row) -> Option<&mut Series> {
        Some(match row {
            Row::Baseline => &mut self.baseline,
            Row::Get => &mut self.get,
            Row::Create => &mut self.create,
            Row::GetSqlite => &mut self.get_sqlite,
            Row::CreateSqlite => &mut self.create_sqlite,
            Row::CreateSqliteNormal => &mut self.create_sqlite_normal,
            Row::GetPostgres => &mut self.get_postgres,
            Row::CreatePostgres => &mut self.create_postgres,
            _ => return None,
        })
    }
}

/// The creation request of rows 3, 7b, 7c, 8b and 9.
fn create() -> Call {
    Call::tools_call("slow_compute", json!({"seconds": 0}))
}

/// `tasks/get` of a completed task of the fixture at `url`.
async fn get_of_a_completed_task(url: &str) -> Result<Call, String> {
    Ok(Call::tasks_get(&mcp::completed_task(url).await?.0))
}

/// One wrk run of `call` against `url`.
async fn wrk(
    servers: &Servers<'_>,
    url: &str,
    call: &Call,
    watch: Watch<'_>,
) -> Result<Run, String> {
    let expect = match call.method() {
        "tools/call" => Expect::Created,
        _ => Expect::Status("completed"),
    };
    let (spec, logs) = (servers.spec, &servers.logs);
    generator::measure(url, call, expect, spec, Generator::Wrk, watch, logs).await
}

fn watch(pid: u32) -> Watch<'static> {
    Watch {
        server_pid: pid,
        database: None,
    }
}

/// Rows 1, 2, 3, 7a, 7b, 7c, 8a and 8b in interleaved rounds until each has `--rounds` clean
/// runs (see [`Series::wants_more`]).
pub(crate) async fn interleaved(servers: &Servers<'_>) -> Result<Throughput, String> {
    let mut out = Throughput::default();
    let args = servers.args;
    let rows: Vec<Row> = [
        Row::Baseline,
        Row::Get,
        Row::Create,
        Row::GetSqlite,
        Row::CreateSqlite,
        Row::CreateSqliteNormal,
        Row::GetPostgres,
        Row::CreatePostgres,
    ]
    .into_iter()
    .filter(|&row| args.runs(row))
    .collect();
    if rows.is_empty() {
        return Ok(out);
    }
    let a = servers.fixture("fixture-a")?;
    let get = get_of_a_completed_task(a.url()).await?;
    let body = get.checked(a.url(), Expect::Status("completed")).await?;
    out.get_response_bytes = Some(body.len());
    let baseline = match args.runs(Row::Baseline) {
        true => Some(servers.baseline("baseline", &body)?),
        false => None,
    };
    let sqlite_get = match args.runs(Row::GetSqlite) {
        true => {
            let s = servers.sqlite("fixture-get-sqlite", Synchronous::Full)?;
            let get = get_of_a_completed_task(s.server.url()).await?;
            Some((s, get))
        }
        false => None,
    };
    let postgres_get = match args.runs(Row::GetPostgres) {
        true => {
            let p = servers.postgres("fixture-get-postgres").await?;
            let get = get_of_a_completed_task(p.node(0)?.server.url()).await?;
            Some((p, get))
        }
        false => None,
    };
    let rounds = usize::try_from(args.rounds).unwrap_or(1);
    let mut round = 0;
    while rows
        .iter()
        .any(|&row| out.series(row).is_some_and(|s| s.wants_more(rounds)))
    {
        round += 1;
        for &row in &rows {
            eprintln!("round {round}: {row:?}");
            let run = match (row, &baseline, &sqlite_get, &postgres_get) {
                (Row::Baseline, Some(b), _, _) => {
                    wrk(servers, b.url(), &get, watch(b.pid())).await?
                }
                (Row::Get, ..) => wrk(servers, a.url(), &get, watch(a.pid())).await?,
                (Row::Create, ..) => {
                    let c = servers.fixture(&format!("fixture-create-{round}"))?;
                    wrk(servers, c.url(), &create(), watch(c.pid())).await?
                }
                (Row::GetSqlite, _, Some((s, get)), _) => {
                    wrk(servers, s.server.url(), get, watch(s.server.pid())).await?
                }
                (Row::CreateSqlite | Row::CreateSqliteNormal, ..) => {
                    let (name, sync) = match row {
                        Row::CreateSqlite => ("fixture-create-sqlite", Synchronous::Full),
                        _ => ("fixture-create-sqlite-normal", Synchronous::Normal),
                    };
                    let s = servers.sqlite(&format!("{name}-{round}"), sync)?;
                    let run = wrk(servers, s.server.url(), &create(), watch(s.server.pid())).await;
                    drop(s); // the server stops before its directory goes
                    run?
                }
                (Row::GetPostgres, _, _, Some((p, get))) => {
                    let watch = p.watch(0, servers.database()?)?;
                    wrk(servers, p.node(0)?.server.url(), get, watch).await?
                }
                (Row::CreatePostgres, ..) => {
                    let p = servers
                        .postgres(&format!("fixture-create-postgres-{round}"))
                        .await?;
                    let watch = p.watch(0, servers.database()?)?;
                    wrk(servers, p.node(0)?.server.url(), &create(), watch).await?
                }
                _ => continue,
            };
            if let Some(series) = out.series(row) {
                series.push(run, servers.pinning);
            }
        }
    }
    Ok(out)
}

/// Row 9: for each rate, in order, one oha run of the baseline, of `tasks/get` on a completed
/// task and of creation; its own servers. Per rate: the three runs in that order.
pub(crate) async fn latency(
    servers: &Servers<'_>,
    oha: &std::path::Path,
) -> Result<Vec<[Run; 3]>, String> {
    let l = servers.fixture("fixture-latency")?;
    let get = get_of_a_completed_task(l.url()).await?;
    let body = get.checked(l.url(), Expect::Status("completed")).await?;
    let b = servers.baseline("baseline-latency", &body)?;
    let m = servers.fixture("fixture-latency-create")?;
    let (spec, logs) = (servers.spec, &servers.logs);
    let completed = Expect::Status("completed");
    let mut runs = Vec::new();
    for &rate in &servers.args.latency_rates {
        eprintln!("row 9: {rate} requests/s: baseline, tasks/get, creation");
        let oha = Generator::Oha(oha, rate);
        let measure = |url, call, expect, pid| {
            generator::measure(url, call, expect, spec, oha, watch(pid), logs)
        };
        runs.push([
            measure(b.url(), &get, completed, b.pid()).await?,
            measure(l.url(), &get, completed, l.pid()).await?,
            measure(m.url(), &create(), Expect::Created, m.pid()).await?,
        ]);
    }
    Ok(runs)
}
