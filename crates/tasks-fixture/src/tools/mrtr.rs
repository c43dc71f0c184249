//! The `test_input_required_result_*` tools of the runner's MRTR scenarios (SEP-2322;
//! `runner-core-checks.md` "input-required-result-*"). All take no arguments and run
//! synchronously: each missing answer ends the call with an `input_required` result, and the
//! retry carries the answers (`inputResponses`) and the signed `requestState`.
//!
//! | tool | asks (key: method) | completes with |
//! |---|---|---|
//! | `…_elicitation` | `user_name`: elicitation | `Hello, <name>!` |
//! | `…_sampling` | `model_reply`: sampling | the model's text |
//! | `…_list_roots` | `client_roots`: roots/list | the number of roots |
//! | `…_request_state` | `confirmation`: elicitation | `state-ok` |
//! | `…_multiple_inputs` | all three at once | a summary |
//! | `…_multi_round` | `name`, then in a second round `color` | `<name> likes <color>` |
//! | `…_tampered_state` | `confirmation`: elicitation | `state-ok` (a tampered state is -32602) |
//! | `…_capabilities` | one request for a capability the call declared (elicitation, else sampling, else roots) | what it got |

use serde_json::{json, Value};
use tasks_runtime::{text_result, Tool, ToolContext, ToolError};

use super::{
    answered, ask_string, elicitation, root_count, roots, sampled_text, sampling, user_name,
};

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn tool<F, Fut>(suffix: &str, description: &str, handler: F) -> Tool
where
    F: Fn(ToolContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    Tool::new(
        format!("test_input_required_result_{suffix}"),
        description,
        handler,
    )
    .with_input_schema(no_arguments())
}

fn confirmation() -> tasks_core::InputRequest {
    elicitation(
        "Confirm to continue",
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
    )
}

/// The MRTR tools, in listing order.
pub fn all() -> Vec<Tool> {
    vec![
        tool(
            "elicitation",
            "Asks for the user's name (key user_name), then greets them.",
            |ctx| async move {
                let name = user_name(&ctx).await?;
                Ok(text_result(format!("Hello, {name}!")))
            },
        ),
        tool(
            "sampling",
            "Asks the client's model for a reply (key model_reply), then returns it.",
            |ctx| async move {
                let answer = ctx.input("model_reply", sampling("Say hello")).await?;
                let text = sampled_text(&answer).unwrap_or("");
                Ok(text_result(format!("The model said: {text}")))
            },
        ),
        tool(
            "list_roots",
            "Asks for the client's roots (key client_roots), then counts them.",
            |ctx| async move {
                let answer = ctx.input("client_roots", roots()).await?;
                Ok(text_result(format!("Found {} roots", root_count(&answer))))
            },
        ),
        tool(
            "request_state",
            "Asks for a confirmation (key confirmation); the retry must echo requestState.",
            |ctx| async move {
                ctx.input("confirmation", confirmation()).await?;
                Ok(text_result("state-ok"))
            },
        ),
        tool(
            "multiple_inputs",
            "Asks for a name, a model reply and the roots in one round.",
            |ctx| async move {
                let (name, reply, listed) = tokio::join!(
                    ctx.input("user_name", ask_string("What is your name?", "name")),
                    ctx.input("model_reply", sampling("Say hello")),
                    ctx.input("client_roots", roots()),
                );
                let (name, reply, listed) = (name?, reply?, listed?);
                Ok(text_result(format!(
                    "Name: {}; model: {}; roots: {}",
                    answered(&name, "name").unwrap_or("?"),
                    sampled_text(&reply).unwrap_or(""),
                    root_count(&listed)
                )))
            },
        ),
        tool(
            "multi_round",
            "Asks for a name, then in a second round for a favourite color.",
            |ctx| async move {
                let name = ctx
                    .input("name", ask_string("What is your name?", "name"))
                    .await?;
                let color = ctx
                    .input(
                        "color",
                        ask_string("What is your favourite color?", "color"),
                    )
                    .await?;
                Ok(text_result(format!(
                    "{} likes {}",
                    answered(&name, "name").unwrap_or("someone"),
                    answered(&color, "color").unwrap_or("nothing")
                )))
            },
        ),
        tool(
            "tampered_state",
            "Asks for a confirmation (key confirmation); a modified requestState is rejected.",
            |ctx| async move {
                ctx.input("confirmation", confirmation()).await?;
                Ok(text_result("state-ok"))
            },
        ),
        tool(
            "capabilities",
            "Asks once, using only a capability the call declared: elicitation, else sampling, \
             else roots.",
            |ctx| async move {
                if ctx.client_declares("elicitation") {
                    let name = user_name(&ctx).await?;
                    Ok(text_result(format!("Elicited: {name}")))
                } else if ctx.client_declares("sampling") {
                    let answer = ctx.input("model_reply", sampling("Say hello")).await?;
                    Ok(text_result(format!(
                        "Sampled: {}",
                        sampled_text(&answer).unwrap_or("")
                    )))
                } else if ctx.client_declares("roots") {
                    let answer = ctx.input("client_roots", roots()).await?;
                    Ok(text_result(format!("Roots: {}", root_count(&answer))))
                } else {
                    Ok(text_result("No declared capability to ask with"))
                }
            },
        ),
    ]
}
