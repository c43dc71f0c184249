//! Recovery on the memory store, which models leases faithfully: several runtimes sharing one
//! store act as nodes. A node "dies" by no longer renewing its lease (its tool futures keep
//! running, like a paused process that resumes later: a zombie whose writes must be fenced).
//! Everything runs under tokio's paused clock.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tasks_runtime::Creation;

use serde_json::{json, Value};
use tasks_core::{Task, TaskStatus};
use tasks_runtime::store::{MemoryStore, Store};
use tasks_runtime::MESSAGE_INTERRUPTED;
use tasks_runtime::{
    text_result, LeaseConfig, Recovery, RuntimeConfig, Scope, TaskRuntime, TokioClock, Tool,
    ToolContext, ToolError, ToolRegistry,
};
use tasks_test_support::events::drain_for;
use tasks_test_support::protocol::accept;
use tasks_test_support::{probe::*, runtime::*, task_wait::*, wait::*};
use tokio::sync::Notify;

const LEASE: Duration = Duration::from_secs(3);

fn config() -> RuntimeConfig {
    RuntimeConfig::default().with_leases(
        LeaseConfig::default()
            .with_lease(LEASE)
            .with_tick(Duration::from_secs(1)),
    )
}

/// The shared store and clock of the nodes of one test.
struct Cluster {
    store: Arc<dyn Store>,
    clock: Arc<TokioClock>,
}

impl Cluster {
    fn new() -> Self {
        Cluster {
            store: Arc::new(MemoryStore::new()),
            clock: Arc::new(TokioClock::starting_at(T0)),
        }
    }

    /// A node serving `tools`.
    fn node(&self, tools: Vec<Tool>) -> TaskRuntime {
        self.node_with(tools, config())
    }

    /// A node serving `tools` with `config`.
    fn node_with(&self, tools: Vec<Tool>, config: RuntimeConfig) -> TaskRuntime {
        let mut registry = ToolRegistry::new();
        for tool in tools {
            registry.register(tool);
        }
        TaskRuntime::with_clock(self.store.clone(), registry, config, self.clock.clone())
    }
}

/// `wait`: runs until cancelled.
fn wait_tool(probe: Arc<Probe>) -> Tool {
    Tool::new("wait", "Runs until cancelled", move |ctx| {
        let probe = probe.clone();
        async move {
            let _guard = probe.enter();
            ctx.cancellation().cancelled().await;
            Err::<Value, _>(ToolError::Cancelled)
        }
    })
}

/// What one run saw: attempt, idempotency key, fencing token.
type Run = (u32, Option<String>, Option<u64>);

/// What each run of a tool saw.
#[derive(Default)]
struct Runs {
    /// (attempt, idempotency key, fencing token) per run.
    seen: Mutex<Vec<Run>>,
    /// Opens the gate the first run waits at (the "crash" keeps it closed).
    gate: Notify,
    finished: AtomicU32,
}

impl Runs {
    fn record(&self, ctx: &ToolContext) {
        self.seen.lock().unwrap().push((
            ctx.attempt(),
            ctx.idempotency_key().map(str::to_owned),
            ctx.fencing_token(),
        ));
    }
    fn seen(&self) -> Vec<Run> {
        self.seen.lock().unwrap().clone()
    }
}

/// `job`: asks `confirm` (when `ask`), then the first run waits at the gate; later runs finish
/// at once with the attempt and the answer.
fn job(runs: Arc<Runs>, recovery: Recovery, ask: bool) -> Tool {
    Tool::new("job", "A recoverable job", move |ctx| {
        let runs = runs.clone();
        async move {
            runs.record(&ctx);
            let answer = if ask {
                ctx.input("confirm", elicit("Go?")).await?.to_value()
            } else {
                Value::Null
            };
            if ctx.attempt() == 1 {
                runs.gate.notified().await;
            }
            runs.finished.fetch_add(1, Ordering::SeqCst);
            Ok(text_result(format!(
                "attempt {} answer {answer}",
                ctx.attempt()
            )))
        }
    })
    .with_recovery(recovery)
}

