//! A request as plain data for the planner's rule tables: headers (name, value) and a JSON body
//! (or raw bytes), correct by default (`MCP-Protocol-Version`, `Mcp-Method`, the `Mcp-Name` of
//! the constructors that name something, and `params._meta`), bent by each case. It goes through
//! what the HTTP adapter calls for a POSTed message, `parse_message` then `plan_message`, and a
//! refusal becomes the wire answer the core makes of it (`tasks_core::jsonrpc::refusal`: the HTTP
//! status and the JSON-RPC error body), so each table asserts what the adapter would send.
//!
//! (`tasks-test-support`'s `Req` is the same idea for the adapter's tests, but it builds
//! `tasks-http` and tokio, which tasks-core's tests do not.)

use serde_json::{json, Map, Value};
use tasks_core::input::ClientCapability;
use tasks_core::plan::{
    param_headers, parse_message, plan_message, ParamHeader, Plan, Planned, ServerView, StateKey,
    ToolRules,
};
use tasks_core::{JsonObject, TaskPolicy, Timestamp};

pub(crate) const VERSION: &str = "2026-07-28";
pub(crate) const TASKS: &str = "io.modelcontextprotocol/tasks";
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

const NOW: Timestamp = Timestamp::from_unix_millis(1_800_000_000_000);

/// A tool of [`Server`]: its `Mcp-Param-*` headers and task policy; it needs no client
/// capability, and an integer-typed argument that is not an integer fails its schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RuleTool {
    pub(crate) name: &'static str,
    headers: Vec<ParamHeader>,
    policy: TaskPolicy,
}

impl ToolRules for RuleTool {
    fn param_headers(&self) -> &[ParamHeader] {
        &self.headers
    }
    fn policy_for(&self, _params: &JsonObject) -> TaskPolicy {
        self.policy
    }
    fn client_needs(&self) -> &[ClientCapability] {
        &[]
    }
    fn validate_arguments(&self, arguments: &JsonObject) -> Result<(), String> {
        match arguments.get("count") {
            Some(count) if !count.is_i64() => Err("Invalid arguments at /count".into()),
            _ => Ok(()),
        }
    }
}

/// The server of the tables, with the tools the adapter's tests use under the same names:
/// `sync_echo` (synchronous), `interview` (optional task) and `regional` (optional task,
/// mirroring `region`, `count` and `dry` in `Mcp-Param-Region`, `-Count` and `-Dry`). It
/// offers no prompts, resources or completion, as the adapter's test dispatcher does not.
pub(crate) struct Server {
    tools: Vec<RuleTool>,
    key: StateKey,
}

pub(crate) fn server() -> Server {
    let regional = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry"},
        "note": {"type": "string"}}});
    let tool = |name, headers, policy| RuleTool {
        name,
        headers,
        policy,
    };
    Server {
        tools: vec![
            tool("sync_echo", Vec::new(), TaskPolicy::Sync),
            tool("interview", Vec::new(), TaskPolicy::Optional),
            tool(
                "regional",
                param_headers(regional.as_object().unwrap()).unwrap(),
                TaskPolicy::Optional,
            ),
        ],
        key: StateKey::from_bytes([5; 32]),
    }
}

impl ServerView for Server {
    type Tool = RuleTool;

    fn tool(&self, name: &str) -> Option<RuleTool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }
    fn state_key(&self) -> &StateKey {
        &self.key
    }
}

/// A request as plain data.
#[derive(Clone, Debug)]
pub(crate) struct Req {
    /// `(name, value)`, in order; names match ASCII-case-insensitively, as in HTTP.
    pub(crate) headers: Vec<(&'static str, Vec<u8>)>,
    /// The JSON-RPC message.
    pub(crate) body: Value,
    /// Bytes sent instead of `body`, when set.
    raw: Option<Vec<u8>>,
}

impl Req {
    /// Request `method` (id 1, no params but `_meta`, no client capability) with its
    /// `MCP-Protocol-Version` and `Mcp-Method` headers.
    pub(crate) fn new(method: &str) -> Self {
        Req {
            headers: vec![
                ("mcp-protocol-version", VERSION.as_bytes().to_vec()),
                ("mcp-method", method.as_bytes().to_vec()),
            ],
            body: json!({"jsonrpc": "2.0", "id": 1, "method": method,
                         "params": {"_meta": {META_VERSION: VERSION, META_CAPS: {}}}}),
            raw: None,
        }
    }

    /// `tools/call` of `tool` with `arguments`, and `Mcp-Name: <tool>`.
    pub(crate) fn call(tool: &str, arguments: Value) -> Self {
        Req::new("tools/call")
            .param("name", json!(tool))
            .param("arguments", arguments)
            .header("mcp-name", tool)
    }

    /// Task method `method` on `task_id`, and `Mcp-Name: <task_id>`.
    pub(crate) fn task_method(method: &str, task_id: &str) -> Self {
        Req::new(method)
            .param("taskId", json!(task_id))
            .header("mcp-name", task_id)
    }

    /// `tasks/get` of `task_id`.
    pub(crate) fn get(task_id: &str) -> Self {
        Req::task_method("tasks/get", task_id)
    }

    /// `tasks/cancel` of `task_id`.
    pub(crate) fn cancel(task_id: &str) -> Self {
        Req::task_method("tasks/cancel", task_id)
    }

    /// `tasks/update` of `task_id` answering `responses`.
    pub(crate) fn update(task_id: &str, responses: Value) -> Self {
        Req::task_method("tasks/update", task_id).param("inputResponses", responses)
    }

