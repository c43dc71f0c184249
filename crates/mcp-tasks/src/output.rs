//! Printing results, tasks, tools, prompts, resources and skills for people (or as raw JSON
//! with `--json`).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Value};
use tasks_client::{
    Completion, DetailedTask, Prompt, PromptResult, ReadResult, Resource, ResourceBody,
    ResourceContents, ResourceTemplate, Role, Skill, SkillFile, SkillResources, ToolEntry,
    ToolResult,
};
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

/// `value` as indented JSON, its keys in their order, nested raw JSON (a task's `result`, kept
/// as the server sent it) indented too (`to_string_pretty` writes raw JSON as it came).
fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value)
        .map(|compact| reindent(&compact))
        .unwrap_or_default()
}

/// Valid JSON indented as `serde_json::to_string_pretty` does (two spaces, `"key": value`,
/// `{}` and `[]` when empty), whatever its whitespace.
fn reindent(json: &str) -> String {
    let mut out = String::with_capacity(json.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    let mut chars = json.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
                let close = if c == '{' { '}' } else { ']' };
                out.push(c);
                if chars.peek() == Some(&close) {
                    chars.next();
                    out.push(close);
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

/// A content block as text: its text, or a one-line description of other kinds.
fn block(content: &Value) -> String {
    let field = |name: &str| content.get(name).and_then(Value::as_str).unwrap_or("");
    match field("type") {
        "text" => clean(field("text")).into_owned(),
        // The decoded size, as `read` shows a blob's.
        "image" | "audio" => match STANDARD.decode(field("data")) {
            Ok(bytes) => format!(
                "[{} {}, {} bytes]",
                field("type"),
                field("mimeType"),
                bytes.len()
            ),
            Err(_) => format!("[{} {}, not base64]", field("type"), field("mimeType")),
        },
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

/// The most `$ref` hops followed for one schema (a cycle ends there).
const MAX_REF_HOPS: usize = 8;

/// `schema` with its local `$ref` (`#/$defs/…`, any JSON Pointer into `root`) followed, also
/// through a lone `allOf: [{"$ref": …}]` (how generators attach a description to a
/// reference); the schema itself when it has none or it cannot be resolved.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..MAX_REF_HOPS {
        let reference = current.get("$ref").and_then(Value::as_str).or_else(|| {
            match current
                .get("allOf")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
            {
                Some([only]) => only.get("$ref").and_then(Value::as_str),
                _ => None,
            }
        });
        let Some(target) = reference
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|pointer| root.pointer(pointer))
        else {
            break;
        };
        current = target;
    }
    current
}

/// `keyword` of `schema`, or of what its `$ref` resolves to (the referring schema wins, as a
/// description or default written beside a reference does).
fn keyword<'a>(root: &'a Value, schema: &'a Value, keyword: &str) -> Option<&'a Value> {
    schema
        .get(keyword)
        .or_else(|| resolve(root, schema).get(keyword))
}

/// The JSON type of a value, as a schema names it.
fn value_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// How a property's type reads in the tool list: `integer` for `"type": "integer"`; a list
/// joined with ` | ` (`string | integer`), leaving out `null` for an optional property, whose
/// `optional` already says it may be absent (`["integer", "null"]` is `integer`); a local
/// `$ref` resolved (`object {city, street}`); `anyOf`/`oneOf` as the union of their members;
/// `array of string`; the type of an `enum`'s or a `const`'s values; `any` when nothing says.
fn type_label(root: &Value, schema: &Value, required: bool) -> String {
    type_label_at(root, schema, required, 0)
}

fn type_label_at(root: &Value, schema: &Value, required: bool, depth: usize) -> String {
    let schema = resolve(root, schema);
    let keep = |kind: &str| required || kind != "null";
    let mut kinds: Vec<String> = match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.clone()],
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    if kinds.is_empty() {
        let members = ["anyOf", "oneOf"]
            .iter()
            .find_map(|k| schema.get(*k).and_then(Value::as_array));
        if let (Some(members), true) = (members, depth < MAX_REF_HOPS) {
            for member in members {
                for kind in type_label_at(root, member, true, depth + 1).split(" | ") {
                    if !kinds.iter().any(|k| k == kind) {
                        kinds.push(kind.to_owned());
                    }
                }
            }
        } else if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            for kind in values.iter().map(value_type) {
                if !kinds.iter().any(|k| k == kind) {
                    kinds.push(kind.to_owned());
                }
            }
        } else if let Some(value) = schema.get("const") {
            kinds.push(value_type(value).to_owned());
        } else if schema.get("properties").is_some() {
            kinds.push("object".to_owned());
        }
    }
    let kinds: Vec<String> = kinds
        .into_iter()
        .filter(|k| keep(k) && k != "any")
        .map(|kind| match kind.as_str() {
            "array" => match schema.get("items") {
                Some(items) if depth < MAX_REF_HOPS => {
                    let of = type_label_at(root, items, true, depth + 1);
                    if of == "any" {
                        kind
                    } else {
                        format!("array of {of}")
                    }
                }
                _ => kind,
            },
            "object" => match schema.get("properties").and_then(Value::as_object) {
                Some(properties) if !properties.is_empty() => {
                    let names: Vec<&str> = properties.keys().map(String::as_str).collect();
                    format!("object {{{}}}", names.join(", "))
                }
                _ => kind,
            },
            _ => kind,
        })
        .collect();
    if kinds.is_empty() {
        "any".to_owned()
    } else {
        kinds.join(" | ")
    }
}

