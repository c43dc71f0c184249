//! Prompts (MCP 2026-07-28 prompts:
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/prompts>).

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tasks_core::{JsonObject, McpError};

use super::completion::Completer;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::form::Forms;
use crate::registry::ToolHandler;
use crate::state::ToolState;

/// One argument a prompt takes (every prompt argument is a string).
#[derive(Debug, Clone)]
pub struct PromptArgument {
    name: String,
    description: Option<String>,
    required: bool,
    completer: Option<Completer>,
}

impl PromptArgument {
    /// A required argument.
    pub fn required(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required: true,
            completer: None,
        }
    }

    /// An optional argument.
    pub fn optional(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptArgument {
            required: false,
            ..PromptArgument::required(name, description)
        }
    }

    /// Completes this argument with `completer` (`completion/complete` with `ref/prompt`).
    pub fn with_completer(mut self, completer: Completer) -> Self {
        self.completer = Some(completer);
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn to_json(&self) -> Value {
        let mut item = json!({"name": self.name, "required": self.required});
        if let Some(description) = &self.description {
            item["description"] = json!(description);
        }
        item
    }
}

/// Who says a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a `prompts/get` result: a role and one content block (text, image, audio,
/// an embedded resource or a resource link, as in a tool result).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// The content block, e.g. `{"type": "text", "text": "…"}`.
    pub content: Value,
}

impl PromptMessage {
    /// A user message of `text`.
    pub fn user(text: impl Into<String>) -> Self {
        PromptMessage::new(Role::User, json!({"type": "text", "text": text.into()}))
    }

    /// An assistant message of `text`.
    pub fn assistant(text: impl Into<String>) -> Self {
        PromptMessage::new(
            Role::Assistant,
            json!({"type": "text", "text": text.into()}),
        )
    }

    /// A message of any content block.
    pub fn new(role: Role, content: Value) -> Self {
        PromptMessage { role, content }
    }
}

/// What a prompt's handler answers: the messages, and optionally a description of this
/// rendering.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct PromptResult {
    /// A description of the prompt as rendered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl PromptResult {
    /// The result of `messages`.
    pub fn new(messages: impl IntoIterator<Item = PromptMessage>) -> Self {
        PromptResult {
            description: None,
            messages: messages.into_iter().collect(),
        }
    }
}

