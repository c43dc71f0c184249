//! The memory rows, which no load generator does: resident memory (`VmRSS`) per stored
//! completed task (5a) and per task parked in `input_required` (5b), the tasks created and
//! followed to their status through `tasks-client`; and `tasks/get` throughput (wrk) on one of
//! those tasks while it is the only one and again once the others are stored (a read must not
//! cost more with many tasks stored).

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tasks_client::{Client, TaskStatus};

use crate::call::{Call, Expect};
use crate::fixtures::Servers;
use crate::generator::{self, Generator, Watch};
use crate::mcp::{self, Tally};
use crate::series::Series;
use crate::server::ServerProcess;

/// Tasks created (and settled) before the first memory reading, so allocator arenas,
/// connection buffers and maps have their working size.
const WARMUP_TASKS: usize = 1000;
/// Tasks [`stored`] creates besides the measured ones: the warm-up, and one to read the
/// payload size from.
pub(crate) const TASKS_BEFORE: usize = WARMUP_TASKS + 1;

/// One memory measurement: tasks added between two readings of the server's RSS.
#[derive(Debug)]
pub(crate) struct MemoryResult {
    pub count: usize,
    pub rss_before: u64,
    pub rss_after: u64,
    /// How long creating the tasks took.
    pub create_time: Duration,
    /// Failed creations, or tasks that did not reach their status.
    pub tally: Tally,
}

impl MemoryResult {
    /// RSS growth per task, in bytes.
    pub(crate) fn per_task(&self) -> f64 {
        self.rss_after.saturating_sub(self.rss_before) as f64 / self.count.max(1) as f64
    }
}

/// `tasks/get` on one task with no other task (`idle`), and with the row's tasks stored.
#[derive(Debug)]
pub(crate) struct Gets {
    pub idle: Series,
    pub loaded: Series,
}

/// Row 5a's result (and row 7d's memory part, without `gets`).
#[derive(Debug)]
pub(crate) struct StoredResult {
    pub memory: MemoryResult,
    /// Serialized size of one task's stored `result` (its payload), in bytes.
    pub payload_bytes: usize,
    pub gets: Option<Gets>,
}

/// Row 5b's result.
#[derive(Debug)]
pub(crate) struct ParkedResult {
    pub memory: MemoryResult,
    pub gets: Gets,
}

/// `--rounds` clean wrk runs of `tasks/get` on task `id` of `server`, expecting `status`.
async fn gets(
    servers: &Servers<'_>,
    server: &ServerProcess,
    id: &str,
    status: TaskStatus,
) -> Result<Series, String> {
    let get = Call::tasks_get(id);
    let expect = Expect::Status(status.as_str());
    let watch = Watch {
        server_pid: server.pid(),
        database: None,
    };
    let mut series = Series::default();
    while series.wants_more(usize::try_from(servers.args.rounds).unwrap_or(1)) {
        let (spec, logs) = (servers.spec, &servers.logs);
        let run = generator::measure(
            server.url(),
            &get,
            expect,
            spec,
            Generator::Wrk,
            watch,
            logs,
        );
        series.push(run.await?, servers.pinning);
    }
    Ok(series)
}

/// Creates `count` tasks of `tool` and waits until each is in `status`.
async fn populate(
    client: &Client,
    tool: &str,
    arguments: &Value,
    count: usize,
    status: TaskStatus,
    connections: usize,
) -> (Duration, Tally) {
    let started = Instant::now();
    let (ids, mut tally) = mcp::create(client, tool, arguments, count, connections).await;
    let create_time = started.elapsed();
    tally.add(mcp::wait_all(client, &ids, status, connections).await);
    (create_time, tally)
}

/// Creates [`WARMUP_TASKS`], reads RSS, creates `count` small completed tasks (`slow_compute`,
/// `seconds: 0`), reads RSS again. With `with_gets`, measures `tasks/get` on one of them before
/// and after the `count` tasks are stored.
pub(crate) async fn stored(
    servers: &Servers<'_>,
    server: &ServerProcess,
    count: usize,
    with_gets: bool,
) -> Result<StoredResult, String> {
    let connections = servers.args.connections;
    let client = mcp::connect(server.url(), false).await?;
    let small = json!({"seconds": 0});
    let completed = TaskStatus::Completed;
    let (_, warmup) = populate(
        &client,
        "slow_compute",
        &small,
        WARMUP_TASKS,
        completed,
        connections,
    )
    .await;
    warmup.ok("warm-up")?;
    let (id, payload_bytes) = mcp::completed_task(server.url()).await?;
    let idle = match with_gets {
        true => Some(gets(servers, server, &id, completed).await?),
        false => None,
    };
    let rss_before = server.rss()?;
    let (create_time, tally) = populate(
        &client,
        "slow_compute",
        &small,
        count,
        completed,
        connections,
    )
    .await;
    let rss_after = server.rss()?;
    let gets = match idle {
        Some(idle) => Some(Gets {
            idle,
            loaded: gets(servers, server, &id, completed).await?,
        }),
        None => None,
    };
    let memory = MemoryResult {
        count,
        rss_before,
        rss_after,
        create_time,
        tally,
    };
    Ok(StoredResult {
        memory,
        payload_bytes,
        gets,
    })
}

/// Parks one `confirm_delete` task and measures `tasks/get` on it; reads RSS; parks
/// `count - 1` more; reads RSS; measures `tasks/get` on the first again.
pub(crate) async fn parked(
    servers: &Servers<'_>,
    server: &ServerProcess,
    count: usize,
) -> Result<ParkedResult, String> {
    let connections = servers.args.connections;
    let client = mcp::connect(server.url(), true).await?;
    let parking = json!({"filename": "a.txt"});
    let parked = TaskStatus::InputRequired;
    let (ids, tally) = mcp::create(&client, "confirm_delete", &parking, 1, 1).await;
    tally.ok("parking a task")?;
    mcp::wait_all(&client, &ids, parked, 1)
        .await
        .ok("parking a task")?;
    let id = ids.first().ok_or("no task")?.to_string();
    let idle = gets(servers, server, &id, parked).await?;
    let rss_before = server.rss()?;
    let count = count.saturating_sub(1);
    let (create_time, tally) = populate(
        &client,
        "confirm_delete",
        &parking,
        count,
        parked,
        connections,
    )
    .await;
    let rss_after = server.rss()?;
    let loaded = gets(servers, server, &id, parked).await?;
    let memory = MemoryResult {
        count,
        rss_before,
        rss_after,
        create_time,
        tally,
    };
    Ok(ParkedResult {
        memory,
        gets: Gets { idle, loaded },
    })
}