/// A JSON value as an argument line shows it: strings quoted, the rest as JSON, long ones
/// cut.
fn shown_value(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 40 {
        let cut: String = text.chars().take(37).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// The keywords shown as bounds, in this order.
const BOUNDS: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// One argument's line: `seconds: number, optional, default 0, minimum 0, maximum 86400 —
/// How long to sleep, in seconds`; enum values as `one of "phone", "email"`.
fn argument_line(root: &Value, name: &str, schema: &Value, required: bool) -> String {
    let mut parts = vec![
        format!("{name}: {}", type_label(root, schema, required)),
        if required { "required" } else { "optional" }.to_owned(),
    ];
    if let Some(default) = keyword(root, schema, "default") {
        // A whole-number default of a number reads as one (`0`, not `0.0`).
        let default = match default.as_f64() {
            Some(n) if default.is_f64() && n.fract() == 0.0 && n.abs() < 1e15 => {
                Value::from(n as i64)
            }
            _ => default.clone(),
        };
        parts.push(format!("default {}", shown_value(&default)));
    }
    for bound in BOUNDS {
        if let Some(value) = keyword(root, schema, bound) {
            let value = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            parts.push(format!("{bound} {value}"));
        }
    }
    if let Some(values) = enum_values(root, schema) {
        let shown: Vec<String> = values.iter().map(shown_value).collect();
        parts.push(format!("one of {}", shown.join(", ")));
    }
    let mut line = parts.join(", ");
    let description = keyword(root, schema, "description")
        .or_else(|| keyword(root, schema, "title"))
        .and_then(Value::as_str);
    if let Some(description) = description.filter(|d| !d.trim().is_empty()) {
        line.push_str(" — ");
        line.push_str(description.trim());
    }
    line
}

/// The values an argument may take: its `enum`, or the `const`s of its `anyOf`/`oneOf`
/// members (`null` left out).
fn enum_values(root: &Value, schema: &Value) -> Option<Vec<Value>> {
    let resolved = resolve(root, schema);
    if let Some(values) = keyword(root, schema, "enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    let members = ["anyOf", "oneOf"]
        .iter()
        .find_map(|k| resolved.get(*k).and_then(Value::as_array))?;
    let mut values = Vec::new();
    for member in members {
        let member = resolve(root, member);
        match (
            member.get("const"),
            member.get("enum").and_then(Value::as_array),
        ) {
            (Some(value), _) => values.push(value.clone()),
            (None, Some(listed)) => values.extend(listed.iter().cloned()),
            (None, None) if member.get("type") == Some(&Value::from("null")) => {}
            _ => return None,
        }
    }
    (!values.is_empty()).then_some(values)
}

/// `task: optional` when the listing says how the tool runs as a task
/// (`execution.taskSupport`, as MCP 2025-11-25 lists it; 2026-07-28 lists none).
fn task_support(tool: &ToolEntry) -> Option<String> {
    let support = tool.execution.as_ref()?.get("taskSupport")?.as_str()?;
    Some(match support {
        "forbidden" => "never a task".to_owned(),
        other => format!("task: {other}"),
    })
}

/// Prints the tool list: each tool's name (with how it runs as a task, when listed), its
/// description, and each argument on a line of its own ([`argument_line`]), the required ones
/// first.
pub(crate) fn tools(tools: &[ToolEntry], json: bool) {
    if json {
        out!("{}", pretty(&tools));
        return;
    }
    for tool in tools {
        let root = Value::Object(tool.input_schema.clone());
        let required: Vec<&str> = tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut heading = clean(&tool.name).into_owned();
        if let Some(title) = tool.title.as_deref().filter(|t| !t.is_empty()) {
            heading.push_str(&format!(" ({})", clean(title)));
        }
        if let Some(support) = task_support(tool) {
            heading.push_str(&format!(" [{support}]"));
        }
        out!("{heading}");
        if !tool.description.is_empty() {
            out!("    {}", clean(&tool.description));
        }
        let mut arguments: Vec<(bool, &String, &Value)> = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, schema)| (required.contains(&name.as_str()), name, schema))
                    .collect()
            })
            .unwrap_or_default();
        arguments.sort_by_key(|(is_required, _, _)| !is_required);
        if arguments.is_empty() {
            out!("    (no arguments)");
        }
        for (is_required, name, schema) in arguments {
            out!(
                "    - {}",
                clean(&argument_line(&root, name, schema, is_required))
            );
        }
    }
}

