//! A small JSON-RPC client of one server node (2026-07-28, declaring the Tasks extension and
//! form elicitation), with an SSE reader for `subscriptions/listen`.

use std::pin::Pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt as _};
use serde_json::{json, Value};

/// The protocol revision the client speaks.
pub const VERSION: &str = "2026-07-28";

/// A JSON-RPC client of one node, declaring the Tasks extension and form elicitation.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    url: String,
}

impl Client {
    /// A client of the endpoint at `url` whose requests give up after 20 s.
    pub fn new(url: &str) -> Self {
        Client::with_timeout(url, Duration::from_secs(20))
    }

    /// A client whose every request gives up after `timeout` (a node that is stopped or
    /// stalled does not hold it longer).
    pub fn with_timeout(url: &str, timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .expect("a reqwest client");
        Client {
            http,
            url: url.to_owned(),
        }
    }

    fn post(&self, method: &str, mut params: Value) -> reqwest::RequestBuilder {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities":
                {"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        });
        let name = params
            .get("name")
            .or_else(|| params.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-method", method)
            .body(body.to_string());
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        request
    }

    /// The node's endpoint URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The whole JSON-RPC response body, or `None` when no answer came (the node is down).
    pub async fn try_request(&self, method: &str, params: Value) -> Option<Value> {
        let response = self.post(method, params).send().await.ok()?;
        response.json().await.ok()
    }

    /// The `result` of a JSON-RPC success.
    ///
    /// # Panics
    /// On no answer or an error answer.
    pub async fn result(&self, method: &str, params: Value) -> Value {
        let body = self
            .try_request(method, params.clone())
            .await
            .unwrap_or_else(|| panic!("{method} {params} got no answer from {}", self.url));
        match body.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} {params} failed: {body}"),
        }
    }

    /// Creates a task of `tool`; its id.
    pub async fn create(&self, tool: &str, arguments: Value) -> String {
        let result = self
            .result("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert_eq!(result["resultType"], "task", "{result}");
        result["taskId"].as_str().expect("a taskId").to_owned()
    }

    /// The `tasks/get` result for task `id` (panics on an error answer).
    pub async fn get(&self, id: &str) -> Value {
        self.result("tasks/get", json!({"taskId": id})).await
    }

    /// The `tasks/update` result answering task `id` with `responses` (an `inputResponses`
    /// object).
    pub async fn update(&self, id: &str, responses: Value) -> Value {
        self.result(
            "tasks/update",
            json!({"taskId": id, "inputResponses": responses}),
        )
        .await
    }

    /// The `tasks/cancel` result for task `id`.
    pub async fn cancel(&self, id: &str) -> Value {
        self.result("tasks/cancel", json!({"taskId": id})).await
    }

    /// Polls `tasks/get` every 50 ms until `done` holds (up to `limit`); the task then.
    ///
    /// # Panics
    /// When `limit` passes first; the panic shows the task as last read.
    pub async fn wait_until(
        &self,
        id: &str,
        limit: Duration,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let task = self.try_request("tasks/get", json!({"taskId": id})).await;
            if let Some(task) = task.as_ref().and_then(|body| body.get("result")) {
                if done(task) {
                    return task.clone();
                }
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out after {limit:?} waiting for {what}; the task is {task:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Opens a `subscriptions/listen` stream for `task_ids` and reads its acknowledgement.
    pub async fn listen(&self, task_ids: &[&str]) -> Sse {
        let response = self
            .post(
                "subscriptions/listen",
                json!({"notifications": {"taskIds": task_ids}}),
            )
            .send()
            .await
            .expect("listen answers");
        assert_eq!(response.status(), 200);
        let mut sse = Sse {
            stream: Box::pin(response.bytes_stream()),
            buffer: Vec::new(),
        };
        let ack = sse.next(Duration::from_secs(10)).await.expect("an ack");
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        sse
    }
}

type Bytes = Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

/// The JSON messages of an SSE response, one per `data:` event.
pub struct Sse {
    stream: Bytes,
    buffer: Vec<u8>,
}

impl std::fmt::Debug for Sse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sse")
            .field("buffered", &self.buffer.len())
            .finish_non_exhaustive()
    }
}

impl Sse {
    /// The next message, or `None` when `limit` passes or the stream ends first.
    pub async fn next(&mut self, limit: Duration) -> Option<Value> {
        let read = async {
            loop {
                if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                    let event: Vec<u8> = self.buffer.drain(..end + 2).collect();
                    let text = String::from_utf8_lossy(&event);
                    let data: String = text
                        .lines()
                        .filter_map(|line| line.strip_prefix("data:"))
                        .map(str::trim_start)
                        .collect();
                    if data.is_empty() {
                        continue; // a comment or keep-alive
                    }
                    return serde_json::from_str(&data).ok();
                }
                match self.stream.next().await {
                    Some(Ok(chunk)) => self.buffer.extend_from_slice(&chunk),
                    _ => return None,
                }
            }
        };
        tokio::time::timeout(limit, read).await.ok().flatten()
    }
}

/// The text of a completed task's first content block.
pub fn result_text(task: &Value) -> &str {
    task["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}
