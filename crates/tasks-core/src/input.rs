//! Client input: the requests a server may surface in `inputRequests`, the client capability
//! each one needs, and the typed, validated answers.
//!
//! Sources: MCP 2026-07-28 schema (`InputRequest`, `InputResponse`, `ElicitResult`,
//! `CreateMessageResult`, `ListRootsResult`, `ClientCapabilities`); the MRTR page
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/utilities/mrtr>, server
//! requirement 6: only request types the client declared on this request) and the elicitation
//! page (`elicitation: {}` means form mode only; URL mode needs `elicitation.url`).
//!
//! ## Rules
//!
//! | request | needs (declared on the request that started the call) |
//! |---|---|
//! | `elicitation/create`, form mode (`mode` absent or `"form"`) | `elicitation: {}` or `elicitation.form` |
//! | `elicitation/create`, URL mode | `elicitation.url` |
//! | `sampling/createMessage` | `sampling`; plus `sampling.tools` with `tools`/`toolChoice`, `sampling.context` with `includeContext` other than `"none"` |
//! | `roots/list` | `roots` |
//!
//! An answer is checked against the request it answers ([`InputRequest::check_response`]):
//! an `ElicitResult` is consent only when its `action` is `"accept"`; `"decline"` and `"cancel"`
//! carry nothing, whatever else they hold (their `content` is dropped); any other `action`, or
//! `accept` content that does not match the `requestedSchema`, is malformed. A malformed answer
//! is a client error (-32602) and is never applied.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::McpError;
use crate::protocol::TASKS_EXTENSION;
use crate::JsonObject;

/// The method of an elicitation request.
pub const METHOD_ELICIT: &str = "elicitation/create";
/// The method of a sampling request.
pub const METHOD_SAMPLE: &str = "sampling/createMessage";
/// The method of a roots request.
pub const METHOD_LIST_ROOTS: &str = "roots/list";

/// A bare server-to-client request surfaced in `inputRequests`: `{"method", "params"?}` with no
/// `jsonrpc` and no `id` (schema `InputRequest`), e.g. an `elicitation/create`.
///
/// Build one with [`InputRequest::elicit_form`], [`InputRequest::elicit_url`],
/// [`InputRequest::sample`] or [`InputRequest::list_roots`]; [`InputRequest::kind`] checks one
/// built by hand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// The request method, e.g. `"elicitation/create"`.
    pub method: String,
    /// The request params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<JsonObject>,
}

/// A client capability an input request can need (schema `ClientCapabilities`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClientCapability {
    /// Form-mode elicitation: `elicitation: {}` or `elicitation.form`.
    ElicitationForm,
    /// URL-mode elicitation: `elicitation.url`.
    ElicitationUrl,
    /// Sampling: `sampling`.
    Sampling,
    /// Sampling with `tools`/`toolChoice`: `sampling.tools`.
    SamplingTools,
    /// Sampling with `includeContext` other than `"none"`: `sampling.context`.
    SamplingContext,
    /// Listing roots: `roots`.
    Roots,
    /// The Tasks extension: `extensions["io.modelcontextprotocol/tasks"]`.
    Tasks,
}

fn object_at<'a>(object: &'a JsonObject, key: &str) -> Option<&'a JsonObject> {
    object.get(key).and_then(Value::as_object)
}

impl ClientCapability {
    /// The path of this capability inside a `ClientCapabilities` object.
    fn path(self) -> &'static [&'static str] {
        match self {
            ClientCapability::ElicitationForm => &["elicitation", "form"],
            ClientCapability::ElicitationUrl => &["elicitation", "url"],
            ClientCapability::Sampling => &["sampling"],
            ClientCapability::SamplingTools => &["sampling", "tools"],
            ClientCapability::SamplingContext => &["sampling", "context"],
            ClientCapability::Roots => &["roots"],
            ClientCapability::Tasks => &["extensions", TASKS_EXTENSION],
        }
    }

    /// Whether `declared` (a request's `clientCapabilities`) declares this capability. Every
    /// level must be an object (`false` or `null` declare nothing); `elicitation: {}` declares
    /// form mode.
    pub fn is_declared(self, declared: &JsonObject) -> bool {
        if self == ClientCapability::ElicitationForm
            && object_at(declared, "elicitation").is_some_and(JsonObject::is_empty)
        {
            return true;
        }
        let mut level = declared;
        for key in self.path() {
            match object_at(level, key) {
                Some(next) => level = next,
                None => return false,
            }
        }
        true
    }

    fn add_to(self, required: &mut JsonObject) {
        let mut level = required;
        for key in self.path() {
            let entry = level
                .entry((*key).to_owned())
                .or_insert_with(|| Value::Object(JsonObject::new()));
            if !entry.is_object() {
                *entry = Value::Object(JsonObject::new());
            }
            let Value::Object(next) = entry else {
                return;
            };
            level = next;
        }
    }
}