/// A prompt: a name, a description, its arguments, and a handler rendering it.
///
/// The handler gets a [`ToolContext`] like a synchronous tool's: [`ToolContext::arguments`]
/// holds the prompt's arguments (strings, checked against the declared ones first), and it may
/// ask the client for input ([`ToolContext::elicit`], [`ToolContext::elicit_as`]): on the
/// 2026-07-28 protocol the answer comes back in a multi round-trip retry of the same
/// `prompts/get`, and the handler runs again with it.
///
/// ```
/// use tasks_runtime::catalog::{Prompt, PromptArgument, PromptMessage, PromptResult};
///
/// let review = Prompt::new("review", "Asks for a code review", |ctx| async move {
///     let code = ctx.arguments()["code"].as_str().unwrap_or_default().to_owned();
///     Ok(PromptResult::new([PromptMessage::user(format!("Please review:\n{code}"))]))
/// })
/// .with_argument(PromptArgument::required("code", "The code to review"));
/// assert_eq!(review.name(), "review");
/// ```
#[derive(Clone)]
pub struct Prompt {
    name: String,
    title: Option<String>,
    description: String,
    arguments: Vec<PromptArgument>,
    handler: Arc<dyn ToolHandler>,
    pub(crate) forms: Arc<Forms>,
    pub(crate) state: ToolState,
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A prompt handler as a [`ToolHandler`]: its [`PromptResult`] as a JSON object.
struct Render<F>(F);

#[async_trait]
impl<F, Fut> ToolHandler for Render<F>
where
    F: Fn(ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<PromptResult, ToolError>> + Send + 'static,
{
    async fn call(&self, ctx: ToolContext) -> Result<Value, ToolError> {
        let result = (self.0)(ctx).await?;
        serde_json::to_value(result)
            .map_err(|_| ToolError::Rpc(McpError::Internal("Prompt result").to_error_object()))
    }
}

/// A typed prompt's handler: deserializes the arguments into `A`, then calls `F`.
struct TypedRender<A, F> {
    handler: F,
    arguments: PhantomData<fn() -> A>,
}

#[async_trait]
impl<A, F, Fut> ToolHandler for TypedRender<A, F>
where
    A: DeserializeOwned + Send + 'static,
    F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<PromptResult, ToolError>> + Send + 'static,
{
    async fn call(&self, ctx: ToolContext) -> Result<Value, ToolError> {
        let arguments: A =
            serde_json::from_value(Value::Object(ctx.arguments().clone())).map_err(|_| {
                ToolError::Rpc(
                    McpError::invalid_params("Invalid prompt arguments").to_error_object(),
                )
            })?;
        let result = (self.handler)(ctx, arguments).await?;
        serde_json::to_value(result)
            .map_err(|_| ToolError::Rpc(McpError::Internal("Prompt result").to_error_object()))
    }
}

impl Prompt {
    /// A prompt without arguments (add them with [`Prompt::with_argument`]) rendered by
    /// `handler`.
    pub fn new<F, Fut>(name: impl Into<String>, description: impl Into<String>, handler: F) -> Self
    where
        F: Fn(ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptResult, ToolError>> + Send + 'static,
    {
        Prompt::with_handler(name, description, Arc::new(Render(handler)))
    }

    /// A prompt whose arguments are the string fields of `A`: each field is an argument
    /// (its doc comment the description; an `Option` field optional), and `handler` gets them
    /// deserialized.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use tasks_runtime::catalog::{Prompt, PromptMessage, PromptResult};
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Trip {
    ///     /// Where to go.
    ///     city: String,
    ///     /// How many days (default 3).
    ///     days: Option<String>,
    /// }
    ///
    /// let plan = Prompt::typed("plan_trip", "Plans a trip", |_ctx, trip: Trip| async move {
    ///     let days = trip.days.unwrap_or_else(|| "3".into());
    ///     Ok(PromptResult::new([PromptMessage::user(format!("Plan {days} days in {}", trip.city))]))
    /// });
    /// assert_eq!(plan.to_json()["arguments"][0]["name"], "city");
    /// assert_eq!(plan.to_json()["arguments"][1]["required"], false);
    /// ```
    ///
    /// # Panics
    /// When `A`'s schema is not an object with properties.
    pub fn typed<A, F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptResult, ToolError>> + Send + 'static,
    {
        let name = name.into();
        let schema = crate::form::generator()
            .into_root_schema_for::<A>()
            .to_value();
        let properties = schema["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("prompt {name}: its arguments type has no properties"));
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let arguments = properties
            .iter()
            .map(|(key, property)| PromptArgument {
                name: key.clone(),
                description: property["description"].as_str().map(str::to_owned),
                required: required.contains(&key.as_str()),
                completer: None,
            })
            .collect();
        let handler = TypedRender {
            handler,
            arguments: PhantomData,
        };
        let mut prompt = Prompt::with_handler(name, description, Arc::new(handler));
        prompt.arguments = arguments;
        prompt
    }

    fn with_handler(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: Arc<dyn ToolHandler>,
    ) -> Self {
        Prompt {
            name: name.into(),
            title: None,
            description: description.into(),
            arguments: Vec::new(),
            handler,
            forms: Arc::new(Forms::default()),
            state: ToolState::default(),
        }
    }

    /// Adds an argument.
    pub fn with_argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// Completes argument `argument` with `completer`.
    ///
    /// # Panics
    /// When the prompt has no such argument.
    pub fn complete(mut self, argument: &str, completer: Completer) -> Self {
        let Some(declared) = self.arguments.iter_mut().find(|a| a.name == argument) else {
            panic!("prompt {} has no argument {argument}", self.name);
        };
        declared.completer = Some(completer);
        self
    }

    /// Sets the title (a display name).
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Gives the handler `state` ([`ToolContext::state`]).
    pub fn with_state<S: Send + Sync + 'static>(mut self, state: S) -> Self {
        self.state = ToolState::new(state);
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The declared arguments.
    pub fn arguments(&self) -> &[PromptArgument] {
        &self.arguments
    }

    pub(crate) fn handler(&self) -> &dyn ToolHandler {
        self.handler.as_ref()
    }

    pub(crate) fn completer(&self, argument: &str) -> Option<&Completer> {
        self.arguments
            .iter()
            .find(|a| a.name == argument)
            .and_then(|a| a.completer.as_ref())
    }

    /// The `prompts/list` entry: `{"name", "title"?, "description", "arguments"?}`.
    pub fn to_json(&self) -> Value {
        let mut item = JsonObject::new();
        item.insert("name".into(), json!(self.name));
        if let Some(title) = &self.title {
            item.insert("title".into(), json!(title));
        }
        item.insert("description".into(), json!(self.description));
        if !self.arguments.is_empty() {
            let arguments: Vec<Value> =
                self.arguments.iter().map(PromptArgument::to_json).collect();
            item.insert("arguments".into(), Value::Array(arguments));
        }
        Value::Object(item)
    }

    /// Checks `arguments` against the declared ones.
    ///
    /// # Errors
    /// -32602 `Missing required prompt argument: <name>`, or `Unknown prompt argument: <name>
    /// (the prompt takes <names>)`; names are the server's own, never a client's value.
    pub fn check_arguments(&self, arguments: &JsonObject) -> Result<(), McpError> {
        if let Some(missing) = self
            .arguments
            .iter()
            .find(|a| a.required && !arguments.contains_key(&a.name))
        {
            return Err(McpError::invalid_params(format!(
                "Missing required prompt argument: {}",
                missing.name
            )));
        }
        if let Some(unknown) = arguments
            .keys()
            .find(|key| !self.arguments.iter().any(|a| &a.name == *key))
        {
            let known: Vec<&str> = self.arguments.iter().map(|a| a.name.as_str()).collect();
            let shown: String = unknown.chars().take(64).collect();
            return Err(McpError::invalid_params(format!(
                "Unknown prompt argument: {shown} (the prompt takes {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        }
        Ok(())
    }
}
