//! The memory rows: resident memory per stored completed task and per task parked in
//! `input_required`, each with `tasks/get` throughput on one of those tasks while it is the
//! only one and again once the others are stored (the cost of a read must not grow with the
//! number of stored tasks).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::load::{self, LoadSpec};
use crate::mcp::{self, Call, Expect};
use crate::pin::Pinning;
use crate::pool::Pool;
use crate::series::Series;
use crate::server::ServerProcess;
use crate::settle::settle;

/// Tasks created (and settled) before the first memory reading, so allocator arenas, connection
/// buffers and maps have their working size.
const WARMUP_TASKS: usize = 1000;

/// Tasks [`stored`] creates besides the measured ones: the warm-up, and one to read the
/// payload size from.
pub(crate) const TASKS_BEFORE: usize = WARMUP_TASKS + 1;

/// One memory measurement.
#[derive(Debug)]
pub(crate) struct MemoryResult {
    /// Tasks added between the two readings.
    pub count: usize,
    /// Server `VmRSS` before, in bytes.
    pub rss_before: u64,
    /// Server `VmRSS` after, in bytes.
    pub rss_after: u64,
    /// How long creating the tasks took.
    pub create_time: Duration,
    /// Failed creations or tasks that did not reach the status.
    pub errors: u64,
    /// The first failure.
    pub first_error: Option<String>,
}

impl MemoryResult {
    /// RSS growth per task, in bytes.
    pub(crate) fn per_task(&self) -> f64 {
        self.rss_after.saturating_sub(self.rss_before) as f64 / self.count as f64
    }
}

/// The stored-task row's result.
#[derive(Debug)]
pub(crate) struct StoredResult {
    /// Memory per stored completed task.
    pub memory: MemoryResult,
    /// Serialized size of one task's stored `result` (its payload), in bytes.
    pub payload_bytes: usize,
    /// `tasks/get` on one completed task before and after the others were stored (when asked).
    pub gets: Option<Gets>,
}

/// `tasks/get` on one task with no other task, and with the row's tasks stored.
#[derive(Debug)]
pub(crate) struct Gets {
    /// With no other task (beyond the warm-up).
    pub idle: Series,
    /// With the row's tasks stored.
    pub loaded: Series,
}

/// How to measure [`Gets`]: the throughput rows' load and clean runs wanted.
#[derive(Clone, Copy)]
pub(crate) struct GetLoad<'a> {
    pub spec: LoadSpec,
    pub rounds: usize,
    pub pinning: &'a Pinning,
}

impl Gets {
    /// Failed requests of both series.
    pub(crate) fn errors(&self) -> u64 {
        self.idle.errors() + self.loaded.errors()
    }
}

impl GetLoad<'_> {
    /// `rounds` clean runs of `tasks/get` on task `id`, expecting `status`.
    async fn series(
        &self,
        pool: &Arc<Pool>,
        server: &ServerProcess,
        id: &str,
        status: &'static str,
    ) -> Result<Series, String> {
        let get = Call::tasks_get(id)?;
        let mut series = Series::default();
        while series.wants_more(self.rounds) {
            series.push(
                load::run(
                    pool.endpoint(),
                    &get,
                    Expect::Status(status),
                    self.spec,
                    server.pid(),
                )
                .await?,
                self.pinning,
            );
        }
        Ok(series)
    }
}

/// The parked-task row's result.
#[derive(Debug)]
pub(crate) struct ParkedResult {
    /// Memory per parked task.
    pub memory: MemoryResult,
    /// `tasks/get` on one parked task with no other task, then with `count` tasks parked.
    pub gets: Gets,
}

/// The small task of the stored row: `slow_compute` with `seconds: 0` and no label.
fn small_task() -> Result<Call, String> {
    Call::tools_call("slow_compute", json!({"seconds": 0}))
}

/// The parking task: `confirm_delete`, which waits on key `confirm-delete` (it requires the
/// client to declare form elicitation).
fn parking_task() -> Result<Call, String> {
    Call::tools_call_eliciting("confirm_delete", json!({"filename": "a.txt"}))
}

