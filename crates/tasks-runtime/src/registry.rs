//! Tools: name, description, input schema, task policy and handler; and their registry.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tasks_core::input::ClientCapability;
use tasks_core::plan::ToolRules;
use tasks_core::plan::{param_headers, ParamHeader};
use tasks_core::{JsonObject, McpError, TaskPolicy};

use crate::context::{bounded, check_arguments, ToolContext, ToolError};
use crate::form::Forms;
use crate::result::IntoToolResult;
use crate::state::ToolState;

/// The code behind a tool. Implemented for every
/// `Fn(ToolContext) -> impl Future<Output = Result<Value, ToolError>>`.
///
/// Return a `CallToolResult` object (`{"content": [...], "isError"?: bool, ...}`,
/// <https://modelcontextprotocol.io/specification/2026-07-28/server/tools>); a tool failure
/// the model should see is a result with `isError: true` (task status `completed`): return
/// [`error_result`](crate::error_result) or [`ToolError::Tool`]. Return [`ToolError::Rpc`] for a protocol error
/// (task status `failed`).
#[async_trait]
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the tool once.
    async fn call(&self, ctx: ToolContext) -> Result<Value, ToolError>;
}

#[async_trait]
impl<F, Fut> ToolHandler for F
where
    F: Fn(ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    async fn call(&self, ctx: ToolContext) -> Result<Value, ToolError> {
        (self)(ctx).await
    }
}

/// A function choosing the task policy from the `tools/call` params.
pub type PolicyFn = dyn Fn(&JsonObject) -> TaskPolicy + Send + Sync;

/// The handler of a [`Tool::typed`] tool: deserializes the arguments into `A`, then calls `F`.
struct Typed<A, F> {
    handler: F,
    /// `fn() -> A`: the handler is `Send + Sync` whatever `A` is.
    arguments: PhantomData<fn() -> A>,
}

#[async_trait]
impl<A, F, Fut, R> ToolHandler for Typed<A, F>
where
    A: DeserializeOwned + Send + 'static,
    F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
    R: IntoToolResult + Send + 'static,
{
    async fn call(&self, ctx: ToolContext) -> Result<Value, ToolError> {
        let arguments = ctx.arguments_as::<A>()?;
        (self.handler)(ctx, arguments).await?.into_tool_result()
    }
}

/// Checks that arguments deserialize into the arguments type of a typed tool.
type ArgumentsCheck = fn(&JsonObject) -> Result<(), String>;

/// The `inputSchema` of arguments of type `A`: JSON Schema 2020-12 as schemars generates it
/// for deserializing (with `$schema`), less the `title` it adds by default (the Rust type's
/// name; a `#[schemars(title = "…")]` of the author's stays).
///
/// # Panics
/// When the schema's top level is not `"type": "object"` (MCP requires it of every
/// `inputSchema`): the arguments type must be a struct (or a map).
fn arguments_schema<A: JsonSchema>(tool: &str) -> Value {
    let mut schema = crate::form::generator().into_root_schema_for::<A>();
    if schema.get("title").and_then(Value::as_str) == Some(&*A::schema_name()) {
        schema.remove("title");
    }
    let mut schema = schema.to_value();
    if schema.get("type") != Some(&json!("object")) {
        panic!(
            "the arguments type of tool {tool} must be a struct: MCP needs an inputSchema with \
             \"type\": \"object\" at the top level"
        );
    }
    // A misspelled argument is refused, not ignored: serde would drop it and the tool would
    // run with a default. A type that takes other keys (a flattened map) says so already.
    if let Value::Object(object) = &mut schema {
        object
            .entry("additionalProperties")
            .or_insert(Value::Bool(false));
    }
    schema
}

