//! `tools/list` and `tools/call` (`wire-2026-07-28.md` §5; tasks-wire-reference §3).
//!
//! `tools/call` is planned by [`tasks_core::call`] (the normative step order, from params to
//! "run now" or "create a task"); this module looks the tool up and carries the plan out: a
//! synchronous run ([`sync_call`]: result, MRTR `input_required`, or error, as JSON or as an
//! SSE stream carrying progress and log notifications first) or task creation
//! (`CreateTaskResult`).

use http::HeaderMap;
use tasks_core::admission::Admitted;
use tasks_core::call::{parse_call, plan_call, CallContext, CallPlan};
use tasks_core::mrtr;
use tasks_core::wire::{CacheScope, ResultType, ToolEntry, ToolsListResult};
use tasks_core::{projection, JsonObject, McpError};
use tasks_runtime::{Scope, SyncCall, TaskRuntime, Work};

use crate::dispatcher::{DispatchConfig, Dispatcher};
use crate::head::Head;
use crate::methods::sync_call::{self, Finish};
use crate::response::McpResponse;

/// The `tools/list` result, built once: tools in registration order.
pub(crate) fn list_result(
    runtime: &TaskRuntime,
    config: &DispatchConfig,
    server_meta: &JsonObject,
) -> ToolsListResult {
    let tools = runtime
        .tools()
        .iter()
        .map(|tool| ToolEntry {
            name: tool.name().to_owned(),
            description: tool.description().to_owned(),
            input_schema: tool.input_schema().clone(),
            annotations: tool.annotations().cloned(),
        })
        .collect();
    ToolsListResult {
        result_type: ResultType::Complete,
        tools,
        ttl_ms: config.cache_ttl_ms,
        cache_scope: CacheScope::Public,
        meta: server_meta.clone(),
    }
}

pub(crate) fn list(d: &Dispatcher, request: &Admitted) -> Result<McpResponse, McpError> {
    // One page only: any cursor is one we never issued.
    if request.params.get("cursor").is_some_and(|c| !c.is_null()) {
        return Err(McpError::invalid_params("Invalid cursor"));
    }
    Ok(McpResponse::result(&request.id, &d.tools_list))
}

pub(crate) async fn call(
    d: &Dispatcher,
    request: &Admitted,
    headers: &HeaderMap,
    scope: &Scope,
    tasks_declared: bool,
) -> Result<McpResponse, McpError> {
    let params = parse_call(&request.params)?;
    let tool = d
        .runtime
        .tools()
        .get(params.name)
        .cloned()
        .ok_or_else(|| McpError::invalid_params("Unknown tool"))?;
    let no_params = JsonObject::new();
    let now = d.runtime.now();
    let cx = CallContext {
        params: request.params.as_object().unwrap_or(&no_params),
        meta: &request.meta,
        tasks_declared,
        scope: scope.as_str(),
        state_key: &d.state_key,
        now,
    };
    let client_capabilities = request.meta.client_capabilities.clone();
    match plan_call(&params, tool.as_ref(), &Head(headers), cx)? {
        CallPlan::InvalidArguments(result) => {
            let result = d.with_server_meta(result);
            Ok(McpResponse::result(&request.id, &result))
        }
        CallPlan::CreateTask { answers, task_id } => {
            let work = Work {
                tool: params.name.to_owned(),
                arguments: params.arguments,
                input_responses: answers,
                client_capabilities,
                scope: scope.clone(),
            };
            let task = match task_id {
                Some(id) => d.runtime.create_task_with_id(work, id).await?,
                None => d.runtime.create_task(work).await?,
            };
            let view = projection::creation(&task).with_meta(&d.server_meta);
            Ok(McpResponse::result(&request.id, &view))
        }
        CallPlan::RunSync { answers, previous } => {
            let call = SyncCall::new(params.arguments.clone())
                .with_input_responses(answers.clone())
                .with_client_capabilities(client_capabilities);
            let finish = Finish {
                id: request.id.clone(),
                server_meta: d.server_meta.clone(),
                state_key: d.state_key.clone(),
                state_lifetime_ms: mrtr::state_lifetime_ms(d.runtime.config().ttl_ms),
                name: params.name.to_owned(),
                arguments: params.arguments,
                scope: scope.clone(),
                meta: request.meta.clone(),
                previous,
                answers,
                now,
            };
            Ok(sync_call::run(tool, call, headers, finish).await)
        }
    }
}
