//! A 2025-11-25 client over real HTTP: `initialize` and the `Mcp-Session-Id` header, the GET
//! stream, an elicitation answered by a POSTed response while the call's SSE response is open,
//! DELETE ending the session and its stream, and a task's `notifications/progress` with its
//! creating call's `progressToken` on the GET stream. The rest of the session table is tested in
//! process: `crates/tasks-http/tests/dispatcher/sessions.rs`.

use futures_util::StreamExt as _;
use serde_json::{json, Value};
use tasks_test_support::fixture::*;
use tasks_test_support::sse::Sse;
use tasks_test_support::wait::WAIT_LIMIT;

const V2025: &str = "2025-11-25";

/// A 2025 client of one session (also used by `next_runner_http`).
pub(crate) struct Legacy {
    http: reqwest::Client,
    url: String,
    version: &'static str,
    pub(crate) session: Option<String>,
}

impl Legacy {
    fn new(server: &tasks_http::RunningServer, version: &'static str) -> Self {
        Legacy {
            http: reqwest::Client::new(),
            url: server.url(),
            version,
            session: None,
        }
    }

    /// A POST of `body`, with the session's id and version headers once it has one.
    pub(crate) fn post(&self, body: Value) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", self.version);
        }
        request
    }

    /// Opens the session's GET stream (checked to be one).
    async fn get_stream(&self) -> reqwest::Response {
        let get = self
            .with_session(reqwest::Method::GET)
            .send()
            .await
            .unwrap();
        assert_eq!(get.status(), 200);
        assert_eq!(get.headers()["content-type"], "text/event-stream");
        get
    }

    fn with_session(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        self.http
            .request(method, &self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", self.session.as_deref().unwrap())
            .header("mcp-protocol-version", self.version)
    }
}

#[tokio::test]
async fn a_2025_client_runs_a_session_with_an_elicitation_over_http() {
    let server = start(settings()).await;
    let client = open_session(&server, json!({"elicitation": {}})).await;

    let mut get_stream = client.get_stream().await.bytes_stream();

    let call = client
        .post(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "confirm_delete", "arguments": {"filename": "a.txt"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(call.headers()["content-type"], "text/event-stream");
    let mut events = Sse::of(call);
    let request = events.next().await;
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Delete a.txt?");
    let answered = client
        .post(json!({"jsonrpc": "2.0", "id": request["id"],
                     "result": {"action": "accept", "content": {"confirm": true}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 202);
    let done = events.next().await;
    assert_eq!(done["id"], 1);
    assert_eq!(
        done["result"],
        json!({"content": [{"type": "text", "text": "Delete confirmed: true"}], "isError": false})
    );

    let deleted = client
        .with_session(reqwest::Method::DELETE)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    // The GET stream ends with the session.
    let end = tokio::time::timeout(WAIT_LIMIT, async {
        while let Some(chunk) = get_stream.next().await {
            if chunk.is_err() {
                break;
            }
        }
    })
    .await;
    assert!(end.is_ok(), "the GET stream closed");
    let gone = client
        .post(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    let again = client
        .with_session(reqwest::Method::GET)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 405, "no live session: the 2026 answer");
    assert_eq!(again.headers()["allow"], "POST");
}

/// Opens a 2025-11-25 session on `server` declaring `capabilities`: `initialize` (its
/// `Mcp-Session-Id` kept), then `notifications/initialized`.
async fn open_session(server: &tasks_http::RunningServer, capabilities: Value) -> Legacy {
    open_session_at(server, V2025, capabilities).await.0
}

/// [`open_session`] of `version`; also returns the `initialize` result.
pub(crate) async fn open_session_at(
    server: &tasks_http::RunningServer,
    version: &'static str,
    capabilities: Value,
) -> (Legacy, Value) {
    let mut client = Legacy::new(server, version);
    let init = client
        .post(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": capabilities,
            "clientInfo": {"name": "e2e", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(init.status(), 200);
    client.session = Some(
        init.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned(),
    );
    let body: Value = init.json().await.unwrap();
    assert_eq!(body["result"]["protocolVersion"], version);
    assert_eq!(body["result"]["serverInfo"]["name"], "tasks-fixture");
    let initialized = client
        .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await
        .unwrap();
    assert_eq!(initialized.status(), 202);
    (client, body["result"].clone())
}

#[tokio::test]
async fn a_2025_task_sends_notifications_progress_with_the_calls_token_over_http() {
    let server = start(settings()).await;
    let client = open_session(&server, json!({})).await;
    let mut get_stream = Sse::of(client.get_stream().await);
    // MCP 2025-11-25 tasks, "Task Progress Notifications": the call's token stays valid for
    // the whole task.
    let created = client
        .post(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "slow_compute", "arguments": {"seconds": 1.5, "label": "watched"},
            "task": {}, "_meta": {"progressToken": "watch-1"}}}),
        )
        .send()
        .await
        .unwrap();
    let created: Value = created.json().await.unwrap();
    let task_id = created["result"]["task"]["taskId"].clone();
    assert!(task_id.is_string(), "{created}");
    let mut progress = Vec::new();
    loop {
        let message = get_stream.next().await;
        match message["method"].as_str() {
            Some("notifications/progress") => {
                let params = &message["params"];
                assert_eq!(params["progressToken"], "watch-1", "{message}");
                assert_eq!(
                    params["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id,
                    "{message}"
                );
                assert_eq!(params["total"], 1.5, "{message}");
                progress.push(params["progress"].as_f64().unwrap());
            }
            Some("notifications/tasks/status") if message["params"]["status"] == "completed" => {
                break
            }
            Some("notifications/tasks/status") => {}
            other => panic!("unexpected {other:?}: {message}"),
        }
    }
    assert!(
        progress.windows(2).all(|w| w[0] < w[1]),
        "each value above the last: {progress:?}"
    );
    assert!(
        progress.len() >= 3 && progress.last() == Some(&1.5),
        "the task's progress, to its end: {progress:?}"
    );
}