impl Tool {
    /// The refusal of top-level arguments the schema does not take: names them (keys, never
    /// values) and the ones it takes.
    fn unknown_arguments(&self, unexpected: &[String]) -> String {
        let quoted = |names: &mut dyn Iterator<Item = &str>| {
            names
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let what = if unexpected.len() == 1 {
            "argument"
        } else {
            "arguments"
        };
        let unknown = quoted(&mut unexpected.iter().map(String::as_str));
        let known: Vec<&str> = self
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if known.is_empty() {
            format!("Invalid arguments at /: unknown {what} {unknown} (the tool takes none)")
        } else {
            let known = quoted(&mut known.into_iter());
            format!("Invalid arguments at /: unknown {what} {unknown} (the tool takes {known})")
        }
    }
}

/// How a tool relates to tasks.
#[derive(Clone)]
pub enum ToolPolicy {
    /// The same policy for every call.
    Fixed(TaskPolicy),
    /// A policy computed per call from its params (for example `Sync` on the first MRTR round
    /// and `Required` once `inputResponses` are present).
    PerCall(Arc<PolicyFn>),
}

impl fmt::Debug for ToolPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolPolicy::Fixed(p) => write!(f, "Fixed({p:?})"),
            ToolPolicy::PerCall(_) => f.write_str("PerCall(..)"),
        }
    }
}

/// What happens to a task whose worker died with its process (see `docs/durability.md`).
///
/// # Takeover
///
/// Recovery: this node's lease, taking over the tasks of dead nodes, and what happens to them.
///
/// Every tick ([`crate::config::LeaseConfig::tick`]) the node renews its lease, then claims
/// orphaned tasks ([`crate::store::Store::claim_orphans`]): tasks whose node died (a crash, a
/// `kill -9`, a lease that ran out). A durable store on one host makes the previous process's
/// tasks orphans at start-up, so the same claim path recovers them. Each claimed task is then
/// failed or re-run according to its tool's [`Recovery`] policy.
///
/// A node that finds its own lease lost (the store says so, or, by the node's own clock, no
/// renewal has succeeded for the lease minus one tick, even while a renewal still waits on a
/// stalled store) stops every local worker at once and registers again
/// under a new id: its tasks may already run elsewhere, and the fencing tokens make any late
/// write of the old workers fail.
///
/// ## Where this differs from the researched design
///
/// * The lease is renewed every tick (default 2 s, lease 30 s) rather than every 5 s: a renewal
///   costs one small write, and a shorter period leaves more room for a slow store. Renewing
///   and claiming run side by side, so a long claim pass (thousands of orphans at start-up)
///   never delays a renewal; and a store never hands a node its own tasks as orphans.
/// * A task claimed while it waited for input (`input_required`) is re-run whatever its attempt
///   count: its run stops at the same question, so restarts while a user takes their time do
///   not use up `max_attempts`, which bounds runs interrupted while working.
/// * A claimed task is claimed whatever this node's free worker slots: a re-run waits for a slot
///   before it runs (it holds none while it waits), and a task failed by policy needs none.
///   Claiming only as many as there are free slots would leave a crashed node's parked tasks
///   (which hold no slot) unrecovered for a long time.
/// * An attempt is a run: a claim charges none. A re-run charges its attempt
///   ([`crate::store::Store::charge_attempt`]) once it has its slot, right before the tool starts, so a
///   node that claims tasks and dies before it had slots for them uses up none of their
///   attempts. `max_attempts` is checked at the claim against the runs already started.
/// * No per-task expiry timers: the reaper stops the local worker of an expired task, as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Recovery {
    /// The task fails with -32603 `Task interrupted: the server stopped while it ran; it was
    /// not retried`, also when it was parked waiting for input (resuming it would mean running
    /// the tool's code up to the question again). The default: MCP tools often have side
    /// effects that must not happen twice.
    #[default]
    Fail,
    /// The tool runs again from the start, at least once. A task interrupted while working is
    /// re-run while it has run fewer than `max_attempts` times (then it fails with -32603
    /// `Task interrupted: the server stopped while it ran, and it had already run
    /// <max_attempts> times`). Only runs that started count: a node that took the task over
    /// and stopped before a worker slot was free for it used up none. A task interrupted while
    /// parked for input is always re-run, whatever its count (its run stops at the same
    /// question); each such re-run still counts as a run, so should the task later be
    /// interrupted while working, those runs count toward `max_attempts`. The re-run
    /// sees the same
    /// [`ToolContext::idempotency_key`](crate::ToolContext::idempotency_key), a higher
    /// [`attempt`](crate::ToolContext::attempt) and
    /// [`fencing_token`](crate::ToolContext::fencing_token), and gets the answers of inputs
    /// already given back from [`ToolContext::input`](crate::ToolContext::input) without asking
    /// the client again. Side effects before the crash may happen again: deduplicate them with
    /// the idempotency key, or ask first and act after.
    Rerun {
        /// The highest attempt number a task interrupted while working is re-run at (the
        /// first run is attempt 1).
        max_attempts: u32,
    },
}

