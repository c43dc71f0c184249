//! The 2025 wire shapes of the session path: `InitializeResult` with the server's
//! capabilities, and the 2025 `tools/list` result.
//!
//! Sources: MCP 2025-11-25 schema (`InitializeResult`, `ServerCapabilities`, `Implementation`,
//! `ListToolsResult`, `Tool`, `ToolExecution`:
//! <https://modelcontextprotocol.io/specification/2025-11-25/schema>). A 2025 result carries no
//! `resultType` and no serverInfo `_meta` (both are 2026-07-28 fields); the server's identity
//! travels once, in `serverInfo`.

use serde::Serialize;
use serde_json::Value;

use crate::negotiation::TaskPolicy;
use crate::JsonObject;

/// The `initialize` result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The negotiated revision ([`super::negotiate`]).
    pub protocol_version: &'static str,
    /// What the server offers this session.
    pub capabilities: ServerCapabilities,
    /// `{name, version}` of the server.
    pub server_info: Implementation,
    /// Guidance for the client's model, when configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// `Implementation`: a name and a version.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Implementation {
    /// The server's name.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// The capabilities a session is offered: tools (whose list can change) and logging
/// (`logging/setLevel`). Nothing else is served on the session path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerCapabilities {
    /// `{"listChanged": true}` when `notifications/tools/list_changed` arrive on the session's
    /// GET stream.
    pub tools: ToolsCapability,
    /// `{}`: the server accepts `logging/setLevel` and sends `notifications/message`.
    pub logging: JsonObject,
    /// 2025-11-25 tasks, for sessions of that revision: `tools/call` may be task-augmented,
    /// `tasks/cancel` is served (`tasks/get` and `tasks/result` need no capability).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// The extensions the host declares to 2025 sessions (SEP-2133 legacy negotiation:
    /// `capabilities.extensions`, each key an extension id, each value its settings); absent
    /// when it declares none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// The capabilities of the features offered beside tools
    /// ([`crate::catalog::capabilities`]).
    #[serde(flatten)]
    pub features: JsonObject,
}

/// The 2025-11-25 `tasks` capability: `{"cancel": {}, "requests": {"tools": {"call": {}}}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TasksCapability {
    /// `tasks/list` is served: only when the server can identify the caller (MCP 2025-11-25
    /// tasks, "Task Isolation and Access Control": a server that cannot SHOULD NOT advertise
    /// it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// `tasks/cancel` is served.
    pub cancel: JsonObject,
    /// The requests that may be task-augmented: `tools/call`.
    pub requests: Value,
}

impl TasksCapability {
    /// Task-augmented `tools/call` and `tasks/cancel`, and `tasks/list` when `list`.
    pub fn tool_calls(list: bool) -> Self {
        TasksCapability {
            list: list.then(JsonObject::new),
            cancel: JsonObject::new(),
            requests: serde_json::json!({"tools": {"call": {}}}),
        }
    }
}

/// The `tools` capability.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server announces changes of its tool list.
    pub list_changed: bool,
}

impl ServerCapabilities {
    /// The capabilities of a session; `list_changed` when the server announces changes of its
    /// tool list, `tasks` for a session of a revision with tasks
    /// ([`super::version::serves_tasks`]), with `tasks.list` when `list_tasks`.
    pub fn for_session(list_changed: bool, tasks: bool, list_tasks: bool) -> Self {
        ServerCapabilities {
            tools: ToolsCapability { list_changed },
            logging: JsonObject::new(),
            tasks: tasks.then(|| TasksCapability::tool_calls(list_tasks)),
            extensions: None,
            features: JsonObject::new(),
        }
    }

    /// Declares `extensions` (`capabilities.extensions`); none when it is empty.
    pub fn with_extensions(mut self, extensions: &JsonObject) -> Self {
        self.extensions = (!extensions.is_empty()).then(|| extensions.clone());
        self
    }

    /// Adds the capabilities of the features offered beside tools.
    pub fn with_features(mut self, features: JsonObject) -> Self {
        self.features = features;
        self
    }
}

/// A 2025 `tools/list` entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTool {
    /// The tool name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: JsonObject,
    /// Its annotations, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<JsonObject>,
    /// `{"taskSupport": …}` where the session is offered 2025-11-25 tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// The JSON Schema of its results' `structuredContent`, if it declares one (2025-06-18
    /// and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// A human-readable name, if it has one (2025-06-18 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `ToolExecution`: whether a call may or must be task-augmented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// `"forbidden"`, `"optional"` or `"required"`.
    pub task_support: TaskSupport,
}

/// `ToolExecution.taskSupport` (absent means forbidden).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task.
    Forbidden,
    /// A task when the client asks for one.
    Optional,
    /// Only as a task.
    Required,
}

impl From<TaskPolicy> for TaskSupport {
    /// The 2026 policy a tool is registered with, as 2025-11-25 publishes it: sync tools are
    /// forbidden, optional and required keep their name (a policy computed per call is
    /// published by its answer for a call without params).
    fn from(policy: TaskPolicy) -> Self {
        match policy {
            TaskPolicy::Sync => TaskSupport::Forbidden,
            TaskPolicy::Optional => TaskSupport::Optional,
            TaskPolicy::Required => TaskSupport::Required,
        }
    }
}

/// The 2025 `tools/list` result: one page, no `nextCursor`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionToolsList {
    /// The tools, in registration order.
    pub tools: Vec<SessionTool>,
}

/// A result object for the session path: `result` without the 2026-only `resultType` (a
/// tool's `CallToolResult` is stored in the 2026 shape).
pub fn session_result(mut result: JsonObject) -> JsonObject {
    result.remove("resultType");
    result
}

/// The empty result of `ping` and `logging/setLevel`.
pub fn empty_result() -> Value {
    Value::Object(JsonObject::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn initialize_result_shape() {
        let result = InitializeResult {
            protocol_version: "2025-11-25",
            capabilities: ServerCapabilities::for_session(true, true, false),
            server_info: Implementation {
                name: "s".into(),
                version: "1".into(),
            },
            instructions: None,
        };
        assert_eq!(
            serde_json::to_value(result).unwrap(),
            json!({"protocolVersion": "2025-11-25",
                   "capabilities": {"tools": {"listChanged": true}, "logging": {},
                                    "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}},
                   "serverInfo": {"name": "s", "version": "1"}})
        );
    }

    #[test]
    fn task_support_follows_the_policy() {
        let published: Vec<_> = [TaskPolicy::Sync, TaskPolicy::Optional, TaskPolicy::Required]
            .into_iter()
            .map(|p| {
                serde_json::to_value(ToolExecution {
                    task_support: p.into(),
                })
                .unwrap()
            })
            .collect();
        assert_eq!(
            published,
            [
                json!({"taskSupport": "forbidden"}),
                json!({"taskSupport": "optional"}),
                json!({"taskSupport": "required"})
            ]
        );
        let tool = SessionTool {
            name: "t".into(),
            description: "d".into(),
            input_schema: JsonObject::new(),
            annotations: None,
            execution: None,
            output_schema: None,
            title: None,
        };
        assert_eq!(
            serde_json::to_value(&tool).unwrap(),
            json!({"name": "t", "description": "d", "inputSchema": {}})
        );
        let titled = SessionTool {
            output_schema: Some(JsonObject::new()),
            title: Some("T".into()),
            ..tool
        };
        assert_eq!(
            serde_json::to_value(titled).unwrap(),
            json!({"name": "t", "description": "d", "inputSchema": {}, "outputSchema": {},
                   "title": "T"})
        );
    }
}
