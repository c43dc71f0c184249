//! [`Client`]: one MCP 2026-07-28 endpoint, its credentials and input handler; discovery,
//! `tools/list` and `tools/call` with MRTR rounds.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tasks_core::param_headers::{mirror, param_headers};
use tasks_core::protocol::PROTOCOL_VERSION;
use tasks_core::wire::{
    CreateTaskResult, DiscoverResult, InputRequiredResult, ResultType, ToolEntry, ToolsListResult,
};
use tasks_core::{JsonObject, TaskId};

use crate::error::ClientError;
use crate::execution::Execution;
use crate::handler::{answer_all, declared, InputHandler};
use crate::outcome::ToolResult;
use crate::shared::{KnownTool, Shared};
use crate::task::{TaskCall, TaskHandle};
use crate::transport::Connection;

/// How long the default HTTP client tries to connect before giving up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most MRTR `input_required` rounds one `tools/call` may take before the client gives up
/// (a server asking forever is a server bug).
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
    /// [`ClientError::UnsupportedServerEra`] for a server of another era, or the error of the
    /// discovery request (unreachable, 401, …).
    pub async fn connect(self) -> Result<Client, ClientError> {
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
    /// like a session-based server (a JSON-RPC error, or HTTP 400, 404 or 405). Other failures
    /// as they come (transport, HTTP 401, …).
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        let era = |supported| ClientError::UnsupportedServerEra { supported };
        let result = match self
            .shared
            .request("server/discover", JsonObject::new(), Vec::new())
            .await
        {
            Ok(result) => result,
            Err(ClientError::Rpc { error, http_status })
                if error.code == -32022 || !matches!(http_status, 401 | 403 | 429 | 500..) =>
            {
                return Err(era(ClientError::supported_versions(error.data.as_ref())));
            }
            Err(ClientError::Http {
                status: 400 | 404 | 405,
            }) => return Err(era(Vec::new())),
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

    /// `tools/list`: the server's tools.
    ///
    /// # Errors
    /// The request's error, or [`ClientError::Malformed`].
    pub async fn list_tools(&self) -> Result<Vec<ToolEntry>, ClientError> {
        let result = self
            .shared
            .request("tools/list", JsonObject::new(), Vec::new())
            .await?;
        let list: ToolsListResult = serde_json::from_value(Value::Object(result))
            .map_err(|_| ClientError::malformed("not a tools/list result"))?;
        let known = list
            .tools
            .iter()
            .map(|tool| KnownTool {
                name: tool.name.clone(),
                headers: param_headers(&tool.input_schema).unwrap_or_default(),
            })
            .collect();
        *self.shared.lock_tools() = Some(Arc::new(known));
        Ok(list.tools)
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

    /// `tools/call`: runs tool `name` with `arguments` (a JSON object).
    ///
    /// An MRTR `input_required` answer is answered by the input handler and the call retried
    /// with `inputResponses` and the echoed `requestState`, at most [`MAX_INPUT_ROUNDS`]
    /// times. The result is [`Execution::Complete`] for a synchronous answer, or
    /// [`Execution::Task`] when the server created a task (the Tasks extension is always
    /// declared).
    ///
    /// # Errors
    /// The server's refusal ([`ClientError::Rpc`]: -32602 for an unknown tool or bad params,
    /// -32021 for a missing client capability, …), the handler's error, or
    /// [`ClientError::Malformed`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: JsonObject,
    ) -> Result<Execution, ClientError> {
        let headers = self.param_headers_for(name, &arguments).await?;
        let mut retry: Option<(JsonObject, String)> = None;
        for _ in 0..=MAX_INPUT_ROUNDS {
            let mut params = JsonObject::new();
            params.insert("name".into(), json!(name));
            params.insert("arguments".into(), Value::Object(arguments.clone()));
            if let Some((responses, state)) = retry.take() {
                params.insert("inputResponses".into(), Value::Object(responses));
                params.insert("requestState".into(), Value::String(state));
            }
            let result = self
                .shared
                .request("tools/call", params, headers.clone())
                .await?;
            match result_type(&result)? {
                ResultType::Complete => return Ok(Execution::Complete(ToolResult::new(result))),
                ResultType::Task => {
                    let created: CreateTaskResult =
                        serde_json::from_value(Value::Object(result))
                            .map_err(|_| ClientError::malformed("not a CreateTaskResult"))?;
                    return Ok(Execution::Task(TaskCall::created(
                        self.shared.clone(),
                        created,
                    )));
                }
                ResultType::InputRequired => {
                    let asked: InputRequiredResult = serde_json::from_value(Value::Object(result))
                        .map_err(|_| ClientError::malformed("not an InputRequiredResult"))?;
                    let responses =
                        answer_all(self.shared.handler(), &asked.input_requests).await?;
                    retry = Some((responses, asked.request_state));
                }
            }
        }
        Err(ClientError::malformed(format!(
            "the server asked for input more than {MAX_INPUT_ROUNDS} times"
        )))
    }

    /// The task `task_id` on this server, to get, cancel, watch or settle.
    pub fn task(&self, task_id: TaskId) -> TaskCall {
        TaskCall::new(self.shared.clone(), task_id)
    }

    /// The task of a saved [`TaskHandle`] (e.g. after the client restarted).
    ///
    /// # Errors
    /// [`ClientError::Input`] when the handle belongs to another endpoint URL.
    pub fn resume(&self, handle: &TaskHandle) -> Result<TaskCall, ClientError> {
        if handle.url != self.url() {
            return Err(ClientError::Input(format!(
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
