//! The error table: every JSON-RPC error the server sends, with its HTTP status.
//!
//! Sources: MCP 2026-07-28 basic, "Error Codes" and "`_meta`" (-32602 and -32021, HTTP 400:
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/index>); streamable-http
//! "Security & Endpoint" (403), "Protocol Version Header" (-32022 with 400, -32601 with 404),
//! "Server Validation" (-32020 with 400) and "Earlier Streamable HTTP Revisions" (405)
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>);
//! SEP-2663 "Capability Negotiation" (the -32021 shape) and "Error Handling" (-32602 for an
//! unknown `taskId`)
//! (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).
//! This server's choices: the HTTP status of -32700, -32600, other -32602 and -32603 (the spec
//! gives none), the 401, 413 and 415 answers, the capacity and input-size errors, and every
//! message.
//! Messages are fixed strings chosen by the server: no variant ever echoes a client-supplied id,
//! and no internal exception text reaches a client.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::protocol::{LEGACY_VERSIONS, SUPPORTED_VERSIONS, TASKS_EXTENSION};

/// JSON-RPC 2.0 `Internal error`: the code of every failure the server words itself (a tool
/// that panicked, timed out or returned something unusable), never with exception text.
pub const INTERNAL_ERROR: i64 = -32603;

/// A JSON-RPC 2.0 error object `{code, message, data?}` as it appears on the wire, and as a
/// failed task stores it (`DetailedTask.error`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// A short, human-readable description.
    pub message: String,
    /// Optional structured detail. A present `"data": null` stays `Some(Value::Null)`, so a
    /// stored error round-trips unchanged.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_value"
    )]
    pub data: Option<Value>,
}

fn present_value<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// Which configured limit refused a task creation; rendered as `data.limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapacityLimit {
    /// Concurrently running workers (`"max_jobs"`).
    MaxJobs,
    /// Tasks stored at once, across every scope (`"max_tasks"`).
    MaxTasks,
    /// Non-terminal tasks of one scope (`"max_active_tasks_per_scope"`).
    MaxActiveTasksPerScope,
}

impl CapacityLimit {
    /// Every limit.
    pub const ALL: [CapacityLimit; 3] = [
        CapacityLimit::MaxJobs,
        CapacityLimit::MaxTasks,
        CapacityLimit::MaxActiveTasksPerScope,
    ];

    /// The wire name used in `data.limit`.
    pub fn as_str(self) -> &'static str {
        match self {
            CapacityLimit::MaxJobs => "max_jobs",
            CapacityLimit::MaxTasks => "max_tasks",
            CapacityLimit::MaxActiveTasksPerScope => "max_active_tasks_per_scope",
        }
    }
}

