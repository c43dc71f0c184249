//! What a tool sees while it runs: arguments, cancellation, and client input.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tasks_core::input::missing_capabilities;
use tasks_core::input::{
    ClientCapability, ElicitAnswer, InputRequest, InputResponse, Root, SamplingAnswer,
    SamplingRequest,
};
use tasks_core::{JsonObject, LogLevel, McpError, Progress, TaskId};
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

pub(crate) use crate::error::ToolError;
use crate::form::{Elicited, Forms};
use crate::notify::Notifier;
use crate::port::TaskPort;
use crate::scope::Principal;
use crate::scope::Scope;
use crate::status::StatusCoalescer;
use crate::store::Lease;
use crate::work::Work;

/// `error.message` of a call whose tool built an input request no client can answer.
pub(crate) const MESSAGE_MALFORMED_REQUEST: &str = "Tool made a malformed input request";

/// The -32603 error of a tool whose input request is malformed.
fn malformed() -> ToolError {
    ToolError::Rpc(tasks_core::JsonRpcError::internal(
        MESSAGE_MALFORMED_REQUEST,
    ))
}

/// The longest message an argument check returns, in bytes.
const MAX_MESSAGE_BYTES: usize = 512;

/// `message`, cut to at most 512 bytes (ending in `...` when cut).
pub(crate) fn bounded(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_BYTES {
        let mut cut = MAX_MESSAGE_BYTES - 3;
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        message.truncate(cut);
        message.push_str("...");
    }
    message
}

/// Deserializes `arguments` into `A`.
///
/// # Errors
/// `Invalid arguments at <JSON Pointer>: not accepted by the tool's arguments type`, at most
/// 512 bytes: where deserializing failed, never what serde said about it (its messages quote
/// the client's values, e.g. `invalid type: string "…"`).
pub(crate) fn deserialize_arguments<A: DeserializeOwned>(
    arguments: &JsonObject,
) -> Result<A, String> {
    serde_path_to_error::deserialize(arguments).map_err(|error| {
        let location = failure_pointer(error.path());
        bounded(format!(
            "Invalid arguments at {location}: not accepted by the tool's arguments type"
        ))
    })
}

/// The JSON Pointer where deserializing failed, as serde said (`/` for the top level).
fn failure_pointer(path: &serde_path_to_error::Path) -> String {
    let mut location = String::new();
    for segment in path.iter() {
        use serde_path_to_error::Segment;
        match segment {
            Segment::Seq { index } => location.push_str(&format!("/{index}")),
            Segment::Map { key } => pointer_token(&mut location, key),
            Segment::Enum { variant } => pointer_token(&mut location, variant),
            // Where serde did not say: the location is the nearest one it did.
            Segment::Unknown => {}
        }
    }
    if location.is_empty() {
        location.push('/');
    }
    location
}

/// The accepted `content` of the answer to `key` deserialized into the form type `T`, once
/// the keys `form` does not name are dropped (so a message only ever names the form's own
/// properties, never a key the client made up).
///
/// # Errors
/// -32602 `Invalid input response for <key>: content at <JSON Pointer> is not accepted by the
/// form's type` (at most 512 bytes; never the client's values).
fn deserialize_answer<T: DeserializeOwned>(
    key: &str,
    form: &Value,
    mut content: JsonObject,
) -> Result<T, ToolError> {
    if let Some(properties) = form.get("properties").and_then(Value::as_object) {
        content.retain(|name, _| properties.contains_key(name));
    }
    serde_path_to_error::deserialize(&content).map_err(|error| {
        let location = failure_pointer(error.path());
        McpError::invalid_params(bounded(format!(
            "Invalid input response for {key}: content at {location} is not accepted by the \
             form's type"
        )))
        .into()
    })
}

/// `error.message` of [`ToolContext::elicit_as`] with a type the tool did not declare.
pub(crate) const MESSAGE_UNDECLARED_FORM: &str =
    "Tool asked with a form type it did not declare with Tool::asks";

