//! Waiting on a runtime's status events ([`StatusEvent`]s from a broadcast receiver), and
//! checking the order they were published in.

use std::sync::Arc;

use tasks_core::{Task, TaskId, TaskStatus};
use tasks_runtime::StatusEvent;
use tokio::sync::broadcast::{self, error::RecvError};

use crate::wait::within;

/// Waits for a status event of task `id` matching `done`, within
/// [`WAIT_LIMIT`](crate::wait::WAIT_LIMIT).
///
/// # Panics
/// When no such event arrives in time, or the channel closes.
pub async fn wait_for(
    events: &mut broadcast::Receiver<StatusEvent>,
    id: &str,
    done: impl Fn(&Task) -> bool,
) -> Arc<Task> {
    let wait = async {
        loop {
            match events.recv().await {
                Ok(event) if event.task.id().as_str() == id && done(&event.task) => {
                    return event.task
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => panic!("the event stream closed"),
            }
        }
    };
    within("the awaited task state", wait).await
}

/// Waits for task `id` to reach `status`.
pub async fn wait_status(
    events: &mut broadcast::Receiver<StatusEvent>,
    id: &str,
    status: TaskStatus,
) -> Arc<Task> {
    wait_for(events, id, |t| t.status() == status).await
}

/// Every event already published for task `id` (drains the receiver).
///
/// # Panics
/// When the receiver lagged.
pub fn drain_for(events: &mut broadcast::Receiver<StatusEvent>, id: &TaskId) -> Vec<StatusEvent> {
    let mut out = Vec::new();
    loop {
        match events.try_recv() {
            Ok(event) if event.task.id() == id => out.push(event),
            Ok(_) => {}
            Err(broadcast::error::TryRecvError::Lagged(n)) => panic!("receiver lagged by {n}"),
            Err(_) => return out,
        }
    }
}

/// Collects the events of task `id` until one with `revision` arrives (it is published just
/// after the commit that `get` already shows), then drains what else is already there.
///
/// # Panics
/// When that revision is not published in time.
pub async fn events_through(
    events: &mut broadcast::Receiver<StatusEvent>,
    id: &TaskId,
    revision: u64,
) -> Vec<StatusEvent> {
    let mut out = Vec::new();
    let wait = async {
        loop {
            match events.recv().await {
                Ok(event) if event.task.id() == id => {
                    let reached = event.task.revision() >= revision;
                    out.push(event);
                    if reached {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => panic!("event stream failed: {e}"),
            }
        }
    };
    within(
        &format!("revision {revision} of {id:?} to be published"),
        wait,
    )
    .await;
    out.extend(drain_for(events, id));
    out
}

/// Asserts the published states of one task are well ordered: revision 1 first, strictly
/// increasing, and nothing after the first terminal state.
///
/// # Panics
/// When they are not.
pub fn assert_event_order(events: &[StatusEvent]) {
    let history: Vec<(u64, TaskStatus)> = events
        .iter()
        .map(|e| (e.task.revision(), e.task.status()))
        .collect();
    assert_eq!(
        history.first().map(|h| h.0),
        Some(1),
        "creation first: {history:?}"
    );
    assert!(
        history.windows(2).all(|w| w[0].0 < w[1].0),
        "revisions strictly increasing: {history:?}"
    );
    if let Some(first_terminal) = history.iter().position(|h| h.1.is_terminal()) {
        assert_eq!(
            first_terminal,
            history.len() - 1,
            "nothing published after the first terminal state: {history:?}"
        );
    }
}