/// One prompt's line: its name, its arguments as they are written (`arg1=…`, an optional one
/// in brackets: `[mood=…]`), and its description.
fn prompt_line(prompt: &Prompt) -> String {
    let mut words = vec![prompt.name.clone()];
    for argument in &prompt.arguments {
        words.push(if argument.required {
            format!("{}=…", argument.name)
        } else {
            format!("[{}=…]", argument.name)
        });
    }
    let mut line = words.join(" ");
    let described = prompt
        .description
        .as_deref()
        .or(prompt.title.as_deref())
        .filter(|d| !d.trim().is_empty());
    if let Some(description) = described {
        line.push_str(" — ");
        line.push_str(description.trim());
    }
    clean(&line).into_owned()
}

/// Prints the prompt list, one line each ([`prompt_line`]); with `json`, the list as the
/// server sent its items.
pub(crate) fn prompts(prompts: &[Prompt], json: bool) {
    if json {
        out!("{}", pretty(&prompts));
        return;
    }
    for prompt in prompts {
        out!("{}", prompt_line(prompt));
    }
}

/// Prints a rendered prompt: each message as `role: content` (a content block as in a tool
/// result); with `json`, the result.
pub(crate) fn prompt(result: &PromptResult, json: bool) {
    if json {
        out!("{}", pretty(result));
        return;
    }
    for message in &result.messages {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        out!("{role}: {}", block(&message.content));
    }
}

/// `name, mime type, more` of a listed resource or template.
fn details(name: &str, title: Option<&str>, mime_type: Option<&str>, more: &[&str]) -> String {
    let mut parts = vec![title.filter(|t| !t.is_empty()).unwrap_or(name)];
    parts.extend(mime_type);
    parts.extend(more);
    parts.join(", ")
}

/// One resource's (or template's) line: `URI  name, mime type — description`.
fn resource_line(uri: &str, details: &str, description: Option<&str>) -> String {
    let mut line = format!("{uri}  {details}");
    if let Some(description) = description.filter(|d| !d.trim().is_empty()) {
        line.push_str(" — ");
        line.push_str(description.trim());
    }
    clean(&line).into_owned()
}

