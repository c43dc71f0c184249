//! Coalescing of a task's own `statusMessage` changes ([`crate::ToolContext::set_status_message`]).
//!
//! Each change is a new revision, a store write and a `notifications/tasks`, so a tool that
//! reports often must not turn every report into a write: at most one change is stored per
//! interval (the task's `pollIntervalMs`, a client polling at that pace would not see more),
//! and the latest message set while a write waits is the one written. One flusher per task runs
//! at a time, so writes are never reordered.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tasks_core::TaskId;
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
            let message = {
                let mut state = crate::lock::lock(&self.state);
                match state.pending.take() {
                    Some(message) => {
                        state.last_write = Some(Instant::now());
                        message
                    }
                    None => {
                        state.flushing = false;
                        return;
                    }
                }
            };
            if !port.set_status_message(scope, id, lease, message).await {
                // Finished, expired or failing: nothing later can be written either.
                let mut state = crate::lock::lock(&self.state);
                state.pending = None;
                state.flushing = false;
                return;
            }
        }
    }
}
