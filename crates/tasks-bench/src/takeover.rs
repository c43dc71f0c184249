//! Row 8d: takeover time. Two nodes share a fresh schema, both with `--lease-ms`;
//! `resumable_job` tasks (re-run from the start after a crash) are started on node A. Once
//! node B's `subscriptions/listen` stream has shown every one of them running on A (a status
//! message ending in `(attempt 1)`), A is killed with SIGKILL. The takeover time of a task runs
//! from the kill to the arrival on B's stream of its first status message of attempt 2: B
//! found A's lease run out, claimed the task and started it again. Each round (a kill) gets
//! fresh nodes and a fresh schema.
//!
//! A node renews its lease and looks for orphaned tasks on the same tick, every third of the
//! lease, at most every 2 s (`docs/deployment.md`). A's lease runs out `lease` after its last
//! renewal before the kill, and B notices at its first tick after that: the takeover time is
//! the lease, less the time from A's last renewal to the kill, plus the time from the expiry
//! to B's next tick. The first depends on when the kill falls in A's cycle, the second on how
//! B's ticks are offset from A's, which is set when B starts. So the rounds spread both over a
//! k × k grid (k = ⌈√rounds⌉): round `i` starts B `(i / k) / k` of a tick after A, and kills A
//! `(i mod k) / k` of a tick after B has shown the tasks running. The worst case, a kill just
//! after a renewal with B's tick just before the expiry, is the lease plus one tick.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use crate::conn::Endpoint;
use crate::listen::Listen;
use crate::mcp::{Call, Expect};
use crate::pool::Pool;
use crate::suite::Servers;

/// Steps of each task, and milliseconds per step: 20 s of work, longer than any takeover.
const STEPS: u64 = 40;
const STEP_MS: u64 = 500;
/// How long tasks may take to be seen running on A, and to be seen re-run on B beyond the
/// lease.
const LIMIT: Duration = Duration::from_secs(30);
/// Connections used to create the tasks.
const CONNECTIONS: usize = 8;
/// The longest time between two lease renewals of a node.
const MAX_RENEWAL: Duration = Duration::from_secs(2);

/// One kill.
#[derive(Debug)]
pub(crate) struct TakeoverRound {
    /// Tasks running on A when it was killed.
    pub tasks: usize,
    /// Where the kill was put.
    pub offsets: Offsets,
    /// Kill → attempt 2 seen on B, for each task taken over, shortest first.
    pub taken_over: Vec<Duration>,
    /// Tasks not seen re-run within the lease plus [`LIMIT`], or that ended otherwise.
    pub errors: u64,
    /// The first failure.
    pub first_error: Option<String>,
}

/// Row 8d's result.
#[derive(Debug)]
pub(crate) struct TakeoverResult {
    /// `--lease-ms` of both nodes.
    pub lease: Duration,
    /// Steps and step length of each task.
    pub steps: (u64, u64),
    /// One entry per kill.
    pub rounds: Vec<TakeoverRound>,
}

impl TakeoverResult {
    /// Every task's takeover time, over all rounds, shortest first.
    pub(crate) fn all(&self) -> Vec<Duration> {
        let mut all: Vec<Duration> = self
            .rounds
            .iter()
            .flat_map(|round| round.taken_over.iter().copied())
            .collect();
        all.sort();
        all
    }

    /// Failed tasks over all rounds.
    pub(crate) fn errors(&self) -> u64 {
        self.rounds.iter().map(|round| round.errors).sum()
    }
}

/// The value at quantile `q` of `sorted` (nearest rank).
pub(crate) fn quantile(sorted: &[Duration], q: f64) -> Option<Duration> {
    let last = sorted.len().checked_sub(1)?;
    let rank = ((q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize).saturating_sub(1);
    sorted.get(rank.min(last)).copied()
}

/// Where round `round` (0-based) of `rounds` puts its kill: how long after A it starts B,
/// and how long after B has shown the tasks running it kills A (see the module docs).
pub(crate) fn offsets(lease: Duration, round: u64, rounds: u64) -> Offsets {
    let tick = (lease / 3).min(MAX_RENEWAL);
    let k = (1..).find(|k| k * k >= rounds.max(1)).unwrap_or(1);
    let k32 = u32::try_from(k).unwrap_or(u32::MAX);
    let share = |step: u64| tick * u32::try_from(step).unwrap_or(0) / k32;
    Offsets {
        start_b: share((round / k) % k),
        kill: share(round % k),
    }
}

/// The waits of one round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Offsets {
    /// From starting A to starting B.
    pub start_b: Duration,
    /// From B showing every task running on A to the kill.
    pub kill: Duration,
}

/// The attempt of a `resumable_job` status message: 2 in `Step 3 of 40 (attempt 2)`.
pub(crate) fn attempt_of(message: &str) -> Option<u32> {
    let (_, rest) = message.rsplit_once("(attempt ")?;
    rest.strip_suffix(')')?.parse().ok()
}

/// `--takeover-rounds` kills, each of a node running `--takeover-tasks` tasks.
pub(crate) async fn run(servers: &Servers<'_>) -> Result<TakeoverResult, String> {
    let args = servers.args;
    let mut result = TakeoverResult {
        lease: Duration::from_millis(args.lease_ms),
        steps: (STEPS, STEP_MS),
        rounds: Vec::new(),
    };
    for round in 0..args.takeover_rounds {
        eprintln!("row 8d: kill {} of {}", round + 1, args.takeover_rounds);
        let name = format!("fixture-takeover-postgres-{}", round + 1);
        let offsets = offsets(result.lease, round, args.takeover_rounds);
        let lease = Some(args.lease_ms);
        let mut cluster = servers.cluster(&name).await?;
        servers.add_node(&mut cluster, &format!("{name}-a"), lease)?;
        tokio::time::sleep(offsets.start_b).await;
        servers.add_node(&mut cluster, &format!("{name}-b"), lease)?;
        result
            .rounds
            .push(one_kill(cluster, args.takeover_tasks, result.lease, offsets).await?);
    }
    Ok(result)
}

