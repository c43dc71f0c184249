//! The fixture's tools, in `tools/list` order:
//!
//! 1. [`tasks`]: the harmless header probe first, then the Tasks tools (runner scenarios `tasks-*`);
//! 2. [`content`]: the base-wire tools of the runner's core scenarios (content types, errors,
//!    progress, logging, capability diagnostics, list changes, JSON Schema 2020-12,
//!    `x-mcp-header`);
//! 3. [`mrtr`]: the `test_input_required_result_*` tools of the MRTR scenarios;
//! 4. [`session`]: the tools of the 2025-11-25 scenarios (logging, sampling, elicitation).

pub mod content;
pub mod mrtr;
pub mod session;
pub mod tasks;

use serde_json::{json, Value};
use tasks_core::input::SamplingRequest;
use tasks_runtime::{ListChanges, Tool, ToolContext, ToolError};

/// Every fixture tool, in listing order. `changes` is the handle the
/// `test_trigger_tool_change` tool announces on; `run_log` the file `resumable_job` notes its
/// runs in (`--run-log`).
pub fn all(changes: &ListChanges, run_log: Option<&std::path::Path>) -> Vec<Tool> {
    let mut tools = tasks::all(run_log);
    tools.extend(content::all(changes));
    tools.extend(mrtr::all());
    tools.extend(session::all());
    tools
}

/// A string argument.
pub(crate) fn str_arg<'a>(ctx: &'a ToolContext, name: &str) -> Option<&'a str> {
    ctx.arguments().get(name).and_then(Value::as_str)
}

/// The form schema of one required string field `field`.
pub(crate) fn string_form(field: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]})
}

/// Asks for the user's name under key `user_name` ("What is your name?", one required string
/// field `name`) and returns it (`there` when the user declines or cancels).
pub(crate) async fn user_name(ctx: &ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .elicit("user_name", "What is your name?", string_form("name"))
        .await?;
    Ok(answer.str_field("name").unwrap_or("there").to_owned())
}

/// The fixture's sampling request: one user message, at most 100 tokens.
pub(crate) fn sampling(prompt: &str) -> SamplingRequest {
    SamplingRequest::user_text(prompt, 100)
}
