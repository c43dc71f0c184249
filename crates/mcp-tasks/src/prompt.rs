//! [`Terminal`]: the input handler of the terminal client. It answers from `--answer` first;
//! otherwise, when stdin is a terminal, it asks at the prompt (a form generated from
//! `requestedSchema`; Esc declines, Ctrl-C cancels); otherwise it fails with a message naming
//! the `--answer` that would answer it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use inquire::validator::Validation;
use inquire::{Confirm, InquireError, MultiSelect, Select, Text};
use serde_json::{json, Value};
use tasks_client::{ClientError, Elicitation, ElicitationMode, InputHandler};
use tasks_core::input::{ClientCapability, ElicitAnswer, InputRequest, Role, Root, SamplingAnswer};
use tasks_core::JsonObject;

use crate::form::{fields, unanswerable, Field, FieldKind};
use crate::status::Status;
use crate::text::clean;

/// How many times a form that does not fit its schema is asked again before it is cancelled.
const FORM_ATTEMPTS: usize = 3;

/// Answers input for the terminal client.
#[derive(Debug, Clone)]
pub(crate) struct Terminal {
    pub(crate) interactive: bool,
    pub(crate) answers: BTreeMap<String, Value>,
    pub(crate) roots: Vec<Root>,
    pub(crate) status: Status,
    /// The help line under every question, e.g. "Esc declines · Ctrl-C cancels the task".
    pub(crate) keys: &'static str,
    /// Set when the user pressed Ctrl-C at a prompt: the caller cancels the task (or stops
    /// watching).
    pub(crate) interrupted: Arc<AtomicBool>,
}

/// How a prompt ended without an answer.
enum Stop {
    Decline,
    Interrupt,
    Failed(String),
}

impl From<InquireError> for Stop {
    fn from(error: InquireError) -> Self {
        match error {
            InquireError::OperationCanceled => Stop::Decline,
            InquireError::OperationInterrupted => Stop::Interrupt,
            other => Stop::Failed(other.to_string()),
        }
    }
}

/// Makes a prompt left with Esc show `<declined>`, what it does (inquire's default says
/// `<canceled>`, which reads like cancelling the task).
pub(crate) fn mark_declines() {
    let config = inquire::ui::RenderConfig::default();
    let declined = inquire::ui::Styled::new("<declined>")
        .with_style_sheet(config.canceled_prompt_indicator.style);
    inquire::set_global_render_config(config.with_canceled_prompt_indicator(declined));
}

impl Terminal {
    /// The error of input asked without a terminal: it names the `--answer` that answers
    /// it, with an example of the JSON (`example`), and what that JSON is (`shape`).
    fn not_interactive(&self, key: &str, what: &str, example: &Value, shape: &str) -> ClientError {
        ClientError::Input(format!(
            "the server asks for input under key {:?} ({what}), but stdin is not a terminal; \
             answer it with --answer {} ({shape})",
            clean(key),
            answer_hint(key, example)
        ))
    }

    /// Runs a blocking prompt off the async runtime, with the status line hidden.
    async fn ask<T: Send + 'static>(
        &self,
        prompt: impl FnOnce() -> Result<T, Stop> + Send + 'static,
    ) -> Result<Option<T>, ClientError> {
        let status = self.status.clone();
        let asked = tokio::task::spawn_blocking(move || status.suspend(prompt))
            .await
            .map_err(|_| ClientError::Input("the prompt stopped".into()))?;
        match asked {
            Ok(answer) => Ok(Some(answer)),
            Err(Stop::Decline) => Ok(None),
            Err(Stop::Interrupt) => {
                self.interrupted.store(true, Ordering::SeqCst);
                Err(ClientError::Input("interrupted at the prompt".into()))
            }
            Err(Stop::Failed(reason)) => Err(ClientError::Input(reason)),
        }
    }
}

/// The `--answer` argument for `key` answering `example`, safe to paste into a shell.
fn answer_hint(key: &str, example: &Value) -> String {
    clean(&shell_words::quote(&format!("{key}={example}"))).into_owned()
}

/// An answer that fits a form (`{"confirm":true}`): each field it can ask (the required ones,
/// or all when none is), with its default or a value of its kind (`"…"` for text, the first
/// choice).
fn example_answer(requested_schema: &JsonObject) -> Value {
    let form = fields(requested_schema);
    let any_required = form.iter().any(|f| f.required);
    let mut example = JsonObject::new();
    for field in form.iter().filter(|f| f.required || !any_required) {
        let value = match (&field.default, &field.kind) {
            (_, FieldKind::Unsupported(_)) => continue,
            (Some(default), _) => default.clone(),
            (None, FieldKind::Text) => json!("…"),
            (None, FieldKind::Integer) => json!(1),
            (None, FieldKind::Number) => json!(1.5),
            (None, FieldKind::Boolean) => json!(true),
            (None, FieldKind::Choice(choices)) => {
                choices.first().map_or(Value::Null, |c| json!(c.value))
            }
            (None, FieldKind::Choices(choices)) => {
                json!(choices
                    .first()
                    .map(|c| c.value.clone())
                    .into_iter()
                    .collect::<Vec<_>>())
            }
        };
        example.insert(field.name.clone(), value);
    }
    Value::Object(example)
}

