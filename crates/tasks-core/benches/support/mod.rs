//! Inputs shared by the tasks-core micro-benchmarks: a small task in each state, the fixture's
//! `slow_compute` result and `confirm_delete` elicitation, and the serverInfo `_meta`. Only
//! these benchmarks use them, so they stay beside them (not in `tasks-test-support`).

#![allow(dead_code)] // each bench file uses a different subset

use std::num::NonZeroU64;
use std::time::Duration;

use criterion::Criterion;
use serde_json::{json, Value};
use tasks_core::input::InputRequest;
use tasks_core::TASK_ID_RANDOM_BYTES;
use tasks_core::{apply, Event, JsonObject, Task, TaskId, Timestamp};

/// Short runs: a few seconds per benchmark (`cargo bench -p tasks-core`).
pub(crate) fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50)
}

/// A fixed instant.
pub(crate) fn now() -> Timestamp {
    Timestamp::from_unix_millis(1_793_000_000_000)
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// A `working` task as created by the runtime (32-character id, TTL, poll interval).
pub(crate) fn working() -> Task {
    Task::new(
        TaskId::from_random_bytes([0x5a; TASK_ID_RANDOM_BYTES]),
        now(),
        Some(3_600_000),
        NonZeroU64::new(100),
    )
}

/// The `slow_compute` result: one text block.
pub(crate) fn small_result() -> JsonObject {
    object(json!({"content": [{"type": "text", "text": "Completed"}], "isError": false}))
}

/// The `confirm_delete` elicitation.
pub(crate) fn elicitation() -> InputRequest {
    InputRequest {
        method: "elicitation/create".into(),
        params: Some(object(json!({
            "message": "Delete a.txt?",
            "requestedSchema": {"type": "object",
                                "properties": {"confirm": {"type": "boolean"}},
                                "required": ["confirm"]},
        }))),
    }
}

/// A task in `completed` with [`small_result`].
pub(crate) fn completed() -> Task {
    apply(
        &working(),
        Event::Completed {
            result: small_result().into(),
        },
        now(),
    )
    .expect("completes")
    .task
}

/// A task parked in `input_required` on key `confirm-delete`.
pub(crate) fn input_required() -> Task {
    let event = Event::InputRequested {
        key: "confirm-delete".into(),
        request: elicitation(),
    };
    apply(&working(), event, now()).expect("parks").task
}

/// The serverInfo result `_meta` the HTTP layer adds.
pub(crate) fn server_meta() -> JsonObject {
    object(
        json!({"io.modelcontextprotocol/serverInfo": {"name": "tasks-fixture", "version": "0.1.0"}}),
    )
}
