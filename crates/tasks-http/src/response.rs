//! What the dispatcher answers: an HTTP status and a JSON, SSE or empty body.

use std::fmt;
use std::pin::Pin;

use bytes::Bytes;
use futures_util::Stream;
use serde::Serialize;
use serde_json::Value;
use tasks_core::http_status_for_code;
use tasks_core::jsonrpc;
use tasks_core::{JsonRpcError, McpError};

/// A stream of JSON-RPC messages (each one serialized JSON object) for an SSE response.
pub type MessageStream = Pin<Box<dyn Stream<Item = Bytes> + Send>>;

/// The body of a [`McpResponse`].
pub enum ResponseBody {
    /// No body (HTTP 202 for an accepted notification).
    Empty,
    /// One JSON-RPC message, sent as `application/json`.
    Json(Bytes),
    /// Messages sent as `text/event-stream`, one `data:` line each.
    Stream(MessageStream),
}

impl fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResponseBody::Empty => f.write_str("Empty"),
            ResponseBody::Json(bytes) => write!(f, "Json({})", String::from_utf8_lossy(bytes)),
            ResponseBody::Stream(_) => f.write_str("Stream(..)"),
        }
    }
}

/// Why the transport could not hand over a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BodyError {
    /// The body exceeded this many bytes.
    TooLarge(usize),
    /// The connection failed while reading the body.
    Incomplete,
}

/// A transport-agnostic response: status plus body.
#[derive(Debug)]
pub struct McpResponse {
    /// The HTTP status code.
    pub status: u16,
    /// The body.
    pub body: ResponseBody,
    /// The `Mcp-Session-Id` header to send: the id of a 2025 session this response opens.
    pub session_id: Option<String>,
}

impl McpResponse {
    /// A response with `status` and `body` (no session id).
    fn new(status: u16, body: ResponseBody) -> Self {
        McpResponse {
            status,
            body,
            session_id: None,
        }
    }

    /// 202 with no body.
    pub fn accepted() -> Self {
        Self::empty(202)
    }

    /// A JSON-RPC error response with the error's HTTP status. `id` is echoed when known.
    pub fn error(id: Option<&Value>, error: &McpError) -> Self {
        let (status, body) = jsonrpc::refusal(id, error);
        Self::new(status, ResponseBody::Json(Bytes::from(body)))
    }

    /// An error response for a raw JSON-RPC error object (e.g. returned by a tool), with the
    /// status of [`tasks_core::http_status_for_code`].
    pub fn rpc_error(id: &Value, error: &JsonRpcError) -> Self {
        let body = ResponseBody::Json(error_bytes(Some(id), error));
        Self::new(http_status_for_code(error.code), body)
    }

    /// The response for a body the transport could not collect: 413 (too large) or a parse
    /// error ([`McpError::Parse`]).
    pub fn body_error(error: BodyError) -> Self {
        match error {
            BodyError::TooLarge(limit) => Self::error(None, &McpError::BodyTooLarge { limit }),
            BodyError::Incomplete => Self::error(None, &McpError::Parse),
        }
    }

    /// A 200 JSON-RPC result response.
    pub fn result<T: Serialize>(id: &Value, result: &T) -> Self {
        Self::message(result_bytes(id, result))
    }

    /// A 200 response with `error` in the body: how a 2025 session answers a JSON-RPC error
    /// (its clients read errors from successful HTTP responses).
    pub fn session_error(id: &Value, error: &JsonRpcError) -> Self {
        Self::message(error_bytes(Some(id), error))
    }

    /// 200 with one serialized JSON-RPC message as the body.
    pub fn message(bytes: Bytes) -> Self {
        Self::new(200, ResponseBody::Json(bytes))
    }

    /// A response with `status` and one serialized JSON-RPC message as the body.
    pub(crate) fn json_with_status(status: u16, bytes: Bytes) -> Self {
        Self::new(status, ResponseBody::Json(bytes))
    }

    /// A response with `status` and no body.
    pub fn empty(status: u16) -> Self {
        Self::new(status, ResponseBody::Empty)
    }

    /// 200 with an SSE body of `messages`.
    pub fn stream(messages: MessageStream) -> Self {
        Self::new(200, ResponseBody::Stream(messages))
    }

    /// The JSON body parsed back into a value (tests and tools); `None` for other bodies.
    pub fn json(&self) -> Option<Value> {
        match &self.body {
            ResponseBody::Json(bytes) => serde_json::from_slice(bytes).ok(),
            _ => None,
        }
    }
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` as bytes.
pub fn result_bytes<T: Serialize>(id: &Value, result: &T) -> Bytes {
    Bytes::from(jsonrpc::result(id, result))
}

/// `{"jsonrpc":"2.0","id"?:…,"error":…}` as bytes.
pub fn error_bytes<E: Serialize>(id: Option<&Value>, error: &E) -> Bytes {
    Bytes::from(jsonrpc::error(id, error))
}

/// `{"jsonrpc":"2.0","method":…,"params":…}` as bytes.
pub fn notification_bytes<P: Serialize>(method: &str, params: &P) -> Bytes {
    Bytes::from(jsonrpc::notification(method, params))
}
