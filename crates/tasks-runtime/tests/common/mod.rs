//! Shared helpers for the runtime tests: tools, runtimes, waiting on task state.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tasks_core::{
    wire, InputRequest, JsonObject, McpError, NewTask, Task, TaskId, TaskUpdate, Timestamp,
};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::{
    text_result, Authority, CasOutcome, Claimed, Created, Liveness, MemoryStore, NodeId,
    RuntimeConfig, Scope, Snapshot, StatusEvent, Store, StoreError, TaskRuntime, TokioClock, Tool,
    ToolError, ToolRegistry, Work,
};
use tokio::sync::broadcast::{self, error::RecvError};

/// The wall-clock start of every test runtime (2026-11-03T18:04:05.123Z).
pub(crate) const T0: Timestamp = Timestamp::from_unix_millis(1_793_729_045_123);

/// How long (tokio time) a wait may take before the test fails instead of hanging. Under paused
/// time this is virtual: a deadlocked runtime auto-advances to it at once.
pub(crate) const WAIT_LIMIT: Duration = Duration::from_secs(30);

/// A JSON object literal.
pub(crate) fn obj(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// `{key: value}` responses for `update`.
pub(crate) fn responses<const N: usize>(pairs: [(&str, Value); N]) -> BTreeMap<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// An `elicitation/create` request with `message`.
pub(crate) fn elicit(message: &str) -> InputRequest {
    InputRequest {
        method: "elicitation/create".into(),
        params: Some(obj(json!({
            "message": message,
            "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
        }))),
    }
}

/// An accepted ElicitResult carrying `content`.
pub(crate) fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

pub(crate) fn alice() -> Scope {
    Scope::new("alice")
}

pub(crate) fn bob() -> Scope {
    Scope::new("bob")
}

/// Work for `tool` with `arguments`, in `scope`, created by a request that declared form
/// elicitation, sampling and roots.
pub(crate) fn work_in(scope: &Scope, tool: &str, arguments: Value) -> Work {
    Work {
        tool: tool.to_owned(),
        arguments: obj(arguments),
        input_responses: None,
        client_capabilities: obj(json!({"elicitation": {}, "sampling": {}, "roots": {}})),
        scope: scope.clone(),
        trace_parent: None,
        sealed_principal: None,
    }
}

/// Work for `tool` with no arguments, in the shared scope.
pub(crate) fn work(tool: &str) -> Work {
    work_in(&Scope::shared(), tool, json!({}))
}

/// A runtime over a fresh [`MemoryStore`] with a [`TokioClock`] starting at [`T0`].
pub(crate) fn runtime(tools: Vec<Tool>, config: RuntimeConfig) -> TaskRuntime {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(tool);
    }
    TaskRuntime::with_clock(
        Arc::new(MemoryStore::new()),
        registry,
        config,
        Arc::new(TokioClock::starting_at(T0)),
    )
}

/// A runtime over a [`YieldingStore`] (see there), otherwise like [`runtime`].
pub(crate) fn yielding_runtime(tools: Vec<Tool>, config: RuntimeConfig) -> TaskRuntime {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(tool);
    }
    TaskRuntime::with_clock(
        Arc::new(YieldingStore(MemoryStore::new())),
        registry,
        config,
        Arc::new(TokioClock::starting_at(T0)),
    )
}

/// A [`MemoryStore`] that yields to the scheduler before and after every call, like a store
/// behind a network round trip. It widens the windows between a commit and what the runtime
/// does next, so races show up in far fewer iterations.
pub(crate) struct YieldingStore(pub MemoryStore);

#[async_trait::async_trait]
impl Store for YieldingStore {
    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError> {
        tokio::task::yield_now().await;
        let out = self.0.create(task, work, limits, owner).await;
        tokio::task::yield_now().await;
        out
    }

    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError> {
        tokio::task::yield_now().await;
        let out = self.0.get(scope, id, now).await;
        tokio::task::yield_now().await;
        out
    }

    async fn load(
        &self,
        ids: &[tasks_core::TaskId],
        now: Timestamp,
    ) -> Result<Vec<Snapshot>, StoreError> {
        self.0.load(ids, now).await
    }
    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        tokio::task::yield_now().await;
        self.0.work(scope, id).await
    }

    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        tokio::task::yield_now().await;
        let out = self.0.transition(who, update, now).await;
        tokio::task::yield_now().await;
        out
    }

    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
        tokio::task::yield_now().await;
        self.0.reap(now).await
    }

    async fn task_count(&self) -> Result<usize, StoreError> {
        self.0.task_count().await
    }

    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        self.0.register_node(node, now, lease_ms).await
    }

    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError> {
        self.0.heartbeat(node, now, lease_ms).await
    }

    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError> {
        self.0.retire_node(node).await
    }

    async fn charge_attempt(
        &self,
        id: &tasks_core::TaskId,
        lease: &tasks_runtime::Lease,
        now: tasks_core::Timestamp,
    ) -> Result<Option<tasks_runtime::Lease>, tasks_runtime::StoreError> {
        tokio::task::yield_now().await;
        self.0.charge_attempt(id, lease, now).await
    }

    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        tokio::task::yield_now().await;
        let out = self.0.claim_orphans(node, now, max).await;
        tokio::task::yield_now().await;
        out
    }
}

