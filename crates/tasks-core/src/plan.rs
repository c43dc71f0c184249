//! The request planner: one message in, everything the protocol decides about it out, before
//! anything runs (the shape of quinn-proto's `Endpoint::handle`: data and time in, a decision
//! out; no IO, no clock, no randomness).
//!
//! [`plan`] takes the request head ([`HeaderSource`]), the body, a [`ServerView`] (the tools'
//! rules and the `requestState` key), the caller's scope and the time, and answers a [`Plan`]:
//!
//! * [`Plan::Accepted`] for a notification (HTTP 202, no body);
//! * [`Plan::Reject`] with the JSON-RPC error and the id to echo;
//! * [`Plan::Run`] with the validated request and the [`Action`] to carry out.
//!
//! The plan carries what it resolved: a `tools/call` holds the server's handle on the tool it
//! found ([`ServerView::Tool`]), so nothing looks the tool up again by name, and the arguments
//! moved out of the request, never copied on their way to a task's work.
//!
//! Order: admission ([`admit`], steps 3–11); the Tasks
//! declaration's settings (-32602 for any setting); then per method: `tools/list` (a cursor is
//! -32602), `tools/call` ([`plan_call`]: tool lookup, then its step order), the task methods
//! ([`crate::params::plan_task_method`]), `subscriptions/listen` ([`ListenFilter::parse`]),
//! prompts, resources and completion ([`crate::catalog::parse`]; a method of a feature the
//! server does not offer, [`ServerView::offers`], is -32601 at admission step 10).
//! What needs the store (task lookup, which listen ids the caller may see) follows the plan.
//!
//! [`plan`] first tries [`plan_typed`], which plans the requests served most (`tasks/get`,
//! `tasks/cancel`, `tools/call`) from typed fields borrowed from the body, without a
//! [`Value`] tree of their params, and only when every step above passes; whatever it declines
//! (any error included) takes the order above, so it answers nothing differently.

// The planner's parts, used from here: admission, `tools/call`, task params, MRTR state and
// the `Mcp-Param-*` headers of tool parameters.
pub use crate::admission::{
    admit, parse_envelope, parse_message, Admitted, Envelope, EnvelopeError, HeaderSource, Message,
    Response,
};
pub use crate::call::{
    into_arguments, parse_call, plan_call, tool_error_result, CallContext, CallParams, CallPlan,
    ToolRules,
};
pub use crate::mrtr::{
    issue, verify, Binding, RequestState, StateKey, NONCE_BYTES, STATE_LIFETIME_MS,
};
pub use crate::param_headers::{
    check_param_headers, mirror, param_headers, InvalidAnnotation, ParamHeader, ParamKind,
};
pub use crate::params::{
    parse_task_ref, parse_update, plan_legacy_task_method, plan_task_method, plan_task_request,
    TaskAction, TaskRef, UpdateParams,
};

use crate::admission::{admit_offering, admit_typed, TypedAdmitted};
use crate::call::plan_call_as;
use crate::params::plan_task_ref;

use serde_json::Value;

use crate::catalog::{self, CatalogRequest, StateCheck};
use crate::error::McpError;
use crate::listen::ListenFilter;
use crate::method::{Feature, Method};
use crate::negotiation::RequestMeta;
use crate::time::Timestamp;
use crate::JsonObject;

/// What the planner needs to know of the server: configuration, no state.
pub trait ServerView {
    /// The server's handle on one of its tools (`tasks-http` uses `Arc<tasks_runtime::Tool>`):
    /// the planner reads its rules, and a planned call carries it ([`Action::Call`]).
    type Tool: ToolRules;
    /// Tool `name`, if the server has it.
    fn tool(&self, name: &str) -> Option<Self::Tool>;
    /// The key signing `requestState`.
    fn state_key(&self) -> &StateKey;
    /// Whether the server offers `feature` (prompts, resources, completion); the methods of a
    /// feature it does not offer are -32601. None by default.
    fn offers(&self, feature: Feature) -> bool {
        let _ = feature;
        false
    }
}

