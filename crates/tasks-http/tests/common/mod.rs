//! Shared helpers for the in-process dispatcher tests: test tools, a request builder that
//! produces correct MCP 2026-07-28 requests by default, and reply assertions.
#![allow(dead_code)]

pub(crate) mod legacy;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use http::Method;
use serde_json::{json, Map, Value};
use tasks_core::{InputRequest, InputResponse, JsonObject, McpError, Task, TaskPolicy, TaskStatus};
use tasks_http::response::MessageStream;
use tasks_http::{BodyError, Dispatcher, ResponseBody, ServerBuilder};
use tasks_runtime::{text_result, StatusEvent, Tool, ToolContext, ToolError};
use tokio::sync::broadcast::{self, error::RecvError};

pub(crate) const VERSION: &str = "2026-07-28";
pub(crate) const TASKS: &str = "io.modelcontextprotocol/tasks";
pub(crate) const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const HOST: &str = "127.0.0.1:3000";
pub(crate) const SERVER_NAME: &str = "test-server";
pub(crate) const SERVER_VERSION: &str = "9.9.9";

/// How long an in-process wait may take before the test fails instead of hanging.
pub(crate) const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// The serverInfo `_meta` every result must carry.
pub(crate) fn server_meta() -> Value {
    json!({ SERVER_INFO: {"name": SERVER_NAME, "version": SERVER_VERSION} })
}

/// The -32021 `data` for a request that did not declare Tasks.
pub(crate) fn tasks_missing_data() -> Value {
    json!({"requiredCapabilities": {"extensions": {TASKS: {}}}})
}

/// How many times the counted handlers ran.
#[derive(Debug, Default)]
pub(crate) struct Runs {
    pub required_job: AtomicUsize,
    pub strict: AtomicUsize,
    pub sync_echo: AtomicUsize,
}

impl Runs {
    pub(crate) fn get(counter: &AtomicUsize) -> usize {
        counter.load(Ordering::SeqCst)
    }
}

fn str_arg<'a>(ctx: &'a ToolContext, name: &str) -> Option<&'a str> {
    ctx.arguments().get(name).and_then(Value::as_str)
}

/// A form elicitation of one optional string field `property`.
pub(crate) fn elicitation(message: &str, property: &str) -> InputRequest {
    InputRequest::elicit_form(
        message,
        json!({"type": "object", "properties": {property: {"type": "string"}}}),
    )
}

/// The accepted string `field` of an elicitation answer.
pub(crate) fn accepted_str<'a>(answer: &'a InputResponse, field: &str) -> Option<&'a str> {
    answer.as_elicit().and_then(|a| a.str_field(field))
}

