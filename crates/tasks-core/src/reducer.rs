//! The pure reducer: `apply(task, event, now)` → new task and effects.
//!
//! Rules (SEP-2663 "Task Status" and "Task Update Requests",
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>,
//! for the statuses, terminal states, unique keys, ignored keys and partial answers; the rest is
//! this server's choice):
//! * a terminal task (`completed`, `failed`, `cancelled`) absorbs every event unchanged;
//! * an input key is unique for the task's lifetime: asking again under a pending key with the
//!   same request is a no-op, with a different request (or after it was answered) an error;
//! * responses for keys that are not outstanding are ignored; a response for an outstanding
//!   key must fit its request ([`InputRequest::check_response`](crate::input::InputRequest::check_response)),
//!   or the whole event is refused and nothing is applied; answered keys leave
//!   `inputRequests`; with none left the task returns to `working`;
//! * `statusMessage` says what the task waits for: `Waiting for input: <keys>` while
//!   `input_required`, `Input received` when it works again, and the work's own message after
//!   [`Event::StatusMessage`] (ignored while input is outstanding);
//! * a task's progress ([`Event::Progress`], this server's addition) only moves forward: a
//!   progress not ahead of the task's is ignored (a re-run after a crash counting from zero
//!   again included), and is kept once the task is terminal;
//! * every real change increments the revision by one and sets `lastUpdatedAt` to
//!   `max(now, lastUpdatedAt)`; a no-op changes nothing, not even the revision.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::event::Event;
use crate::input::{InputResponse, InvalidResponse};
use crate::raw::RawObject;
use crate::task::{
    Answered, InputRequests, Task, TaskState, MESSAGE_CANCELLED, MESSAGE_CANCELLED_BY_OPERATOR,
    MESSAGE_INPUT_RECEIVED,
};
use crate::time::Timestamp;

/// The outcome of [`apply`]. Only the reducer builds one (it is `non_exhaustive`), so a
/// [`TaskUpdate`] taken from it is always the reducer's output.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Transition {
    /// The task after the event (equal to the input task when `changed` is false).
    pub task: Task,
    /// Whether anything changed (and so the revision was incremented).
    pub changed: bool,
    /// Effect: the input keys this event fulfilled, with their checked responses, so a runtime
    /// can wake exactly the waiters of those keys.
    pub fulfilled: BTreeMap<String, InputResponse>,
}

impl Transition {
    /// The change to commit, or `None` when the event changed nothing.
    pub fn into_update(self) -> Option<TaskUpdate> {
        self.split().0
    }

    /// The change to commit (`None` when nothing changed) and the fulfilled input keys.
    pub fn split(self) -> (Option<TaskUpdate>, BTreeMap<String, InputResponse>) {
        let update = self.changed.then_some(TaskUpdate { task: self.task });
        (update, self.fulfilled)
    }
}

/// A change the reducer made to a task: the only thing a store commits. Its task's revision
/// is exactly one more than the revision it replaces ([`TaskUpdate::expected_revision`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskUpdate {
    task: Task,
}

impl TaskUpdate {
    /// The task after the change.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The revision the stored task must have for this change to apply (compare-and-set).
    pub fn expected_revision(&self) -> u64 {
        self.task.revision - 1
    }

    /// The task after the change, owned.
    pub fn into_task(self) -> Task {
        self.task
    }
}

/// An event the reducer refuses; the task is left unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReduceError {
    /// The input key is empty.
    #[error("input request keys must not be empty")]
    EmptyKey,
    /// The key was already used for a different request, or was already answered.
    #[error("input request key {0:?} was already used in this task")]
    KeyReused(String),
    /// A response for an outstanding key does not fit its request; nothing was applied.
    #[error("invalid input response for {key:?}: {reason}")]
    InvalidResponse {
        /// The outstanding key (server-chosen).
        key: String,
        /// What is wrong with the response.
        reason: InvalidResponse,
    },
}

