//! The memory rows: resident memory per stored completed task, and per task parked in
//! `input_required` together with `tasks/get` throughput on one parked task.

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
}

/// The parked-task row's result.
#[derive(Debug)]
pub(crate) struct ParkedResult {
    /// Memory per parked task.
    pub memory: MemoryResult,
    /// `tasks/get` on one parked task with no other task.
    pub idle: Series,
    /// `tasks/get` on the same task with `count` tasks parked.
    pub loaded: Series,
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
/// completed, reads RSS again.
pub(crate) async fn stored(
    pool: &Arc<Pool>,
    server: &ServerProcess,
    count: usize,
) -> Result<StoredResult, String> {
    let (_, errors, first_error) = populate(pool, WARMUP_TASKS, small_task, "completed").await;
    if errors > 0 {
        return Err(format!(
            "warm-up failed: {}",
            first_error.unwrap_or_default()
        ));
    }
    let payload_bytes = payload_of_one(pool).await?;
    let rss_before = server.rss()?;
    let (create_time, errors, first_error) = populate(pool, count, small_task, "completed").await;
    let rss_after = server.rss()?;
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
    })
}

/// The serialized size of a small completed task's `result`.
async fn payload_of_one(pool: &Arc<Pool>) -> Result<usize, String> {
    let id = pool.call(&small_task()?).await?.task_id;
    let (errors, first_error) = settle(pool, vec![id.clone()], "completed", "working").await;
    if errors > 0 {
        return Err(first_error.unwrap_or_default());
    }
    let reply = pool.call_raw(&Call::tasks_get(&id)?).await?;
    mcp::summary_of(&reply)?;
    let body: Value = serde_json::from_slice(&reply.body).map_err(|e| e.to_string())?;
    Ok(serde_json::to_vec(&body["result"]["result"]).map_or(0, |bytes| bytes.len()))
}

/// Parks one task and measures `tasks/get` on it (`rounds` clean runs, see [`Series`]); reads
/// RSS; parks `count - 1` more; reads RSS; measures `tasks/get` on the first again.
pub(crate) async fn parked(
    pool: &Arc<Pool>,
    server: &ServerProcess,
    spec: LoadSpec,
    count: usize,
    rounds: usize,
    pinning: &Pinning,
) -> Result<ParkedResult, String> {
    let created = pool.call(&parking_task()?).await?;
    Expect::Created.check_task(&created)?;
    let id = created.task_id;
    let (errors, first_error) = settle(pool, vec![id.clone()], "input_required", "working").await;
    if errors > 0 {
        return Err(first_error.unwrap_or_default());
    }
    let get = Call::tasks_get(&id)?;
    let expect = Expect::Status("input_required");
    let endpoint = pool.endpoint();
    let mut idle = Series::default();
    while idle.wants_more(rounds) {
        idle.push(
            load::run(endpoint, &get, expect, spec, server.pid()).await?,
            pinning,
        );
    }
    let rss_before = server.rss()?;
    let (create_time, errors, first_error) = populate(
        pool,
        count.saturating_sub(1),
        parking_task,
        "input_required",
    )
    .await;
    let rss_after = server.rss()?;
    let mut loaded = Series::default();
    while loaded.wants_more(rounds) {
        loaded.push(
            load::run(endpoint, &get, expect, spec, server.pid()).await?,
            pinning,
        );
    }
    Ok(ParkedResult {
        memory: MemoryResult {
            count: count.saturating_sub(1),
            rss_before,
            rss_after,
            create_time,
            errors,
            first_error,
        },
        idle,
        loaded,
    })
}
