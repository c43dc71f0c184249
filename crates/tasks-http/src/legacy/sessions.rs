//! The live 2025 sessions of this process: a bounded table with an idle timeout.
//!
//! A session belongs to the caller that opened it: looked up under another scope it does not
//! exist (HTTP 404), so a leaked session id is useless to another principal. Sessions live in
//! memory only: with several nodes, a load balancer must send every request of a session to
//! the node that opened it (affinity on the `Mcp-Session-Id` header; `docs/deployment.md`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tasks_core::legacy::{serves_tasks, Phase, SessionId, SESSION_ID_RANDOM_BYTES};
use tasks_core::Task;
use tasks_core::{JsonObject, LogLevel, McpError, TaskId};
use tasks_runtime::Scope;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::SessionConfig;

/// The client's answer to a server-to-client request: its `result`, or its `error` object.
pub(crate) type Answer = Result<Value, Value>;

/// One live session.
pub(crate) struct Session {
    pub(crate) id: SessionId,
    /// The negotiated revision.
    pub(crate) version: &'static str,
    pub(crate) scope: Scope,
    /// The `capabilities` the client declared in `initialize`.
    pub(crate) client_capabilities: JsonObject,
    /// Whether the session is offered tasks (2025-11-25).
    pub(crate) tasks: bool,
    /// Whether it is offered `tasks/list`: tasks, and a caller identified by a principal or a
    /// scope function (not the shared scope).
    pub(crate) list: bool,
    /// Fires when the session ends (DELETE, idle timeout): its streams close and its running
    /// requests stop.
    pub(crate) ended: CancellationToken,
    /// Notified when a delivery of a task's input requests ends ([`Delivery`] dropped), so a
    /// `tasks/result` that found another stream delivering can take over.
    pub(crate) released: tokio::sync::Notify,
    state: Mutex<State>,
}

struct State {
    phase: Phase,
    log_level: Option<LogLevel>,
    last_seen: Instant,
    /// Server-to-client requests awaiting the client's answer, by JSON-RPC id.
    pending: HashMap<u64, (oneshot::Sender<Answer>, CancellationToken)>,
    next_request_id: u64,
    /// The client's requests being served, by their id (as JSON text), for
    /// `notifications/cancelled`.
    in_flight: HashMap<String, CancellationToken>,
    /// Tasks this session created, whose status changes go out on its GET stream (at most
    /// [`MAX_SESSION_TASKS`]; later ones are not announced: the notifications are optional).
    created: HashSet<TaskId>,
    /// Tasks of [`State::created`] the client has named in a request (`tasks/get`,
    /// `tasks/result`): it has read their `CreateTaskResult`, so their questions can go out on
    /// the GET stream and be matched to the task (at most [`MAX_SESSION_TASKS`]).
    named: HashSet<TaskId>,
    /// Tasks whose input requests a `tasks/result` of this session is delivering.
    delivering: HashSet<TaskId>,
    /// Where a poll that found its task waiting for input asks the newest GET stream to
    /// deliver the task's questions.
    nudge: Option<mpsc::Sender<Arc<Task>>>,
    /// The token of the newest GET stream, which a newer one cancels.
    stream: Option<CancellationToken>,
    /// GET streams not yet dropped (a replaced one counts until its response is dropped).
    streams: usize,
}

/// At most this many tasks per session are announced with `notifications/tasks/status`.
pub(crate) const MAX_SESSION_TASKS: usize = 10_000;