/// Starts `tasks` tasks on node A of `cluster`, kills A `offsets.kill` after B shows them all
/// running, and times each task's re-run on B.
async fn one_kill(
    mut cluster: crate::cluster::Cluster,
    tasks: usize,
    lease: Duration,
    offsets: Offsets,
) -> Result<TakeoverRound, String> {
    let a = Endpoint::parse(cluster.node(0)?.server.url())?;
    let b = Endpoint::parse(cluster.node(1)?.server.url())?;
    let job = Call::tools_call("resumable_job", json!({"steps": STEPS, "stepMs": STEP_MS}))?;
    let created = Pool::open(&a, CONNECTIONS)
        .await?
        .run_indexed(
            tasks,
            move |_| Ok(job.clone()),
            |task| {
                Expect::Created.check_task(&task)?;
                Ok(task.task_id)
            },
        )
        .await;
    if created.errors > 0 {
        return Err(format!(
            "creating the tasks on A: {}",
            created.first_error.unwrap_or_default()
        ));
    }
    let ids = created.values;
    let mut listen = Listen::open(&b, &ids, LIMIT).await?;
    let running = seen(&mut listen, &ids, 1, Instant::now() + LIMIT).await;
    if !running.pending.is_empty() {
        return Err(format!(
            "{} tasks not seen running on A from B: {}",
            running.pending.len(),
            running.first_error.unwrap_or_default()
        ));
    }
    tokio::time::sleep(offsets.kill).await;
    let killed = cluster
        .nodes
        .first_mut()
        .ok_or("no node A")?
        .server
        .kill()?;
    let rerun = seen(&mut listen, &ids, 2, killed + lease + LIMIT).await;
    let mut taken_over: Vec<Duration> = rerun.at.iter().map(|at| *at - killed).collect();
    taken_over.sort();
    let errors = rerun.pending.len() as u64;
    let first_error = rerun.first_error.or_else(|| {
        (errors > 0).then(|| format!("{errors} tasks not re-run within the lease + {LIMIT:?}"))
    });
    Ok(TakeoverRound {
        tasks,
        offsets,
        taken_over,
        errors,
        first_error,
    })
}

/// What [`seen`] found.
struct Seen {
    /// When each task was first seen at the attempt, in arrival order.
    at: Vec<Instant>,
    /// Tasks not seen at it.
    pending: HashSet<String>,
    /// Why reading stopped early, or a task that ended.
    first_error: Option<String>,
}

/// Reads `listen` until every task of `ids` has shown a status message of `attempt` (or
/// later), or until `deadline`.
async fn seen(listen: &mut Listen, ids: &[String], attempt: u32, deadline: Instant) -> Seen {
    let mut found = Seen {
        at: Vec::new(),
        pending: ids.iter().cloned().collect(),
        first_error: None,
    };
    while !found.pending.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        let (at, note) = match listen.next_task(left).await {
            Ok(next) => next,
            Err(error) => {
                found.first_error = Some(error);
                break;
            }
        };
        if note.is_terminal() && found.pending.remove(&note.task_id) {
            found
                .first_error
                .get_or_insert(format!("task ended {}: {}", note.status, note.message));
        } else if attempt_of(&note.message).is_some_and(|seen| seen >= attempt)
            && found.pending.remove(&note.task_id)
        {
            found.at.push(at);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_attempt_of_a_status_message() {
        assert_eq!(attempt_of("Step 3 of 40 (attempt 2)"), Some(2));
        assert_eq!(attempt_of("Step 1 of 40 (attempt 1)"), Some(1));
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
        let six = ms(6000);
        let grid: Vec<_> = (0..4).map(|i| offsets(six, i, 4)).collect();
        assert_eq!(grid, [at(0, 0), at(0, 1000), at(1000, 0), at(1000, 1000)]);
        let three: Vec<_> = (0..3).map(|i| offsets(six, i, 3)).collect();
        assert_eq!(
            three,
            [at(0, 0), at(0, 1000), at(1000, 0)],
            "a 2 × 2 grid, cut"
        );
        let third = Duration::from_secs(2) / 3;
        let middle = Offsets {
            start_b: third,
            kill: third,
        };
        assert_eq!(offsets(six, 4, 9), middle);
        assert_eq!(
            offsets(ms(3000), 1, 4),
            at(0, 500),
            "a third of a short lease"
        );
        assert_eq!(offsets(six, 0, 1), at(0, 0));
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let s = Duration::from_secs;
        assert_eq!(quantile(&[], 0.5), None);
        let sorted = [s(1), s(2), s(3), s(4)];
        assert_eq!(quantile(&sorted, 0.0), Some(s(1)));
        assert_eq!(quantile(&sorted, 0.5), Some(s(2)));
        assert_eq!(quantile(&sorted, 0.75), Some(s(3)));
        assert_eq!(quantile(&sorted, 1.0), Some(s(4)));
        assert_eq!(quantile(&sorted, 0.99), Some(s(4)));
    }
}
