//! The transport-agnostic dispatcher: request head and body in, status and body out.
//!
//! The HTTP-only checks of the request head happen here ([`Dispatcher::admit_head`]:
//! `Host`/`Origin` 403, POST 405, `Content-Type` 415, the caller's scope or 401; the
//! transport adds 413 for a body over the limit); everything after is planned by
//! [`tasks_core::plan`] (steps 3–11 of the admission order in [`tasks_core::admission`], then
//! each method's checks), and this module carries the plan out on the runtime.
//! [`crate::server`] only moves bytes.

use std::sync::Arc;

use arc_swap::ArcSwap;
use bytes::Bytes;
use http::request::Parts;
use http::HeaderMap;
use serde_json::json;
use tasks_core::plan::parse_message;
use tasks_core::plan::StateKey;
use tasks_core::plan::{plan_message, plan_typed, Action, Plan, Planned};
use tasks_core::protocol::META_SERVER_INFO;
use tasks_core::sessions::{route, Era};
use tasks_core::wire::ResultMeta;
use tasks_core::{JsonObject, McpError, Timestamp};
use tasks_runtime::{Caller, Executor, Scope, ScopeKey, TaskRuntime, Tool};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::config::DispatchConfig;
use crate::head::Head;
use crate::methods;
use crate::metrics::{method_index, Metrics};
use crate::principal::Principal;
use crate::response::BodyError;
use crate::response::McpResponse;
use crate::sessions;
use crate::shared::{Shared, ToolsList, View};
use tasks_core::labels::{code_index, code_label, method_label, session_method_index};

/// Maps a request head to its caller's [`Principal`] (e.g. from `Authorization`), or rejects it
/// (HTTP 401 with a JSON-RPC error body). The empty principal is the shared scope.
pub type PrincipalFn = dyn Fn(&Parts) -> Result<Principal, McpError> + Send + Sync;

/// Whether the body is declared as JSON: no `Content-Type` (lenient), or exactly one whose media
/// type is `application/json` (parameters such as `charset` allowed).
fn json_content_type(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(http::header::CONTENT_TYPE).iter();
    match (values.next(), values.next()) {
        (None, _) => true,
        (Some(value), None) => value.to_str().is_ok_and(|text| {
            text.split(';')
                .next()
                .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
        }),
        (Some(_), Some(_)) => false,
    }
}

/// The dispatcher. Cheap to share behind an `Arc`.
pub struct Dispatcher {
    pub(crate) shared: Shared,
    principal_fn: Option<Arc<PrincipalFn>>,
    scope_key: ScopeKey,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("runtime", &self.shared.runtime)
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// A dispatcher serving `runtime`'s tools and tasks. `principal_fn` names the [`Principal`]
    /// of a request that carries none in its extensions; `scope_key` hashes either into the
    /// caller's scope.
    pub fn new(
        runtime: TaskRuntime,
        config: DispatchConfig,
        state_key: StateKey,
        scope_key: ScopeKey,
        principal_fn: Option<Arc<PrincipalFn>>,
    ) -> Self {
        let mut server_meta = JsonObject::new();
        server_meta.insert(
            META_SERVER_INFO.into(),
            json!({"name": config.server_name, "version": config.server_version}),
        );
        let tools = runtime.tools();
        let tools_list = tools.list_result(config.cache_ttl_ms, server_meta.clone());
        let metrics = Arc::new(Metrics::new(&runtime));
        let shutdown = CancellationToken::new();
        let sessions = sessions::table(config.sessions, &shutdown, runtime.entropy());
        let server_meta = Arc::new(ResultMeta::new(server_meta));
        Dispatcher {
            shared: Shared {
                executor: Executor::new(runtime.clone(), server_meta.clone(), state_key.clone()),
                runtime,
                config,
                server_meta,
                state_key,
                tools_list: ArcSwap::from_pointee(ToolsList {
                    tools,
                    result: Arc::new(tools_list),
                }),
                shutdown,
                metrics,
                sessions,
            },
            principal_fn,
            scope_key,
        }
    }

    /// Ends every open `subscriptions/listen` stream with its graceful-closure response
    /// (MCP 2026-07-28 subscriptions, "Graceful Closure"); listen requests arriving later close
    /// at once after their acknowledgement. The HTTP server calls this when it shuts down.
    pub fn close_streams(&self) {
        self.shared.shutdown.cancel();
    }

    /// The runtime behind this dispatcher.
    pub fn runtime(&self) -> &TaskRuntime {
        &self.shared.runtime
    }

