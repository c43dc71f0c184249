//! Row 8c: cross-node update-to-resume latency (docs/benchmarks.md, "8c `resume-postgres`"):
//! parked on A, answered on B, watched on both.

use std::pin::pin;
use std::time::Duration;

use futures_util::{stream, Stream, StreamExt as _};
use serde_json::json;
use tasks_client::{Client, ClientError, DetailedTask, SettleOptions, TaskId, TaskStatus};
use tokio::time::Instant;

use crate::fixtures::Cluster;
use crate::mcp::{self, Tally};

/// How long the watches of one task may take, from opening them to the task's completion.
const LIMIT: Duration = Duration::from_secs(30);
/// Tasks answered before the first level, not counted.
const WARMUP_TASKS: usize = 10;

/// One concurrency level's figures: per task, update sent → B's acknowledgement, → terminal
/// view on A, → terminal view on B (each sorted).
#[derive(Debug)]
pub(crate) struct ResumeLevel {
    pub concurrency: usize,
    pub tasks: usize,
    pub latencies: [Vec<Duration>; 3],
    /// Wall time of the level's answers (parking excluded).
    pub total: Duration,
    pub tally: Tally,
}

/// Runs `tasks` tasks at each concurrency level of `levels` on the first two nodes of
/// `cluster`.
pub(crate) async fn run(
    cluster: &Cluster,
    tasks: usize,
    levels: &[usize],
) -> Result<Vec<ResumeLevel>, String> {
    let a = mcp::connect(cluster.url(0)?, true).await?;
    let b = mcp::connect(cluster.url(1)?, true).await?;
    level(&a, &b, WARMUP_TASKS, 1).await?.tally.ok("warm-up")?;
    let mut out = Vec::new();
    for &concurrency in levels {
        eprintln!("row 8c: {tasks} tasks, {concurrency} at once");
        out.push(level(&a, &b, tasks, concurrency).await?);
    }
    Ok(out)
}

/// `tasks` tasks parked on A (read parked on B), then answered on B `concurrency` at a time.
async fn level(
    a: &Client,
    b: &Client,
    tasks: usize,
    concurrency: usize,
) -> Result<ResumeLevel, String> {
    let parking = json!({"filename": "a.txt"});
    let (ids, tally) = mcp::create(a, "confirm_delete", &parking, tasks, concurrency).await;
    tally.ok("creating on A")?;
    mcp::wait_all(b, &ids, TaskStatus::InputRequired, concurrency)
        .await
        .ok("parking on A, read on B")?;
    let started = Instant::now();
    let samples: Vec<_> = stream::iter(ids)
        .map(|id| answer(a, b, id))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let (total, mut tally) = (started.elapsed(), Tally::default());
    let mut latencies: [Vec<Duration>; 3] = Default::default();
    for sample in samples {
        match sample {
            Ok(sample) => latencies
                .iter_mut()
                .zip(sample)
                .for_each(|(all, one)| all.push(one)),
            Err(why) => tally.fail(why),
        }
    }
    latencies.iter_mut().for_each(|latencies| latencies.sort());
    Ok(ResumeLevel {
        concurrency,
        tasks,
        latencies,
        total,
        tally,
    })
}

/// Answers the parked task `id`: watch it on both nodes, update on B, wait for the terminal
/// view on both watches.
async fn answer(a: &Client, b: &Client, id: TaskId) -> Result<[Duration; 3], String> {
    let (on_a, on_b) = (a.task(id.clone()), b.task(id));
    let options = SettleOptions::default().deadline(LIMIT);
    let (mut watch_a, mut watch_b) = (pin!(on_a.updates(&options)), pin!(on_b.updates(&options)));
    let (first_a, first_b) = tokio::join!(next(&mut watch_a), next(&mut watch_b));
    first_a?;
    first_b?;
    let answer = json!({"confirm-delete": {"action": "accept", "content": {"confirm": true}}});
    let responses = answer.as_object().cloned().unwrap_or_default();
    let sent = Instant::now();
    let acknowledge = async {
        let updated = on_b.update(responses).await;
        updated
            .map(|_| Instant::now())
            .map_err(|e| format!("tasks/update: {e}"))
    };
    let (ack, runner, answerer) =
        tokio::join!(acknowledge, terminal(&mut watch_a), terminal(&mut watch_b));
    Ok([ack?, runner?, answerer?].map(|at| at - sent))
}

/// A task's `subscriptions/listen` watch.
type Watch<'a> = dyn Stream<Item = Result<DetailedTask, ClientError>> + Unpin + 'a;

/// The next view of a watch (which fails at its deadline, [`LIMIT`] after it was opened).
async fn next(watch: &mut Watch<'_>) -> Result<DetailedTask, String> {
    let view = watch.next().await.ok_or("the watch ended")?;
    view.map_err(|e| e.to_string())
}

/// Reads `watch` until a terminal view; the instant it arrived, if `completed`.
async fn terminal(watch: &mut Watch<'_>) -> Result<Instant, String> {
    loop {
        match next(watch).await?.state.status() {
            TaskStatus::Completed => return Ok(Instant::now()),
            status if status.is_terminal() => {
                return Err(format!("task ended {}", status.as_str()))
            }
            _ => {}
        }
    }
}