/// The test tools, in `tools/list` order.
///
/// | tool | policy | behaviour |
/// |---|---|---|
/// | `sync_echo` | sync | `echo: <text>` |
/// | `optional_job` | optional | `optional done` |
/// | `required_job` | required | `required done` (counted) |
/// | `park` | optional | asks `confirm` (elicitation), then `confirmed: <answer>` |
/// | `block` | required | waits for cancellation |
/// | `explode` | required | fails with -32603 `Tool exploded` |
/// | `interview` | sync | asks `first`, then `second`, then `first=<a> second=<b>` |
/// | `sample` | sync | asks `draft` with `sampling/createMessage` |
/// | `compose` | per call: sync without `inputResponses`, required with | asks `user_name`, then `Hello, <name> (task: <bool>)` |
/// | `strict` | optional | requires an integer `count` (counted) |
pub(crate) fn tools(runs: &Arc<Runs>) -> Vec<Tool> {
    let echo_runs = runs.clone();
    let required_runs = runs.clone();
    let strict_runs = runs.clone();
    vec![
        Tool::new("sync_echo", "Echoes text synchronously", move |ctx| {
            echo_runs.sync_echo.fetch_add(1, Ordering::SeqCst);
            async move {
                let text = str_arg(&ctx, "text").unwrap_or("").to_owned();
                Ok(text_result(format!("echo: {text}")))
            }
        })
        .with_input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}})),
        Tool::new("optional_job", "Task when declared", |_ctx| async {
            Ok(text_result("optional done"))
        })
        .with_policy(TaskPolicy::Optional),
        Tool::new("required_job", "Task only", move |_ctx| {
            required_runs.required_job.fetch_add(1, Ordering::SeqCst);
            async { Ok(text_result("required done")) }
        })
        .with_policy(TaskPolicy::Required),
        Tool::new("park", "Asks for confirmation", |ctx| async move {
            let answer = ctx
                .input("confirm", elicitation("Proceed?", "answer"))
                .await?;
            let answer = accepted_str(&answer, "answer").unwrap_or("none").to_owned();
            Ok(text_result(format!("confirmed: {answer}")))
        })
        .with_policy(TaskPolicy::Optional),
        Tool::new("block", "Runs until cancelled", |ctx| async move {
            ctx.cancellation().cancelled().await;
            Err::<Value, _>(ToolError::Cancelled)
        })
        .with_policy(TaskPolicy::Required),
        Tool::new("explode", "Fails with a protocol error", |_ctx| async {
            Err::<Value, _>(ToolError::rpc(-32603, "Tool exploded"))
        })
        .with_policy(TaskPolicy::Required),
        Tool::new("interview", "Two MRTR rounds", |ctx| async move {
            let first = ctx.input("first", elicitation("First?", "name")).await?;
            let second = ctx.input("second", elicitation("Second?", "name")).await?;
            let name = |v: &InputResponse| accepted_str(v, "name").unwrap_or("?").to_owned();
            Ok(text_result(format!(
                "first={} second={}",
                name(&first),
                name(&second)
            )))
        }),
        Tool::new("sample", "Asks for a sampling", |ctx| async move {
            let request = InputRequest {
                method: "sampling/createMessage".into(),
                params: json!({"messages": [], "maxTokens": 10})
                    .as_object()
                    .cloned(),
            };
            ctx.input("draft", request).await?;
            Ok(text_result("sampled"))
        }),
        Tool::new("compose", "MRTR, then a task", |ctx| async move {
            let answer = ctx
                .input("user_name", elicitation("What is your name?", "name"))
                .await?;
            let name = accepted_str(&answer, "name").unwrap_or("there");
            Ok(text_result(format!(
                "Hello, {name} (task: {})",
                ctx.is_task()
            )))
        })
        .with_policy_fn(|params| {
            if params.get("inputResponses").is_some_and(|r| !r.is_null()) {
                TaskPolicy::Required
            } else {
                TaskPolicy::Sync
            }
        }),
        Tool::new("strict", "Requires an integer count", move |_ctx| {
            strict_runs.strict.fetch_add(1, Ordering::SeqCst);
            async { Ok(text_result("counted")) }
        })
        .with_input_schema(json!({
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        }))
        .with_policy(TaskPolicy::Optional),
    ]
}

/// A builder with every test tool registered.
pub(crate) fn builder(runs: &Arc<Runs>) -> ServerBuilder {
    let mut builder = ServerBuilder::new(SERVER_NAME, SERVER_VERSION).poll_interval_ms(100);
    for tool in tools(runs) {
        builder = builder.tool(tool);
    }
    builder
}

/// A dispatcher over the test tools, and its run counters.
pub(crate) fn dispatcher() -> (Dispatcher, Arc<Runs>) {
    let runs = Arc::new(Runs::default());
    (builder(&runs).build(), runs)
}

/// The principal of a request: its bearer token; none (or an empty one) is HTTP 401.
pub(crate) fn bearer_principal(
    parts: &http::request::Parts,
) -> Result<tasks_runtime::Principal, McpError> {
    parts
        .headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .filter(|token| !token.is_empty())
        .map(tasks_runtime::Principal::new)
        .ok_or(McpError::Unauthorized)
}

/// A dispatcher whose principal is the bearer token ([`bearer_principal`]).
pub(crate) fn scoped_dispatcher() -> Dispatcher {
    let runs = Arc::new(Runs::default());
    builder(&runs).principal_fn(bearer_principal).build()
}

enum HeaderOp {
    Set(String, Vec<u8>),
    Append(String, Vec<u8>),
    Remove(String),
}

