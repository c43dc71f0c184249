//! Waiting for tasks to change: the one mechanism behind every wait of a transport (a
//!
//! The design notes are on [`TaskWait`](crate::TaskWait).

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tasks_core::{McpError, Task, TaskId};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::time::{Instant, Interval, MissedTickBehavior, Sleep};

use crate::events::{StatusEvent, TaskEvent};
use crate::inner::{store_error, Inner};
use crate::scope::Scope;

/// What woke a waiter ([`Changes::next`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Wake {
    /// A committed state of some task, of any scope: a waiter keeps those of its scope and
    /// tasks.
    Status(StatusEvent),
    /// Task `id` is gone (see [`TaskEvent::Removed`]): a waiter for it re-reads it under its
    /// own scope, which answers -32602.
    Removed(TaskId),
    /// Re-read everything waited on: after a feed resync, after this receiver fell behind
    /// (`skipped` events were lost), or when the guard interval passed (`skipped` is 0 then).
    Reread {
        /// How many events this receiver missed by falling behind.
        skipped: u64,
    },
}

/// The changes a waiter follows, with the re-read signals that make a wait independent of any
/// single notification. From
/// [`TaskRuntime::changes`](crate::TaskRuntime::changes); subscribe before the first read of
/// what you wait on, so that nothing between the two is missed.
#[derive(Debug)]
pub struct Changes {
    events: broadcast::Receiver<TaskEvent>,
    guard: Interval,
    period: Duration,
}

impl Changes {
    pub(crate) fn new(events: broadcast::Receiver<TaskEvent>, period: Duration) -> Self {
        // A zero period would make the guard fire in a loop.
        let period = period.max(Duration::from_millis(1));
        let mut guard = tokio::time::interval_at(Instant::now() + period, period);
        guard.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Changes {
            events,
            guard,
            period,
        }
    }

    /// The next wake-up; `None` once the runtime is gone. Cancel-safe: dropping the future
    /// loses nothing.
    pub async fn next(&mut self) -> Option<Wake> {
        tokio::select! {
            // The guard first: a busy event stream must not starve it.
            biased;
            _ = self.guard.tick() => Some(Wake::Reread { skipped: 0 }),
            event = self.events.recv() => {
                let wake = match event {
                    Ok(TaskEvent::Status(event)) => return Some(Wake::Status(event)),
                    Ok(TaskEvent::Removed(id)) => return Some(Wake::Removed(id)),
                    Ok(TaskEvent::Resync) => Wake::Reread { skipped: 0 },
                    Err(RecvError::Lagged(skipped)) => Wake::Reread { skipped },
                    Err(RecvError::Closed) => return None,
                };
                // A re-read now makes the next guard re-read one period away.
                self.guard.reset_after(self.period);
                Some(wake)
            }
        }
    }
}

/// A wait for one task of one scope. From
/// [`TaskRuntime::wait_task`](crate::TaskRuntime::wait_task).
///
/// # Waits end
///
/// Waiting for tasks to change: the one mechanism behind every wait of a transport (a
/// 2025-11-25 `tasks/result`, a session's GET stream, a `subscriptions/listen` stream).
///
/// A wait must end, whatever is lost on the way. So a waiter never relies on one
/// notification: [`Changes`] merges
///
/// * the runtime's committed states ([`TaskEvent::Status`]) and removals
///   ([`TaskEvent::Removed`]: a task reaped after its TTL, here or on another node);
/// * a re-read signal ([`Wake::Reread`]) when something may have been missed: the store's
///   change feed reconnected or lost hints ([`TaskEvent::Resync`]), this receiver fell behind
///   the runtime's event channel, or [`RuntimeConfig::wait_recheck`] (5 s by default) passed
///   without either (the guard: it catches anything else, such as a hint lost with a node that
///   died before sending it).
///
/// [`TaskWait`] is the same for one task: it yields each newer state, and ends with -32602
/// `Unknown or inaccessible taskId` once the task is gone (expired, reaped), re-reading at the
/// task's own expiry as well.
///
/// [`RuntimeConfig::wait_recheck`]: crate::RuntimeConfig::wait_recheck
pub struct TaskWait {
    inner: Arc<Inner>,
    changes: Changes,
    scope: Scope,
    id: TaskId,
    /// The revision last returned (0: none yet).
    seen: u64,
    /// A re-read at the task's expiry, while that is ahead.
    expiry: Option<Pin<Box<Sleep>>>,
    /// A wake asked for a re-read that has not finished: set before the read and cleared
    /// after it, so a [`TaskWait::next`] dropped during the read (inside a `select!`) re-reads
    /// first on its next call instead of losing the wake.
    reread_pending: bool,
}

