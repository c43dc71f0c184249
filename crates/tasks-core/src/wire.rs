//! Typed wire shapes of the base protocol that the Tasks server sends, each with `Serialize`
//! and `Deserialize` so a client can reuse them (the task projections, [`creation`] and the others, are here too).
//!
//! Sources: MCP 2026-07-28 schema (`DiscoverResult`, `ListToolsResult`, `Tool`,
//! `InputRequiredResult`, `ProgressNotificationParams`, `LoggingMessageNotificationParams`;
//! <https://modelcontextprotocol.io/specification/2026-07-28/schema>) and the `resultType` rule
//! (MCP 2026-07-28 basic, "ResultType": a result without it is read as `complete`).
//!
//! The task shapes a client reads ([`CreateTaskResult`], [`DetailedTask`]) are the owned
//! counterparts of the server's borrowed views ([`creation`], [`detailed`], [`ack`], [`task_notification`]); a property test
//! checks that every view reads back into them.
//!
//! Fields are declared in the order of their wire names, so a shape serializes to the same
//! bytes as the sorted JSON object it replaced (the byte-level snapshots stay stable).

// The task projections, used from here.
pub use crate::projection::{ack, creation, detailed, notification as task_notification};
pub use crate::projection::{ResultMeta, TaskView};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::id::TaskId;
use crate::input::InputRequest;
use crate::logging::LogLevel;
use crate::task::{TaskState, TaskStatus};
use crate::time::Timestamp;
use crate::JsonObject;

/// `resultType`: what kind of result a reply carries (`complete` when absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    /// A final result (also every `tasks/*` result).
    #[default]
    Complete,
    /// A `CreateTaskResult`.
    Task,
    /// An MRTR `InputRequiredResult`.
    InputRequired,
}

/// A tool's `CallToolResult` as sent: `resultType: "complete"` added when the tool left it
/// out (one place for this default, for synchronous calls and tasks alike).
pub fn complete(mut result: JsonObject) -> JsonObject {
    result
        .entry("resultType")
        .or_insert_with(|| Value::from("complete"));
    result
}

/// `cacheScope` of a cacheable result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any client may reuse it.
    Public,
    /// Only the requesting principal may reuse it (what a client assumes when a server
    /// leaves it out).
    #[default]
    Private,
}

/// The `server/discover` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// `io.modelcontextprotocol/serverInfo` and friends.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "JsonObject::is_empty"
    )]
    pub meta: JsonObject,
    /// Who may reuse it (`private` when a server leaves it out).
    #[serde(default)]
    pub cache_scope: CacheScope,
    /// `{"tools": {...}, "extensions": {"io.modelcontextprotocol/tasks": {}}}`.
    pub capabilities: JsonObject,
    /// Server instructions, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Always `complete` (also when absent).
    #[serde(default)]
    pub result_type: ResultType,
    /// The protocol revisions served.
    pub supported_versions: Vec<String>,
    /// How long the result may be cached, in milliseconds (0 when a server leaves it out).
    #[serde(default)]
    pub ttl_ms: u64,
}

/// One tool of a `tools/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// Its annotations, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<JsonObject>,
    /// What it does (optional in MCP: empty when a server leaves it out; this server always
    /// sends one).
    #[serde(default)]
    pub description: String,
    /// How it runs as a task, as a server that lists it says: `{"taskSupport": "forbidden" |
    /// "optional" | "required"}` (MCP 2025-11-25 tools, "Tool-Level Negotiation"), read for
    /// clients. MCP 2026-07-28 lists no task support (the server decides per call), so this
    /// server never sends it there: `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<JsonObject>,
    /// The JSON Schema (2020-12) of its arguments.
    pub input_schema: JsonObject,
    /// The tool name.
    pub name: String,
    /// The JSON Schema (2020-12) its results' `structuredContent` conforms to, if it declares
    /// one (MCP 2026-07-28 tools, "Output Schema").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// A human-readable name, if it has one (the `name` stays the identifier).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// The `tools/list` result. This server sends one page (no `nextCursor`); a client reads the
/// cursor of servers that page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsListResult {
    /// `io.modelcontextprotocol/serverInfo` and friends.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "JsonObject::is_empty"
    )]
    pub meta: JsonObject,
    /// The cursor of the next page, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Who may reuse it (`private` when a server leaves it out).
    #[serde(default)]
    pub cache_scope: CacheScope,
    /// Always `complete` (also when absent).
    #[serde(default)]
    pub result_type: ResultType,
    /// The tools, in registration order.
    pub tools: Vec<ToolEntry>,
    /// How long the result may be cached, in milliseconds (0 when a server leaves it out).
    #[serde(default)]
    pub ttl_ms: u64,
}

/// An MRTR `InputRequiredResult`: what the client must answer, and the state to echo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// `io.modelcontextprotocol/serverInfo` and friends.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "JsonObject::is_empty"
    )]
    pub meta: JsonObject,
    /// The requests, by server-chosen key.
    pub input_requests: BTreeMap<String, InputRequest>,
    /// The signed state the retry echoes.
    pub request_state: String,
    /// Always `input_required`.
    pub result_type: ResultType,
}

/// The params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// A human-readable message, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Progress so far; grows with every notification. Written as an integer when it is one.
    #[serde(serialize_with = "crate::number::whole_as_integer")]
    pub progress: f64,
    /// The request's `progressToken`.
    pub progress_token: Value,
    /// The total, if known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::number::optional_whole_as_integer"
    )]
    pub total: Option<f64>,
}

/// The params of `notifications/message` (a log message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogParams {
    /// The message: any JSON.
    pub data: Value,
    /// The severity.
    pub level: LogLevel,
    /// The logger's name, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
}

/// The base fields every task shape carries (SEP-2663 "Tasks"), flattened into
/// [`CreateTaskResult`] and [`DetailedTask`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskFields {
    /// When the task was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub last_updated_at: Timestamp,
    /// Suggested polling interval, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// What it is doing, if said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// The task id.
    pub task_id: TaskId,
    /// Time to live from creation in milliseconds; `None` (`null`) is unlimited.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
}

/// A `CreateTaskResult` as a client reads it: `resultType: "task"` and the task's base
/// fields, flat (SEP-2663 "Task Creation").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// The result's `_meta`.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "JsonObject::is_empty"
    )]
    pub meta: JsonObject,
    /// `task`.
    pub result_type: ResultType,
    /// The task's status at creation.
    pub status: TaskStatus,
    /// The base fields.
    #[serde(flatten)]
    pub task: TaskFields,
}

/// A `DetailedTask` as a client reads it: the `tasks/get` result (with `resultType:
/// "complete"`) or the params of `notifications/tasks` (without), the status with exactly its
/// payload (SEP-2663 "Task Polling", "Task Status Notifications").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The result's (or notification's) `_meta`.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "JsonObject::is_empty"
    )]
    pub meta: JsonObject,
    /// `complete` on a `tasks/get` result; absent in a notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The status and its payload (`inputRequests`, `result` or `error`).
    #[serde(flatten)]
    pub state: TaskState,
    /// The base fields.
    #[serde(flatten)]
    pub task: TaskFields,
}

impl DetailedTask {
    /// The progress the task's work reported, from `_meta` under
    /// [`META_PROGRESS`](crate::progress::META_PROGRESS) (this server's experimental key; see
    /// [`Progress`](crate::Progress)): `None` when the server sent none, or sent one that is not valid.
    pub fn progress(&self) -> Option<crate::progress::Progress> {
        crate::progress::Progress::from_meta(&self.meta)
    }
}