/// One HTTP exchange, correct by default: POST /mcp, `Host: 127.0.0.1:3000`,
/// `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (from `params.name`, `params.uri` or
/// `params.taskId`),
/// and `params._meta` with the protocol version and the client capabilities.
pub(crate) struct Req {
    http_method: Method,
    path: String,
    id: Option<Value>,
    method: String,
    params: JsonObject,
    caps: JsonObject,
    version: String,
    meta: Option<Option<Value>>,
    ops: Vec<HeaderOp>,
    body: Option<Bytes>,
    body_error: Option<BodyError>,
}

impl Req {
    pub(crate) fn new(method: &str) -> Self {
        Req {
            http_method: Method::POST,
            path: "/mcp".into(),
            id: Some(json!(1)),
            method: method.into(),
            params: JsonObject::new(),
            caps: JsonObject::new(),
            version: VERSION.into(),
            meta: None,
            ops: Vec::new(),
            body: None,
            body_error: None,
        }
    }

    /// `tools/call` of `tool` with `arguments`.
    pub(crate) fn call(tool: &str, arguments: Value) -> Self {
        Req::new("tools/call")
            .param("name", json!(tool))
            .param("arguments", arguments)
    }

    /// `tasks/get` (also usable for `tasks/cancel` through `Req::task_method`).
    pub(crate) fn get(task_id: &str) -> Self {
        Req::task_method("tasks/get", task_id)
    }

    pub(crate) fn cancel(task_id: &str) -> Self {
        Req::task_method("tasks/cancel", task_id)
    }

    pub(crate) fn update(task_id: &str, responses: Value) -> Self {
        Req::task_method("tasks/update", task_id).param("inputResponses", responses)
    }

    pub(crate) fn task_method(method: &str, task_id: &str) -> Self {
        Req::new(method).param("taskId", json!(task_id))
    }

    /// `subscriptions/listen` with `notifications`.
    pub(crate) fn listen(notifications: Value) -> Self {
        Req::new("subscriptions/listen").param("notifications", notifications)
    }

    pub(crate) fn id(mut self, id: Value) -> Self {
        self.id = Some(id);
        self
    }

    /// A notification: no id.
    pub(crate) fn notification(mut self) -> Self {
        self.id = None;
        self
    }

    pub(crate) fn param(mut self, key: &str, value: Value) -> Self {
        self.params.insert(key.into(), value);
        self
    }

    pub(crate) fn remove_param(mut self, key: &str) -> Self {
        self.params.remove(key);
        self
    }

    /// Declares the Tasks extension on this request.
    pub(crate) fn tasks(self) -> Self {
        self.cap("extensions", json!({TASKS: {}}))
    }

    /// Declares `elicitation: {}`.
    pub(crate) fn elicitation(self) -> Self {
        self.cap("elicitation", json!({}))
    }

    pub(crate) fn cap(mut self, key: &str, value: Value) -> Self {
        self.caps.insert(key.into(), value);
        self
    }

    /// Sets the version in both the header and `_meta`.
    pub(crate) fn version(mut self, version: &str) -> Self {
        self.version = version.into();
        self
    }

    /// Replaces `params._meta` (any JSON value).
    pub(crate) fn meta(mut self, meta: Value) -> Self {
        self.meta = Some(Some(meta));
        self
    }

    /// Sends `params` without `_meta`.
    pub(crate) fn no_meta(mut self) -> Self {
        self.meta = Some(None);
        self
    }

    /// Sets (replaces) a header.
    pub(crate) fn header(mut self, name: &str, value: impl AsRef<[u8]>) -> Self {
        self.ops.push(HeaderOp::Set(
            name.to_ascii_lowercase(),
            value.as_ref().to_vec(),
        ));
        self
    }

    /// Adds one more value of a header.
    pub(crate) fn append(mut self, name: &str, value: impl AsRef<[u8]>) -> Self {
        self.ops.push(HeaderOp::Append(
            name.to_ascii_lowercase(),
            value.as_ref().to_vec(),
        ));
        self
    }

    pub(crate) fn without(mut self, name: &str) -> Self {
        self.ops.push(HeaderOp::Remove(name.to_ascii_lowercase()));
        self
    }

    pub(crate) fn bearer(self, token: &str) -> Self {
        self.header("authorization", format!("Bearer {token}"))
    }

