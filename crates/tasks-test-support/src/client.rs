//! [`Client`]: a client of one MCP server over HTTP. Correct MCP goes through the workspace's
//! own client, `tasks-client` ([`Client::mcp`], [`Client::create`]); the JSON-level methods are
//! the escape hatch for tests that check the wire itself or send what a correct client never
//! would: any [`Req`] or request, any header, any body, answered as a [`Reply`] (status,
//! headers, body).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tasks_client::{ClientCapability, Execution};
use tasks_http::RunningServer;

use crate::protocol::{assert_error, tasks_caps};
use crate::request::Req;
use crate::sse::Sse;
use crate::wait::WAIT_LIMIT;

/// How long a request to a server node may take ([`Client::of_node`]): a node that is
/// stopped or stalled does not hold a harness longer.
pub const NODE_TIMEOUT: Duration = Duration::from_secs(20);

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
        assert_error(self.status, &self.body, status, code, message)
    }
}

/// Declares form elicitation and answers nothing: the tests answer with `tasks/update`.
struct DeclaresElicitation;

#[async_trait::async_trait]
impl tasks_client::InputHandler for DeclaresElicitation {
    fn capabilities(&self) -> Vec<ClientCapability> {
        vec![ClientCapability::ElicitationForm]
    }
}

/// A client of one MCP endpoint, declaring the Tasks extension and elicitation.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    mcp: tasks_client::Client,
    url: String,
    next_id: Arc<AtomicI64>,
}

impl Client {
    /// A client of the endpoint at `url` whose requests wait as long as the server takes.
    pub fn new(url: impl Into<String>) -> Self {
        Client::with_http(url.into(), reqwest::Client::new())
    }

    /// A client whose every request gives up after `timeout`.
    pub fn with_timeout(url: &str, timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .expect("a reqwest client");
        Client::with_http(url.to_owned(), http)
    }

    /// A client of a server node, giving up after [`NODE_TIMEOUT`].
    pub fn of_node(url: &str) -> Self {
        Client::with_timeout(url, NODE_TIMEOUT)
    }

    fn with_http(url: String, http: reqwest::Client) -> Self {
        let mcp = tasks_client::Client::builder(url.clone())
            .http_client(http.clone())
            .input_handler(DeclaresElicitation)
            .build();
        Client {
            http,
            mcp,
            url,
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

    /// The workspace's MCP client (`tasks-client`) of the same endpoint, declaring form
    /// elicitation (and answering none).
    pub fn mcp(&self) -> &tasks_client::Client {
        &self.mcp
    }

    /// A fresh integer request id.
    pub fn next_id(&self) -> Value {
        json!(self.next_id.fetch_add(1, Ordering::SeqCst))
    }

    /// `req` as a request to this client's URL (its path is for a dispatcher; its `Host` is
    /// left to reqwest).
    ///
    /// # Panics
    /// When a header is not one reqwest can send.
    pub fn req(&self, req: &Req) -> reqwest::RequestBuilder {
        let mut request = self.http.request(req.http_method.clone(), &self.url);
        for (name, value) in req.headers() {
            if name != "host" {
                let value = reqwest::header::HeaderValue::from_bytes(&value).expect("a header");
                request = request.header(name, value);
            }
        }
        request.body(req.body_bytes())
    }

    /// Sends `req` ([`Client::req`]) and reads the whole response.
    pub async fn send_req(&self, req: &Req) -> Reply {
        Client::send(self.req(req)).await
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
        self.req(&Req::new(method).id(id).params(params).caps(caps))
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

    /// The whole JSON-RPC response body of request `method` (declaring Tasks and
    /// elicitation), or `None` when no JSON answer came (the node is down or stalled).
    pub async fn try_request(&self, method: &str, params: Value) -> Option<Value> {
        let response = self
            .post(self.next_id(), method, params, tasks_caps())
            .send()
            .await
            .ok()?;
        response.json().await.ok()
    }

    /// The `result` of a JSON-RPC success of `method`.
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

    /// Creates a task of `tool` through `tasks-client`; its id.
    ///
    /// # Panics
    /// When the call fails or does not create a task.
    pub async fn create(&self, tool: &str, arguments: Value) -> String {
        let execution = self
            .mcp
            .call_tool(tool, arguments.clone())
            .await
            .unwrap_or_else(|error| panic!("{tool} {arguments} failed: {error}"));
        match execution {
            Execution::Task(task) => task.id().as_str().to_owned(),
            other => panic!("{tool} {arguments} created no task: {other:?}"),
        }
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
    /// status satisfies `done`, within [`WAIT_LIMIT`]; returns that `tasks/get` result. Every
    /// read must succeed.
    ///
    /// # Panics
    /// When a read fails, or the status does not come in time.
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

    /// Polls `tasks/get` every 50 ms until `done` holds (up to `limit`), reading through
    /// failed or missing answers (a node may be down for a while); the task then.
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
    ///
    /// # Panics
    /// When the stream does not open with an acknowledgement within 10 s.
    pub async fn listen(&self, task_ids: &[&str]) -> Sse {
        let response = self
            .post(
                self.next_id(),
                "subscriptions/listen",
                json!({"notifications": {"taskIds": task_ids}}),
                tasks_caps(),
            )
            .send()
            .await
            .expect("listen answers");
        assert_eq!(response.status(), 200);
        let mut sse = Sse::of(response);
        let ack = sse.try_next(Duration::from_secs(10)).await.expect("an ack");
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        sse
    }
}

/// The text of a completed task's first content block.
pub fn result_text(task: &Value) -> &str {
    task["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}