impl Recovery {
    /// [`Recovery::Rerun`] with at most 3 runs.
    pub const fn rerun() -> Self {
        Recovery::Rerun { max_attempts: 3 }
    }
}

/// A registered tool.
pub struct Tool {
    name: String,
    title: Option<String>,
    description: String,
    input_schema: JsonObject,
    output_schema: Option<JsonObject>,
    validator: Option<jsonschema::Validator>,
    param_headers: Vec<ParamHeader>,
    policy: ToolPolicy,
    client_needs: Vec<ClientCapability>,
    annotations: Option<JsonObject>,
    recovery: Recovery,
    arguments_check: Option<ArgumentsCheck>,
    /// The form types the tool asks with ([`Tool::asks`]).
    pub(crate) forms: Arc<Forms>,
    pub(crate) state: ToolState,
    handler: Arc<dyn ToolHandler>,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A synchronous tool taking no arguments (`{"type":"object"}`); see the builder methods.
    /// `handler` is an async closure: its [`ToolContext`] argument needs no type annotation.
    ///
    /// ```
    /// use tasks_runtime::{text_result, Tool};
    ///
    /// let tool = Tool::new("greet", "Says hello", |ctx| async move {
    ///     ctx.set_status_message("greeting");
    ///     Ok(text_result("hello"))
    /// });
    /// assert_eq!(tool.name(), "greet");
    /// ```
    pub fn new<F, Fut>(name: impl Into<String>, description: impl Into<String>, handler: F) -> Self
    where
        F: Fn(ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        Tool::with_handler(name, description, handler)
    }

    /// A synchronous tool whose arguments are a Rust type: its `inputSchema` is generated
    /// from `A` ([`Tool::with_arguments`]), and `handler` gets the arguments deserialized.
    /// Only the arguments need a type annotation in the closure.
    ///
    /// Arguments that break the schema, or that the schema lets through but `A` does not
    /// deserialize from (a string that is not a UUID, say: `format` is not checked), are
    /// answered before the tool runs, and before a task is created, with the result
    /// `{"content":[{"type":"text","text":"Invalid arguments at <path>: …"}],"isError":true}`:
    /// MCP counts argument validation as a tool error, not a JSON-RPC error
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, "Error
    /// Handling"). The text names the argument's JSON Pointer and the rule it breaks, never the
    /// client's value.
    ///
    /// The handler answers any [`IntoToolResult`]: a whole `CallToolResult` ([`Value`], e.g.
    /// [`text_result`](crate::text_result)), a `String`, or [`Json<T>`](crate::Json), a
    /// structured result whose schema the tool then lists as its `outputSchema`.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use tasks_runtime::{text_result, Tool};
    ///
    /// /// What to report on.
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Report {
    ///     /// The table to count.
    ///     table: String,
    ///     /// At most this many rows (default 100).
    ///     limit: Option<u32>,
    /// }
    ///
    /// let tool = Tool::typed("report", "Counts a table's rows", |_ctx, args: Report| async move {
    ///     let limit = args.limit.unwrap_or(100);
    ///     Ok(text_result(format!("{}: at most {limit} rows", args.table)))
    /// });
    /// assert_eq!(tool.input_schema()["required"], serde_json::json!(["table"]));
    /// ```
    ///
    /// # Panics
    /// When the schema of `A` does not have `"type": "object"` at the top level (`A` must be a
    /// struct or a map), or breaks the rules of [`Tool::with_input_schema`].
    pub fn typed<A, F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: IntoToolResult + Send + 'static,
    {
        let handler = Typed {
            handler,
            arguments: PhantomData,
        };
        let mut tool = Tool::with_handler(name, description, handler).with_arguments::<A>();
        if let Some(schema) = R::output_schema() {
            tool = tool.with_output_schema(Value::Object(schema));
        }
        tool
    }

    /// [`Tool::new`] with a handler of its own type (a struct implementing [`ToolHandler`]).
    pub fn with_handler(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: impl ToolHandler,
    ) -> Self {
        let mut input_schema = JsonObject::new();
        input_schema.insert("type".into(), Value::from("object"));
        Tool {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema,
            output_schema: None,
            validator: None,
            param_headers: Vec::new(),
            policy: ToolPolicy::Fixed(TaskPolicy::Sync),
            client_needs: Vec::new(),
            annotations: None,
            recovery: Recovery::Fail,
            arguments_check: None,
            forms: Arc::default(),
            state: ToolState::default(),
            handler: Arc::new(handler),
        }
    }

    /// Sets the JSON Schema (2020-12) of the arguments. Arguments are validated against it
    /// before the tool runs or a task is created. Top-level string, integer or boolean
    /// properties annotated with `"x-mcp-header": "<Name>"` must also arrive in an
    /// `Mcp-Param-<Name>` header ([`tasks_core::plan::ParamHeader`]).
    ///
    /// # Panics
    /// When `schema` is not an object, is not a valid JSON Schema, or breaks the `x-mcp-header`
    /// rules (clients drop such tools): a programming error at registration time, never at
    /// request time.
    pub fn with_input_schema(mut self, schema: Value) -> Self {
        let validator = jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("invalid inputSchema for tool {}: {e}", self.name));
        let Value::Object(schema) = schema else {
            panic!("inputSchema of tool {} must be an object", self.name);
        };
        self.param_headers = param_headers(&schema)
            .unwrap_or_else(|e| panic!("invalid inputSchema for tool {}: {e}", self.name));
        self.input_schema = schema;
        self.validator = Some(validator);
        self
    }