/// At most this many delivery requests wait for a GET stream ([`Session::nudge`]).
const NUDGES: usize = 16;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Session {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The phase of its lifecycle.
    pub(crate) fn phase(&self) -> Phase {
        self.state().phase
    }

    /// `notifications/initialized` arrived.
    pub(crate) fn initialized(&self) {
        let mut state = self.state();
        state.phase = state.phase.initialized();
    }

    /// The level set by `logging/setLevel`, if any.
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        self.state().log_level
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        self.state().log_level = Some(level);
    }

    /// Registers a server-to-client request of a request whose stream `open` guards (fired
    /// when that stream closes): its fresh id and where its answer arrives.
    pub(crate) fn ask(&self, open: &CancellationToken) -> (u64, oneshot::Receiver<Answer>) {
        let (tx, rx) = oneshot::channel();
        let mut state = self.state();
        let id = state.next_request_id;
        state.next_request_id += 1;
        state.pending.insert(id, (tx, open.clone()));
        (id, rx)
    }

    /// Forgets outstanding requests (their call ended without the answers).
    pub(crate) fn forget(&self, ids: &[u64]) {
        let mut state = self.state();
        for id in ids {
            state.pending.remove(id);
        }
    }

    /// Hands the client's answer to the request `id`; `false` when no such request is
    /// outstanding (never sent, already answered, or its call ended).
    pub(crate) fn answer(&self, id: &Value, answer: Answer) -> bool {
        let Some(id) = id.as_u64() else {
            return false;
        };
        let pending = self.state().pending.remove(&id);
        // A request whose stream closed is no longer outstanding, even before its driver
        // stopped (the stream's token fires when it is dropped).
        pending.is_some_and(|(sender, open)| !open.is_cancelled() && sender.send(answer).is_ok())
    }

    /// Registers a client request being served; the token fires on `notifications/cancelled`
    /// for it or when the session ends. Unregistered when the guard drops.
    ///
    /// # Errors
    /// -32600 when a request of this session with the same id is still being served (JSON-RPC
    /// ids are unique among a sender's outstanding requests).
    pub(crate) fn serve(self: &Arc<Self>, request_id: &Value) -> Result<InFlight, McpError> {
        let key = request_id.to_string();
        let token = self.ended.child_token();
        let mut state = self.state();
        if state.in_flight.contains_key(&key) {
            return Err(McpError::InvalidRequest(
                "A request with this id is still being served",
            ));
        }
        state.in_flight.insert(key.clone(), token.clone());
        Ok(InFlight {
            session: self.clone(),
            key,
            token,
        })
    }

    /// `notifications/cancelled` for `request_id`.
    pub(crate) fn cancel(&self, request_id: &Value) {
        if let Some(token) = self.state().in_flight.get(&request_id.to_string()) {
            token.cancel();
        }
    }

    /// Remembers a task this session created, for its status notifications.
    pub(crate) fn created(&self, task: &TaskId) {
        let mut state = self.state();
        if state.created.len() < MAX_SESSION_TASKS {
            state.created.insert(task.clone());
        }
    }

    /// The client named `task` in a request: it knows the task, so the GET stream may ask it
    /// the task's questions from now on.
    pub(crate) fn named(&self, task: &TaskId) {
        let mut state = self.state();
        if state.named.len() < MAX_SESSION_TASKS && state.created.contains(task) {
            state.named.insert(task.clone());
        }
    }

    /// Whether the client has named `task`, one this session created ([`Session::named`]).
    pub(crate) fn knows(&self, task: &TaskId) -> bool {
        self.state().named.contains(task)
    }

    /// Asks the open GET stream, if any, to deliver the questions of `task` (which a request
    /// just found waiting for input). A stream with many nudges queued drops this one: the
    /// client's next poll nudges again.
    pub(crate) fn nudge(&self, task: Arc<Task>) {
        if let Some(nudge) = &self.state().nudge {
            let _ = nudge.try_send(task);
        }
    }

    /// Forgets `task` recorded by [`Session::created`] whose creation was refused.
    pub(crate) fn forget_created(&self, task: &TaskId) {
        let mut state = self.state();
        state.created.remove(task);
        state.named.remove(task);
    }

    /// Up to `limit` of the tasks this session created.
    pub(crate) fn created_tasks(&self, limit: usize) -> Vec<TaskId> {
        self.state().created.iter().take(limit).cloned().collect()
    }

    /// Whether this session created `task` (and announces its changes).
    pub(crate) fn announces(&self, task: &TaskId) -> bool {
        self.state().created.contains(task)
    }

    /// Claims the delivery of `task`'s input requests to this session (one `tasks/result` at a
    /// time delivers them, so no request goes out on two streams); `None` when another
    /// `tasks/result` holds it.
    pub(crate) fn deliver(self: &Arc<Self>, task: &TaskId) -> Option<Delivery> {
        self.state()
            .delivering
            .insert(task.clone())
            .then(|| Delivery {
                session: self.clone(),
                task: task.clone(),
            })
    }

    /// Claims the standalone GET stream. A stream still open is replaced: it ends (its token
    /// fires), so each message goes out on one stream, and a client reconnecting before the
    /// server noticed its old connection is gone is not refused.
    pub(crate) fn open_stream(self: &Arc<Self>) -> StreamClaim {
        let token = self.ended.child_token();
        let (nudge, nudges) = mpsc::channel(NUDGES);
        let mut state = self.state();
        if let Some(previous) = state.stream.replace(token.clone()) {
            previous.cancel();
        }
        state.nudge = Some(nudge);
        state.streams += 1;
        StreamClaim {
            session: self.clone(),
            token,
            nudges,
        }
    }

    fn idle_since(&self) -> Option<Instant> {
        let state = self.state();
        let busy = state.streams > 0 || !state.in_flight.is_empty();
        (!busy).then_some(state.last_seen)
    }
}

/// A client request of a session being served.
pub(crate) struct InFlight {
    session: Arc<Session>,
    key: String,
    /// Fires when the request is cancelled or the session ends.
    pub(crate) token: CancellationToken,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.session.state();
        state.in_flight.remove(&self.key);
        state.last_seen = Instant::now();
    }
}

/// The delivery of a task's input requests; released when dropped.
pub(crate) struct Delivery {
    session: Arc<Session>,
    task: TaskId,
}

impl Drop for Delivery {
    fn drop(&mut self) {
        self.session.state().delivering.remove(&self.task);
        self.session.released.notify_waiters();
    }
}

