//! `mcp_store_unavailable_refusals_total{outcome}` counts the requests whose answer is -32603
//! `Task store unavailable: …`, each once, on every path that answers one (a 2026-07-28
//! request, a 2025 session request such as `tasks/result`, the end of a 2025 `tasks/result`
//! stream), and nothing else: a read a stream makes for itself that the store refuses answers
//! no client, and is not counted. In process, under tokio's paused clock, over a memory store
//! that refuses on command.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use serde_json::{json, Value};
use tasks_core::{NewTask, TaskId, TaskStatus, TaskUpdate, Timestamp};
use tasks_http::Dispatcher;
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{
    Authority, CasOutcome, Claimed, Created, Lease, Liveness, MemoryStore, NodeId, Snapshot, Store,
    StoreError,
};
use tasks_runtime::{Scope, Work};
use tasks_test_support::dispatcher::*;
use tasks_test_support::events::wait_status;
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
use tasks_test_support::sessions::*;
use tasks_test_support::tools::*;

/// How the [`Flaky`] store answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Like the memory store.
    Answer,
    /// Every call fails at once with [`StoreError::Unavailable`] (no connection to be had).
    Refuse,
    /// A creation or transition is committed, then its answer is lost
    /// ([`StoreError::Interrupted`]); other calls answer.
    LoseWrites,
}

/// A [`MemoryStore`] that refuses on command, and counts the calls it refused.
struct Flaky {
    inner: MemoryStore,
    mode: Mutex<Mode>,
    refused: AtomicUsize,
}

impl Flaky {
    fn new() -> Arc<Self> {
        Arc::new(Flaky {
            inner: MemoryStore::new(),
            mode: Mutex::new(Mode::Answer),
            refused: AtomicUsize::new(0),
        })
    }

    fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    fn mode(&self) -> Mode {
        *self.mode.lock().unwrap()
    }

    /// How many calls were refused.
    fn refused(&self) -> usize {
        self.refused.load(Ordering::SeqCst)
    }

    fn gate(&self) -> Result<(), StoreError> {
        if self.mode() == Mode::Refuse {
            self.refused.fetch_add(1, Ordering::SeqCst);
            return Err(StoreError::Unavailable("connection refused".into()));
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Store for Flaky {
    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError> {
        if self.mode() == Mode::LoseWrites {
            self.inner.create(task, work, limits, owner).await?;
            return Err(StoreError::Interrupted("the answer was lost".into()));
        }
        self.gate()?;
        self.inner.create(task, work, limits, owner).await
    }
    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError> {
        self.gate()?;
        self.inner.get(scope, id, now).await
    }
    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        self.gate()?;
        self.inner.work(scope, id).await
    }
    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        if self.mode() == Mode::LoseWrites {
            self.inner.transition(who, update, now).await?;
            return Err(StoreError::Interrupted("the answer was lost".into()));
        }
        self.gate()?;
        self.inner.transition(who, update, now).await
    }
    async fn load(&self, ids: &[TaskId], now: Timestamp) -> Result<Vec<Snapshot>, StoreError> {
        self.gate()?;
        self.inner.load(ids, now).await
    }
    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
        self.gate()?;
        self.inner.reap(now).await
    }
    async fn task_count(&self) -> Result<usize, StoreError> {
        self.gate()?;
        self.inner.task_count().await
    }
    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        self.gate()?;
        self.inner.register_node(node, now, lease_ms).await
    }
    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError> {
        self.gate()?;
        self.inner.heartbeat(node, now, lease_ms).await
    }
    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError> {
        self.gate()?;
        self.inner.retire_node(node).await
    }
    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        self.gate()?;
        self.inner.claim_orphans(node, now, max).await
    }
    async fn charge_attempt(
        &self,
        id: &TaskId,
        lease: &Lease,
        now: Timestamp,
    ) -> Result<Option<Lease>, StoreError> {
        self.gate()?;
        self.inner.charge_attempt(id, lease, now).await
    }
}

/// A server over the test tools and `store`.
fn server(store: &Arc<Flaky>) -> Dispatcher {
    builder(&Arc::new(Runs::default()))
        .store(store.clone())
        .build()
}

/// The value of the sample `series` (name and labels, as encoded) of `d`'s metrics.
async fn metric(d: &Dispatcher, series: &str) -> u64 {
    let text = d.encode_metrics().await;
    let prefix = format!("{series} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no sample {series} in:\n{text}"))
        .parse()
        .expect("a count")
}