/// A `ClientCapabilities` object declaring exactly `capabilities`, e.g.
/// `{"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}}`: what a
/// client sends in `_meta["io.modelcontextprotocol/clientCapabilities"]`.
///
/// ```
/// use tasks_core::input::{declare, ClientCapability};
/// let declared = declare([ClientCapability::ElicitationForm, ClientCapability::Roots]);
/// assert!(ClientCapability::ElicitationForm.is_declared(&declared));
/// assert!(!ClientCapability::Sampling.is_declared(&declared));
/// ```
pub fn declare(capabilities: impl IntoIterator<Item = ClientCapability>) -> JsonObject {
    let mut declared = JsonObject::new();
    for capability in capabilities {
        capability.add_to(&mut declared);
    }
    declared
}

/// The -32021 error for `needs` that `declared` lacks, or `None` when all are declared.
///
/// `data.requiredCapabilities` names every missing capability in one `ClientCapabilities`
/// object, e.g. `{"elicitation": {"form": {}}, "sampling": {}}`.
pub fn missing_capabilities(
    declared: &JsonObject,
    needs: impl IntoIterator<Item = ClientCapability>,
) -> Option<McpError> {
    let mut required = JsonObject::new();
    for need in needs {
        if !need.is_declared(declared) {
            need.add_to(&mut required);
        }
    }
    (!required.is_empty()).then_some(McpError::MissingCapability(Value::Object(required)))
}

/// What kind of input a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `elicitation/create` in form mode: the answer's content must match `requestedSchema`.
    ElicitForm,
    /// `elicitation/create` in URL mode: the user acts out of band; an accept carries nothing.
    ElicitUrl,
    /// `sampling/createMessage`.
    Sampling,
    /// `roots/list`.
    Roots,
}

/// An input request this server cannot surface: a programming error of the tool, reported to
/// clients as -32603 with this fixed message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MalformedRequest {
    /// The method is none of `elicitation/create`, `sampling/createMessage`, `roots/list`.
    #[error("input request method is not one a client can answer")]
    UnknownMethod,
    /// An elicitation lacks `message`, has an unknown `mode`, a URL request lacks `url` or
    /// `elicitationId`, or a form's `requestedSchema` is not a JSON Schema object.
    #[error("elicitation request is malformed")]
    Elicitation,
    /// A sampling request lacks `messages` or `maxTokens`.
    #[error("sampling request is malformed")]
    Sampling,
}

/// Why an answer was refused; the fixed text is part of the -32602 message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidResponse {
    /// `action` is missing or none of `accept`, `decline`, `cancel`.
    #[error("action must be accept, decline or cancel")]
    Action,
    /// An accepted form answer without an object `content`, or with a value that is not a
    /// string, number, boolean or array of strings.
    #[error("accepted content must be an object of primitive values")]
    Content,
    /// An accepted form answer whose content does not match the `requestedSchema`.
    #[error("content does not match the requested schema")]
    Schema,
    /// Not a `CreateMessageResult` (`role`, `content` blocks with a `type`, a text block
    /// with a string `text`, `model`).
    #[error("not a sampling result")]
    Sampling,
    /// Not a `ListRootsResult` (`roots`: objects with a `file://` `uri`; the schema: "This
    /// *must* start with `file://` for now").
    #[error("not a roots result")]
    Roots,
}

impl InvalidResponse {
    /// The -32602 error for an answer to `key`: `Invalid input response for <key>: <reason>`.
    /// `key` is one the server chose (only outstanding keys are checked), so nothing the client
    /// made up is echoed.
    pub fn to_error(self, key: &str) -> McpError {
        McpError::invalid_params(format!("Invalid input response for {key}: {self}"))
    }
}

fn request_of(method: &str, params: Value) -> InputRequest {
    InputRequest {
        method: method.to_owned(),
        params: match params {
            Value::Object(params) => Some(params),
            _ => None,
        },
    }
}