/// An open GET stream of a session; released when dropped.
pub(crate) struct StreamClaim {
    session: Arc<Session>,
    /// Fires when the session ends or a newer GET stream replaces this one.
    pub(crate) token: CancellationToken,
    /// Tasks whose questions a poll asked this stream to deliver ([`Session::nudge`]).
    pub(crate) nudges: mpsc::Receiver<Arc<Task>>,
}

impl StreamClaim {
    pub(crate) fn session(&self) -> &Arc<Session> {
        &self.session
    }
}

impl Drop for StreamClaim {
    fn drop(&mut self) {
        let mut state = self.session.state();
        state.streams -= 1;
        state.last_seen = Instant::now();
    }
}

/// The table of live sessions.
pub(crate) struct Sessions {
    config: SessionConfig,
    live: Mutex<HashMap<SessionId, Arc<Session>>>,
    /// The server's shutdown: every session ends with it (its calls stop, its streams close).
    shutdown: CancellationToken,
    /// Where session ids are drawn: the runtime's randomness.
    entropy: tasks_runtime::Randomness,
}

impl Sessions {
    pub(crate) fn new(
        config: SessionConfig,
        shutdown: CancellationToken,
        entropy: tasks_runtime::Randomness,
    ) -> Self {
        Sessions {
            config,
            live: Mutex::new(HashMap::new()),
            shutdown,
            entropy,
        }
    }

    /// Opens a session for `scope`.
    ///
    /// # Errors
    /// -32603 `Too many sessions` (HTTP 503) when the table is full of busy sessions (an idle
    /// one is ended to make room first); -32603 when no random id can be drawn.
    pub(crate) fn open(
        &self,
        version: &'static str,
        scope: Scope,
        client_capabilities: JsonObject,
    ) -> Result<Arc<Session>, McpError> {
        let bytes: [u8; SESSION_ID_RANDOM_BYTES] = self
            .entropy
            .bytes()
            .map_err(|_| McpError::Internal("Could not draw a session id"))?;
        let identified = scope != Scope::shared();
        let session = Arc::new(Session {
            id: SessionId::from_random_bytes(bytes),
            version,
            scope,
            client_capabilities,
            tasks: serves_tasks(version),
            list: serves_tasks(version) && identified,
            ended: self.shutdown.child_token(),
            released: tokio::sync::Notify::new(),
            state: Mutex::new(State {
                phase: Phase::Initializing,
                log_level: None,
                last_seen: Instant::now(),
                pending: HashMap::new(),
                next_request_id: 0,
                in_flight: HashMap::new(),
                created: HashSet::new(),
                named: HashSet::new(),
                delivering: HashSet::new(),
                nudge: None,
                stream: None,
                streams: 0,
            }),
        });
        let mut live = lock(&self.live);
        if live.len() >= self.config.max_sessions {
            self.end_idle(&mut live);
        }
        if live.len() >= self.config.max_sessions {
            // Full of sessions within their idle time: the one idle longest makes room (its
            // client gets 404 and starts a new session), so a flood of `initialize` cannot
            // lock new clients out; only when every session is busy is the newcomer refused.
            let oldest = live
                .iter()
                .filter_map(|(id, session)| Some((session.idle_since()?, id.clone())))
                .min_by_key(|(since, _)| *since)
                .map(|(_, id)| id);
            match oldest.and_then(|id| live.remove(&id)) {
                Some(evicted) => evicted.ended.cancel(),
                None => return Err(McpError::SessionLimit),
            }
        }
        live.insert(session.id.clone(), session.clone());
        tracing::debug!(
            version = session.version,
            live = live.len(),
            "2025 session opened"
        );
        Ok(session)
    }

    /// The live session `id` of `scope`; `None` when unknown, idle too long (it ends now), or
    /// opened by another scope.
    pub(crate) fn get(&self, id: &SessionId, scope: &Scope) -> Option<Arc<Session>> {
        let mut live = lock(&self.live);
        let session = live.get(id)?.clone();
        if session.scope != *scope {
            return None;
        }
        if session
            .idle_since()
            .is_some_and(|since| since.elapsed() >= self.config.idle_timeout)
        {
            live.remove(id);
            session.ended.cancel();
            return None;
        }
        session.state().last_seen = Instant::now();
        Some(session)
    }

    /// Ends session `id` of `scope` (DELETE); `false` when there is none.
    pub(crate) fn end(&self, id: &SessionId, scope: &Scope) -> bool {
        let mut live = lock(&self.live);
        match live.get(id) {
            Some(session) if session.scope == *scope => {
                session.ended.cancel();
                live.remove(id);
                true
            }
            _ => false,
        }
    }

    fn end_idle(&self, live: &mut HashMap<SessionId, Arc<Session>>) {
        let timeout = self.config.idle_timeout;
        live.retain(|_, session| {
            let expired = session
                .idle_since()
                .is_some_and(|since| since.elapsed() >= timeout);
            if expired {
                session.ended.cancel();
            }
            !expired
        });
    }
}
