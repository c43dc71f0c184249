//! The fixture's tools, in `tools/list` order:
//!
//! 1. [`tasks`]: the harmless header probe first, then the Tasks tools (tasks-wire-reference §9);
//! 2. [`content`]: the base-wire tools of the runner's core scenarios (content types, errors,
//!    progress, logging, capability diagnostics, list changes, JSON Schema 2020-12,
//!    `x-mcp-header`), as listed in `runner-core-checks.md`;
//! 3. [`mrtr`]: the `test_input_required_result_*` tools of the MRTR scenarios.

pub mod content;
pub mod mrtr;
pub mod tasks;

use serde_json::{json, Value};
use tasks_core::{InputRequest, JsonObject};
use tasks_runtime::{ListChanges, Tool, ToolContext, ToolError};

/// Every fixture tool, in listing order. `changes` is the handle the
/// `test_trigger_tool_change` tool announces on.
pub fn all(changes: &ListChanges) -> Vec<Tool> {
    let mut tools = tasks::all();
    tools.extend(content::all(changes));
    tools.extend(mrtr::all());
    tools
}

/// A string argument.
pub(crate) fn str_arg<'a>(ctx: &'a ToolContext, name: &str) -> Option<&'a str> {
    ctx.arguments().get(name).and_then(Value::as_str)
}

fn input_request(method: &str, params: Value) -> InputRequest {
    InputRequest {
        method: method.into(),
        params: params
            .as_object()
            .cloned()
            .or_else(|| Some(JsonObject::new())),
    }
}

/// An `elicitation/create` input request.
pub(crate) fn elicitation(message: &str, schema: Value) -> InputRequest {
    input_request(
        "elicitation/create",
        json!({"message": message, "requestedSchema": schema}),
    )
}

/// An elicitation of one required string field `field`.
pub(crate) fn ask_string(message: &str, field: &str) -> InputRequest {
    elicitation(
        message,
        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
    )
}

/// A field of an elicitation answer: `content.<field>` (or `<field>` of a bare object).
pub(crate) fn answered<'a>(answer: &'a Value, field: &str) -> Option<&'a str> {
    answer
        .get("content")
        .unwrap_or(answer)
        .get(field)
        .and_then(Value::as_str)
}

/// Asks for the user's name under key `user_name` ("What is your name?", one required string
/// field `name`) and returns it (`there` when the answer carries none).
pub(crate) async fn user_name(ctx: &ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .input("user_name", ask_string("What is your name?", "name"))
        .await?;
    Ok(answered(&answer, "name").unwrap_or("there").to_owned())
}

/// A `sampling/createMessage` input request with one user message.
pub(crate) fn sampling(prompt: &str) -> InputRequest {
    input_request(
        "sampling/createMessage",
        json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": 100,
        }),
    )
}

/// A `roots/list` input request.
pub(crate) fn roots() -> InputRequest {
    input_request("roots/list", json!({}))
}

/// The text of a `sampling/createMessage` answer (`content.text`), if any.
pub(crate) fn sampled_text(answer: &Value) -> Option<&str> {
    answer.pointer("/content/text").and_then(Value::as_str)
}

/// How many roots a `roots/list` answer carries.
pub(crate) fn root_count(answer: &Value) -> usize {
    answer
        .get("roots")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}
