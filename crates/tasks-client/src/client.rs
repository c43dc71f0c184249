//! [`Client`]: one MCP 2026-07-28 endpoint, its credentials and input handler; discovery,
//! `tools/list` and `tools/call` with MRTR rounds.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tasks_core::plan::{mirror, param_headers};
use tasks_core::protocol::PROTOCOL_VERSION;
use tasks_core::wire::{
    CreateTaskResult, DiscoverResult, InputRequiredResult, ResultType, ToolEntry,
};
use tasks_core::{JsonObject, TaskId};

use crate::error::ClientError;
use crate::execution::Execution;
use crate::handler::{answer_all, declared, InputHandler};
use crate::listing::{Caching, Listing};
use crate::outcome::ToolResult;
use crate::shared::{KnownTool, Shared};
use crate::task::{TaskCall, TaskHandle};
use crate::transport::Connection;

/// The most pages one listing reads (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`, `skills/list`, `resources/directory/read`, following
/// `nextCursor`); a longer list is
/// [`ClientError::Malformed`].
pub const MAX_TOOL_PAGES: usize = 20;

/// The most items (tools, prompts, resources, templates, skills, directory entries) one
/// listing keeps; more is [`ClientError::Malformed`] (with [`MAX_TOOL_PAGES`], this bounds what
/// a hostile server can make the client hold).
pub const MAX_TOOLS: usize = 10_000;

/// How long the default HTTP client tries to connect before giving up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most MRTR `input_required` rounds one `tools/call` or `prompts/get` may take before the
/// client gives up (a server asking forever is a server bug).
pub const MAX_INPUT_ROUNDS: usize = 16;

/// A client of one MCP 2026-07-28 endpoint. Cheap to clone (shared state).
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.shared.fmt(f)
    }
}

/// Builds a [`Client`]: [`Client::builder`], then [`ClientBuilder::connect`].
#[derive(Default)]
pub struct ClientBuilder {
    url: String,
    bearer: Option<String>,
    handler: Option<Arc<dyn InputHandler>>,
    http: Option<reqwest::Client>,
    client_info: Option<(String, String)>,
    request_timeout: Option<Duration>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("url", &self.url)
            .field("bearer", &self.bearer.as_ref().map(|_| "<redacted>"))
            .field("handler", &self.handler.is_some())
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// Sends `Authorization: Bearer <token>` with every request.
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// Answers the server's input requests with `handler`, and declares its capabilities.
    /// Without one, no input capability is declared and a server needing input refuses the
    /// call (-32021).
    pub fn input_handler(mut self, handler: impl InputHandler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// Bounds each request (not a `subscriptions/listen` stream), from sending to the whole
    /// answer; a request that takes longer fails as [`ClientError::Transport`] (retryable).
    /// Default: none, since a synchronous tool may run long; [`SettleOptions::deadline`]
    /// bounds a whole wait.
    ///
    /// [`SettleOptions::deadline`]: crate::SettleOptions::deadline
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// Uses `http` (proxies, TLS roots, timeouts) instead of the default `reqwest::Client`
    /// (which gives up connecting after [`CONNECT_TIMEOUT`]).
    pub fn http_client(mut self, http: reqwest::Client) -> Self {
        self.http = Some(http);
        self
    }

    /// The `clientInfo` sent in every request's `_meta` (default: this crate's name and
    /// version).
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_info = Some((name.into(), version.into()));
        self
    }

    /// Checks the URL (`http://` or `https://`, with a host) and the bearer token (a valid
    /// header value).
    ///
    /// # Errors
    /// [`ClientError::InvalidArgument`] naming what is wrong (never the token itself).
    pub fn check(&self) -> Result<(), ClientError> {
        let url = reqwest::Url::parse(&self.url).map_err(|error| {
            ClientError::InvalidArgument(format!("{:?} is not a URL: {error}", self.url))
        })?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(ClientError::InvalidArgument(format!(
                "{:?} is not an http:// or https:// URL",
                self.url
            )));
        }
        if let Some(token) = &self.bearer {
            reqwest::header::HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                ClientError::InvalidArgument(
                    "the bearer token has characters a header cannot carry".into(),
                )
            })?;
        }
        Ok(())
    }

    /// The client, without asking the server anything.
    pub fn build(self) -> Client {
        let (name, version) = self.client_info.unwrap_or_else(|| {
            (
                env!("CARGO_PKG_NAME").to_owned(),
                env!("CARGO_PKG_VERSION").to_owned(),
            )
        });
        let http = self.http.unwrap_or_else(|| {
            reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .build()
                .unwrap_or_default()
        });
        let connection = Connection::new(
            http,
            self.url,
            self.bearer,
            json!({"name": name, "version": version}),
            self.request_timeout,
        );
        let capabilities = declared(self.handler.as_deref());
        Client {
            shared: Arc::new(Shared {
                connection,
                handler: self.handler,
                capabilities,
                tools: Mutex::new(None),
            }),
        }
    }

    /// The client, after checking with `server/discover` that the server serves 2026-07-28.
    ///
    /// # Errors
    /// [`ClientError::InvalidArgument`] ([`ClientBuilder::check`]),
    /// [`ClientError::UnsupportedServerEra`] for a server of another era, or the error of the
    /// discovery request (unreachable, 401, …).
    pub async fn connect(self) -> Result<Client, ClientError> {
        self.check()?;
        let client = self.build();
        client.discover().await?;
        Ok(client)
    }
}