    /// Declares the arguments type `A`: sets the `inputSchema` to the JSON Schema 2020-12 that
    /// schemars generates for deserializing `A` (`$schema` kept, the default `title` left out;
    /// doc comments become `description`s; `#[schemars(extend("x-mcp-header" = "Region"))]`
    /// on a field mirrors it in a header), and checks before the tool runs that the arguments
    /// deserialize into `A`, after the schema. [`Tool::typed`] calls it; a handler of its own
    /// type ([`Tool::with_handler`]) calls it and reads the arguments with
    /// [`ToolContext::arguments_as`]. A [`Tool::with_input_schema`] after it replaces the
    /// generated schema and keeps the deserialization check.
    ///
    /// The schema refuses arguments `A` does not have (`"additionalProperties": false`, unless
    /// `A` declares what it does with other keys): a misspelled `secnds` is the tool error
    /// result `Invalid arguments at /: unknown argument `secnds` (the tool takes `label`,
    /// `seconds`)`, not a run with the default. [`Tool::allow_unknown_arguments`] lifts it.
    ///
    /// # Panics
    /// As [`Tool::typed`].
    pub fn with_arguments<A: DeserializeOwned + JsonSchema>(mut self) -> Self {
        let schema = arguments_schema::<A>(&self.name);
        self = self.with_input_schema(schema);
        self.arguments_check = Some(check_arguments::<A>);
        self
    }

