//! What the stores' own tests build on [`tasks_store_contract`]'s helpers: roomy limits, and
//! the reducer's updates that park, answer, complete and cancel a task.

use std::collections::BTreeMap;

use serde_json::json;
use tasks_core::input::InputRequest;
use tasks_core::{Event, Task, TaskUpdate, Timestamp};
use tasks_runtime::store::CreateLimits;
pub use tasks_store_contract::{at, id, new_task, next, object, work, NODE_A, NODE_B, T0};

/// Limits no test reaches unless it means to.
pub const ROOMY: CreateLimits = CreateLimits {
    max_tasks: 100_000,
    max_active_per_scope: 100_000,
    lease_required: false,
};

/// The update parking `task` on input `key` (an empty form).
pub fn ask(task: &Task, key: &str, now: Timestamp) -> TaskUpdate {
    let request =
        InputRequest::elicit_form("Continue?", json!({"type": "object", "properties": {}}));
    next(
        task,
        Event::InputRequested {
            key: key.into(),
            request,
        },
        now,
    )
}

/// The update accepting an (empty) answer to input `key` of `task`.
pub fn answer(task: &Task, key: &str, now: Timestamp) -> TaskUpdate {
    let mut responses = BTreeMap::new();
    responses.insert(key.to_owned(), json!({"action": "accept", "content": {}}));
    next(task, Event::InputResponsesAccepted { responses }, now)
}

/// The update completing `task` with one text block, `text`.
pub fn complete_with(task: &Task, text: &str, now: Timestamp) -> TaskUpdate {
    let result = object(json!({"content": [{"type": "text", "text": text}], "isError": false}));
    next(
        task,
        Event::Completed {
            result: result.into(),
        },
        now,
    )
}

/// The update completing `task` with the text `done ✓`.
pub fn complete(task: &Task, now: Timestamp) -> TaskUpdate {
    complete_with(task, "done ✓", now)
}

/// The update cancelling `task`.
pub fn cancel(task: &Task, now: Timestamp) -> TaskUpdate {
    next(task, Event::Cancelled, now)
}
