//! The planner of the session path: one message of a 2025 session in, a [`SessionPlan`] out.
//!
//! Order (the 2025 revisions define each answer; the order is this server's):
//!
//! 1. `initialize` (a request): -32600 `Server already initialized` (HTTP 400) on a live
//!    session; -32602 for params without a string `protocolVersion` or with `capabilities`
//!    that is not an object; -32022 (HTTP 400) for a revision never served
//!    ([`super::negotiate`]); else a new session.
//! 2. No `Mcp-Session-Id`: -32600 (HTTP 400); an unknown one: -32001 (HTTP 404)
//!    ([`McpError::SessionRequired`], [`McpError::SessionNotFound`]).
//! 3. A response: handed to the request it answers. A notification: `initialized` moves the
//!    [`Phase`], `notifications/cancelled` names a request to stop, any other is accepted.
//! 4. A request: `ping`, `tools/list`, `tools/call`, `logging/setLevel`, and on a server
//!    offering them the prompts, resources and completion methods ([`crate::catalog`], without
//!    input rounds) with `resources/subscribe` and `resources/unsubscribe`; any other method is
//!    -32601. Errors from here on are JSON-RPC errors inside a session: the transport sends
//!    them with HTTP 200 ([`SessionPlan::Error`]), as 2025 clients read them.
//!
//! `tools/call` (MCP 2025-11-25 tools, "Calling Tools" and "Error Handling"): -32602 for bad
//! params or an unknown tool; in a session offered tasks, the hint against the tool's
//! `taskSupport` ([`super::tasks::decide`]: -32601 on a mismatch); arguments that fail the
//! `inputSchema` are a tool error result (`isError: true`), nothing run. A session not offered
//! tasks (2025-06-18) ignores the hint and runs every tool now (2025-11-25 tasks, "Task Support
//! and Handling"). `tasks/get`, `tasks/result` and `tasks/cancel` exist only in sessions
//! offered tasks (-32601 elsewhere); `tasks/list` only where advertised (the caller is identified; -32601 elsewhere).

use serde_json::Value;

use crate::admission::{Envelope, HeaderSource, Message, Response};
use crate::call::{invalid_arguments_result, parse_call, ToolRules as _};
use crate::catalog::{self, invalid_cursor, refuse_cursor, CatalogRequest, MAX_URI_BYTES};
use crate::error::McpError;
use crate::headers::{self, MirroredHeader};
use crate::id::TaskId;
use crate::logging::LogLevel;
use crate::method::{Feature, Method};
use crate::negotiation::progress_token;
use crate::params::parse_task_ref;
use crate::plan::ServerView;
use crate::protocol::{LEGACY_VERSIONS, METHOD_INITIALIZE};
use crate::JsonObject;

use super::session::Phase;
use super::tasks::{decide, parse_cursor, TaskHint};
use super::version::negotiate;
use super::wire::session_result;

/// What the transport found for the message's `Mcp-Session-Id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionView {
    /// The header is absent.
    Absent,
    /// The header names no live session.
    Unknown,
    /// A live session in this phase; `tasks` when its revision has tasks (2025-11-25).
    Live {
        /// Where the session is in its lifecycle.
        phase: Phase,
        /// Whether the session is offered tasks.
        tasks: bool,
        /// Whether it is offered `tasks/list` (its caller is identified).
        list: bool,
    },
}

/// What to do with one message of the session path; `T` is the server's tool handle
/// ([`ServerView::Tool`]).
#[derive(Debug, Clone, PartialEq)]
pub enum SessionPlan<T> {
    /// Open a session under `version` for a client declaring `client_capabilities`, and answer
    /// request `id` with the `InitializeResult` and the new `Mcp-Session-Id`.
    Initialize {
        /// The request id.
        id: Value,
        /// The negotiated revision.
        version: &'static str,
        /// The client's `capabilities` (`{}` when absent).
        client_capabilities: JsonObject,
    },
    /// Refused before reaching a session: answer `error` with its own HTTP status.
    Reject {
        /// The request id, when there is one.
        id: Option<Value>,
        /// The error.
        error: McpError,
    },
    /// A JSON-RPC error inside a live session: HTTP 200 with the error body.
    Error {
        /// The request id.
        id: Value,
        /// The error.
        error: McpError,
    },
    /// `notifications/initialized`: the session moves to [`Phase::Ready`]. HTTP 202.
    Initialized,
    /// `notifications/cancelled`: stop the session's request `request_id` (a request the
    /// client sent; its stream then ends without a response). HTTP 202.
    Cancelled {
        /// The id of the request to stop.
        request_id: Value,
    },
    /// Any other notification: accepted, nothing to do. HTTP 202.
    Accepted,
    /// The client's answer to a request the server sent on this session. HTTP 202 when such a
    /// request is outstanding.
    Answer(Response),
    /// Carry out `action` for request `id`.
    Run {
        /// The request id.
        id: Value,
        /// What to do.
        action: SessionAction<T>,
    },
}