/// The `tasks/get` wire form of `task`.
pub(crate) fn detailed_json(task: &Task) -> Value {
    wire::detailed(task).to_value()
}

/// Counters a tool updates so a test can see what the worker did.
#[derive(Default)]
pub(crate) struct Probe {
    /// Runs started.
    pub started: AtomicUsize,
    /// Handler futures dropped or finished (the worker stopped running the tool).
    pub stopped: AtomicUsize,
    /// Input answers the tool received.
    pub answers: Mutex<Vec<Value>>,
}

impl Probe {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
    pub(crate) fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }
    pub(crate) fn stopped(&self) -> usize {
        self.stopped.load(Ordering::SeqCst)
    }
    pub(crate) fn answers(&self) -> Vec<Value> {
        self.answers.lock().unwrap().clone()
    }
    /// Marks a start; the returned guard marks the stop when the handler future is dropped.
    pub(crate) fn enter(self: &Arc<Self>) -> StopGuard {
        self.started.fetch_add(1, Ordering::SeqCst);
        StopGuard(self.clone())
    }
}

/// Counts a stop when dropped (the tool returned or its future was dropped).
pub(crate) struct StopGuard(Arc<Probe>);

impl Drop for StopGuard {
    fn drop(&mut self) {
        self.0.stopped.fetch_add(1, Ordering::SeqCst);
    }
}

/// `echo`: answers `text_result(arguments.text)`.
pub(crate) fn echo_tool() -> Tool {
    Tool::new("echo", "Echoes its text", |ctx| async move {
        let text = ctx
            .arguments()
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        Ok(text_result(text))
    })
}

/// `spin`: loops (yielding) until its cancellation token fires, then returns `Cancelled`.
pub(crate) fn spin_tool(probe: Arc<Probe>) -> Tool {
    Tool::new("spin", "Runs until cancelled", move |ctx| {
        let probe = probe.clone();
        async move {
            let _guard = probe.enter();
            while !ctx.cancellation().is_cancelled() {
                tokio::task::yield_now().await;
            }
            Err(ToolError::Cancelled)
        }
    })
}

/// `ask`: asks for input under `confirm` and answers with the response it got.
pub(crate) fn ask_tool(probe: Arc<Probe>) -> Tool {
    Tool::new("ask", "Asks for confirmation", move |ctx| {
        let probe = probe.clone();
        async move {
            let _guard = probe.enter();
            let answer = ctx.input("confirm", elicit("Proceed?")).await?;
            probe.answers.lock().unwrap().push(answer.to_value());
            Ok(text_result(format!("answer: {}", answer.to_value())))
        }
    })
}

/// `ask_two`: asks `first` and `second` concurrently and answers with both responses.
pub(crate) fn ask_two_tool(probe: Arc<Probe>) -> Tool {
    Tool::new("ask_two", "Asks two questions at once", move |ctx| {
        let probe = probe.clone();
        async move {
            let _guard = probe.enter();
            let (first, second) = tokio::join!(
                ctx.input("first", elicit("First?")),
                ctx.input("second", elicit("Second?"))
            );
            let (first, second) = (first?.to_value(), second?.to_value());
            probe
                .answers
                .lock()
                .unwrap()
                .extend([first.clone(), second.clone()]);
            Ok(json!({
                "content": [{"type": "text", "text": format!("{first} {second}")}],
                "isError": false,
                "structuredContent": {"first": first, "second": second}
            }))
        }
    })
}

/// Waits until task `id` satisfies `done` and returns it; fails after [`WAIT_LIMIT`].
///
/// Subscribes before the first read, so no change can slip between the read and the wait.
pub(crate) async fn wait_for(
    rt: &TaskRuntime,
    scope: &Scope,
    id: &TaskId,
    what: &str,
    done: impl Fn(&Task) -> bool,
) -> Arc<Task> {
    let mut events = rt.subscribe();
    let wait = async {
        loop {
            let task = rt
                .get(scope, id)
                .await
                .unwrap_or_else(|e| panic!("waiting for {what}: get failed: {e}"));
            if done(&task) {
                return task;
            }
            loop {
                match events.recv().await {
                    Ok(event) if event.task.id() == id => break,
                    Ok(_) => {}
                    Err(RecvError::Lagged(_)) => break,
                    Err(RecvError::Closed) => panic!("event channel closed"),
                }
            }
        }
    };
    match tokio::time::timeout(WAIT_LIMIT, wait).await {
        Ok(task) => task,
        Err(_) => {
            let current = rt.get(scope, id).await.map(|t| detailed_json(&t));
            panic!("timed out waiting for {what}; task is now {current:?}")
        }
    }
}