/// What to do with one message; `T` is the server's tool handle ([`ServerView::Tool`]).
// A plan is built and consumed once per request; boxing the large variant would add an
// allocation to every request instead of saving one copy.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Plan<T> {
    /// A notification: accepted, nothing to answer (HTTP 202).
    Accepted,
    /// Refused: answer `error`, echoing `id` when it could be read.
    Reject {
        /// The request id, when readable.
        id: Option<Value>,
        /// The error.
        error: McpError,
    },
    /// Carry out `action` for the request.
    Run(Planned<T>),
}

/// A request that passed every check the protocol makes before doing anything.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned<T> {
    /// The request id (a string or an integer).
    pub id: Value,
    /// The validated request `_meta`.
    pub meta: RequestMeta,
    /// Whether the request declared the Tasks extension.
    pub tasks_declared: bool,
    /// What to do.
    pub action: Action<T>,
}

/// The work a planned request asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Action<T> {
    /// Answer the `server/discover` result.
    Discover,
    /// Answer the `tools/list` result.
    ListTools,
    /// Call `tool` as `plan` says.
    Call {
        /// The tool the request named, as the server's [`ServerView::tool`] found it.
        tool: T,
        /// Its arguments, moved out of the request.
        arguments: JsonObject,
        /// Run now, create a task, or answer a tool error.
        plan: CallPlan,
    },
    /// `tasks/get`, `tasks/update` or `tasks/cancel`.
    Task(TaskAction),
    /// Open a `subscriptions/listen` stream with this filter.
    Listen(ListenFilter),
    /// A prompts, resources or completion request.
    Catalog(CatalogRequest),
}

/// Plans one message: see the module docs.
pub fn plan<H: HeaderSource + ?Sized, V: ServerView + ?Sized>(
    headers: &H,
    body: &[u8],
    view: &V,
    scope: &str,
    now: Timestamp,
) -> Plan<V::Tool> {
    if let Some(plan) = plan_typed(headers, body, view, scope, now) {
        return plan;
    }
    match parse_envelope(body) {
        Ok(envelope) => plan_envelope(headers, envelope, view, scope, now),
        Err(failure) => Plan::Reject {
            id: failure.id,
            error: failure.error,
        },
    }
}

/// [`plan`]'s fast path for the requests served most, `tasks/get`, `tasks/cancel` and
/// `tools/call`: the body read into typed fields borrowed from it, with no [`Value`] tree of its
/// params (a call's `arguments` excepted, which move on to the tool).
///
/// `Some` only for a request that passes every check, with the plan [`plan`] gives it
/// ([`Plan::Run`]); `None` for any other body: another method, an error at any step, a `_meta`
/// `logLevel` or `progressToken`, an MRTR retry (`inputResponses`, `requestState`), a tool
/// whose task policy depends on the call ([`ToolRules::fixed_policy`]), a malformed body.
/// [`parse_message`] and [`plan_message`] then decide it as every other request. A body it
/// plans carries a `_meta` protocol version, so it is never one of a 2025 session
/// ([`crate::sessions::route`] gives it [`crate::sessions::Era::Modern`]): a transport may plan
/// with it before routing by era.
pub fn plan_typed<H: HeaderSource + ?Sized, V: ServerView + ?Sized>(
    headers: &H,
    body: &[u8],
    view: &V,
    scope: &str,
    now: Timestamp,
) -> Option<Plan<V::Tool>> {
    let TypedAdmitted {
        id,
        method,
        params,
        meta,
    } = admit_typed(headers, body)?;
    let tasks_declared = meta.declares_tasks().ok()?;
    let action = match method {
        Method::TasksGet | Method::TasksCancel => {
            let task_id = params.task_id.as_deref()?;
            Action::Task(plan_task_ref(method, task_id, tasks_declared).ok()?)
        }
        Method::ToolsCall => {
            let arguments = match params.arguments {
                None | Some(Value::Null) => JsonObject::new(),
                Some(Value::Object(arguments)) => arguments,
                Some(_) => return None,
            };
            let name = params.name.as_deref()?;
            let tool = view.tool(name)?;
            let policy = tool.fixed_policy()?;
            let call = CallParams {
                name,
                arguments: &arguments,
                input_responses: None,
                request_state: None,
            };
            // The policy is fixed: no params object is asked for it.
            let no_params = JsonObject::new();
            let cx = CallContext {
                params: &no_params,
                meta: &meta,
                tasks_declared,
                scope,
                state_key: view.state_key(),
                now,
            };
            let plan = plan_call_as(&call, &tool, headers, cx, || policy).ok()?;
            Action::Call {
                tool,
                arguments,
                plan,
            }
        }
        _ => return None,
    };
    Some(Plan::Run(Planned {
        id,
        meta,
        tasks_declared,
        action,
    }))
}

