//! Helpers shared by the integration tests: tasks, work and reducer updates.
#![allow(dead_code)] // each test binary uses a different subset

use std::collections::BTreeMap;
#[allow(unused_imports)] // each test binary uses a different subset
pub(crate) use tasks_store_contract::{at, id, new_task, next, object, work, NODE_A, NODE_B, T0};

use serde_json::json;
use tasks_core::{Event, InputRequest, Task, TaskUpdate, Timestamp};
use tasks_runtime::store::CreateLimits;

pub(crate) const ROOMY: CreateLimits = CreateLimits {
    max_tasks: 100_000,
    max_active_per_scope: 100_000,
    lease_required: false,
};

pub(crate) fn ask(task: &Task, key: &str, now: Timestamp) -> TaskUpdate {
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

pub(crate) fn answer(task: &Task, key: &str, now: Timestamp) -> TaskUpdate {
    let mut responses = BTreeMap::new();
    responses.insert(key.to_owned(), json!({"action": "accept", "content": {}}));
    next(task, Event::InputResponsesAccepted { responses }, now)
}

pub(crate) fn complete(task: &Task, now: Timestamp) -> TaskUpdate {
    let result = object(json!({"content": [{"type": "text", "text": "done ✓"}], "isError": false}));
    next(
        task,
        Event::Completed {
            result: result.into(),
        },
        now,
    )
}

pub(crate) fn cancel(task: &Task, now: Timestamp) -> TaskUpdate {
    next(task, Event::Cancelled, now)
}
