//! The full-lifecycle row: create N `slow_compute` tasks at once (over the shared connection
//! pool), poll each at the `pollIntervalMs` its `CreateTaskResult` suggests until it is
//! completed; total wall time and the server's CPU time per task.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::load::CpuReading;
use crate::mcp::{Call, Expect};
use crate::pool::Pool;
use crate::server::ServerProcess;

/// Polls of one task before it counts as an error.
const MAX_POLLS: u64 = 1000;

/// What the lifecycle row measured.
#[derive(Debug)]
pub(crate) struct LifecycleResult {
    /// Tasks started.
    pub tasks: usize,
    /// `seconds` argument of each task.
    pub seconds: f64,
    /// Tasks seen completed.
    pub completed: usize,
    /// Failed tasks.
    pub errors: u64,
    /// The first failure.
    pub first_error: Option<String>,
    /// From the first creation to the last completion seen.
    pub total: Duration,
    /// `tasks/get` calls made.
    pub polls: u64,
    /// Server CPU time over the whole run.
    pub server_cpu: Duration,
    /// Busy time of each CPU over the whole run.
    pub cores: Vec<Duration>,
}

impl LifecycleResult {
    /// Completed tasks per second of wall time.
    pub(crate) fn tasks_per_second(&self) -> f64 {
        self.completed as f64 / self.total.as_secs_f64()
    }

    /// Server CPU time per task, in microseconds.
    pub(crate) fn cpu_per_task_micros(&self) -> f64 {
        self.server_cpu.as_secs_f64() * 1e6 / self.tasks as f64
    }

    /// Mean `tasks/get` calls per task.
    pub(crate) fn polls_per_task(&self) -> f64 {
        self.polls as f64 / self.tasks as f64
    }
}

/// Runs `tasks` lifecycles of `slow_compute` with `seconds`, all started at once.
pub(crate) async fn run(
    pool: &Arc<Pool>,
    server: &ServerProcess,
    tasks: usize,
    seconds: f64,
) -> Result<LifecycleResult, String> {
    let create = Call::tools_call("slow_compute", json!({"seconds": seconds, "label": "l"}))?;
    let before = CpuReading::take(server.pid(), None)?;
    let started = Instant::now();
    let mut running = tokio::task::JoinSet::new();
    for _ in 0..tasks {
        let (pool, create) = (pool.clone(), create.clone());
        running.spawn(async move { one(&pool, &create).await });
    }
    let mut result = LifecycleResult {
        tasks,
        seconds,
        completed: 0,
        errors: 0,
        first_error: None,
        total: Duration::ZERO,
        polls: 0,
        server_cpu: Duration::ZERO,
        cores: Vec::new(),
    };
    while let Some(joined) = running.join_next().await {
        match joined
            .map_err(|e| e.to_string())
            .and_then(|outcome| outcome)
        {
            Ok(polls) => {
                result.completed += 1;
                result.polls += polls;
            }
            Err(error) => {
                result.errors += 1;
                result.first_error.get_or_insert(error);
            }
        }
    }
    result.total = started.elapsed();
    let after = CpuReading::take(server.pid(), None)?;
    result.server_cpu = after.server.saturating_sub(before.server);
    result.cores = after.cores_since(&before);
    Ok(result)
}

/// One lifecycle; returns the number of polls.
async fn one(pool: &Pool, create: &Call) -> Result<u64, String> {
    let created = pool.call(create).await?;
    Expect::Created.check_task(&created)?;
    let interval = Duration::from_millis(created.poll_interval_ms.unwrap_or(100));
    let get = Call::tasks_get(&created.task_id)?;
    for polls in 1..=MAX_POLLS {
        tokio::time::sleep(interval).await;
        let task = pool.call(&get).await?;
        match task.status.as_str() {
            "completed" => return Ok(polls),
            "working" => {}
            _ => return Err(format!("unexpected task: {task:?}")),
        }
    }
    Err(format!("not completed after {MAX_POLLS} polls"))
}
