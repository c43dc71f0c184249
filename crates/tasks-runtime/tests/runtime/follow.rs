//! Following commits made by other nodes: several runtimes share one memory store, each through
//! a `Hinting` wrapper that hints its committed writes to the *other* nodes, the way the
//! PostgreSQL store's LISTEN/NOTIFY feed does. Hints can be switched off (lost) and a resync
//! sent by hand. Everything runs under tokio's paused clock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tasks_runtime::Creation;

use async_trait::async_trait;
use serde_json::json;
use tasks_core::{NewTask, TaskId, TaskStatus, TaskUpdate, Timestamp};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{
    Authority, CasOutcome, Change, Claimed, Created, Liveness, MemoryStore, NodeId, Snapshot,
    Store, StoreError,
};
use tasks_runtime::{
    text_result, LeaseConfig, RuntimeConfig, Scope, TaskRuntime, TokioClock, Tool, ToolRegistry,
    Work,
};
use tasks_test_support::events::{assert_event_order, drain_for, events_through};
use tasks_test_support::protocol::accept;
use tasks_test_support::{probe::*, runtime::*, task_wait::*, wait::*};
use tokio::sync::broadcast;

const SWEEP: Duration = Duration::from_secs(5);

/// The hint channels of every node of a test, by node index.
type Bus = Arc<Mutex<Vec<broadcast::Sender<Change>>>>;

/// One node's view of the shared store: commits are hinted to every other node.
struct Hinting {
    inner: Arc<MemoryStore>,
    bus: Bus,
    me: usize,
    /// While set, this node's hints are lost.
    mute: AtomicBool,
}

impl Hinting {
    fn hint(&self, id: &TaskId, revision: u64) {
        if self.mute.load(Ordering::SeqCst) {
            return;
        }
        for (index, sender) in self.bus.lock().unwrap().iter().enumerate() {
            if index != self.me {
                let _ = sender.send(Change::Task {
                    id: id.clone(),
                    revision,
                });
            }
        }
    }
}

#[async_trait]
impl Store for Hinting {
    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError> {
        let created = self.inner.create(task, work, limits, owner).await?;
        self.hint(created.snapshot.task.id(), created.snapshot.task.revision());
        Ok(created)
    }
    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError> {
        self.inner.get(scope, id, now).await
    }
    async fn load(&self, ids: &[TaskId], now: Timestamp) -> Result<Vec<Snapshot>, StoreError> {
        self.inner.load(ids, now).await
    }
    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        self.inner.work(scope, id).await
    }
    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        let outcome = self.inner.transition(who, update, now).await?;
        if let CasOutcome::Committed(snapshot) = &outcome {
            self.hint(snapshot.task.id(), snapshot.task.revision());
        }
        Ok(outcome)
    }
    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
        self.inner.reap(now).await
    }
    async fn task_count(&self) -> Result<usize, StoreError> {
        self.inner.task_count().await
    }
    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        self.inner.register_node(node, now, lease_ms).await
    }
    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError> {
        self.inner.heartbeat(node, now, lease_ms).await
    }
    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError> {
        self.inner.retire_node(node).await
    }
    async fn charge_attempt(
        &self,
        id: &tasks_core::TaskId,
        lease: &tasks_runtime::store::Lease,
        now: tasks_core::Timestamp,
    ) -> Result<Option<tasks_runtime::store::Lease>, tasks_runtime::store::StoreError> {
        self.inner.charge_attempt(id, lease, now).await
    }

    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        let claimed = self.inner.claim_orphans(node, now, max).await?;
        for c in &claimed {
            self.hint(c.snapshot.task.id(), c.snapshot.task.revision());
        }
        Ok(claimed)
    }
    fn changes(&self) -> Option<broadcast::Receiver<Change>> {
        Some(self.bus.lock().unwrap()[self.me].subscribe())
    }
}

/// The shared store, hint bus and clock of one test's nodes.
struct Cluster {
    store: Arc<MemoryStore>,
    bus: Bus,
    clock: Arc<TokioClock>,
}

/// A running node: its runtime, its store view and its liveness loop.
struct Node {
    rt: TaskRuntime,
    store: Arc<Hinting>,
    liveness: tokio::task::JoinHandle<()>,
}

impl Drop for Node {
    fn drop(&mut self) {
        self.liveness.abort();
    }
}

impl Cluster {
    fn new() -> Self {
        Cluster {
            store: Arc::new(MemoryStore::new()),
            bus: Arc::new(Mutex::new(Vec::new())),
            clock: Arc::new(TokioClock::starting_at(T0)),
        }
    }

    /// A started node serving `tools` (liveness loop and change consumer running).
    async fn node(&self, tools: Vec<Tool>) -> Node {
        let me = {
            let mut bus = self.bus.lock().unwrap();
            bus.push(broadcast::channel(1024).0);
            bus.len() - 1
        };
        let store = Arc::new(Hinting {
            inner: self.store.clone(),
            bus: self.bus.clone(),
            me,
            mute: AtomicBool::new(false),
        });
        let mut registry = ToolRegistry::new();
        for tool in tools {
            registry.register(tool);
        }
        let config = RuntimeConfig::default().with_leases(LeaseConfig::default().with_sweep(SWEEP));
        let rt = TaskRuntime::with_clock(store.clone(), registry, config, self.clock.clone());
        let liveness = rt.spawn_liveness();
        rt.recover().await.unwrap();
        Node {
            rt,
            store,
            liveness,
        }
    }