fn error_message(task: &Task) -> Option<String> {
    let value = detailed_json(task);
    value["error"]["message"].as_str().map(str::to_owned)
}

fn result_text(task: &Task) -> Option<String> {
    let value = detailed_json(task);
    value["result"]["content"][0]["text"]
        .as_str()
        .map(str::to_owned)
}

async fn past_the_lease() {
    tokio::time::sleep(LEASE + Duration::from_millis(1)).await;
}

#[tokio::test(start_paused = true)]
async fn an_interrupted_task_fails_by_default_and_the_zombie_cannot_change_it() {
    let cluster = Cluster::new();
    let runs = Arc::new(Runs::default());
    let a = cluster.node(vec![job(runs.clone(), Recovery::Fail, false)]);
    assert_eq!(a.recover().await.unwrap(), 0);
    let scope = Scope::shared();
    let task = a.create(work("job")).await.unwrap();
    let id = task.id().clone();
    yield_until("the first run started", || runs.seen().len() == 1).await;

    past_the_lease().await;
    let b = cluster.node(vec![job(runs.clone(), Recovery::Fail, false)]);
    assert_eq!(b.recover().await.unwrap(), 1, "B takes over A's task");
    let failed = b.get(&scope, &id).await.unwrap();
    assert_eq!(failed.status(), TaskStatus::Failed);
    assert_eq!(error_message(&failed).as_deref(), Some(MESSAGE_INTERRUPTED));
    assert_eq!(runs.seen().len(), 1, "a Fail tool is not run again");

    // The zombie (A's first run) finishes now: its completion is fenced off.
    runs.gate.notify_waiters();
    yield_until("the zombie finished", || {
        runs.finished.load(Ordering::SeqCst) == 1
    })
    .await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    let after = b.get(&scope, &id).await.unwrap();
    assert_eq!(*after, *failed, "the zombie's completion changed nothing");
}

