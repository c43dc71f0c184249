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
//! | each peer of `--peers` | 2 `tasks/get` on it | — |
//! | one of each peer per round | 3 creation on it | a round stores every task it creates |
//! | fixture L, a baseline serving its response, fixture M | 9 (`tasks/get` on L, creation on M) | started after the others stopped |

use std::collections::BTreeMap;
use std::path::Path;

use crate::cli::Row;
use crate::fixtures::{Fixture, Servers};
use crate::generator::{Call, Generator, Run};
use crate::mcp;
use crate::series::Series;

pub(crate) const ROWS: [Row; 8] = [
    Row::Baseline,
    Row::Get,
    Row::Create,
    Row::GetSqlite,
    Row::CreateSqlite,
    Row::CreateSqliteNormal,
    Row::GetPostgres,
    Row::CreatePostgres,
];

/// The peers of `--peers` (`bench/peers`): the same tool on other MCP libraries.
pub(crate) const PEERS: [&str; 2] = ["rmcp", "tower-mcp"];

/// The series of each interleaved row (and of rows 2 and 3 on each peer), and the size of the
/// `tasks/get` response the baseline serves.
#[derive(Debug, Default)]
pub(crate) struct Throughput {
    pub get_response_bytes: Option<usize>,
    pub series: BTreeMap<Row, Series>,
    pub peers: BTreeMap<(&'static str, Row), Series>,
}

/// `tasks/get` of a new completed task of `fixture`, and its response.
async fn get_of_a_completed_task(fixture: &Fixture) -> Result<(Call, Vec<u8>), String> {
    let url = fixture.url();
    let get = Call::tasks_get(&mcp::completed_task(url).await?.0, "completed");
    let body = get.checked(url).await?;
    Ok((get, body))
}

/// The selected interleaved rows, in rounds until each has `--rounds` clean runs (see
/// [`Series::wants_more`]).
pub(crate) async fn interleaved(servers: &Servers<'_>) -> Result<Throughput, String> {
    let mut out = Throughput::default();
    let rows: Vec<Row> = ROWS
        .into_iter()
        .filter(|&row| servers.args.runs(row))
        .collect();
    let peer_rows = PEERS
        .into_iter()
        .flat_map(|p| [(p, Row::Get), (p, Row::Create)]);
    let peer_rows: Vec<_> = peer_rows
        .filter(|&(_, row)| servers.args.peers.is_some() && servers.args.runs(row))
        .collect();
    if rows.is_empty() {
        return Ok(out);
    }
    // The servers that stay up across rounds, and the request each is sent.
    let mut standing = BTreeMap::new();
    let a = servers.fixture("fixture-a")?;
    let (get, body) = get_of_a_completed_task(&a).await?;
    out.get_response_bytes = Some(body.len());
    if rows.contains(&Row::Baseline) {
        standing.insert(
            Row::Baseline,
            (servers.baseline("baseline", &body)?, get.clone()),
        );
    }
    standing.insert(Row::Get, (a, get));
    for row in [Row::GetSqlite, Row::GetPostgres] {
        if rows.contains(&row) {
            let fixture = servers
                .for_row(row, &format!("fixture-{}", row.name()))
                .await?;
            let (get, _) = get_of_a_completed_task(&fixture).await?;
            standing.insert(row, (fixture, get));
        }
    }
    let mut peers = BTreeMap::new();
    for &(peer, row) in &peer_rows {
        if row == Row::Get {
            let server = servers.peer(peer, &format!("peer-{peer}"))?;
            let (get, _) = get_of_a_completed_task(&server).await?;
            peers.insert(peer, (server, get));
        }
    }
    let wants = |series: Option<&Series>| series.is_none_or(|s| s.wants_more(servers.args.rounds));
    let wants_more = |out: &Throughput| {
        rows.iter().any(|row| wants(out.series.get(row)))
            || peer_rows.iter().any(|key| wants(out.peers.get(key)))
    };
    let mut round = 0;
    while wants_more(&out) {
        round += 1;
        for &row in &rows {
            eprintln!("round {round}: {row:?}");
            let run = match standing.get(&row) {
                Some((fixture, call)) => servers.measure(fixture, call, Generator::Wrk).await?,
                None => {
                    let fresh = format!("fixture-{}-{round}", row.name());
                    let fresh = servers.for_row(row, &fresh).await?;
                    servers
                        .measure(&fresh, &Call::create(), Generator::Wrk)
                        .await?
                }
            };
            out.series
                .entry(row)
                .or_default()
                .push(run, servers.pinning);
        }
        for &(peer, row) in &peer_rows {
            eprintln!("round {round}: {peer} {row:?}");
            let run = match peers.get(peer).filter(|_| row == Row::Get) {
                Some((server, get)) => servers.measure(server, get, Generator::Wrk).await?,
                None => {
                    let fresh = servers.peer(peer, &format!("peer-{peer}-{round}"))?;
                    servers
                        .measure(&fresh, &Call::create(), Generator::Wrk)
                        .await?
                }
            };
            let series = out.peers.entry((peer, row)).or_default();
            series.push(run, servers.pinning);
        }
    }
    Ok(out)
}

/// Row 9: for each rate, in order, one oha run of the baseline, of `tasks/get` on a completed
/// task and of creation, on servers of its own.
pub(crate) async fn latency(servers: &Servers<'_>, oha: &Path) -> Result<Vec<[Run; 3]>, String> {
    let l = servers.fixture("fixture-latency")?;
    let (get, body) = get_of_a_completed_task(&l).await?;
    let b = servers.baseline("baseline-latency", &body)?;
    let m = servers.fixture("fixture-latency-create")?;
    let mut runs = Vec::new();
    for &rate in &servers.args.latency_rates {
        eprintln!("row 9: {rate} requests/s: baseline, tasks/get, creation");
        let oha = Generator::Oha(oha, rate);
        let baseline = servers.measure(&b, &get, oha).await?;
        let get = servers.measure(&l, &get, oha).await?;
        runs.push([
            baseline,
            get,
            servers.measure(&m, &Call::create(), oha).await?,
        ]);
    }
    Ok(runs)
}