impl std::fmt::Debug for TaskWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskWait")
            .field("id", &self.id.as_str())
            .field("seen", &self.seen)
            .finish_non_exhaustive()
    }
}

impl TaskWait {
    pub(crate) fn new(inner: Arc<Inner>, changes: Changes, scope: Scope, id: TaskId) -> Self {
        TaskWait {
            inner,
            changes,
            scope,
            id,
            seen: 0,
            expiry: None,
            reread_pending: false,
        }
    }

    /// The task as stored now; later calls of [`TaskWait::next`] return only newer states.
    ///
    /// # Errors
    /// -32602 `Unknown or inaccessible taskId` when it is unknown, expired or of another
    /// scope; -32603 when the store fails.
    pub async fn current(&mut self) -> Result<Arc<Task>, McpError> {
        let task = self.read().await?;
        Ok(self.saw(task))
    }

    /// Waits for a state newer than the last one returned and returns it. Cancel-safe:
    /// dropping the future (a `select!` branch that lost) loses no wake-up, and the next call
    /// finishes a re-read the dropped one had started.
    ///
    /// # Errors
    /// -32602 `Unknown or inaccessible taskId` once the task is gone (its TTL ran out, it was
    /// reaped). A store failure while re-reading is not an error: the wait goes on and the
    /// next signal re-reads again.
    pub async fn next(&mut self) -> Result<Arc<Task>, McpError> {
        loop {
            if self.reread_pending {
                let read = self.read().await;
                // Finished (not dropped): the wake that asked for it is spent.
                self.reread_pending = false;
                match read {
                    Ok(task) if task.revision() > self.seen => return Ok(self.saw(task)),
                    Ok(_) => {}
                    Err(McpError::UnknownTask) => return Err(McpError::UnknownTask),
                    Err(error) => {
                        tracing::warn!(%error, task = %self.id.as_str(), "re-reading a waited-for task failed; waiting on");
                    }
                }
            }
            let expiry = self.expiry.as_mut();
            let timer = async move {
                match expiry {
                    Some(sleep) => sleep.await,
                    None => std::future::pending().await,
                }
            };
            // `None`: the task's expiry passed.
            let woken = tokio::select! {
                () = timer => None,
                wake = self.changes.next() => Some(wake),
            };
            let reread = match woken {
                None => {
                    self.expiry = None;
                    true
                }
                Some(Some(Wake::Status(event))) => {
                    if event.scope == self.scope
                        && event.task.id() == &self.id
                        && event.task.revision() > self.seen
                    {
                        return Ok(self.saw(event.task));
                    }
                    false
                }
                Some(Some(Wake::Removed(id))) => id == self.id,
                Some(Some(Wake::Reread { .. })) => true,
                // The event channel closed: the runtime is gone (cannot happen while this
                // wait holds it, but never spin on it).
                Some(None) => return Err(McpError::Internal("Task runtime stopped")),
            };
            // Read at the top of the loop: a future dropped during that read leaves it owed.
            self.reread_pending = reread;
        }
    }

    async fn read(&self) -> Result<Arc<Task>, McpError> {
        let now = self.inner.clock.now();
        self.inner
            .store
            .get(&self.scope, &self.id, now)
            .await
            .map_err(store_error)?
            .map(|snapshot| snapshot.task)
            .ok_or(McpError::UnknownTask)
    }

    /// Records `task` as returned, and arms the re-read at its expiry while that is ahead.
    fn saw(&mut self, task: Arc<Task>) -> Arc<Task> {
        self.seen = task.revision();
        let now = self.inner.clock.now().unix_millis();
        self.expiry = task
            .expires_at()
            .map(|at| at.unix_millis())
            .filter(|&at| at > now)
            .map(|at| Box::pin(tokio::time::sleep(Duration::from_millis(at - now))));
        task
    }
}
