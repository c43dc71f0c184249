//! Planning a `tools/call` (MCP 2026-07-28 tools; SEP-2663 "Task Creation"; MRTR): every
//! decision from the admitted request to "run it now" or "create a task", without running
//! anything.
//!
//! Order, each step's failure answered as given (steps 12–13 of [`crate::admission`], then
//! params; the order is this server's):
//!
//! 1. params shape ([`parse_call`]): -32602;
//! 2. tool lookup (by the caller): -32602 `Unknown tool`;
//! 3. `Mcp-Param-*` headers of `x-mcp-header` arguments: -32020;
//! 4. `requestState` verification: -32602 `Invalid requestState`;
//! 5. every client capability the call needs, in one -32021: the Tasks extension for a tool
//!    that must run as a task, and what the tool declared it always needs;
//! 6. the answers: a retry's `inputResponses` are checked against what its state asked
//!    (-32602 `Invalid input response for <key>: …`; unasked keys ignored); without a state a
//!    task takes none and a synchronous run takes them as sent (its tool checks each when it
//!    asks);
//! 7. argument validation against `inputSchema`: a tool error result (`isError: true`), nothing
//!    run or stored;
//! 8. run synchronously, or create a task (a retry's task under an id derived from its state
//!    and answers, so a replay finds it).

use std::sync::{Arc, LazyLock};

use serde_json::Value;

use crate::admission::HeaderSource;
use crate::error::McpError;
use crate::headers::{self, MirroredHeader};
use crate::id::TaskId;
use crate::input::{missing_capabilities, ClientCapability};
use crate::method::Method;
use crate::mrtr::{self, Binding, RequestState, StateKey};
use crate::negotiation::{Decision, RequestMeta, TaskPolicy};
use crate::param_headers::{check_param_headers, ParamHeader};
use crate::time::Timestamp;
use crate::JsonObject;

/// The validated params of a `tools/call`, borrowed from them: nothing is copied (a planner
/// that owns the params moves the arguments out once it is done, [`into_arguments`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CallParams<'a> {
    /// The tool name.
    pub name: &'a str,
    /// The arguments (`{}` when absent or null).
    pub arguments: &'a JsonObject,
    /// `inputResponses`, when present (every value an object, no empty key).
    pub input_responses: Option<&'a JsonObject>,
    /// `requestState`, when present.
    pub request_state: Option<&'a str>,
}

/// Step 1: reads `tools/call` params.
///
/// # Errors
/// -32602 with a fixed message: `tools/call requires a string name`, `arguments must be an
/// object`, `inputResponses must be an object`, `inputResponses is invalid` (an empty key or a
/// value that is not an object), `requestState must be a string`.
pub fn parse_call(params: &Value) -> Result<CallParams<'_>, McpError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| McpError::invalid_params("tools/call requires a string name"))?;
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => &*NO_ARGUMENTS,
        Some(Value::Object(arguments)) => arguments,
        Some(_) => return Err(McpError::invalid_params("arguments must be an object")),
    };
    let inputs = parse_call_inputs(params)?;
    Ok(CallParams {
        name,
        arguments,
        input_responses: inputs.input_responses,
        request_state: inputs.request_state,
    })
}

/// The MRTR members of a request's params, borrowed from them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CallInputs<'a> {
    /// `inputResponses`, when present (every value an object, no empty key).
    pub input_responses: Option<&'a JsonObject>,
    /// `requestState`, when present.
    pub request_state: Option<&'a str>,
}

/// Reads `inputResponses` and `requestState` (MCP 2026-07-28 "Multi Round-Trip Requests"),
/// of a `tools/call` or any other request that may take input rounds.
///
/// # Errors
/// -32602 `inputResponses must be an object`, `inputResponses is invalid` (an empty key or a
/// value that is not an object), `requestState must be a string`.
pub(crate) fn parse_call_inputs(params: &Value) -> Result<CallInputs<'_>, McpError> {
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
    Ok(CallInputs {
        input_responses,
        request_state,
    })
}

/// The arguments of a call without any (`{}`).
pub(crate) static NO_ARGUMENTS: LazyLock<JsonObject> = LazyLock::new(JsonObject::new);

/// The arguments of `tools/call` params that [`parse_call`] accepted, moved out of them (`{}`
/// when absent or null): the planner's copy-free way from the request to the task's work.
pub fn into_arguments(params: Value) -> JsonObject {
    match params {
        Value::Object(mut params) => match params.remove("arguments") {
            Some(Value::Object(arguments)) => arguments,
            _ => JsonObject::new(),
        },
        _ => JsonObject::new(),
    }
}

/// The tool error result answering arguments that fail the `inputSchema` (step 7):
/// `{"content":[{"type":"text","text":message}],"isError":true,"resultType":"complete"}`.
pub(crate) fn invalid_arguments_result(message: String) -> JsonObject {
    let mut result = tool_error_result(message);
    result.insert("resultType".into(), Value::from("complete"));
    result
}

/// The `CallToolResult` of a tool's own failure, with one text block:
/// `{"content":[{"type":"text","text":message}],"isError":true}` (MCP 2026-07-28 tools,
/// "Error Handling": <https://modelcontextprotocol.io/specification/2026-07-28/server/tools>).
pub fn tool_error_result(message: String) -> JsonObject {
    let mut block = JsonObject::new();
    block.insert("type".into(), Value::from("text"));
    block.insert("text".into(), Value::from(message));
    let mut result = JsonObject::new();
    result.insert("content".into(), Value::Array(vec![Value::Object(block)]));
    result.insert("isError".into(), Value::Bool(true));
    result
}

