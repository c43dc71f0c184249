//! Every wait ends (docs/durability.md, promise 9), in process, under tokio's paused clock:
//!
//! * a 2025-11-25 `tasks/result` waiting on a task reaped after its TTL ran out ends with
//!   -32602, as `tasks/get` answers, and the task's input request outstanding on it is
//!   withdrawn; one outstanding on the session's GET stream is withdrawn too. The task lives
//!   an hour, and only the clock the runtime and its store read jumps past that (tokio's timers
//!   do not move): the removal the reaping publishes is the only thing that can end those
//!   waits within [`PROMPT`];
//! * a wait on a node that hears nothing of the change it waits for (two servers sharing one
//!   memory store, with no change feed between them: every notification lost) ends by the
//!   guard re-read ([`ServerBuilder::wait_recheck`]): a 2025 `tasks/result` and a 2026
//!   `subscriptions/listen` stream.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use http::Method;
use serde_json::{json, Value};
use tasks_core::plan::StateKey;
use tasks_core::Timestamp;
use tasks_http::{DispatchConfig, Dispatcher, ServerBuilder};
use tasks_runtime::store::{MemoryStore, Store};
use tasks_runtime::{Clock, RuntimeConfig, ScopeKey, TaskRuntime, ToolRegistry};
use tasks_test_support::dispatcher::*;
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
use tasks_test_support::sessions::*;
use tasks_test_support::tools::*;

/// A guard so far away that only the event under test can end a wait.
const NEVER: Duration = Duration::from_secs(3600);

/// How long a wait the event under test ends may take (tokio's paused time).
const PROMPT: Duration = Duration::from_millis(100);

/// The TTL of a task the tests reap: an hour, so that its own expiry (a re-read a wait arms
/// with tokio's timers) is far beyond [`PROMPT`].
const LONG_TTL_MS: u64 = 3_600_000;

/// The guard interval of the tests that rely on it.
const GUARD: Duration = Duration::from_secs(2);

fn with_guard(every: Duration) -> ServerBuilder {
    builder(&Arc::new(Runs::default())).wait_recheck(every)
}

/// A hinted `tools/call` of `tool` in `session` with a `ttl` of `ttl_ms`; the task's id.
async fn create_2025(d: &Dispatcher, session: &str, tool: &str, ttl_ms: u64) -> Value {
    let reply = in_session(session, "tools/call")
        .param("name", json!(tool))
        .param("task", json!({"ttl": ttl_ms}))
        .id(json!("c"))
        .send(d)
        .await;
    legacy_result(&reply)["task"]["taskId"].clone()
}

fn tasks_result(session: &str, task_id: &Value) -> Req {
    in_session(session, "tasks/result")
        .param("taskId", task_id.clone())
        .id(json!(7))
}

/// The next message of `stream` that is not a status notification, each within [`PROMPT`].
async fn next_non_status(stream: &mut tasks_http::MessageStream) -> Value {
    loop {
        let message = promptly(stream).await;
        if message["method"] != "notifications/tasks/status" {
            return message;
        }
    }
}

/// The wall clock a test sets: the runtime and its store read it (task timestamps, TTLs,
/// reaping); tokio's timers do not follow it.
struct Manual(AtomicU64);

impl Manual {
    fn new() -> Arc<Self> {
        Arc::new(Manual(AtomicU64::new(1_793_729_045_123)))
    }

    fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for Manual {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_millis(self.0.load(Ordering::SeqCst))
    }
}

/// A server over the test tools whose runtime reads `clock`, with the guard an hour away.
fn on_clock(clock: &Arc<Manual>) -> Dispatcher {
    let mut registry = ToolRegistry::new();
    for tool in tools(&Arc::new(Runs::default())) {
        registry.register(tool);
    }
    let runtime = TaskRuntime::with_clock(
        Arc::new(MemoryStore::new()),
        registry,
        RuntimeConfig::default().with_wait_recheck(NEVER),
        clock.clone(),
    );
    let mut config = DispatchConfig::default();
    config.server_name = SERVER_NAME.into();
    config.server_version = SERVER_VERSION.into();
    Dispatcher::new(
        runtime,
        config,
        StateKey::from_bytes([7; 32]),
        ScopeKey::from_bytes([9; 32]),
        None,
    )
}

/// Moves the runtime's clock past the TTL of a [`LONG_TTL_MS`] task (tokio's timers stay
/// where they are) and reaps it.
async fn expire_and_reap(d: &Dispatcher, clock: &Manual) {
    clock.advance(LONG_TTL_MS + 1_000);
    assert_eq!(d.runtime().reap_now().await.unwrap(), 1, "the task expired");
}