#[tokio::test(start_paused = true)]
async fn a_rerun_tool_runs_again_with_its_answers_replayed() {
    let cluster = Cluster::new();
    let runs = Arc::new(Runs::default());
    let a = cluster.node(vec![job(runs.clone(), Recovery::rerun(), true)]);
    a.recover().await.unwrap();
    let scope = Scope::shared();
    let id = a.create(work("job")).await.unwrap().id().clone();
    wait_input_keys(&a, &scope, &id, &["confirm"]).await;
    a.update(
        &scope,
        &id,
        responses([("confirm", accept(json!({"confirm": true})))]),
    )
    .await
    .unwrap();
    wait_for(&a, &scope, &id, "working again", |t| {
        t.status() == TaskStatus::Working
    })
    .await;

    past_the_lease().await;
    let b = cluster.node(vec![job(runs.clone(), Recovery::rerun(), true)]);
    let mut events = b.subscribe();
    assert_eq!(b.recover().await.unwrap(), 1);
    let done = wait_terminal(&b, &scope, &id).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(
        result_text(&done).as_deref(),
        Some(r#"attempt 2 answer {"action":"accept","content":{"confirm":true}}"#),
        "the re-run got the answer given to the first run"
    );
    let key = Some(id.as_str().to_owned());
    assert_eq!(
        runs.seen(),
        vec![(1, key.clone(), Some(1)), (2, key, Some(2))],
        "same idempotency key, higher attempt and fencing token"
    );
    let statuses: Vec<TaskStatus> = drain_for(&mut events, &id)
        .iter()
        .map(|e| e.task.status())
        .collect();
    assert!(
        !statuses.contains(&TaskStatus::InputRequired),
        "the client is not asked again: {statuses:?}"
    );
}

/// `count`: reports `i` of 10 for each step `i`, a poll interval apart; the first run stops
/// after step 6 and waits at the gate (a crash), a re-run counts from 1 again to 10.
fn count_tool(runs: Arc<Runs>) -> Tool {
    Tool::new("count", "Counts to ten", move |ctx| {
        let runs = runs.clone();
        async move {
            runs.record(&ctx);
            let last = if ctx.attempt() == 1 { 6 } else { 10 };
            for step in 1..=last {
                ctx.progress(f64::from(step), Some(10.0), None);
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            if ctx.attempt() == 1 {
                runs.gate.notified().await;
            }
            Ok(text_result("counted"))
        }
    })
    .with_recovery(Recovery::rerun())
}

#[tokio::test(start_paused = true)]
async fn progress_is_kept_across_recovery_and_a_rerun_never_moves_it_backwards() {
    let cluster = Cluster::new();
    let runs = Arc::new(Runs::default());
    let a = cluster.node(vec![count_tool(runs.clone())]);
    a.recover().await.unwrap();
    let scope = Scope::shared();
    let id = a.create(work("count")).await.unwrap().id().clone();
    let six = wait_for(&a, &scope, &id, "six of ten", |t| {
        t.progress().is_some_and(|p| p.done() == 6.0)
    })
    .await;
    assert_eq!(six.progress().and_then(|p| p.fraction()), Some(0.6));

    past_the_lease().await;
    let b = cluster.node(vec![count_tool(runs.clone())]);
    let mut events = b.subscribe();
    assert_eq!(b.recover().await.unwrap(), 1);
    let kept = b.get(&scope, &id).await.unwrap();
    assert_eq!(kept.progress(), six.progress(), "the take-over keeps it");
    let done = wait_terminal(&b, &scope, &id).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(done.progress().map(|p| p.done()), Some(10.0));
    let seen: Vec<f64> = drain_for(&mut events, &id)
        .iter()
        .filter_map(|e| e.task.progress().map(|p| p.done()))
        .collect();
    assert!(
        seen.iter().all(|&done| done >= 6.0),
        "the re-run counting from 1 never moved it back: {seen:?}"
    );
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]) && seen.contains(&7.0),
        "it went on from where it was: {seen:?}"
    );
    assert_eq!(runs.seen().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_parked_task_survives_and_resumes_on_the_next_update() {
    let cluster = Cluster::new();
    let runs = Arc::new(Runs::default());
    let a = cluster.node(vec![job(runs.clone(), Recovery::rerun(), true)]);
    a.recover().await.unwrap();
    let scope = Scope::shared();
    let id = a.create(work("job")).await.unwrap().id().clone();
    let parked = wait_input_keys(&a, &scope, &id, &["confirm"]).await;

    past_the_lease().await;
    let b = cluster.node(vec![job(runs.clone(), Recovery::rerun(), true)]);
    assert_eq!(b.recover().await.unwrap(), 1);
    yield_until("the re-run asked again", || runs.seen().len() == 2).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    let still = b.get(&scope, &id).await.unwrap();
    assert_eq!(
        *still, *parked,
        "asking the same key again changes nothing: still parked"
    );
    b.update(
        &scope,
        &id,
        responses([("confirm", accept(json!({"confirm": false})))]),
    )
    .await
    .unwrap();
    let done = wait_terminal(&b, &scope, &id).await;
    assert_eq!(
        result_text(&done).as_deref(),
        Some(r#"attempt 2 answer {"action":"accept","content":{"confirm":false}}"#)
    );
}

#[tokio::test(start_paused = true)]
async fn reruns_stop_after_max_attempts() {
    let cluster = Cluster::new();
    let runs = Arc::new(Runs::default());
    let policy = Recovery::Rerun { max_attempts: 2 };
    // A gate-less variant: every run waits forever, so each node "dies" mid-run.
    let forever = |runs: Arc<Runs>| {
        Tool::new("job", "Never finishes", move |ctx| {
            let runs = runs.clone();
            async move {
                runs.record(&ctx);
                std::future::pending::<()>().await;
                Ok(Value::Null)
            }
        })
        .with_recovery(policy)
    };
    let a = cluster.node(vec![forever(runs.clone())]);
    a.recover().await.unwrap();
    let scope = Scope::shared();
    let id = a.create(work("job")).await.unwrap().id().clone();
    past_the_lease().await;
    let b = cluster.node(vec![forever(runs.clone())]);
    assert_eq!(b.recover().await.unwrap(), 1);
    yield_until("attempt 2 runs", || runs.seen().len() == 2).await;
    past_the_lease().await;
    let c = cluster.node(vec![forever(runs.clone())]);
    assert_eq!(c.recover().await.unwrap(), 1);
    let failed = c.get(&scope, &id).await.unwrap();
    assert_eq!(failed.status(), TaskStatus::Failed);
    assert_eq!(
        error_message(&failed).as_deref(),
        Some("Task interrupted: the server stopped while it ran, and it had already run 2 times")
    );
    assert_eq!(
        runs.seen().iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 2],
        "no third run"
    );
}

/// A busy node restarts twice: the first restart has one worker slot for three recovered
/// tasks, so it starts one re-run and dies with two claimed but never started. Those two have
/// run once, not twice: the next node re-runs them (attempt 2), and fails only the one that
/// did run twice (`max_attempts` 2).
#[tokio::test(start_paused = true)]
async fn a_claim_without_a_free_slot_charges_no_attempt() {
    let cluster = Cluster::new();
    let runs = Arc::new(Runs::default());
    let policy = Recovery::Rerun { max_attempts: 2 };
    let forever = |runs: Arc<Runs>| {
        Tool::new("job", "Never finishes", move |ctx| {
            let runs = runs.clone();
            async move {
                runs.record(&ctx);
                std::future::pending::<()>().await;
                Ok(Value::Null)
            }
        })
        .with_recovery(policy)
    };
    let slots = |max_workers: usize| {
        config().with_limits(tasks_runtime::Limits::default().with_max_workers(max_workers))
    };
    let a = cluster.node_with(vec![forever(runs.clone())], slots(3));
    a.recover().await.unwrap();
    let scope = Scope::shared();
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(a.create(work("job")).await.unwrap().id().clone());
    }
    assert_eq!(runs.seen().len(), 3);

    past_the_lease().await;
    let busy = cluster.node_with(vec![forever(runs.clone())], slots(1));
    assert_eq!(busy.recover().await.unwrap(), 3, "all three are claimed");
    // Under the paused clock a sleep returns once every spawned task is idle: the re-runs
    // have started or wait for a slot (a failing wait here fails instead of spinning).
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(
        runs.seen().len(),
        4,
        "one slot: one re-run starts, two wait"
    );
    assert_eq!(busy.busy_workers(), 1);

    past_the_lease().await;
    let next = cluster.node_with(vec![forever(runs.clone())], slots(3));
    assert_eq!(next.recover().await.unwrap(), 3);
    tokio::time::sleep(Duration::from_millis(10)).await;
    let mut statuses = Vec::new();
    for id in &ids {
        let task = next.get(&scope, id).await.unwrap();
        statuses.push((task.status(), error_message(&task)));
    }
    statuses.sort_by_key(|(status, _)| status.as_str());
    assert_eq!(
        statuses,
        vec![
            (
                TaskStatus::Failed,
                Some(
                    "Task interrupted: the server stopped while it ran, and it had already run 2 times"
                        .to_owned()
                )
            ),
            (TaskStatus::Working, None),
            (TaskStatus::Working, None),
        ],
        "only the task that ran twice is failed"
    );
    assert_eq!(
        runs.seen().iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 1, 1, 2, 2, 2],
        "every re-run is attempt 2: an unstarted claim charged nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn a_node_that_lost_its_lease_stops_its_workers_and_re_registers() {
    let cluster = Cluster::new();
    let probe = Probe::new();
    let a = cluster.node(vec![wait_tool(probe.clone())]);
    a.recover().await.unwrap();
    let liveness = a.spawn_liveness();
    let scope = Scope::shared();
    let id = a.create(work("wait")).await.unwrap().id().clone();
    yield_until("the tool runs", || probe.started() == 1).await;
    // The tool's first step runs inside `create_task`, so let the liveness loop register the
    // node before the store forgets it (else it would register it again and stay alive).
    tokio::time::sleep(Duration::from_millis(1)).await;
    let first = a.node();

    // The store forgets the node (as if its lease had run out while it was paused).
    cluster.store.retire_node(&first).await.unwrap();
    let failed = wait_terminal(&a, &scope, &id).await;
    yield_until("the local worker was stopped", || probe.stopped() == 1).await;
    assert_ne!(a.node(), first, "the node registered again under a new id");
    assert_eq!(
        error_message(&failed).as_deref(),
        Some(MESSAGE_INTERRUPTED),
        "its own task was taken over as an orphan and failed by policy"
    );
    liveness.abort();
}