/// Every protocol error the server answers with.
///
/// [`McpError::code`] gives the JSON-RPC code, [`McpError::http_status`] the HTTP status and
/// [`McpError::to_error_object`] the full wire object.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// -32700, HTTP 400: the body is not valid JSON (or not UTF-8).
    #[error("Parse error")]
    Parse,
    /// -32600, HTTP 400: valid JSON that is not a single JSON-RPC request or notification.
    #[error("{0}")]
    InvalidRequest(&'static str),
    /// -32600, HTTP 413: the body is larger than the configured limit (bytes).
    #[error("Request body is larger than {limit} bytes")]
    BodyTooLarge {
        /// The configured limit in bytes.
        limit: usize,
    },
    /// -32601, HTTP 404: unknown method, removed method (`tasks/result`, `tasks/list`,
    /// `initialize`, `ping`, …) or a method behind a capability the server does not advertise.
    #[error("Method not found")]
    MethodNotFound,
    /// -32601, HTTP 404: `initialize` from a client speaking 2026-07-28 (headers and `_meta`):
    /// the method does not exist in this revision. `data.supported` names the revisions served
    /// (MCP 2026-07-28 versioning: a modern-only server names its versions in any error it
    /// returns to `initialize`; runner check
    /// `server-stateless/sep-2575-http-server-method-not-found-404-initialize` expects 404/-32601).
    #[error("Method not found")]
    InitializeNotServed,
    /// -32602, HTTP 400: invalid params, with a fixed server-chosen message.
    #[error("{0}")]
    InvalidParams(String),
    /// -32602, HTTP 400: `"Unknown or inaccessible taskId"`. Unknown, expired and other-scope
    /// tasks are indistinguishable (SEP-2663 "Error Handling" gives -32602 for an unknown
    /// `taskId`; answering expired and other-scope tasks alike is this server's choice).
    #[error("Unknown or inaccessible taskId")]
    UnknownTask,
    /// -32602, HTTP 400: `"Resource not found"` with `data: {"uri": <the requested uri>}` (whole:
    /// the planner refuses a longer URI than [`crate::catalog::MAX_URI_BYTES`] first) for a `resources/read` of a URI the server does not have (MCP
    /// 2026-07-28 resources, "Error Handling": -32602, never an empty `contents`; runner
    /// scenario `sep-2164-resource-not-found`).
    #[error("Resource not found")]
    UnknownResource(String),
    /// -32602, HTTP 400: `"Skill not found"` with `data: {"uri": <the requested uri>}` for a
    /// `skills/get` of a URI that names no skill the server serves (Skills extension,
    /// <https://modelcontextprotocol.io/seps/2640-skills-extension>, "Getting a Skill"; runner
    /// check `sep-2640-skills-get-unknown-uri-invalid-params`).
    #[error("Skill not found")]
    UnknownSkill(String),
    /// -32602, HTTP 400: `"Not a directory resource"` with `data: {"uri": <the requested uri>}`
    /// for a `resources/directory/read` of a URI that does not exist or is not a directory
    /// (Skills extension, "Reading Directories"; runner check
    /// `sep-2640-directory-read-invalid-params`).
    #[error("Not a directory resource")]
    NotADirectory(String),
    /// -32602, HTTP 400: `"Task input is larger than <limit> bytes"` (this server's limit).
    #[error("Task input is larger than {limit} bytes")]
    TaskInputTooLarge {
        /// The limit in bytes of the serialized work descriptor.
        limit: usize,
    },
    /// -32603, HTTP 500: `"Task capacity exhausted"` with `data: {"retryable": true, "limit": …}`.
    #[error("Task capacity exhausted")]
    CapacityExhausted(CapacityLimit),
    /// -32603, HTTP 500: a server fault. The message is generic and never carries exception text.
    #[error("{0}")]
    Internal(&'static str),
    /// -32603, HTTP 503 (the HTTP adapter adds `Retry-After: 1` to every 503):
    /// `"Task store unavailable: nothing was stored or changed"` with
    /// `data: {"retryable": true}`. The task store could not be reached or did not answer in
    /// time (a read, or a write that never reached it); the same request may be sent again.
    /// This server's choice, shaped like its other retryable refusals.
    #[error("Task store unavailable: nothing was stored or changed")]
    StoreUnavailable,
    /// -32603, HTTP 503 (with `Retry-After: 1`): `"Task store unavailable: whether the request
    /// took effect is unknown"` with `data: {"retryable": true, "outcome": "unknown"}`. A
    /// write (a task creation, `tasks/update`, `tasks/cancel`) reached the task store, which
    /// then did not answer in time or lost its connection: it may or may not have been
    /// committed. `tasks/update` and `tasks/cancel` may be retried as they are; a creation
    /// is retried without creating a second task only through an idempotent path (see
    /// `docs/durability.md`). This server's choice.
    #[error("Task store unavailable: whether the request took effect is unknown")]
    StoreOutcomeUnknown,
    /// -32020, HTTP 400: a required routing header is missing, differs from the body, is repeated
    /// or carries invalid characters (MCP 2026-07-28 streamable-http "Server Validation"; a
    /// repeated header is this server's choice).
    #[error("{0}")]
    HeaderMismatch(&'static str),
    /// -32021, HTTP 400: `"Missing required client capability"`, with
    /// `data.requiredCapabilities` (a ClientCapabilities object).
    #[error("Missing required client capability")]
    MissingCapability(Value),
    /// -32022, HTTP 400: `"Unsupported protocol version"` with `data.supported` and
    /// `data.requested` (the version asked for, cut to [`MAX_ECHO_BYTES`]).
    #[error("Unsupported protocol version")]
    UnsupportedVersion {
        /// The version the client asked for, echoed in `data.requested`.
        requested: String,
    },
    /// -32022, HTTP 400: `"Unsupported protocol version"` for a 2025-era `initialize` asking
    /// for a revision this server never serves, with `data.supported` naming every revision it
    /// serves (2026-07-28 and the 2025 session revisions) and `data.requested`.
    #[error("Unsupported protocol version")]
    UnsupportedLegacyVersion {
        /// The version the client asked for, echoed in `data.requested`.
        requested: String,
    },
    /// -32600, HTTP 400: a 2025 session message without `Mcp-Session-Id` (MCP 2025-11-25
    /// transports, "Session Management": SHOULD be 400).
    #[error("Bad Request: Mcp-Session-Id header is required")]
    SessionRequired,
    /// -32001, HTTP 404: `Mcp-Session-Id` names no live session (never minted, ended, or
    /// expired; MCP 2025-11-25 transports, "Session Management": MUST be 404, and the client
    /// starts a new session). The code is the one the reference SDKs use.
    #[error("Session not found")]
    SessionNotFound,
    /// -32601, HTTP 404: a 2025-11-25 `tools/call` whose task hint does not fit the tool's
    /// `execution.taskSupport` (MCP 2025-11-25 tasks, "Tool-Level Negotiation": MUST for a
    /// required tool without a hint, SHOULD for a forbidden tool with one).
    #[error("{0}")]
    TaskSupportMismatch(&'static str),
    /// -32603, HTTP 503: `"Too many sessions"` with `data: {"retryable": true, "limit":
    /// "max_sessions"}`: every 2025 session slot is held by a session that is busy (an open
    /// stream or a request being served); idle sessions are ended to make room first.
    #[error("Too many sessions")]
    SessionLimit,
    /// -32600, HTTP 401: the scope function rejected the request (authentication).
    #[error("Unauthorized")]
    Unauthorized,
    /// -32600, HTTP 403: `Host` or `Origin` is not allowed (DNS-rebinding protection).
    #[error("Forbidden: Host or Origin is not allowed")]
    ForbiddenOrigin,
    /// -32600, HTTP 405: the endpoint accepts POST only.
    #[error("Method not allowed: the MCP endpoint accepts POST")]
    HttpMethodNotAllowed,
    /// -32600, HTTP 415: the request body is not declared as `application/json`.
    #[error("Content-Type must be application/json")]
    UnsupportedMediaType,
}

impl JsonRpcError {
    /// An [`INTERNAL_ERROR`] (-32603) with `message` and no `data`.
    pub fn internal(message: impl Into<String>) -> Self {
        JsonRpcError {
            code: INTERNAL_ERROR,
            message: message.into(),
            data: None,
        }
    }
}

impl McpError {
    /// -32021 for a request that did not declare the Tasks extension.
    pub fn missing_tasks_capability() -> Self {
        McpError::MissingCapability(json!({ "extensions": { TASKS_EXTENSION: {} } }))
    }

    /// -32602 `Unknown tool`: a `tools/call` naming no tool of the server (MCP 2026-07-28
    /// tools, "Error Handling": an unknown tool is a protocol error), in either era.
    pub fn unknown_tool() -> Self {
        McpError::invalid_params("Unknown tool")
    }

    /// Shorthand for [`McpError::InvalidParams`].
    pub fn invalid_params(message: impl Into<String>) -> Self {
        McpError::InvalidParams(message.into())
    }

    /// Every JSON-RPC code an [`McpError`] has ([`McpError::code`]), each once: the codes this
    /// server answers with. A list outside this table (a metric's label values) derives from
    /// it rather than copying it.
    pub const CODES: [i64; 9] = [
        -32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022, -32001,
    ];

    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        match self {
            McpError::Parse => -32700,
            McpError::InvalidRequest(_)
            | McpError::BodyTooLarge { .. }
            | McpError::Unauthorized
            | McpError::ForbiddenOrigin
            | McpError::HttpMethodNotAllowed
            | McpError::UnsupportedMediaType
            | McpError::SessionRequired => -32600,
            McpError::MethodNotFound
            | McpError::InitializeNotServed
            | McpError::TaskSupportMismatch(_) => -32601,
            McpError::InvalidParams(_)
            | McpError::UnknownTask
            | McpError::UnknownResource(_)
            | McpError::UnknownSkill(_)
            | McpError::NotADirectory(_)
            | McpError::TaskInputTooLarge { .. } => -32602,
            McpError::CapacityExhausted(_)
            | McpError::Internal(_)
            | McpError::SessionLimit
            | McpError::StoreUnavailable
            | McpError::StoreOutcomeUnknown => INTERNAL_ERROR,
            McpError::HeaderMismatch(_) => -32020,
            McpError::MissingCapability(_) => -32021,
            McpError::UnsupportedVersion { .. } | McpError::UnsupportedLegacyVersion { .. } => {
                -32022
            }
            McpError::SessionNotFound => -32001,
        }
    }

    /// The HTTP status the Streamable HTTP transport answers with.
    pub fn http_status(&self) -> u16 {
        match self {
            McpError::MethodNotFound
            | McpError::InitializeNotServed
            | McpError::TaskSupportMismatch(_)
            | McpError::SessionNotFound => 404,
            McpError::BodyTooLarge { .. } => 413,
            McpError::Unauthorized => 401,
            McpError::ForbiddenOrigin => 403,
            McpError::HttpMethodNotAllowed => 405,
            McpError::UnsupportedMediaType => 415,
            McpError::SessionLimit | McpError::StoreUnavailable | McpError::StoreOutcomeUnknown => {
                503
            }
            McpError::CapacityExhausted(_) | McpError::Internal(_) => 500,
            _ => 400,
        }
    }

    /// The `data` member, when the error defines one.
    pub fn data(&self) -> Option<Value> {
        match self {
            McpError::CapacityExhausted(limit) => {
                Some(json!({ "retryable": true, "limit": limit.as_str() }))
            }
            McpError::SessionLimit => Some(json!({ "retryable": true, "limit": "max_sessions" })),
            McpError::StoreUnavailable => Some(json!({ "retryable": true })),
            McpError::StoreOutcomeUnknown => {
                Some(json!({ "retryable": true, "outcome": "unknown" }))
            }
            McpError::MissingCapability(required) => {
                Some(json!({ "requiredCapabilities": required }))
            }
            McpError::InitializeNotServed => Some(json!({ "supported": SUPPORTED_VERSIONS })),
            McpError::UnknownResource(uri)
            | McpError::UnknownSkill(uri)
            | McpError::NotADirectory(uri) => Some(json!({ "uri": uri })),
            McpError::UnsupportedVersion { requested } => Some(json!({
                "supported": SUPPORTED_VERSIONS,
                "requested": bounded_echo(requested),
            })),
            McpError::UnsupportedLegacyVersion { requested } => {
                let supported: Vec<&str> = SUPPORTED_VERSIONS
                    .iter()
                    .chain(LEGACY_VERSIONS)
                    .copied()
                    .collect();
                Some(json!({
                    "supported": supported,
                    "requested": bounded_echo(requested),
                }))
            }
            _ => None,
        }
    }

    /// The full JSON-RPC error object.
    pub fn to_error_object(&self) -> JsonRpcError {
        JsonRpcError {
            code: self.code(),
            message: self.to_string(),
            data: self.data(),
        }
    }
}

/// The longest client-supplied text an error echoes, in bytes (`data.requested` of -32022).
pub const MAX_ECHO_BYTES: usize = 64;

/// `text` cut to at most [`MAX_ECHO_BYTES`] bytes at a character boundary: an error names what
/// the client asked for without reflecting an arbitrarily large header or body value.
fn bounded_echo(text: &str) -> &str {
    if text.len() <= MAX_ECHO_BYTES {
        return text;
    }
    let mut end = MAX_ECHO_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The HTTP status for a JSON-RPC error code that did not come from [`McpError`] (for example
/// an error a tool returned to a synchronous call): -32601 → 404, -32603 → 500, the other
/// standard and MCP codes (-32700, -32600, -32602, -32020, -32021, -32022) → 400, any other
/// (application-defined) code → 500.
pub fn http_status_for_code(code: i64) -> u16 {
    match code {
        -32601 => 404,
        -32700 | -32600 | -32602 | -32020 | -32021 | -32022 => 400,
        _ => 500,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::{CapacityLimit, McpError};

    /// One error of every variant. The match below has no wildcard, so a new variant does not
    /// compile until it is listed here too.
    fn one_of_each() -> Vec<McpError> {
        let every = vec![
            McpError::Parse,
            McpError::InvalidRequest("x"),
            McpError::BodyTooLarge { limit: 1 },
            McpError::MethodNotFound,
            McpError::InitializeNotServed,
            McpError::InvalidParams("x".into()),
            McpError::UnknownTask,
            McpError::UnknownResource("x://y".into()),
            McpError::UnknownSkill("x://y".into()),
            McpError::NotADirectory("x://y".into()),
            McpError::TaskInputTooLarge { limit: 1 },
            McpError::CapacityExhausted(CapacityLimit::MaxJobs),
            McpError::Internal("x"),
            McpError::StoreUnavailable,
            McpError::StoreOutcomeUnknown,
            McpError::HeaderMismatch("x"),
            McpError::MissingCapability(json!({})),
            McpError::UnsupportedVersion {
                requested: "x".into(),
            },
            McpError::UnsupportedLegacyVersion {
                requested: "x".into(),
            },
            McpError::SessionRequired,
            McpError::SessionNotFound,
            McpError::TaskSupportMismatch("x"),
            McpError::SessionLimit,
            McpError::Unauthorized,
            McpError::ForbiddenOrigin,
            McpError::HttpMethodNotAllowed,
            McpError::UnsupportedMediaType,
        ];
        for error in &every {
            match error {
                McpError::Parse
                | McpError::InvalidRequest(_)
                | McpError::BodyTooLarge { .. }
                | McpError::MethodNotFound
                | McpError::InitializeNotServed
                | McpError::InvalidParams(_)
                | McpError::UnknownTask
                | McpError::UnknownResource(_)
                | McpError::UnknownSkill(_)
                | McpError::NotADirectory(_)
                | McpError::TaskInputTooLarge { .. }
                | McpError::CapacityExhausted(_)
                | McpError::Internal(_)
                | McpError::StoreUnavailable
                | McpError::StoreOutcomeUnknown
                | McpError::HeaderMismatch(_)
                | McpError::MissingCapability(_)
                | McpError::UnsupportedVersion { .. }
                | McpError::UnsupportedLegacyVersion { .. }
                | McpError::SessionRequired
                | McpError::SessionNotFound
                | McpError::TaskSupportMismatch(_)
                | McpError::SessionLimit
                | McpError::Unauthorized
                | McpError::ForbiddenOrigin
                | McpError::HttpMethodNotAllowed
                | McpError::UnsupportedMediaType => {}
            }
        }
        every
    }

    #[test]
    fn codes_are_exactly_the_codes_of_the_variants() {
        let of_variants: BTreeSet<i64> = one_of_each().iter().map(McpError::code).collect();
        let listed: BTreeSet<i64> = McpError::CODES.into_iter().collect();
        assert_eq!(listed.len(), McpError::CODES.len(), "each code once");
        assert_eq!(listed, of_variants);
    }
}
