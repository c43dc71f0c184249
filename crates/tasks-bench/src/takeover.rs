//! Row 8d: takeover time of a killed node's tasks (docs/benchmarks.md, "8d
//! `takeover-postgres`"), the kills spread over both nodes' tick offsets ([`offsets`]).

use std::time::Duration;

use futures_util::{stream, StreamExt as _};
use serde_json::json;
use tasks_client::{SettleOptions, TaskStatus};
use tokio::time::Instant;

use crate::fixtures::{Cluster, Servers};
use crate::mcp::{self, Tally};

/// Steps of each task, and milliseconds per step: 20 s of work, longer than any takeover.
const STEPS: u64 = 40;
const STEP_MS: u64 = 500;
/// How long tasks may take to be seen running on A, and to be seen re-run on B beyond the
/// lease.
const LIMIT: Duration = Duration::from_secs(30);
/// The longest time between two lease renewals of a node.
const MAX_RENEWAL: Duration = Duration::from_secs(2);

/// One kill.
#[derive(Debug)]
pub(crate) struct TakeoverRound {
    /// Tasks running on A when it was killed.
    pub tasks: usize,
    pub offsets: Offsets,
    /// Kill → attempt 2 seen on B, for each task taken over, shortest first.
    pub taken_over: Vec<Duration>,
    /// Tasks not seen re-run within the lease plus [`LIMIT`], or that ended otherwise.
    pub tally: Tally,
}

/// Row 8d's result: `--lease-ms` of both nodes, steps and step length of each task, and one
/// entry per kill.
#[derive(Debug)]
pub(crate) struct TakeoverResult {
    pub lease: Duration,
    pub steps: (u64, u64),
    pub rounds: Vec<TakeoverRound>,
}

impl TakeoverResult {
    /// Every task's takeover time, over all rounds, shortest first.
    pub(crate) fn all(&self) -> Vec<Duration> {
        let mut all: Vec<Duration> = self
            .rounds
            .iter()
            .flat_map(|r| r.taken_over.clone())
            .collect();
        all.sort();
        all
    }
}

/// The waits of one round: from starting A to starting B, and from B showing every task
/// running on A to the kill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Offsets {
    pub start_b: Duration,
    pub kill: Duration,
}

/// Where kill `round` (0-based) of `rounds` falls: B starts `(round / k) / k` of a tick after
/// A, and A is killed `(round mod k) / k` of a tick after B has shown the tasks running, with
/// k = ⌈√rounds⌉.
pub(crate) fn offsets(lease: Duration, round: u64, rounds: u64) -> Offsets {
    let tick = (lease / 3).min(MAX_RENEWAL);
    let k = (1..).find(|k| k * k >= rounds.max(1)).unwrap_or(1);
    let share = |step: u64| tick * u32::try_from(step).unwrap_or(0) / u32::try_from(k).unwrap_or(1);
    Offsets {
        start_b: share((round / k) % k),
        kill: share(round % k),
    }
}

/// The attempt of a `resumable_job` status message: 2 in `Step 3 of 40 (attempt 2)`.
pub(crate) fn attempt_of(message: &str) -> Option<u32> {
    let (_, rest) = message.rsplit_once("(attempt ")?;
    rest.strip_suffix(')')?.parse().ok()
}

/// `--takeover-rounds` kills, each of a node running `--takeover-tasks` tasks.
pub(crate) async fn run(servers: &Servers<'_>) -> Result<TakeoverResult, String> {
    let args = servers.args;
    let lease = Duration::from_millis(args.lease_ms);
    let mut result = TakeoverResult {
        lease,
        steps: (STEPS, STEP_MS),
        rounds: Vec::new(),
    };
    for round in 0..args.takeover_rounds {
        eprintln!("row 8d: kill {} of {}", round + 1, args.takeover_rounds);
        let name = format!("fixture-takeover-postgres-{}", round + 1);
        let offsets = offsets(lease, round, args.takeover_rounds);
        let mut cluster = servers.cluster(&name).await?;
        servers.add_node(&mut cluster, &format!("{name}-a"), Some(args.lease_ms))?;
        tokio::time::sleep(offsets.start_b).await;
        servers.add_node(&mut cluster, &format!("{name}-b"), Some(args.lease_ms))?;
        result
            .rounds
            .push(one_kill(cluster, args.takeover_tasks, lease, offsets).await?);
    }
    Ok(result)
}

