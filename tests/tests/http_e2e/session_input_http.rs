//! 2025-11-25 tasks that ask for input in their first step, called many times over real HTTP
//! the way the official Tasks client library does (a task hint, then `tasks/get` until the task
//! ends, its questions answered from the session's GET stream), with a `tasks/result` racing
//! the GET stream on every other call, on the in-memory store and on SQLite.
//!
//! Two promises are checked on every call:
//! * the session knows its task before the task can speak: each question reaches the client
//!   and the task settles within [`SETTLE`] (a question published before the session had
//!   recorded the task was dropped by the GET stream, and the client waited until the TTL);
//! * a question never comes before the task: the GET stream asks only about tasks the client
//!   has named in a request, so it has read their `CreateTaskResult` (the Tasks client
//!   library cannot match a question about a task it does not know, and answers it with an
//!   error);
//! * a question is asked once: across both streams, each task's question arrives exactly
//!   once (a delivery acting on a stale snapshot asked an answered question again).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{json, Value};
use tasks_fixture::store::StoreSpec;
use tasks_test_support::fixture::*;
use tasks_test_support::sse::Sse;

const V2025: &str = "2025-11-25";
/// How long one call may take to settle, its question answered.
const SETTLE: Duration = Duration::from_secs(3);
/// Calls per store.
const CALLS: usize = 400;
/// Calls in flight at once.
const IN_FLIGHT: usize = 16;

/// What the client saw.
#[derive(Default)]
struct Seen {
    /// How often each task's question reached the client, by task id.
    asked: HashMap<String, usize>,
    /// The tasks whose `CreateTaskResult` the client has read.
    created: HashSet<String>,
    /// Questions about a task the client did not know yet (it cannot match them).
    early: Vec<String>,
}

type Asked = Arc<Mutex<Seen>>;

#[derive(Clone)]
struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
}