/// The next message of `stream`, within [`PROMPT`].
async fn promptly(stream: &mut tasks_http::MessageStream) -> Value {
    let bytes = tokio::time::timeout(PROMPT, futures_util::StreamExt::next(stream))
        .await
        .expect("a message within PROMPT")
        .expect("the stream is open");
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_tasks_result_on_a_task_reaped_after_its_ttl_ends_with_32602_and_withdraws_its_request() {
    let clock = Manual::new();
    let d = on_clock(&clock);
    let session = open(&d).await;
    let id = create_2025(&d, &session, "park", LONG_TTL_MS).await;
    let mut waiting = tasks_result(&session, &id).send(&d).await.into_stream();
    let request = next_message(&mut waiting).await;
    assert_eq!(request["method"], "elicitation/create");

    expire_and_reap(&d, &clock).await;
    assert_eq!(
        promptly(&mut waiting).await,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": request["id"], "reason": "No longer needed"}}),
        "the input request is withdrawn"
    );
    let answer = promptly(&mut waiting).await;
    assert_eq!(
        (answer["id"].clone(), answer["error"].clone()),
        (
            json!(7),
            json!({"code": -32602, "message": "Unknown or inaccessible taskId"})
        ),
        "the wait ends as tasks/get answers: {answer}"
    );
    assert!(
        futures_util::StreamExt::next(&mut waiting).await.is_none(),
        "then the stream ends"
    );
    in_session(&session, "tasks/get")
        .param("taskId", id)
        .id(json!(8))
        .send(&d)
        .await
        .error(200, -32602, "Unknown or inaccessible taskId");
    answer_request(&d, &session, &request).await;
}

/// Answers `request` late: it is no longer outstanding.
async fn answer_request(d: &Dispatcher, session: &str, request: &Value) {
    answer(
        session,
        json!({"jsonrpc": "2.0", "id": request["id"], "result": accept(json!({"answer": "late"}))}),
    )
    .send(d)
    .await
    .anonymous_error(400, -32600, "No outstanding request has this id");
}

#[tokio::test(start_paused = true)]
async fn a_parked_task_reaped_after_its_ttl_withdraws_its_request_from_the_get_stream() {
    let clock = Manual::new();
    let d = on_clock(&clock);
    let session = open(&d).await;
    let mut stream = in_session(&session, "x")
        .http_method(Method::GET)
        .send(&d)
        .await
        .into_stream();
    let id = create_2025(&d, &session, "park", LONG_TTL_MS).await;
    // The client names the task (it polls it), so the GET stream may ask its question.
    let polled = in_session(&session, "tasks/get")
        .param("taskId", id)
        .id(json!(5))
        .send(&d)
        .await;
    assert_eq!(polled.status, 200);
    let request = next_non_status(&mut stream).await;
    assert_eq!(request["method"], "elicitation/create");

    expire_and_reap(&d, &clock).await;
    assert_eq!(
        next_non_status(&mut stream).await,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": request["id"], "reason": "No longer needed"}}),
        "the input request is withdrawn"
    );
    answer_request(&d, &session, &request).await;
}

/// Two servers on one memory store: no change feed, so neither hears of the other's commits.
fn two_nodes() -> (Dispatcher, Dispatcher) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let a = with_guard(NEVER).store(store.clone()).build();
    let b = with_guard(GUARD).store(store).build();
    (a, b)
}

#[tokio::test(start_paused = true)]
async fn a_tasks_result_that_hears_nothing_of_the_change_ends_by_the_guard_re_read() {
    let (a, b) = two_nodes();
    let on_a = open(&a).await;
    let id = create_2025(&a, &on_a, "block", 60_000).await;
    let on_b = open(&b).await;
    let mut waiting = tasks_result(&on_b, &id).send(&b).await.into_stream();
    tokio::task::yield_now().await;

    in_session(&on_a, "tasks/cancel")
        .param("taskId", id.clone())
        .id(json!(2))
        .send(&a)
        .await;
    let early = tokio::time::timeout(
        GUARD - Duration::from_millis(100),
        futures_util::StreamExt::next(&mut waiting),
    )
    .await;
    assert!(early.is_err(), "B heard nothing of A's cancel: {early:?}");
    let answer = tokio::time::timeout(
        Duration::from_millis(200),
        futures_util::StreamExt::next(&mut waiting),
    )
    .await
    .expect("the guard re-read ends the wait")
    .expect("the answer");
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(
        answer["error"],
        json!({"code": -32602, "message": "Task was cancelled: it has no result"}),
        "{answer}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_listen_stream_that_hears_nothing_of_the_change_gets_it_by_the_guard_re_read() {
    let (a, b) = two_nodes();
    let id = create(&a, Req::call("block", json!({})).tasks()).await;
    let mut stream = Req::listen(json!({"taskIds": [id]}))
        .tasks()
        .id(json!("sub"))
        .send(&b)
        .await
        .into_stream();
    let acknowledged = next_message(&mut stream).await;
    assert_eq!(
        acknowledged["params"]["notifications"]["taskIds"],
        json!([id])
    );

    Req::cancel(&id).tasks().send(&a).await.result();
    let early = tokio::time::timeout(
        GUARD - Duration::from_millis(100),
        futures_util::StreamExt::next(&mut stream),
    )
    .await;
    assert!(early.is_err(), "B heard nothing of A's cancel: {early:?}");
    let note = next_message(&mut stream).await;
    assert_eq!(note["method"], "notifications/tasks", "{note}");
    assert_eq!(note["params"]["taskId"], json!(id));
    assert_eq!(note["params"]["status"], "cancelled");
    // Sent once: the next re-read finds nothing newer.
    let quiet = tokio::time::timeout(GUARD * 3, futures_util::StreamExt::next(&mut stream)).await;
    assert!(quiet.is_err(), "nothing more: {quiet:?}");
}