#[tokio::test(start_paused = true)]
async fn a_live_node_keeps_its_tasks() {
    let cluster = Cluster::new();
    let probe = Probe::new();
    let a = cluster.node(vec![wait_tool(probe.clone())]);
    a.recover().await.unwrap();
    let liveness = a.spawn_liveness();
    let scope = Scope::shared();
    let id = a.create(work("wait")).await.unwrap().id().clone();
    let b = cluster.node(vec![wait_tool(probe.clone())]);
    for _ in 0..5 {
        tokio::time::sleep(LEASE).await;
        assert_eq!(
            b.recover().await.unwrap(),
            0,
            "a renewing node's tasks are not orphans"
        );
    }
    assert_eq!(
        a.get(&scope, &id).await.unwrap().status(),
        TaskStatus::Working
    );
    assert_eq!(probe.started(), 1);
    liveness.abort();
}

#[tokio::test(start_paused = true)]
async fn a_parked_task_survives_more_restarts_than_max_attempts() {
    let cluster = Cluster::new();
    let runs = Arc::new(Runs::default());
    let policy = Recovery::Rerun { max_attempts: 2 };
    let first = cluster.node(vec![job(runs.clone(), policy, true)]);
    first.recover().await.unwrap();
    let scope = Scope::shared();
    let id = first.create(work("job")).await.unwrap().id().clone();
    wait_input_keys(&first, &scope, &id, &["confirm"]).await;
    let mut last = first;
    for restart in 1..=4 {
        past_the_lease().await;
        let next = cluster.node(vec![job(runs.clone(), policy, true)]);
        assert_eq!(next.recover().await.unwrap(), 1, "restart {restart}");
        let task = wait_input_keys(&next, &scope, &id, &["confirm"]).await;
        assert_eq!(
            task.status(),
            TaskStatus::InputRequired,
            "restart {restart}"
        );
        last = next;
    }
    last.update(
        &scope,
        &id,
        responses([("confirm", accept(json!({"confirm": true})))]),
    )
    .await
    .unwrap();
    let done = wait_terminal(&last, &scope, &id).await;
    assert_eq!(
        done.status(),
        TaskStatus::Completed,
        "answered after 4 restarts"
    );
}

