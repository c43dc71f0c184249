//! The 2025 session path of the endpoint: what the core's session planner
//! ([`tasks_core::legacy`]) decides, carried out on the runtime and the session table.
//!
//! * POST: `initialize` opens a session (its id in the `Mcp-Session-Id` response header);
//!   `ping`, `tools/list`, `tools/call` ([`call`]) and `logging/setLevel` are served;
//!   notifications and the client's answers to the server's requests get HTTP 202.
//! * GET with a session's id opens its standalone SSE stream (one at a time: a second is
//!   HTTP 409), which carries `notifications/tools/list_changed` when the tool list can change
//!   and closes when the session ends or the server shuts down. No `Last-Event-ID` replay:
//!   streams are not resumable.
//! * DELETE with a session's id ends it (HTTP 200): its streams close, its running calls stop,
//!   and its id is unknown from then on (HTTP 404).
//!
//! Sources: MCP 2025-11-25 transports ("Streamable HTTP", "Session Management",
//! "Listening for Messages from the Server"):
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>; lifecycle:
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>.

pub(crate) mod call;
pub(crate) mod sessions;

use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream;
use http::request::Parts;
use http::HeaderMap;
use serde_json::Value;
use tasks_core::admission::Message;
use tasks_core::legacy::wire::{
    empty_result, Implementation, InitializeResult, LegacyTool, LegacyToolsList, ServerCapabilities,
};
use tasks_core::legacy::{
    plan_legacy, LegacyAction, LegacyPlan, SessionId, SessionView, SESSION_HEADER,
};
use tasks_core::listen::ListKind;
use tasks_core::McpError;
use tasks_runtime::{Scope, ToolRegistry};
use tokio::sync::broadcast::error::RecvError;

use crate::response::{notification_bytes, McpResponse};
use crate::shared::{Shared, View};
use sessions::{Session, Sessions};

/// The session named by the request's `Mcp-Session-Id`, as the planner sees it.
fn lookup(
    sessions: &Sessions,
    headers: &HeaderMap,
    scope: &Scope,
) -> (SessionView, Option<Arc<Session>>) {
    if !headers.contains_key(SESSION_HEADER) {
        return (SessionView::Absent, None);
    }
    let session = session_id(headers).and_then(|id| sessions.get(&id, scope));
    match session {
        Some(session) => (SessionView::Live(session.phase()), Some(session)),
        None => (SessionView::Unknown, None),
    }
}

/// Serves one POSTed message of the session path.
pub(crate) async fn post(
    d: &Shared,
    sessions: &Sessions,
    headers: &HeaderMap,
    message: Message,
    scope: Scope,
    view: &View<'_>,
) -> (McpResponse, Option<i64>) {
    let (found, session) = lookup(sessions, headers, &scope);
    let fail = |id: Option<&Value>, error: McpError| {
        let code = error.code();
        (McpResponse::error(id, &error), Some(code))
    };
    match plan_legacy(message, found, view) {
        LegacyPlan::Initialize {
            id,
            version,
            client_capabilities,
        } => match sessions.open(version, scope, client_capabilities) {
            Ok(session) => {
                let result = InitializeResult {
                    protocol_version: version,
                    capabilities: ServerCapabilities::for_session(d.config.list_changes.is_some()),
                    server_info: Implementation {
                        name: d.config.server_name.clone(),
                        version: d.config.server_version.clone(),
                    },
                    instructions: d.config.instructions.clone(),
                };
                let mut response = McpResponse::result(&id, &result);
                response.session_id = Some(session.id.as_str().to_owned());
                (response, None)
            }
            Err(error) => fail(Some(&id), error),
        },
        LegacyPlan::Reject { id, error } => fail(id.as_ref(), error),
        LegacyPlan::Error { id, error } => {
            let code = error.code();
            (
                McpResponse::session_error(&id, &error.to_error_object()),
                Some(code),
            )
        }
        LegacyPlan::Initialized => {
            if let Some(session) = session {
                session.initialized();
            }
            (McpResponse::accepted(), None)
        }
        LegacyPlan::Cancelled { request_id } => {
            if let Some(session) = session {
                session.cancel(&request_id);
            }
            (McpResponse::accepted(), None)
        }
        LegacyPlan::Accepted => (McpResponse::accepted(), None),
        LegacyPlan::Answer(answer) => {
            let taken = session.is_some_and(|s| s.answer(&answer.id, answer.outcome));
            if taken {
                (McpResponse::accepted(), None)
            } else {
                fail(
                    None,
                    McpError::InvalidRequest("No outstanding request has this id"),
                )
            }
        }
        LegacyPlan::Run { id, action } => {
            let Some(session) = session else {
                return fail(Some(&id), McpError::SessionNotFound);
            };
            let response = run(session, id, action, &view.tools).await;
            (response, None)
        }
    }
}