/// The work of a request on the session path; `T` is the server's tool handle.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionAction<T> {
    /// `ping`: the empty result.
    Ping,
    /// `tools/list`: the 2025 tool list.
    ListTools,
    /// `logging/setLevel`: the session's log level from now on; the empty result.
    SetLevel(LogLevel),
    /// `tools/call`.
    Call(SessionCall<T>),
    /// `tasks/get`: the task, flat.
    GetTask(TaskId),
    /// `tasks/result`: block until the task is terminal, then its payload; its input requests
    /// go to the client meanwhile.
    TaskResult(TaskId),
    /// `tasks/cancel`: the task, now `cancelled` (-32602 when already terminal).
    CancelTask(TaskId),
    /// `tasks/list`: a page of the caller's tasks, after this task id (from the cursor).
    ListTasks(Option<TaskId>),
    /// A prompts, resources or completion request of a feature the server offers.
    Catalog(CatalogRequest),
    /// `resources/subscribe`: the session wants `notifications/resources/updated` for this URI.
    Subscribe(String),
    /// `resources/unsubscribe`: the session no longer wants updates of this URI.
    Unsubscribe(String),
}

/// A planned `tools/call` on the session path, carrying the tool the planner found (`T`, the
/// server's handle on it), so nothing looks it up again by name.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionCall<T> {
    /// The tool's name.
    pub name: String,
    /// The tool, as [`ServerView::tool`] answered it.
    pub tool: T,
    /// Its arguments.
    pub arguments: JsonObject,
    /// `params._meta.progressToken`, when the call asks for progress.
    pub progress_token: Option<Value>,
    /// `Some(result)` when the arguments fail the tool's `inputSchema`: answer this tool error
    /// result and run nothing.
    pub invalid_arguments: Option<JsonObject>,
    /// `Some(hint)` to create a task (a 2025-11-25 session's call with a `params.task` hint
    /// the tool accepts); `None` to run now.
    pub task: Option<TaskHint>,
}