/// A [`MemoryStore`] whose next `failures` worker writes (transitions under a lease, attempt
/// charges) fail with a backend error.
struct FlakyStore {
    inner: MemoryStore,
    failures: AtomicU32,
}

#[async_trait::async_trait]
impl Store for FlakyStore {
    async fn create(
        &self,
        task: tasks_core::NewTask,
        work: Arc<tasks_runtime::Work>,
        limits: tasks_runtime::store::CreateLimits,
        owner: &tasks_runtime::store::NodeId,
    ) -> Result<tasks_runtime::store::Created, tasks_runtime::store::StoreError> {
        self.inner.create(task, work, limits, owner).await
    }
    async fn get(
        &self,
        scope: &Scope,
        id: &tasks_core::TaskId,
        now: tasks_core::Timestamp,
    ) -> Result<Option<tasks_runtime::store::Snapshot>, tasks_runtime::store::StoreError> {
        self.inner.get(scope, id, now).await
    }
    async fn load(
        &self,
        ids: &[tasks_core::TaskId],
        now: tasks_core::Timestamp,
    ) -> Result<Vec<tasks_runtime::store::Snapshot>, tasks_runtime::store::StoreError> {
        self.inner.load(ids, now).await
    }
    async fn work(
        &self,
        scope: &Scope,
        id: &tasks_core::TaskId,
    ) -> Result<Option<Arc<tasks_runtime::Work>>, tasks_runtime::store::StoreError> {
        self.inner.work(scope, id).await
    }
    async fn transition(
        &self,
        who: tasks_runtime::store::Authority<'_>,
        update: tasks_core::TaskUpdate,
        now: tasks_core::Timestamp,
    ) -> Result<tasks_runtime::store::CasOutcome, tasks_runtime::store::StoreError> {
        let fail = matches!(who, tasks_runtime::store::Authority::Worker(_))
            && self
                .failures
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
        if fail {
            return Err(tasks_runtime::store::StoreError::Backend(
                "disk full".into(),
            ));
        }
        self.inner.transition(who, update, now).await
    }
    async fn reap(
        &self,
        now: tasks_core::Timestamp,
    ) -> Result<Vec<tasks_core::TaskId>, tasks_runtime::store::StoreError> {
        self.inner.reap(now).await
    }
    async fn task_count(&self) -> Result<usize, tasks_runtime::store::StoreError> {
        self.inner.task_count().await
    }
    async fn register_node(
        &self,
        node: &tasks_runtime::store::NodeId,
        now: tasks_core::Timestamp,
        lease_ms: u64,
    ) -> Result<(), tasks_runtime::store::StoreError> {
        self.inner.register_node(node, now, lease_ms).await
    }
    async fn heartbeat(
        &self,
        node: &tasks_runtime::store::NodeId,
        now: tasks_core::Timestamp,
        lease_ms: u64,
    ) -> Result<tasks_runtime::store::Liveness, tasks_runtime::store::StoreError> {
        self.inner.heartbeat(node, now, lease_ms).await
    }
    async fn retire_node(
        &self,
        node: &tasks_runtime::store::NodeId,
    ) -> Result<(), tasks_runtime::store::StoreError> {
        self.inner.retire_node(node).await
    }
    async fn charge_attempt(
        &self,
        id: &tasks_core::TaskId,
        lease: &tasks_runtime::store::Lease,
        now: tasks_core::Timestamp,
    ) -> Result<Option<tasks_runtime::store::Lease>, tasks_runtime::store::StoreError> {
        if self
            .failures
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(tasks_runtime::store::StoreError::Backend(
                "disk full".into(),
            ));
        }
        self.inner.charge_attempt(id, lease, now).await
    }

    async fn claim_orphans(
        &self,
        node: &tasks_runtime::store::NodeId,
        now: tasks_core::Timestamp,
        max: usize,
    ) -> Result<Vec<tasks_runtime::store::Claimed>, tasks_runtime::store::StoreError> {
        self.inner.claim_orphans(node, now, max).await
    }
}

