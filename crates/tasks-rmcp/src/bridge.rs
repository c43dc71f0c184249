//! [`TasksBridge`]: a [`TaskRuntime`] seen from an rmcp `ServerHandler`, and its builder.

use std::sync::Arc;

use rmcp::model::{Implementation, Tool as RmcpTool};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;
use tasks_core::plan::StateKey;
use tasks_core::protocol::META_SERVER_INFO;
use tasks_core::wire::ResultMeta;
use tasks_core::JsonObject;
use tasks_runtime::{Caller, Executor, Principal, Scope, ScopeKey, TaskRuntime, Tool};

use crate::convert;

/// Where the bridge finds the caller of a request, whose tasks it scopes.
#[derive(Debug, Clone)]
pub enum PrincipalSource {
    /// A [`Principal`] an authentication layer put into the HTTP request's extensions (rmcp's
    /// streamable HTTP server hands the request's `http::request::Parts` to every handler);
    /// a request without one is in the shared scope. The default.
    FromRequest,
    /// One principal for every request, e.g. the user a stdio server runs for.
    Fixed(Principal),
}

/// Builds a [`TasksBridge`]: [`TasksBridge::builder`].
#[derive(Debug)]
pub struct BridgeBuilder {
    runtime: TaskRuntime,
    secret: Option<Vec<u8>>,
    principal: PrincipalSource,
    server_info: Option<Implementation>,
}

impl BridgeBuilder {
    /// Sets the secret both bridge keys derive from: the key protecting MRTR `requestState`
    /// and the key hashing principals into scopes (`HMAC-SHA256`; no principal is stored).
    /// With a durable store, set it (the same on every restart and every node: load it with
    /// [`tasks_runtime::load_or_create_secret`]), or callers lose their tasks at a restart.
    /// By default every process draws its own.
    pub fn secret(mut self, secret: &[u8]) -> Self {
        self.secret = Some(secret.to_vec());
        self
    }

    /// Sets where the caller's principal comes from (default
    /// [`PrincipalSource::FromRequest`]).
    pub fn principal(mut self, source: PrincipalSource) -> Self {
        self.principal = source;
        self
    }

    /// Puts `io.modelcontextprotocol/serverInfo` into the `_meta` of the results the bridge
    /// builds (`CreateTaskResult`, `tasks/get`, the runtime's synchronous tool results). rmcp
    /// 3.11.0 adds it to some results it builds itself (`server/discover`, the listen result),
    /// not to a handler's own tool results. Use the `server_info` of your `get_info()`.
    pub fn server_info(mut self, info: Implementation) -> Self {
        self.server_info = Some(info);
        self
    }

    /// The bridge.
    ///
    /// # Panics
    /// Without a [`BridgeBuilder::secret`], when the runtime's entropy source cannot draw the
    /// keys (an operating system without a random source).
    pub fn build(self) -> TasksBridge {
        let (state_key, scope_key) = match &self.secret {
            Some(secret) => (StateKey::from_secret(secret), ScopeKey::from_secret(secret)),
            None => {
                let draw = || {
                    self.runtime
                        .entropy()
                        .bytes::<32>()
                        .expect("the runtime's entropy source draws the bridge's keys")
                };
                (StateKey::from_bytes(draw()), ScopeKey::from_bytes(draw()))
            }
        };
        let mut meta = JsonObject::new();
        if let Some(info) = &self.server_info {
            meta.insert(
                META_SERVER_INFO.into(),
                json!({"name": info.name, "version": info.version}),
            );
        }
        TasksBridge {
            inner: Arc::new({
                let server_meta = Arc::new(ResultMeta::new(meta));
                Inner {
                    executor: Executor::new(
                        self.runtime.clone(),
                        server_meta.clone(),
                        state_key.clone(),
                    ),
                    runtime: self.runtime,
                    state_key,
                    scope_key,
                    principal: self.principal,
                    server_meta,
                }
            }),
        }
    }
}

pub(crate) struct Inner {
    pub(crate) runtime: TaskRuntime,
    /// Carries out the planned task methods and task creations on `runtime`.
    pub(crate) executor: Executor,
    pub(crate) state_key: StateKey,
    pub(crate) scope_key: ScopeKey,
    pub(crate) principal: PrincipalSource,
    pub(crate) server_meta: Arc<ResultMeta>,
}

/// A [`TaskRuntime`] serving the Tasks extension (SEP-2663) from an rmcp `ServerHandler`:
/// the handler's `call_tool`, `get_task`, `update_task`, `cancel_task`, `on_custom_request`,
/// `accepted_subscription_filter` and `listen` call the bridge's methods of the same names
/// (the [`delegate_tasks!`](crate::delegate_tasks) macro writes all but `call_tool`). See the
/// [crate docs](crate) for a whole server.
///
/// Cheap to clone (an `Arc`): rmcp's stateless HTTP server builds a handler per request, so
/// keep one bridge and clone it into each.
#[derive(Clone)]
pub struct TasksBridge {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for TasksBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TasksBridge")
            .field("runtime", &self.inner.runtime)
            .field("principal", &self.inner.principal)
            .finish_non_exhaustive()
    }
}

impl TasksBridge {
    /// A builder of a bridge onto `runtime` (start the runtime's node yourself:
    /// [`TaskRuntime::start`]).
    pub fn builder(runtime: TaskRuntime) -> BridgeBuilder {
        BridgeBuilder {
            runtime,
            secret: None,
            principal: PrincipalSource::FromRequest,
            server_info: None,
        }
    }

    /// The runtime behind the bridge.
    pub fn runtime(&self) -> &TaskRuntime {
        &self.inner.runtime
    }

    /// Whether `name` is one of the runtime's tools: route its `tools/call` to
    /// [`TasksBridge::call_tool`].
    pub fn serves(&self, name: &str) -> bool {
        self.inner.runtime.tools().get(name).is_some()
    }

    /// The runtime's tools as rmcp tools, in registration order, for the handler's
    /// `list_tools` (beside its own).
    pub fn tools(&self) -> Vec<RmcpTool> {
        self.inner
            .runtime
            .tools()
            .iter()
            .filter_map(|tool| convert::rmcp_tool(tool).ok())
            .collect()
    }

    /// The tool `name` of the runtime, if any.
    pub fn tool(&self, name: &str) -> Option<Arc<Tool>> {
        self.inner.runtime.tools().get(name).cloned()
    }

    /// The scope of the request's caller: its principal ([`PrincipalSource`]) hashed with the
    /// bridge's scope key; the shared scope when there is none.
    pub fn scope(&self, cx: &RequestContext<RoleServer>) -> Scope {
        self.caller(cx).scope
    }

    /// The request's caller: its principal ([`PrincipalSource`]) and the scope the bridge's
    /// scope key hashes it into; [`Caller::shared`] when there is none. The principal reaches
    /// a tool as [`ToolContext::principal`](tasks_runtime::ToolContext::principal) (sealed in a
    /// task's work under the runtime's [`RuntimeConfig::principal_key`](tasks_runtime::RuntimeConfig::principal_key):
    /// give the runtime the key of the bridge's secret, `PrincipalKey::from_secret`, for a
    /// re-run after recovery to see it).
    pub fn caller(&self, cx: &RequestContext<RoleServer>) -> Caller {
        let principal = match &self.inner.principal {
            PrincipalSource::Fixed(principal) => Some(principal.clone()),
            PrincipalSource::FromRequest => cx
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Principal>())
                .or_else(|| cx.extensions.get::<Principal>())
                .cloned(),
        };
        match principal {
            Some(principal) => self.inner.scope_key.caller(&principal),
            None => Caller::shared(),
        }
    }
}