/// [`plan_envelope`] for a message of the stateless path already parsed with
/// [`parse_message`] (which the era router,
/// [`crate::sessions::route`], reads first): a JSON-RPC response, which only a 2025 session
/// expects (the answer to a server-to-client request), is -32600 `method must be a string`,
/// as [`parse_envelope`] answers it.
pub fn plan_message<H: HeaderSource + ?Sized, V: ServerView + ?Sized>(
    headers: &H,
    message: Message,
    view: &V,
    scope: &str,
    now: Timestamp,
) -> Plan<V::Tool> {
    match message {
        Message::Envelope(envelope) => plan_envelope(headers, envelope, view, scope, now),
        Message::Response(response) => Plan::Reject {
            id: Some(response.id),
            error: McpError::InvalidRequest("method must be a string"),
        },
    }
}

/// [`plan`] for a message already parsed (step 3 done), e.g. by the era router
/// ([`crate::sessions::route`]).
pub fn plan_envelope<H: HeaderSource + ?Sized, V: ServerView + ?Sized>(
    headers: &H,
    envelope: Envelope,
    view: &V,
    scope: &str,
    now: Timestamp,
) -> Plan<V::Tool> {
    // Step 4: a notification is accepted without admission.
    let Some(id) = envelope.id.clone() else {
        return Plan::Accepted;
    };
    let request = match admit_offering(headers, envelope, |feature| view.offers(feature)) {
        Ok(request) => request,
        Err(error) => {
            return Plan::Reject {
                id: Some(id),
                error,
            }
        }
    };
    let reject = |error| Plan::Reject {
        id: Some(request.id.clone()),
        error,
    };
    let tasks_declared = match request.meta.declares_tasks() {
        Ok(declared) => declared,
        Err(error) => return reject(error),
    };
    let action = match request.method {
        Method::ServerDiscover => Ok(Action::Discover),
        // One page only: any cursor is one never issued.
        Method::ToolsList => catalog::refuse_cursor(&request.params).map(|()| Action::ListTools),
        Method::ToolsCall => plan_tool_call(
            request.params,
            &request.meta,
            tasks_declared,
            headers,
            view,
            scope,
            now,
        ),
        Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
            plan_task_request(request.method, &request.params, &request.meta).map(Action::Task)
        }
        Method::SubscriptionsListen => {
            ListenFilter::parse(&request.params, tasks_declared).map(Action::Listen)
        }
        Method::PromptsList
        | Method::PromptsGet
        | Method::ResourcesList
        | Method::ResourcesTemplatesList
        | Method::ResourcesRead
        | Method::CompletionComplete
        | Method::SkillsList
        | Method::SkillsGet
        | Method::ResourcesDirectoryRead => {
            let check = StateCheck {
                scope,
                key: view.state_key(),
                now,
            };
            catalog::parse(request.method, &request.params, Some(check)).map(Action::Catalog)
        }
    };
    match action {
        Ok(action) => Plan::Run(Planned {
            id: request.id,
            meta: request.meta,
            tasks_declared,
            action,
        }),
        Err(error) => reject(error),
    }
}

fn plan_tool_call<H: HeaderSource + ?Sized, V: ServerView + ?Sized>(
    params: Value,
    meta: &RequestMeta,
    tasks_declared: bool,
    headers: &H,
    view: &V,
    scope: &str,
    now: Timestamp,
) -> Result<Action<V::Tool>, McpError> {
    let (tool, plan) = {
        let call = parse_call(&params)?;
        let tool = view.tool(call.name).ok_or_else(McpError::unknown_tool)?;
        let no_params = JsonObject::new();
        let cx = CallContext {
            params: params.as_object().unwrap_or(&no_params),
            meta,
            tasks_declared,
            scope,
            state_key: view.state_key(),
            now,
        };
        let plan = plan_call(&call, &tool, headers, cx)?;
        (tool, plan)
    };
    Ok(Action::Call {
        tool,
        arguments: into_arguments(params),
        plan,
    })
}