    /// Steps 1–2 on the request head: `Host`/`Origin` (403), POST (405; with the session path on,
    /// a GET or DELETE carrying `Mcp-Session-Id` passes, and is 405 later unless it names a
    /// live session of the caller: [`ServerBuilder::sessions`](crate::ServerBuilder::sessions)), a `Content-Type`
    /// other than `application/json` (415; a missing one is accepted), then the caller: a
    /// [`Principal`] in the request extensions, else the principal function's (which may
    /// refuse: 401), hashed with the scope key into its scope; else the shared scope. Returns
    /// the caller, or the response to send without reading the body. The path is not checked: the dispatcher
    /// serves whatever path it is mounted at.
    ///
    /// # Errors
    /// The rejection response.
    pub fn admit_head(&self, parts: &Parts) -> Result<Caller, McpResponse> {
        if !self
            .shared
            .config
            .host_policy
            .allows(&parts.headers, &parts.uri)
        {
            return Err(McpResponse::error(None, &McpError::ForbiddenOrigin));
        }
        let post = parts.method == http::Method::POST;
        if !post && !sessions::may_name_session(&self.shared, parts) {
            return Err(McpResponse::error(None, &McpError::HttpMethodNotAllowed));
        }
        if post && !json_content_type(&parts.headers) {
            return Err(McpResponse::error(None, &McpError::UnsupportedMediaType));
        }
        // A GET or DELETE naming no live session of the caller is the 2026 answer, 405, given
        // by [`Dispatcher::session_request`] (where the session is looked up once).
        self.caller_of(parts)
    }

    /// The caller: see [`Dispatcher::admit_head`].
    fn caller_of(&self, parts: &Parts) -> Result<Caller, McpResponse> {
        if let Some(principal) = parts.extensions.get::<Principal>() {
            return Ok(self.scope_key.caller(principal));
        }
        match &self.principal_fn {
            None => Ok(Caller::shared()),
            Some(principal_of) => principal_of(parts)
                .map(|principal| self.scope_key.caller(&principal))
                .map_err(|error| McpResponse::error(None, &error)),
        }
    }

    /// Serves a GET or DELETE that passed [`Dispatcher::admit_head`]: a 2025 session's
    /// standalone stream, or the end of the session ([`crate::sessions`]).
    pub(crate) fn session_request(&self, parts: &Parts, scope: &Scope) -> McpResponse {
        crate::sessions::get_or_delete(&self.shared, parts, scope)
    }

    /// Handles one HTTP exchange in process: `parts` is the request head, `body` the collected
    /// body (or why it could not be collected).
    pub async fn handle_http(&self, parts: &Parts, body: Result<Bytes, BodyError>) -> McpResponse {
        let caller = match self.admit_head(parts) {
            Ok(caller) => caller,
            Err(response) => return response,
        };
        if parts.method != http::Method::POST {
            return self.session_request(parts, &caller.scope);
        }
        match body {
            Ok(body) => self.dispatch(&parts.headers, &body, caller).await,
            Err(error) => McpResponse::body_error(error),
        }
    }

    /// Handles one message (steps 3 onwards) for a caller already admitted
    /// ([`Dispatcher::admit_head`]): the
    /// core plans it ([`tasks_core::plan`]), this carries the plan out.
    pub async fn dispatch(&self, headers: &HeaderMap, body: &[u8], caller: Caller) -> McpResponse {
        let started = std::time::Instant::now();
        let method_at = method_index(headers);
        let method = method_label(method_at);
        // DEBUG, on the hot path: the method is one of a bounded set; the tool is recorded
        // only once the planner found it registered, the trace id only from a valid W3C
        // `traceparent`; nothing else of the body is recorded.
        let span = tracing::debug_span!(
            "mcp.request",
            method,
            tool = tracing::field::Empty,
            trace_id = tracing::field::Empty,
        );
        let (response, error, session_method) =
            self.answer(headers, body, caller).instrument(span).await;
        let took = started.elapsed();
        let method_at = session_method.unwrap_or(method_at);
        let method = method_label(method_at);
        tracing::debug!(
            method,
            code = code_label(code_index(error.as_ref().map(McpError::code))),
            status = response.status,
            duration_us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            "mcp request answered"
        );
        // Where every request's answer is counted: its code, and a store-unavailable refusal.
        self.shared
            .metrics
            .answered(method_at, error.as_ref(), took);
        response
    }

