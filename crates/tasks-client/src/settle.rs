//! Waiting for a task: [`SettleOptions`] and the watcher behind [`crate::TaskCall::updates`].
//!
//! * **Listen** ([`Wait::Listen`], the default): one `subscriptions/listen` request naming the
//!   task (`notifications.taskIds`); each `notifications/tasks` on the stream is the task's new
//!   state. After the acknowledgement, one `tasks/get` catches a change made before the
//!   subscription, and a `tasks/get` every [`LISTEN_RECHECK`] guards against a lost
//!   notification. If the server refuses the listen request, does not honour the task id, or
//!   the stream ends, the watcher falls back to polling.
//! * **Poll** ([`Wait::Poll`]): `tasks/get` every `pollIntervalMs` of the last answer (or
//!   [`SettleOptions::default_poll_interval`]), bounded to [[`MIN_POLL`], [`MAX_POLL`]], with
//!   ±10 % jitter so that many clients do not poll in step.
//! * A retryable error ([`ClientError::is_retryable`]) is retried with exponential backoff
//!   and jitter (from 250 ms up to 10 s), for at most [`SettleOptions::retry_for`] in a row;
//!   any other error ends the watch. [`SettleOptions::on_retry`] hears of each retry, of the
//!   first success after them and of giving up ([`RetryNotice`]), so a caller can say that the
//!   server is unreachable instead of waiting silently. A task that no longer exists (`tasks/get` answers -32602:
//!   its TTL ran out) ends it with [`ClientError::UnknownTask`]; a listen stream simply stops
//!   naming such a task, so the next check (at most [`LISTEN_RECHECK`] later) finds it gone.
//!
//! Sources: SEP-2663 "Task Polling" (`pollIntervalMs`) and "Task Status Notifications";
//! MCP 2026-07-28 subscriptions
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>).

use std::sync::Arc;
use std::time::Duration;

use backon::{BackoffBuilder as _, ExponentialBackoff, ExponentialBuilder};
use futures_util::StreamExt as _;
use rand::RngExt as _;
use serde_json::{json, Value};
use tasks_core::wire::DetailedTask;
use tasks_core::{JsonObject, Progress, TaskId, TaskStatus, Timestamp};
use tokio::time::Instant;

use crate::error::ClientError;
use crate::shared::Shared;
use crate::transport::MessageStream;

/// The shortest polling interval used, whatever the server suggests.
pub const MIN_POLL: Duration = Duration::from_millis(50);
/// The longest polling interval used, whatever the server suggests.
pub const MAX_POLL: Duration = Duration::from_secs(60);
/// While listening, how often a `tasks/get` checks that no notification was lost.
pub const LISTEN_RECHECK: Duration = Duration::from_secs(15);
/// The JSON-RPC code `tasks/get` answers for a task that does not exist (any more).
const INVALID_PARAMS: i64 = -32602;
/// How long to wait for the listen stream and its acknowledgement before polling instead.
const ACK_TIMEOUT: Duration = Duration::from_secs(5);

/// How to wait for a task's changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Wait {
    /// `subscriptions/listen`, falling back to polling.
    #[default]
    Listen,
    /// `tasks/get` at the server's `pollIntervalMs`.
    Poll,
}

/// How [`crate::TaskCall::settle`] and [`crate::TaskCall::updates`] wait.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SettleOptions {
    /// Give up after this long ([`ClientError::Deadline`]); `None` (the default) waits as
    /// long as the task runs.
    pub deadline: Option<Duration>,
    /// Listen or poll.
    pub wait: Wait,
    /// The polling interval when the server suggests none (default 1 s).
    pub default_poll_interval: Duration,
    /// How long retryable failures in a row (the server unreachable, 503, …) are retried
    /// before the last one is returned (default 5 minutes: a server restart is survived, a
    /// server gone for good is reported).
    pub retry_for: Duration,
    /// Told of each retry, of the success that ends a run of them, and of giving up.
    on_retry: Option<RetryHook>,
}

/// The callback of [`SettleOptions::on_retry`].
#[derive(Clone)]
struct RetryHook(Arc<dyn Fn(&RetryNotice) + Send + Sync>);

