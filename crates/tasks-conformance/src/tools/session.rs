//! Tools of the runner's 2025-11-25 server scenarios (run over a 2025 session; they are
//! served on the 2026-07-28 path too).
//!
//! | tool | behaviour | scenario |
//! |---|---|---|
//! | `test_tool_with_logging` | logs three `info` messages 50 ms apart, then text | `tools-call-with-logging` |
//! | `test_sampling` | asks the client's model to answer `prompt`, returns `LLM response: <text>` | `tools-call-sampling` |
//! | `test_elicitation` | asks for `username` and `email` with `message`, returns `User response: …` | `tools-call-elicitation` |
//! | `test_elicitation_sep1034_defaults` | asks a form whose five fields carry defaults | `elicitation-sep1034-defaults` |
//! | `test_elicitation_sep1330_enums` | asks a form with the five enum styles | `elicitation-sep1330-enums` |
//! | `test_legacy_extension_capabilities` | returns text JSON `{"extensions": …}`: the extensions the client declared, as its session holds them | `server-legacy-extensions` (unreleased upstream) |
//!
//! [`session_extensions`] are the extensions the fixture declares to 2025 sessions (those of
//! `server-legacy-extensions`).

use std::time::Duration;

use serde_json::{json, Value};
use tasks_core::input::ElicitAnswer;
use tasks_core::{JsonObject, LogLevel};
use tasks_runtime::{text_result, Tool, ToolContext, ToolError};

use super::{sampling, str_arg};

/// The tools, in listing order.
pub fn all() -> Vec<Tool> {
    vec![
        logging(),
        sampling_tool(),
        elicitation(),
        form_tool(
            "test_elicitation_sep1034_defaults",
            "Asks a form whose string, integer, number, enum and boolean fields have defaults.",
            defaults_form(),
        ),
        form_tool(
            "test_elicitation_sep1330_enums",
            "Asks a form with untitled, titled and legacy single-choice enums and untitled and \
             titled multi-choice enums.",
            enums_form(),
        ),
        legacy_extensions(),
    ]
}

/// The extensions the fixture declares in a 2025 `initialize` result
/// (`capabilities.extensions`): the server fixture of the upstream `server-legacy-extensions`
/// scenario, an empty UI extension, settings of every JSON kind under
/// `com.example/conformance` and an empty `com.example/empty`.
pub fn session_extensions() -> JsonObject {
    [
        ("io.modelcontextprotocol/ui", json!({})),
        (
            "com.example/conformance",
            json!({"nested": {"enabled": true, "limit": 3}, "values": [null, "b", 4]}),
        ),
        ("com.example/empty", json!({})),
    ]
    .into_iter()
    .map(|(id, settings)| (id.to_owned(), settings))
    .collect()
}

fn legacy_extensions() -> Tool {
    Tool::new(
        "test_legacy_extension_capabilities",
        "Returns the extensions the client declared (capabilities.extensions, as its session \
         holds them; {} when none) as text JSON {\"extensions\": ...}.",
        |ctx| async move {
            let extensions = ctx
                .client_capabilities()
                .get("extensions")
                .cloned()
                .unwrap_or_else(|| json!({}));
            Ok(text_result(json!({"extensions": extensions}).to_string()))
        },
    )
    .with_input_schema(json!({"type": "object", "properties": {}}))
}

fn logging() -> Tool {
    Tool::new(
        "test_tool_with_logging",
        "Logs three info messages 50 ms apart (sent at or above the session's or request's \
         log level), then answers.",
        |ctx| async move {
            for (i, text) in [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ]
            .into_iter()
            .enumerate()
            {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.log(LogLevel::Info, Some("test_tool_with_logging"), json!(text));
            }
            Ok(text_result("Logging test completed"))
        },
    )
    .with_input_schema(json!({"type": "object", "properties": {}}))
}

fn sampling_tool() -> Tool {
    Tool::new(
        "test_sampling",
        "Asks the client's model to answer the prompt (key llm_response), then returns its text.",
        |ctx| async move {
            let prompt = str_arg(&ctx, "prompt").unwrap_or("Hello").to_owned();
            let answer = ctx.sample("llm_response", sampling(&prompt)).await?;
            Ok(text_result(format!(
                "LLM response: {}",
                answer.text().unwrap_or("")
            )))
        },
    )
    .with_input_schema(json!({
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": "What to ask the model"}},
        "required": ["prompt"]
    }))
}

fn elicitation() -> Tool {
    Tool::new(
        "test_elicitation",
        "Asks the user for a username and an email (key user_info), then echoes the answer.",
        |ctx| async move {
            let message = str_arg(&ctx, "message")
                .unwrap_or("Please provide your information")
                .to_owned();
            let schema = json!({
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "Your username"},
                    "email": {"type": "string", "format": "email", "description": "Your email"}
                },
                "required": ["username", "email"]
            });
            let answer = ctx.elicit("user_info", message, schema).await?;
            Ok(text_result(describe(&answer)))
        },
    )
    .with_input_schema(json!({
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The question to ask"}},
        "required": ["message"]
    }))
}

fn describe(answer: &ElicitAnswer) -> String {
    match answer {
        ElicitAnswer::Accept(content) => {
            format!("User response: {}", Value::Object(content.clone()))
        }
        ElicitAnswer::Decline => "User response: declined".to_owned(),
        ElicitAnswer::Cancel => "User response: cancelled".to_owned(),
    }
}

fn form_tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    Tool::new(name, description, move |ctx: ToolContext| {
        let schema = schema.clone();
        async move {
            let answer = ctx
                .elicit("form", "Please review and update the form fields", schema)
                .await?;
            Ok::<_, ToolError>(text_result(describe(&answer)))
        }
    })
    .with_input_schema(json!({"type": "object", "properties": {}}))
}

fn defaults_form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true}
        }
    })
}

fn enums_form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}
            ]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"}
            ]}}
        }
    })
}