impl InputRequest {
    /// A form-mode `elicitation/create`: `{"mode": "form", "message", "requestedSchema"}`.
    /// `requested_schema` is the restricted JSON Schema of the form (a flat object of primitive
    /// properties); an accepted answer must match it.
    pub fn elicit_form(message: impl Into<String>, requested_schema: Value) -> Self {
        request_of(
            METHOD_ELICIT,
            json!({"mode": "form", "message": message.into(), "requestedSchema": requested_schema}),
        )
    }

    /// A URL-mode `elicitation/create`: `{"mode": "url", "message", "url", "elicitationId"}`.
    /// The user completes it out of band; an accept only says they went there.
    pub fn elicit_url(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        request_of(
            METHOD_ELICIT,
            json!({"mode": "url", "message": message.into(), "url": url.into(),
                   "elicitationId": elicitation_id.into()}),
        )
    }

    /// A `sampling/createMessage` built by a [`SamplingRequest`].
    pub fn sample(request: SamplingRequest) -> Self {
        InputRequest {
            method: METHOD_SAMPLE.to_owned(),
            params: Some(request.params),
        }
    }

    /// A `roots/list` (no params).
    pub fn list_roots() -> Self {
        request_of(METHOD_LIST_ROOTS, json!({}))
    }

    fn param(&self, name: &str) -> Option<&Value> {
        self.params.as_ref().and_then(|p| p.get(name))
    }

    /// What this request asks for.
    ///
    /// # Errors
    /// [`MalformedRequest`] for a request no client can answer as built.
    pub fn kind(&self) -> Result<InputKind, MalformedRequest> {
        let kind = self.classify()?;
        if kind == InputKind::ElicitForm {
            let schema = self.param("requestedSchema");
            if schema.is_none_or(|s| jsonschema::validator_for(s).is_err()) {
                return Err(MalformedRequest::Elicitation);
            }
        }
        Ok(kind)
    }

    /// [`InputRequest::kind`] without compiling the form's schema.
    fn classify(&self) -> Result<InputKind, MalformedRequest> {
        match self.method.as_str() {
            METHOD_ELICIT => {
                if !self.param("message").is_some_and(Value::is_string) {
                    return Err(MalformedRequest::Elicitation);
                }
                match self.param("mode").map(Value::as_str) {
                    None | Some(Some("form")) => {
                        if !self.param("requestedSchema").is_some_and(Value::is_object) {
                            return Err(MalformedRequest::Elicitation);
                        }
                        Ok(InputKind::ElicitForm)
                    }
                    Some(Some("url"))
                        if self.param("url").is_some_and(Value::is_string)
                            && self.param("elicitationId").is_some_and(Value::is_string) =>
                    {
                        Ok(InputKind::ElicitUrl)
                    }
                    _ => Err(MalformedRequest::Elicitation),
                }
            }
            METHOD_SAMPLE => {
                let messages = self.param("messages").is_some_and(Value::is_array);
                let max_tokens = self.param("maxTokens").is_some_and(Value::is_u64);
                if messages && max_tokens {
                    Ok(InputKind::Sampling)
                } else {
                    Err(MalformedRequest::Sampling)
                }
            }
            METHOD_LIST_ROOTS => Ok(InputKind::Roots),
            _ => Err(MalformedRequest::UnknownMethod),
        }
    }

    /// The client capabilities this request needs (the module table).
    ///
    /// # Errors
    /// [`MalformedRequest`] as for [`InputRequest::kind`].
    pub fn needs(&self) -> Result<Vec<ClientCapability>, MalformedRequest> {
        Ok(match self.kind()? {
            InputKind::ElicitForm => vec![ClientCapability::ElicitationForm],
            InputKind::ElicitUrl => vec![ClientCapability::ElicitationUrl],
            InputKind::Roots => vec![ClientCapability::Roots],
            InputKind::Sampling => {
                let mut needs = vec![ClientCapability::Sampling];
                if self.param("tools").is_some() || self.param("toolChoice").is_some() {
                    needs.push(ClientCapability::SamplingTools);
                }
                if self
                    .param("includeContext")
                    .is_some_and(|c| c.as_str() != Some("none"))
                {
                    needs.push(ClientCapability::SamplingContext);
                }
                needs
            }
        })
    }

