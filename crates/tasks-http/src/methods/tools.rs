//! `tools/list` and `tools/call` (`wire-2026-07-28.md` §5; tasks-wire-reference §3).
//!
//! `tools/call` order after admission: params shape (-32602), tool lookup (-32602
//! `Unknown tool`), `Mcp-Param-*` headers of `x-mcp-header` arguments (-32020, §13.2 step 12),
//! `requestState` verification (-32602 `Invalid requestState`), the client capabilities the
//! call needs (-32021 naming every missing one: the Tasks extension for a required-task tool,
//! and what [`Tool::requires_client`](tasks_runtime::Tool::requires_client) declared), the
//! retry's `inputResponses` checked against the requests the state asked (-32602; answers to
//! keys not asked are ignored; without a state a synchronous run checks them as the tool asks,
//! and a task takes none), argument validation against `inputSchema` (an
//! `isError: true` result, nothing created), then either a
//! synchronous run ([`sync_call`]: result, MRTR `input_required`, or error, as JSON or as an
//! SSE stream carrying progress and log notifications first) or task creation
//! (`CreateTaskResult`).

use http::HeaderMap;
use serde_json::{json, Value};
use tasks_core::headers::{self, MirroredHeader};
use tasks_core::input::missing_capabilities;
use tasks_core::param_headers::check_param_headers;
use tasks_core::{projection, ClientCapability, Decision, JsonObject, McpError, Method};
use tasks_runtime::{Scope, SyncCall, TaskRuntime, Work};

use crate::dispatcher::{DispatchConfig, Dispatcher};
use crate::methods::sync_call::{self, Finish};
use crate::response::McpResponse;
use tasks_core::admission::Admitted;
use tasks_core::mrtr::{self, Binding};

/// The `tools/list` result, built once: tools in registration order.
pub(crate) fn list_result(
    runtime: &TaskRuntime,
    config: &DispatchConfig,
    server_meta: &JsonObject,
) -> Value {
    let tools: Vec<Value> = runtime
        .tools()
        .iter()
        .map(|tool| {
            let mut entry = json!({
                "name": tool.name(),
                "description": tool.description(),
                "inputSchema": tool.input_schema(),
            });
            if let (Some(annotations), Value::Object(object)) = (tool.annotations(), &mut entry) {
                object.insert("annotations".into(), Value::Object(annotations.clone()));
            }
            entry
        })
        .collect();
    json!({
        "resultType": "complete",
        "tools": tools,
        "ttlMs": config.cache_ttl_ms,
        "cacheScope": "public",
        "_meta": server_meta,
    })
}

pub(crate) fn list(d: &Dispatcher, request: &Admitted) -> Result<McpResponse, McpError> {
    // One page only: any cursor is one we never issued.
    if request.params.get("cursor").is_some_and(|c| !c.is_null()) {
        return Err(McpError::invalid_params("Invalid cursor"));
    }
    Ok(McpResponse::result(&request.id, &d.tools_list))
}

/// The validated params of a `tools/call`.
struct CallParams<'a> {
    name: &'a str,
    arguments: JsonObject,
    input_responses: Option<&'a JsonObject>,
    request_state: Option<&'a str>,
}

fn parse_call(params: &Value) -> Result<CallParams<'_>, McpError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| McpError::invalid_params("tools/call requires a string name"))?;
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => JsonObject::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => return Err(McpError::invalid_params("arguments must be an object")),
    };
    let input_responses = match params.get("inputResponses") {
        None => None,
        Some(Value::Object(responses)) => {
            if responses
                .iter()
                .any(|(key, value)| key.is_empty() || !value.is_object())
            {
                return Err(McpError::invalid_params("inputResponses is invalid"));
            }
            Some(responses)
        }
        Some(_) => return Err(McpError::invalid_params("inputResponses must be an object")),
    };
    let request_state = match params.get("requestState") {
        None => None,
        Some(Value::String(state)) => Some(state.as_str()),
        Some(_) => return Err(McpError::invalid_params("requestState must be a string")),
    };
    Ok(CallParams {
        name,
        arguments,
        input_responses,
        request_state,
    })
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
    // Step 12: arguments mirrored in Mcp-Param-* headers.
    check_param_headers(tool.param_headers(), &params.arguments, |name| {
        headers::single(
            MirroredHeader::Param,
            headers.get_all(name).iter().map(|v| v.as_bytes()),
        )
    })?;
    let binding = Binding {
        method: Method::ToolsCall,
        name: params.name,
        arguments: &params.arguments,
        scope: scope.as_str(),
    };
    let now = d.runtime.now();
    let previous = match params.request_state {
        Some(text) => Some(mrtr::verify(&d.state_key, binding, text, now)?),
        None => None,
    };
    let no_params = JsonObject::new();
    let params_object = request.params.as_object().unwrap_or(&no_params);
    let decision = tool.policy_for(params_object).decide(tasks_declared);
    // Step 13: every client capability the call needs, in one -32021.
    let tasks_missing =
        (decision == Decision::MissingCapability).then_some(ClientCapability::Tasks);
    let needs = tool.client_needs().iter().copied().chain(tasks_missing);
    if let Some(missing) = missing_capabilities(&request.meta.client_capabilities, needs) {
        return Err(missing);
    }
    // Answers so far: earlier rounds (from the verified state) plus this request's answers to
    // what that state asked, each checked against its request now. Without a state, a task
    // takes none (nothing was asked), while a synchronous run gets them as sent: the tool's
    // `ctx.input` checks each against the request it makes, and keys it never asks for are
    // ignored (runner scenario `input-required-result-ignore-extra-params`).
    let answers = match (&previous, decision) {
        (Some(state), _) => Some(state.merge(params.input_responses)?),
        (None, Decision::CreateTask) => None,
        (None, _) => params.input_responses.cloned(),
    };
    if let Err(message) = tool.validate_arguments(&params.arguments) {
        let result = json!({"content": [{"type": "text", "text": message}], "isError": true,
                            "resultType": "complete"});
        let result = d.with_server_meta(result.as_object().cloned().unwrap_or_default());
        return Ok(McpResponse::result(&request.id, &result));
    }
    let client_capabilities = request.meta.client_capabilities.clone();
    if decision == Decision::CreateTask {
        // A retry's task has an id derived from its signed state and answers, so a replayed
        // retry answers with the same task instead of running the tool twice.
        let derived = match (params.request_state, &answers) {
            (Some(state), Some(answers)) => {
                Some(mrtr::task_id_for_retry(&d.state_key, state, answers))
            }
            _ => None,
        };
        let work = Work {
            tool: params.name.to_owned(),
            arguments: params.arguments,
            input_responses: answers,
            client_capabilities,
            scope: scope.clone(),
        };
        let task = match derived {
            Some(id) => d.runtime.create_task_with_id(work, id).await?,
            None => d.runtime.create_task(work).await?,
        };
        let view = projection::creation(&task).with_meta(&d.server_meta);
        return Ok(McpResponse::result(&request.id, &view));
    }
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
