//! `tasks/get`, `tasks/update`, `tasks/cancel` (SEP-2663 "Task Polling", "Task Update
//! Requests", "Task Cancellation":
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).
//!
//! Planned by [`tasks_core::plan::plan_task_method`] (the Tasks declaration, then the
//! params); carried out by [`tasks_runtime::Executor::task_method`] (the lookup in the caller's
//! scope, [`tasks_core::McpError::UnknownTask`], and the action). `tasks/get` answers the `DetailedTask`; update and cancel answer
//! the empty ack `{"resultType":"complete"}`, also for a terminal task and for unknown input
//! keys. A request that declared only the 2025-11-25 tasks capability reaches only the tasks a
//! 2025 session created ([`tasks_core::plan::plan_legacy_task_method`],
//! [`tasks_runtime::TaskRuntime::reach`]).

use serde_json::Value;
use tasks_core::plan::TaskAction;
use tasks_core::McpError;
use tasks_runtime::Scope;

use crate::response::McpResponse;
use crate::shared::Shared;

pub(crate) async fn handle(
    d: &Shared,
    id: &Value,
    action: TaskAction,
    scope: &Scope,
) -> Result<McpResponse, McpError> {
    let answer = d.executor.task_method(action, scope).await?;
    Ok(McpResponse::result(id, &d.executor.view(&answer)))
}