    /// Sets the `outputSchema` listed by `tools/list`: the JSON Schema (2020-12) the
    /// `structuredContent` of the tool's results conforms to (MCP 2026-07-28 tools, "Output
    /// Schema": <https://modelcontextprotocol.io/specification/2026-07-28/server/tools>).
    /// [`Tool::typed`] sets it for a handler answering [`Json<T>`](crate::Json).
    ///
    /// # Panics
    /// When `schema` is not a valid JSON Schema object: a programming error at registration
    /// time.
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        if let Err(error) = jsonschema::validator_for(&schema) {
            panic!("invalid outputSchema for tool {}: {error}", self.name);
        }
        let Value::Object(schema) = schema else {
            panic!("outputSchema of tool {} must be an object", self.name);
        };
        self.output_schema = Some(schema);
        self
    }

    /// Gives the handler `state` (a database pool, an HTTP client, a configuration; make it
    /// cheap to share, e.g. an `Arc` or a pool handle): every run reads it with
    /// [`ToolContext::state`] instead of capturing a clone in its closure. Several tools share
    /// one state by each getting a clone of it. It is the process's, not stored: a task re-run
    /// after a restart reads what the new process gave the tool.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tasks_runtime::{text_result, Tool};
    ///
    /// struct Greeter {
    ///     greeting: String,
    /// }
    ///
    /// let greeter = Arc::new(Greeter { greeting: "Hello".into() });
    /// let tool = Tool::new("greet", "Greets", |ctx| async move {
    ///     let greeter = ctx.state::<Arc<Greeter>>()?;
    ///     Ok(text_result(format!("{}!", greeter.greeting)))
    /// })
    /// .with_state(greeter.clone());
    /// # let _ = tool;
    /// ```
    pub fn with_state<S: Send + Sync + 'static>(mut self, state: S) -> Self {
        self.state = ToolState::new(state);
        self
    }

    /// Sets the human-readable `title` listed by `tools/list` (the `name` stays the
    /// identifier; MCP 2026-07-28 tools, "Tool").
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Accepts (and ignores) arguments the schema does not list: removes the top-level
    /// `"additionalProperties": false` that [`Tool::with_arguments`] (and so [`Tool::typed`])
    /// puts in the generated schema. Call it after them; it changes the listed `inputSchema`.
    ///
    /// # Panics
    /// As [`Tool::with_input_schema`] (never for a schema that was accepted before).
    pub fn allow_unknown_arguments(self) -> Self {
        let mut schema = self.input_schema.clone();
        if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
            schema.remove("additionalProperties");
        }
        self.with_input_schema(Value::Object(schema))
    }

    /// Declares a form type `T` the tool asks with
    /// [`ToolContext::elicit_as::<T>`](crate::ToolContext::elicit_as): generates its form (the
    /// `requestedSchema`) once, here, and refuses a type the form cannot carry. Declare every
    /// type the tool asks with; `elicit_as` with a type not declared is -32603.
    ///
    /// # Panics
    /// When `T` is outside what MCP elicitation forms allow (the docs of
    /// [`Elicited`](crate::Elicited) list it): a programming error found when the tool is built, at start-up, never at request
    /// time. The message names the type, the tool and the first property the form cannot
    /// carry, e.g. ``form type my_server::Trip of tool book_trip is not an MCP elicitation
    /// form: property `stops` is an array of objects; a form's only arrays are multi selects,
    /// of string enum values (…)``.
    pub fn asks<T: JsonSchema + DeserializeOwned + 'static>(mut self) -> Self {
        Arc::make_mut(&mut self.forms).declare::<T>(&self.name);
        self
    }

    /// Sets a fixed task policy (default [`TaskPolicy::Sync`]).
    pub fn with_policy(mut self, policy: TaskPolicy) -> Self {
        self.policy = ToolPolicy::Fixed(policy);
        self
    }

    /// Sets a per-call task policy.
    pub fn with_policy_fn(
        mut self,
        policy: impl Fn(&JsonObject) -> TaskPolicy + Send + Sync + 'static,
    ) -> Self {
        self.policy = ToolPolicy::PerCall(Arc::new(policy));
        self
    }

    /// Declares client capabilities every call of this tool needs (e.g.
    /// [`ClientCapability::ElicitationForm`] for a tool that always asks for confirmation).
    /// A `tools/call` whose request does not declare them all is refused with -32021
    /// `Missing required client capability` and `data.requiredCapabilities` naming every
    /// missing one, before anything runs or a task is stored. Input the tool asks for only
    /// sometimes needs no declaration here: [`ToolContext::input`](crate::ToolContext::input)
    /// refuses an undeclared request when it is made.
    pub fn requires_client(
        mut self,
        capabilities: impl IntoIterator<Item = ClientCapability>,
    ) -> Self {
        self.client_needs.extend(capabilities);
        self.client_needs.sort();
        self.client_needs.dedup();
        self
    }

    /// The client capabilities every call needs ([`Tool::requires_client`]).
    pub fn client_needs(&self) -> &[ClientCapability] {
        &self.client_needs
    }

    /// Sets what happens to this tool's tasks when their worker dies with the process (a crash,
    /// a `kill -9`, a lost lease): [`Recovery::Fail`] (the default) or
    /// [`Recovery::Rerun`]. See [`Recovery`] and `docs/durability.md`.
    pub fn with_recovery(mut self, recovery: Recovery) -> Self {
        self.recovery = recovery;
        self
    }

    /// The recovery policy ([`Tool::with_recovery`]).
    pub fn recovery(&self) -> Recovery {
        self.recovery
    }

    /// Sets the tool `annotations` object listed by `tools/list`.
    pub fn with_annotations(mut self, annotations: Value) -> Self {
        self.annotations = annotations.as_object().cloned();
        self
    }

    /// The tool name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The title, if any ([`Tool::with_title`]).
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }
    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }
    /// The output schema, if any ([`Tool::with_output_schema`]).
    pub fn output_schema(&self) -> Option<&JsonObject> {
        self.output_schema.as_ref()
    }
    /// The input schema.
    pub fn input_schema(&self) -> &JsonObject {
        &self.input_schema
    }
    /// The arguments mirrored in `Mcp-Param-*` headers (`x-mcp-header`), in property order.
    pub fn param_headers(&self) -> &[ParamHeader] {
        &self.param_headers
    }
    /// The annotations, if any.
    pub fn annotations(&self) -> Option<&JsonObject> {
        self.annotations.as_ref()
    }
    /// The handler.
    pub fn handler(&self) -> &Arc<dyn ToolHandler> {
        &self.handler
    }

    /// The task policy for a call with these `tools/call` params.
    pub fn policy_for(&self, params: &JsonObject) -> TaskPolicy {
        match &self.policy {
            ToolPolicy::Fixed(policy) => *policy,
            ToolPolicy::PerCall(f) => f(params),
        }
    }

    /// The `policy` label of the tool's metrics: `sync`, `optional`, `required`, or `per_call`
    /// for a policy computed per call ([`Tool::with_policy_fn`]).
    pub(crate) fn policy_label(&self) -> &'static str {
        match &self.policy {
            ToolPolicy::Fixed(TaskPolicy::Sync) => "sync",
            ToolPolicy::Fixed(TaskPolicy::Optional) => "optional",
            ToolPolicy::Fixed(TaskPolicy::Required) => "required",
            ToolPolicy::PerCall(_) => "per_call",
        }
    }

    /// Checks `arguments` against the input schema, then (for a typed tool,
    /// [`Tool::with_arguments`]) that they deserialize into its arguments type.
    ///
    /// # Errors
    /// A short description of the first violation, at most 512 bytes: the argument path, the
    /// schema rule and, for the common rules, what it asks for in words taken from the schema
    /// (`Invalid arguments at /count: violates inputSchema rule /properties/count/type
    /// (expected integer)`, `… rule /required (`name` is required)`), or the path where
    /// deserializing failed (`Invalid arguments at /id: not accepted by the tool's arguments
    /// type`); never the offending value.
    pub fn validate_arguments(&self, arguments: &JsonObject) -> Result<(), String> {
        if let Some(validator) = &self.validator {
            let instance = Value::Object(arguments.clone());
            let first = validator.iter_errors(&instance).next().map(|error| {
                // Name the locations only: the offending value is client input and is not
                // echoed.
                let path = error.instance_path().to_string();
                let location = if path.is_empty() { "/" } else { &path };
                if let jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } =
                    error.kind()
                {
                    if path.is_empty() {
                        return bounded(self.unknown_arguments(unexpected));
                    }
                }
                let rule = error.schema_path().to_string();
                let hint = rule_hint(error.kind()).map_or(String::new(), |h| format!(" ({h})"));
                bounded(format!(
                    "Invalid arguments at {location}: violates inputSchema rule {rule}{hint}"
                ))
            });
            if let Some(message) = first {
                return Err(message);
            }
        }
        self.arguments_check
            .map_or(Ok(()), |check| check(arguments))
    }
}