    /// Checks a client's answer to this request and returns it typed.
    ///
    /// # Errors
    /// [`InvalidResponse`] when the answer does not fit the request (the module rules), and
    /// [`InvalidResponse::Action`] for an answer to a request that is itself malformed.
    pub fn check_response(&self, response: &Value) -> Result<InputResponse, InvalidResponse> {
        let kind = self.classify().map_err(|_| InvalidResponse::Action)?;
        match kind {
            InputKind::ElicitForm | InputKind::ElicitUrl => {
                let action = response.get("action").and_then(Value::as_str);
                let answer = match action {
                    Some("decline") => ElicitAnswer::Decline,
                    Some("cancel") => ElicitAnswer::Cancel,
                    Some("accept") if kind == InputKind::ElicitUrl => {
                        ElicitAnswer::Accept(JsonObject::new())
                    }
                    Some("accept") => ElicitAnswer::Accept(self.check_content(response)?),
                    _ => return Err(InvalidResponse::Action),
                };
                Ok(InputResponse::Elicit(answer))
            }
            InputKind::Sampling => {
                let answer =
                    SamplingAnswer::deserialize(response).map_err(|_| InvalidResponse::Sampling)?;
                if !answer.content_is_well_formed() {
                    return Err(InvalidResponse::Sampling);
                }
                Ok(InputResponse::Sampling(answer))
            }
            InputKind::Roots => {
                let roots = response
                    .get("roots")
                    .cloned()
                    .and_then(|roots| Vec::<Root>::deserialize(roots).ok())
                    .filter(|roots| roots.iter().all(|r| r.uri.starts_with("file://")))
                    .ok_or(InvalidResponse::Roots)?;
                Ok(InputResponse::Roots(roots))
            }
        }
    }

    fn check_content(&self, response: &Value) -> Result<JsonObject, InvalidResponse> {
        let content = response
            .get("content")
            .and_then(Value::as_object)
            .ok_or(InvalidResponse::Content)?;
        let primitive = |value: &Value| match value {
            Value::String(_) | Value::Number(_) | Value::Bool(_) => true,
            Value::Array(items) => items.iter().all(Value::is_string),
            _ => false,
        };
        if !content.values().all(primitive) {
            return Err(InvalidResponse::Content);
        }
        let schema = self
            .param("requestedSchema")
            .ok_or(InvalidResponse::Schema)?;
        let validator = jsonschema::validator_for(schema).map_err(|_| InvalidResponse::Schema)?;
        let instance = Value::Object(content.clone());
        if !validator.is_valid(&instance) {
            return Err(InvalidResponse::Schema);
        }
        Ok(content.clone())
    }
}

/// A `sampling/createMessage` request under construction.
///
/// ```
/// use tasks_core::input::{InputKind, InputRequest, SamplingRequest};
/// let request = InputRequest::sample(SamplingRequest::user_text("Say hello", 100).system_prompt("Be brief"));
/// assert_eq!(request.kind(), Ok(InputKind::Sampling));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    params: JsonObject,
}

impl SamplingRequest {
    /// One user text message, at most `max_tokens` tokens sampled.
    pub fn user_text(prompt: impl Into<String>, max_tokens: u32) -> Self {
        SamplingRequest::new(max_tokens).message(Role::User, prompt)
    }

    /// No messages yet, at most `max_tokens` tokens sampled.
    pub fn new(max_tokens: u32) -> Self {
        let mut params = JsonObject::new();
        params.insert("messages".into(), Value::Array(Vec::new()));
        params.insert("maxTokens".into(), Value::from(max_tokens));
        SamplingRequest { params }
    }

    /// Appends a text message.
    pub fn message(mut self, role: Role, text: impl Into<String>) -> Self {
        if let Some(Value::Array(messages)) = self.params.get_mut("messages") {
            messages.push(json!({"role": role, "content": {"type": "text", "text": text.into()}}));
        }
        self
    }

    /// Sets `systemPrompt`.
    pub fn system_prompt(self, prompt: impl Into<String>) -> Self {
        self.param("systemPrompt", Value::from(prompt.into()))
    }

    /// Sets any other `CreateMessageRequestParams` member (`temperature`, `modelPreferences`,
    /// `tools`, …). `tools`/`toolChoice` make the request need `sampling.tools`, an
    /// `includeContext` other than `"none"` `sampling.context`.
    pub fn param(mut self, name: &str, value: Value) -> Self {
        self.params.insert(name.to_owned(), value);
        self
    }
}

