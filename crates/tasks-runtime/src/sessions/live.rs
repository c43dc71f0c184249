//! One live session: the state the core's machines keep for it (its request-id space
//! [`RequestSpace`], its client requests [`ClientRequests`], its task book [`TaskBook`]), with
//! the tokens and channels that carry their decisions out, and the guards of what it is serving.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use tasks_core::input::InputRequest;
use tasks_core::sessions::serves_tasks;
use tasks_core::sessions::session::{
    Activity, ClientRequests, Idle, RequestKey, RequestSpace, Resolution, RoundId, TaskBook,
};
use tasks_core::sessions::session::{Phase, SessionId};
use tasks_core::{JsonObject, LogLevel, McpError, Task, TaskId};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::lock::lock;
use crate::scope::{Caller, Principal, Scope};

/// The client's answer to a server-to-client request: its `result`, or its `error` object.
pub type Answer = Result<Value, Value>;

/// The most resources one session subscribes to.
pub const MAX_SUBSCRIPTIONS: usize = 100;

/// One live session.
pub struct Session {
    /// Its id (the `Mcp-Session-Id` header).
    pub id: SessionId,
    /// The negotiated revision.
    pub version: &'static str,
    /// The caller's scope: the session exists only for it.
    pub scope: Scope,
    /// The caller's principal (`None` for the shared scope): what its tools see
    /// ([`ToolContext::principal`](crate::ToolContext::principal)). Kept in this process only,
    /// as the session.
    pub principal: Option<Principal>,
    /// The `capabilities` the client declared in `initialize`.
    pub client_capabilities: JsonObject,
    /// Whether the session is offered tasks (2025-11-25).
    pub tasks: bool,
    /// Whether it is offered `tasks/list`: tasks, and a caller identified by a principal or a
    /// scope function (not the shared scope).
    pub list: bool,
    /// Fires when the session ends (DELETE, idle timeout): its streams close and its running
    /// requests stop.
    pub ended: CancellationToken,
    /// Notified when a delivery of a task's input requests ends ([`Delivery`] dropped), so a
    /// `tasks/result` that found another stream delivering can take over.
    pub released: tokio::sync::Notify,
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
    subscriptions: BTreeSet<String>,
    /// Where a poll that found its task waiting for input asks the newest GET stream to
    /// deliver the task's questions.
    nudge: Option<mpsc::Sender<Arc<Task>>>,
    /// The token of the newest GET stream, which a newer one cancels.
    stream: Option<CancellationToken>,
}

/// At most this many delivery requests wait for a GET stream ([`Session::nudge`]).
const NUDGES: usize = 16;

fn bytes(message: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(message).unwrap_or_default())
}