#[tokio::test(start_paused = true)]
async fn outcomes_are_retried_while_the_store_fails() {
    let store = Arc::new(FlakyStore {
        inner: MemoryStore::new(),
        failures: AtomicU32::new(0),
    });
    let cluster = Cluster {
        store: store.clone(),
        clock: Arc::new(TokioClock::starting_at(T0)),
    };
    let runs = Arc::new(Runs::default());
    let a = cluster.node(vec![job(runs.clone(), Recovery::Fail, false)]);
    a.recover().await.unwrap();
    let scope = Scope::shared();
    let id = a.create(work("job")).await.unwrap().id().clone();
    past_the_lease().await;

    // B's failing of the interrupted task meets a failing store three times.
    store.failures.store(3, Ordering::SeqCst);
    let b = cluster.node(vec![job(runs.clone(), Recovery::Fail, false)]);
    assert_eq!(b.recover().await.unwrap(), 1);
    let failed = wait_terminal(&b, &scope, &id).await;
    assert_eq!(error_message(&failed).as_deref(), Some(MESSAGE_INTERRUPTED));

    // A worker's completion meets a failing store twice, and is still stored.
    let c = cluster.node(vec![job(runs.clone(), Recovery::rerun(), false)]);
    c.recover().await.unwrap();
    let id = c.create(work("job")).await.unwrap().id().clone();
    yield_until("the run waits at the gate", || runs.seen().len() == 2).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    store.failures.store(2, Ordering::SeqCst);
    runs.gate.notify_waiters();
    let done = wait_terminal(&c, &scope, &id).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(
        store.failures.load(Ordering::SeqCst),
        0,
        "the failures happened"
    );
}