/// `mcp_store_unavailable_refusals_total` of `outcome` (`unchanged` or `unknown`).
async fn refusals(d: &Dispatcher, outcome: &str) -> u64 {
    metric(
        d,
        &format!("mcp_store_unavailable_refusals_total{{outcome=\"{outcome}\"}}"),
    )
    .await
}

/// `mcp_requests_total` of `method` and `code`.
async fn requests(d: &Dispatcher, method: &str, code: &str) -> u64 {
    metric(
        d,
        &format!("mcp_requests_total{{method=\"{method}\",code=\"{code}\"}}"),
    )
    .await
}

const UNCHANGED: &str = "Task store unavailable: nothing was stored or changed";
const UNKNOWN: &str = "Task store unavailable: whether the request took effect is unknown";

/// A hinted `tools/call` of `tool` in `session`: the task's id.
async fn create_2025(d: &Dispatcher, session: &str, tool: &str) -> Value {
    let reply = in_session(session, "tools/call")
        .param("name", json!(tool))
        .param("task", json!({}))
        .id(json!("c"))
        .send(d)
        .await;
    legacy_result(&reply)["task"]["taskId"].clone()
}

fn task_method(session: &str, method: &str, task_id: &Value) -> Req {
    in_session(session, method)
        .param("taskId", task_id.clone())
        .id(json!(7))
}

/// The session's GET stream asks a task's question once the client names it; the read it
/// makes first is refused by the store. No client is answered with that refusal (the stream
/// simply asks nothing), so nothing is counted.
#[tokio::test(start_paused = true)]
async fn a_read_a_stream_makes_for_itself_that_the_store_refuses_is_not_counted() {
    let store = Flaky::new();
    let d = server(&store);
    let session = open(&d).await;
    let mut stream = in_session(&session, "x")
        .http_method(Method::GET)
        .send(&d)
        .await
        .into_stream();
    let mut events = d.runtime().subscribe();
    let id = create_2025(&d, &session, "park").await;
    wait_status(&mut events, id.as_str().unwrap(), TaskStatus::InputRequired).await;
    // The client names the task: the GET stream is asked to deliver its question.
    let polled = task_method(&session, "tasks/get", &id).send(&d).await;
    assert_eq!(legacy_result(&polled)["status"], "input_required");

    store.set(Mode::Refuse);
    let mut sent = Vec::new();
    while let Ok(Some(bytes)) = tokio::time::timeout(
        Duration::from_secs(1),
        futures_util::StreamExt::next(&mut stream),
    )
    .await
    {
        sent.push(serde_json::from_slice::<Value>(&bytes).unwrap());
    }
    let methods: Vec<&Value> = sent.iter().map(|message| &message["method"]).collect();
    assert_eq!(
        methods,
        ["notifications/tasks/status", "notifications/tasks/status"],
        "the states are announced, and the question is not asked: {sent:?}"
    );
    assert!(
        store.refused() > 0,
        "the stream's delivery read the task, and the store refused"
    );
    assert_eq!(refusals(&d, "unchanged").await, 0);
    assert_eq!(refusals(&d, "unknown").await, 0);
    assert_eq!(requests(&d, "session/tasks/get", "ok").await, 1);
}

/// A 2025 `tasks/result` whose first read the store refuses is answered with the refusal
/// (in an HTTP 200, as a session answers errors) and counted once, under its own code too.
#[tokio::test(start_paused = true)]
async fn a_2025_tasks_result_the_store_refuses_is_counted_once() {
    let store = Flaky::new();
    let d = server(&store);
    let session = open(&d).await;
    let id = create_2025(&d, &session, "block").await;

    store.set(Mode::Refuse);
    let error = task_method(&session, "tasks/result", &id)
        .send(&d)
        .await
        .error(200, -32603, UNCHANGED);
    assert_eq!(error["data"], json!({"retryable": true}));
    assert_eq!(refusals(&d, "unchanged").await, 1);
    assert_eq!(refusals(&d, "unknown").await, 0);
    assert_eq!(requests(&d, "session/tasks/result", "-32603").await, 1);
    assert_eq!(requests(&d, "session/tasks/result", "ok").await, 0);
}