    /// `subscriptions/listen` with `notifications`.
    pub(crate) fn listen(notifications: Value) -> Self {
        Req::new("subscriptions/listen").param("notifications", notifications)
    }

    /// Sets the id.
    pub(crate) fn id(mut self, id: Value) -> Self {
        self.body["id"] = id;
        self
    }

    fn params(&mut self) -> &mut Map<String, Value> {
        self.body["params"].as_object_mut().expect("params object")
    }

    /// Sets one param.
    pub(crate) fn param(mut self, key: &str, value: Value) -> Self {
        self.params().insert(key.into(), value);
        self
    }

    /// Declares one client capability.
    pub(crate) fn cap(mut self, key: &str, value: Value) -> Self {
        self.body["params"]["_meta"][META_CAPS][key] = value;
        self
    }

    /// Declares the Tasks extension.
    pub(crate) fn tasks(self) -> Self {
        self.cap("extensions", json!({TASKS: {}}))
    }

    /// Declares `elicitation: {}`.
    pub(crate) fn elicitation(self) -> Self {
        self.cap("elicitation", json!({}))
    }

    /// Sets the version in both the header and `_meta`.
    pub(crate) fn version(mut self, version: &str) -> Self {
        self.body["params"]["_meta"][META_VERSION] = json!(version);
        self.header("mcp-protocol-version", version)
    }

    /// Replaces `params._meta` (any JSON value).
    pub(crate) fn meta(mut self, meta: Value) -> Self {
        self.params().insert("_meta".into(), meta);
        self
    }

    /// Sends `params` without `_meta`.
    pub(crate) fn no_meta(mut self) -> Self {
        self.params().remove("_meta");
        self
    }

    /// Sets (replaces) header `name`.
    pub(crate) fn header(mut self, name: &'static str, value: impl AsRef<[u8]>) -> Self {
        self.set_header(name, value);
        self
    }

    /// Sets (replaces) header `name`, in place.
    pub(crate) fn set_header(&mut self, name: &'static str, value: impl AsRef<[u8]>) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name, value.as_ref().to_vec()));
    }

    /// Adds one more value of header `name`.
    pub(crate) fn append(mut self, name: &'static str, value: impl AsRef<[u8]>) -> Self {
        self.headers.push((name, value.as_ref().to_vec()));
        self
    }

    /// Removes header `name`.
    pub(crate) fn without(mut self, name: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    /// Sends these bytes as the body.
    pub(crate) fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.raw = Some(body.into());
        self
    }

    /// Sends this JSON value as the body.
    pub(crate) fn body_json(mut self, body: Value) -> Self {
        self.body = body;
        self.raw = None;
        self
    }

    /// The body as sent.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        match &self.raw {
            Some(raw) => raw.clone(),
            None => serde_json::to_vec(&self.body).unwrap(),
        }
    }

    /// The headers as the planner reads them.
    pub(crate) fn head(&self) -> Vec<(&str, &[u8])> {
        self.headers
            .iter()
            .map(|(n, v)| (*n, v.as_slice()))
            .collect()
    }

    /// The plan for this request on [`server`], as the adapter makes it.
    pub(crate) fn plan(&self) -> Plan<RuleTool> {
        match parse_message(&self.bytes()) {
            Err(failure) => Plan::Reject {
                id: failure.id,
                error: failure.error,
            },
            Ok(message) => plan_message(self.head().as_slice(), message, &server(), "alice", NOW),
        }
    }

    /// The planned request; panics on a refusal or a notification.
    pub(crate) fn planned(&self) -> Planned<RuleTool> {
        match self.plan() {
            Plan::Run(planned) => planned,
            other => panic!("expected a plan to run, got {other:?}"),
        }
    }

    /// Asserts a refusal echoing the request id, answered `status` with `code` and `message`;
    /// returns the JSON-RPC error object (for its `data`).
    pub(crate) fn error(&self, status: u16, code: i64, message: &str) -> Value {
        let (got, body) = wire(self.plan());
        assert_eq!(body["id"], self.body["id"], "id echoed: {body}");
        assert_error(got, &body, status, code, message)
    }

    /// Asserts a refusal without an id (the message could not be read).
    pub(crate) fn anonymous_error(&self, status: u16, code: i64, message: &str) -> Value {
        let (got, body) = wire(self.plan());
        assert!(body.get("id").is_none(), "no id: {body}");
        assert_error(got, &body, status, code, message)
    }
}

/// The wire answer of a refusal: the HTTP status and the JSON-RPC error response.
pub(crate) fn wire<T: std::fmt::Debug>(plan: Plan<T>) -> (u16, Value) {
    match plan {
        Plan::Reject { id, error } => {
            let (status, body) = tasks_core::jsonrpc::refusal(id.as_ref(), &error);
            (status, serde_json::from_slice(&body).expect("JSON"))
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Asserts the error response `body`, answered `got`, is `status`, `code` and `message`, with
/// no `result`; returns the error object.
fn assert_error(got: u16, body: &Value, status: u16, code: i64, message: &str) -> Value {
    assert!(body.get("result").is_none(), "{body}");
    assert_eq!(
        (
            got,
            body["error"]["code"].as_i64(),
            body["error"]["message"].as_str()
        ),
        (status, Some(code), Some(message)),
        "{body}"
    );
    body["error"].clone()
}

/// `text` in the `Mcp-Name` base64 form.
pub(crate) fn b64(text: &str) -> String {
    use base64::Engine as _;
    format!(
        "=?base64?{}?=",
        base64::engine::general_purpose::STANDARD.encode(text)
    )
}