impl std::fmt::Debug for RetryHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RetryHook")
    }
}

/// What a watch tells [`SettleOptions::on_retry`] about a run of retryable failures in a row
/// (an outage): each failure it will retry, the request that succeeds after them, or the
/// failure it gives up on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryNotice {
    /// What happened.
    pub event: RetryEvent,
    /// How the last request failed.
    pub kind: FailureKind,
    /// The last failure as text ([`ClientError`]'s message).
    pub error: String,
    /// How many requests of this run failed so far (1 at the first failure).
    pub attempt: u32,
    /// How long the run has lasted: from its first failure to now.
    pub elapsed: Duration,
    /// How long the run may last before the watch gives up ([`SettleOptions::retry_for`]):
    /// it gives up at the first failure at or after this much time since the first one.
    pub retry_for: Duration,
}

impl RetryNotice {
    /// How much longer failures are retried: `retry_for - elapsed`, at least zero.
    pub fn remaining(&self) -> Duration {
        self.retry_for.saturating_sub(self.elapsed)
    }
}

/// The step of an outage a [`RetryNotice`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryEvent {
    /// A request failed; the watch tries again after `next_in` (exponential backoff from
    /// 250 ms up to 10 s, plus at most as much again in jitter).
    Retrying {
        /// The delay before the next request.
        next_in: Duration,
    },
    /// The server answered after the run of failures (with the task, or with an error that is
    /// not retried, such as -32602 for a task it no longer knows): it is back. `kind`, `error`
    /// and `attempt` describe the last failure.
    Recovered,
    /// The run lasted [`SettleOptions::retry_for`]: the watch ends with the last failure.
    GaveUp,
}

/// How a retryable request failed ([`ClientError::is_retryable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureKind {
    /// No answer: the connection was refused, broke or timed out
    /// ([`ClientError::Transport`]).
    Unreachable,
    /// An HTTP status that says to come back later: 429, 502, 503 or 504 (with or without a
    /// JSON-RPC error body).
    Unavailable {
        /// The HTTP status.
        status: u16,
    },
}

impl FailureKind {
    /// The kind of a retryable `error`.
    fn of(error: &ClientError) -> Self {
        match error {
            ClientError::Http { status, .. } => FailureKind::Unavailable { status: *status },
            ClientError::Rpc { http_status, .. } => FailureKind::Unavailable {
                status: *http_status,
            },
            _ => FailureKind::Unreachable,
        }
    }
}

impl Default for SettleOptions {
    fn default() -> Self {
        SettleOptions {
            deadline: None,
            wait: Wait::Listen,
            default_poll_interval: Duration::from_secs(1),
            retry_for: Duration::from_secs(300),
            on_retry: None,
        }
    }
}

impl SettleOptions {
    /// Gives up after `deadline`.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Retries retryable failures for at most `retry_for` in a row.
    pub fn retry_for(mut self, retry_for: Duration) -> Self {
        self.retry_for = retry_for;
        self
    }

    /// Waits the way `wait` says.
    pub fn wait(mut self, wait: Wait) -> Self {
        self.wait = wait;
        self
    }

    /// Calls `hook` during a run of retryable failures ([`RetryNotice`]): at each failure
    /// that will be retried ([`RetryEvent::Retrying`]), at the first success after them
    /// ([`RetryEvent::Recovered`]) and when the run has lasted [`SettleOptions::retry_for`]
    /// ([`RetryEvent::GaveUp`], just before the watch returns the failure). It runs on the
    /// watching task: keep it short (print, count, send on a channel).
    pub fn on_retry(mut self, hook: impl Fn(&RetryNotice) + Send + Sync + 'static) -> Self {
        self.on_retry = Some(RetryHook(Arc::new(hook)));
        self
    }
}

/// What makes two views of a task different: its status, `lastUpdatedAt`, `statusMessage` and
/// progress ([`DetailedTask::progress`]; a change within one millisecond keeps
/// `lastUpdatedAt`).
type Seen = (TaskStatus, Timestamp, Option<String>, Option<Progress>);

fn seen(task: &DetailedTask) -> Seen {
    (
        task.state.status(),
        task.task.last_updated_at,
        task.task.status_message.clone(),
        task.progress(),
    )
}