/// Creates `count` tasks with `make` and waits until each has `status`.
async fn populate(
    pool: &Arc<Pool>,
    count: usize,
    make: fn() -> Result<Call, String>,
    status: &'static str,
) -> (Duration, u64, Option<String>) {
    let started = Instant::now();
    let created = pool
        .run_indexed(
            count,
            move |_| make(),
            |task| {
                Expect::Created.check_task(&task)?;
                Ok(task.task_id)
            },
        )
        .await;
    let create_time = started.elapsed();
    let (errors, first_error) = settle(pool, created.values, status, "working").await;
    (
        create_time,
        created.errors + errors,
        created.first_error.or(first_error),
    )
}

/// Creates [`WARMUP_TASKS`], reads RSS, creates `count` small tasks, waits until all are
/// completed, reads RSS again. With `get`, measures `tasks/get` on one completed task before
/// and after the `count` tasks are stored.
pub(crate) async fn stored(
    pool: &Arc<Pool>,
    server: &ServerProcess,
    count: usize,
    get: Option<GetLoad<'_>>,
) -> Result<StoredResult, String> {
    let (_, errors, first_error) = populate(pool, WARMUP_TASKS, small_task, "completed").await;
    if errors > 0 {
        return Err(format!(
            "warm-up failed: {}",
            first_error.unwrap_or_default()
        ));
    }
    let (id, payload_bytes) = payload_of_one(pool).await?;
    let idle = match get {
        Some(get) => Some(get.series(pool, server, &id, "completed").await?),
        None => None,
    };
    let rss_before = server.rss()?;
    let (create_time, errors, first_error) = populate(pool, count, small_task, "completed").await;
    let rss_after = server.rss()?;
    let gets = match (get, idle) {
        (Some(get), Some(idle)) => Some(Gets {
            idle,
            loaded: get.series(pool, server, &id, "completed").await?,
        }),
        _ => None,
    };
    Ok(StoredResult {
        memory: MemoryResult {
            count,
            rss_before,
            rss_after,
            create_time,
            errors,
            first_error,
        },
        payload_bytes,
        gets,
    })
}

/// A small completed task's id and the serialized size of its `result`.
async fn payload_of_one(pool: &Arc<Pool>) -> Result<(String, usize), String> {
    let id = pool.call(&small_task()?).await?.task_id;
    let (errors, first_error) = settle(pool, vec![id.clone()], "completed", "working").await;
    if errors > 0 {
        return Err(first_error.unwrap_or_default());
    }
    let reply = pool.call_raw(&Call::tasks_get(&id)?).await?;
    mcp::summary_of(&reply)?;
    let body: Value = serde_json::from_slice(&reply.body).map_err(|e| e.to_string())?;
    let bytes = serde_json::to_vec(&body["result"]["result"]).map_or(0, |bytes| bytes.len());
    Ok((id, bytes))
}

/// Parks one task and measures `tasks/get` on it (`rounds` clean runs, see [`Series`]); reads
/// RSS; parks `count - 1` more; reads RSS; measures `tasks/get` on the first again.
pub(crate) async fn parked(
    pool: &Arc<Pool>,
    server: &ServerProcess,
    count: usize,
    get: GetLoad<'_>,
) -> Result<ParkedResult, String> {
    let created = pool.call(&parking_task()?).await?;
    Expect::Created.check_task(&created)?;
    let id = created.task_id;
    let (errors, first_error) = settle(pool, vec![id.clone()], "input_required", "working").await;
    if errors > 0 {
        return Err(first_error.unwrap_or_default());
    }
    let idle = get.series(pool, server, &id, "input_required").await?;
    let rss_before = server.rss()?;
    let (create_time, errors, first_error) = populate(
        pool,
        count.saturating_sub(1),
        parking_task,
        "input_required",
    )
    .await;
    let rss_after = server.rss()?;
    let loaded = get.series(pool, server, &id, "input_required").await?;
    Ok(ParkedResult {
        memory: MemoryResult {
            count: count.saturating_sub(1),
            rss_before,
            rss_after,
            create_time,
            errors,
            first_error,
        },
        gets: Gets { idle, loaded },
    })
}
