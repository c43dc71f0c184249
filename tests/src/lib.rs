//! Helpers for the end-to-end tests in `tests/tests/`: start the fixture on an ephemeral
//! loopback port, speak MCP 2026-07-28 over plain HTTP with reqwest, read SSE streams, and
//! await task status changes on the server's runtime events.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt as _};
use serde_json::{json, Map, Value};
use tasks_core::{Task, TaskStatus};
use tasks_fixture::Settings;
use tasks_http::RunningServer;
use tasks_runtime::StatusEvent;
use tokio::sync::broadcast::{self, error::RecvError};

/// The protocol revision.
pub const VERSION: &str = "2026-07-28";
/// The Tasks extension id.
pub const TASKS: &str = "io.modelcontextprotocol/tasks";
/// The result `_meta` key of the server identity.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The notification `_meta` key naming the listen request.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// How long any wait in an end-to-end test may take before the test fails.
pub const WAIT_LIMIT: Duration = Duration::from_secs(15);

/// Fixture settings listening on an ephemeral loopback port, shutting down without waiting
/// for running tasks (tests stop servers with long tasks still running).
pub fn settings() -> Settings {
    Settings {
        listen: "127.0.0.1:0".parse().expect("a socket address"),
        drain_ms: 0,
        ..Default::default()
    }
}

/// Starts the fixture with `settings`.
///
/// # Panics
/// When the address cannot be bound.
pub async fn start(settings: Settings) -> RunningServer {
    tasks_fixture::server(&settings)
        .bind(settings.listen)
        .await
        .expect("the fixture binds a loopback port")
}

/// Client capabilities declaring elicitation and the Tasks extension.
pub fn tasks_caps() -> Value {
    json!({"elicitation": {}, "extensions": {TASKS: {}}})
}

/// An HTTP response: status, headers and the body parsed as JSON (`Null` when empty).
#[derive(Debug)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The response headers.
    pub headers: reqwest::header::HeaderMap,
    /// The body as JSON (`Value::Null` for an empty body).
    pub body: Value,
}

impl Reply {
    /// The `Content-Type` header, if any.
    pub fn content_type(&self) -> Option<&str> {
        self.headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
    }

    /// The result of a 200 response.
    ///
    /// # Panics
    /// When the response is not a JSON-RPC result.
    pub fn result(&self) -> Value {
        assert_eq!(self.status, 200, "{}", self.body);
        assert!(self.body.get("error").is_none(), "{}", self.body);
        self.body["result"].clone()
    }

    /// Asserts a JSON-RPC error with `status`, `code` and `message`, sent as
    /// `application/json`; returns the error object.
    ///
    /// # Panics
    /// When the response differs.
    pub fn error(&self, status: u16, code: i64, message: &str) -> Value {
        assert_eq!(self.content_type(), Some("application/json"));
        assert_eq!(self.body["jsonrpc"], "2.0", "{}", self.body);
        assert_eq!(
            (
                self.status,
                self.body["error"]["code"].as_i64(),
                self.body["error"]["message"].as_str()
            ),
            (status, Some(code), Some(message)),
            "{}",
            self.body
        );
        self.body["error"].clone()
    }
}

/// A stateless MCP client over plain HTTP.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    url: String,
    next_id: Arc<AtomicI64>,
}

impl Client {
    /// A client of the server at `url` (the MCP endpoint).
    pub fn new(url: impl Into<String>) -> Self {
        Client {
            http: reqwest::Client::new(),
            url: url.into(),
            next_id: Arc::new(AtomicI64::new(1)),
        }
    }

    /// A client of `server`.
    pub fn of(server: &RunningServer) -> Self {
        Client::new(server.url())
    }

    /// The endpoint URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The underlying reqwest client.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// A fresh integer request id.
    pub fn next_id(&self) -> Value {
        json!(self.next_id.fetch_add(1, Ordering::SeqCst))
    }

    /// A correct POST of request `method` with `params` (the `_meta` is added from `caps`) and
    /// `id`: `MCP-Protocol-Version`, `Mcp-Method` and, where the method needs it, `Mcp-Name`.
    pub fn post(
        &self,
        id: Value,
        method: &str,
        params: Value,
        caps: Value,
    ) -> reqwest::RequestBuilder {
        let mut params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        params.insert(
            "_meta".into(),
            json!({
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": caps,
            }),
        );
        let name_field = tasks_core::Method::parse(method).and_then(tasks_core::Method::name_field);
        let name = name_field
            .and_then(|field| params.get(field))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-method", method)
            .body(serde_json::to_vec(&body).expect("JSON"));
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        request
    }