/// A run of retryable failures in a row.
#[derive(Debug, Clone)]
struct Failing {
    since: Instant,
    attempts: u32,
    kind: FailureKind,
    error: String,
}

enum Source {
    Message(Option<Result<Value, ClientError>>),
    Tick,
}

/// The state of one watch.
pub(crate) struct Watcher {
    shared: Arc<Shared>,
    task_id: TaskId,
    options: SettleOptions,
    deadline: Option<Instant>,
    listen: Option<MessageStream>,
    listen_tried: bool,
    next_get: Instant,
    backoff: ExponentialBackoff,
    /// The current run of retryable failures: when it began, how many, the last one.
    failing: Option<Failing>,
    last: Option<Seen>,
    done: bool,
}

impl Watcher {
    pub(crate) fn new(shared: Arc<Shared>, task_id: TaskId, options: SettleOptions) -> Self {
        let now = Instant::now();
        Watcher {
            shared,
            task_id,
            // A deadline too far to represent is no deadline.
            deadline: options.deadline.and_then(|d| now.checked_add(d)),
            failing: None,
            listen_tried: options.wait == Wait::Poll,
            options,
            listen: None,
            next_get: now,
            backoff: backoff(),
            last: None,
            done: false,
        }
    }

    /// The next change, `None` after a terminal state or an error.
    pub(crate) async fn next(&mut self) -> Option<Result<DetailedTask, ClientError>> {
        if self.done {
            return None;
        }
        let Some(deadline) = self.deadline else {
            return self.step().await;
        };
        // The deadline bounds the requests in flight too (a server that never answers).
        match tokio::time::timeout_at(deadline, self.step()).await {
            Ok(next) => next,
            Err(_) => {
                self.done = true;
                Some(Err(ClientError::Deadline))
            }
        }
    }

    async fn step(&mut self) -> Option<Result<DetailedTask, ClientError>> {
        loop {
            if self.done {
                return None;
            }
            if !self.listen_tried {
                self.listen_tried = true;
                self.listen = open_listen(&self.shared, &self.task_id).await;
                self.next_get = Instant::now();
            }
            let wake = match self.deadline {
                Some(deadline) => deadline.min(self.next_get),
                None => self.next_get,
            };
            let source = match self.listen.as_mut() {
                Some(stream) => tokio::select! {
                    message = stream.next() => Source::Message(message),
                    () = tokio::time::sleep_until(wake) => Source::Tick,
                },
                None => {
                    tokio::time::sleep_until(wake).await;
                    Source::Tick
                }
            };
            match source {
                Source::Message(Some(Ok(message))) => {
                    if let Some(task) = self.notified(message) {
                        if let Some(change) = self.observe(task) {
                            return Some(Ok(change));
                        }
                    }
                }
                Source::Message(_) => {
                    // The stream ended or broke: poll from now on.
                    self.listen = None;
                    self.next_get = Instant::now();
                }
                Source::Tick if Instant::now() < self.next_get => {}
                Source::Tick => match self.poll().await {
                    Ok(Some(change)) => return Some(Ok(change)),
                    Ok(None) => {}
                    Err(error) => {
                        self.done = true;
                        return Some(Err(error));
                    }
                },
            }
        }
    }