/// Plans one message of the session path: see the module docs.
pub fn plan_session<H: HeaderSource + ?Sized, V: ServerView + ?Sized>(
    headers: &H,
    message: Message,
    session: SessionView,
    view: &V,
) -> SessionPlan<V::Tool> {
    let envelope = match message {
        Message::Envelope(envelope) if envelope.method == METHOD_INITIALIZE => {
            return plan_initialize(envelope, session)
        }
        Message::Envelope(envelope) => envelope,
        Message::Response(response) => {
            return match session_error(session) {
                Some(error) => SessionPlan::Reject { id: None, error },
                None => SessionPlan::Answer(response),
            }
        }
    };
    if let Some(error) = session_error(session).or_else(|| header_error(headers, &envelope)) {
        return SessionPlan::Reject {
            id: envelope.id,
            error,
        };
    }
    let tasks = matches!(session, SessionView::Live { tasks: true, .. });
    let list = matches!(session, SessionView::Live { list: true, .. });
    let Envelope { id, method, params } = envelope;
    let Some(id) = id else {
        return plan_notification(&method, params.as_ref());
    };
    let params = params.unwrap_or(Value::Null);
    let action = match method.as_str() {
        "ping" => Ok(SessionAction::Ping),
        "tools/list" => refuse_cursor(&params).map(|()| SessionAction::ListTools),
        "logging/setLevel" => params
            .get("level")
            .and_then(Value::as_str)
            .and_then(|level| level.parse::<LogLevel>().ok())
            .map(SessionAction::SetLevel)
            .ok_or_else(|| McpError::invalid_params("level must be a log level")),
        "tools/call" => plan_call(&params, view, tasks).map(SessionAction::Call),
        "resources/subscribe" | "resources/unsubscribe" if view.offers(Feature::Resources) => {
            params
                .get("uri")
                .and_then(Value::as_str)
                .filter(|uri| !uri.is_empty() && uri.len() <= MAX_URI_BYTES)
                .map(|uri| {
                    if method == "resources/subscribe" {
                        SessionAction::Subscribe(uri.to_owned())
                    } else {
                        SessionAction::Unsubscribe(uri.to_owned())
                    }
                })
                .ok_or_else(|| McpError::invalid_params("uri must be a string of 1 to 2048 bytes"))
        }
        // The Skills extension is defined on 2026-07-28 and later only: not in a session.
        other
            if Method::parse(other)
                .and_then(Method::feature)
                .is_some_and(|feature| feature != Feature::Skills && view.offers(feature)) =>
        {
            Method::parse(other)
                .ok_or(McpError::MethodNotFound)
                .and_then(|m| catalog::parse(m, &params, None))
                .map(SessionAction::Catalog)
        }
        "tasks/get" if tasks => task_id(&params).map(SessionAction::GetTask),
        "tasks/result" if tasks => task_id(&params).map(SessionAction::TaskResult),
        "tasks/cancel" if tasks => task_id(&params).map(SessionAction::CancelTask),
        "tasks/list" if tasks && list => match params.get("cursor") {
            None | Some(Value::Null) => Ok(SessionAction::ListTasks(None)),
            Some(Value::String(cursor)) => {
                parse_cursor(cursor).map(|after| SessionAction::ListTasks(Some(after)))
            }
            Some(_) => Err(invalid_cursor()),
        },
        _ => Err(McpError::MethodNotFound),
    };
    match action {
        Ok(action) => SessionPlan::Run { id, action },
        Err(error) => SessionPlan::Error { id, error },
    }
}

/// The headers of a session message, when present, must fit it (MCP 2025-11-25 transports,
/// "Protocol Version Header": an invalid or unsupported version is HTTP 400): the version one
/// of the served 2025 revisions (-32022), and an `Mcp-Method` equal to the body's method
/// (-32020; 2025 clients send none, and a gateway routing by it must not be misled).
fn header_error<H: HeaderSource + ?Sized>(headers: &H, envelope: &Envelope) -> Option<McpError> {
    if let Some(raw) = headers
        .values(MirroredHeader::ProtocolVersion.name())
        .next()
    {
        let version = headers::decode_value(MirroredHeader::ProtocolVersion, raw).ok();
        if !version
            .as_deref()
            .is_some_and(|v| LEGACY_VERSIONS.contains(&v))
        {
            return Some(McpError::UnsupportedVersion {
                requested: version.map_or_else(|| "unknown".to_owned(), |v| v.into_owned()),
            });
        }
    }
    let method = headers.values(MirroredHeader::Method.name()).next()?;
    headers::check_mirrored(MirroredHeader::Method, Some(method), Some(&envelope.method)).err()
}

fn session_error(session: SessionView) -> Option<McpError> {
    match session {
        SessionView::Absent => Some(McpError::SessionRequired),
        SessionView::Unknown => Some(McpError::SessionNotFound),
        SessionView::Live { .. } => None,
    }
}