    /// Sends `request` and reads the whole response.
    ///
    /// # Panics
    /// On a transport failure or a body that is neither empty nor JSON.
    pub async fn send(request: reqwest::RequestBuilder) -> Reply {
        Client::send_replacing(request, &[]).await
    }

    /// Sends `request` with `headers` replacing any value it already has (reqwest's
    /// `RequestBuilder::header` appends), and reads the whole response.
    ///
    /// # Panics
    /// On a transport failure or a body that is neither empty nor JSON.
    pub async fn send_replacing(
        request: reqwest::RequestBuilder,
        headers: &[(&str, &str)],
    ) -> Reply {
        let (client, request) = request.build_split();
        let mut request = request.expect("a valid request");
        for (name, value) in headers {
            request.headers_mut().insert(
                reqwest::header::HeaderName::from_bytes(name.as_bytes()).expect("a header name"),
                reqwest::header::HeaderValue::from_str(value).expect("a header value"),
            );
        }
        let response = client.execute(request).await.expect("the server answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.expect("a complete body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("a JSON body")
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    /// Sends request `method` and checks the id is echoed.
    pub async fn request(&self, method: &str, params: Value, caps: Value) -> Reply {
        let id = self.next_id();
        let reply = Client::send(self.post(id.clone(), method, params, caps)).await;
        assert_eq!(reply.body["id"], id, "the id is echoed: {}", reply.body);
        reply
    }

    /// `tools/call` of `tool` with `arguments`, declaring Tasks and elicitation.
    pub async fn call_tool(&self, tool: &str, arguments: Value) -> Reply {
        self.request(
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
            tasks_caps(),
        )
        .await
    }

    /// Creates a task with `tool`; returns the `CreateTaskResult`.
    pub async fn create_task(&self, tool: &str, arguments: Value) -> Value {
        let result = self.call_tool(tool, arguments).await.result();
        assert_eq!(result["resultType"], "task", "{result}");
        result
    }

    /// `tasks/get`, declaring Tasks; returns the result.
    pub async fn get_task(&self, task_id: &str) -> Value {
        self.request("tasks/get", json!({"taskId": task_id}), tasks_caps())
            .await
            .result()
    }

    /// `tasks/update`, declaring Tasks; returns the result.
    pub async fn update_task(&self, task_id: &str, responses: Value) -> Value {
        self.request(
            "tasks/update",
            json!({"taskId": task_id, "inputResponses": responses}),
            tasks_caps(),
        )
        .await
        .result()
    }

    /// `tasks/cancel`, declaring Tasks; returns the result.
    pub async fn cancel_task(&self, task_id: &str) -> Value {
        self.request("tasks/cancel", json!({"taskId": task_id}), tasks_caps())
            .await
            .result()
    }

    /// Polls `tasks/get` as a client would (every `pollIntervalMs`) until the task is
    /// terminal, within [`WAIT_LIMIT`]; returns the last result.
    ///
    /// # Panics
    /// When the task is not terminal in time.
    pub async fn poll_until_terminal(&self, task_id: &str) -> Value {
        self.poll_task(task_id, None, |status| {
            matches!(status, "completed" | "failed" | "cancelled")
        })
        .await
    }

    /// Polls `tasks/get` (as `Authorization: Bearer <bearer>` when given) until the task's
    /// status satisfies `done`, within [`WAIT_LIMIT`]; returns that `tasks/get` result.
    ///
    /// # Panics
    /// When it does not in time.
    pub async fn poll_task(
        &self,
        task_id: &str,
        bearer: Option<&str>,
        done: impl Fn(&str) -> bool,
    ) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT_LIMIT;
        loop {
            let mut get = self.post(
                self.next_id(),
                "tasks/get",
                json!({"taskId": task_id}),
                tasks_caps(),
            );
            if let Some(token) = bearer {
                get = get.bearer_auth(token);
            }
            let task = Client::send(get).await.result();
            let status = task["status"].as_str().unwrap_or_default();
            if done(status) {
                return task;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "task {task_id} still {status}"
            );
            let interval = task["pollIntervalMs"].as_u64().unwrap_or(100).min(250);
            tokio::time::sleep(Duration::from_millis(interval)).await;
        }
    }
}

/// Waits for a status event of task `id` matching `done`, within [`WAIT_LIMIT`].
///
/// # Panics
/// When no such event arrives in time.
pub async fn wait_for(
    events: &mut broadcast::Receiver<StatusEvent>,
    id: &str,
    done: impl Fn(&Task) -> bool,
) -> Arc<Task> {
    let wait = async {
        loop {
            match events.recv().await {
                Ok(event) if event.task.id().as_str() == id && done(&event.task) => {
                    return event.task
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => panic!("the event stream closed"),
            }
        }
    };
    tokio::time::timeout(WAIT_LIMIT, wait)
        .await
        .expect("the awaited task state within the wait limit")
}

/// Waits for task `id` to reach `status`.
pub async fn wait_status(
    events: &mut broadcast::Receiver<StatusEvent>,
    id: &str,
    status: TaskStatus,
) -> Arc<Task> {
    wait_for(events, id, |t| t.status() == status).await
}

/// Reads Server-Sent Events from a byte stream: one JSON message per `data:` line.
#[derive(Debug)]
pub struct Sse<S> {
    stream: S,
    buffer: Vec<u8>,
}

impl<S, B, E> Sse<S>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Debug,
{
    /// Wraps a byte stream.
    pub fn new(stream: S) -> Self {
        Sse {
            stream,
            buffer: Vec::new(),
        }
    }

    /// The next `data:` message, within [`WAIT_LIMIT`].
    ///
    /// # Panics
    /// When the stream ends, fails, or stays silent too long.
    pub async fn next(&mut self) -> Value {
        tokio::time::timeout(WAIT_LIMIT, self.next_data())
            .await
            .expect("an SSE message within the wait limit")
    }

    /// The next `data:` message if one comes within `limit`; `None` when the stream stays
    /// open and silent that long.
    ///
    /// # Panics
    /// When the stream ends or fails.
    pub async fn next_within(&mut self, limit: Duration) -> Option<Value> {
        tokio::time::timeout(limit, self.next_data()).await.ok()
    }

    async fn next_data(&mut self) -> Value {
        loop {
            while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let line = String::from_utf8(line).expect("UTF-8 SSE");
                let line = line.trim_end_matches(['\r', '\n']);
                if let Some(data) = line.strip_prefix("data:") {
                    return serde_json::from_str(data.trim_start()).expect("JSON in data:");
                }
            }
            let chunk = self
                .stream
                .next()
                .await
                .expect("the SSE stream is open")
                .expect("the SSE stream reads");
            self.buffer.extend_from_slice(chunk.as_ref());
        }
    }
}

/// The scope function of [`start_scoped`]: `Authorization: Bearer <token>` is principal
/// `<token>`; anything else is HTTP 401.
///
/// # Errors
/// [`tasks_core::McpError::Unauthorized`] without a non-empty bearer token.
pub fn bearer_principal(
    headers: &reqwest::header::HeaderMap,
) -> Result<tasks_runtime::Principal, tasks_core::McpError> {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|token| !token.is_empty())
        .map(tasks_runtime::Principal::new)
        .ok_or(tasks_core::McpError::Unauthorized)
}

/// Starts the fixture with `settings` and a scope per bearer token ([`bearer_principal`]).
///
/// # Panics
/// When the address cannot be bound.
pub async fn start_scoped(settings: Settings) -> RunningServer {
    tasks_fixture::server(&settings)
        .principal_fn(|parts| bearer_principal(&parts.headers))
        .bind(settings.listen)
        .await
        .expect("the fixture binds a loopback port")
}

/// Sends `request` as raw bytes on a fresh TCP connection to `addr` and returns everything
/// the server writes until it closes the connection (send `Connection: close`), within
/// [`WAIT_LIMIT`].
///
/// # Panics
/// When the connection fails or the server stays silent too long.
pub async fn raw_exchange(addr: std::net::SocketAddr, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr)
            .await
            .expect("the server accepts");
        stream
            .write_all(request)
            .await
            .expect("the request is sent");
        let mut response = Vec::new();
        // A reset after the answer (the server closing a half-read request) ends the read too.
        let _ = stream.read_to_end(&mut response).await;
        String::from_utf8_lossy(&response).into_owned()
    };
    tokio::time::timeout(WAIT_LIMIT, exchange)
        .await
        .expect("the server answers and closes within the wait limit")
}
