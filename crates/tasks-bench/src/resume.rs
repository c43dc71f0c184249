//! Row 8c: cross-node update-to-resume latency. Two nodes share a schema; `confirm_delete`
//! tasks are created on node A, where each parks in `input_required` (key `confirm-delete`),
//! and each is answered with `tasks/update` on node B. B commits the answer and sends a hint;
//! A's listener re-reads the row, hands the answer to its parked worker, and the worker
//! completes the task.
//!
//! The tasks of a level are created and parked first (not measured: creations would contend
//! with the resumes for the store's counters), then answered, `concurrency` at a time.
//! Before each update, a `subscriptions/listen` stream for the task is opened on each node. The
//! latency of a task runs from just before the update is sent to the arrival of the terminal
//! `notifications/tasks` on A's stream (A runs the worker: this is the resume itself, with no
//! poll interval in it) and on B's (one more hint: what a client of B sees). The time until
//! B acknowledges the update is reported too.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde_json::json;
use tokio::time::Instant;

use crate::cluster::Cluster;
use crate::conn::Endpoint;
use crate::listen::{Listen, TaskNote};
use crate::mcp::{self, Call, Expect};
use crate::pool::Pool;
use crate::settle::settle;

/// How long a listen stream may take to answer, and a task to complete once answered.
const LIMIT: Duration = Duration::from_secs(30);
/// Tasks answered before the first level, not counted.
const WARMUP_TASKS: usize = 10;

/// One concurrency level's figures; latencies in microseconds.
#[derive(Debug)]
pub(crate) struct ResumeLevel {
    /// Tasks in flight at once.
    pub concurrency: usize,
    /// Tasks answered.
    pub tasks: usize,
    /// Failed tasks (not parked, not completed, or a failed request).
    pub errors: u64,
    /// The first failure.
    pub first_error: Option<String>,
    /// Update sent → B's acknowledgement.
    pub acknowledged: Histogram<u64>,
    /// Update sent → terminal notification on A, the node running the task.
    pub on_runner: Histogram<u64>,
    /// Update sent → terminal notification on B, the node that took the update.
    pub on_answerer: Histogram<u64>,
    /// Wall time of the level's answers (parking excluded).
    pub total: Duration,
}

/// Row 8c's result.
#[derive(Debug)]
pub(crate) struct ResumeResult {
    /// One entry per concurrency level, in the order run.
    pub levels: Vec<ResumeLevel>,
}

/// What one task measured: acknowledgement, runner and answerer latency.
struct Sample {
    acknowledged: Duration,
    on_runner: Duration,
    on_answerer: Duration,
}

/// Both nodes' endpoints and pools.
struct Nodes {
    a: Endpoint,
    b: Endpoint,
    pool_a: Arc<Pool>,
    pool_b: Arc<Pool>,
}

/// Runs `tasks` tasks at each concurrency level of `levels` on the first two nodes of
/// `cluster`.
pub(crate) async fn run(
    cluster: &Cluster,
    tasks: usize,
    levels: &[usize],
) -> Result<ResumeResult, String> {
    let a = Endpoint::parse(cluster.node(0)?.server.url())?;
    let b = Endpoint::parse(cluster.node(1)?.server.url())?;
    let widest = levels.iter().copied().max().unwrap_or(1).max(1);
    let nodes = Arc::new(Nodes {
        pool_a: Pool::open(&a, widest).await?,
        pool_b: Pool::open(&b, widest).await?,
        a,
        b,
    });
    let warmup = level(&nodes, WARMUP_TASKS, 1).await?;
    if warmup.errors > 0 {
        return Err(format!(
            "warm-up: {}",
            warmup.first_error.unwrap_or_default()
        ));
    }
    let mut result = ResumeResult { levels: Vec::new() };
    for &concurrency in levels {
        eprintln!("row 8c: {tasks} tasks, {concurrency} at once");
        result.levels.push(level(&nodes, tasks, concurrency).await?);
    }
    Ok(result)
}