/// The answer of a sampling request, as `--answer` takes it.
fn example_sampling() -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": "…"}, "model": "…"})
}

/// An `--answer` value for an elicitation under `key`: `{"action": …, "content": …}`, or the
/// content of an accept. A value that is neither is a usage error (exit code 2, as an
/// `--answer` that is not JSON).
fn scripted_elicit(key: &str, answer: &Value) -> Result<ElicitAnswer, ClientError> {
    let usage = |message: String| {
        ClientError::InvalidArgument(format!("--answer {}: {message}", clean(key)))
    };
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => Ok(ElicitAnswer::Accept(
            answer
                .get("content")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        )),
        Some("decline") => Ok(ElicitAnswer::Decline),
        Some("cancel") => Ok(ElicitAnswer::Cancel),
        Some(other) => Err(usage(format!(
            "action {:?}: use accept, decline or cancel",
            clean(other)
        ))),
        None => answer
            .as_object()
            .cloned()
            .map(ElicitAnswer::Accept)
            .ok_or_else(|| {
                usage(format!(
                    "the answer to a form is a JSON object of its fields, not {}",
                    clean(&answer.to_string())
                ))
            }),
    }
}

/// The fields of a form, as `name: kind (required)`, for messages.
fn describe_form(requested_schema: &JsonObject) -> String {
    let described: Vec<String> = fields(requested_schema)
        .iter()
        .map(|field| {
            let kind = match &field.kind {
                FieldKind::Text => "text".to_owned(),
                FieldKind::Integer => "integer".to_owned(),
                FieldKind::Number => "number".to_owned(),
                FieldKind::Boolean => "true/false".to_owned(),
                FieldKind::Choice(choices) | FieldKind::Choices(choices) => {
                    let values: Vec<String> = choices
                        .iter()
                        .map(|c| clean(&c.value).into_owned())
                        .collect();
                    format!("one of {}", values.join("|"))
                }
                FieldKind::Unsupported(reason) => (*reason).to_owned(),
            };
            let required = if field.required { ", required" } else { "" };
            format!("{}: {kind}{required}", clean(&field.name))
        })
        .collect();
    if described.is_empty() {
        "no fields".into()
    } else {
        format!("{{{}}}", described.join("; "))
    }
}

/// Asks one field; `None` leaves an optional field out.
fn ask_field(field: &Field, keys: &str) -> Result<Option<Value>, Stop> {
    let label = if field.required {
        field.label.clone()
    } else {
        format!("{} (optional, Enter skips)", field.label)
    };
    let help = match &field.help {
        Some(help) => format!("{help} · {keys}"),
        None => keys.to_owned(),
    };
    let default_text = field.default.as_ref().map(|d| match d {
        Value::String(text) => clean(text).into_owned(),
        other => clean(&other.to_string()).into_owned(),
    });
    match &field.kind {
        FieldKind::Boolean if field.required => {
            let mut prompt = Confirm::new(&field.label)
                .with_help_message(&help)
                .with_placeholder("y/n");
            if let Some(default) = field.default.as_ref().and_then(Value::as_bool) {
                prompt = prompt.with_default(default);
            }
            Ok(Some(Value::Bool(prompt.prompt()?)))
        }
        FieldKind::Boolean => {
            let mut options = vec!["yes", "no", "(skip)"];
            if field.default.as_ref().and_then(Value::as_bool) == Some(false) {
                options.swap(0, 1);
            }
            let chosen = Select::new(&format!("{} (optional)", field.label), options)
                .with_help_message(&help)
                .prompt()?;
            Ok(match chosen {
                "yes" => Some(Value::Bool(true)),
                "no" => Some(Value::Bool(false)),
                _ => None,
            })
        }
        FieldKind::Unsupported(_) => Ok(None),
        FieldKind::Choice(choices) => {
            let mut options = choices.clone();
            if !field.required {
                options.push(crate::form::Choice {
                    value: String::new(),
                    title: "(none)".into(),
                });
            }
            let chosen = Select::new(&field.label, options)
                .with_help_message(&help)
                .prompt()?;
            Ok((!chosen.value.is_empty()).then_some(Value::String(chosen.value)))
        }
        FieldKind::Choices(choices) => {
            let chosen = MultiSelect::new(&field.label, choices.clone())
                .with_help_message(&help)
                .prompt()?;
            Ok(Some(json!(chosen
                .into_iter()
                .map(|c| c.value)
                .collect::<Vec<_>>())))
        }
        FieldKind::Text | FieldKind::Integer | FieldKind::Number => {
            let kind = field.kind.clone();
            let required = field.required;
            let validator = move |text: &str| {
                let verdict = match (text.trim().is_empty(), &kind) {
                    (true, _) if required => Validation::Invalid("An answer is required".into()),
                    (true, _) | (false, FieldKind::Text) => Validation::Valid,
                    (false, FieldKind::Integer) if text.trim().parse::<i64>().is_err() => {
                        Validation::Invalid("Enter a whole number".into())
                    }
                    (false, FieldKind::Number) if text.trim().parse::<f64>().is_err() => {
                        Validation::Invalid("Enter a number".into())
                    }
                    _ => Validation::Valid,
                };
                Ok(verdict)
            };
            let mut prompt = Text::new(&label)
                .with_help_message(&help)
                .with_validator(validator);
            if let Some(default) = &default_text {
                prompt = prompt.with_default(default);
            }
            let text = prompt.prompt()?;
            let trimmed = text.trim();
            if trimmed.is_empty() {
                return Ok(None);
            }
            Ok(Some(match field.kind {
                FieldKind::Integer => trimmed.parse::<i64>().map(Value::from).unwrap_or_default(),
                FieldKind::Number => trimmed.parse::<f64>().map(Value::from).unwrap_or_default(),
                _ => Value::String(text),
            }))
        }
    }
}