impl Session {
    async fn open(url: String) -> Self {
        let http = reqwest::Client::new();
        let init = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": V2025,
                    "capabilities": {"elicitation": {"form": {}}, "sampling": {}},
                    "clientInfo": {"name": "input-race", "version": "1"}}})
                .to_string(),
            )
            .send()
            .await
            .expect("initialize");
        assert_eq!(init.status(), 200);
        let id = init.headers()["mcp-session-id"]
            .to_str()
            .expect("a session id")
            .to_owned();
        let session = Session { http, url, id };
        let initialized = session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(initialized.status(), 202);
        session
    }

    async fn post(&self, body: Value) -> reqwest::Response {
        self.http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", V2025)
            .body(body.to_string())
            .send()
            .await
            .expect("a POST in the session")
    }

    async fn result_of(&self, body: Value) -> Value {
        let reply: Value = self.post(body).await.json().await.expect("a JSON reply");
        reply["result"].clone()
    }

    /// Answers the server's request `request` (elicitation or sampling) and counts it.
    async fn answer(&self, request: &Value, asked: &Asked) {
        let task = request["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
            .as_str()
            .expect("a question names its task")
            .to_owned();
        {
            let mut seen = asked.lock().unwrap();
            if !seen.created.contains(&task) {
                seen.early.push(task.clone());
            }
            *seen.asked.entry(task).or_default() += 1;
        }
        let result = match request["method"].as_str() {
            Some("elicitation/create") => json!({"action": "accept", "content": {"confirm": true}}),
            Some("sampling/createMessage") => json!({"role": "assistant", "model": "test",
                "content": {"type": "text", "text": "a haiku"}}),
            other => panic!("unexpected server request {other:?}"),
        };
        let answered = self
            .post(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
            .await;
        assert_eq!(answered.status(), 202, "{request}");
    }
}

/// Answers every request the session's GET stream carries until the stream ends.
fn answer_get_stream(session: Session, get: reqwest::Response, asked: Asked) {
    tokio::spawn(async move {
        let mut stream = Sse::of(get);
        while let Some(message) = stream.next_or_end().await {
            if message.get("method").is_some() && message.get("id").is_some() {
                session.answer(&message, &asked).await;
            }
        }
    });
}

/// One call as the Tasks client library makes it: the task hint, then `tasks/get` until the
/// task ends; with `race`, a `tasks/result` whose stream also delivers the question runs
/// beside it. The final `tasks/get` status.
async fn call(session: &Session, n: usize, race: bool, asked: &Asked) -> Value {
    let (tool, arguments) = if n.is_multiple_of(2) {
        ("confirm_delete", json!({"filename": format!("f{n}.txt")}))
    } else {
        ("write_haiku", json!({"topic": format!("t{n}")}))
    };
    let created = session
        .result_of(
            json!({"jsonrpc": "2.0", "id": format!("c{n}"), "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "task": {"ttl": 60_000}}}),
        )
        .await;
    let task = created["task"]["taskId"].clone();
    let task_id = task.as_str().expect("a task id").to_owned();
    asked.lock().unwrap().created.insert(task_id);
    if race {
        let session = session.clone();
        let asked = asked.clone();
        let task = task.clone();
        tokio::spawn(async move {
            let response = session
                .post(json!({"jsonrpc": "2.0", "id": format!("r{n}"),
                    "method": "tasks/result", "params": {"taskId": task}}))
                .await;
            let mut stream = Sse::of(response);
            while let Some(message) = stream.next_or_end().await {
                if message.get("method").is_some() && message.get("id").is_some() {
                    session.answer(&message, &asked).await;
                } else {
                    return;
                }
            }
        });
    }
    loop {
        let got = session
            .result_of(
                json!({"jsonrpc": "2.0", "id": format!("g{n}"), "method": "tasks/get",
                "params": {"taskId": task}}),
            )
            .await;
        if got["status"] != "working" && got["status"] != "input_required" {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn many_calls(store: StoreSpec) {
    let server = start_with(store).await;
    let session = Session::open(server.url()).await;
    let asked: Asked = Arc::default();
    let get = session
        .http
        .get(&session.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session.id)
        .header("mcp-protocol-version", V2025)
        .send()
        .await
        .expect("the GET stream");
    assert_eq!(get.status(), 200);
    answer_get_stream(session.clone(), get, asked.clone());

    let outcomes: Vec<(usize, Result<Value, tokio::time::error::Elapsed>)> =
        futures_util::stream::iter(0..CALLS)
            .map(|n| {
                let session = session.clone();
                let asked = asked.clone();
                async move {
                    let settled =
                        tokio::time::timeout(SETTLE, call(&session, n, n % 2 == 1, &asked)).await;
                    (n, settled)
                }
            })
            .buffer_unordered(IN_FLIGHT)
            .collect()
            .await;
    let unsettled: Vec<usize> = outcomes
        .iter()
        .filter(|(_, settled)| settled.is_err())
        .map(|(n, _)| *n)
        .collect();
    assert!(
        unsettled.is_empty(),
        "{} of {CALLS} calls did not settle within {SETTLE:?}: {unsettled:?}",
        unsettled.len()
    );
    for (n, settled) in &outcomes {
        let got = settled.as_ref().expect("settled");
        assert_eq!(got["status"], "completed", "call {n}: {got}");
    }
    let seen = std::mem::take(&mut *asked.lock().unwrap());
    assert!(
        seen.early.is_empty(),
        "questions before their CreateTaskResult: {:?}",
        seen.early
    );
    let asked = seen.asked;
    assert_eq!(asked.len(), CALLS, "every task asked its question");
    let twice: Vec<_> = asked.iter().filter(|(_, count)| **count != 1).collect();
    assert!(
        twice.is_empty(),
        "questions asked more than once: {twice:?}"
    );
    server.shutdown().await;
}

async fn start_with(store: StoreSpec) -> tasks_http::RunningServer {
    let settings = tasks_fixture::Settings {
        store,
        ..settings()
    };
    tasks_fixture::open_server(&settings)
        .await
        .expect("the fixture's store opens")
        .bind(settings.listen)
        .await
        .expect("the fixture binds a loopback port")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_asking_at_once_settle_and_ask_once_on_memory() {
    many_calls(StoreSpec::Memory).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_asking_at_once_settle_and_ask_once_on_sqlite() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    many_calls(StoreSpec::Sqlite(dir.path().join("tasks.db"))).await;
}
