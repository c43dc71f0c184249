//! `tools/list` and `tools/call` (`wire-2026-07-28.md` §5; tasks-wire-reference §3).
//!
//! `tools/call` order after admission: params shape (-32602), tool lookup (-32602
//! `Unknown tool`), `requestState` verification (-32602 `Invalid requestState`), the task
//! decision (-32021 for a required-task tool without the Tasks declaration), argument
//! validation against `inputSchema` (an `isError: true` result, nothing created), then either a
//! synchronous run (result, MRTR `input_required`, or error) or task creation
//! (`CreateTaskResult`).

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tasks_core::{projection, Decision, InputRequest, JsonObject, McpError};
use tasks_runtime::{run_sync, Scope, SyncOutcome, TaskRuntime, Work};
use tokio_util::sync::CancellationToken;

use crate::admission::Admitted;
use crate::dispatcher::{DispatchConfig, Dispatcher};
use crate::mrtr::{self, Binding, RequestState};
use crate::response::McpResponse;

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

/// The client capability an input request needs (`wire-2026-07-28.md` §10.1).
fn required_capability(request: &InputRequest) -> Option<&'static str> {
    match request.method.as_str() {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

pub(crate) async fn call(
    d: &Dispatcher,
    request: &Admitted,
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
    let binding = Binding {
        method: "tools/call",
        name: params.name,
        arguments: &params.arguments,
        scope,
    };
    let now = d.runtime.now();
    let previous = match params.request_state {
        Some(text) => Some(mrtr::verify(&d.state_key, binding, text, now)?),
        None => None,
    };
    // Answers so far: earlier rounds (from the verified state) plus this request's.
    let answers: Option<JsonObject> = match (&previous, params.input_responses) {
        (None, None) => None,
        (previous, current) => {
            let mut merged = previous
                .as_ref()
                .map(|s| s.answers.clone())
                .unwrap_or_default();
            if let Some(current) = current {
                merged.extend(current.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            Some(merged)
        }
    };
    let params_object = request.params.as_object().cloned().unwrap_or_default();
    let decision = tool.policy_for(&params_object).decide(tasks_declared);
    if decision == Decision::MissingCapability {
        return Err(McpError::missing_tasks_capability());
    }
    if let Err(message) = tool.validate_arguments(&params.arguments) {
        let result = json!({"content": [{"type": "text", "text": message}], "isError": true,
                            "resultType": "complete"});
        let result = d.with_server_meta(result.as_object().cloned().unwrap_or_default());
        return Ok(McpResponse::result(&request.id, &result));
    }
    if decision == Decision::CreateTask {
        let task = d
            .runtime
            .create_task(Work {
                tool: params.name.to_owned(),
                arguments: params.arguments,
                input_responses: answers,
                scope: scope.clone(),
            })
            .await?;
        let view = projection::creation(&task).with_meta(&d.server_meta);
        return Ok(McpResponse::result(&request.id, &view));
    }
    let outcome = run_sync(
        &tool,
        params.arguments.clone(),
        answers.clone(),
        CancellationToken::new(),
    )
    .await;
    match outcome {
        SyncOutcome::Complete(result) => Ok(McpResponse::result(
            &request.id,
            &d.with_server_meta(result),
        )),
        SyncOutcome::Error(error) => Ok(McpResponse::rpc_error(&request.id, &error)),
        SyncOutcome::InputRequired(asked) => {
            input_required(d, request, binding, previous, answers, asked, now)
        }
    }
}

fn input_required(
    d: &Dispatcher,
    request: &Admitted,
    binding: Binding<'_>,
    previous: Option<RequestState>,
    answers: Option<JsonObject>,
    asked: BTreeMap<String, InputRequest>,
    now: tasks_core::Timestamp,
) -> Result<McpResponse, McpError> {
    // Only ask for what this request declared it can answer (`wire-2026-07-28.md` §10.1).
    let mut missing = JsonObject::new();
    for input in asked.values() {
        if let Some(capability) = required_capability(input) {
            if !request.meta.declares(capability) {
                missing.insert(capability.into(), json!({}));
            }
        }
    }
    if !missing.is_empty() {
        return Err(McpError::MissingCapability(Value::Object(missing)));
    }
    let state = RequestState {
        round: previous.map_or(1, |p| p.round.saturating_add(1)),
        answers: answers.unwrap_or_default(),
    };
    let request_state = mrtr::issue(&d.state_key, binding, state, now);
    let result = json!({
        "resultType": "input_required",
        "inputRequests": asked,
        "requestState": request_state,
    });
    let result = d.with_server_meta(result.as_object().cloned().unwrap_or_default());
    Ok(McpResponse::result(&request.id, &result))
}