/// Applies `event` to `task` at time `now`.
///
/// # Errors
/// [`ReduceError`] for an input request that would break key uniqueness, or a response that
/// does not fit its outstanding request. Terminal tasks never error: they absorb every event.
pub fn apply(task: &Task, event: Event, now: Timestamp) -> Result<Transition, ReduceError> {
    if task.is_terminal() {
        return Ok(unchanged(task));
    }
    let mut next = task.clone();
    let mut fulfilled = BTreeMap::new();
    match event {
        Event::InputRequested { key, request } => {
            if key.is_empty() {
                return Err(ReduceError::EmptyKey);
            }
            if next.extras.contains_key(&key) {
                return Err(ReduceError::KeyReused(key));
            }
            match &mut next.state {
                TaskState::InputRequired { input_requests } => match input_requests.get(&key) {
                    Some(existing) if *existing == request => return Ok(unchanged(task)),
                    Some(_) => return Err(ReduceError::KeyReused(key)),
                    None => input_requests.insert(key, request),
                },
                _ => {
                    next.state = TaskState::InputRequired {
                        input_requests: InputRequests::single(key, request),
                    }
                }
            }
            if let TaskState::InputRequired { input_requests } = &next.state {
                next.status_message = Some(input_requests.waiting_message().into());
            }
        }
        Event::InputResponsesAccepted { responses } => {
            let TaskState::InputRequired { input_requests } = &task.state else {
                return Ok(unchanged(task));
            };
            // Check every answer to an outstanding key before applying any (all or nothing).
            for (key, response) in responses {
                if let Some(request) = input_requests.get(&key) {
                    let checked = request.check_response(&response).map_err(|reason| {
                        ReduceError::InvalidResponse {
                            key: key.clone(),
                            reason,
                        }
                    })?;
                    fulfilled.insert(key, checked);
                }
            }
            if fulfilled.is_empty() {
                return Ok(unchanged(task));
            }
            let mut remaining = Some(input_requests.clone());
            for (key, answer) in &fulfilled {
                let Some(pending) = remaining.take() else {
                    break;
                };
                let (rest, removed) = pending.without(key);
                remaining = rest;
                if let Some(request) = removed {
                    let response = answer.to_value();
                    next.extras
                        .insert(key.clone(), Answered { request, response });
                }
            }
            next.state = match remaining {
                Some(input_requests) => {
                    next.status_message = Some(input_requests.waiting_message().into());
                    TaskState::InputRequired { input_requests }
                }
                None => {
                    next.status_message = Some(MESSAGE_INPUT_RECEIVED.into());
                    TaskState::Working
                }
            };
        }
        Event::StatusMessage { message } => {
            if !takes_message(task, &message) {
                return Ok(unchanged(task));
            }
            next.status_message = Some(message.into());
        }
        Event::Progress { progress, message } => {
            let ahead = progress.advances(task.extras.progress());
            let message = message.filter(|m| takes_message(task, m));
            if !ahead && message.is_none() {
                return Ok(unchanged(task));
            }
            if ahead {
                next.extras.set_progress(progress);
            }
            if let Some(message) = message {
                next.status_message = Some(message.into());
            }
        }
        Event::Completed { result } => {
            next.state = TaskState::Completed {
                result: without_related_task(result),
            };
            next.status_message = None;
        }
        Event::Failed { error } => {
            next.status_message = Some(error.message.as_str().into());
            next.state = TaskState::Failed {
                error: Box::new(error),
            };
        }
        Event::Cancelled => {
            next.state = TaskState::Cancelled;
            next.status_message = Some(MESSAGE_CANCELLED.into());
        }
        Event::CancelledByOperator => {
            next.state = TaskState::Cancelled;
            next.status_message = Some(MESSAGE_CANCELLED_BY_OPERATOR.into());
        }
    }
    if next.is_terminal() {
        next.extras.clear_answers();
    }
    next.revision += 1;
    next.last_updated_at = now.max(task.last_updated_at);
    Ok(Transition {
        task: next,
        changed: true,
        fulfilled,
    })
}

/// Removes the 2025-11-25 `io.modelcontextprotocol/related-task` key from a result's `_meta`:
/// the root `taskId` already names the task (runner check
/// `tasks-no-related-task-meta-on-inlined-result`).
fn without_related_task(result: RawObject) -> RawObject {
    // The key can only be in the object if its text is (a `RawObject` is what `serde_json`
    // writes, which never escapes these characters), so most results are kept as they are.
    if !result.as_str().contains(RELATED_TASK_META) {
        return result;
    }
    // A text the parser cannot read back (nested beyond its 128 levels) is kept as it is rather
    // than lost; the worker never stores a result deeper than `MAX_RESULT_DEPTH`.
    let Ok(mut object) = serde_json::from_str::<crate::JsonObject>(result.as_str()) else {
        return result;
    };
    if let Some(Value::Object(meta)) = object.get_mut("_meta") {
        meta.remove(RELATED_TASK_META);
    }
    RawObject::from(object)
}

/// The 2025-11-25 result `_meta` key that must never appear on a 2026-07-28 task result.
use crate::protocol::META_RELATED_TASK as RELATED_TASK_META;

/// Whether the work's `message` becomes the task's `statusMessage`: not while input is
/// outstanding (the message then says what the task waits for), nor when it is the current one.
fn takes_message(task: &Task, message: &str) -> bool {
    let waiting = matches!(task.state, TaskState::InputRequired { .. });
    !waiting && task.status_message.as_deref() != Some(message)
}

fn unchanged(task: &Task) -> Transition {
    Transition {
        task: task.clone(),
        changed: false,
        fulfilled: BTreeMap::new(),
    }
}