/// A re-run's attempt charge meets a failing store twice: it is retried, and the re-run then
/// starts as attempt 2 (a re-run given up on would leave the task `working` under a live node
/// with nothing running it).
#[tokio::test(start_paused = true)]
async fn a_rerun_charges_its_attempt_through_a_failing_store() {
    let store = Arc::new(FlakyStore {
        inner: MemoryStore::new(),
        failures: AtomicU32::new(0),
    });
    let cluster = Cluster {
        store: store.clone(),
        clock: Arc::new(TokioClock::starting_at(T0)),
    };
    let runs = Arc::new(Runs::default());
    let a = cluster.node(vec![job(runs.clone(), Recovery::rerun(), false)]);
    a.recover().await.unwrap();
    let scope = Scope::shared();
    let id = a.create(work("job")).await.unwrap().id().clone();
    past_the_lease().await;

    store.failures.store(2, Ordering::SeqCst);
    let b = cluster.node(vec![job(runs.clone(), Recovery::rerun(), false)]);
    assert_eq!(b.recover().await.unwrap(), 1);
    let done = wait_terminal(&b, &scope, &id).await;
    assert_eq!(result_text(&done).as_deref(), Some("attempt 2 answer null"));
    assert_eq!(
        runs.seen().iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(
        store.failures.load(Ordering::SeqCst),
        0,
        "the failures happened"
    );
}

#[tokio::test(start_paused = true)]
async fn asking_for_input_waits_out_a_failing_store() {
    let store = Arc::new(FlakyStore {
        inner: MemoryStore::new(),
        failures: AtomicU32::new(0),
    });
    let cluster = Cluster {
        store: store.clone(),
        clock: Arc::new(TokioClock::starting_at(T0)),
    };
    let runs = Arc::new(Runs::default());
    let a = cluster.node(vec![job(runs.clone(), Recovery::Fail, true)]);
    a.recover().await.unwrap();
    // The worker's question meets a failing store three times (a database failover): the
    // task still parks, instead of failing with "Task store failure".
    store.failures.store(3, Ordering::SeqCst);
    let id = a.create(work("job")).await.unwrap().id().clone();
    let parked = wait_input_keys(&a, &Scope::shared(), &id, &["confirm"]).await;
    assert_eq!(parked.status(), TaskStatus::InputRequired);
    assert_eq!(
        store.failures.load(Ordering::SeqCst),
        0,
        "the failures happened"
    );
}

/// A node whose lease ran out (a stalled store, a paused process) acknowledges no creation:
/// another node would take such a task over at once and fail it as interrupted, though no
/// server stopped. The create is refused as retryable (503, nothing stored) until the node
/// holds a lease again; then its tasks are its own, and nobody takes them over.
#[tokio::test(start_paused = true)]
async fn a_node_whose_lease_ran_out_stores_no_task_until_it_registers_again() {
    let cluster = Cluster::new();
    let probe = Probe::new();
    let a = cluster.node(vec![wait_tool(probe.clone())]);
    a.recover().await.unwrap();
    // A renews nothing (no liveness loop): its lease runs out, and B's claim forgets it.
    past_the_lease().await;
    let b = cluster.node(vec![wait_tool(probe.clone())]);
    assert_eq!(b.recover().await.unwrap(), 0);

    let refused = a.create(work("wait")).await;
    assert_eq!(
        refused.map(|task| task.status()),
        Err(tasks_core::McpError::StoreUnavailable),
        "refused as retryable, nothing stored"
    );
    assert_eq!(cluster.store.task_count().await.unwrap(), 0);
    assert_eq!(probe.started(), 0, "no worker started");

    // A's liveness loop registers it again.
    let liveness = a.spawn_liveness();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let scope = Scope::shared();
    let id = a.create(work("wait")).await.unwrap().id().clone();
    yield_until("A's worker started", || probe.started() == 1).await;
    assert_eq!(
        b.recover().await.unwrap(),
        0,
        "B takes nothing of a live node"
    );
    assert_eq!(
        a.get(&scope, &id).await.unwrap().status(),
        TaskStatus::Working
    );
    liveness.abort();
}

/// `whoami`: the first run records its caller and waits until cancelled; a re-run finishes at
/// once with its caller (`nobody` when it has none).
fn whoami(seen: Arc<Mutex<Vec<Option<String>>>>) -> Tool {
    Tool::new("whoami", "Names its caller", move |ctx| {
        let seen = seen.clone();
        async move {
            let caller = ctx.principal().map(|p| p.as_str().to_owned());
            seen.lock().unwrap().push(caller.clone());
            if ctx.attempt() == 1 {
                ctx.cancellation().cancelled().await;
                return Err(ToolError::Cancelled);
            }
            Ok(text_result(caller.unwrap_or_else(|| "nobody".into())))
        }
    })
    .with_recovery(Recovery::rerun())
}

/// A task's caller travels sealed with its work: the first run sees it, a re-run on another
/// node with the same principal key (the same server secret) sees it too, and a re-run under
/// another key sees none; the store never holds it in clear.
#[tokio::test(start_paused = true)]
async fn a_task_knows_its_caller_on_every_run_with_the_same_key_and_never_stores_it_in_clear() {
    let cluster = Cluster::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let secret = b"the nodes' shared secret";
    let keyed = |secret: &[u8]| {
        config().with_principal_key(tasks_runtime::PrincipalKey::from_secret(secret))
    };
    let a = cluster.node_with(vec![whoami(seen.clone())], keyed(secret));
    a.recover().await.unwrap();
    let scope = Scope::new("hashed-scope");
    let with_caller = |name: &str| {
        Creation::new(work_in(&scope, "whoami", json!({})))
            .caller(Some(tasks_runtime::Principal::new(name)))
    };
    let (alice, bob) = (
        with_caller("alice@example.com"),
        with_caller("bob@example.com"),
    );
    let alice = a.create(alice).await.unwrap().id().clone();
    let work = cluster
        .store
        .work(&scope, &alice)
        .await
        .unwrap()
        .expect("kept");
    assert!(work.sealed_principal.is_some());
    let stored = serde_json::to_string(&*work).unwrap();
    assert!(
        !stored.contains("alice"),
        "sealed in the stored work: {stored}"
    );
    assert!(stored.contains("\"sealedPrincipal\":\""), "{stored}");
    yield_until("the first run", || seen.lock().unwrap().len() == 1).await;
    assert_eq!(
        seen.lock().unwrap()[0].as_deref(),
        Some("alice@example.com"),
        "the first run"
    );

    past_the_lease().await;
    let b = cluster.node_with(vec![whoami(seen.clone())], keyed(secret));
    assert_eq!(b.recover().await.unwrap(), 1);
    let done = wait_terminal(&b, &scope, &alice).await;
    assert_eq!(result_text(&done).as_deref(), Some("alice@example.com"));

    // A node under another secret re-runs bob's task without a caller.
    let bob = b.create(bob).await.unwrap().id().clone();
    past_the_lease().await;
    let c = cluster.node_with(vec![whoami(seen.clone())], keyed(b"a rotated secret"));
    assert_eq!(c.recover().await.unwrap(), 1);
    let done = wait_terminal(&c, &scope, &bob).await;
    assert_eq!(result_text(&done).as_deref(), Some("nobody"));
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [
            Some("alice@example.com".to_owned()),
            Some("alice@example.com".to_owned()),
            Some("bob@example.com".to_owned()),
            None
        ]
    );
}