impl Session {
    /// A new session `id` of `caller` at `version`, ending with `parent` (the server's
    /// shutdown); `now` on the table's clock, which starts at `origin`.
    pub(crate) fn new(
        id: SessionId,
        version: &'static str,
        caller: Caller,
        client_capabilities: JsonObject,
        parent: &CancellationToken,
        (origin, now): (Instant, Duration),
    ) -> Self {
        let Caller { scope, principal } = caller;
        let identified = scope != Scope::shared();
        Session {
            id,
            version,
            scope,
            principal,
            client_capabilities,
            tasks: serves_tasks(version),
            list: serves_tasks(version) && identified,
            ended: parent.child_token(),
            released: tokio::sync::Notify::new(),
            origin,
            state: Mutex::new(State {
                phase: Phase::Initializing,
                log_level: None,
                activity: Activity::new(now),
                requests: RequestSpace::new(),
                rounds: HashMap::new(),
                in_flight: ClientRequests::new(),
                book: TaskBook::new(),
                subscriptions: BTreeSet::new(),
                nudge: None,
                stream: None,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn now(&self) -> Duration {
        Instant::now().saturating_duration_since(self.origin)
    }

    /// The phase of its lifecycle.
    pub fn phase(&self) -> Phase {
        self.state().phase
    }

    /// `notifications/initialized` arrived.
    pub fn initialized(&self) {
        let mut state = self.state();
        state.phase = state.phase.initialized();
    }

    /// The level set by `logging/setLevel`, if any.
    pub fn log_level(&self) -> Option<LogLevel> {
        self.state().log_level
    }

    /// `logging/setLevel`.
    pub fn set_log_level(&self, level: LogLevel) {
        self.state().log_level = Some(level);
    }

    /// Subscribes the session to updates of `uri` (MCP 2025-11-25 resources, "Subscriptions").
    ///
    /// # Errors
    /// -32602 when the session already holds [`MAX_SUBSCRIPTIONS`] other subscriptions.
    pub fn subscribe(&self, uri: String) -> Result<(), McpError> {
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
    pub fn unsubscribe(&self, uri: &str) {
        self.state().subscriptions.remove(uri);
    }

    /// Whether the session subscribed to `uri`.
    pub fn subscribed(&self, uri: &str) -> bool {
        self.state().subscriptions.contains(uri)
    }

    /// Opens a round asking `questions` (for `task`, if any) on a stream that `open` guards
    /// (fired when that stream closes): the round, the requests to send, and where its
    /// resolution arrives.
    pub fn ask(
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
    pub fn close(&self, round: RoundId, withdraw: bool) -> Vec<Bytes> {
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
    pub fn answer(&self, id: &Value, answer: Answer) -> Result<(), McpError> {
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
    pub fn serve(self: &Arc<Self>, request_id: &Value) -> Result<InFlight, McpError> {
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
    pub fn cancel(&self, request_id: &Value) {
        if let Some(token) = self.state().in_flight.cancelled(request_id) {
            token.cancel();
        }
    }

    /// Runs `f` on the session's task book ([`TaskBook`]).
    pub fn book<R>(&self, f: impl FnOnce(&mut TaskBook) -> R) -> R {
        f(&mut self.state().book)
    }

    /// Asks the open GET stream, if any, to deliver the questions of `task` (which a request
    /// just found waiting for input). A stream with many nudges queued drops this one: the
    /// client's next poll nudges again.
    pub fn nudge(&self, task: Arc<Task>) {
        if let Some(nudge) = &self.state().nudge {
            let _ = nudge.try_send(task);
        }
    }

    /// Claims the delivery of `task`'s input requests to this session (one delivery at a
    /// time, so no request goes out on two streams); `None` when another holds it.
    pub fn deliver(self: &Arc<Self>, task: &TaskId) -> Option<Delivery> {
        self.state().book.claim(task).then(|| Delivery {
            session: self.clone(),
            task: task.clone(),
        })
    }

    /// Claims the standalone GET stream. A stream still open is replaced: it ends (its token
    /// fires), so each message goes out on one stream, and a client reconnecting before the
    /// server noticed its old connection is gone is not refused.
    pub fn open_stream(self: &Arc<Self>) -> StreamClaim {
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

    /// The session is touched now (a request found it).
    pub(crate) fn touch(&self, now: Duration) {
        self.state().activity.touch(now);
    }

    fn finish(&self) {
        let now = self.now();
        self.state().activity.finish(now);
    }
}

/// A session in the table.
pub(crate) struct Entry(pub(crate) Arc<Session>);

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Idle for Entry {
    fn idle_since(&self) -> Option<Duration> {
        self.0.state().activity.idle_since()
    }
}

/// A client request of a session being served.
#[derive(Debug)]
pub struct InFlight {
    session: Arc<Session>,
    key: RequestKey,
    /// Fires when the request is cancelled or the session ends.
    pub token: CancellationToken,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.session.state().in_flight.end(&self.key);
        self.session.finish();
    }
}

/// The delivery of a task's input requests; released when dropped.
#[derive(Debug)]
pub struct Delivery {
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
#[derive(Debug)]
pub struct StreamClaim {
    session: Arc<Session>,
    /// Fires when the session ends or a newer GET stream replaces this one.
    pub token: CancellationToken,
    /// Tasks whose questions a poll asked this stream to deliver ([`Session::nudge`]).
    pub nudges: mpsc::Receiver<Arc<Task>>,
}

impl StreamClaim {
    /// The session whose stream this is.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }
}

impl Drop for StreamClaim {
    fn drop(&mut self) {
        self.session.finish();
    }
}
