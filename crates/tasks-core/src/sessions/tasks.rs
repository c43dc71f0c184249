//! Tasks as MCP 2025-11-25 shows them: the task hint and the `taskSupport` table, the task
//! object (`ttl`, `pollInterval`, a status derived from the stored outcome), the nested
//! `CreateTaskResult`, and the `tasks/result` payload.
//!
//! Source: MCP 2025-11-25 tasks
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks>: "Tool-Level
//! Negotiation", "Creating Tasks", "Getting Tasks", "Result Retrieval", "Task Cancellation",
//! "Associating Task-Related Messages") and schema (`Task`, `CreateTaskResult`,
//! `TaskMetadata`). One stored task serves both eras: the runtime keeps the raw outcome, and
//! each era derives its view.
//!
//! | stored state | 2025-11-25 `status` | `tasks/result` |
//! |---|---|---|
//! | working, input_required | the same | blocks until terminal |
//! | completed, result without `isError: true` | `completed` | the result |
//! | completed, result with `isError: true` | `failed` (2025-11-25: a tool error fails the task) | the result |
//! | failed (a JSON-RPC error) | `failed` | that error, as the answer |
//! | cancelled | `cancelled` | -32602 `Task was cancelled: it has no result` (this server's choice: the revision defines no payload) |

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use crate::catalog::invalid_cursor;
use crate::error::{JsonRpcError, McpError};
use crate::id::TaskId;
use crate::negotiation::TaskPolicy;
use crate::task::{Task, TaskState};
use crate::JsonObject;

use crate::protocol::META_RELATED_TASK;

/// The shortest retention a client may ask for with the hint's `ttl`, in milliseconds.
pub const MIN_REQUESTED_TTL_MS: u64 = 1_000;

/// A `params.task` hint: the client asks for a task, keeping it `ttl_ms` from creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskHint {
    /// `task.ttl`, in milliseconds, when given.
    pub ttl_ms: Option<u64>,
}

impl TaskHint {
    /// Reads `params.task`: `None` when absent or `null`.
    ///
    /// # Errors
    /// -32602 when `task` is not an object or its `ttl` is not a non-negative integer.
    /// Unknown keys (e.g. `pollInterval`) are ignored.
    pub fn parse(params: &Value) -> Result<Option<TaskHint>, McpError> {
        match params.get("task") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(hint)) => match hint.get("ttl") {
                None | Some(Value::Null) => Ok(Some(TaskHint { ttl_ms: None })),
                Some(ttl) => ttl
                    .as_u64()
                    .map(|ttl| Some(TaskHint { ttl_ms: Some(ttl) }))
                    .ok_or_else(|| {
                        McpError::invalid_params("task.ttl must be a non-negative integer")
                    }),
            },
            Some(_) => Err(McpError::invalid_params("task must be an object")),
        }
    }

    /// The retention to keep: the asked `ttl` clamped to
    /// [[`MIN_REQUESTED_TTL_MS`], `server_ttl_ms`] (`None` server TTL: no upper bound), or
    /// the server's TTL when none was asked (MCP 2025-11-25 tasks, "TTL and Resource
    /// Management": the receiver may override the requested TTL).
    pub fn ttl(self, server_ttl_ms: Option<u64>) -> Option<u64> {
        match (self.ttl_ms, server_ttl_ms) {
            (None, server) => server,
            (Some(asked), None) => Some(asked.max(MIN_REQUESTED_TTL_MS)),
            (Some(asked), Some(server)) => {
                Some(asked.clamp(MIN_REQUESTED_TTL_MS.min(server), server))
            }
        }
    }
}

/// What a `tools/call` of a session offered tasks does, by the tool's policy and the hint
/// (MCP 2025-11-25 tasks, "Tool-Level Negotiation"; `execution.taskSupport` is the policy as
/// [`super::wire::TaskSupport`] publishes it):
///
/// | policy (`taskSupport`) | hint | no hint |
/// |---|---|---|
/// | sync (`forbidden`) | -32601 | run now |
/// | optional | create a task | run now |
/// | required | create a task | -32601 |
///
/// # Errors
/// -32601 with the message naming the mismatch.
pub fn decide(policy: TaskPolicy, hint: Option<TaskHint>) -> Result<Option<TaskHint>, McpError> {
    match (policy, hint) {
        (TaskPolicy::Sync, Some(_)) => Err(McpError::TaskSupportMismatch(
            "This tool does not support task-augmented calls",
        )),
        (TaskPolicy::Required, None) => Err(McpError::TaskSupportMismatch(
            "This tool must be called with a task (params.task)",
        )),
        (_, hint) => Ok(hint),
    }
}

