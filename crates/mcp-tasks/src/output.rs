//! Printing results, tasks and tools for people (or as raw JSON with `--json`).

use serde_json::Value;
use tasks_client::{DetailedTask, ToolEntry, ToolResult};
use tasks_core::TaskState;

use crate::status::describe;
use crate::text::clean;

/// `println!` that ignores a closed stdout (`mcp-tasks tools URL | head` ends quietly).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// A content block as text: its text, or a one-line description of other kinds.
fn block(content: &Value) -> String {
    let field = |name: &str| content.get(name).and_then(Value::as_str).unwrap_or("");
    match field("type") {
        "text" => clean(field("text")).into_owned(),
        "image" | "audio" => format!(
            "[{} {}, {} bytes base64]",
            field("type"),
            field("mimeType"),
            field("data").len()
        ),
        "resource_link" => format!("[link {}]", field("uri")),
        "resource" => {
            let resource = content.get("resource").cloned().unwrap_or_default();
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => clean(text).into_owned(),
                None => format!(
                    "[resource {}]",
                    resource.get("uri").and_then(Value::as_str).unwrap_or("")
                ),
            }
        }
        _ => clean(&content.to_string()).into_owned(),
    }
}

/// Prints a tool result on stdout: the raw object with `json`, else each content block
/// (and `structuredContent` when there is no content).
pub(crate) fn result(result: &ToolResult, json: bool) {
    if json {
        out!("{}", pretty(result.as_object()));
        return;
    }
    for content in result.content() {
        out!("{}", block(content));
    }
    if result.content().is_empty() {
        if let Some(structured) = result.structured() {
            out!("{}", pretty(structured));
        }
    }
}

/// Prints a task on stdout: the raw `DetailedTask` with `json`, else its status, message and
/// payload.
pub(crate) fn task(task: &DetailedTask, json: bool) {
    if json {
        out!("{}", pretty(task));
        return;
    }
    out!(
        "task {}: {}",
        clean(task.task.task_id.as_str()),
        describe(task)
    );
    match &task.state {
        TaskState::InputRequired { input_requests } => {
            for (key, request) in input_requests.as_map() {
                let message = request
                    .params
                    .as_ref()
                    .and_then(|p| p.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                out!(
                    "  waiting for {} ({}): {}",
                    clean(key),
                    clean(&request.method),
                    clean(message)
                );
            }
        }
        TaskState::Completed { result: object } => {
            result(&ToolResult::new(object.to_object()), false);
        }
        TaskState::Failed { error } => out!("  error {}: {}", error.code, clean(&error.message)),
        TaskState::Working | TaskState::Cancelled => {}
    }
}

/// How a property's `type` reads in the tool list: `integer` for `"integer"`; a list joined with
/// ` | ` (`string | integer`), leaving out `null` for an optional property, whose `?` already
/// says it may be absent (`["integer", "null"]` is `integer`); `any` without a type.
fn type_label(schema: &Value, required: bool) -> String {
    match schema.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|kind| required || *kind != "null")
                .collect();
            if kinds.is_empty() {
                "any".to_owned()
            } else {
                kinds.join(" | ")
            }
        }
        _ => "any".to_owned(),
    }
}

/// Prints the tool list: name, description and arguments (`name: type`, `?` when optional).
pub(crate) fn tools(tools: &[ToolEntry], json: bool) {
    if json {
        out!("{}", pretty(&tools));
        return;
    }
    for tool in tools {
        let required: Vec<&str> = tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let arguments: Vec<String> = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, schema)| {
                        let is_required = required.contains(&name.as_str());
                        let optional = if is_required { "" } else { "?" };
                        format!("{name}{optional}: {}", type_label(schema, is_required))
                    })
                    .collect()
            })
            .unwrap_or_default();
        out!("{}({})", clean(&tool.name), clean(&arguments.join(", ")));
        if !tool.description.is_empty() {
            out!("    {}", clean(&tool.description));
        }
    }
}

#[cfg(test)]
mod type_label_tests {
    use serde_json::json;

    use super::type_label;

    #[test]
    fn type_lists_read_as_a_person_would() {
        assert_eq!(type_label(&json!({"type": "integer"}), true), "integer");
        assert_eq!(
            type_label(&json!({"type": ["integer", "null"]}), false),
            "integer"
        );
        assert_eq!(
            type_label(&json!({"type": ["integer", "null"]}), true),
            "integer | null"
        );
        assert_eq!(
            type_label(&json!({"type": ["string", "integer"]}), false),
            "string | integer"
        );
        assert_eq!(type_label(&json!({"type": ["null"]}), false), "any");
        assert_eq!(type_label(&json!({}), true), "any");
    }
}
