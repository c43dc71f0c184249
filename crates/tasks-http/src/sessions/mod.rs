//! The 2025 session path of the endpoint: what the core's session planner
//! ([`tasks_core::sessions`]) decides, carried out on the runtime and the session table.
//!
//! * POST: `initialize` opens a session (its id in the `Mcp-Session-Id` response header);
//!   `ping`, `tools/list`, `tools/call` ([`call`]) and `logging/setLevel` are served, and in
//!   a 2025-11-25 session the task methods ([`tasks`]); notifications and the client's answers
//!   to the server's requests get HTTP 202. The server's shutdown ends every session.
//! * GET with a session's id opens its standalone SSE stream (one at a time: a newer GET
//!   replaces the open one, which ends), which carries `notifications/tools/list_changed` when
//!   the tool list can change and, in a 2025-11-25 session, `notifications/tasks/status` for
//!   the tasks the session created, and `notifications/progress` for those whose creating call
//!   carried a `progressToken` (tasks, "Task Progress Notifications": the token stays valid for
//!   the task's lifetime; the values are the progress the task's work reports,
//!   [`tasks_runtime::ToolContext::progress`]); it closes when the session ends or the server
//!   shuts down.
//!   No `Last-Event-ID` replay: streams are not resumable. A GET or DELETE naming no live
//!   session of the caller is HTTP 405, the 2026-07-28 answer (a stale session id is ignored
//!   there).
//! * DELETE with a session's id ends it (HTTP 200): its streams close, its running calls stop,
//!   and its id is unknown from then on (a POST naming it is HTTP 404).
//!
//! Sources: MCP 2025-11-25 transports ("Streamable HTTP", "Session Management",
//! "Listening for Messages from the Server"):
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>; lifecycle:
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>.

mod call;
mod frames;
mod tasks;

use std::sync::Arc;