/// Appends `/token` to a JSON Pointer, escaping `~` and `/` (RFC 6901).
fn pointer_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    pointer.push_str(&token.replace('~', "~0").replace('/', "~1"));
}

/// [`deserialize_arguments`] without the value: the argument check of a typed tool.
pub(crate) fn check_arguments<A: DeserializeOwned>(arguments: &JsonObject) -> Result<(), String> {
    deserialize_arguments::<A>(arguments).map(drop)
}

/// A synchronous call's input: the request's `inputResponses`, and what was asked.
#[derive(Debug, Default)]
pub(crate) struct SyncInput {
    pub(crate) asked: Mutex<BTreeMap<String, InputRequest>>,
}

/// A task's input: parks the task until `tasks/update` answers.
pub(crate) struct TaskInput {
    pub(crate) port: Arc<dyn TaskPort>,
    pub(crate) task_id: TaskId,
    pub(crate) scope: Scope,
    /// The worker's lease: every write carries it.
    pub(crate) lease: Lease,
    /// The worker slot, released while parked. An async lock, so branches of one task that
    /// resume together (inputs awaited concurrently) share one slot instead of each waiting for
    /// another, which would deadlock at `max_workers = 1`.
    pub(crate) permit: tokio::sync::Mutex<Option<OwnedSemaphorePermit>>,
    pub(crate) slots: Arc<Semaphore>,
    /// How many inputs of this task are parked right now.
    pub(crate) parked: AtomicUsize,
    /// Coalesces [`ToolContext::set_status_message`] and [`ToolContext::progress`].
    pub(crate) status: Arc<StatusCoalescer>,
}

/// What the run was called with: a task shares its stored work descriptor (no copy per
/// running or parked task); a synchronous call owns its request's data.
pub(crate) enum CallInputs {
    Task(Arc<Work>),
    Sync {
        arguments: JsonObject,
        input_responses: Option<JsonObject>,
        client_capabilities: JsonObject,
    },
}

impl CallInputs {
    fn arguments(&self) -> &JsonObject {
        match self {
            CallInputs::Task(work) => &work.arguments,
            CallInputs::Sync { arguments, .. } => arguments,
        }
    }

    fn input_responses(&self) -> Option<&JsonObject> {
        match self {
            CallInputs::Task(work) => work.input_responses.as_ref(),
            CallInputs::Sync {
                input_responses, ..
            } => input_responses.as_ref(),
        }
    }

    fn client_capabilities(&self) -> &JsonObject {
        match self {
            CallInputs::Task(work) => &work.client_capabilities,
            CallInputs::Sync {
                client_capabilities,
                ..
            } => client_capabilities,
        }
    }
}

pub(crate) enum InputMode {
    Sync(Arc<SyncInput>),
    Task(Arc<TaskInput>),
}

