//! The live 2025 sessions of this process: the driver of the core's session machines
//! ([`tasks_core::sessions::session`]): the table ([`SessionTable`]), each session's request-id
//! space ([`RequestSpace`]) and task book ([`TaskBook`]), with the tokens and channels that
//! carry their decisions out.
//!
//! A session belongs to the caller that opened it: looked up under another scope it does not
//! exist (HTTP 404), so a leaked session id is useless to another principal. Sessions live in
//! memory only: with several nodes, a load balancer must send every request of a session to
//! the node that opened it (affinity on the `Mcp-Session-Id` header; `docs/deployment.md`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use tasks_core::sessions::session::{
    Activity, ClientRequests, Idle, Lookup, RequestKey, RequestSpace, Resolution, RoundId,
    SessionTable, TaskBook,
};
use tasks_core::sessions::{serves_tasks, Phase, SessionId, SESSION_ID_RANDOM_BYTES};
use tasks_core::{InputRequest, JsonObject, LogLevel, McpError, Task, TaskId};
use tasks_runtime::Scope;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::SessionConfig;

/// The client's answer to a server-to-client request: its `result`, or its `error` object.
pub(crate) type Answer = Result<Value, Value>;

/// One live session.
/// The most resources one session subscribes to.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 100;

pub(crate) struct Session {
    pub(crate) id: SessionId,
    /// The negotiated revision.
    pub(crate) version: &'static str,
    pub(crate) scope: Scope,
    /// The caller's principal (`None` for the shared scope): what its tools see
    /// ([`tasks_runtime::ToolContext::principal`]). Kept in this process only, as the session.
    pub(crate) principal: Option<tasks_runtime::Principal>,
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
    /// The table's time origin.
    origin: Instant,
    state: Mutex<State>,
}

struct State {
    phase: Phase,
    log_level: Option<LogLevel>,
    activity: Activity,
    /// Server-to-client requests and their rounds.
    requests: RequestSpace,
    /// Where each open round's resolution goes, and the token of the stream it was asked on.
    rounds: HashMap<RoundId, (oneshot::Sender<Resolution>, CancellationToken)>,
    /// The client's requests being served, for `notifications/cancelled`.
    in_flight: ClientRequests<CancellationToken>,
    /// The tasks this session created and named, and which are being delivered.
    book: TaskBook,
    /// The resources whose updates the session subscribed to (`resources/subscribe`).
    subscriptions: std::collections::BTreeSet<String>,
    /// Where a poll that found its task waiting for input asks the newest GET stream to
    /// deliver the task's questions.
    nudge: Option<mpsc::Sender<Arc<Task>>>,
    /// The token of the newest GET stream, which a newer one cancels.
    stream: Option<CancellationToken>,
}

/// At most this many delivery requests wait for a GET stream ([`Session::nudge`]).
const NUDGES: usize = 16;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn bytes(message: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(message).unwrap_or_default())
}

impl Session {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn now(&self) -> Duration {
        Instant::now().saturating_duration_since(self.origin)
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

    /// Subscribes the session to updates of `uri` (MCP 2025-11-25 resources, "Subscriptions").
    ///
    /// # Errors
    /// -32602 when the session already holds [`MAX_SUBSCRIPTIONS`] other subscriptions.
    pub(crate) fn subscribe(&self, uri: String) -> Result<(), McpError> {
        let mut state = self.state();
        if state.subscriptions.len() >= MAX_SUBSCRIPTIONS && !state.subscriptions.contains(&uri) {
            return Err(McpError::invalid_params(
                "A session subscribes to at most 100 resources",
            ));
        }
        state.subscriptions.insert(uri);
        Ok(())
    }

    /// Ends the session's subscription to `uri`, if any.
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.state().subscriptions.remove(uri);
    }

    /// Whether the session subscribed to `uri`.
    pub(crate) fn subscribed(&self, uri: &str) -> bool {
        self.state().subscriptions.contains(uri)
    }