    /// Sends `Resync` to node `index`, as a feed does after reconnecting.
    fn resync(&self, index: usize) {
        let _ = self.bus.lock().unwrap()[index].send(Change::Resync);
    }
}

/// Lets spawned tasks run without advancing the paused clock past any timer.
async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

/// `gated`: completes with "released" once `gate` is notified.
fn gated_tool(gate: &Arc<tokio::sync::Notify>) -> Tool {
    let gate = gate.clone();
    Tool::new("gated", "Waits for the test", move |_ctx| {
        let gate = gate.clone();
        async move {
            gate.notified().await;
            Ok(text_result("released"))
        }
    })
}

fn answer_text(task: &tasks_core::Task) -> Option<String> {
    detailed_json(task)["result"]["content"][0]["text"]
        .as_str()
        .map(str::to_owned)
}

#[tokio::test(start_paused = true)]
async fn an_answer_given_on_another_node_resumes_the_parked_worker() {
    let cluster = Cluster::new();
    let probe = Probe::new();
    let a = cluster.node(vec![ask_tool(probe.clone())]).await;
    let b = cluster.node(vec![ask_tool(probe.clone())]).await;
    let scope = Scope::shared();
    let id = a.rt.create(work("ask")).await.unwrap().id().clone();
    wait_input_keys(&b.rt, &scope, &id, &["confirm"]).await;

    b.rt.update(
        &scope,
        &id,
        responses([("confirm", accept(json!({"confirm": true})))]),
    )
    .await
    .unwrap();
    let done = wait_terminal(&b.rt, &scope, &id).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(
        answer_text(&done).as_deref(),
        Some(r#"answer: {"action":"accept","content":{"confirm":true}}"#),
        "A's worker got the answer given on B"
    );
    assert_eq!(probe.started(), 1, "the worker resumed; nothing ran again");
}

#[tokio::test(start_paused = true)]
async fn a_cancel_on_another_node_stops_the_worker_and_the_task_stays_cancelled() {
    let cluster = Cluster::new();
    let probe = Probe::new();
    let a = cluster.node(vec![spin_tool(probe.clone())]).await;
    let b = cluster.node(vec![spin_tool(probe.clone())]).await;
    let scope = Scope::shared();
    let id = a.rt.create(work("spin")).await.unwrap().id().clone();
    yield_until("A's worker runs", || probe.started() == 1).await;

    b.rt.cancel(&scope, &id).await.unwrap();
    yield_until("A's worker stopped", || probe.stopped() == 1).await;
    settle().await;
    let task = a.rt.get(&scope, &id).await.unwrap();
    assert_eq!(task.status(), TaskStatus::Cancelled);
    assert_eq!(task.revision(), 2, "nothing was written after the cancel");
    assert_eq!(a.rt.busy_workers(), 0, "A's slot is free again");
}

#[tokio::test(start_paused = true)]
async fn a_subscriber_on_another_node_sees_every_state_in_order_through_the_terminal_one() {
    let cluster = Cluster::new();
    let status = || {
        Tool::new("status", "Reports, then answers", |ctx| async move {
            for step in 1..=3 {
                ctx.set_status_message(format!("step {step}"));
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
            Ok(text_result("done"))
        })
    };
    let a = cluster.node(vec![status()]).await;
    let b = cluster.node(vec![status()]).await;
    let mut events = b.rt.subscribe();
    let scope = Scope::shared();
    let id = a.rt.create(work("status")).await.unwrap().id().clone();
    let done = wait_terminal(&a.rt, &scope, &id).await;
    let seen = events_through(&mut events, &id, done.revision()).await;
    assert_event_order(&seen);
    let last = seen.last().unwrap();
    assert_eq!(
        last.task.status(),
        TaskStatus::Completed,
        "terminal delivered"
    );
    assert_eq!(*last.task, *done, "the terminal state as stored");
    assert!(
        seen.len() >= 2,
        "creation and the terminal state at least: {seen:?}"
    );
    let _ = scope;
}

#[tokio::test(start_paused = true)]
async fn a_lost_hint_is_repaired_by_the_owners_sweep() {
    let cluster = Cluster::new();
    let probe = Probe::new();
    let a = cluster.node(vec![ask_tool(probe.clone())]).await;
    let b = cluster.node(vec![ask_tool(probe.clone())]).await;
    let scope = Scope::shared();
    let id = a.rt.create(work("ask")).await.unwrap().id().clone();
    wait_input_keys(&a.rt, &scope, &id, &["confirm"]).await;

    b.store.mute.store(true, Ordering::SeqCst);
    b.rt.update(
        &scope,
        &id,
        responses([("confirm", accept(json!({"note": "lost hint"})))]),
    )
    .await
    .unwrap();
    settle().await;
    assert!(
        probe.answers().is_empty(),
        "without the hint A does not know yet"
    );
    tokio::time::sleep(SWEEP + Duration::from_millis(10)).await;
    settle().await;
    assert_eq!(
        probe.answers(),
        vec![json!({"action": "accept", "content": {"note": "lost hint"}})],
        "A's sweep re-read the task and handed the answer to its worker"
    );
    let done = wait_terminal(&a.rt, &scope, &id).await;
    assert_eq!(done.status(), TaskStatus::Completed);
}

#[tokio::test(start_paused = true)]
async fn a_resync_delivers_the_terminal_state_whose_hint_was_lost() {
    let cluster = Cluster::new();
    let gate = Arc::new(tokio::sync::Notify::new());
    let a = cluster.node(vec![gated_tool(&gate)]).await;
    let b = cluster.node(vec![gated_tool(&gate)]).await;
    let mut events = b.rt.subscribe();
    let scope = Scope::shared();
    let id = a.rt.create(work("gated")).await.unwrap().id().clone();
    let created = events_through(&mut events, &id, 1).await;
    assert_eq!(created.len(), 1, "B published the creation from its hint");

    a.store.mute.store(true, Ordering::SeqCst);
    gate.notify_one();
    let done = wait_terminal(&a.rt, &scope, &id).await;
    settle().await;
    assert!(
        drain_for(&mut events, &id).is_empty(),
        "the completion's hint was lost"
    );
    cluster.resync(1);
    let seen = events_through(&mut events, &id, done.revision()).await;
    assert_eq!(seen.len(), 1, "only the terminal state: {seen:?}");
    assert_eq!(*seen[0].task, *done);
}

#[tokio::test(start_paused = true)]
async fn a_watched_task_never_published_here_gets_its_terminal_state_on_resync() {
    let cluster = Cluster::new();
    let gate = Arc::new(tokio::sync::Notify::new());
    let a = cluster.node(vec![gated_tool(&gate)]).await;
    let b = cluster.node(vec![gated_tool(&gate)]).await;
    let scope = Scope::shared();
    // Every hint of A is lost: B never publishes the task on its own.
    a.store.mute.store(true, Ordering::SeqCst);
    let id = a.rt.create(work("gated")).await.unwrap().id().clone();
    let task = b.rt.get(&scope, &id).await.unwrap();
    b.rt.watch(&task);
    let mut events = b.rt.subscribe();
    gate.notify_one();
    let done = wait_terminal(&a.rt, &scope, &id).await;
    settle().await;
    assert!(drain_for(&mut events, &id).is_empty(), "no hint reached B");
    cluster.resync(1);
    let seen = events_through(&mut events, &id, done.revision()).await;
    assert_eq!(seen.len(), 1, "the terminal state: {seen:?}");
    assert_eq!(*seen[0].task, *done);
}

#[tokio::test(start_paused = true)]
async fn a_wait_on_another_node_re_reads_after_a_resync() {
    let cluster = Cluster::new();
    let gate = Arc::new(tokio::sync::Notify::new());
    let a = cluster.node(vec![gated_tool(&gate)]).await;
    let b = cluster.node(vec![gated_tool(&gate)]).await;
    let scope = Scope::shared();
    // Every hint of A is lost, as while B's feed connection is down.
    a.store.mute.store(true, Ordering::SeqCst);
    let id = a.rt.create(work("gated")).await.unwrap().id().clone();
    let mut wait = b.rt.wait_task(&scope, &id);
    assert_eq!(wait.current().await.unwrap().status(), TaskStatus::Working);
    gate.notify_one();
    let done = wait_terminal(&a.rt, &scope, &id).await;
    let early = tokio::time::timeout(Duration::from_secs(1), wait.next()).await;
    assert!(early.is_err(), "B heard nothing yet: {early:?}");

    // The feed reconnects: its Resync makes every waiter re-read, well before the guard (5 s).
    cluster.resync(1);
    let seen = tokio::time::timeout(Duration::from_millis(100), wait.next())
        .await
        .expect("the resync ends the wait")
        .unwrap();
    assert_eq!(*seen, *done);
}

#[tokio::test(start_paused = true)]
async fn a_task_reaped_on_another_node_ends_the_waits_here() {
    let cluster = Cluster::new();
    let gate = Arc::new(tokio::sync::Notify::new());
    let a = cluster.node(vec![gated_tool(&gate)]).await;
    let b = cluster.node(vec![gated_tool(&gate)]).await;
    let scope = Scope::shared();
    let id =
        a.rt.create(Creation::new(work("gated")).ttl_ms(Some(1_000)))
            .await
            .unwrap()
            .id()
            .clone();
    let mut wait = b.rt.wait_task(&scope, &id);
    wait.current().await.unwrap();
    tokio::time::advance(Duration::from_millis(1_100)).await;
    assert_eq!(a.rt.reap_now().await.unwrap(), 1, "A reaps it");
    // B hears nothing of a deletion; its wait still ends, at the latest at the task's expiry.
    let ended = tokio::time::timeout(Duration::from_millis(100), wait.next())
        .await
        .expect("the wait ends");
    assert_eq!(ended.unwrap_err(), tasks_core::McpError::UnknownTask);
}