    pub(crate) fn http_method(mut self, method: Method) -> Self {
        self.http_method = method;
        self
    }

    pub(crate) fn path(mut self, path: &str) -> Self {
        self.path = path.into();
        self
    }

    /// Sends these raw bytes as the body instead of the built message.
    pub(crate) fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Sends this JSON value as the body instead of the built message.
    pub(crate) fn body_json(self, body: Value) -> Self {
        let bytes = serde_json::to_vec(&body).unwrap();
        self.body(bytes)
    }

    /// Hands the dispatcher a body error instead of a body.
    pub(crate) fn body_error(mut self, error: BodyError) -> Self {
        self.body_error = Some(error);
        self
    }

    /// The `params` object as sent (with `_meta`).
    pub(crate) fn params_value(&self) -> Value {
        let mut params = self.params.clone();
        match &self.meta {
            None => {
                params.insert(
                    "_meta".into(),
                    json!({META_VERSION: self.version, META_CAPS: self.caps}),
                );
            }
            Some(Some(meta)) => {
                params.insert("_meta".into(), meta.clone());
            }
            Some(None) => {}
        }
        Value::Object(params)
    }

    /// The JSON-RPC message as sent.
    pub(crate) fn message(&self) -> Value {
        let mut message = Map::new();
        message.insert("jsonrpc".into(), json!("2.0"));
        if let Some(id) = &self.id {
            message.insert("id".into(), id.clone());
        }
        message.insert("method".into(), json!(self.method));
        message.insert("params".into(), self.params_value());
        Value::Object(message)
    }

    fn headers(&self) -> Vec<(String, Vec<u8>)> {
        let mut headers: Vec<(String, Vec<u8>)> = vec![
            ("host".into(), HOST.into()),
            ("content-type".into(), b"application/json".to_vec()),
            (
                "accept".into(),
                b"application/json, text/event-stream".to_vec(),
            ),
            ("mcp-protocol-version".into(), self.version.clone().into()),
            ("mcp-method".into(), self.method.clone().into()),
        ];
        let name_field = match self.method.as_str() {
            "tools/call" | "prompts/get" => Some("name"),
            "resources/read" => Some("uri"),
            "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
            _ => None,
        };
        if let Some(field) = name_field {
            if let Some(value) = self.params.get(field).and_then(Value::as_str) {
                headers.push(("mcp-name".into(), value.as_bytes().to_vec()));
            }
        }
        for op in &self.ops {
            match op {
                HeaderOp::Set(name, value) => {
                    headers.retain(|(n, _)| n != name);
                    headers.push((name.clone(), value.clone()));
                }
                HeaderOp::Append(name, value) => headers.push((name.clone(), value.clone())),
                HeaderOp::Remove(name) => headers.retain(|(n, _)| n != name),
            }
        }
        headers
    }

    /// The request head.
    pub(crate) fn parts(&self) -> http::request::Parts {
        let mut builder = http::Request::builder()
            .method(self.http_method.clone())
            .uri(self.path.as_str());
        for (name, value) in self.headers() {
            builder = builder.header(
                name.as_str(),
                http::HeaderValue::from_bytes(&value).expect("a valid header value"),
            );
        }
        builder.body(()).unwrap().into_parts().0
    }

    /// The body as sent.
    pub(crate) fn body_bytes(&self) -> Bytes {
        match &self.body {
            Some(body) => body.clone(),
            None => Bytes::from(serde_json::to_vec(&self.message()).unwrap()),
        }
    }

    pub(crate) async fn send(self, d: &Dispatcher) -> Reply {
        let parts = self.parts();
        let body = match self.body_error {
            Some(error) => Err(error),
            None => Ok(self.body_bytes()),
        };
        let response = d.handle_http(&parts, body).await;
        Reply {
            status: response.status,
            body: response.body,
            sent_id: self.id,
            session_id: response.session_id,
        }
    }
}

/// A dispatcher response, with the id of the request that produced it.
pub(crate) struct Reply {
    pub status: u16,
    pub body: ResponseBody,
    pub sent_id: Option<Value>,
    /// The `Mcp-Session-Id` the response sets.
    pub session_id: Option<String>,
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:?}", self.status, self.body)
    }
}

