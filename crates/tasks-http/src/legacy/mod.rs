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

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream;
use http::request::Parts;
use http::HeaderMap;
use serde_json::Value;
use tasks_core::catalog::{capabilities, CatalogRequest};
use tasks_core::plan::Message;
use tasks_core::sessions::tasks::{creation, SessionTaskView};
use tasks_core::sessions::wire::{
    empty_result, Implementation, InitializeResult, ServerCapabilities,
};
use tasks_core::sessions::{plan_session, SessionAction, SessionId, SessionPlan, SESSION_HEADER};
use tasks_core::{McpError, TaskId};
use tasks_runtime::{Caller, Feed, FeedEvent, Scope, TaskRuntime, ToolRegistry, Wake};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::head::Head;
use crate::response::McpResponse;
use crate::shared::{Shared, View};
use tasks_core::sessions::session::{Effect, SessionStream};
use tasks_runtime::session::tasks as session_tasks;
use tasks_runtime::session::{deliver, Frame, Session, Sessions, StreamClaim};

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
                    .with_features(features),
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
    limits: Option<tasks_runtime::session::SessionConfig>,
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
    let claim = session.open_stream();
    let (frames_tx, frames) = mpsc::channel(16);
    let stop = claim.token.child_token();
    let lists = d.config.list_changes.as_ref();
    // Subscribed before the first read of the session's tasks (in the first `next`).
    let changes = claim.session().tasks.then(|| d.runtime.changes());
    let stream = GetStream {
        feed: Feed::new(changes, lists, true, true),
        shutdown: d.shutdown.clone(),
        runtime: d.runtime.clone(),
        frames,
        frames_tx,
        session: claim.session().clone(),
        claim,
        machine: SessionStream::new(),
        deliveries: HashMap::new(),
        primed: false,
        _stop: stop.clone().drop_guard(),
        stop,
    };
    let messages = stream::unfold(stream, |mut stream| async move {
        let frame = stream.next().await?;
        Some((frame, stream))
    });
    McpResponse::stream(Box::pin(messages))
}

/// A session's standalone GET stream: the driver of the core's [`SessionStream`], which decides
/// what goes out (`notifications/tasks/status` and `notifications/progress` of the tasks this
/// session created, list changes, updates of subscribed resources) and when the input requests
/// of those tasks are delivered here ([`deliver`]: while no `tasks/result` delivers them, so a
/// client that polls `tasks/get` until the task ends is asked too) or withdrawn (the task is
/// gone, ended, or answered elsewhere). It follows the runtime's changes ([`Feed`]): after a
/// feed resync, after falling behind, and on the guard interval it re-reads the session's
/// unfinished tasks, so no single lost notification keeps a status or an input request from
/// it. Ends with the session, a newer GET stream, or the server.
///
/// A task's questions go out here only once the client has named the task in a request
/// (`tasks/get` or `tasks/result`, [`TaskBook::named`](tasks_core::sessions::session::TaskBook::named)):
/// a question sent as soon as the task asks could reach the client before the
/// `CreateTaskResult` that tells it the task exists, and a client cannot match it to anything
/// (the official Tasks client library answers it with an error). A poll that finds its task
/// waiting for input asks this stream to deliver ([`Session::nudge`]).
struct GetStream {
    claim: StreamClaim,
    session: Arc<Session>,
    /// Task changes (in a session offered tasks), list announcements, and resource updates.
    feed: Feed,
    shutdown: CancellationToken,
    runtime: TaskRuntime,
    /// Server-to-client requests of the deliveries this stream runs.
    frames: mpsc::Receiver<Frame>,
    frames_tx: mpsc::Sender<Frame>,
    /// The core's decisions.
    machine: SessionStream,
    /// The token stopping each task's delivery on this stream.
    deliveries: HashMap<TaskId, CancellationToken>,
    /// Whether the session's tasks waiting for input when the stream opened were delivered.
    primed: bool,
    /// The parent of this stream's deliveries, stopped when the stream is dropped.
    stop: CancellationToken,
    _stop: DropGuard,
}