/// What a broken rule asks for, in words, from the schema's side only (a required property's
/// name, a bound, a type): never the client's value.
fn rule_hint(kind: &jsonschema::error::ValidationErrorKind) -> Option<String> {
    use jsonschema::error::{TypeKind, ValidationErrorKind as Kind};
    Some(match kind {
        Kind::Required { property } => format!("`{}` is required", property.as_str()?),
        Kind::Type {
            kind: TypeKind::Single(expected),
        } => format!("expected {expected}"),
        Kind::Maximum { limit } => format!("at most {limit}"),
        Kind::Minimum { limit } => format!("at least {limit}"),
        Kind::ExclusiveMaximum { limit } => format!("less than {limit}"),
        Kind::ExclusiveMinimum { limit } => format!("greater than {limit}"),
        Kind::MaxLength { limit } => format!("at most {limit} characters"),
        Kind::MinLength { limit } => format!("at least {limit} characters"),
        Kind::Enum { .. } => "not one of the allowed values".to_owned(),
        Kind::AdditionalProperties { .. } => "an argument the tool does not take".to_owned(),
        _ => return None,
    })
}

impl ToolRules for Tool {
    fn param_headers(&self) -> &[ParamHeader] {
        Tool::param_headers(self)
    }
    fn policy_for(&self, params: &JsonObject) -> TaskPolicy {
        Tool::policy_for(self, params)
    }
    fn fixed_policy(&self) -> Option<TaskPolicy> {
        match &self.policy {
            ToolPolicy::Fixed(policy) => Some(*policy),
            ToolPolicy::PerCall(_) => None,
        }
    }
    fn client_needs(&self) -> &[ClientCapability] {
        Tool::client_needs(self)
    }
    fn validate_arguments(&self, arguments: &JsonObject) -> Result<(), String> {
        Tool::validate_arguments(self, arguments)
    }
}