    /// Opens a round asking `questions` (for `task`, if any) on a stream that `open` guards
    /// (fired when that stream closes): the round, the requests to send, and where its
    /// resolution arrives.
    pub(crate) fn ask(
        &self,
        questions: BTreeMap<String, InputRequest>,
        task: Option<&TaskId>,
        open: &CancellationToken,
    ) -> (RoundId, Vec<Bytes>, oneshot::Receiver<Resolution>) {
        let (tx, rx) = oneshot::channel();
        let mut state = self.state();
        let (round, messages) = state.requests.ask(questions, task, self.tasks);
        state.rounds.insert(round, (tx, open.clone()));
        (round, messages.iter().map(bytes).collect(), rx)
    }

    /// Ends `round` before it resolved: its requests are forgotten (a late answer is
    /// refused); with `withdraw`, the `notifications/cancelled` to send for a task's.
    pub(crate) fn close(&self, round: RoundId, withdraw: bool) -> Vec<Bytes> {
        let mut state = self.state();
        state.rounds.remove(&round);
        state
            .requests
            .close(round, withdraw)
            .iter()
            .map(bytes)
            .collect()
    }

    /// Hands the client's answer to the request `id` to its round.
    ///
    /// # Errors
    /// -32600 when no such request is outstanding (never sent, already answered, or its
    /// round ended, its stream closed).
    pub(crate) fn answer(&self, id: &Value, answer: Answer) -> Result<(), McpError> {
        let mut state = self.state();
        // A request whose stream closed is no longer outstanding, even before its driver
        // stopped (the stream's token fires when it is dropped).
        if let Some(round) = state.requests.round_of(id) {
            if state
                .rounds
                .get(&round)
                .is_none_or(|(tx, open)| open.is_cancelled() || tx.is_closed())
            {
                state.rounds.remove(&round);
                state.requests.close(round, false);
            }
        }
        let (round, resolution) = state.requests.answer(id, answer)?;
        if resolution != Resolution::Waiting {
            if let Some((tx, _)) = state.rounds.remove(&round) {
                let _ = tx.send(resolution);
            }
        }
        Ok(())
    }

    /// Registers a client request being served; the token fires on `notifications/cancelled`
    /// for it or when the session ends. Unregistered when the guard drops.
    ///
    /// # Errors
    /// -32600 when a request of this session with the same id is still being served
    /// ([`ClientRequests::begin`]).
    pub(crate) fn serve(self: &Arc<Self>, request_id: &Value) -> Result<InFlight, McpError> {
        let token = self.ended.child_token();
        let mut state = self.state();
        let key = state.in_flight.begin(request_id, token.clone())?;
        state.activity.begin();
        Ok(InFlight {
            session: self.clone(),
            key,
            token,
        })
    }

    /// `notifications/cancelled` for `request_id`.
    pub(crate) fn cancel(&self, request_id: &Value) {
        if let Some(token) = self.state().in_flight.cancelled(request_id) {
            token.cancel();
        }
    }

    /// Runs `f` on the session's task book ([`TaskBook`]).
    pub(crate) fn book<R>(&self, f: impl FnOnce(&mut TaskBook) -> R) -> R {
        f(&mut self.state().book)
    }

    /// Asks the open GET stream, if any, to deliver the questions of `task` (which a request
    /// just found waiting for input). A stream with many nudges queued drops this one: the
    /// client's next poll nudges again.
    pub(crate) fn nudge(&self, task: Arc<Task>) {
        if let Some(nudge) = &self.state().nudge {
            let _ = nudge.try_send(task);
        }
    }