/// Each 2025 session request answered with a refusal counts once, whatever the runtime read
/// or wrote on the way (a `tasks/cancel` reads, cancels, then reads again).
#[tokio::test(start_paused = true)]
async fn every_2025_refusal_is_counted_once_under_its_outcome() {
    let store = Flaky::new();
    let d = server(&store);
    let session = open(&d).await;
    let id = create_2025(&d, &session, "block").await;

    store.set(Mode::Refuse);
    task_method(&session, "tasks/get", &id)
        .send(&d)
        .await
        .error(200, -32603, UNCHANGED);
    task_method(&session, "tasks/cancel", &id)
        .send(&d)
        .await
        .error(200, -32603, UNCHANGED);
    let creation = in_session(&session, "tools/call")
        .param("name", json!("block"))
        .param("task", json!({}))
        .id(json!("c2"))
        .send(&d)
        .await;
    creation.error(200, -32603, UNCHANGED);
    store.set(Mode::LoseWrites);
    task_method(&session, "tasks/cancel", &id)
        .send(&d)
        .await
        .error(200, -32603, UNKNOWN);

    assert_eq!(refusals(&d, "unchanged").await, 3);
    assert_eq!(refusals(&d, "unknown").await, 1);
    assert_eq!(requests(&d, "session/tasks/get", "-32603").await, 1);
    assert_eq!(requests(&d, "session/tasks/cancel", "-32603").await, 2);
    assert_eq!(requests(&d, "session/tools/call", "-32603").await, 1);
}

/// 2026-07-28 requests answered with a refusal (HTTP 503) count once each: a read, the
/// setup of a listen stream, a cancel whose read is refused, a creation whose answer was lost.
#[tokio::test(start_paused = true)]
async fn every_2026_refusal_is_counted_once_under_its_outcome() {
    let store = Flaky::new();
    let d = server(&store);
    let id = create(&d, Req::call("block", json!({})).tasks()).await;

    store.set(Mode::Refuse);
    Req::get(&id)
        .tasks()
        .send(&d)
        .await
        .error(503, -32603, UNCHANGED);
    Req::cancel(&id)
        .tasks()
        .send(&d)
        .await
        .error(503, -32603, UNCHANGED);
    Req::listen(json!({"taskIds": [id]}))
        .tasks()
        .send(&d)
        .await
        .error(503, -32603, UNCHANGED);
    store.set(Mode::LoseWrites);
    let error = Req::call("block", json!({}))
        .tasks()
        .send(&d)
        .await
        .error(503, -32603, UNKNOWN);
    assert_eq!(
        error["data"],
        json!({"retryable": true, "outcome": "unknown"})
    );

    assert_eq!(refusals(&d, "unchanged").await, 3);
    assert_eq!(refusals(&d, "unknown").await, 1);
    let answered_32603 = requests(&d, "tasks/get", "-32603").await
        + requests(&d, "tasks/cancel", "-32603").await
        + requests(&d, "subscriptions/listen", "-32603").await
        + requests(&d, "tools/call", "-32603").await;
    assert_eq!(answered_32603, 4);
}

/// A 2025 `tasks/result` stream that ends with a refusal (the store refused the read made to
/// take the client's answer) counts it once. The request itself was counted when its stream
/// started (`code="ok"`): `mcp_requests_total` does not see how a stream ends.
#[tokio::test(start_paused = true)]
async fn a_2025_tasks_result_stream_that_ends_with_a_refusal_is_counted_once() {
    let store = Flaky::new();
    let d = server(&store);
    let session = open(&d).await;
    let mut events = d.runtime().subscribe();
    let id = create_2025(&d, &session, "park").await;
    wait_status(&mut events, id.as_str().unwrap(), TaskStatus::InputRequired).await;
    let mut waiting = task_method(&session, "tasks/result", &id)
        .send(&d)
        .await
        .into_stream();
    let request = next_message(&mut waiting).await;
    assert_eq!(request["method"], "elicitation/create");

    store.set(Mode::Refuse);
    let reply = answer(
        &session,
        json!({"jsonrpc": "2.0", "id": request["id"], "result": accept(json!({"answer": "yes"}))}),
    )
    .send(&d)
    .await;
    assert_eq!(reply.status, 202);
    let end = next_message(&mut waiting).await;
    assert_eq!(
        (end["id"].clone(), end["error"].clone()),
        (
            json!(7),
            json!({"code": -32603, "message": UNCHANGED, "data": {"retryable": true}})
        ),
        "{end}"
    );
    assert_eq!(refusals(&d, "unchanged").await, 1);
    assert_eq!(refusals(&d, "unknown").await, 0);
    assert_eq!(requests(&d, "session/tasks/result", "ok").await, 1);
}