/// What the planner needs to know of a tool: server configuration, no code.
pub trait ToolRules {
    /// Arguments mirrored in `Mcp-Param-*` headers.
    fn param_headers(&self) -> &[ParamHeader];
    /// The task policy for a call with these params.
    fn policy_for(&self, params: &JsonObject) -> TaskPolicy;
    /// The task policy when it is the same for every call, so that [`ToolRules::policy_for`]
    /// answers it whatever the params; `None` (the default) when it may depend on them. The
    /// planner's typed path ([`crate::plan::plan_typed`]) plans a call without a params
    /// object only for a tool that answers `Some`.
    fn fixed_policy(&self) -> Option<TaskPolicy> {
        None
    }
    /// Client capabilities every call needs.
    fn client_needs(&self) -> &[ClientCapability];
    /// Checks the arguments against the input schema; the error is a short message naming
    /// the violated rule, never the value.
    fn validate_arguments(&self, arguments: &JsonObject) -> Result<(), String>;
}

/// A shared tool has the rules of the tool: a server hands the planner `Arc`s of its tools
/// ([`crate::plan::ServerView::Tool`]).
impl<T: ToolRules + ?Sized> ToolRules for Arc<T> {
    fn param_headers(&self) -> &[ParamHeader] {
        (**self).param_headers()
    }
    fn policy_for(&self, params: &JsonObject) -> TaskPolicy {
        (**self).policy_for(params)
    }
    fn fixed_policy(&self) -> Option<TaskPolicy> {
        (**self).fixed_policy()
    }
    fn client_needs(&self) -> &[ClientCapability] {
        (**self).client_needs()
    }
    fn validate_arguments(&self, arguments: &JsonObject) -> Result<(), String> {
        (**self).validate_arguments(arguments)
    }
}

/// Everything about the call that is not the tool: the request and the server's secrets.
#[derive(Debug, Clone, Copy)]
pub struct CallContext<'a> {
    /// The request's params object (for a per-call policy).
    pub params: &'a JsonObject,
    /// The validated request `_meta`.
    pub meta: &'a RequestMeta,
    /// Whether the request declared the Tasks extension.
    pub tasks_declared: bool,
    /// The caller's scope (opaque).
    pub scope: &'a str,
    /// The `requestState` key.
    pub state_key: &'a StateKey,
    /// The current time.
    pub now: Timestamp,
}

/// What to do with a `tools/call`.
#[derive(Debug, Clone, PartialEq)]
pub enum CallPlan {
    /// Answer with this tool error result (`isError: true`): the arguments do not match the
    /// input schema. Nothing runs.
    InvalidArguments(JsonObject),
    /// Run the tool now with these answers; `previous` is the verified state of the round this
    /// request answers, if any.
    RunSync {
        /// The answers the tool sees.
        answers: Option<JsonObject>,
        /// The verified `requestState`.
        previous: Option<RequestState>,
    },
    /// Create a task running the tool with these answers.
    CreateTask {
        /// The answers the task's tool sees.
        answers: Option<JsonObject>,
        /// The id of a retry's task (derived from its state and answers), or `None` for a
        /// fresh random one.
        task_id: Option<TaskId>,
    },
}

/// Steps 3–8 for a call of `tool` whose params are `call`.
///
/// # Errors
/// The first failing step's error, as in the module order.
pub fn plan_call<H: HeaderSource + ?Sized>(
    call: &CallParams<'_>,
    tool: &dyn ToolRules,
    headers: &H,
    cx: CallContext<'_>,
) -> Result<CallPlan, McpError> {
    plan_call_as(call, tool, headers, cx, || tool.policy_for(cx.params))
}

/// [`plan_call`] with the tool's task policy given by `policy` (asked at step 5), not by
/// [`ToolRules::policy_for`] of `cx.params`.
pub(crate) fn plan_call_as<H: HeaderSource + ?Sized>(
    call: &CallParams<'_>,
    tool: &dyn ToolRules,
    headers: &H,
    cx: CallContext<'_>,
    policy: impl FnOnce() -> TaskPolicy,
) -> Result<CallPlan, McpError> {
    // 3. Arguments mirrored in Mcp-Param-* headers.
    check_param_headers(tool.param_headers(), call.arguments, |name| {
        headers::single(MirroredHeader::Param, headers.values(name))
    })?;
    // 4. The state of the round this request answers.
    let binding = Binding {
        method: Method::ToolsCall,
        name: call.name,
        arguments: call.arguments,
        scope: cx.scope,
    };
    let previous = match call.request_state {
        Some(text) => Some(mrtr::verify(cx.state_key, binding, text, cx.now)?),
        None => None,
    };
    // 5. Client capabilities.
    let decision = policy().decide(cx.tasks_declared);
    let tasks_missing =
        (decision == Decision::MissingCapability).then_some(ClientCapability::Tasks);
    let needs = tool.client_needs().iter().copied().chain(tasks_missing);
    if let Some(missing) = missing_capabilities(&cx.meta.client_capabilities, needs) {
        return Err(missing);
    }
    // 6. Answers.
    let answers = match (&previous, decision) {
        (Some(state), _) => Some(state.merge(call.input_responses)?),
        (None, Decision::CreateTask) => None,
        (None, _) => call.input_responses.cloned(),
    };
    // 7. Arguments.
    if let Err(message) = tool.validate_arguments(call.arguments) {
        return Ok(CallPlan::InvalidArguments(invalid_arguments_result(
            message,
        )));
    }
    // 8. Run or create.
    Ok(match decision {
        Decision::CreateTask => CallPlan::CreateTask {
            task_id: match (call.request_state, &answers) {
                (Some(state), Some(answers)) => {
                    Some(mrtr::task_id_for_retry(cx.state_key, state, answers))
                }
                _ => None,
            },
            answers,
        },
        Decision::RunSync | Decision::MissingCapability => CallPlan::RunSync { answers, previous },
    })
}
