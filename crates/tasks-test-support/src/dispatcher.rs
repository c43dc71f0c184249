//! A [`Dispatcher`] in process (no network): one over the test tools ([`crate::tools`]), a
//! [`Req`] sent to it, and the [`Reply`] with its assertions.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt as _;
use serde_json::{json, Value};
use tasks_core::McpError;
use tasks_http::MessageStream;
use tasks_http::{Dispatcher, ResponseBody, ServerBuilder};

use crate::protocol::{assert_error, SERVER_INFO, TASKS};
use crate::request::Req;
use crate::tools::{tools, Runs};
use crate::wait::within;

/// The name of the test server.
pub const SERVER_NAME: &str = "test-server";
/// The version of the test server.
pub const SERVER_VERSION: &str = "9.9.9";

/// The serverInfo `_meta` every result must carry.
pub fn server_meta() -> Value {
    json!({ SERVER_INFO: {"name": SERVER_NAME, "version": SERVER_VERSION} })
}

/// The -32021 `data` for a request that did not declare Tasks.
pub fn tasks_missing_data() -> Value {
    json!({"requiredCapabilities": {"extensions": {TASKS: {}}}})
}

/// The principal of a request: its bearer token (trimmed); none (or an empty one) is HTTP
/// 401.
///
/// # Errors
/// [`McpError::Unauthorized`] without a non-empty bearer token.
pub fn bearer_principal(
    parts: &http::request::Parts,
) -> Result<tasks_runtime::Principal, McpError> {
    parts
        .headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|token| !token.is_empty())
        .map(tasks_runtime::Principal::new)
        .ok_or(McpError::Unauthorized)
}

/// A builder with every test tool registered.
pub fn builder(runs: &Arc<Runs>) -> ServerBuilder {
    let mut builder = ServerBuilder::new(SERVER_NAME, SERVER_VERSION).poll_interval_ms(100);
    for tool in tools(runs) {
        builder = builder.tool(tool);
    }
    builder
}

/// A dispatcher over the test tools, and its run counters.
pub fn dispatcher() -> (Dispatcher, Arc<Runs>) {
    let runs = Arc::new(Runs::default());
    (builder(&runs).build(), runs)
}

/// A dispatcher whose principal is the bearer token ([`bearer_principal`]).
pub fn scoped_dispatcher() -> Dispatcher {
    let runs = Arc::new(Runs::default());
    builder(&runs).principal_fn(bearer_principal).build()
}

impl Req {
    /// Sends this request to `d`.
    pub async fn send(self, d: &Dispatcher) -> Reply {
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
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The body.
    pub body: ResponseBody,
    /// The id of the request (`None` for a notification).
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
    pub fn bytes(&self) -> &Bytes {
        match &self.body {
            ResponseBody::Json(bytes) => bytes,
            other => panic!(
                "expected a JSON body, got {other:?} (status {})",
                self.status
            ),
        }
    }

    /// The JSON body as text.
    pub fn text(&self) -> String {
        String::from_utf8(self.bytes().to_vec()).unwrap()
    }

    /// The JSON body, checked to be a JSON-RPC 2.0 message.
    pub fn json(&self) -> Value {
        let value: Value = serde_json::from_slice(self.bytes()).unwrap();
        assert_eq!(value["jsonrpc"], "2.0", "{value}");
        value
    }

    /// The result of a 200 response echoing the request id; checks the serverInfo `_meta`.
    pub fn result(&self) -> Value {
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
    pub fn error(&self, status: u16, code: i64, message: &str) -> Value {
        let body = self.json();
        assert_eq!(
            Some(&body["id"]),
            self.sent_id.as_ref(),
            "id echoed: {body}"
        );
        assert_error(self.status, &body, status, code, message)
    }

    /// Asserts an error response without an id (the request could not be read); returns the
    /// error object.
    pub fn anonymous_error(&self, status: u16, code: i64, message: &str) -> Value {
        let body = self.json();
        assert!(body.get("id").is_none(), "no id: {body}");
        assert_error(self.status, &body, status, code, message)
    }

    /// Whether the body is empty (a 202 acknowledgement).
    pub fn is_empty(&self) -> bool {
        matches!(self.body, ResponseBody::Empty)
    }

    /// The message stream of a streamed answer.
    ///
    /// # Panics
    /// When the answer is not a stream.
    pub fn into_stream(self) -> MessageStream {
        match self.body {
            ResponseBody::Stream(stream) => stream,
            other => panic!("expected a stream, got {} {other:?}", self.status),
        }
    }
}

/// The next message of a listen stream, within [`WAIT_LIMIT`](crate::wait::WAIT_LIMIT).
pub async fn next_message(stream: &mut MessageStream) -> Value {
    let bytes = within("a message of the stream", stream.next())
        .await
        .expect("the stream is open");
    serde_json::from_slice(&bytes).unwrap()
}

/// Creates a task with `req` (which must produce a CreateTaskResult); returns its id.
pub async fn create(d: &Dispatcher, req: Req) -> String {
    let result = req.send(d).await.result();
    assert_eq!(result["resultType"], "task", "{result}");
    result["taskId"].as_str().unwrap().to_owned()
}