/// The role of a sampling message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// A client's answer to an elicitation (schema `ElicitResult`).
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    /// The user submitted the form (its content, matching `requestedSchema`) or, in URL mode,
    /// went to the URL (empty content).
    Accept(JsonObject),
    /// The user explicitly declined: never consent.
    Decline,
    /// The user dismissed the request without choosing: never consent.
    Cancel,
}

impl ElicitAnswer {
    /// The accepted content, or `None` for a decline or cancel.
    pub fn accepted(&self) -> Option<&JsonObject> {
        match self {
            ElicitAnswer::Accept(content) => Some(content),
            ElicitAnswer::Decline | ElicitAnswer::Cancel => None,
        }
    }

    /// An accepted string field.
    pub fn str_field(&self, name: &str) -> Option<&str> {
        self.accepted()?.get(name).and_then(Value::as_str)
    }

    /// An accepted boolean field.
    pub fn bool_field(&self, name: &str) -> Option<bool> {
        self.accepted()?.get(name).and_then(Value::as_bool)
    }
}

/// A client's answer to a sampling request (schema `CreateMessageResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingAnswer {
    /// Who wrote the message (normally the assistant).
    pub role: Role,
    /// A content block (`{"type": "text", "text"}`, image, audio, …) or an array of them.
    pub content: Value,
    /// The model that produced it.
    pub model: String,
    /// Why sampling stopped (`endTurn`, `stopSequence`, `maxTokens`, `toolUse`, …), if known.
    #[serde(
        rename = "stopReason",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub stop_reason: Option<String>,
}

impl SamplingAnswer {
    fn content_is_well_formed(&self) -> bool {
        let block = |b: &Value| match b.get("type").and_then(Value::as_str) {
            Some("text") => b.get("text").is_some_and(Value::is_string),
            Some(_) => true,
            None => false,
        };
        match &self.content {
            Value::Array(blocks) => !blocks.is_empty() && blocks.iter().all(block),
            content => block(content),
        }
    }

    /// The text of the first text block, if any.
    pub fn text(&self) -> Option<&str> {
        fn text(block: &Value) -> Option<&str> {
            if block.get("type").and_then(Value::as_str) == Some("text") {
                block.get("text").and_then(Value::as_str)
            } else {
                None
            }
        }
        match &self.content {
            Value::Array(blocks) => blocks.iter().find_map(text),
            content => text(content),
        }
    }
}

/// A root the client exposes (schema `Root`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI (`file://…`, checked).
    pub uri: String,
    /// A display name, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A checked answer to an input request.
#[derive(Debug, Clone, PartialEq)]
pub enum InputResponse {
    /// To `elicitation/create`.
    Elicit(ElicitAnswer),
    /// To `sampling/createMessage`.
    Sampling(SamplingAnswer),
    /// To `roots/list`.
    Roots(Vec<Root>),
}

impl InputResponse {
    /// The elicitation answer, if this is one.
    pub fn as_elicit(&self) -> Option<&ElicitAnswer> {
        match self {
            InputResponse::Elicit(answer) => Some(answer),
            _ => None,
        }
    }

    /// The sampling answer, if this is one.
    pub fn as_sampling(&self) -> Option<&SamplingAnswer> {
        match self {
            InputResponse::Sampling(answer) => Some(answer),
            _ => None,
        }
    }

    /// The roots, if this is a roots answer.
    pub fn as_roots(&self) -> Option<&[Root]> {
        match self {
            InputResponse::Roots(roots) => Some(roots),
            _ => None,
        }
    }

    /// The normalized wire form: a decline or cancel without `content`, a sampling or roots
    /// result with only the members defined above.
    pub fn to_value(&self) -> Value {
        match self {
            InputResponse::Elicit(ElicitAnswer::Accept(content)) => {
                json!({"action": "accept", "content": content})
            }
            InputResponse::Elicit(ElicitAnswer::Decline) => json!({"action": "decline"}),
            InputResponse::Elicit(ElicitAnswer::Cancel) => json!({"action": "cancel"}),
            InputResponse::Sampling(answer) => serde_json::to_value(answer).unwrap_or(Value::Null),
            InputResponse::Roots(roots) => json!({ "roots": roots }),
        }
    }
}

impl Serialize for InputResponse {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}
