//! Delivering a 2025-11-25 task's input requests to its client: as JSON-RPC requests of the
//! session (with `related-task` `_meta`) on one stream at a time, either the stream of an open
//! `tasks/result` or the session's GET stream (MCP 2025-11-25 tasks, "Input Required Status":
//! clients should expect them on any stream), and the answers handed to the task as its input
//! responses.
//!
//! A delivery reads the task again once it holds the session's claim on it, and asks only the
//! requests outstanding then: a snapshot taken before another delivery was answered would ask
//! the same question twice.
//!
//! An answer that is a JSON-RPC error declines an elicitation and cancels the task for any
//! other request (this server's choice: the task's input responses have no error form).

use std::sync::Arc;

use serde_json::json;
use tasks_core::input::METHOD_ELICIT;
use tasks_core::sessions::session::Delivered;
use tasks_core::{Task, TaskState};
use tasks_runtime::TaskRuntime;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::frames::{ask, Frame};
use super::sessions::Session;

/// Delivers `task`'s outstanding input requests on `tx` (closed when `stop` fires) and waits
/// for the answers.
pub(crate) async fn deliver(
    runtime: &TaskRuntime,
    session: &Arc<Session>,
    task: &Task,
    tx: &mpsc::Sender<Frame>,
    stop: &CancellationToken,
) -> Delivered {
    if !matches!(task.state(), TaskState::InputRequired { .. }) {
        return Delivered::Done;
    }
    let id = task.id();
    let Some(_claim) = session.deliver(id) else {
        return Delivered::Busy;
    };
    // `task` may be stale: another delivery may have asked, been answered and released its
    // claim since it was read. Only what is outstanding now is asked, so no question is put to
    // the client twice.
    let current = match runtime.get(&session.scope, id).await {
        Ok(current) => current,
        Err(error) => return Delivered::Failed(error),
    };
    let TaskState::InputRequired { input_requests } = current.state() else {
        return Delivered::Done;
    };
    let asked = input_requests.as_map().clone();
    let methods: Vec<(String, String)> = asked
        .iter()
        .map(|(key, request)| (key.clone(), request.method.clone()))
        .collect();
    let scope = &session.scope;
    let outcome = match ask(session, asked, Some(id), tx, stop).await {
        None => return Delivered::Stopped,
        Some(Ok(answers)) => {
            runtime
                .update(scope, id, answers.into_iter().collect())
                .await
        }
        Some(Err(refused)) => {
            let elicitation = methods
                .iter()
                .any(|(key, method)| *key == refused.key && method == METHOD_ELICIT);
            if elicitation {
                let decline = [(refused.key, json!({"action": "decline"}))];
                runtime
                    .update(scope, id, decline.into_iter().collect())
                    .await
            } else {
                runtime.cancel(scope, id).await
            }
        }
    };
    match outcome {
        Ok(()) => Delivered::Done,
        Err(error) => Delivered::Failed(error),
    }
}