/// The 2025-11-25 status of `task`: the stored one, except that a completed task whose
/// result is a tool error (`isError: true`) is `failed`.
pub fn status(task: &Task) -> &'static str {
    match task.state() {
        TaskState::Completed { result } if result.is_error() => "failed",
        state => state.status().as_str(),
    }
}

/// A task as 2025-11-25 shows it (schema `Task`): `taskId`, `status`, `statusMessage?`,
/// `createdAt`, `lastUpdatedAt`, `ttl` (milliseconds, `null` when unlimited),
/// `pollInterval?` (milliseconds). The `tasks/get` and `tasks/cancel` results and the
/// `notifications/tasks/status` params are this object, flat.
#[derive(Debug, Clone, Copy)]
pub struct SessionTaskView<'a>(pub &'a Task);

impl Serialize for SessionTaskView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let task = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("taskId", task.id())?;
        map.serialize_entry("status", status(task))?;
        if let Some(message) = task.status_message() {
            map.serialize_entry("statusMessage", message)?;
        }
        map.serialize_entry("createdAt", &task.created_at())?;
        map.serialize_entry("lastUpdatedAt", &task.last_updated_at())?;
        map.serialize_entry("ttl", &task.ttl_ms())?;
        if let Some(interval) = task.poll_interval_ms() {
            map.serialize_entry("pollInterval", &interval.get())?;
        }
        map.end()
    }
}

/// The 2025-11-25 `CreateTaskResult`: `{"task": {…}}`, nested, without `resultType`.
pub fn creation(task: &Task) -> Value {
    json!({ "task": SessionTaskView(task) })
}

/// The most tasks one `tasks/list` page holds.
pub const LIST_PAGE: usize = 100;

/// The opaque `nextCursor` after task `last`: its id, base64url-encoded.
pub fn cursor_after(last: &TaskId) -> String {
    URL_SAFE_NO_PAD.encode(last.as_str())
}

/// Reads a `tasks/list` cursor back into the task id it continues after.
///
/// # Errors
/// -32602 `Invalid cursor` for anything [`cursor_after`] did not make (MCP 2025-11-25 tasks,
/// "Task Listing": an invalid cursor is -32602).
pub fn parse_cursor(cursor: &str) -> Result<TaskId, McpError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| invalid_cursor())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid_cursor())?;
    TaskId::parse(&text).map_err(|_| invalid_cursor())
}

/// The `tasks/list` result: `{"tasks": [Task…], "nextCursor"?}`; `nextCursor` is set when the
/// page is full (more tasks may follow).
pub fn list_result(page: &[std::sync::Arc<Task>]) -> Value {
    let tasks: Vec<SessionTaskView<'_>> = page.iter().map(|t| SessionTaskView(t)).collect();
    match page.last().filter(|_| page.len() >= LIST_PAGE) {
        Some(last) => json!({"tasks": tasks, "nextCursor": cursor_after(last.id())}),
        None => json!({ "tasks": tasks }),
    }
}

/// The `_meta` of a message tied to task `task_id`.
pub fn related_task(task_id: &str) -> Value {
    json!({ "taskId": task_id })
}

/// The params of a 2025-11-25 `notifications/progress` showing `task`'s progress (`None` when
/// its work reported none): `progressToken` (the creating `tools/call`'s: MCP 2025-11-25
/// tasks, "Task Progress Notifications", keeps it valid for the whole task), `progress`,
/// `total` when known, the task's `statusMessage` as `message` when it has one, and
/// `_meta["io.modelcontextprotocol/related-task"]` ("Associating Task-Related Messages":
/// required on notifications made for a task). Progress, "Progress Flow"
/// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress>):
/// whole numbers are written as integers.
pub fn progress_notification(task: &Task, progress_token: &Value) -> Option<Value> {
    let progress = task.progress()?;
    let number = |n: f64| serde_json::to_value(crate::number::Number(n)).unwrap_or(Value::Null);
    let mut params = JsonObject::new();
    params.insert("progressToken".into(), progress_token.clone());
    params.insert("progress".into(), number(progress.done()));
    if let Some(total) = progress.total() {
        params.insert("total".into(), number(total));
    }
    if let Some(message) = task.status_message() {
        params.insert("message".into(), Value::from(message));
    }
    params.insert(
        "_meta".into(),
        json!({ META_RELATED_TASK: related_task(task.id().as_str()) }),
    );
    Some(Value::Object(params))
}