async fn run(
    session: Arc<Session>,
    id: Value,
    action: LegacyAction,
    tools: &Arc<ToolRegistry>,
) -> McpResponse {
    match action {
        LegacyAction::Ping => McpResponse::result(&id, &empty_result()),
        LegacyAction::SetLevel(level) => {
            session.set_log_level(level);
            McpResponse::result(&id, &empty_result())
        }
        LegacyAction::ListTools => McpResponse::result(&id, &tools_list(tools)),
        LegacyAction::Call(call) => {
            let Some(tool) = tools.get(&call.name).cloned() else {
                let error = McpError::invalid_params("Unknown tool");
                return McpResponse::session_error(&id, &error.to_error_object());
            };
            let in_flight = session.serve(&id);
            call::run(session, id, tool, call, in_flight).await
        }
    }
}

/// The 2025 `tools/list` result: every tool, in registration order.
fn tools_list(tools: &ToolRegistry) -> LegacyToolsList {
    LegacyToolsList {
        tools: tools
            .iter()
            .map(|tool| LegacyTool {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                input_schema: tool.input_schema().clone(),
                annotations: tool.annotations().cloned(),
                execution: None,
            })
            .collect(),
    }
}

/// Whether a GET or DELETE may be for the session path: the path is on and the request
/// carries `Mcp-Session-Id` (checked before the caller's scope is known).
pub(crate) fn may_name_session(d: &Shared, parts: &Parts) -> bool {
    d.sessions.is_some()
        && (parts.method == http::Method::GET || parts.method == http::Method::DELETE)
        && parts.headers.contains_key(SESSION_HEADER)
}

/// Whether the request's `Mcp-Session-Id` names a live session of `scope`. A GET or DELETE
/// naming none is answered as on the 2026 path (HTTP 405), where a stale session id is
/// ignored.
pub(crate) fn names_live_session(d: &Shared, parts: &Parts, scope: &Scope) -> bool {
    d.sessions.as_ref().is_some_and(|sessions| {
        session_id(&parts.headers).is_some_and(|id| sessions.get(&id, scope).is_some())
    })
}

/// The one `Mcp-Session-Id` of a request, when it has the minted shape.
fn session_id(headers: &HeaderMap) -> Option<SessionId> {
    let mut values = headers.get_all(SESSION_HEADER).iter();
    let raw = values.next()?;
    values
        .next()
        .is_none()
        .then(|| SessionId::parse(raw.as_bytes()))
        .flatten()
}

/// Serves a GET (the standalone stream) or DELETE (end the session) of the session path.
pub(crate) fn get_or_delete(d: &Shared, parts: &Parts, scope: &Scope) -> McpResponse {
    let Some(sessions) = &d.sessions else {
        return McpResponse::error(None, &McpError::HttpMethodNotAllowed);
    };
    let id = session_id(&parts.headers);
    if parts.method == http::Method::DELETE {
        return match id {
            Some(id) if sessions.end(&id, scope) => McpResponse::empty(200),
            _ => McpResponse::error(None, &McpError::HttpMethodNotAllowed),
        };
    }
    let Some(session) = id.and_then(|id| sessions.get(&id, scope)) else {
        return McpResponse::error(None, &McpError::HttpMethodNotAllowed);
    };
    let Some(claim) = session.open_stream() else {
        return McpResponse::error(None, &McpError::StreamAlreadyOpen);
    };
    let changes = d.config.list_changes.as_ref().map(|c| c.subscribe());
    let shutdown = d.shutdown.clone();
    let state = (claim, changes, shutdown);
    let messages = stream::unfold(state, |(claim, mut changes, shutdown)| async move {
        let ended = claim.session().ended.clone();
        loop {
            let change = async {
                match &mut changes {
                    Some(receiver) => Some(receiver.recv().await),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = ended.cancelled() => return None,
                () = shutdown.cancelled() => return None,
                change = change => match change {
                    // A lagging receiver missed announcements: one notification covers them.
                    Some(Ok(ListKind::Tools) | Err(RecvError::Lagged(_))) => {
                        let frame: Bytes = notification_bytes(
                            "notifications/tools/list_changed",
                            &serde_json::Map::new(),
                        );
                        return Some((frame, (claim, changes, shutdown)));
                    }
                    Some(Ok(_)) => {}
                    Some(Err(RecvError::Closed)) | None => changes = None,
                },
            }
        }
    });
    McpResponse::stream(Box::pin(messages))
}
