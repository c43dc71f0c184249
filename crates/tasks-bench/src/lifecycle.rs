//! Row 4, full lifecycles through `tasks-client` (docs/benchmarks.md).

use std::time::{Duration, Instant};

use futures_util::{stream, StreamExt as _};
use serde_json::{json, Value};
use tasks_client::{Client, TaskStatus};
use tokio::sync::Semaphore;

use crate::fixtures::Fixture;
use crate::generator::{Clocks, Run};
use crate::mcp::{self, Tally};

/// Tasks started, and the `seconds` argument of each.
pub(crate) const TASKS: usize = 10_000;
pub(crate) const SECONDS: f64 = 0.05;
/// Polls of one task before it counts as an error.
const MAX_POLLS: u64 = 1000;

#[derive(Debug)]
pub(crate) struct LifecycleResult {
    /// From the first creation to the last completion seen.
    pub total: Duration,
    /// `tasks/get` calls made.
    pub polls: u64,
    /// Server CPU time, and each CPU's busy time, over the whole run.
    pub cpu: Run,
    pub tally: Tally,
}

/// Runs [`TASKS`] lifecycles of `slow_compute` with [`SECONDS`] on `server`, at most
/// `connections` requests in flight.
pub(crate) async fn run(server: &Fixture, connections: usize) -> Result<LifecycleResult, String> {
    let client = mcp::connect(server.url(), false).await?;
    let in_flight = Semaphore::new(connections.max(1));
    let before = Clocks::read(server.pid(), None)?;
    let started = Instant::now();
    let arguments = json!({"seconds": SECONDS, "label": "l"});
    let lifecycles = stream::iter(0..TASKS).map(|_| one(&client, &in_flight, &arguments));
    let outcomes: Vec<_> = lifecycles.buffer_unordered(TASKS).collect().await;
    let (total, mut cpu) = (started.elapsed(), Run::default());
    Clocks::read(server.pid(), None)?.since(&before, &mut cpu);
    let (mut polls, mut tally) = (0, Tally::default());
    for outcome in outcomes {
        match outcome {
            Ok(n) => polls += n,
            Err(why) => tally.fail(why),
        }
    }
    Ok(LifecycleResult {
        total,
        polls,
        cpu,
        tally,
    })
}

/// One lifecycle, each request holding a permit of `in_flight`; the number of polls.
async fn one(client: &Client, in_flight: &Semaphore, arguments: &Value) -> Result<u64, String> {
    let permit = in_flight.acquire().await.map_err(|e| e.to_string())?;
    let task = mcp::start(client, "slow_compute", arguments).await?;
    drop(permit);
    let created = task.creation().and_then(|c| c.task.poll_interval_ms);
    let interval = Duration::from_millis(created.unwrap_or(100));
    for polls in 1..=MAX_POLLS {
        tokio::time::sleep(interval).await;
        let permit = in_flight.acquire().await.map_err(|e| e.to_string())?;
        let view = task.get().await.map_err(|e| format!("tasks/get: {e}"))?;
        drop(permit);
        match view.state.status() {
            TaskStatus::Completed => return Ok(polls),
            TaskStatus::Working => {}
            other => return Err(format!("task {}: {}", task.id(), other.as_str())),
        }
    }
    Err(format!("not completed after {MAX_POLLS} polls"))
}