/// Waits until task `id` is terminal.
pub(crate) async fn wait_terminal(rt: &TaskRuntime, scope: &Scope, id: &TaskId) -> Arc<Task> {
    wait_for(rt, scope, id, "a terminal status", Task::is_terminal).await
}

/// Waits until task `id` is `input_required` with exactly `keys` outstanding.
pub(crate) async fn wait_input_keys(
    rt: &TaskRuntime,
    scope: &Scope,
    id: &TaskId,
    keys: &[&str],
) -> Arc<Task> {
    wait_for(rt, scope, id, &format!("input keys {keys:?}"), |t| {
        input_keys(t) == keys
    })
    .await
}

/// The outstanding input keys of `task` (empty unless `input_required`).
pub(crate) fn input_keys(task: &Task) -> Vec<String> {
    match task.state() {
        tasks_core::TaskState::InputRequired { input_requests } => {
            input_requests.as_map().keys().cloned().collect()
        }
        _ => Vec::new(),
    }
}

/// Yields until `cond` holds; fails after [`WAIT_LIMIT`] of tokio time.
pub(crate) async fn yield_until(what: &str, cond: impl Fn() -> bool) {
    let wait = async {
        while !cond() {
            tokio::task::yield_now().await;
        }
    };
    if tokio::time::timeout(WAIT_LIMIT, wait).await.is_err() {
        panic!("timed out waiting until {what}");
    }
}

/// Every event already published for task `id` (drains the receiver).
pub(crate) fn drain_for(
    events: &mut broadcast::Receiver<StatusEvent>,
    id: &TaskId,
) -> Vec<StatusEvent> {
    let mut out = Vec::new();
    loop {
        match events.try_recv() {
            Ok(event) if event.task.id() == id => out.push(event),
            Ok(_) => {}
            Err(broadcast::error::TryRecvError::Lagged(n)) => panic!("receiver lagged by {n}"),
            Err(_) => return out,
        }
    }
}

/// Collects the events of task `id` until one with `revision` arrives (it is published just
/// after the commit that `get` already shows), then drains what else is already there.
pub(crate) async fn events_through(
    events: &mut broadcast::Receiver<StatusEvent>,
    id: &TaskId,
    revision: u64,
) -> Vec<StatusEvent> {
    let mut out = Vec::new();
    let wait = async {
        loop {
            match events.recv().await {
                Ok(event) if event.task.id() == id => {
                    let reached = event.task.revision() >= revision;
                    out.push(event);
                    if reached {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => panic!("event stream failed: {e}"),
            }
        }
    };
    if tokio::time::timeout(WAIT_LIMIT, wait).await.is_err() {
        panic!("revision {revision} of {id:?} was never published");
    }
    out.extend(drain_for(events, id));
    out
}

/// Asserts the published states of one task are well ordered: revision 1 first, strictly
/// increasing, and nothing after the first terminal state.
pub(crate) fn assert_event_order(events: &[StatusEvent]) {
    let history: Vec<(u64, tasks_core::TaskStatus)> = events
        .iter()
        .map(|e| (e.task.revision(), e.task.status()))
        .collect();
    assert_eq!(
        history.first().map(|h| h.0),
        Some(1),
        "creation first: {history:?}"
    );
    assert!(
        history.windows(2).all(|w| w[0].0 < w[1].0),
        "revisions strictly increasing: {history:?}"
    );
    if let Some(first_terminal) = history.iter().position(|h| h.1.is_terminal()) {
        assert_eq!(
            first_terminal,
            history.len() - 1,
            "nothing published after the first terminal state: {history:?}"
        );
    }
}

/// Asserts `error` is -32602 `Unknown or inaccessible taskId`.
pub(crate) fn assert_unknown(result: Result<impl std::fmt::Debug, McpError>) {
    match result {
        Err(error) => {
            assert_eq!(error, McpError::UnknownTask);
            assert_eq!(error.code(), -32602);
            assert_eq!(error.to_string(), "Unknown or inaccessible taskId");
        }
        Ok(value) => panic!("expected UnknownTask, got {value:?}"),
    }
}