/// Prints the resources, then the templates (marked `template`), one line each; with `json`,
/// `{"resources": [...], "resourceTemplates": [...]}`.
pub(crate) fn resources(resources: &[Resource], templates: &[ResourceTemplate], json: bool) {
    if json {
        out!(
            "{}",
            pretty(&json!({"resources": resources, "resourceTemplates": templates}))
        );
        return;
    }
    for resource in resources {
        let size = resource.size.map(|size| format!("{size} bytes"));
        let more: Vec<&str> = size.as_deref().into_iter().collect();
        out!(
            "{}",
            resource_line(
                &resource.uri,
                &details(
                    &resource.name,
                    resource.title.as_deref(),
                    resource.mime_type.as_deref(),
                    &more
                ),
                resource.description.as_deref()
            )
        );
    }
    for template in templates {
        out!(
            "{}",
            resource_line(
                &template.uri_template,
                &details(
                    &template.name,
                    template.title.as_deref(),
                    template.mime_type.as_deref(),
                    &["template"]
                ),
                template.description.as_deref()
            )
        );
    }
}

/// What `read` prints of one binary item: its URI, type and size, and how to save it.
pub(crate) fn binary_line(uri: &str, mime_type: Option<&str>, size: usize) -> String {
    clean(&format!(
        "{uri}: binary, {}, {size} bytes (--output FILE writes it)",
        mime_type.unwrap_or("type unknown")
    ))
    .into_owned()
}

/// Prints what was read: each text item's text (a newline added when it lacks one), and for
/// each blob a line with its type and size ([`binary_line`]); with `json`, the result as sent
/// (blobs base64).
pub(crate) fn read(result: &ReadResult, json: bool) {
    if json {
        out!("{}", pretty(&json!({"contents": result.contents})));
        return;
    }
    for contents in &result.contents {
        item(contents);
    }
}

/// Prints one item read: its text (a newline added when it lacks one), or for a blob a line
/// with its type and size ([`binary_line`]).
fn item(contents: &ResourceContents) {
    match &contents.body {
        ResourceBody::Text(text) => {
            let text = clean(text);
            out!("{}", text.strip_suffix('\n').unwrap_or(&text));
        }
        ResourceBody::Blob(bytes) => out!(
            "{}",
            binary_line(&contents.uri, contents.mime_type.as_deref(), bytes.len())
        ),
        _ => {}
    }
}

/// `1 file`, `3 files`.
fn files_count(count: usize) -> String {
    if count == 1 {
        "1 file".to_owned()
    } else {
        format!("{count} files")
    }
}

/// One skill's line: `URI  name, 3 files, 585 bytes — description` (`dynamic files` when the
/// skill does not list them).
fn skill_line(skill: &Skill) -> String {
    let more = match skill.files() {
        Some(files) => vec![
            files_count(files.len()),
            format!("{} bytes", skill.total_size().unwrap_or(0)),
        ],
        None => vec!["dynamic files".to_owned()],
    };
    let more: Vec<&str> = more.iter().map(String::as_str).collect();
    resource_line(
        &skill.uri,
        &details(skill.name().unwrap_or("(no name)"), None, None, &more),
        skill.description(),
    )
}

/// Prints the skills, one line each ([`skill_line`]); with `json`, a JSON array of their
/// entries, each `{"uri", "frontmatter", "resources"}` (as [`prompts`] prints its list).
pub(crate) fn skills(skills: &[Skill], json: bool) {
    if json {
        out!("{}", pretty(&skills));
        return;
    }
    for skill in skills {
        out!("{}", skill_line(skill));
    }
}

/// A file's place in `skill`: its path below the skill's directory, or its whole URI when it
/// is not below it.
pub(crate) fn skill_path<'a>(skill: &Skill, uri: &'a str) -> &'a str {
    uri.strip_prefix(skill.root_uri())
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|path| !path.is_empty())
        .unwrap_or(uri)
}