impl GetStream {
    /// Carries out the machine's effects: a delivery of a task's input requests runs in the
    /// background under the task's delivery token (a new one when it has none running); a
    /// withdrawal stops it.
    fn apply(&mut self) {
        while let Some(effect) = self.machine.poll_effect() {
            match effect {
                Effect::Deliver(task) => {
                    let stop = match self.deliveries.get(task.id()) {
                        Some(stop) if !stop.is_cancelled() => stop.clone(),
                        _ => {
                            let stop = self.stop.child_token();
                            self.deliveries.insert(task.id().clone(), stop.clone());
                            stop
                        }
                    };
                    let (runtime, session) = (self.runtime.clone(), self.session.clone());
                    let tx = self.frames_tx.clone();
                    tokio::spawn(async move {
                        deliver(&runtime, &session, &task, &tx, &stop).await;
                    });
                }
                Effect::Withdraw(id) => {
                    if let Some(stop) = self.deliveries.remove(&id) {
                        stop.cancel();
                    }
                }
            }
        }
    }

    /// A change from the runtime's feed.
    async fn wake(&mut self, wake: Wake) {
        let (session, machine) = (&self.session, &mut self.machine);
        match wake {
            Wake::Status(event) => session.book(|book| {
                machine.on_status(book, event.scope == session.scope, &event.task);
            }),
            Wake::Removed(id) => session.book(|book| machine.on_removed(book, &id)),
            // Changes may have been missed: the unfinished tasks are read again.
            Wake::Reread { .. } => self.reread(true).await,
            _ => {}
        }
    }

    /// When the stream opens: the changes already queued are handled (announced), then the
    /// session's tasks are read once, their states taken as known and those waiting for input
    /// delivered (a reconnecting client's tasks stay answerable). A change made while that
    /// read runs may go unannounced; a status notification is optional, and the task's input
    /// requests are delivered either way.
    async fn prime(&mut self) {
        while let Some(wake) = self.feed.queued() {
            if !matches!(wake, Wake::Reread { .. }) {
                self.wake(wake).await;
            }
        }
        self.reread(false).await;
    }

    /// Re-reads the session's tasks the machine asks for.
    async fn reread(&mut self, announce: bool) {
        let ids = self.session.book(|book| self.machine.to_reread(book));
        if ids.is_empty() {
            return;
        }
        match self.runtime.read_many(&self.session.scope, &ids).await {
            Ok(tasks) => {
                let machine = &mut self.machine;
                self.session
                    .book(|book| machine.on_read(book, &ids, &tasks, announce));
            }
            Err(error) => tracing::warn!(%error, "re-reading a session's tasks failed"),
        }
    }

    async fn next(&mut self) -> Option<Bytes> {
        let ended = self.claim.token.clone();
        if !self.primed {
            self.primed = true;
            if self.session.tasks {
                self.prime().await;
            }
        }
        loop {
            self.apply();
            if let Some(frame) = self.machine.poll_frame() {
                return Some(Bytes::from(frame));
            }
            let event = tokio::select! {
                biased;
                () = ended.cancelled() => return None,
                () = self.shutdown.cancelled() => return None,
                Some(frame) = self.frames.recv() => match frame {
                    Frame::Message(bytes) | Frame::Final(bytes) => return Some(bytes),
                },
                // A poll read the task (waiting for input) after the client named it.
                Some(task) = self.claim.nudges.recv() => {
                    self.machine.on_nudge(&task);
                    continue;
                }
                event = self.feed.next() => event,
            };
            let catalog = self.runtime.catalog();
            match event {
                FeedEvent::Task(wake) => self.wake(wake).await,
                FeedEvent::TasksEnded => {}
                FeedEvent::ListChanged(kind) => {
                    self.machine.on_list_changed(kind, catalog.has_list(kind));
                }
                FeedEvent::ListsLagged => self.machine.on_lists_lagged(|k| catalog.has_list(k)),
                FeedEvent::ResourceUpdated(uri) => {
                    let subscribed = self.session.subscribed(&uri);
                    self.machine.on_resource_updated(&uri, subscribed);
                }
            }
        }
    }
}
