//! Row 8d: takeover time. Two nodes share a fresh schema, both with `--lease-ms`;
//! `resumable_job` tasks (re-run from the start after a crash) are started on node A. Once
//! node B's `subscriptions/listen` stream has shown every one of them running on A (a status
//! message ending in `(attempt 1)`), A is killed with SIGKILL. The takeover time of a task runs
//! from the kill to the arrival on B's stream of its first status message of attempt 2: B
//! found A's lease run out, claimed the task and started it again. Each round (a kill) gets
//! fresh nodes and a fresh schema. A node renews its lease every third of it, at most every
//! 2 s (`docs/deployment.md`), and the lease runs from the last renewal, so the takeover time
//! depends on where in that cycle the kill falls: round `i` of `n` waits `i/n` of a renewal
//! period more before the kill, to spread the kills over the cycle.

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
pub struct TakeoverRound {
    /// Tasks running on A when it was killed.
    pub tasks: usize,
    /// Kill → attempt 2 seen on B, for each task taken over, shortest first.
    pub taken_over: Vec<Duration>,
    /// Tasks not seen re-run within the lease plus [`LIMIT`], or that ended otherwise.
    pub errors: u64,
    /// The first failure.
    pub first_error: Option<String>,
}

/// Row 8d's result.
#[derive(Debug)]
pub struct TakeoverResult {
    /// `--lease-ms` of both nodes.
    pub lease: Duration,
    /// Steps and step length of each task.
    pub steps: (u64, u64),
    /// One entry per kill.
    pub rounds: Vec<TakeoverRound>,
}

impl TakeoverResult {
    /// Every task's takeover time, over all rounds, shortest first.
    pub fn all(&self) -> Vec<Duration> {
        let mut all: Vec<Duration> = self
            .rounds
            .iter()
            .flat_map(|round| round.taken_over.iter().copied())
            .collect();
        all.sort();
        all
    }

    /// Failed tasks over all rounds.
    pub fn errors(&self) -> u64 {
        self.rounds.iter().map(|round| round.errors).sum()
    }
}

/// The value at quantile `q` of `sorted` (nearest rank).
pub fn quantile(sorted: &[Duration], q: f64) -> Option<Duration> {
    let last = sorted.len().checked_sub(1)?;
    let rank = ((q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize).saturating_sub(1);
    sorted.get(rank.min(last)).copied()
}

/// How long round `round` (0-based) of `rounds` waits before its kill: that share of the
/// renewal period of `lease` (a third of it, at most [`MAX_RENEWAL`]).
pub fn kill_offset(lease: Duration, round: u64, rounds: u64) -> Duration {
    let period = (lease / 3).min(MAX_RENEWAL);
    period.mul_f64(round as f64 / rounds.max(1) as f64)
}

/// The attempt of a `resumable_job` status message: 2 in `Step 3 of 40 (attempt 2)`.
pub fn attempt_of(message: &str) -> Option<u32> {
    let (_, rest) = message.rsplit_once("(attempt ")?;
    rest.strip_suffix(')')?.parse().ok()
}

/// `--takeover-rounds` kills, each of a node running `--takeover-tasks` tasks.
pub async fn run(servers: &Servers<'_>) -> Result<TakeoverResult, String> {
    let args = servers.args;
    let mut result = TakeoverResult {
        lease: Duration::from_millis(args.lease_ms),
        steps: (STEPS, STEP_MS),
        rounds: Vec::new(),
    };
    for round in 0..args.takeover_rounds {
        eprintln!("row 8d: kill {} of {}", round + 1, args.takeover_rounds);
        let name = format!("fixture-takeover-postgres-{}", round + 1);
        let cluster = servers.postgres(&name, 2, Some(args.lease_ms)).await?;
        let offset = kill_offset(result.lease, round, args.takeover_rounds);
        result
            .rounds
            .push(one_kill(cluster, args.takeover_tasks, result.lease, offset).await?);
    }
    Ok(result)
}

/// Starts `tasks` tasks on node A of `cluster`, kills A `offset` after B shows them all
/// running, and times each task's re-run on B.
async fn one_kill(
    mut cluster: crate::cluster::Cluster,
    tasks: usize,
    lease: Duration,
    offset: Duration,
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
    tokio::time::sleep(offset).await;
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
    fn kills_are_spread_over_a_renewal_period() {
        let ms = Duration::from_millis;
        let six = ms(6000);
        let offsets: Vec<_> = (0..4).map(|i| kill_offset(six, i, 4)).collect();
        assert_eq!(offsets, [ms(0), ms(500), ms(1000), ms(1500)]);
        assert_eq!(
            kill_offset(ms(3000), 1, 2),
            ms(500),
            "a third of a short lease"
        );
        assert_eq!(kill_offset(six, 0, 1), ms(0));
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
