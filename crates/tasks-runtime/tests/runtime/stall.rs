//! A store that stalls (its database accepts but never answers) or is briefly unreachable:
//! every store call ends by its deadline, the node reports the store unwritable within a tick,
//! fences itself by its own clock once no renewal has succeeded for the lease minus one tick,
//! and requests are refused as retryable (503) with what is known about their outcome.
//! Everything runs under tokio's paused clock.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tasks_runtime::Creation;

use tasks_core::{McpError, NewTask, TaskId, TaskUpdate, Timestamp};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{
    Authority, CasOutcome, Claimed, Created, Liveness, MemoryStore, NodeId, Snapshot, Store,
    StoreError,
};
use tasks_runtime::{
    LeaseConfig, Limits, RuntimeConfig, Scope, TaskRuntime, TokioClock, ToolRegistry, Work,
};
use tasks_test_support::protocol::accept;
use tasks_test_support::{probe::*, runtime::*, task_wait::*, wait::*};
use tokio::sync::watch;
use tokio::time::Instant;

const LEASE: Duration = Duration::from_secs(10);
const TICK: Duration = Duration::from_secs(1);
const STORE_DEADLINE: Duration = Duration::from_secs(3);

/// How the [`StallStore`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Like the memory store.
    Answer,
    /// Every call waits until the mode changes (a connection that never answers).
    Stall,
    /// Every call fails at once with [`StoreError::Unavailable`] (no connection to be had).
    Refuse,
    /// A creation, transition or claim is committed, then its answer is lost
    /// ([`StoreError::Interrupted`], as when the connection dies or the deadline passes after
    /// the commit); other calls answer.
    LoseCommit,
}

/// A [`MemoryStore`] that stalls or refuses on command, and counts its `get` calls.
struct StallStore {
    inner: MemoryStore,
    mode: watch::Sender<Mode>,
    gets: AtomicUsize,
    /// While set, `register_node` fails at once (the other calls answer as `mode` says).
    refuse_register: std::sync::atomic::AtomicBool,
}

impl StallStore {
    fn new() -> Arc<Self> {
        Arc::new(StallStore {
            inner: MemoryStore::new(),
            mode: watch::channel(Mode::Answer).0,
            gets: AtomicUsize::new(0),
            refuse_register: std::sync::atomic::AtomicBool::new(false),
        })
    }

    fn set(&self, mode: Mode) {
        self.mode.send_replace(mode);
    }

    async fn gate(&self) -> Result<(), StoreError> {
        let mut mode = self.mode.subscribe();
        let now = *mode
            .wait_for(|mode| *mode != Mode::Stall)
            .await
            .expect("the sender lives in self");
        match now {
            Mode::Refuse => Err(StoreError::Unavailable("connection refused".into())),
            Mode::Answer | Mode::LoseCommit | Mode::Stall => Ok(()),
        }
    }
}

