//! The registered tools as the wire lists them: the 2026-07-28 `tools/list` result and a 2025
//! session's (MCP tools, "Listing Tools"), in registration order, from the core's wire shapes.

use tasks_core::sessions::wire::{SessionTool, SessionToolsList, ToolExecution};
use tasks_core::wire::{CacheScope, ResultType, ToolEntry, ToolsListResult};
use tasks_core::JsonObject;

use crate::registry::ToolRegistry;

impl ToolRegistry {
    /// The 2026-07-28 `tools/list` result: every tool, public for `ttl_ms` milliseconds, with
    /// `meta` as its `_meta`.
    pub fn list_result(&self, ttl_ms: u64, meta: JsonObject) -> ToolsListResult {
        let tools = self
            .iter()
            .map(|tool| ToolEntry {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                input_schema: tool.input_schema().clone(),
                annotations: tool.annotations().cloned(),
                output_schema: tool.output_schema().cloned(),
                title: tool.title().map(str::to_owned),
                execution: None,
            })
            .collect();
        ToolsListResult {
            result_type: ResultType::Complete,
            tools,
            ttl_ms,
            cache_scope: CacheScope::Public,
            meta,
            next_cursor: None,
        }
    }

    /// The 2025 `tools/list` result: every tool, with `execution.taskSupport` (its policy for
    /// arguments it does not look at) in sessions offered tasks.
    pub fn session_list(&self, tasks: bool) -> SessionToolsList {
        let no_params = JsonObject::new();
        let tools = self
            .iter()
            .map(|tool| SessionTool {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                input_schema: tool.input_schema().clone(),
                annotations: tool.annotations().cloned(),
                execution: tasks.then(|| ToolExecution {
                    task_support: tool.policy_for(&no_params).into(),
                }),
                output_schema: tool.output_schema().cloned(),
                title: tool.title().map(str::to_owned),
            })
            .collect();
        SessionToolsList { tools }
    }
}