    /// Claims the delivery of `task`'s input requests to this session (one delivery at a
    /// time, so no request goes out on two streams); `None` when another holds it.
    pub(crate) fn deliver(self: &Arc<Self>, task: &TaskId) -> Option<Delivery> {
        self.state().book.claim(task).then(|| Delivery {
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
        state.activity.begin();
        StreamClaim {
            session: self.clone(),
            token,
            nudges,
        }
    }

    fn finish(&self) {
        let now = self.now();
        self.state().activity.finish(now);
    }
}

/// A session in the table.
struct Entry(Arc<Session>);

impl Idle for Entry {
    fn idle_since(&self) -> Option<Duration> {
        self.0.state().activity.idle_since()
    }
}

/// A client request of a session being served.
pub(crate) struct InFlight {
    session: Arc<Session>,
    key: RequestKey,
    /// Fires when the request is cancelled or the session ends.
    pub(crate) token: CancellationToken,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.session.state().in_flight.end(&self.key);
        self.session.finish();
    }
}

/// The delivery of a task's input requests; released when dropped.
pub(crate) struct Delivery {
    session: Arc<Session>,
    task: TaskId,
}

impl Drop for Delivery {
    fn drop(&mut self) {
        self.session.state().book.release(&self.task);
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
        self.session.finish();
    }
}

/// The table of live sessions.
pub(crate) struct Sessions {
    table: Mutex<SessionTable<Scope, Entry>>,
    /// The server's shutdown: every session ends with it (its calls stop, its streams close).
    shutdown: CancellationToken,
    /// Where session ids are drawn: the runtime's randomness.
    entropy: tasks_runtime::Randomness,
    /// The origin of the table's time.
    origin: Instant,
}

impl Sessions {
    pub(crate) fn new(
        config: SessionConfig,
        shutdown: CancellationToken,
        entropy: tasks_runtime::Randomness,
    ) -> Self {
        Sessions {
            table: Mutex::new(SessionTable::new(config.max_sessions, config.idle_timeout)),
            shutdown,
            entropy,
            origin: Instant::now(),
        }
    }

    fn now(&self) -> Duration {
        Instant::now().saturating_duration_since(self.origin)
    }

    /// Opens a session for `scope`.
    ///
    /// # Errors
    /// -32603 `Too many sessions` (HTTP 503) when the table is full of busy sessions (an idle
    /// one is ended to make room first); -32603 when no random id can be drawn.
    pub(crate) fn open(
        &self,
        version: &'static str,
        caller: tasks_runtime::Caller,
        client_capabilities: JsonObject,
    ) -> Result<Arc<Session>, McpError> {
        let tasks_runtime::Caller { scope, principal } = caller;
        let bytes: [u8; SESSION_ID_RANDOM_BYTES] = self
            .entropy
            .bytes()
            .map_err(|_| McpError::Internal("Could not draw a session id"))?;
        let identified = scope != Scope::shared();
        let now = self.now();
        let session = Arc::new(Session {
            id: SessionId::from_random_bytes(bytes),
            version,
            scope: scope.clone(),
            principal,
            client_capabilities,
            tasks: serves_tasks(version),
            list: serves_tasks(version) && identified,
            ended: self.shutdown.child_token(),
            released: tokio::sync::Notify::new(),
            origin: self.origin,
            state: Mutex::new(State {
                phase: Phase::Initializing,
                log_level: None,
                activity: Activity::new(now),
                requests: RequestSpace::new(),
                rounds: HashMap::new(),
                in_flight: ClientRequests::new(),
                book: TaskBook::new(),
                subscriptions: Default::default(),
                nudge: None,
                stream: None,
            }),
        });
        let mut table = lock(&self.table);
        let ended = table.open(session.id.clone(), scope, Entry(session.clone()), now)?;
        for Entry(ended) in ended {
            ended.ended.cancel();
        }
        tracing::debug!(
            version = session.version,
            live = table.len(),
            "2025 session opened"
        );
        Ok(session)
    }

    /// The live session `id` of `scope`; `None` when unknown, idle too long (it ends now), or
    /// opened by another scope.
    pub(crate) fn get(&self, id: &SessionId, scope: &Scope) -> Option<Arc<Session>> {
        let now = self.now();
        match lock(&self.table).get(id, scope, now) {
            Lookup::Live(Entry(session)) => {
                session.state().activity.touch(now);
                Some(session.clone())
            }
            Lookup::Expired(Entry(session)) => {
                session.ended.cancel();
                None
            }
            Lookup::Unknown => None,
        }
    }

    /// Ends session `id` of `scope` (DELETE); `false` when there is none.
    pub(crate) fn end(&self, id: &SessionId, scope: &Scope) -> bool {
        let ended = lock(&self.table).end(id, scope);
        ended.map(|Entry(session)| session.ended.cancel()).is_some()
    }
}
