//! Snapshots of every wire shape the core renders, with fixed ids and timestamps.

mod common;

use common::*;
use serde_json::{json, Value};
use tasks_core::jsonrpc;
use tasks_core::protocol::META_RELATED_TASK;
use tasks_core::sessions::tasks::progress_notification;
use tasks_core::wire::{ack, creation, detailed, task_notification, ResultMeta};
use tasks_core::{
    apply, CapacityLimit, Event, JsonObject, JsonRpcError, McpError, Progress, RequestMeta, Task,
    TaskId,
};

/// What `value` puts on the wire, for a snapshot: its `serde_json` bytes read back in their
/// own order (a stored result is written as its kept text, which only `serde_json` does).
struct Wire(String);

impl serde::Serialize for Wire {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut bytes = serde_json::Deserializer::from_str(&self.0);
        serde_transcode::Transcoder::new(&mut bytes).serialize(serializer)
    }
}

fn wire(value: impl serde::Serialize) -> Wire {
    Wire(serde_json::to_string(&value).unwrap())
}

fn server_meta() -> JsonObject {
    object(json!({
        "io.modelcontextprotocol/serverInfo": {"name": "snodo-conformance", "version": "0.1.0"}
    }))
}

fn next(task: &Task, event: Event, at_ms: u64) -> Task {
    let t = apply(task, event, ts(at_ms)).unwrap();
    assert!(t.changed);
    t.task
}

/// One task per status, named by status.
fn tasks() -> Vec<(&'static str, Task)> {
    let working = Task::new(
        TaskId::parse("pS3xq0cLrM7f2n1kHf8WbQZ7uD0aYt4e").unwrap(),
        ts(T0),
        Some(3_600_000),
        std::num::NonZeroU64::new(100),
    );
    let input_required = next(
        &working,
        Event::InputRequested {
            key: "confirm-delete".into(),
            request: request(0),
        },
        T0 + 1_000,
    );
    let completed = next(
        &working,
        Event::Completed {
            result: object(json!({
                "resultType": "complete",
                "content": [{"type": "text", "text": "Completed lifecycle-create"}],
                "isError": false,
                "_meta": {
                    "io.modelcontextprotocol/serverInfo": {"name": "snodo-conformance", "version": "0.1.0"},
                    META_RELATED_TASK: {"taskId": "pS3xq0cLrM7f2n1kHf8WbQZ7uD0aYt4e"}
                }
            }))
            .into(),
        },
        T0 + 2_007,
    );
    let failed = next(
        &working,
        Event::Failed {
            error: JsonRpcError {
                code: -32603,
                message: "Tool raised an exception".into(),
                data: None,
            },
        },
        T0 + 2_007,
    );
    let cancelled = next(&input_required, Event::Cancelled, T0 + 3_000);
    vec![
        ("working", working),
        ("input_required", input_required),
        ("completed", completed),
        ("failed", failed),
        ("cancelled", cancelled),
    ]
}

#[test]
fn creation_results() {
    let meta = server_meta();
    for (status, task) in tasks() {
        insta::assert_json_snapshot!(
            format!("creation_{status}"),
            wire(creation(&task).with_meta(&meta))
        );
    }
}

#[test]
fn detailed_results() {
    let meta = server_meta();
    for (status, task) in tasks() {
        insta::assert_json_snapshot!(
            format!("detailed_{status}"),
            wire(detailed(&task).with_meta(&meta))
        );
    }
}

#[test]
fn notification_of_a_completed_task() {
    let (_, completed) = tasks().swap_remove(2);
    let meta = object(json!({"io.modelcontextprotocol/subscriptionId": "overwritten", "k": 1}));
    insta::assert_json_snapshot!(
        "notification_completed",
        wire(task_notification(&completed, &json!("sub-1")).with_meta(&meta))
    );
    insta::assert_json_snapshot!(
        "notification_completed_integer_id",
        wire(task_notification(&completed, &json!(7)))
    );
}

/// A working task whose work reported 40 of 100 steps with a message.
fn in_progress() -> Task {
    let (_, working) = tasks().swap_remove(0);
    next(
        &working,
        Event::Progress {
            progress: Progress::new(40.0, Some(100.0)).unwrap(),
            message: Some("Indexed 40 of 100 pages".into()),
        },
        T0 + 1_500,
    )
}

