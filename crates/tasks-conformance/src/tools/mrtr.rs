//! The `test_input_required_result_*` tools of the runner's MRTR scenarios (SEP-2322;
//! `input-required-result-*`). All take no arguments and run
//! synchronously: each missing answer ends the call with an `input_required` result, and the
//! retry carries the answers (`inputResponses`) and the signed `requestState`.
//!
//! | tool | asks (key: method) | completes with |
//! |---|---|---|
//! | `…_elicitation` | `user_name`: elicitation | `Hello, <name>!` |
//! | `…_sampling` | `model_reply`: sampling | the model's text |
//! | `…_list_roots` | `client_roots`: roots/list | the number of roots |
//! | `…_request_state` | `confirmation`: elicitation | `state-ok` |
//! | `…_multiple_inputs` | all three at once (needs all three declared, -32021 up front) | a summary |
//! | `…_multi_round` | `name`, then in a second round `color` | `<name> likes <color>` |
//! | `…_tampered_state` | `confirmation`: elicitation | `state-ok` (a tampered state is -32602) |
//! | `…_capabilities` | one request for a capability the call declared (form elicitation, else sampling, else roots) | what it got |

use serde_json::{json, Value};
use tasks_core::input::{ClientCapability, ElicitAnswer};
use tasks_runtime::{text_result, Tool, ToolContext, ToolError};

use super::{sampling, string_form, user_name};

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

/// Asks for a confirmation under key `confirmation`; any answer (even a decline) will do.
async fn confirmation(ctx: &ToolContext) -> Result<ElicitAnswer, ToolError> {
    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
    ctx.elicit("confirmation", "Confirm to continue", schema)
        .await
}

/// An accepted string field, or `fallback` for a decline or cancel.
fn field_or<'a>(answer: &'a ElicitAnswer, field: &str, fallback: &'a str) -> &'a str {
    answer.str_field(field).unwrap_or(fallback)
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
                let answer = ctx.sample("model_reply", sampling("Say hello")).await?;
                let text = answer.text().unwrap_or("");
                Ok(text_result(format!("The model said: {text}")))
            },
        ),
        tool(
            "list_roots",
            "Asks for the client's roots (key client_roots), then counts them.",
            |ctx| async move {
                let roots = ctx.list_roots("client_roots").await?;
                Ok(text_result(format!("Found {} roots", roots.len())))
            },
        ),
        tool(
            "request_state",
            "Asks for a confirmation (key confirmation); the retry must echo requestState.",
            |ctx| async move {
                confirmation(&ctx).await?;
                Ok(text_result("state-ok"))
            },
        ),
        tool(
            "multiple_inputs",
            "Asks for a name, a model reply and the roots in one round.",
            |ctx| async move {
                let (name, reply, roots) = tokio::join!(
                    ctx.elicit("user_name", "What is your name?", string_form("name")),
                    ctx.sample("model_reply", sampling("Say hello")),
                    ctx.list_roots("client_roots"),
                );
                let (name, reply, roots) = (name?, reply?, roots?);
                Ok(text_result(format!(
                    "Name: {}; model: {}; roots: {}",
                    field_or(&name, "name", "?"),
                    reply.text().unwrap_or(""),
                    roots.len()
                )))
            },
        )
        .requires_client([
            ClientCapability::ElicitationForm,
            ClientCapability::Sampling,
            ClientCapability::Roots,
        ]),
        tool(
            "multi_round",
            "Asks for a name, then in a second round for a favourite color.",
            |ctx| async move {
                let name = ctx
                    .elicit("name", "What is your name?", string_form("name"))
                    .await?;
                let color = ctx
                    .elicit(
                        "color",
                        "What is your favourite color?",
                        string_form("color"),
                    )
                    .await?;
                Ok(text_result(format!(
                    "{} likes {}",
                    field_or(&name, "name", "someone"),
                    field_or(&color, "color", "nothing")
                )))
            },
        ),
        tool(
            "tampered_state",
            "Asks for a confirmation (key confirmation); a modified requestState is rejected.",
            |ctx| async move {
                confirmation(&ctx).await?;
                Ok(text_result("state-ok"))
            },
        ),
        tool(
            "capabilities",
            "Asks once, using only a capability the call declared: elicitation, else sampling, \
             else roots.",
            |ctx| async move {
                if ctx.client_declares(ClientCapability::ElicitationForm) {
                    let name = user_name(&ctx).await?;
                    Ok(text_result(format!("Elicited: {name}")))
                } else if ctx.client_declares(ClientCapability::Sampling) {
                    let answer = ctx.sample("model_reply", sampling("Say hello")).await?;
                    Ok(text_result(format!(
                        "Sampled: {}",
                        answer.text().unwrap_or("")
                    )))
                } else if ctx.client_declares(ClientCapability::Roots) {
                    let roots = ctx.list_roots("client_roots").await?;
                    Ok(text_result(format!("Roots: {}", roots.len())))
                } else {
                    Ok(text_result("No declared capability to ask with"))
                }
            },
        ),
    ]
}
