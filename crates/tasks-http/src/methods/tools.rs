//! `tools/list` and `tools/call` (MCP 2026-07-28 tools, "Listing Tools" and "Calling Tools":
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/tools>; SEP-2663 "Task
//! Creation":
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).
//!
//! `tools/call` is planned by [`tasks_core::plan::plan_call`] (the normative step order, from params to
//! "run now" or "create a task"); this module carries the plan out: a
//! synchronous run ([`sync_call`]: result, MRTR `input_required`, or error, as JSON or as an
//! SSE stream carrying progress and log notifications first) or task creation
//! (`CreateTaskResult`).

use http::HeaderMap;
use serde_json::Value;
use std::sync::Arc;
use tasks_core::plan::CallPlan;

use tasks_core::exchange::{StateIssuer, SyncExchange, SyncRequest};
use tasks_core::{JsonObject, McpError, RequestMeta, Timestamp};

use tasks_runtime::{run_sync, Caller, SyncCall, TaskCall, Tool};

use crate::methods::sync_call;
use crate::response::McpResponse;
use crate::shared::Shared;

/// A planned `tools/call`: what carrying out its [`CallPlan`] needs of the request.
pub(crate) struct Call {
    pub(crate) id: Value,
    pub(crate) meta: RequestMeta,
    /// The tool the plan found (in the tools as registered when the request arrived).
    pub(crate) tool: Arc<Tool>,
    pub(crate) arguments: JsonObject,
    pub(crate) now: Timestamp,
}

pub(crate) async fn call(
    d: &Shared,
    call: Call,
    plan: CallPlan,
    headers: &HeaderMap,
    caller: &Caller,
) -> Result<McpResponse, McpError> {
    let scope = &caller.scope;
    let Call {
        id,
        meta,
        tool,
        arguments,
        now,
    } = call;
    match plan {
        CallPlan::InvalidArguments(result) => {
            Ok(McpResponse::result(&id, &d.with_server_meta(result)))
        }
        CallPlan::CreateTask { answers, task_id } => {
            let call = TaskCall {
                tool,
                arguments,
                meta,
                answers,
                task_id,
            };
            let answer = d.executor.create_task(call, caller).await?;
            Ok(McpResponse::result(&id, &d.executor.view(&answer)))
        }
        CallPlan::RunSync { answers, previous } => {
            let sync = SyncCall::new(arguments.clone())
                .with_input_responses(answers.clone())
                .with_principal(caller.principal.clone());
            let request = SyncRequest::tools_call(
                id,
                tool.name(),
                arguments,
                scope.as_str(),
                &meta,
                previous.as_ref(),
                answers,
            );
            let sync = sync.with_client_capabilities(meta.client_capabilities);
            let issuer = StateIssuer::new(d.state_key.clone(), d.runtime.config().ttl_ms, now);
            let exchange = SyncExchange::new(request, issuer, d.server_meta.clone());
            let entropy = d.runtime.entropy().clone();
            let handler = move |call| async move { run_sync(&tool, call).await };
            Ok(sync_call::drive(handler, sync, headers, exchange, entropy).await)
        }
    }
}