/// Starts `tasks` tasks on node A, kills A `offsets.kill` after B shows them all running, and
/// times each task's re-run on B.
async fn one_kill(
    mut cluster: Cluster,
    tasks: usize,
    lease: Duration,
    offsets: Offsets,
) -> Result<TakeoverRound, String> {
    let a = mcp::connect(cluster.url(0)?, false).await?;
    let b = mcp::connect(cluster.url(1)?, false).await?;
    let job = json!({"steps": STEPS, "stepMs": STEP_MS});
    let (ids, tally) = mcp::create(&a, "resumable_job", &job, tasks, 8).await;
    tally.ok("creating the tasks on A")?;
    // One watch per task on B, merged: (task index, view, arrival).
    let options = SettleOptions::default();
    let watches = ids.iter().enumerate().map(|(i, id)| {
        let updates = b.task(id.clone()).updates(&options);
        updates.map(move |view| (i, view, Instant::now())).boxed()
    });
    let mut views = stream::select_all(watches);
    let mut attempt = vec![0_u32; ids.len()];
    let mut tally = Tally::default();
    let mut killed = None;
    let mut taken_over = Vec::new();
    let mut deadline = Instant::now() + LIMIT;
    loop {
        let want = if killed.is_none() { 1 } else { 2 };
        if attempt.iter().all(|&seen| seen >= want) {
            if killed.is_some() {
                break;
            }
            tokio::time::sleep(offsets.kill).await;
            let node = cluster.nodes.first_mut().ok_or("no node A")?;
            let at = node.kill()?;
            killed = Some(at);
            deadline = at + lease + LIMIT;
            continue;
        }
        let (i, view, arrived) = match tokio::time::timeout_at(deadline, views.next()).await {
            Ok(Some(next)) => next,
            Ok(None) => break,
            Err(_) if killed.is_none() => {
                return Err("tasks not all seen running on A from B".into())
            }
            Err(_) => break,
        };
        let view = match view {
            Ok(view) => view,
            Err(error) => {
                tally.fail(format!("watch on B: {error}"));
                attempt[i] = u32::MAX;
                continue;
            }
        };
        let status = view.state.status();
        let message = view.task.status_message.as_deref().unwrap_or_default();
        if status != TaskStatus::Working {
            tally.fail(format!("task ended {}: {message}", status.as_str()));
            attempt[i] = u32::MAX;
        } else if let Some(now) = attempt_of(message).filter(|&now| now > attempt[i]) {
            if let (Some(at), true, true) = (killed, now >= 2, attempt[i] < 2) {
                taken_over.push(arrived - at);
            }
            attempt[i] = now;
        }
    }
    let missing = attempt.iter().filter(|&&seen| seen < 2).count();
    for _ in 0..missing {
        tally.fail(format!("tasks not re-run within the lease + {LIMIT:?}"));
    }
    taken_over.sort();
    Ok(TakeoverRound {
        tasks,
        offsets,
        taken_over,
        tally,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_attempt_of_a_status_message() {
        assert_eq!(attempt_of("Step 3 of 40 (attempt 2)"), Some(2));
        assert_eq!(attempt_of("Working"), None);
        assert_eq!(attempt_of("(attempt x)"), None);
    }

    #[test]
    fn kills_are_spread_over_both_nodes_ticks() {
        let ms = Duration::from_millis;
        let at = |start_b, kill| Offsets {
            start_b: ms(start_b),
            kill: ms(kill),
        };
        let grid: Vec<_> = (0..4).map(|i| offsets(ms(6000), i, 4)).collect();
        assert_eq!(grid, [at(0, 0), at(0, 1000), at(1000, 0), at(1000, 1000)]);
        assert_eq!(
            offsets(ms(3000), 1, 4),
            at(0, 500),
            "a third of a short lease"
        );
        assert_eq!(offsets(ms(6000), 0, 1), at(0, 0));
    }
}