/// A frontmatter value as shown: a string as it is, anything else as compact JSON.
fn field_value(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The lines of a skill's entry: its URI; its frontmatter fields, `name` and `description`
/// first, then the rest in name order; then `files: 3, 585 bytes` and one line per file (path,
/// size, digest), or `files: dynamic (…)`.
fn skill_lines(skill: &Skill) -> Vec<String> {
    let mut lines = vec![skill.uri.clone()];
    let first = ["name", "description"];
    let fields = first
        .iter()
        .filter_map(|name| skill.frontmatter.get_key_value(*name))
        .chain(
            skill
                .frontmatter
                .iter()
                .filter(|(name, _)| !first.contains(&name.as_str())),
        );
    for (name, value) in fields {
        lines.push(format!("{name}: {}", field_value(value)));
    }
    match &skill.resources {
        SkillResources::Files(files) => {
            lines.push(format!(
                "files: {}, {} bytes",
                files.len(),
                skill.total_size().unwrap_or(0)
            ));
            for file in files {
                lines.push(format!(
                    "  {}  {} bytes  {}",
                    skill_path(skill, &file.uri),
                    file.size,
                    file.digest
                ));
            }
        }
        _ => lines.push("files: dynamic (not listed; what is read is not verified)".to_owned()),
    }
    lines
        .into_iter()
        .map(|line| clean(&line).into_owned())
        .collect()
}

/// Prints a skill's entry ([`skill_lines`]); with `json`, the entry alone, `{"uri",
/// "frontmatter", "resources"}` (not the `skills/get` result around it).
pub(crate) fn skill(skill: &Skill, json: bool) {
    if json {
        out!("{}", pretty(skill));
        return;
    }
    for line in skill_lines(skill) {
        out!("{line}");
    }
}

/// Prints a skill's file as `read` prints an item; with `json`, `{"contents": [...],
/// "verified": bool}`.
pub(crate) fn skill_file(file: &SkillFile, json: bool) {
    if json {
        out!(
            "{}",
            pretty(&json!({"contents": [file.contents()], "verified": file.is_verified()}))
        );
        return;
    }
    item(file.contents());
}

/// One directory entry's line: `URI  name, directory`, or `URI  name, mime type, 12 bytes`.
fn directory_line(entry: &Resource) -> String {
    let size = entry.size.map(|size| format!("{size} bytes"));
    let (mime_type, more): (Option<&str>, Vec<&str>) = if entry.is_directory() {
        (None, vec!["directory"])
    } else {
        (
            entry.mime_type.as_deref(),
            size.as_deref().into_iter().collect(),
        )
    };
    resource_line(
        &entry.uri,
        &details(&entry.name, entry.title.as_deref(), mime_type, &more),
        entry.description.as_deref(),
    )
}

/// Prints a directory's entries, one line each ([`directory_line`]); with `json`,
/// `{"resources": [...]}`.
pub(crate) fn directory(entries: &[Resource], json: bool) {
    if json {
        out!("{}", pretty(&json!({"resources": entries})));
        return;
    }
    for entry in entries {
        out!("{}", directory_line(entry));
    }
}

/// Prints completion values one a line; with `json`, the completion.
pub(crate) fn completion(completion: &Completion, json: bool) {
    if json {
        out!("{}", pretty(completion));
        return;
    }
    for value in &completion.values {
        out!("{}", clean(value));
    }
}

#[cfg(test)]
mod catalog_tests {
    use super::*;

    #[test]
    fn json_is_indented_throughout_raw_results_too() {
        let task: DetailedTask = serde_json::from_value(json!({
            "taskId": "t1", "status": "completed", "createdAt": "2026-12-03T17:12:34Z",
            "lastUpdatedAt": "2026-12-03T17:12:34Z", "ttlMs": 60000,
            "result": {"content": [{"type": "text", "text": "Hi, \"you\" {a:[b]}"}], "isError": false}
        }))
        .expect("a task");
        let shown = pretty(&task);
        assert!(
            shown.contains("  \"result\": {\n    \"content\": [\n      {\n        \"text\": "),
            "{shown}"
        );
        let parsed: Value = serde_json::from_str(&shown).expect("still JSON");
        assert_eq!(
            parsed["result"]["content"][0]["text"],
            "Hi, \"you\" {a:[b]}"
        );
        // As serde_json indents, empty objects and arrays included.
        let value = json!({"a": [], "b": {}, "c": [1, {"d": "e\\"}], "f": null});
        let compact = serde_json::to_string(&value).expect("JSON");
        assert_eq!(
            reindent(&compact),
            serde_json::to_string_pretty(&value).expect("JSON")
        );
        assert_eq!(reindent("{ \"a\" : [ ] }"), "{\n  \"a\": []\n}");
    }

    #[test]
    fn images_show_their_decoded_size() {
        let image = json!({"type": "image", "mimeType": "image/png", "data": "AAECAw=="});
        assert_eq!(block(&image), "[image image/png, 4 bytes]");
        let bad = json!({"type": "audio", "mimeType": "audio/wav", "data": "!!"});
        assert_eq!(block(&bad), "[audio audio/wav, not base64]");
    }

    #[test]
    fn prompt_lines_show_how_to_write_the_arguments() {
        let prompt: Prompt = serde_json::from_value(json!({
            "name": "greet", "description": "Greets someone",
            "arguments": [{"name": "name", "required": true}, {"name": "mood"}]
        }))
        .expect("a prompt");
        assert_eq!(
            prompt_line(&prompt),
            "greet name=… [mood=…] — Greets someone"
        );
        let bare: Prompt = serde_json::from_value(json!({"name": "p\u{1b}[2J"})).expect("a prompt");
        assert_eq!(prompt_line(&bare), "p\\u{1b}[2J");
    }

    #[test]
    fn resource_lines_lead_with_the_uri() {
        assert_eq!(
            resource_line(
                "test://a",
                &details("a", None, Some("text/plain"), &["3 bytes"]),
                Some("An A")
            ),
            "test://a  a, text/plain, 3 bytes — An A"
        );
        assert_eq!(
            resource_line(
                "test://t/{id}",
                &details("t", Some("The T"), None, &["template"]),
                None
            ),
            "test://t/{id}  The T, template"
        );
        assert_eq!(
            binary_line("test://b", Some("image/png"), 70),
            "test://b: binary, image/png, 70 bytes (--output FILE writes it)"
        );
    }
}

#[cfg(test)]
mod skill_tests {
    use super::*;

    fn report() -> Skill {
        serde_json::from_value(json!({
            "uri": "skill://conformance/report-writing/SKILL.md",
            "frontmatter": {"name": "report-writing", "description": "Write reports",
                "license": "MIT", "metadata": {"version": "1.0"}},
            "resources": [
                {"uri": "skill://conformance/report-writing/SKILL.md", "digest": "sha256:aa", "size": 300},
                {"uri": "skill://conformance/report-writing/references/style.md", "digest": "sha256:bb", "size": 22},
            ],
        }))
        .expect("a skill")
    }

    #[test]
    fn skills_show_their_files_and_bytes_or_that_they_are_dynamic() {
        assert_eq!(
            skill_line(&report()),
            "skill://conformance/report-writing/SKILL.md  report-writing, 2 files, 322 bytes — \
             Write reports"
        );
        let mut dynamic = report();
        dynamic.resources = SkillResources::Dynamic;
        dynamic.frontmatter.remove("description");
        assert_eq!(
            skill_line(&dynamic),
            "skill://conformance/report-writing/SKILL.md  report-writing, dynamic files"
        );
        assert_eq!(
            skill_lines(&dynamic).last().map(String::as_str),
            Some("files: dynamic (not listed; what is read is not verified)")
        );
    }

    #[test]
    fn a_skill_shows_its_frontmatter_name_first_and_its_files_by_path() {
        assert_eq!(
            skill_lines(&report()),
            [
                "skill://conformance/report-writing/SKILL.md",
                "name: report-writing",
                "description: Write reports",
                "license: MIT",
                "metadata: {\"version\":\"1.0\"}",
                "files: 2, 322 bytes",
                "  SKILL.md  300 bytes  sha256:aa",
                "  references/style.md  22 bytes  sha256:bb",
            ]
        );
        let skill = report();
        assert_eq!(
            skill_path(&skill, "skill://elsewhere/x.md"),
            "skill://elsewhere/x.md"
        );
    }

    #[test]
    fn directory_entries_say_which_are_directories() {
        let entry = |value: Value| -> Resource { serde_json::from_value(value).expect("an entry") };
        assert_eq!(
            directory_line(&entry(json!({"uri": "skill://a/refs", "name": "refs",
                "mimeType": "inode/directory"}))),
            "skill://a/refs  refs, directory"
        );
        assert_eq!(
            directory_line(&entry(
                json!({"uri": "skill://a/SKILL.md", "name": "SKILL.md",
                "mimeType": "text/markdown", "size": 12})
            )),
            "skill://a/SKILL.md  SKILL.md, text/markdown, 12 bytes"
        );
    }
}

#[cfg(test)]
mod type_label_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn type_lists_read_as_a_person_would() {
        let root = json!({});
        let label = |schema: Value, required| type_label(&root, &schema, required);
        assert_eq!(label(json!({"type": "integer"}), true), "integer");
        assert_eq!(
            label(json!({"type": ["integer", "null"]}), false),
            "integer"
        );
        assert_eq!(
            label(json!({"type": ["integer", "null"]}), true),
            "integer | null"
        );
        assert_eq!(
            label(json!({"type": ["string", "integer"]}), false),
            "string | integer"
        );
        assert_eq!(label(json!({"type": ["null"]}), false), "any");
        assert_eq!(label(json!({}), true), "any");
        assert_eq!(
            label(json!({"type": "array", "items": {"type": "string"}}), true),
            "array of string"
        );
        assert_eq!(label(json!({"enum": ["a", "b"]}), true), "string");
        assert_eq!(
            label(
                json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
                false
            ),
            "string"
        );
    }

    #[test]
    fn local_references_are_resolved() {
        let root = json!({
            "$defs": {
                "address": {"type": "object", "properties": {"city": {}, "street": {}}},
                "mode": {"type": "string", "enum": ["fast", "slow"], "description": "How"},
                "again": {"$ref": "#/$defs/mode"},
                "loop": {"$ref": "#/$defs/loop"},
            },
        });
        let label = |schema: Value| type_label(&root, &schema, true);
        assert_eq!(
            label(json!({"$ref": "#/$defs/address"})),
            "object {city, street}"
        );
        assert_eq!(
            label(json!({"allOf": [{"$ref": "#/$defs/again"}]})),
            "string"
        );
        assert_eq!(
            label(json!({"$ref": "#/$defs/loop"})),
            "any",
            "a cycle ends"
        );
        assert_eq!(label(json!({"$ref": "#/$defs/none"})), "any");
        assert_eq!(
            argument_line(&root, "mode", &json!({"$ref": "#/$defs/mode"}), false),
            "mode: string, optional, one of \"fast\", \"slow\" — How"
        );
        assert_eq!(
            argument_line(
                &root,
                "mode",
                &json!({"allOf": [{"$ref": "#/$defs/mode"}], "description": "Which", "default": "fast"}),
                true
            ),
            "mode: string, required, default \"fast\", one of \"fast\", \"slow\" — Which"
        );
    }

    #[test]
    fn argument_lines_say_everything_the_schema_says() {
        let root = json!({});
        assert_eq!(
            argument_line(
                &root,
                "seconds",
                &json!({"type": "number", "default": 0.0, "minimum": 0, "maximum": 86400,
                    "description": "How long to sleep, in seconds"}),
                false
            ),
            "seconds: number, optional, default 0, minimum 0, maximum 86400 — How long to \
             sleep, in seconds"
        );
        assert_eq!(
            argument_line(
                &root,
                "name",
                &json!({"type": "string", "minLength": 1, "pattern": "^[a-z]+$"}),
                true
            ),
            "name: string, required, minLength 1, pattern ^[a-z]+$"
        );
        assert_eq!(
            argument_line(
                &root,
                "level",
                &json!({"oneOf": [{"const": "low"}, {"const": "high"}, {"type": "null"}]}),
                false
            ),
            "level: string, optional, one of \"low\", \"high\""
        );
    }

    #[test]
    fn task_support_is_shown_when_listed() {
        let tool = |execution: Option<Value>| ToolEntry {
            annotations: None,
            description: String::new(),
            execution: execution.and_then(|e| e.as_object().cloned()),
            input_schema: tasks_core::JsonObject::new(),
            name: "t".into(),
            output_schema: None,
            title: None,
        };
        assert_eq!(
            task_support(&tool(Some(json!({"taskSupport": "required"})))).as_deref(),
            Some("task: required")
        );
        assert_eq!(
            task_support(&tool(Some(json!({"taskSupport": "forbidden"})))).as_deref(),
            Some("never a task")
        );
        assert_eq!(task_support(&tool(None)), None);
    }
}