/// Asks an elicitation at the prompt until the answer fits its schema (at most
/// [`FORM_ATTEMPTS`] times); a form that cannot be asked here is cancelled, saying why.
fn ask_elicitation(request: &Elicitation, keys: &str) -> Result<ElicitAnswer, Stop> {
    let message = clean(&request.message);
    match &request.mode {
        ElicitationMode::Url { url, .. } => {
            crate::say!("The server asks: {message}");
            crate::say!("Open {}", clean(url));
            let done = Confirm::new("Done at that page?")
                .with_help_message(keys)
                .with_placeholder("y/n")
                .prompt()?;
            Ok(if done {
                ElicitAnswer::Accept(JsonObject::new())
            } else {
                ElicitAnswer::Decline
            })
        }
        ElicitationMode::Form { requested_schema } => {
            let check = InputRequest::elicit_form(
                &request.message,
                Value::Object(requested_schema.clone()),
            );
            let mut form = fields(requested_schema);
            if let Some(reason) = unanswerable(requested_schema, &form) {
                crate::say!("The server asks: {message}");
                crate::say!("This form cannot be asked here ({reason}); cancelling it.");
                return Ok(ElicitAnswer::Cancel);
            }
            match form.as_mut_slice() {
                // One untitled question: the message is the question.
                [only] if only.label == only.name => only.label = message.into_owned(),
                _ => crate::say!("The server asks: {message}"),
            }
            for _ in 0..FORM_ATTEMPTS {
                let mut content = JsonObject::new();
                for field in &form {
                    if let Some(value) = ask_field(field, keys)? {
                        content.insert(field.name.clone(), value);
                    }
                }
                let answer = json!({"action": "accept", "content": content});
                match check.check_response(&answer) {
                    Ok(_) => return Ok(ElicitAnswer::Accept(content)),
                    Err(error) => crate::say!("That answer does not fit the form ({error})."),
                }
            }
            crate::say!("No answer fitted the form; cancelling it.");
            Ok(ElicitAnswer::Cancel)
        }
        _ => Err(Stop::Failed(
            "an elicitation mode this client does not know".into(),
        )),
    }
}

#[async_trait]
impl InputHandler for Terminal {
    fn capabilities(&self) -> Vec<ClientCapability> {
        let mut capabilities = vec![
            ClientCapability::ElicitationForm,
            ClientCapability::ElicitationUrl,
            ClientCapability::Sampling,
        ];
        if !self.roots.is_empty() {
            capabilities.push(ClientCapability::Roots);
        }
        capabilities
    }

