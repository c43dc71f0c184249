//! The tools of the in-process dispatcher tests ([`tools`]), and the run counters of some.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tasks_core::input::{InputRequest, InputResponse};
use tasks_core::TaskPolicy;
use tasks_runtime::{text_result, Tool, ToolContext, ToolError};

/// How many times the counted handlers ran.
#[derive(Debug, Default)]
pub struct Runs {
    /// Runs of `required_job`.
    pub required_job: AtomicUsize,
    /// Runs of `strict`.
    pub strict: AtomicUsize,
    /// Runs of `sync_echo`.
    pub sync_echo: AtomicUsize,
}

impl Runs {
    /// The count of `counter`.
    pub fn get(counter: &AtomicUsize) -> usize {
        counter.load(Ordering::SeqCst)
    }
}

fn str_arg<'a>(ctx: &'a ToolContext, name: &str) -> Option<&'a str> {
    ctx.arguments().get(name).and_then(Value::as_str)
}

/// A form elicitation of one optional string field `property`.
pub fn elicitation(message: &str, property: &str) -> InputRequest {
    InputRequest::elicit_form(
        message,
        json!({"type": "object", "properties": {property: {"type": "string"}}}),
    )
}

/// The accepted string `field` of an elicitation answer.
pub fn accepted_str<'a>(answer: &'a InputResponse, field: &str) -> Option<&'a str> {
    answer.as_elicit().and_then(|a| a.str_field(field))
}

/// The test tools, in `tools/list` order.
///
/// | tool | policy | behaviour |
/// |---|---|---|
/// | `sync_echo` | sync | `echo: <text>` |
/// | `optional_job` | optional | `optional done` |
/// | `required_job` | required | `required done` (counted) |
/// | `park` | optional | asks `confirm` (elicitation), then `confirmed: <answer>` |
/// | `block` | required | waits for cancellation |
/// | `explode` | required | fails with -32603 `Tool exploded` |
/// | `interview` | sync | asks `first`, then `second`, then `first=<a> second=<b>` |
/// | `sample` | sync | asks `draft` with `sampling/createMessage` |
/// | `compose` | per call: sync without `inputResponses`, required with | asks `user_name`, then `Hello, <name> (task: <bool>)` |
/// | `strict` | optional | requires an integer `count` (counted) |
pub fn tools(runs: &Arc<Runs>) -> Vec<Tool> {
    let echo_runs = runs.clone();
    let required_runs = runs.clone();
    let strict_runs = runs.clone();
    vec![
        Tool::new("sync_echo", "Echoes text synchronously", move |ctx| {
            echo_runs.sync_echo.fetch_add(1, Ordering::SeqCst);
            async move {
                let text = str_arg(&ctx, "text").unwrap_or("").to_owned();
                Ok(text_result(format!("echo: {text}")))
            }
        })
        .with_input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}})),
        Tool::new("optional_job", "Task when declared", |_ctx| async {
            Ok(text_result("optional done"))
        })
        .with_policy(TaskPolicy::Optional),
        Tool::new("required_job", "Task only", move |_ctx| {
            required_runs.required_job.fetch_add(1, Ordering::SeqCst);
            async { Ok(text_result("required done")) }
        })
        .with_policy(TaskPolicy::Required),
        Tool::new("park", "Asks for confirmation", |ctx| async move {
            let answer = ctx
                .input("confirm", elicitation("Proceed?", "answer"))
                .await?;
            let answer = accepted_str(&answer, "answer").unwrap_or("none").to_owned();
            Ok(text_result(format!("confirmed: {answer}")))
        })
        .with_policy(TaskPolicy::Optional),
        Tool::new("block", "Runs until cancelled", |ctx| async move {
            ctx.cancellation().cancelled().await;
            Err::<Value, _>(ToolError::Cancelled)
        })
        .with_policy(TaskPolicy::Required),
        Tool::new("explode", "Fails with a protocol error", |_ctx| async {
            Err::<Value, _>(ToolError::rpc(-32603, "Tool exploded"))
        })
        .with_policy(TaskPolicy::Required),
        Tool::new("interview", "Two MRTR rounds", |ctx| async move {
            let first = ctx.input("first", elicitation("First?", "name")).await?;
            let second = ctx.input("second", elicitation("Second?", "name")).await?;
            let name = |v: &InputResponse| accepted_str(v, "name").unwrap_or("?").to_owned();
            Ok(text_result(format!(
                "first={} second={}",
                name(&first),
                name(&second)
            )))
        }),
        Tool::new("sample", "Asks for a sampling", |ctx| async move {
            let request = InputRequest {
                method: "sampling/createMessage".into(),
                params: json!({"messages": [], "maxTokens": 10})
                    .as_object()
                    .cloned(),
            };
            ctx.input("draft", request).await?;
            Ok(text_result("sampled"))
        }),
        Tool::new("compose", "MRTR, then a task", |ctx| async move {
            let answer = ctx
                .input("user_name", elicitation("What is your name?", "name"))
                .await?;
            let name = accepted_str(&answer, "name").unwrap_or("there");
            Ok(text_result(format!(
                "Hello, {name} (task: {})",
                ctx.is_task()
            )))
        })
        .with_policy_fn(|params| {
            if params.get("inputResponses").is_some_and(|r| !r.is_null()) {
                TaskPolicy::Required
            } else {
                TaskPolicy::Sync
            }
        }),
        Tool::new("strict", "Requires an integer count", move |_ctx| {
            strict_runs.strict.fetch_add(1, Ordering::SeqCst);
            async { Ok(text_result("counted")) }
        })
        .with_input_schema(json!({
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        }))
        .with_policy(TaskPolicy::Optional),
    ]
}