fn histogram() -> Result<Histogram<u64>, String> {
    Histogram::new_with_bounds(1, 60_000_000, 3).map_err(|e| e.to_string())
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// `tasks` tasks parked, then answered `concurrency` at a time.
async fn level(
    nodes: &Arc<Nodes>,
    tasks: usize,
    concurrency: usize,
) -> Result<ResumeLevel, String> {
    let ids = Arc::new(park(nodes, tasks).await?);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency.max(1) {
        let (nodes, ids, next) = (nodes.clone(), ids.clone(), next.clone());
        workers.spawn(async move {
            let mut outcomes = Vec::new();
            while let Some(id) = ids.get(next.fetch_add(1, Ordering::Relaxed)) {
                outcomes.push(answer(&nodes, id).await);
            }
            outcomes
        });
    }
    let mut result = ResumeLevel {
        concurrency,
        tasks,
        errors: 0,
        first_error: None,
        acknowledged: histogram()?,
        on_runner: histogram()?,
        on_answerer: histogram()?,
        total: Duration::ZERO,
    };
    while let Some(joined) = workers.join_next().await {
        let outcomes = joined.map_err(|e| format!("resume worker: {e}"))?;
        for outcome in outcomes {
            match outcome {
                Ok(sample) => {
                    result
                        .acknowledged
                        .saturating_record(micros(sample.acknowledged));
                    result.on_runner.saturating_record(micros(sample.on_runner));
                    result
                        .on_answerer
                        .saturating_record(micros(sample.on_answerer));
                }
                Err(error) => {
                    result.errors += 1;
                    result.first_error.get_or_insert(error);
                }
            }
        }
    }
    result.total = started.elapsed();
    Ok(result)
}

/// Creates `tasks` `confirm_delete` tasks on A and waits until B reads each of them parked;
/// their ids.
async fn park(nodes: &Nodes, tasks: usize) -> Result<Vec<String>, String> {
    let create = Call::tools_call_eliciting("confirm_delete", json!({"filename": "a.txt"}))?;
    let created = nodes
        .pool_a
        .run_indexed(
            tasks,
            move |_| Ok(create.clone()),
            |task| {
                Expect::Created.check_task(&task)?;
                Ok(task.task_id)
            },
        )
        .await;
    if created.errors > 0 {
        return Err(format!(
            "creating on A: {}",
            created.first_error.unwrap_or_default()
        ));
    }
    let (errors, first_error) = settle(
        &nodes.pool_b,
        created.values.clone(),
        "input_required",
        "working",
    )
    .await;
    if errors > 0 {
        return Err(format!(
            "parking on A, read on B: {}",
            first_error.unwrap_or_default()
        ));
    }
    Ok(created.values)
}

/// Answers the parked task `id`: listen on both nodes, update on B, wait for the terminal
/// notification on both streams.
async fn answer(nodes: &Nodes, id: &str) -> Result<Sample, String> {
    let ids = [id.to_owned()];
    let (on_a, on_b) = tokio::join!(
        Listen::open(&nodes.a, &ids, LIMIT),
        Listen::open(&nodes.b, &ids, LIMIT)
    );
    let (mut on_a, mut on_b) = (on_a?, on_b?);
    let answer = json!({"confirm-delete": {"action": "accept", "content": {"confirm": true}}});
    let update = Call::tasks_update(id, answer)?;
    let sent = Instant::now();
    let (acknowledged, runner, answerer) = tokio::join!(
        acknowledge(&nodes.pool_b, &update),
        terminal(&mut on_a),
        terminal(&mut on_b)
    );
    let (acknowledged, runner, answerer) = (acknowledged?, runner?, answerer?);
    Ok(Sample {
        acknowledged: acknowledged - sent,
        on_runner: runner - sent,
        on_answerer: answerer - sent,
    })
}

/// Sends the update; the instant it was acknowledged (`resultType: "complete"`).
async fn acknowledge(pool: &Pool, update: &Call) -> Result<Instant, String> {
    let reply = pool.call_raw(update).await?;
    let at = Instant::now();
    let summary = mcp::summary_of(&reply)?;
    if summary.result_type != "complete" {
        return Err(format!("update not acknowledged: {summary:?}"));
    }
    Ok(at)
}

/// Reads `listen` until a terminal notification; the instant it arrived, if `completed`.
async fn terminal(listen: &mut Listen) -> Result<Instant, String> {
    loop {
        let (at, note): (Instant, TaskNote) = listen.next_task(LIMIT).await?;
        if note.is_terminal() {
            return if note.status == "completed" {
                Ok(at)
            } else {
                Err(format!("task ended {}: {}", note.status, note.message))
            };
        }
    }
}