    async fn elicit(&self, key: &str, request: Elicitation) -> Result<ElicitAnswer, ClientError> {
        if let Some(answer) = self.answers.get(key) {
            let answer =
                scripted_elicit(key, answer).map_err(|error| match (&error, &request.mode) {
                    (
                        ClientError::InvalidArgument(message),
                        ElicitationMode::Form { requested_schema },
                    ) => ClientError::InvalidArgument(format!(
                        "{message} (the form asks for {}: e.g. {})",
                        describe_form(requested_schema),
                        example_answer(requested_schema)
                    )),
                    _ => error,
                })?;
            if let (ElicitAnswer::Accept(content), ElicitationMode::Form { requested_schema }) =
                (&answer, &request.mode)
            {
                let check = InputRequest::elicit_form(
                    &request.message,
                    Value::Object(requested_schema.clone()),
                );
                let given = json!({"action": "accept", "content": content});
                if let Err(error) = check.check_response(&given) {
                    return Err(ClientError::InvalidArgument(format!(
                        "--answer {}: {error}; the form asks for {}: e.g. {}",
                        clean(key),
                        describe_form(requested_schema),
                        example_answer(requested_schema)
                    )));
                }
            }
            return Ok(answer);
        }
        if !self.interactive {
            let (example, shape) = match &request.mode {
                ElicitationMode::Form { requested_schema } => (
                    example_answer(requested_schema),
                    format!(
                        "the form asks for {}; {{\"action\":\"decline\"}} declines",
                        describe_form(requested_schema)
                    ),
                ),
                _ => (
                    json!({"action": "accept"}),
                    "once done at the page it opens; {\"action\":\"decline\"} declines".into(),
                ),
            };
            return Err(self.not_interactive(key, &clean(&request.message), &example, &shape));
        }
        let keys = self.keys;
        Ok(self
            .ask(move || ask_elicitation(&request, keys))
            .await?
            .unwrap_or(ElicitAnswer::Decline))
    }

    async fn sample(&self, key: &str, params: JsonObject) -> Result<SamplingAnswer, ClientError> {
        if let Some(answer) = self.answers.get(key) {
            return serde_json::from_value(answer.clone()).map_err(|_| {
                ClientError::InvalidArgument(format!(
                    "--answer {}: a sampling answer is {}",
                    clean(key),
                    example_sampling()
                ))
            });
        }
        if !self.interactive {
            return Err(self.not_interactive(
                key,
                "a reply from your model",
                &example_sampling(),
                "the reply's text, as your model would give it",
            ));
        }
        let prompt = clean(&sampling_prompt(&params)).into_owned();
        let keys = self.keys;
        let reply = self
            .ask(move || {
                crate::say!("The server asks your model to reply to:\n{prompt}");
                Ok(Text::new("Your reply, as the model:")
                    .with_help_message(keys)
                    .prompt()?)
            })
            .await?
            .ok_or_else(|| ClientError::Input("the sampling request was declined".into()))?;
        Ok(SamplingAnswer {
            role: Role::Assistant,
            content: json!({"type": "text", "text": reply}),
            model: "human-at-mcp-tasks".into(),
            stop_reason: Some("endTurn".into()),
        })
    }

    async fn list_roots(&self, _key: &str) -> Result<Vec<Root>, ClientError> {
        Ok(self.roots.clone())
    }
}

/// The text of a sampling request's messages, one per line, with the system prompt first.
fn sampling_prompt(params: &JsonObject) -> String {
    let mut lines = Vec::new();
    if let Some(system) = params.get("systemPrompt").and_then(Value::as_str) {
        lines.push(format!("  (system) {system}"));
    }
    for message in params
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("user");
        let text = message
            .pointer("/content/text")
            .and_then(Value::as_str)
            .unwrap_or("[non-text content]");
        lines.push(format!("  ({role}) {text}"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::{answer_hint, example_answer};
    use serde_json::{json, Value};

    #[test]
    fn the_answer_hint_is_safe_to_paste() {
        let example = json!({"confirm": true});
        assert_eq!(
            answer_hint("confirm-delete", &example),
            r#"'confirm-delete={"confirm":true}'"#
        );
        assert_eq!(
            answer_hint("x'$(touch /tmp/p)'", &example),
            r#"'x'\''$(touch /tmp/p)'\''={"confirm":true}'"#
        );
    }

    #[test]
    fn the_example_answer_fits_the_form() {
        let schema = |value: Value| value.as_object().cloned().expect("an object");
        assert_eq!(
            example_answer(&schema(json!({
                "type": "object",
                "properties": {"confirm": {"type": "boolean"}, "note": {"type": "string"}},
                "required": ["confirm"]
            }))),
            json!({"confirm": true})
        );
        assert_eq!(
            example_answer(&schema(json!({
                "type": "object",
                "properties": {
                    "context": {"type": "string"},
                    "count": {"type": "integer", "default": 3},
                    "colour": {"type": "string", "enum": ["red", "blue"]}
                }
            }))),
            json!({"context": "…", "count": 3, "colour": "red"})
        );
    }
}
