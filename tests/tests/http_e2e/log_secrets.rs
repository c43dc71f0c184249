//! Nothing secret reaches the logs, even at TRACE level: arguments, answers,
//! results, bearer tokens, principals and MRTR `requestState` are never recorded, while the
//! request and task events themselves are.

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tasks_test_support::client::*;
use tasks_test_support::fixture::*;
use tasks_test_support::protocol::*;

/// The W3C specification's example trace context.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// Every log line written, for the whole test process (also used by `next_runner_http`).
#[derive(Clone, Default)]
pub(crate) struct Captured(pub(crate) Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_secret_is_logged_at_trace_level() {
    let captured = Captured::default();
    let writer = captured.clone();
    // Global, so that the server's tasks on every runtime thread are captured (nextest runs
    // each test in a process of its own).
    tracing_subscriber::fmt()
        .with_env_filter("trace")
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();

    let server = start_scoped(settings()).await;
    let token = "SECRET-BEARER-TOKEN-1";
    let client = Client::of(&server);
    let authed = |method: &str, params: serde_json::Value, caps: serde_json::Value| {
        client
            .post(client.next_id(), method, params, caps)
            .bearer_auth(token)
    };

    // A synchronous call with a secret argument.
    let greeting = Client::send(authed(
        "tools/call",
        json!({"name": "greet", "arguments": {"name": "SECRET-ARGUMENT-2"}}),
        json!({}),
    ))
    .await
    .result();
    assert!(greeting["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("SECRET-ARGUMENT-2"));
    // A task with a secret argument and a W3C trace context, answered with a secret answer.
    let traced = json!({"jsonrpc": "2.0", "id": "traced", "method": "tools/call", "params": {
        "name": "confirm_delete",
        "arguments": {"filename": "SECRET-FILENAME-3"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": tasks_caps(),
            "traceparent": TRACEPARENT,
        },
    }});
    let created = Client::send(
        client
            .http()
            .post(client.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-method", "tools/call")
            .header("mcp-name", "confirm_delete")
            .bearer_auth(token)
            .body(traced.to_string()),
    )
    .await
    .result();
    let task_id = created["taskId"].as_str().unwrap().to_owned();
    client
        .poll_task(&task_id, Some(token), |status| status == "input_required")
        .await;
    Client::send(authed(
        "tasks/update",
        json!({"taskId": task_id, "inputResponses": {"confirm-delete": {
            "action": "accept", "content": {"confirm": true, "note": "SECRET-ANSWER-4"}}}}),
        tasks_caps(),
    ))
    .await
    .result();
    let finished = client
        .poll_task(&task_id, Some(token), |status| {
            !matches!(status, "input_required" | "working")
        })
        .await;
    assert_eq!(finished["status"], "completed", "{finished}");
    // An MRTR round: its signed requestState.
    let round = Client::send(authed(
        "tools/call",
        json!({"name": "confirm_delete", "arguments": {"filename": "SECRET-FILENAME-5"}}),
        json!({"elicitation": {}}),
    ))
    .await
    .result();
    let state = round["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned();
    server.shutdown().await;

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    // The capture works: requests and the task's life are there.
    for expected in [
        "mcp request answered",
        "method=\"tools/call\"",
        "task created",
        "task status committed",
        task_id.as_str(),
    ] {
        assert!(
            logs.contains(expected),
            "no {expected:?} in the logs:\n{logs}"
        );
    }
    // The task's events carry the trace id of the request that created it.
    let trace_id = &TRACEPARENT[3..35];
    assert!(
        logs.lines()
            .any(|l| l.contains("task status committed") && l.contains(trace_id)),
        "no task event with trace id {trace_id}:\n{logs}"
    );
    for secret in [
        token,
        "SECRET-ARGUMENT-2",
        "SECRET-FILENAME-3",
        "SECRET-ANSWER-4",
        "SECRET-FILENAME-5",
        state.as_str(),
        "Hello",
    ] {
        assert!(!logs.contains(secret), "{secret:?} was logged:\n{logs}");
    }
}

/// A server bound with `ServerBuilder::bind` says once, at INFO, where it serves and on what
/// store (a library server was silent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_server_logs_its_url_and_store_at_info() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_env_filter("info")
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();
    let server = start(settings()).await;
    let node = server.dispatcher().runtime().node();
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("serving MCP")).collect();
    assert_eq!(lines.len(), 1, "{text}");
    for field in [
        format!("url={}", server.url()),
        "store=\"memory\"".to_owned(),
        format!("node={node}"),
        " INFO ".to_owned(),
    ] {
        assert!(lines[0].contains(&field), "{field} in {}", lines[0]);
    }
    server.shutdown().await;
}