    /// One `tasks/get`; schedules the next one.
    async fn poll(&mut self) -> Result<Option<DetailedTask>, ClientError> {
        let answer = self.shared.get_task(&self.task_id).await;
        if !answer.as_ref().is_err_and(ClientError::is_retryable) {
            // The server answered (a task, or an error of its own): an outage is over.
            if let Some(failing) = self.failing.take() {
                self.notify(&failing, RetryEvent::Recovered);
            }
        }
        match answer {
            Ok(task) => {
                self.backoff = backoff();
                let interval = if self.listen.is_some() {
                    LISTEN_RECHECK
                } else {
                    jittered(
                        task.task
                            .poll_interval_ms
                            .map_or(self.options.default_poll_interval, Duration::from_millis),
                    )
                };
                self.next_get = Instant::now() + interval;
                Ok(self.observe(task))
            }
            Err(error) if error.is_retryable() => {
                let failing = self.failing.get_or_insert_with(|| Failing {
                    since: Instant::now(),
                    attempts: 0,
                    kind: FailureKind::Unreachable,
                    error: String::new(),
                });
                failing.attempts = failing.attempts.saturating_add(1);
                failing.kind = FailureKind::of(&error);
                failing.error = error.to_string();
                let failing = failing.clone();
                if failing.since.elapsed() >= self.options.retry_for {
                    self.failing = None;
                    self.notify(&failing, RetryEvent::GaveUp);
                    return Err(error);
                }
                let delay = self.backoff.next().unwrap_or(MAX_POLL);
                self.notify(&failing, RetryEvent::Retrying { next_in: delay });
                self.next_get = Instant::now() + delay;
                Ok(None)
            }
            // The task is gone (expired and deleted): waiting on would never end.
            Err(ClientError::Rpc { error, .. }) if error.code == INVALID_PARAMS => {
                Err(ClientError::UnknownTask {
                    task_id: self.task_id.as_str().to_owned(),
                })
            }
            Err(error) => Err(error),
        }
    }

    /// Tells [`SettleOptions::on_retry`], if set, of `event` in the run `failing`.
    fn notify(&self, failing: &Failing, event: RetryEvent) {
        if let Some(RetryHook(hook)) = &self.options.on_retry {
            hook(&RetryNotice {
                event,
                kind: failing.kind,
                error: failing.error.clone(),
                attempt: failing.attempts,
                elapsed: failing.since.elapsed(),
                retry_for: self.options.retry_for,
            });
        }
    }

    /// The task, if the view differs from the last one seen; a terminal one ends the watch.
    fn observe(&mut self, task: DetailedTask) -> Option<DetailedTask> {
        let now = seen(&task);
        if self.last.as_ref() == Some(&now) {
            return None;
        }
        self.done = now.0.is_terminal();
        self.last = Some(now);
        Some(task)
    }

    /// A `notifications/tasks` message about this task.
    fn notified(&self, message: Value) -> Option<DetailedTask> {
        if message.get("method").and_then(Value::as_str) != Some("notifications/tasks") {
            return None;
        }
        let params = message.get("params")?;
        if params.get("taskId").and_then(Value::as_str) != Some(self.task_id.as_str()) {
            return None;
        }
        serde_json::from_value(params.clone()).ok()
    }
}

/// Opens the listen stream and waits for its acknowledgement; `None` when the server
/// refuses, does not honour this task id, or does not acknowledge in time.
async fn open_listen(shared: &Shared, task_id: &TaskId) -> Option<MessageStream> {
    // The whole opening, response head included, within ACK_TIMEOUT.
    tokio::time::timeout(ACK_TIMEOUT, open_listen_now(shared, task_id))
        .await
        .ok()
        .flatten()
}

async fn open_listen_now(shared: &Shared, task_id: &TaskId) -> Option<MessageStream> {
    let mut params = JsonObject::new();
    params.insert(
        "notifications".into(),
        json!({"taskIds": [task_id.as_str()]}),
    );
    let mut stream = shared.stream("subscriptions/listen", params).await.ok()?;
    let ack = tokio::time::timeout(ACK_TIMEOUT, stream.next())
        .await
        .ok()??
        .ok()?;
    let honoured = ack.get("method").and_then(Value::as_str)
        == Some("notifications/subscriptions/acknowledged")
        && ack["params"]["notifications"]["taskIds"]
            .as_array()
            .is_some_and(|ids| ids.iter().any(|id| id == task_id.as_str()));
    honoured.then_some(stream)
}

fn backoff() -> ExponentialBackoff {
    ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(250))
        .with_max_delay(Duration::from_secs(10))
        .with_jitter()
        .without_max_times()
        .build()
}

/// `interval` bounded to [`MIN_POLL`, `MAX_POLL`], times a random factor in [0.9, 1.1].
fn jittered(interval: Duration) -> Duration {
    let bounded = interval.clamp(MIN_POLL, MAX_POLL);
    bounded.mul_f64(rand::rng().random_range(0.9..=1.1))
}
