//! What a session's streams carry: the [`Frame`]s a driver sends toward its response, a round
//! of server-to-client requests asked on one of them ([`ask`]), and the delivery of a
//! 2025-11-25 task's input requests ([`deliver`]).
//!
//! Delivering: as JSON-RPC requests of the session (with `related-task` `_meta`) on one stream
//! at a time, either the stream of an open `tasks/result` or the session's GET stream (MCP
//! 2025-11-25 tasks, "Input Required Status": clients should expect them on any stream), and
//! the answers handed to the task as its input responses. A delivery reads the task again once
//! it holds the session's claim on it, and asks only the requests outstanding then: a snapshot
//! taken before another delivery was answered would ask the same question twice. An answer
//! that is a JSON-RPC error declines an elicitation and cancels the task for any other request
//! (this server's choice: the task's input responses have no error form).

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::json;
use tasks_core::input::InputRequest;
use tasks_core::input::METHOD_ELICIT;
use tasks_core::sessions::session::{Delivered, Refused, Resolution, RoundId};
use tasks_core::{JsonObject, Task, TaskId, TaskState};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::live::Session;
use crate::runtime::TaskRuntime;

/// What a driver sends toward its response.
#[derive(Debug)]
pub enum Frame {
    /// A notification or a server-to-client request.
    Message(Bytes),
    /// The response: the last frame.
    Final(Bytes),
}

/// Asks the client the input requests `asked` (of task `related`, if any) as one round of
/// the session ([`Session::ask`]) on `tx`, and waits for the round to resolve. `None` when
/// the request stopped meanwhile (its stream closed, a cancellation, the session ended, the
/// task no longer needs the input): the round is closed, so a late answer is refused, and a
/// task's requests are withdrawn on a stream still open (`notifications/cancelled`, MCP
/// 2025-11-25 cancellation; best effort: never waits for a slow stream). `Some(Err(_))` when
/// the client answered one with a JSON-RPC error.
pub async fn ask(
    session: &Arc<Session>,
    asked: BTreeMap<String, InputRequest>,
    related: Option<&TaskId>,
    tx: &mpsc::Sender<Frame>,
    cancel: &CancellationToken,
) -> Option<Result<JsonObject, Refused>> {
    let (round, messages, resolution) = session.ask(asked, related, cancel);
    // Closes the round when this returns or is dropped (the stream closed, the driver
    // aborted), so a late answer is refused rather than lost.
    let _open = OpenRound { session, round };
    for message in messages {
        if tx.send(Frame::Message(message)).await.is_err() {
            return None;
        }
    }
    tokio::select! {
        () = cancel.cancelled() => {
            for notice in session.close(round, true) {
                if tx.try_send(Frame::Message(notice)).is_err() {
                    break;
                }
            }
            None
        }
        resolution = resolution => match resolution.ok()? {
            Resolution::Answered(answers) => Some(Ok(answers)),
            Resolution::Refused { key, code } => Some(Err(Refused { key, code })),
            Resolution::Waiting => None,
        },
    }
}

/// A round a driver waits on.
struct OpenRound<'a> {
    session: &'a Arc<Session>,
    round: RoundId,
}

impl Drop for OpenRound<'_> {
    fn drop(&mut self) {
        self.session.close(self.round, false);
    }
}

/// Delivers `task`'s outstanding input requests on `tx` (closed when `stop` fires) and waits
/// for the answers, which become the task's input responses (see the module docs).
pub async fn deliver(
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