#[async_trait::async_trait]
impl Store for StallStore {
    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError> {
        if *self.mode.borrow() == Mode::LoseCommit {
            self.inner.create(task, work, limits, owner).await?;
            return Err(StoreError::Interrupted("the answer was lost".into()));
        }
        self.gate().await?;
        self.inner.create(task, work, limits, owner).await
    }
    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        self.gate().await?;
        self.inner.get(scope, id, now).await
    }
    async fn load(&self, ids: &[TaskId], now: Timestamp) -> Result<Vec<Snapshot>, StoreError> {
        self.gate().await?;
        self.inner.load(ids, now).await
    }
    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        self.gate().await?;
        self.inner.work(scope, id).await
    }
    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        if *self.mode.borrow() == Mode::LoseCommit {
            self.inner.transition(who, update, now).await?;
            return Err(StoreError::Interrupted("the answer was lost".into()));
        }
        self.gate().await?;
        self.inner.transition(who, update, now).await
    }
    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
        self.gate().await?;
        self.inner.reap(now).await
    }
    async fn task_count(&self) -> Result<usize, StoreError> {
        self.gate().await?;
        self.inner.task_count().await
    }
    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        self.gate().await?;
        if self.refuse_register.load(Ordering::SeqCst) {
            return Err(StoreError::Unavailable("registration refused".into()));
        }
        self.inner.register_node(node, now, lease_ms).await
    }
    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError> {
        self.gate().await?;
        self.inner.heartbeat(node, now, lease_ms).await
    }
    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError> {
        self.gate().await?;
        self.inner.retire_node(node).await
    }
    async fn charge_attempt(
        &self,
        id: &TaskId,
        lease: &tasks_runtime::store::Lease,
        now: Timestamp,
    ) -> Result<Option<tasks_runtime::store::Lease>, StoreError> {
        self.gate().await?;
        self.inner.charge_attempt(id, lease, now).await
    }
    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        if *self.mode.borrow() == Mode::LoseCommit {
            self.inner.claim_orphans(node, now, max).await?;
            return Err(StoreError::Interrupted("the answer was lost".into()));
        }
        self.gate().await?;
        self.inner.claim_orphans(node, now, max).await
    }
    async fn held(
        &self,
        node: &NodeId,
        now: Timestamp,
        after: Option<&TaskId>,
        max: usize,
    ) -> Result<Option<Vec<Claimed>>, StoreError> {
        self.gate().await?;
        self.inner.held(node, now, after, max).await
    }
}

fn config() -> RuntimeConfig {
    RuntimeConfig::default()
        .with_leases(LeaseConfig::default().with_lease(LEASE).with_tick(TICK))
        .with_limits(Limits::default().with_store_deadline(STORE_DEADLINE))
}

/// A node over `store` serving `wait` (runs until cancelled), `gated` (finishes once `gate` is
/// notified) and `echo`.
fn node(store: &Arc<StallStore>, probe: &Arc<Probe>) -> TaskRuntime {
    node_with_gate(store, probe, Arc::new(tokio::sync::Notify::new()))
}

fn node_with_gate(
    store: &Arc<StallStore>,
    probe: &Arc<Probe>,
    gate: Arc<tokio::sync::Notify>,
) -> TaskRuntime {
    let mut tools = ToolRegistry::new();
    let wait_probe = probe.clone();
    tools.register(tasks_runtime::Tool::new(
        "wait",
        "Runs until cancelled",
        move |ctx| {
            let probe = wait_probe.clone();
            async move {
                let _guard = probe.enter();
                ctx.cancellation().cancelled().await;
                Err::<serde_json::Value, _>(tasks_runtime::ToolError::Cancelled)
            }
        },
    ));
    tools.register(echo_tool());
    tools.register(tasks_runtime::Tool::new(
        "gated",
        "Finishes when the test says so",
        move |_ctx| {
            let gate = gate.clone();
            async move {
                gate.notified().await;
                Ok(tasks_runtime::text_result("done"))
            }
        },
    ));
    TaskRuntime::with_clock(
        store.clone(),
        tools,
        config(),
        Arc::new(TokioClock::starting_at(T0)),
    )
}