/// The tools of a server, in registration order (the `tools/list` order).
#[derive(Debug, Default, Clone)]
pub struct ToolRegistry {
    tools: Vec<Arc<Tool>>,
    index: HashMap<String, usize>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool; a tool with the same name replaces the earlier one in place.
    pub fn register(&mut self, tool: Tool) {
        self.register_shared(Arc::new(tool));
    }

    /// [`ToolRegistry::register`] of a tool already shared.
    pub fn register_shared(&mut self, tool: Arc<Tool>) {
        match self.index.get(tool.name()) {
            Some(&i) => self.tools[i] = tool,
            None => {
                self.index.insert(tool.name().to_owned(), self.tools.len());
                self.tools.push(tool);
            }
        }
    }

    /// Removes the tool named `name`; answers whether it was there. The others keep their
    /// order.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(at) = self.index.remove(name) else {
            return false;
        };
        self.tools.remove(at);
        for i in self.index.values_mut() {
            if *i > at {
                *i -= 1;
            }
        }
        true
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Tool>> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// The tool named `name`, for a call of it.
    ///
    /// # Errors
    /// -32602 `Unknown tool` ([`McpError::unknown_tool`]) when there is none.
    pub fn find(&self, name: &str) -> Result<Arc<Tool>, McpError> {
        self.get(name).cloned().ok_or_else(McpError::unknown_tool)
    }

    /// Every tool, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Tool>> {
        self.tools.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::text_result;

    fn named(name: &str) -> Tool {
        Tool::new(name, "test", |_ctx| async { Ok(text_result("ok")) })
    }

    fn names(tools: &ToolRegistry) -> Vec<&str> {
        tools.iter().map(|tool| tool.name()).collect()
    }

    #[test]
    fn removing_keeps_the_order_and_every_lookup_right() {
        let mut tools = ToolRegistry::new();
        for name in ["a", "b", "c", "d"] {
            tools.register(named(name));
        }
        assert!(tools.remove("b"));
        assert!(!tools.remove("b"));
        assert_eq!(names(&tools), ["a", "c", "d"]);
        for name in ["a", "c", "d"] {
            assert_eq!(tools.get(name).map(|t| t.name()), Some(name));
        }
        assert!(tools.get("b").is_none());
        // Re-registering a name replaces it in place; a new one goes last.
        tools.register(named("c"));
        tools.register(named("b"));
        assert_eq!(names(&tools), ["a", "c", "d", "b"]);
        for name in ["a", "b", "c", "d"] {
            assert!(tools.remove(name));
        }
        assert!(tools.is_empty());
    }
}