impl Client {
    /// A builder for the endpoint at `url` (e.g. `http://127.0.0.1:3000/mcp`).
    pub fn builder(url: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            url: url.into(),
            ..ClientBuilder::default()
        }
    }

    /// Connects to `url` with no credentials and no input handler ([`ClientBuilder::connect`]).
    ///
    /// # Errors
    /// As [`ClientBuilder::connect`].
    pub async fn connect(url: impl Into<String>) -> Result<Client, ClientError> {
        Client::builder(url).connect().await
    }

    /// The endpoint URL.
    pub fn url(&self) -> &str {
        self.shared.url()
    }

    /// The `clientCapabilities` declared on every request.
    pub fn capabilities(&self) -> &JsonObject {
        &self.shared.capabilities
    }

    /// `server/discover`: the server's revisions, capabilities and identity.
    ///
    /// # Errors
    /// [`ClientError::UnsupportedServerEra`] when the server does not serve 2026-07-28: it
    /// answers -32022 (its `data.supported` kept), lists other `supportedVersions`, or answers
    /// like a session-based server (-32601, or a JSON-RPC error with HTTP 400, 404 or 405);
    /// [`ClientError::NoEndpoint`] for HTTP 404 or 405 without a JSON-RPC body (a URL that is
    /// not an MCP endpoint). Other failures as they come (transport, HTTP 400 or 401 without
    /// JSON-RPC as [`ClientError::Http`], another JSON-RPC error, …).
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        let era = |supported| ClientError::UnsupportedServerEra { supported };
        let result = match self
            .shared
            .request("server/discover", JsonObject::new(), Vec::new())
            .await
        {
            Ok(result) => result,
            // -32022 names what it serves; -32601 (no server/discover) or a refusal with 400,
            // 404 or 405 is how a session-based server answers a request without a session.
            Err(ClientError::Rpc { error, http_status })
                if error.code == -32022
                    || error.code == -32601
                    || matches!(http_status, 400 | 404 | 405) =>
            {
                return Err(era(ClientError::supported_versions(error.data.as_ref())));
            }
            // A 404 or 405 without JSON-RPC is a web server's answer for a path it does not
            // serve, or serves to other methods (`GET /healthz`): not MCP at all.
            Err(ClientError::Http {
                status: status @ (404 | 405),
                body,
            }) => return Err(ClientError::NoEndpoint { status, body }),
            Err(error) => return Err(error),
        };
        let discovered: DiscoverResult = serde_json::from_value(Value::Object(result))
            .map_err(|_| ClientError::malformed("not a server/discover result"))?;
        if !discovered
            .supported_versions
            .iter()
            .any(|v| v == PROTOCOL_VERSION)
        {
            return Err(era(discovered.supported_versions));
        }
        Ok(discovered)
    }

    /// `tools/list`: the server's tools, every page (at most [`MAX_TOOL_PAGES`] pages and
    /// [`MAX_TOOLS`] tools).
    ///
    /// # Errors
    /// The request's error, or [`ClientError::Malformed`].
    pub async fn list_tools(&self) -> Result<Vec<ToolEntry>, ClientError> {
        let tools: Vec<ToolEntry> = self.list_all("tools/list", "tools", "tool").await?.items;
        let known = tools
            .iter()
            .map(|tool| KnownTool {
                name: tool.name.clone(),
                headers: param_headers(&tool.input_schema).unwrap_or_default(),
            })
            .collect();
        *self.shared.lock_tools() = Some(Arc::new(known));
        Ok(tools)
    }

    /// Every page of the list `method` (following `nextCursor`, at most [`MAX_TOOL_PAGES`]
    /// pages and [`MAX_TOOLS`] items): the items under `key`, each read as a `T`, and the
    /// caching hints of the pages ([`Caching::merge`]). `what` names an item in errors.
    ///
    /// # Errors
    /// The request's error ([`ClientError::MethodNotFound`] for -32601), or
    /// [`ClientError::Malformed`] for a page that is not a list result, too many pages or
    /// items.
    pub(crate) async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
        what: &str,
    ) -> Result<Listing<T>, ClientError> {
        self.list_all_of(method, &JsonObject::new(), key, what)
            .await
    }

    /// [`Client::list_all`] of a list that takes `params` beside the cursor (the `uri` of
    /// `resources/directory/read`), sent with every page.
    ///
    /// # Errors
    /// As [`Client::list_all`].
    pub(crate) async fn list_all_of<T: DeserializeOwned>(
        &self,
        method: &str,
        base: &JsonObject,
        key: &str,
        what: &str,
    ) -> Result<Listing<T>, ClientError> {
        let mut items = Vec::new();
        let mut caching: Option<Caching> = None;
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_TOOL_PAGES {
            let mut params = base.clone();
            if let Some(cursor) = cursor.take() {
                params.insert("cursor".into(), Value::String(cursor));
            }
            let mut result = self.request_of(method, params, Vec::new()).await?;
            let page: Vec<T> = result
                .remove(key)
                .and_then(|page| serde_json::from_value(page).ok())
                .ok_or_else(|| ClientError::malformed(format!("not a {method} result")))?;
            items.extend(page);
            if items.len() > MAX_TOOLS {
                return Err(ClientError::malformed(format!(
                    "the server lists more than {MAX_TOOLS} {what}s"
                )));
            }
            let hints = Caching::of(&result);
            caching = Some(match caching {
                Some(seen) => seen.merge(hints),
                None => hints,
            });
            match result.get("nextCursor") {
                Some(Value::String(next)) => cursor = Some(next.clone()),
                None | Some(Value::Null) => break,
                Some(_) => {
                    return Err(ClientError::malformed(format!(
                        "not a {method} result (nextCursor)"
                    )))
                }
            }
        }
        if cursor.is_some() {
            return Err(ClientError::malformed(format!(
                "the {what} list has more than {MAX_TOOL_PAGES} pages"
            )));
        }
        Ok(Listing {
            items,
            caching: caching.unwrap_or_default(),
        })
    }

    /// Sends one request of a method the server may not offer: -32601 becomes
    /// [`ClientError::MethodNotFound`] naming `method`.
    pub(crate) async fn request_of(
        &self,
        method: &str,
        params: JsonObject,
        headers: Vec<(String, String)>,
    ) -> Result<JsonObject, ClientError> {
        self.shared
            .request(method, params, headers)
            .await
            .map_err(|error| ClientError::method_not_found(method, error))
    }

    /// Sends `method` with `params` and answers each MRTR `input_required` result with the
    /// input handler, retrying the request with `inputResponses` and the echoed
    /// `requestState`, at most [`MAX_INPUT_ROUNDS`] times: the first result that is not an
    /// input round, with its type (`complete` or `task`).
    ///
    /// # Errors
    /// As [`Client::request_of`]; the handler's error; [`ClientError::Malformed`] for a
    /// malformed result or too many rounds.
    pub(crate) async fn request_answering_input(
        &self,
        method: &str,
        params: JsonObject,
        headers: Vec<(String, String)>,
    ) -> Result<(ResultType, JsonObject), ClientError> {
        let mut retry: Option<(JsonObject, String)> = None;
        for _ in 0..=MAX_INPUT_ROUNDS {
            let mut params = params.clone();
            if let Some((responses, state)) = retry.take() {
                params.insert("inputResponses".into(), Value::Object(responses));
                params.insert("requestState".into(), Value::String(state));
            }
            let result = self.request_of(method, params, headers.clone()).await?;
            match result_type(&result)? {
                ResultType::InputRequired => {
                    let asked: InputRequiredResult = serde_json::from_value(Value::Object(result))
                        .map_err(|_| ClientError::malformed("not an InputRequiredResult"))?;
                    let responses =
                        answer_all(self.shared.handler(), &asked.input_requests).await?;
                    retry = Some((responses, asked.request_state));
                }
                other => return Ok((other, result)),
            }
        }
        Err(ClientError::malformed(format!(
            "the server asked for input more than {MAX_INPUT_ROUNDS} times"
        )))
    }

    /// The `Mcp-Param-*` headers of a call (`x-mcp-header` arguments), from the tool list,
    /// fetched once.
    async fn param_headers_for(
        &self,
        name: &str,
        arguments: &JsonObject,
    ) -> Result<Vec<(String, String)>, ClientError> {
        let cached = self.shared.lock_tools().clone();
        let tools = match cached {
            Some(tools) => tools,
            None => {
                self.list_tools().await?;
                self.shared.lock_tools().clone().unwrap_or_default()
            }
        };
        Ok(tools
            .iter()
            .find(|tool| tool.name == name)
            .map(|tool| mirror(&tool.headers, arguments))
            .unwrap_or_default())
    }

    /// `tools/call`: runs tool `name` with `arguments` (anything that serializes to a JSON
    /// object: `json!({"seconds": 5})`, a `serde_json::Map`, a struct).
    ///
    /// An MRTR `input_required` answer is answered by the input handler and the call retried
    /// with `inputResponses` and the echoed `requestState`, at most [`MAX_INPUT_ROUNDS`]
    /// times. The result is [`Execution::Complete`] for a synchronous answer, or
    /// [`Execution::Task`] when the server created a task (the Tasks extension is always
    /// declared).
    ///
    /// # Errors
    /// [`ClientError::InvalidArgument`] for arguments that are not an object; the server's
    /// refusal ([`ClientError::Rpc`]: -32602 for an unknown tool or bad params,
    /// -32021 for a missing client capability, …), the handler's error, or
    /// [`ClientError::Malformed`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
    ) -> Result<Execution, ClientError> {
        let arguments = match serde_json::to_value(arguments) {
            Ok(Value::Object(arguments)) => arguments,
            _ => {
                return Err(ClientError::InvalidArgument(
                    "tool arguments must serialize to a JSON object".into(),
                ))
            }
        };
        let headers = self.param_headers_for(name, &arguments).await?;
        let mut params = JsonObject::new();
        params.insert("name".into(), json!(name));
        params.insert("arguments".into(), Value::Object(arguments));
        let (kind, result) = self
            .request_answering_input("tools/call", params, headers)
            .await?;
        if kind != ResultType::Task {
            return Ok(Execution::Complete(ToolResult::new(result)));
        }
        let id = result
            .get("taskId")
            .map(Value::to_string)
            .unwrap_or_default();
        let created: CreateTaskResult =
            serde_json::from_value(Value::Object(result)).map_err(|_| {
                ClientError::malformed(format!("not a CreateTaskResult (its taskId: {id})"))
            })?;
        Ok(Execution::Task(TaskCall::created(
            self.shared.clone(),
            created,
        )))
    }

    /// The task `task_id` on this server, to get, cancel, watch or settle.
    pub fn task(&self, task_id: TaskId) -> TaskCall {
        TaskCall::new(self.shared.clone(), task_id)
    }

    /// The task of a saved [`TaskHandle`] (e.g. after the client restarted).
    ///
    /// # Errors
    /// [`ClientError::InvalidArgument`] when the handle belongs to another endpoint: its URL
    /// differs from this client's once both are parsed (so `HTTP://Host:80/mcp` is
    /// `http://host/mcp`, but `localhost` is not `127.0.0.1`).
    pub fn resume(&self, handle: &TaskHandle) -> Result<TaskCall, ClientError> {
        let parsed = |url: &str| reqwest::Url::parse(url).ok();
        let same = match (parsed(&handle.url), parsed(self.url())) {
            (Some(a), Some(b)) => a == b,
            _ => handle.url == self.url(),
        };
        if !same {
            return Err(ClientError::InvalidArgument(format!(
                "the task handle belongs to {}, not {}",
                handle.url,
                self.url()
            )));
        }
        Ok(self.task(handle.task_id.clone()))
    }
}

/// `resultType`, `complete` when absent (MCP 2026-07-28 basic, "ResultType").
fn result_type(result: &JsonObject) -> Result<ResultType, ClientError> {
    match result.get("resultType") {
        None => Ok(ResultType::Complete),
        Some(value) => serde_json::from_value(value.clone())
            .map_err(|_| ClientError::malformed("an unknown resultType")),
    }
}
