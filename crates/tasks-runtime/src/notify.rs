//! Request-scoped notifications: progress and log messages a tool sends while a synchronous
//!
//! The design notes are on [`Notifier`](crate::Notifier).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tasks_core::LogLevel;
use tokio::sync::mpsc;

/// How many notifications may wait for a slow client before newer ones are dropped.
pub(crate) const NOTIFICATION_BUFFER: usize = 256;

/// One notification for the request's stream, before the transport adds the progress token
/// (defined in tasks-core, whose exchange frames it).
pub use tasks_core::exchange::RequestNotification;

/// Sends a run's notifications to the transport, filtered by what the request opted into.
///
/// # Where notifications go
///
/// Request-scoped notifications: progress and log messages a tool sends while a synchronous
/// `tools/call` runs (MCP 2026-07-28 progress,
/// <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress>, and
/// logging, <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging>).
///
/// They belong to the request that started the run and travel only on that request's response
/// stream (an SSE response), never on a `subscriptions/listen` stream. A task's context has no
/// notifier: a task outlives its creating request, and SEP-2663 "Task Status Notifications"
/// does not support progress and log notifications on tasks
/// (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>);
/// a task's progress is stored with the task instead ([`crate::ToolContext::progress`]).
///
/// The transport creates a [`Notifier`] only for what the request opted into: progress when
/// `_meta.progressToken` is present, log messages at or above
/// `_meta["io.modelcontextprotocol/logLevel"]` when that is present.
#[derive(Debug, Clone)]
pub struct Notifier {
    sender: mpsc::Sender<RequestNotification>,
    progress: bool,
    min_level: Option<LogLevel>,
    last_progress: Arc<Mutex<Option<f64>>>,
}

impl Notifier {
    /// A notifier and the receiving end the transport drains. `progress` enables progress
    /// notifications (the request had a progress token); `min_level` enables log messages at or
    /// above it.
    pub fn channel(
        progress: bool,
        min_level: Option<LogLevel>,
    ) -> (Self, mpsc::Receiver<RequestNotification>) {
        let (sender, receiver) = mpsc::channel(NOTIFICATION_BUFFER);
        let notifier = Notifier {
            sender,
            progress,
            min_level,
            last_progress: Arc::new(Mutex::new(None)),
        };
        (notifier, receiver)
    }

    /// Whether log messages at `level` reach the client.
    pub fn logs(&self, level: LogLevel) -> bool {
        self.min_level.is_some_and(|min| level >= min)
    }

    /// Queues a progress notification. Returns `false` when it is not sent: the request has no
    /// progress token, `progress` is not finite or not greater than the previous value (the
    /// spec requires it to increase), or the client is not keeping up.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        if !self.progress || !progress.is_finite() {
            return false;
        }
        let mut last = crate::lock::lock(&self.last_progress);
        if last.is_some_and(|previous| progress <= previous) {
            return false;
        }
        let total = total.filter(|t| t.is_finite());
        let sent = self.send(RequestNotification::Progress {
            progress,
            total,
            message,
        });
        if sent {
            *last = Some(progress);
        }
        sent
    }

    /// Queues a log message. Returns `false` when the request did not ask for this level or the
    /// client is not keeping up.
    pub fn log(&self, level: LogLevel, logger: Option<String>, data: Value) -> bool {
        self.logs(level)
            && self.send(RequestNotification::Log {
                level,
                logger,
                data,
            })
    }

    fn send(&self, notification: RequestNotification) -> bool {
        match self.sender.try_send(notification) {
            Ok(()) => true,
            Err(error) => {
                tracing::debug!(%error, "request notification dropped");
                false
            }
        }
    }
}

/// A handler run together with the notifications of its [`Notifier`], in the order the
/// transport sends them: every notification queued before the handler finished
/// ([`NotifyingRun::notification`]), then its output ([`NotifyingRun::output`]). Any host
/// forwards them (an HTTP response's SSE stream, an rmcp peer).
pub struct NotifyingRun<F: Future> {
    state: RunState<F>,
    notifications: mpsc::Receiver<RequestNotification>,
}

enum RunState<F: Future> {
    Running(Pin<Box<F>>),
    Done(F::Output),
}

impl<F: Future> std::fmt::Debug for NotifyingRun<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let done = matches!(self.state, RunState::Done(_));
        f.debug_struct("NotifyingRun")
            .field("done", &done)
            .finish_non_exhaustive()
    }
}

impl<F: Future> NotifyingRun<F> {
    /// Follows `run` and the receiving end of its notifier.
    pub fn new(run: F, notifications: mpsc::Receiver<RequestNotification>) -> Self {
        NotifyingRun {
            state: RunState::Running(Box::pin(run)),
            notifications,
        }
    }

    /// The next notification; `None` once the handler finished and every notification it
    /// queued was taken. Polls the handler meanwhile. Cancel-safe.
    pub async fn notification(&mut self) -> Option<RequestNotification> {
        if let RunState::Running(run) = &mut self.state {
            tokio::select! {
                biased;
                // A closed and empty channel disables this branch.
                Some(notification) = self.notifications.recv() => return Some(notification),
                output = run => self.state = RunState::Done(output),
            }
        }
        self.notifications.try_recv().ok()
    }

    /// The handler's output (waited for when it has not finished yet; notifications not taken
    /// by then are dropped).
    pub async fn output(self) -> F::Output {
        match self.state {
            RunState::Running(run) => run.await,
            RunState::Done(output) => output,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn progress_must_increase_and_needs_a_token() {
        let (notifier, mut rx) = Notifier::channel(true, None);
        assert!(notifier.progress(0.0, Some(2.0), None));
        assert!(!notifier.progress(0.0, Some(2.0), None));
        assert!(!notifier.progress(f64::NAN, None, None));
        assert!(notifier.progress(1.5, Some(f64::INFINITY), Some("half".into())));
        assert_eq!(
            rx.try_recv().unwrap(),
            RequestNotification::Progress {
                progress: 0.0,
                total: Some(2.0),
                message: None
            }
        );
        assert_eq!(
            rx.try_recv().unwrap(),
            RequestNotification::Progress {
                progress: 1.5,
                total: None,
                message: Some("half".into())
            }
        );
        assert!(rx.try_recv().is_err());
        let (silent, mut rx) = Notifier::channel(false, None);
        assert!(!silent.progress(1.0, None, None));
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn log_messages_are_filtered_by_level() {
        let (none, _rx) = Notifier::channel(false, None);
        assert!(!none.log(LogLevel::Emergency, None, json!("x")));
        let (warn, mut rx) = Notifier::channel(false, Some(LogLevel::Warning));
        assert!(!warn.log(LogLevel::Info, None, json!("quiet")));
        assert!(warn.log(LogLevel::Error, Some("db".into()), json!({"n": 1})));
        assert_eq!(
            rx.try_recv().unwrap(),
            RequestNotification::Log {
                level: LogLevel::Error,
                logger: Some("db".into()),
                data: json!({"n": 1})
            }
        );
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_full_buffer_drops_instead_of_blocking() {
        let (notifier, _rx) = Notifier::channel(true, None);
        for i in 0..NOTIFICATION_BUFFER {
            assert!(notifier.progress(i as f64, None, None));
        }
        assert!(!notifier.progress(1e9, None, None));
    }
}