/// The experimental progress key (tasks_core::Progress) on `tasks/get` and
/// `notifications/tasks`, beside the server's own `_meta`.
#[test]
fn progress_in_meta() {
    let task = in_progress();
    insta::assert_json_snapshot!(
        "detailed_working_progress",
        wire(detailed(&task).with_result_meta(&ResultMeta::new(server_meta())))
    );
    insta::assert_json_snapshot!(
        "notification_working_progress",
        wire(task_notification(&task, &json!("sub-1")))
    );
    // A progress of unknown total, with a fraction.
    let unknown = next(
        &task,
        Event::Progress {
            progress: Progress::new(41.5, None).unwrap(),
            message: None,
        },
        T0 + 1_600,
    );
    insta::assert_json_snapshot!(
        "detailed_working_progress_no_total",
        wire(detailed(&unknown))
    );
}

/// The 2025-11-25 `notifications/progress` of a task's progress, with the creating call's
/// token.
#[test]
fn progress_for_a_2025_session() {
    let params = progress_notification(&in_progress(), &json!("call-7")).unwrap();
    insta::assert_json_snapshot!(
        "legacy_progress_notification",
        Wire(String::from_utf8(jsonrpc::notification("notifications/progress", &params)).unwrap())
    );
}

/// The storage form (the `task` column of the SQLite and PostgreSQL stores) of a task with
/// progress: one member more than a task without.
#[test]
fn stored_form_with_progress() {
    insta::assert_json_snapshot!("stored_working_progress", wire(in_progress()));
}

#[test]
fn acknowledgement() {
    insta::assert_json_snapshot!("ack_with_meta", ack(Some(&server_meta())));
    insta::assert_json_snapshot!("ack_bare", ack(None));
}

/// Every variant (and every `CapacityLimit`), with the HTTP status it answers with.
#[test]
fn error_objects() {
    let errors = [
        McpError::Parse,
        McpError::InvalidRequest("Invalid Request"),
        McpError::BodyTooLarge { limit: 4_194_304 },
        McpError::MethodNotFound,
        McpError::invalid_params("Unknown tool: nope"),
        McpError::UnknownTask,
        McpError::TaskInputTooLarge { limit: 262_144 },
        McpError::CapacityExhausted(CapacityLimit::MaxJobs),
        McpError::CapacityExhausted(CapacityLimit::MaxTasks),
        McpError::CapacityExhausted(CapacityLimit::MaxActiveTasksPerScope),
        McpError::Internal("Internal error"),
        McpError::StoreUnavailable,
        McpError::StoreOutcomeUnknown,
        McpError::HeaderMismatch("Mcp-Name header does not match the request params"),
        McpError::missing_tasks_capability(),
        McpError::UnsupportedVersion {
            requested: "2025-11-25".into(),
        },
        McpError::Unauthorized,
        McpError::ForbiddenOrigin,
        McpError::HttpMethodNotAllowed,
        McpError::UnsupportedMediaType,
    ];
    let rendered: Vec<Value> = errors
        .iter()
        .map(|e| json!({"http": e.http_status(), "error": e.to_error_object()}))
        .collect();
    insta::assert_json_snapshot!("error_objects", rendered);
}

/// The error object of every params and request `_meta` validation failure.
#[test]
fn validation_error_objects() {
    use tasks_core::plan::{parse_task_ref, parse_update};
    let update = |r: Value| json!({"taskId": "t1", "inputResponses": r});
    let mut rendered = Vec::new();
    for params in [
        json!([]),
        json!({"taskId": 42}),
        json!({"taskId": "a".repeat(257)}),
    ] {
        rendered.push(parse_task_ref(&params).unwrap_err().to_error_object());
    }
    for params in [
        json!({"taskId": "t1"}),
        update(json!({"": {}})),
        update(json!({"k": 1})),
    ] {
        rendered.push(parse_update(&params).unwrap_err().to_error_object());
    }
    for params in [
        json!({}),
        json!({"_meta": {}}),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    ] {
        rendered.push(
            RequestMeta::parse(Some(&params))
                .unwrap_err()
                .to_error_object(),
        );
    }
    let settings = json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {"x": 1}}}
    }});
    let meta = RequestMeta::parse(Some(&settings)).unwrap();
    rendered.push(meta.declares_tasks().unwrap_err().to_error_object());
    insta::assert_json_snapshot!("validation_error_objects", rendered);
}
