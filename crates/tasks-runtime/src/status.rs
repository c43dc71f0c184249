//! Coalescing of what a task's work reports about itself: its `statusMessage`
//! ([`crate::ToolContext::set_status_message`]) and its progress
//! ([`crate::ToolContext::progress`]).
//!
//! Each change is a new revision, a store write and a `notifications/tasks`, so a tool that
//! reports often must not turn every report into a write: at most one change is stored per
//! interval (the task's `pollIntervalMs`, a client polling at that pace would not see more),
//! and the latest message and progress set while a write waits are the ones written, together
//! in one write ([`Event::Progress`] carries both). One flusher per task runs at a time, so
//! writes are never reordered.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tasks_core::{Event, Progress, TaskId};
use tokio::time::Instant;

use crate::port::TaskPort;
use crate::scope::Scope;
use crate::store::Lease;

/// The coalescing state of one task.
pub(crate) struct StatusCoalescer {
    interval: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The newest message not yet written.
    pending: Option<String>,
    /// The newest progress not yet written.
    pending_progress: Option<Progress>,
    /// The newest progress this run reported (written or not): a later one must be ahead.
    reported: Option<Progress>,
    /// When the last write started.
    last_write: Option<Instant>,
    /// Whether a flusher is running.
    flushing: bool,
}

impl StatusCoalescer {
    /// A coalescer writing at most once per `interval`.
    pub(crate) fn new(interval: Duration) -> Arc<Self> {
        Arc::new(StatusCoalescer {
            interval,
            state: Mutex::new(State::default()),
        })
    }

    /// Records `message` as the task's next `statusMessage` and makes sure a flusher writes it.
    pub(crate) fn set(
        self: &Arc<Self>,
        port: &Arc<dyn TaskPort>,
        scope: &Scope,
        id: &TaskId,
        lease: Lease,
        message: String,
    ) {
        let mut state = crate::lock::lock(&self.state);
        state.pending = Some(message);
        self.flush_later(state, port, scope, id, lease);
    }

    /// Records `progress` (and `message`, when given, as the next `statusMessage`) and makes
    /// sure a flusher writes them. `false`, recording nothing, when `progress` is not ahead of
    /// the last one this run reported ([`Progress::advances`]).
    pub(crate) fn progress(
        self: &Arc<Self>,
        port: &Arc<dyn TaskPort>,
        scope: &Scope,
        id: &TaskId,
        lease: Lease,
        progress: Progress,
        message: Option<String>,
    ) -> bool {
        let mut state = crate::lock::lock(&self.state);
        if !progress.advances(state.reported.as_ref()) {
            return false;
        }
        state.reported = Some(progress);
        state.pending_progress = Some(progress);
        if message.is_some() {
            state.pending = message;
        }
        self.flush_later(state, port, scope, id, lease);
        true
    }

    /// Takes the progress waiting to be written, if any, with the message waiting beside it
    /// (set with it, or since the last write): the worker writes them before the task's
    /// outcome, so a task ends showing the last progress its work reported and the message
    /// that went with it. A message waiting alone is left: the outcome replaces it.
    pub(crate) fn take_progress(&self) -> Option<(Progress, Option<String>)> {
        let mut state = crate::lock::lock(&self.state);
        let progress = state.pending_progress.take()?;
        Some((progress, state.pending.take()))
    }

    /// Starts a flusher unless one runs.
    fn flush_later(
        self: &Arc<Self>,
        mut state: std::sync::MutexGuard<'_, State>,
        port: &Arc<dyn TaskPort>,
        scope: &Scope,
        id: &TaskId,
        lease: Lease,
    ) {
        if state.flushing {
            return;
        }
        state.flushing = true;
        drop(state);
        let (this, port, scope, id) = (self.clone(), port.clone(), scope.clone(), id.clone());
        tokio::spawn(async move { this.flush(port.as_ref(), &scope, &id, &lease).await });
    }

    async fn flush(&self, port: &dyn TaskPort, scope: &Scope, id: &TaskId, lease: &Lease) {
        loop {
            let due = crate::lock::lock(&self.state)
                .last_write
                .map(|at| at + self.interval);
            if let Some(due) = due {
                tokio::time::sleep_until(due).await;
            }
            let event = {
                let mut state = crate::lock::lock(&self.state);
                let message = state.pending.take();
                let event = match (state.pending_progress.take(), message) {
                    (Some(progress), message) => Event::Progress { progress, message },
                    (None, Some(message)) => Event::StatusMessage { message },
                    (None, None) => {
                        state.flushing = false;
                        return;
                    }
                };
                state.last_write = Some(Instant::now());
                event
            };
            if !port.report(scope, id, lease, event).await {
                // Finished, expired or failing: nothing later can be written either.
                let mut state = crate::lock::lock(&self.state);
                state.pending = None;
                state.pending_progress = None;
                state.flushing = false;
                return;
            }
        }
    }
}
