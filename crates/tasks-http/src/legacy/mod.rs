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

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream;
use http::request::Parts;
use http::HeaderMap;
use serde_json::Value;
use tasks_core::admission::Message;
use tasks_core::catalog::CatalogRequest;
use tasks_core::input::missing_capabilities;
use tasks_core::listen::ListKind;
use tasks_core::sessions::tasks::{creation, SessionTaskView};
use tasks_core::sessions::wire::{
    empty_result, Implementation, InitializeResult, ServerCapabilities,
};
use tasks_core::sessions::{
    plan_session, SessionAction, SessionCall, SessionId, SessionPlan, SessionView, SESSION_HEADER,
};
use tasks_core::{McpError, Task, TaskId};
use tasks_runtime::{Caller, Feed, FeedEvent, Scope, TaskRuntime, ToolRegistry, Wake};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::head::Head;
use crate::response::{notification_bytes, McpResponse};
use crate::shared::{Shared, View};
use tasks_core::sessions::session::{self, Seen, Step, MAX_SESSION_TASKS};
use tasks_runtime::session::tasks::{self as session_tasks, Creating};
use tasks_runtime::session::{deliver, Frame, Session, Sessions, StreamClaim};

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
        Some(session) => (
            SessionView::Live {
                phase: session.phase(),
                tasks: session.tasks,
                list: session.list,
            },
            Some(session),
        ),
        None => (SessionView::Unknown, None),
    }
}

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
    let (found, session) = lookup(sessions, headers, &caller.scope);
    let fail = |id: Option<&Value>, error: McpError| (McpResponse::error(id, &error), Some(error));
    match plan_session(&Head(headers), message, found, view) {
        SessionPlan::Initialize {
            id,
            version,
            client_capabilities,
        } => match sessions.open(version, caller, client_capabilities) {
            Ok(session) => {
                let result = InitializeResult {
                    protocol_version: version,
                    capabilities: ServerCapabilities::for_session(
                        d.config.list_changes.is_some(),
                        session.tasks,
                        session.list,
                    )
                    .with_features(d.feature_capabilities()),
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
    let scope = session.scope.clone();
    let answer = match action {
        SessionAction::Ping => Ok(McpResponse::result(&id, &empty_result())),
        SessionAction::SetLevel(level) => {
            session.set_log_level(level);
            Ok(McpResponse::result(&id, &empty_result()))
        }
        SessionAction::ListTools => {
            Ok(McpResponse::result(&id, &tools.session_list(session.tasks)))
        }
        SessionAction::Call(call) => match (call.tool.clone(), call.task) {
            (tool, Some(hint)) if call.invalid_arguments.is_none() => {
                // A capability the tool always needs is checked before any task exists.
                match missing_capabilities(
                    &session.client_capabilities,
                    tool.client_needs().iter().copied(),
                ) {
                    Some(error) => Err(error),
                    None => {
                        let SessionCall {
                            name,
                            arguments,
                            progress_token,
                            ..
                        } = call;
                        let creating = Creating {
                            name,
                            arguments,
                            hint,
                            progress_token,
                        };
                        session_tasks::create(&d.runtime, &session, creating)
                            .await
                            .map(|task| McpResponse::result(&id, &creation(&task)))
                    }
                }
            }
            (tool, _) => match session.serve(&id) {
                Ok(in_flight) => Ok(call::run(session, id.clone(), tool, call, in_flight).await),
                Err(error) => Err(error),
            },
        },
        SessionAction::GetTask(task) => session_tasks::get(&d.runtime, &session, &task)
            .await
            .map(|task| McpResponse::result(&id, &SessionTaskView(&task))),
        SessionAction::CancelTask(task) => session_tasks::cancel(&d.runtime, &scope, &task)
            .await
            .map(|task| McpResponse::result(&id, &SessionTaskView(&task))),
        SessionAction::ListTasks(after) => tasks::list(d, &scope, &id, after.as_ref()).await,
        SessionAction::Catalog(CatalogRequest::GetPrompt(request)) => {
            match crate::methods::catalog::find_prompt(&d.runtime.catalog(), &request) {
                Ok(prompt) => match session.serve(&id) {
                    Ok(in_flight) => Ok(call::run_prompt(
                        session,
                        id.clone(),
                        prompt,
                        request.arguments,
                        in_flight,
                    )
                    .await),
                    Err(error) => Err(error),
                },
                Err(error) => Err(error),
            }
        }
        SessionAction::Catalog(request) => {
            let caller = Caller {
                scope: scope.clone(),
                principal: session.principal.clone(),
            };
            Box::pin(crate::methods::catalog::handle_session(
                d, &id, &caller, request,
            ))
            .await
        }
        SessionAction::Subscribe(uri) => session
            .subscribe(uri)
            .map(|()| McpResponse::result(&id, &empty_result())),
        SessionAction::Unsubscribe(uri) => {
            session.unsubscribe(&uri);
            Ok(McpResponse::result(&id, &empty_result()))
        }
        SessionAction::TaskResult(task) => match session.serve(&id) {
            Ok(in_flight) => tasks::result(d, session, id.clone(), task, in_flight).await,
            Err(error) => Err(error),
        },
    };
    match answer {
        Ok(response) => (response, None),
        Err(error) => (
            McpResponse::session_error(&id, &error.to_error_object()),
            Some(error),
        ),
    }
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
        claim,
        known: session::GetStream::new(),
        deliveries: HashMap::new(),
        queue: VecDeque::new(),
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

/// A session's standalone GET stream: `notifications/tools/list_changed` when the tool list
/// changes; `notifications/tasks/status` (the task, flat, as 2025-11-25 shows it) when a task
/// this session created changes; and the input requests of those tasks while no `tasks/result`
/// delivers them ([`inputs`]), so a client that polls `tasks/get` until the task ends is asked
/// too. A request whose task no longer asks for it (the task is gone, ended, or answered
/// elsewhere) is withdrawn. It follows the runtime's [`Changes`]: after a feed resync, after
/// falling behind, and on the guard interval it re-reads the session's unfinished tasks, so no
/// single lost notification keeps a status or an input request from it. Ends with the session,
/// a newer GET stream, or the server.
///
/// A task's questions go out here only once the client has named the task in a request
/// (`tasks/get` or `tasks/result`, [`TaskBook::named`](tasks_core::sessions::session::TaskBook::named)): a question sent as soon as the task
/// asks could reach the client before the `CreateTaskResult` that tells it the task exists, and
/// a client cannot match it to anything (the official Tasks client library answers it with an
/// error). A poll that finds its task waiting for input asks this stream to deliver
/// ([`Session::nudge`]).
struct GetStream {
    claim: StreamClaim,
    /// Task changes (in a session offered tasks), list announcements, and resource updates
    /// (the session's subscriptions pick what goes out).
    feed: Feed,
    shutdown: CancellationToken,
    runtime: TaskRuntime,
    /// Server-to-client requests of the deliveries this stream runs.
    frames: mpsc::Receiver<Frame>,
    frames_tx: mpsc::Sender<Frame>,
    /// What this stream knows of the session's tasks: the core's re-delivery decisions.
    known: session::GetStream,
    /// The token stopping each task's delivery on this stream.
    deliveries: HashMap<TaskId, CancellationToken>,
    /// Notifications ready to go out.
    queue: VecDeque<Bytes>,
    /// Whether the session's tasks waiting for input when the stream opened were delivered.
    primed: bool,
    /// The parent of this stream's deliveries, stopped when the stream is dropped.
    stop: CancellationToken,
    _stop: DropGuard,
}

impl GetStream {
    /// Carries out what the core decided about `task` on this stream.
    fn step(&mut self, step: Step, task: Option<&Arc<Task>>) {
        match (step, task) {
            (Step::Deliver, Some(task)) => self.deliver(task),
            (Step::Withdraw, _) => {
                if let Some(id) = task.map(|t| t.id().clone()) {
                    if let Some(stop) = self.deliveries.remove(&id) {
                        stop.cancel();
                    }
                }
            }
            _ => {}
        }
    }

    /// A state of one of the session's tasks: announced (when `announce`) if newer than what
    /// the stream knows; its input requests delivered while it asks, withdrawn once it does
    /// not.
    fn saw(&mut self, task: Arc<Task>, announce: bool) {
        let knows = self.claim.session().book(|book| book.knows(task.id()));
        let Some(step) = self.known.saw(Seen::of(&task), knows) else {
            return;
        };
        self.step(step, Some(&task));
        // The task's progress, when the call that created it carried a progress token and the
        // session has not sent this far yet (also when the stream opens: a reconnecting client
        // learns the latest); before the status, so that a client stopping at `completed` has
        // seen the last progress.
        let session = self.claim.session();
        if let Some(params) = session.book(|book| book.progress_update(&task)) {
            self.queue
                .push_back(notification_bytes("notifications/progress", &params));
        }
        if announce {
            self.queue.push_back(notification_bytes(
                "notifications/tasks/status",
                &SessionTaskView(&task),
            ));
        }
    }

    /// Task `id` is gone: its input requests are withdrawn, and it is not re-read again.
    fn gone(&mut self, id: &TaskId, step: Step) {
        if step == Step::Withdraw {
            if let Some(stop) = self.deliveries.remove(id) {
                stop.cancel();
            }
        }
    }

    /// Delivers `task`'s input requests in the background, under the task's delivery token
    /// (a new one when it has none running).
    fn deliver(&mut self, task: &Arc<Task>) {
        let stop = match self.deliveries.get(task.id()) {
            Some(stop) if !stop.is_cancelled() => stop.clone(),
            _ => {
                let stop = self.stop.child_token();
                self.deliveries.insert(task.id().clone(), stop.clone());
                stop
            }
        };
        let (runtime, session) = (self.runtime.clone(), self.claim.session().clone());
        let (task, tx) = (task.clone(), self.frames_tx.clone());
        tokio::spawn(async move {
            deliver(&runtime, &session, &task, &tx, &stop).await;
        });
    }

    /// A status event or a removal from the runtime's changes.
    async fn wake(&mut self, wake: Wake) {
        let session = self.claim.session().clone();
        let ours = |id: &TaskId| session.book(|book| book.announces(id));
        match wake {
            Wake::Status(event) if event.scope == session.scope && ours(event.task.id()) => {
                self.saw(event.task, true);
            }
            Wake::Removed(id) if ours(&id) => {
                let step = self.known.gone(&id);
                self.gone(&id, step);
            }
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

    /// Re-reads the session's tasks not known to be settled, as [`GetStream::saw`] each.
    async fn reread(&mut self, announce: bool) {
        let session = self.claim.session().clone();
        let created = session.book(|book| book.created_tasks(MAX_SESSION_TASKS));
        let ids = self.known.to_reread(created);
        if ids.is_empty() {
            return;
        }
        match self.runtime.read_many(&session.scope, &ids).await {
            Ok(tasks) => {
                let mut missing: HashSet<&TaskId> = ids.iter().collect();
                for task in tasks {
                    missing.remove(task.id());
                    self.saw(task, announce);
                }
                for id in missing {
                    let step = self.known.missing(id);
                    self.gone(id, step);
                }
            }
            Err(error) => tracing::warn!(%error, "re-reading a session's tasks failed"),
        }
    }

    async fn next(&mut self) -> Option<Bytes> {
        let ended = self.claim.token.clone();
        if !self.primed {
            self.primed = true;
            if self.claim.session().tasks {
                self.prime().await;
            }
        }
        loop {
            if let Some(bytes) = self.queue.pop_front() {
                return Some(bytes);
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
                    let step = self.known.nudged(Seen::of(&task));
                    self.step(step, Some(&task));
                    continue;
                }
                event = self.feed.next() => event,
            };
            let catalog = self.runtime.catalog();
            let list = |kind: ListKind| notification_bytes(kind.method(), &serde_json::Map::new());
            match event {
                FeedEvent::Task(wake) => self.wake(wake).await,
                FeedEvent::TasksEnded => {}
                FeedEvent::ListChanged(kind) if catalog.has_list(kind) => return Some(list(kind)),
                // A lagging receiver missed announcements: one notification of each list the
                // server has covers them.
                FeedEvent::ListsLagged => {
                    let kinds = ListKind::ALL.into_iter().filter(|k| catalog.has_list(*k));
                    self.queue.extend(kinds.map(list));
                }
                FeedEvent::ResourceUpdated(uri) if self.claim.session().subscribed(&uri) => {
                    let mut params = serde_json::Map::new();
                    params.insert("uri".into(), Value::from(&*uri));
                    return Some(notification_bytes(
                        "notifications/resources/updated",
                        &params,
                    ));
                }
                FeedEvent::ListChanged(_) | FeedEvent::ResourceUpdated(_) => {}
            }
        }
    }
}