/// The context of one tool run.
///
/// A task's context is detached from the creating request: it has no request id, progress
/// token, log level or request cancellation; it lives as long as the worker. (SEP-2663 "Task
/// Status Notifications" does not support progress and log notifications on tasks; the rest
/// of the detachment is this server's choice.) A task reports its progress with the task
/// instead: [`ToolContext::progress`].
pub struct ToolContext {
    pub(crate) inputs: CallInputs,
    pub(crate) notifier: Option<Notifier>,
    pub(crate) cancel: CancellationToken,
    pub(crate) mode: InputMode,
    /// The form types the tool declared ([`Tool::asks`](crate::Tool::asks)).
    pub(crate) forms: Arc<Forms>,
    pub(crate) state: crate::state::ToolState,
    /// Who called: the principal of the request that created the task (opened from its work
    /// at each run) or made the synchronous call.
    pub(crate) principal: Option<Principal>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("arguments", self.arguments())
            .field("is_task", &self.is_task())
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// The state given to the tool with [`Tool::with_state`](crate::Tool::with_state), as the
    /// type `S` it was given as.
    ///
    /// # Errors
    /// -32603 `Tool state missing` when the tool has no state of type `S` (a programming
    /// error: the tool was built without `.with_state(…)` of that type; logged at ERROR with
    /// the type's name). Propagate it with `?`.
    pub fn state<S: 'static>(&self) -> Result<&S, ToolError> {
        self.state.get::<S>().ok_or_else(|| {
            tracing::error!(
                state = std::any::type_name::<S>(),
                "a tool asked for state it was not given with Tool::with_state"
            );
            ToolError::rpc(-32603, "Tool state missing")
        })
    }

    /// Who called: the principal an authentication layer gave the request that created this
    /// task (or made this synchronous call), e.g. a user id; `None` for a server without
    /// authentication (the shared scope). A task keeps it across recovery sealed in its stored
    /// work ([`SealedPrincipal`](crate::SealedPrincipal)): a re-run under another principal key (a rotated server secret,
    /// or a server without a stable one) sees `None`, as does a task stored before tasks
    /// carried their caller.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_ref()
    }

    /// The tool arguments (`{}` when the request had none).
    pub fn arguments(&self) -> &JsonObject {
        self.inputs.arguments()
    }

    /// The arguments deserialized into `A` (typically a `#[derive(Deserialize, JsonSchema)]`
    /// struct declared with [`Tool::with_arguments`](crate::Tool::with_arguments), which
    /// checks them before the tool runs; [`Tool::typed`](crate::Tool::typed) calls this for
    /// you).
    ///
    /// # Errors
    /// [`ToolError::Tool`] (an `isError: true` result) with `Invalid arguments at <JSON
    /// Pointer>: not accepted by the tool's arguments type` when they do not deserialize; the
    /// text never quotes the client's values.
    pub fn arguments_as<A: DeserializeOwned>(&self) -> Result<A, ToolError> {
        deserialize_arguments(self.arguments()).map_err(ToolError::Tool)
    }

    /// The `inputResponses` of the request that started this run (for a task: of the request
    /// that created it), if any.
    pub fn input_responses(&self) -> Option<&JsonObject> {
        self.inputs.input_responses()
    }

    /// Whether this run answers a question of an earlier one: the request carried
    /// `inputResponses` (for a synchronous call, an MRTR retry; for a task, the request that
    /// created it).
    ///
    /// In a synchronous call a question ends the call: [`ToolContext::input`] returns
    /// [`ToolError::InputRequired`], the client answers by sending the same call again with
    /// the answers, and that retry runs the handler **again from the start**. Whatever the
    /// handler did before asking is then done again (once per round), so ask first and act
    /// after, or check here (and [`ToolContext::input_responses`] for the answers already
    /// given) before a side effect that must not repeat. A task asks without ending: its
    /// handler waits in [`ToolContext::input`] and runs once.
    pub fn is_retry(&self) -> bool {
        self.input_responses()
            .is_some_and(|answers| !answers.is_empty())
    }

    /// Fires when the run should stop: `tasks/cancel`, TTL expiry, runtime limit, or (for a
    /// synchronous call) the client going away.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The client capabilities the starting request declared (for a task: the creating
    /// request's), e.g. `{"elicitation": {}, "sampling": {}}`.
    pub fn client_capabilities(&self) -> &JsonObject {
        self.inputs.client_capabilities()
    }

    /// Whether the starting request declared `capability` (e.g.
    /// [`ClientCapability::ElicitationForm`]). [`ToolContext::input`] refuses a request needing
    /// an undeclared capability with -32021 (`tasks_core::input` has the table), so a tool that
    /// can do without the input asks this first.
    pub fn client_declares(&self, capability: ClientCapability) -> bool {
        capability.is_declared(self.client_capabilities())
    }

    /// Reports how far the work is: `progress` done of `total` (when known), in the work's own
    /// unit (steps, bytes, seconds, …), with an optional `message` saying what it is doing.
    /// `progress` must grow from call to call; a `total` that is not a finite number is left
    /// out. Returns whether the report was taken.
    ///
    /// * **In a synchronous call**: a `notifications/progress` on the request's SSE stream
    ///   (MCP 2026-07-28 progress,
    ///   <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress>).
    ///   `false` when the request carried no `progressToken`, for a value not above the
    ///   previous one, or when the client is not keeping up.
    /// * **In a task**: stored with the task, throttled and coalesced with
    ///   [`set_status_message`](Self::set_status_message) (at most one write per
    ///   `pollIntervalMs`, the latest report winning; `message`, when given, becomes the
    ///   `statusMessage` in the same write). Clients see it under the experimental `_meta` key
    ///   `dev.mcp-tasks/progress` of `tasks/get` and `notifications/tasks` as
    ///   `{"progress": progress, "total": total}` ([`tasks_core::Progress`]); a 2025-11-25
    ///   client whose call carried a `progressToken` gets `notifications/progress` with it on
    ///   its session's GET stream. A task's progress never moves backwards: a report not ahead
    ///   of the stored one (a re-run after a crash counting from zero again) is kept out of the
    ///   task until it passes it; the last report of a run that ends is written before its
    ///   outcome, and the progress is kept once the task ends. `false`, taking
    ///   nothing, for a value not above this run's previous one, a negative or non-finite
    ///   `progress`, or a `total` below it or not above zero.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let total = total.filter(|t| t.is_finite());
        match &self.mode {
            InputMode::Sync(_) => self
                .notifier
                .as_ref()
                .is_some_and(|n| n.progress(progress, total, message.map(str::to_owned))),
            InputMode::Task(task) => match Progress::new(progress, total) {
                Some(progress) => task.status.progress(
                    &task.port,
                    &task.scope,
                    &task.task_id,
                    task.lease,
                    progress,
                    message.map(str::to_owned),
                ),
                None => false,
            },
        }
    }

    /// Whether a log message at `level` would reach the client: the request carried
    /// `io.modelcontextprotocol/logLevel` at or below `level` (never in a task).
    pub fn logs(&self, level: LogLevel) -> bool {
        self.notifier.as_ref().is_some_and(|n| n.logs(level))
    }

    /// Sends a log message (`notifications/message {level, logger?, data}`) on the request's
    /// SSE stream when [`logs`](Self::logs) allows it. Returns whether it was queued.
    pub fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool {
        self.notifier
            .as_ref()
            .is_some_and(|n| n.log(level, logger.map(str::to_owned), data))
    }

    /// The task id: stable across every run of the task, so a tool that is re-run after a
    /// crash ([`Recovery::Rerun`](crate::Recovery)) can hand it to external systems to
    /// deduplicate its side effects. `None` in a synchronous call.
    pub fn idempotency_key(&self) -> Option<&str> {
        match &self.mode {
            InputMode::Task(task) => Some(task.task_id.as_str()),
            InputMode::Sync(_) => None,
        }
    }

    /// Which run of the task this is: 1 for the first, one more for each re-run that started
    /// after its worker died or its node stopped ([`Recovery::Rerun`](crate::Recovery)), a
    /// restart while the task was parked for input included; a take-over that never started
    /// the tool (its node stopped first) does not count. Always 1 in a synchronous call.
    pub fn attempt(&self) -> u32 {
        match &self.mode {
            InputMode::Task(task) => task.lease.attempt,
            InputMode::Sync(_) => 1,
        }
    }

    /// The fencing token of this run: strictly greater for every later run of the task, so an
    /// external system that remembers the highest token it saw can refuse writes of a run that
    /// was superseded (a paused process resuming after its task was taken over). `None` in a
    /// synchronous call.
    pub fn fencing_token(&self) -> Option<u64> {
        match &self.mode {
            InputMode::Task(task) => Some(task.lease.generation),
            InputMode::Sync(_) => None,
        }
    }

    /// Whether this run is a task (as opposed to a synchronous call).
    pub fn is_task(&self) -> bool {
        matches!(self.mode, InputMode::Task(_))
    }

    /// Asks the client for input under `key` and returns its checked answer.
    ///
    /// Prefer the typed forms [`elicit_as`](Self::elicit_as), [`elicit`](Self::elicit),
    /// [`elicit_url`](Self::elicit_url), [`sample`](Self::sample) and
    /// [`list_roots`](Self::list_roots).
    ///
    /// If the starting request's `inputResponses` already answer `key`, that answer is checked
    /// against `request` and returned. Otherwise the request must need only capabilities the
    /// starting request declared (`tasks_core::input` has the table), or this fails at once
    /// with -32021 and `data.requiredCapabilities` and nothing is surfaced to the client. Then:
    /// * in a synchronous call, the request is recorded and [`ToolError::InputRequired`] is
    ///   returned; the call answers with `input_required` listing every request asked so far.
    ///   The client's retry runs the handler again from the start with the answers, so
    ///   whatever the handler did before asking happens once per round: ask first, act after;
    /// * in a task, an answer the task already stored for `key` is returned without asking
    ///   again when `request` is the request it answered (a re-run after a crash replays the
    ///   answers of earlier runs: ask with the same keys and requests); otherwise the task
    ///   moves to `input_required` with `key` in `inputRequests` and the
    ///   call waits (without holding a worker slot) until `tasks/update` answers `key`. Several
    ///   keys can be pending at once (call `input` concurrently, e.g. with `tokio::join!`).
    ///
    /// # Errors
    /// Propagate them with `?`: a task then ends `failed` with the error, a synchronous call
    /// answers with it.
    /// * -32021 `Missing required client capability` for an undeclared capability;
    /// * -32603 `Tool made a malformed input request` for a request no client can answer
    ///   (unknown method, elicitation without `message`, …);
    /// * -32602 `Invalid input response for <key>: …` when an answer carried by the starting
    ///   request does not fit `request`;
    /// * [`ToolError::InputRequired`] (synchronous call), [`ToolError::Cancelled`] when the task
    ///   is cancelled while parked, -32603 when the key was already used for another request in
    ///   this task.
    pub async fn input(
        &self,
        key: impl Into<String>,
        request: InputRequest,
    ) -> Result<InputResponse, ToolError> {
        let key = key.into();
        let needs = request.needs().map_err(|_| malformed())?;
        // An answer the client already gave is used: that asks nothing of it.
        if let Some(answer) = self.input_responses().and_then(|r| r.get(&key)) {
            return request
                .check_response(answer)
                .map_err(|reason| reason.to_error(&key).into());
        }
        if let Some(missing) = missing_capabilities(self.client_capabilities(), needs) {
            return Err(missing.into());
        }
        match &self.mode {
            InputMode::Sync(sync) => {
                crate::lock::lock(&sync.asked).insert(key, request);
                Err(ToolError::InputRequired)
            }
            InputMode::Task(task) => task.park(key, request, &self.cancel).await,
        }
    }

    /// Asks the user to fill in a form (`elicitation/create`, form mode) under `key`.
    /// `requested_schema` is the form's restricted JSON Schema; an accepted answer matches it.
    /// Needs `elicitation` (form mode) declared. Errors as for [`input`](Self::input).
    /// [`elicit_as`](Self::elicit_as) derives the schema from a Rust type and deserializes
    /// the answer into it.
    pub async fn elicit(
        &self,
        key: impl Into<String>,
        message: impl Into<String>,
        requested_schema: Value,
    ) -> Result<ElicitAnswer, ToolError> {
        let request = InputRequest::elicit_form(message, requested_schema);
        expect_elicit(self.input(key, request).await?)
    }

    /// Asks the user to fill in the form of the Rust type `T` (`elicitation/create`, form mode)
    /// under `key`, and returns the answer with its content deserialized into `T`.
    ///
    /// `T` is a `#[derive(Deserialize, JsonSchema)]` struct of primitive fields that the tool
    /// declared with [`Tool::asks::<T>()`](crate::Tool::asks): the declaration generates the
    /// form's `requestedSchema` from `T` once, and panics when the tool is built for a type a
    /// form cannot carry (a nested struct, a list of strings, …), so a wrong type stops the
    /// server at start-up instead of failing a call. [`Elicited`](crate::Elicited) lists
    /// what a form type may hold and the schema each field becomes.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use tasks_runtime::Elicited;
    /// use tasks_runtime::{text_result, Tool};
    ///
    /// /// How to ship the order.
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Shipping {
    ///     /// Deliver to this address.
    ///     address: String,
    ///     /// How fast.
    ///     speed: Speed,
    ///     /// Wrap it as a gift.
    ///     #[serde(default)]
    ///     gift: bool,
    /// }
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// #[serde(rename_all = "lowercase")]
    /// enum Speed { Standard, Express }
    ///
    /// let tool = Tool::new("ship", "Ships the order", |ctx| async move {
    ///     // requestedSchema: {"type": "object", "properties": {
    ///     //   "address": {"type": "string", "description": "Deliver to this address."},
    ///     //   "gift": {"type": "boolean", "description": "Wrap it as a gift.", "default": false},
    ///     //   "speed": {"type": "string", "description": "How fast.", "enum": ["standard", "express"]}},
    ///     //   "required": ["address", "speed"]}
    ///     let text = match ctx.elicit_as::<Shipping>("shipping", "Where to?").await? {
    ///         Elicited::Accept(Shipping { address, speed: Speed::Express, .. }) => format!("Rushing to {address}"),
    ///         Elicited::Accept(Shipping { address, .. }) => format!("Shipping to {address}"),
    ///         Elicited::Decline | Elicited::Cancel => "Not shipped".to_owned(),
    ///     };
    ///     Ok(text_result(text))
    /// })
    /// .asks::<Shipping>();
    /// # let _ = tool;
    /// ```
    ///
    /// Everything else is as for [`elicit`](Self::elicit): needs `elicitation` (form mode)
    /// declared, parks a task until `tasks/update` answers (an MRTR `input_required` round in a
    /// synchronous call), replays a stored answer on a re-run, and checks an accepted answer's
    /// content against the form before the tool sees it. Keys the form does not name are then
    /// dropped from the content, and the rest is deserialized into `T`.
    ///
    /// # Errors
    /// Those of [`input`](Self::input) (-32021 for an undeclared capability, -32602 `Invalid
    /// input response for <key>: content does not match the requested schema` for content that
    /// breaks the form, [`ToolError::InputRequired`], [`ToolError::Cancelled`]), and:
    /// * -32603 `Tool asked with a form type it did not declare with Tool::asks` when the tool
    ///   did not declare `T` (checked first, whatever the client declared; logged with the
    ///   type's name at WARN);
    /// * -32602 `Invalid input response for <key>: content at <JSON Pointer> is not accepted by
    ///   the form's type` when content that fits the form does not deserialize into `T` (a
    ///   string the form accepts but `T`'s `Deserialize` refuses, such as a `"format": "date"`
    ///   that is no date). Never a panic, and never the client's values in the message.
    pub async fn elicit_as<T>(
        &self,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, ToolError>
    where
        T: JsonSchema + DeserializeOwned + 'static,
    {
        let Some(form) = self.forms.get::<T>() else {
            tracing::warn!(
                form_type = std::any::type_name::<T>(),
                "elicit_as with a form type the tool did not declare with Tool::asks"
            );
            return Err(ToolError::Rpc(tasks_core::JsonRpcError::internal(
                MESSAGE_UNDECLARED_FORM,
            )));
        };
        let key = key.into();
        let request = InputRequest::elicit_form(message, form.clone());
        Ok(
            match expect_elicit(self.input(key.as_str(), request).await?)? {
                ElicitAnswer::Accept(content) => {
                    Elicited::Accept(deserialize_answer(&key, form, content)?)
                }
                ElicitAnswer::Decline => Elicited::Decline,
                ElicitAnswer::Cancel => Elicited::Cancel,
            },
        )
    }

    /// Sends the user to `url` (`elicitation/create`, URL mode) under `key`; an accept says
    /// they went there. Needs `elicitation.url` declared. Errors as for [`input`](Self::input).
    pub async fn elicit_url(
        &self,
        key: impl Into<String>,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Result<ElicitAnswer, ToolError> {
        let request = InputRequest::elicit_url(message, url, elicitation_id);
        expect_elicit(self.input(key, request).await?)
    }

    /// Asks the client's model for a message (`sampling/createMessage`) under `key`. Needs
    /// `sampling` declared (and `sampling.tools` / `sampling.context` when the request uses
    /// them). Errors as for [`input`](Self::input).
    pub async fn sample(
        &self,
        key: impl Into<String>,
        request: SamplingRequest,
    ) -> Result<SamplingAnswer, ToolError> {
        match self.input(key, InputRequest::sample(request)).await? {
            InputResponse::Sampling(answer) => Ok(answer),
            _ => Err(malformed()),
        }
    }

    /// Asks for the client's roots (`roots/list`) under `key`. Needs `roots` declared. Errors
    /// as for [`input`](Self::input).
    pub async fn list_roots(&self, key: impl Into<String>) -> Result<Vec<Root>, ToolError> {
        match self.input(key, InputRequest::list_roots()).await? {
            InputResponse::Roots(roots) => Ok(roots),
            _ => Err(malformed()),
        }
    }

    /// Sets the task's `statusMessage` (what it is doing, e.g. `"Indexed 40 of 100 pages"`).
    /// Every change is a new revision, a store write and a `notifications/tasks`, so changes
    /// are coalesced: at most one is stored per `pollIntervalMs`, the latest one winning; a
    /// message set while another waits replaces it (and is written together with a progress
    /// report waiting too). Returns whether the message will be recorded: `false` in a
    /// synchronous call, which has no status (use [`progress`](Self::progress) there).
    pub fn set_status_message(&self, message: impl Into<String>) -> bool {
        match &self.mode {
            InputMode::Sync(_) => false,
            InputMode::Task(task) => {
                task.status.set(
                    &task.port,
                    &task.scope,
                    &task.task_id,
                    task.lease,
                    message.into(),
                );
                true
            }
        }
    }
}

fn expect_elicit(response: InputResponse) -> Result<ElicitAnswer, ToolError> {
    match response {
        InputResponse::Elicit(answer) => Ok(answer),
        _ => Err(malformed()),
    }
}

impl TaskInput {
    async fn park(
        &self,
        key: String,
        request: InputRequest,
        cancel: &CancellationToken,
    ) -> Result<InputResponse, ToolError> {
        let (sender, receiver) = oneshot::channel();
        let stored = self
            .port
            .request_input(
                &self.scope,
                &self.task_id,
                &self.lease,
                key,
                request,
                sender,
            )
            .await?;
        if let Some(answer) = stored {
            return Ok(answer);
        }
        // Parked: give the worker slot back so parked tasks do not limit running ones.
        self.parked.fetch_add(1, Ordering::SeqCst);
        let released = self.permit.lock().await.take();
        drop(released);
        let answer = tokio::select! {
            answer = receiver => answer.map_err(|_| ToolError::Cancelled),
            _ = cancel.cancelled() => Err(ToolError::Cancelled),
        };
        let still_parked = self.parked.fetch_sub(1, Ordering::SeqCst) - 1;
        let answer = answer?;
        // While another input of this task is outstanding the task stays `input_required` and
        // takes no slot: a client answering one key of several must not hold a worker (the
        // branch that resumed runs on until it parks or the last answer takes a slot back).
        if still_parked > 0 {
            return Ok(answer);
        }
        let mut slot = self.permit.lock().await;
        if slot.is_none() {
            let permit = tokio::select! {
                permit = self.slots.clone().acquire_owned() => permit.map_err(|_| ToolError::Cancelled)?,
                _ = cancel.cancelled() => return Err(ToolError::Cancelled),
            };
            *slot = Some(permit);
        }
        Ok(answer)
    }
}