fn plan_initialize<T>(envelope: Envelope, session: SessionView) -> SessionPlan<T> {
    let Some(id) = envelope.id else {
        return SessionPlan::Reject {
            id: None,
            error: McpError::InvalidRequest("initialize must be a request"),
        };
    };
    let reject = |error| SessionPlan::Reject {
        id: Some(id.clone()),
        error,
    };
    if matches!(session, SessionView::Live { .. }) {
        return reject(McpError::InvalidRequest(
            "Invalid Request: Server already initialized",
        ));
    }
    let params = envelope.params.unwrap_or(Value::Null);
    let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
        return reject(McpError::invalid_params(
            "initialize requires a string protocolVersion",
        ));
    };
    let client_capabilities = match params.get("capabilities") {
        None | Some(Value::Null) => JsonObject::new(),
        Some(Value::Object(capabilities)) => match retained_capabilities(capabilities) {
            Some(kept) => kept,
            None => {
                return reject(McpError::invalid_params(
                    "capabilities are larger than 4096 bytes",
                ))
            }
        },
        Some(_) => return reject(McpError::invalid_params("capabilities must be an object")),
    };
    match negotiate(requested) {
        Ok(version) => SessionPlan::Initialize {
            id,
            version,
            client_capabilities,
        },
        Err(error) => reject(error),
    }
}

/// The client capabilities a session keeps: those a tool's input requests are checked
/// against (`elicitation`, `sampling`, `roots`), at most [`MAX_CAPABILITY_BYTES`] of them
/// (`None` when they are larger), and the client's declared `extensions` (SEP-2133 legacy
/// negotiation, which a tool reads from its context), an object, when they fit within the same bound
/// beside them (else they are not kept, and the session is still opened: before sessions kept
/// them, a client's extensions never refused its `initialize`). A session lives long, so
/// nothing else the client sent is kept.
pub(crate) fn retained_capabilities(capabilities: &JsonObject) -> Option<JsonObject> {
    let size = |kept: &JsonObject| serde_json::to_vec(kept).map_or(usize::MAX, |b| b.len());
    let mut kept: JsonObject = ["elicitation", "sampling", "roots"]
        .into_iter()
        .filter_map(|key| Some((key.to_owned(), capabilities.get(key)?.clone())))
        .collect();
    if size(&kept) > MAX_CAPABILITY_BYTES {
        return None;
    }
    if let Some(extensions @ Value::Object(_)) = capabilities.get("extensions") {
        kept.insert("extensions".to_owned(), extensions.clone());
        if size(&kept) > MAX_CAPABILITY_BYTES {
            kept.remove("extensions");
        }
    }
    Some(kept)
}

/// The most bytes of client capabilities a session keeps ([`retained_capabilities`]).
pub(crate) const MAX_CAPABILITY_BYTES: usize = 4096;

fn plan_notification<T>(method: &str, params: Option<&Value>) -> SessionPlan<T> {
    match method {
        "notifications/initialized" => SessionPlan::Initialized,
        "notifications/cancelled" => match params.and_then(|p| p.get("requestId")) {
            Some(id) if id.is_string() || id.is_i64() || id.is_u64() => SessionPlan::Cancelled {
                request_id: id.clone(),
            },
            _ => SessionPlan::Accepted,
        },
        _ => SessionPlan::Accepted,
    }
}

/// `params.taskId` of a task method, parsed as the 2026 task methods do (a `related-task`
/// `_meta` is ignored: the param wins).
fn task_id(params: &Value) -> Result<TaskId, McpError> {
    parse_task_ref(params).map(|target| target.task_id)
}

fn plan_call<V: ServerView + ?Sized>(
    params: &Value,
    view: &V,
    tasks: bool,
) -> Result<SessionCall<V::Tool>, McpError> {
    if !params.is_object() {
        return Err(McpError::invalid_params("params must be an object"));
    }
    let call = parse_call(params)?;
    let tool = view.tool(call.name).ok_or_else(McpError::unknown_tool)?;
    let progress_token = match params.get("_meta").and_then(Value::as_object) {
        Some(meta) => progress_token(meta)?,
        None => None,
    };
    // Without tasks offered, a hint is ignored and every tool runs now (2025-11-25 tasks, "Task
    // Support and Handling").
    let task = if tasks {
        let no_params = JsonObject::new();
        let policy = tool.policy_for(params.as_object().unwrap_or(&no_params));
        decide(policy, TaskHint::parse(params)?)?
    } else {
        None
    };
    let invalid_arguments = tool
        .validate_arguments(call.arguments)
        .err()
        .map(|message| session_result(invalid_arguments_result(message)));
    Ok(SessionCall {
        name: call.name.to_owned(),
        tool,
        arguments: call.arguments.clone(),
        progress_token,
        invalid_arguments,
        task,
    })
}