impl Reply {
    /// The raw JSON body.
    pub(crate) fn bytes(&self) -> &Bytes {
        match &self.body {
            ResponseBody::Json(bytes) => bytes,
            other => panic!(
                "expected a JSON body, got {other:?} (status {})",
                self.status
            ),
        }
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.bytes().to_vec()).unwrap()
    }

    /// The JSON body, checked to be a JSON-RPC 2.0 message.
    pub(crate) fn json(&self) -> Value {
        let value: Value = serde_json::from_slice(self.bytes()).unwrap();
        assert_eq!(value["jsonrpc"], "2.0", "{value}");
        value
    }

    /// The result of a 200 response echoing the request id; checks the serverInfo `_meta`.
    pub(crate) fn result(&self) -> Value {
        let body = self.json();
        assert_eq!(self.status, 200, "expected a result, got {body}");
        assert!(body.get("error").is_none(), "{body}");
        assert_eq!(
            Some(&body["id"]),
            self.sent_id.as_ref(),
            "id echoed: {body}"
        );
        let result = body["result"].clone();
        assert_eq!(
            result["_meta"][SERVER_INFO],
            server_meta()[SERVER_INFO],
            "serverInfo _meta on every result: {result}"
        );
        assert!(result["resultType"].is_string(), "{result}");
        result
    }

    /// Asserts an error response echoing the request id; returns the error object.
    pub(crate) fn error(&self, status: u16, code: i64, message: &str) -> Value {
        let body = self.json();
        assert_eq!(
            Some(&body["id"]),
            self.sent_id.as_ref(),
            "id echoed: {body}"
        );
        self.check_error(body, status, code, message)
    }

    /// Asserts an error response without an id (the request could not be read); returns the
    /// error object.
    pub(crate) fn anonymous_error(&self, status: u16, code: i64, message: &str) -> Value {
        let body = self.json();
        assert!(body.get("id").is_none(), "no id: {body}");
        self.check_error(body, status, code, message)
    }

    fn check_error(&self, body: Value, status: u16, code: i64, message: &str) -> Value {
        assert!(body.get("result").is_none(), "{body}");
        assert_eq!(
            (
                self.status,
                body["error"]["code"].as_i64(),
                body["error"]["message"].as_str()
            ),
            (status, Some(code), Some(message)),
            "{body}"
        );
        body["error"].clone()
    }

    pub(crate) fn is_empty(&self) -> bool {
        matches!(self.body, ResponseBody::Empty)
    }

    pub(crate) fn into_stream(self) -> MessageStream {
        match self.body {
            ResponseBody::Stream(stream) => stream,
            other => panic!("expected a stream, got {} {other:?}", self.status),
        }
    }
}

/// The next message of a listen stream, within [`WAIT_LIMIT`].
pub(crate) async fn next_message(stream: &mut MessageStream) -> Value {
    let bytes = tokio::time::timeout(WAIT_LIMIT, stream.next())
        .await
        .expect("a message within the wait limit")
        .expect("the stream is open");
    serde_json::from_slice(&bytes).unwrap()
}

/// Waits for a status event of task `id` matching `done`, within [`WAIT_LIMIT`].
pub(crate) async fn wait_for(
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
                Err(RecvError::Closed) => panic!("event stream closed"),
            }
        }
    };
    tokio::time::timeout(WAIT_LIMIT, wait)
        .await
        .expect("the task reached the awaited state within the wait limit")
}

/// Waits for task `id` to reach `status`.
pub(crate) async fn wait_status(
    events: &mut broadcast::Receiver<StatusEvent>,
    id: &str,
    status: TaskStatus,
) -> Arc<Task> {
    wait_for(events, id, |t| t.status() == status).await
}

/// Creates a task with `req` (which must produce a CreateTaskResult); returns its id.
pub(crate) async fn create(d: &Dispatcher, req: Req) -> String {
    let result = req.send(d).await.result();
    assert_eq!(result["resultType"], "task", "{result}");
    result["taskId"].as_str().unwrap().to_owned()
}

/// An accepted ElicitResult with `content`.
pub(crate) fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}