use http::request::Parts;
use http::HeaderMap;
use serde_json::Value;
use tasks_core::catalog::{capabilities, CatalogRequest};
use tasks_core::plan::Message;
use tasks_core::sessions::session::SessionId;
use tasks_core::sessions::tasks::{creation, SessionTaskView};
use tasks_core::sessions::wire::{
    empty_result, Implementation, InitializeResult, ServerCapabilities,
};
use tasks_core::sessions::{plan_session, SessionAction, SessionPlan, SESSION_HEADER};
use tasks_core::McpError;
use tasks_runtime::{Caller, Scope, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::head::Head;
use crate::response::McpResponse;
use crate::shared::{Shared, View};
use tasks_runtime::sessions::tasks as session_tasks;
use tasks_runtime::sessions::{standalone_stream, Session, Sessions};

/// Serves one POSTed message of the session path: the response, and the error it answers
/// (`None` for a result, an accepted message or a stream).
pub(crate) async fn post(
    d: &Shared,
    sessions: &Sessions,
    headers: &HeaderMap,
    message: Message,
    caller: Caller,
    view: &View<'_>,
) -> (McpResponse, Option<McpError>) {
    let (found, session) = sessions.lookup(&Head(headers), &caller.scope);
    let fail = |id: Option<&Value>, error: McpError| (McpResponse::error(id, &error), Some(error));
    match plan_session(&Head(headers), message, found, view) {
        SessionPlan::Initialize {
            id,
            version,
            client_capabilities,
        } => match sessions.open(version, caller, client_capabilities) {
            Ok(session) => {
                let announces = d.config.list_changes.is_some();
                let catalog = d.runtime.catalog();
                // The features offered beside tools ([`tasks_core::catalog::capabilities`]).
                let features = capabilities(|feature| catalog.offers(feature), announces);
                let result = InitializeResult {
                    protocol_version: version,
                    capabilities: ServerCapabilities::for_session(
                        announces,
                        session.tasks,
                        session.list,
                    )
                    .with_features(features)
                    .with_extensions(&d.config.session_extensions),
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
        SessionPlan::Reject { id, error } => fail(id.as_ref(), error),
        SessionPlan::Error { id, error } => (
            McpResponse::session_error(&id, &error.to_error_object()),
            Some(error),
        ),
        SessionPlan::Initialized => {
            if let Some(session) = session {
                session.initialized();
            }
            (McpResponse::accepted(), None)
        }
        SessionPlan::Cancelled { request_id } => {
            if let Some(session) = session {
                session.cancel(&request_id);
            }
            (McpResponse::accepted(), None)
        }
        SessionPlan::Accepted => (McpResponse::accepted(), None),
        SessionPlan::Answer(answer) => {
            let refused = McpError::InvalidRequest("No outstanding request has this id");
            match session.map_or(Err(refused), |s| s.answer(&answer.id, answer.outcome)) {
                Ok(()) => (McpResponse::accepted(), None),
                Err(error) => fail(None, error),
            }
        }
        SessionPlan::Run { id, action } => {
            let Some(session) = session else {
                return fail(Some(&id), McpError::SessionNotFound);
            };
            run(d, session, id, action, &view.tools).await
        }
    }
}

/// Runs a planned session request: its response, and the error it answers (in the body of an
/// HTTP 200, as a 2025 session answers errors).
async fn run(
    d: &Shared,
    session: Arc<Session>,
    id: Value,
    action: SessionAction<Arc<tasks_runtime::Tool>>,
    tools: &Arc<ToolRegistry>,
) -> (McpResponse, Option<McpError>) {
    match answer(d, session, &id, action, tools).await {
        Ok(response) => (response, None),
        Err(error) => (
            McpResponse::session_error(&id, &error.to_error_object()),
            Some(error),
        ),
    }
}

/// The answer to a planned session request.
async fn answer(
    d: &Shared,
    session: Arc<Session>,
    id: &Value,
    action: SessionAction<Arc<tasks_runtime::Tool>>,
    tools: &Arc<ToolRegistry>,
) -> Result<McpResponse, McpError> {
    let (runtime, scope) = (&d.runtime, &session.scope);
    let empty = || McpResponse::result(id, &empty_result());
    let flat = |task: Arc<tasks_core::Task>| McpResponse::result(id, &SessionTaskView(&task));
    Ok(match action {
        SessionAction::Ping => empty(),
        SessionAction::SetLevel(level) => {
            session.set_log_level(level);
            empty()
        }
        SessionAction::ListTools => McpResponse::result(id, &tools.session_list(session.tasks)),
        SessionAction::Call(mut call) => match call.task.take() {
            Some(hint) if call.invalid_arguments.is_none() => {
                let task = session_tasks::create(runtime, &session, call, hint).await?;
                McpResponse::result(id, &creation(&task))
            }
            _ => {
                let in_flight = session.serve(id)?;
                call::run(session, id.clone(), call, in_flight).await
            }
        },
        SessionAction::GetTask(task) => flat(session_tasks::get(runtime, &session, &task).await?),
        SessionAction::CancelTask(task) => {
            flat(session_tasks::cancel(runtime, scope, &task).await?)
        }
        SessionAction::ListTasks(after) => tasks::list(d, scope, id, after.as_ref()).await?,
        SessionAction::Catalog(CatalogRequest::GetPrompt(request)) => {
            let prompt = crate::methods::catalog::find_prompt(&runtime.catalog(), &request)?;
            let in_flight = session.serve(id)?;
            let arguments = request.arguments;
            call::run_prompt(session, id.clone(), prompt, arguments, in_flight).await
        }
        SessionAction::Catalog(request) => {
            let principal = session.principal.clone();
            Box::pin(crate::methods::catalog::handle_session(
                d, id, principal, request,
            ))
            .await?
        }
        SessionAction::Subscribe(uri) => {
            session.subscribe(uri)?;
            empty()
        }
        SessionAction::Unsubscribe(uri) => {
            session.unsubscribe(&uri);
            empty()
        }
        SessionAction::TaskResult(task) => {
            let in_flight = session.serve(id)?;
            tasks::result(d, session, id.clone(), task, in_flight).await?
        }
    })
}

/// The session table, when the session path is on (`limits`).
pub(crate) fn table(
    limits: Option<tasks_runtime::sessions::SessionConfig>,
    shutdown: &CancellationToken,
    entropy: &tasks_runtime::Randomness,
) -> Option<Sessions> {
    limits.map(|limits| Sessions::new(limits, shutdown.clone(), entropy.clone()))
}

/// Whether a GET or DELETE may be for the session path: the path is on and the request
/// carries `Mcp-Session-Id` (checked before the caller's scope is known).
pub(crate) fn may_name_session(d: &Shared, parts: &Parts) -> bool {
    d.sessions.is_some()
        && (parts.method == http::Method::GET || parts.method == http::Method::DELETE)
        && parts.headers.contains_key(SESSION_HEADER)
}

/// Serves a GET (the standalone stream) or DELETE (end the session) of the session path.
pub(crate) fn get_or_delete(d: &Shared, parts: &Parts, scope: &Scope) -> McpResponse {
    let Some(sessions) = &d.sessions else {
        return McpResponse::error(None, &McpError::HttpMethodNotAllowed);
    };
    let id = SessionId::of(&Head(&parts.headers));
    if parts.method == http::Method::DELETE {
        return match id {
            Some(id) if sessions.end(&id, scope) => McpResponse::empty(200),
            _ => McpResponse::error(None, &McpError::HttpMethodNotAllowed),
        };
    }
    let Some(session) = id.and_then(|id| sessions.get(&id, scope)) else {
        return McpResponse::error(None, &McpError::HttpMethodNotAllowed);
    };
    let lists = d.config.list_changes.as_ref();
    let messages = standalone_stream(&d.runtime, session.open_stream(), lists, &d.shutdown);
    McpResponse::stream(Box::pin(messages))
}