    /// The server's metrics (requests, listen streams, task lifecycle): encode them with
    /// [`Metrics::encode`] for a scrape, or use [`Dispatcher::encode_metrics`].
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.shared.metrics
    }

    /// Every metric as OpenMetrics text ([`crate::METRICS_CONTENT_TYPE`]), for a
    /// `GET /metrics` route of the host application. Reads the store's task counts first
    /// ([`TaskRuntime::refresh_status_counts`]).
    pub async fn encode_metrics(&self) -> String {
        self.shared.runtime.refresh_status_counts().await;
        self.shared.metrics.encode(&self.shared.runtime)
    }

    /// [`Dispatcher::dispatch`], the error the request was answered with (`None` for a result,
    /// an accepted notification or a stream), and for a message of a 2025 session its `method`
    /// label ([`session_method_index`]).
    async fn answer(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        caller: Caller,
    ) -> (McpResponse, Option<McpError>, Option<usize>) {
        let now = self.shared.runtime.now();
        let view = View {
            tools: self.shared.runtime.tools(),
            catalog: self.shared.runtime.catalog(),
            state_key: &self.shared.state_key,
        };
        // The hot requests are planned from typed fields of the body (never a 2025 session's:
        // they carry a `_meta` version); every other body is parsed into values, routed by
        // era, and planned.
        let typed = plan_typed(&Head(headers), body, &view, caller.scope.as_str(), now);
        let plan = match typed {
            Some(plan) => plan,
            None => {
                let message = match parse_message(body) {
                    Ok(message) => message,
                    Err(failure) => {
                        return (
                            McpResponse::error(failure.id.as_ref(), &failure.error),
                            Some(failure.error),
                            None,
                        );
                    }
                };
                if let (Some(sessions), Era::Session) =
                    (&self.shared.sessions, route(&Head(headers), &message))
                {
                    // Boxed, like every large branch below: the dispatch future is as large
                    // as its largest branch, and is moved as a whole (into its box, into the
                    // span's wrapper) on every request, whichever branch it takes.
                    let label = session_method_index(&message);
                    let (response, error) = Box::pin(sessions::post(
                        &self.shared,
                        sessions,
                        headers,
                        message,
                        caller,
                        &view,
                    ))
                    .await;
                    return (response, error, Some(label));
                }
                plan_message(&Head(headers), message, &view, caller.scope.as_str(), now)
            }
        };
        let (response, error) = match plan {
            Plan::Accepted => (McpResponse::accepted(), None),
            Plan::Reject { id, error } => (McpResponse::error(id.as_ref(), &error), Some(error)),
            Plan::Run(planned) => {
                let id = planned.id.clone();
                match self.run(planned, headers, &caller, now, view).await {
                    Ok(response) => (response, None),
                    Err(error) => (McpResponse::error(Some(&id), &error), Some(error)),
                }
            }
        };
        (response, error, None)
    }

    async fn run(
        &self,
        planned: Planned<Arc<Tool>>,
        headers: &HeaderMap,
        caller: &Caller,
        now: Timestamp,
        view: View<'_>,
    ) -> Result<McpResponse, McpError> {
        let View { tools, catalog, .. } = view;
        let Planned {
            id, meta, action, ..
        } = planned;
        if let Some(trace) = &meta.trace_parent {
            tracing::Span::current().record("trace_id", trace.trace_id());
        }
        match action {
            Action::Discover => Ok(methods::discover::handle(&self.shared, &id)),
            Action::ListTools => Ok(McpResponse::result(&id, &*self.shared.tools_list(&tools))),
            Action::Call {
                tool,
                arguments,
                plan,
            } => {
                tracing::Span::current().record("tool", tool.name());
                let call = tasks_runtime::PlannedCall {
                    id,
                    meta,
                    tool,
                    arguments,
                    now,
                };
                Box::pin(methods::tools::call(
                    &self.shared,
                    call,
                    plan,
                    headers,
                    caller,
                ))
                .await
            }
            Action::Task(action) => {
                methods::tasks::handle(&self.shared, &id, action, &caller.scope).await
            }
            Action::Catalog(request) => {
                let r = methods::catalog::Request {
                    catalog,
                    id,
                    meta,
                    headers,
                    caller,
                    now,
                };
                Box::pin(methods::catalog::handle(&self.shared, r, request)).await
            }
            Action::Listen(filter) => {
                Box::pin(methods::listen::handle(
                    &self.shared,
                    &id,
                    filter,
                    &caller.scope,
                ))
                .await
            }
        }
    }
}