/// What `tasks/result` answers for `task`: `None` while it is not terminal (the request
/// blocks); else the result of the underlying call with
/// `_meta["io.modelcontextprotocol/related-task"]` added, or the error to answer with.
pub fn payload(task: &Task) -> Option<Result<JsonObject, JsonRpcError>> {
    match task.state() {
        TaskState::Working | TaskState::InputRequired { .. } => None,
        TaskState::Completed { result } => {
            let mut result = super::wire::session_result(result.to_object());
            let related = related_task(task.id().as_str());
            match result.get_mut("_meta") {
                Some(Value::Object(meta)) => {
                    meta.insert(META_RELATED_TASK.into(), related);
                }
                _ => {
                    let mut meta = JsonObject::new();
                    meta.insert(META_RELATED_TASK.into(), related);
                    result.insert("_meta".into(), Value::Object(meta));
                }
            }
            Some(Ok(result))
        }
        TaskState::Failed { error } => Some(Err((**error).clone())),
        TaskState::Cancelled => Some(Err(McpError::invalid_params(
            "Task was cancelled: it has no result",
        )
        .to_error_object())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_parses_and_its_ttl_is_clamped() {
        assert_eq!(TaskHint::parse(&json!({})), Ok(None));
        assert_eq!(TaskHint::parse(&json!({"task": null})), Ok(None));
        assert_eq!(
            TaskHint::parse(&json!({"task": {"pollInterval": 5}})),
            Ok(Some(TaskHint { ttl_ms: None }))
        );
        assert_eq!(
            TaskHint::parse(&json!({"task": {"ttl": 60000}})),
            Ok(Some(TaskHint {
                ttl_ms: Some(60_000)
            }))
        );
        for bad in [
            json!({"task": 1}),
            json!({"task": {"ttl": -1}}),
            json!({"task": {"ttl": 1.5}}),
        ] {
            assert_eq!(TaskHint::parse(&bad).unwrap_err().code(), -32602, "{bad}");
        }
        let hint = |ttl| TaskHint { ttl_ms: ttl };
        assert_eq!(hint(None).ttl(Some(3_600_000)), Some(3_600_000));
        assert_eq!(hint(None).ttl(None), None);
        assert_eq!(hint(Some(60_000)).ttl(Some(3_600_000)), Some(60_000));
        assert_eq!(hint(Some(10)).ttl(Some(3_600_000)), Some(1_000));
        assert_eq!(hint(Some(u64::MAX)).ttl(Some(3_600_000)), Some(3_600_000));
        assert_eq!(hint(Some(10)).ttl(Some(500)), Some(500));
        assert_eq!(hint(Some(u64::MAX)).ttl(None), Some(u64::MAX));
    }

    #[test]
    fn cursors_round_trip_and_anything_else_is_invalid() {
        let id = TaskId::parse("abc/+=é").unwrap();
        assert_eq!(parse_cursor(&cursor_after(&id)), Ok(id));
        for bad in ["", "!!", "%%%", "_w"] {
            assert_eq!(
                parse_cursor(bad).unwrap_err().to_string(),
                "Invalid cursor",
                "{bad}"
            );
        }
    }

    #[test]
    fn the_task_support_table() {
        let hint = Some(TaskHint { ttl_ms: None });
        assert_eq!(decide(TaskPolicy::Sync, None), Ok(None));
        assert_eq!(decide(TaskPolicy::Optional, None), Ok(None));
        assert_eq!(decide(TaskPolicy::Optional, hint), Ok(hint));
        assert_eq!(decide(TaskPolicy::Required, hint), Ok(hint));
        for (policy, hint) in [(TaskPolicy::Sync, hint), (TaskPolicy::Required, None)] {
            let error = decide(policy, hint).unwrap_err();
            assert_eq!(error.code(), -32601, "{policy:?}");
        }
    }
}