/// The value of the metric sample `series` (name and labels as encoded), or 0 when absent.
fn metric(runtime: &TaskRuntime, series: &str) -> f64 {
    let mut registry = prometheus_client::registry::Registry::default();
    runtime.metrics().register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// `call`'s output; fails the test when it takes longer than [`WAIT_LIMIT`].
async fn bounded<T>(call: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(WAIT_LIMIT, call)
        .await
        .expect("the call ended by the store deadline")
}

/// Sleeps until `start + at` (tokio's paused time).
async fn until(start: Instant, at: Duration) {
    tokio::time::sleep_until(start + at).await;
}

#[tokio::test(start_paused = true)]
async fn a_stalled_store_is_reported_unwritable_within_a_tick() {
    let store = StallStore::new();
    let a = node(&store, &Probe::new());
    a.recover().await.unwrap();
    let start = Instant::now();
    let liveness = a.spawn_liveness();
    until(start, TICK + Duration::from_millis(100)).await;
    assert!(a.store_writable(), "the first renewal succeeded");

    store.set(Mode::Stall);
    // The renewal sent at 2 s gets half a tick to answer.
    let renewal_deadline = a.config().renewal_deadline();
    assert_eq!(renewal_deadline, TICK / 2);
    until(
        start,
        TICK * 2 + renewal_deadline - Duration::from_millis(1),
    )
    .await;
    assert!(a.store_writable(), "still within the renewal's deadline");
    until(
        start,
        TICK * 2 + renewal_deadline + Duration::from_millis(1),
    )
    .await;
    assert!(
        !a.store_writable(),
        "a renewal that does not answer in time counts as failed"
    );
    assert_eq!(
        metric(&a, "store_deadline_exceeded_total{operation=\"heartbeat\"}"),
        1.0
    );
    assert_eq!(metric(&a, "lease_renewals_total{outcome=\"failed\"}"), 1.0);

    store.set(Mode::Answer);
    until(start, TICK * 3 + Duration::from_millis(1)).await;
    assert!(a.store_writable(), "the next renewal succeeded");
    liveness.abort();
}

#[tokio::test(start_paused = true)]
async fn a_node_fences_itself_on_its_own_clock_while_its_store_stalls() {
    let store = StallStore::new();
    let probe = Probe::new();
    let a = node(&store, &probe);
    a.recover().await.unwrap();
    let start = Instant::now();
    let liveness = a.spawn_liveness();
    a.create(work("wait")).await.unwrap();
    until(start, TICK * 3 + Duration::from_millis(100)).await;
    assert_eq!(probe.started(), 1);
    let first = a.node();

    // The last renewal that succeeds is the one sent at 3 s.
    store.set(Mode::Stall);
    let fence_at = TICK * 3 + LEASE - TICK;
    until(start, fence_at - Duration::from_millis(1)).await;
    assert_eq!(
        probe.stopped(),
        0,
        "the lease minus one tick has not passed"
    );
    assert_eq!(a.node(), first);
    until(start, fence_at + Duration::from_millis(1)).await;
    assert_eq!(
        probe.stopped(),
        1,
        "the worker stopped once the lease minus one tick passed, the store still stalled"
    );
    assert_ne!(a.node(), first, "the node took a new id");
    assert!(!a.store_writable());
    assert_eq!(
        metric(&a, "node_self_fences_total{reason=\"stalled\"}"),
        1.0
    );

    // The store answers again: the new id gets registered and renewed.
    store.set(Mode::Answer);
    until(start, fence_at + STORE_DEADLINE + TICK * 2).await;
    assert!(a.store_writable());
    assert_eq!(
        metric(&a, "node_self_fences_total{reason=\"stalled\"}"),
        1.0,
        "no second fence"
    );
    liveness.abort();
}

#[tokio::test(start_paused = true)]
async fn requests_to_a_stalled_store_end_by_its_deadline_as_retryable_refusals() {
    let store = StallStore::new();
    let a = node(&store, &Probe::new());
    a.recover().await.unwrap();
    let scope = Scope::shared();
    let done = a.create(work("echo")).await.unwrap().id().clone();

    store.set(Mode::Stall);
    let started = Instant::now();
    assert_eq!(
        bounded(a.get(&scope, &done)).await.unwrap_err(),
        McpError::StoreUnavailable
    );
    assert_eq!(started.elapsed(), STORE_DEADLINE);
    assert_eq!(
        bounded(a.cancel(&scope, &done)).await.unwrap_err(),
        McpError::StoreUnavailable,
        "the cancel's read did not answer: nothing was changed"
    );
    assert_eq!(
        bounded(a.create(work("echo"))).await.unwrap_err(),
        McpError::StoreOutcomeUnknown,
        "a creation sent to the store that did not answer may have been stored"
    );
    assert_eq!(
        metric(&a, "store_deadline_exceeded_total{operation=\"create\"}"),
        1.0
    );
    // The refusals answered to clients are counted where they are answered
    // (`mcp_store_unavailable_refusals_total`, tasks-http's tests/dispatcher/store_refusals.rs).

    // Unreachable: refused at once, nothing stored.
    store.set(Mode::Refuse);
    assert_eq!(
        a.create(work("echo")).await.unwrap_err(),
        McpError::StoreUnavailable
    );
    assert_eq!(
        a.get(&scope, &done).await.unwrap_err(),
        McpError::StoreUnavailable
    );
    store.set(Mode::Answer);
    assert_eq!(a.stored_tasks().await.unwrap(), 1, "only the first task");
}

#[tokio::test(start_paused = true)]
async fn a_fenced_worker_stops_retrying_its_outcome() {
    let store = StallStore::new();
    let gate = Arc::new(tokio::sync::Notify::new());
    let a = node_with_gate(&store, &Probe::new(), gate.clone());
    a.recover().await.unwrap();
    let start = Instant::now();
    let liveness = a.spawn_liveness();
    a.create(work("gated")).await.unwrap();
    until(start, TICK * 3 + Duration::from_millis(100)).await;

    // The tool finishes while the store stalls: each commit of its outcome (a read, then a
    // write) runs out of the store deadline and is tried again.
    store.set(Mode::Stall);
    gate.notify_one();
    let fence_at = TICK * 3 + LEASE - TICK;
    until(start, fence_at - Duration::from_millis(1)).await;
    let before_fence = store.gets.load(Ordering::SeqCst);
    assert!(
        before_fence >= 2,
        "the outcome was tried again: {before_fence}"
    );
    assert_eq!(
        metric(&a, "node_self_fences_total{reason=\"stalled\"}"),
        0.0
    );
    // After the fence, the attempt under way runs out, and nothing more is tried.
    until(start, fence_at + STORE_DEADLINE + Duration::from_millis(1)).await;
    assert_eq!(
        metric(&a, "node_self_fences_total{reason=\"stalled\"}"),
        1.0
    );
    let after_fence = store.gets.load(Ordering::SeqCst);
    until(start, fence_at + LEASE * 6).await;
    assert_eq!(
        store.gets.load(Ordering::SeqCst),
        after_fence,
        "a fenced worker does not retry its outcome"
    );
    liveness.abort();
}

/// An answer whose commit succeeded but whose acknowledgement was lost (the client got "outcome
/// unknown") still reaches the parked worker: the client's retry finds the answer stored, and
/// the runtime hands it to the worker and publishes the state it missed.
#[tokio::test(start_paused = true)]
async fn an_answer_committed_after_its_acknowledgement_was_lost_reaches_the_worker() {
    let store = StallStore::new();
    let probe = Probe::new();
    let mut tools = ToolRegistry::new();
    tools.register(ask_tool(probe.clone()));
    let a = TaskRuntime::with_clock(
        store.clone(),
        tools,
        config(),
        Arc::new(TokioClock::starting_at(T0)),
    );
    a.recover().await.unwrap();
    let scope = Scope::shared();
    let id = a.create(work("ask")).await.unwrap().id().clone();
    wait_input_keys(&a, &scope, &id, &["confirm"]).await;

    store.set(Mode::LoseCommit);
    let answer = responses([("confirm", accept(serde_json::json!({"ok": true})))]);
    assert_eq!(
        a.update(&scope, &id, answer.clone()).await.unwrap_err(),
        McpError::StoreOutcomeUnknown
    );
    store.set(Mode::Answer);
    // The client sends the same answer again, as the error tells it to.
    a.update(&scope, &id, answer).await.unwrap();
    let done = bounded(wait_terminal(&a, &scope, &id)).await;
    assert_eq!(done.status(), tasks_core::TaskStatus::Completed, "{done:?}");
    assert_eq!(
        probe.answers().len(),
        1,
        "the worker got the stored answer once"
    );
}

/// A creation stored although its call was interrupted (the client was told the outcome is
/// unknown) still runs: the runtime reads it back once the store answers and starts its worker,
/// instead of leaving it `working` under a live node with nothing running it.
#[tokio::test(start_paused = true)]
async fn a_creation_stored_after_its_answer_was_lost_still_runs() {
    let store = StallStore::new();
    let a = node(&store, &Probe::new());
    a.recover().await.unwrap();
    store.set(Mode::LoseCommit);
    assert_eq!(
        a.create(work("echo")).await.unwrap_err(),
        McpError::StoreOutcomeUnknown
    );
    store.set(Mode::Answer);
    let scope = Scope::shared();
    let listed = store
        .inner
        .list(&scope, None, 10, T0)
        .await
        .unwrap()
        .expect("the memory store lists");
    assert_eq!(listed.len(), 1, "the creation was stored");
    let id = listed[0].task.id().clone();
    let done = bounded(wait_terminal(&a, &scope, &id)).await;
    assert_eq!(done.status(), tasks_core::TaskStatus::Completed, "{done:?}");
}

/// A `TaskWait::next` dropped while its re-read waits on the store (a `select!` branch that
/// lost) keeps the re-read owed: the next call makes it at once. The wake here is the task's
/// own expiry, and the guard is an hour away, so nothing else could end the second call.
#[tokio::test(start_paused = true)]
async fn a_wait_dropped_during_its_re_read_re_reads_on_the_next_call() {
    let store = StallStore::new();
    let mut tools = ToolRegistry::new();
    tools.register(tasks_runtime::Tool::new(
        "wait",
        "Runs until cancelled",
        |ctx| async move {
            ctx.cancellation().cancelled().await;
            Err::<serde_json::Value, _>(tasks_runtime::ToolError::Cancelled)
        },
    ));
    let rt = TaskRuntime::with_clock(
        store.clone(),
        tools,
        config().with_wait_recheck(Duration::from_secs(3600)),
        Arc::new(TokioClock::starting_at(T0)),
    );
    let scope = Scope::shared();
    let task = rt
        .create(Creation::new(work("wait")).ttl_ms(Some(2_000)))
        .await
        .unwrap();
    let mut wait = rt.wait_task(&scope, task.id());
    assert_eq!(wait.current().await.unwrap().revision(), 1);

    // The expiry (2 s) wakes the wait; its re-read stalls and is dropped at 2.5 s, before
    // the store deadline (3 s) would end it.
    store.set(Mode::Stall);
    let dropped = tokio::time::timeout(Duration::from_millis(2_500), wait.next()).await;
    assert!(
        dropped.is_err(),
        "the re-read was still waiting: {dropped:?}"
    );
    store.set(Mode::Answer);

    let next = tokio::time::timeout(Duration::from_millis(100), wait.next())
        .await
        .expect("the owed re-read is made at once");
    assert!(matches!(next, Err(McpError::UnknownTask)), "{next:?}");
}

/// A claim that committed but whose answer was lost (the deadline passed, the connection died)
/// leaves tasks held by this live node with nothing running them; on the next tick the node
/// lists what it holds and takes those over as the claim would have (here: a re-run).
#[tokio::test(start_paused = true)]
async fn tasks_claimed_by_a_claim_whose_answer_was_lost_are_taken_over_next_tick() {
    let store = StallStore::new();
    let probe = Probe::new();
    let rerun_node = || {
        let mut tools = ToolRegistry::new();
        let probe = probe.clone();
        tools.register(
            tasks_runtime::Tool::new("wait", "Runs until cancelled", move |ctx| {
                let probe = probe.clone();
                async move {
                    let _guard = probe.enter();
                    ctx.cancellation().cancelled().await;
                    Err::<serde_json::Value, _>(tasks_runtime::ToolError::Cancelled)
                }
            })
            .with_recovery(tasks_runtime::Recovery::rerun()),
        );
        TaskRuntime::with_clock(
            store.clone(),
            tools,
            config(),
            Arc::new(TokioClock::starting_at(T0)),
        )
    };
    let start = Instant::now();
    // Node A creates the task and dies (it never renews its lease).
    let a = rerun_node();
    a.recover().await.unwrap();
    let scope = Scope::shared();
    let id = a.create(work("wait")).await.unwrap().id().clone();
    let b = rerun_node();
    b.recover().await.unwrap();
    let liveness = b.spawn_liveness();
    until(start, Duration::from_millis(10)).await;
    assert_eq!(probe.started(), 1, "A runs the task");

    // B's first claim after A's lease ran out (on its tick at 10 s) commits, and its answer
    // is lost.
    store.set(Mode::LoseCommit);
    until(start, LEASE + Duration::from_millis(500)).await;
    assert_eq!(probe.started(), 1, "the lost claim started nothing");
    store.set(Mode::Answer);

    until(start, LEASE + TICK + Duration::from_millis(500)).await;
    assert_eq!(
        probe.started(),
        2,
        "the next tick takes the held task over: a re-run on B"
    );
    let task = b.get(&scope, &id).await.unwrap();
    assert_eq!(task.status(), tasks_core::TaskStatus::Working);
    assert_eq!(
        metric(&b, "node_self_fences_total{reason=\"claim_unknown\"}"),
        0.0,
        "a store that lists what a node holds needs no fence"
    );
    liveness.abort();
}

/// After a fence whose registration failed, the node's new id is nobody's: it claims nothing
/// under it (another node would take whatever it claimed) until a registration succeeds.
#[tokio::test(start_paused = true)]
async fn a_node_whose_registration_failed_claims_nothing_until_it_registers() {
    let store = StallStore::new();
    let probe = Probe::new();
    let a = node(&store, &probe);
    a.recover().await.unwrap();
    let scope = Scope::shared();
    let id = a.create(work("wait")).await.unwrap().id().clone();
    // A dies: it never renews. B renews until the store stalls at 0.5 s.
    let b = node(&store, &probe);
    b.recover().await.unwrap();
    let start = Instant::now();
    let liveness = b.spawn_liveness();
    until(start, Duration::from_millis(500)).await;
    store.refuse_register.store(true, Ordering::SeqCst);
    store.set(Mode::Stall);
    // B fences by its own clock at the lease minus one tick; its new id cannot register.
    until(start, LEASE + Duration::from_millis(500)).await;
    assert_eq!(
        metric(&b, "node_self_fences_total{reason=\"stalled\"}"),
        1.0
    );
    store.set(Mode::Answer);
    // A's lease has run out, so its task is an orphan; B, unregistered, leaves it alone.
    until(start, LEASE + TICK * 4).await;
    assert_eq!(
        a.get(&scope, &id).await.unwrap().status(),
        tasks_core::TaskStatus::Working,
        "nothing claimed the orphan under an unregistered id"
    );
    assert_eq!(metric(&b, "task_takeovers_total"), 0.0);

    store.refuse_register.store(false, Ordering::SeqCst);
    until(start, LEASE + TICK * 6).await;
    // Registered again, B claims the orphan (the `wait` tool's policy fails it).
    let task = a.get(&scope, &id).await.unwrap();
    assert_eq!(task.status(), tasks_core::TaskStatus::Failed);
    liveness.abort();
}

/// A lease not longer than the tick still gives the node a full tick before it fences itself
/// by its own clock: with a healthy store it never fences.
#[tokio::test(start_paused = true)]
async fn a_lease_as_short_as_the_tick_never_fences_a_healthy_node() {
    let store = StallStore::new();
    let mut tools = ToolRegistry::new();
    tools.register(echo_tool());
    let config = RuntimeConfig::default()
        .with_leases(LeaseConfig::default().with_lease(TICK).with_tick(TICK));
    let a = TaskRuntime::with_clock(
        store.clone(),
        tools,
        config,
        Arc::new(TokioClock::starting_at(T0)),
    );
    a.recover().await.unwrap();
    let start = Instant::now();
    let liveness = a.spawn_liveness();
    until(start, TICK * 20 + Duration::from_millis(100)).await;
    for reason in ["stalled", "lost"] {
        assert_eq!(
            metric(
                &a,
                &format!("node_self_fences_total{{reason=\"{reason}\"}}")
            ),
            0.0,
            "{reason}"
        );
    }
    assert!(metric(&a, "lease_renewals_total{outcome=\"ok\"}") >= 19.0);
    liveness.abort();
}
