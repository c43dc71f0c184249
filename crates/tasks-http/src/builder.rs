//! The public builder: register tools, set limits, bind, shut down.

use std::io;
use std::num::NonZeroU64;
use std::sync::Arc;

use http::request::Parts;
use tasks_core::McpError;
use tasks_runtime::store::{MemoryStore, Store};
use tasks_runtime::{
    LeaseConfig, Limits, ListChanges, Principal, PrincipalKey, RuntimeConfig, Scope, ScopeKey,
    TaskRuntime, Tool, ToolRegistry,
};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use std::convert::Infallible;
use std::task::{Context, Poll};

use http::{Request, Response};
use hyper::body::Incoming;

use crate::service::{not_found, HttpBody, McpHandle, McpService, ResponseFuture};

use crate::config::{DispatchConfig, SessionConfig};
use crate::dispatcher::{Dispatcher, PrincipalFn};
use tasks_core::plan::StateKey;

/// Default request body limit in bytes (1 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// Builds an MCP server with the Tasks extension.
///
/// ```no_run
/// use tasks_http::prelude::*;
///
/// /// What to report on.
/// #[derive(Deserialize, JsonSchema)]
/// struct Report {
///     /// The report's topic.
///     topic: String,
/// }
///
/// # async fn run() -> std::io::Result<()> {
/// let server = ServerBuilder::new("my-server", "1.0.0")
///     .tool(
///         // The inputSchema is generated from `Report`; arguments are checked before it runs.
///         Tool::typed("report", "Builds a long report", |_ctx, args: Report| async move {
///             Ok(text_result(format!("Report on {}", args.topic)))
///         })
///         .with_policy(TaskPolicy::Optional),
///     )
///     .bind("127.0.0.1:0")
///     .await?;
/// println!("{}", server.url());
/// server.shutdown().await;
/// # Ok(()) }
/// ```
pub struct ServerBuilder {
    tools: ToolRegistry,
    catalog: tasks_runtime::catalog::Catalog,
    runtime: RuntimeConfig,
    dispatch: DispatchConfig,
    max_body_bytes: usize,
    state_key: Option<StateKey>,
    scope_key: Option<ScopeKey>,
    principal_fn: Option<Arc<PrincipalFn>>,
    store: Option<Arc<dyn Store>>,
    drain_timeout: std::time::Duration,
    path: String,
    challenge: Option<http::HeaderValue>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("runtime", &self.runtime)
            .field("dispatch", &self.dispatch)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("drain_timeout", &self.drain_timeout)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// A builder for a server identifying itself as `name` `version` (serverInfo).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerBuilder {
            tools: ToolRegistry::new(),
            catalog: tasks_runtime::catalog::Catalog::new(),
            runtime: RuntimeConfig::default(),
            dispatch: DispatchConfig {
                server_name: name.into(),
                server_version: version.into(),
                ..DispatchConfig::default()
            },
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            state_key: None,
            scope_key: None,
            principal_fn: None,
            store: None,
            drain_timeout: std::time::Duration::ZERO,
            path: "/mcp".to_owned(),
            challenge: None,
        }
    }

    /// Registers a tool; `tools/list` lists tools in registration order.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.register(tool);
        self
    }

    /// Registers every tool of `tools`, in order ([`ServerBuilder::tool`] for each).
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        for tool in tools {
            self.tools.register(tool);
        }
        self
    }

    /// Registers a prompt ([`tasks_runtime::catalog::Prompt`]); `prompts/list` lists prompts in
    /// registration order, and `server/discover` then offers `prompts` and `completions`.
    pub fn prompt(mut self, prompt: tasks_runtime::catalog::Prompt) -> Self {
        self.catalog.add_prompt(prompt);
        self
    }

    /// Registers a resource with a fixed URI ([`tasks_runtime::catalog::Resource`]);
    /// `server/discover` then offers `resources`.
    pub fn resource(mut self, resource: tasks_runtime::catalog::Resource) -> Self {
        self.catalog.add_resource(resource);
        self
    }

    /// Registers a resource template ([`tasks_runtime::catalog::ResourceTemplate`]);
    /// `server/discover` then offers `resources` and `completions`.
    pub fn resource_template(mut self, template: tasks_runtime::catalog::ResourceTemplate) -> Self {
        self.catalog.add_template(template);
        self
    }

    /// Registers a skill ([`tasks_runtime::catalog::Skill`]); `server/discover` then offers
    /// `resources` and the Skills extension (`io.modelcontextprotocol/skills` with
    /// `directoryRead: true`).
    pub fn skill(mut self, skill: tasks_runtime::catalog::Skill) -> Self {
        self.catalog.add_skill(skill);
        self
    }

    /// Uses `catalog` as the server's prompts, resources and skills (replacing what was
    /// registered).
    pub fn catalog(mut self, catalog: tasks_runtime::catalog::Catalog) -> Self {
        self.catalog = catalog;
        self
    }

    /// Sets the runtime limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.runtime.limits = limits;
        self
    }

    /// Sets `ttlMs` of new tasks in milliseconds, measured from creation. `None` (and `Some(0)`,
    /// since the wire allows only `null` or a positive integer) means unlimited: `"ttlMs": null`,
    /// never reaped.
    pub fn ttl_ms(mut self, ttl_ms: Option<u64>) -> Self {
        self.runtime.ttl_ms = ttl_ms.filter(|&ttl| ttl > 0);
        self
    }

    /// [`ServerBuilder::ttl_ms`] as a [`Duration`](std::time::Duration) (whole milliseconds, a non-zero duration at
    /// least 1 ms: [`tasks_runtime::duration_ms`]); `None` is unlimited.
    pub fn ttl(self, ttl: Option<std::time::Duration>) -> Self {
        self.ttl_ms(ttl.map(tasks_runtime::duration_ms))
    }

    /// Sets `pollIntervalMs` of new tasks in milliseconds (0 omits the field).
    pub fn poll_interval_ms(mut self, poll_interval_ms: u64) -> Self {
        self.runtime.poll_interval_ms = NonZeroU64::new(poll_interval_ms);
        self
    }

    /// [`ServerBuilder::poll_interval_ms`] as a [`Duration`](std::time::Duration) (zero omits the field).
    pub fn poll_interval(self, poll_interval: std::time::Duration) -> Self {
        self.poll_interval_ms(tasks_runtime::duration_ms(poll_interval))
    }

    /// Sets the node lease and how often it is renewed (and orphaned tasks are looked for);
    /// see [`LeaseConfig`] and [`TaskRuntime::spawn_liveness`]. Defaults: 30 s and 2 s.
    pub fn leases(mut self, leases: LeaseConfig) -> Self {
        self.runtime.leases = leases;
        self
    }

    /// Sets when a task counts as stuck in the operator's inventory
    /// ([`RuntimeConfig::stuck`]). Defaults: 15 min working, 1 h waiting for input.
    pub fn stuck_rules(mut self, rules: tasks_runtime::store::inventory::StuckRules) -> Self {
        self.runtime.stuck = rules;
        self
    }

    /// Sets how long a waiting request or stream (a 2025-11-25 `tasks/result`, a session's GET
    /// stream, a `subscriptions/listen` stream) goes without hearing of its tasks before it
    /// re-reads them anyway ([`RuntimeConfig::wait_recheck`]): the bound on what a lost
    /// notification can cost. Default 5 s.
    pub fn wait_recheck(mut self, every: std::time::Duration) -> Self {
        self.runtime.wait_recheck = every;
        self
    }

    /// Sets how long a graceful shutdown waits for running tasks to finish before it ends the
    /// node's lease (tasks still running then are stopped: a durable store keeps them for the
    /// next node or start, which recovers them by policy; a memory store loses them, see
    /// [`tasks_runtime::unfinished_fate`]). Default zero: no wait.
    pub fn drain_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// Sets the request body limit in bytes (over it: HTTP 413).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Allows more `Host`/`Origin` names than the loopback ones (host names or `host:port`
    /// values; others get HTTP 403).
    pub fn allowed_hosts(mut self, hosts: Vec<String>) -> Self {
        self.dispatch.host_policy.allowed_hosts = hosts;
        self
    }

    /// Allows requests from browser apps served from these origins (e.g.
    /// `https://inspector.example.com`: scheme, host and port), beside the origins of the
    /// allowed hosts; others get HTTP 403. Pair it with a CORS layer allowing the same origins
    /// (see the crate docs).
    pub fn allowed_origins(mut self, origins: Vec<String>) -> Self {
        self.dispatch.host_policy.allowed_origins = origins;
        self
    }

    /// Sets the secret protecting MRTR `requestState`. Several processes behind one address
    /// must share it; by default every process draws a random one.
    pub fn state_secret(mut self, secret: &[u8]) -> Self {
        self.state_key = Some(StateKey::from_secret(secret));
        self
    }

    /// Sets the secret both server keys derive from: the `requestState` key
    /// ([`ServerBuilder::state_secret`]) and the key that hashes principals into scopes
    /// ([`ServerBuilder::scope_secret`]). Use at least 16 random bytes (32 from the OS random
    /// source are plenty), kept in a file only the server can read, never in the database or
    /// on a command line. With a durable store, set it (the same on every restart and on every
    /// node), or authenticated clients lose their tasks at a restart and MRTR retries spanning
    /// one fail.
    pub fn secret(mut self, secret: &[u8]) -> Self {
        self.runtime.principal_key = Some(PrincipalKey::from_secret(secret));
        self.state_secret(secret).scope_secret(secret)
    }

    /// Sets the secret of the key that turns each caller's principal
    /// ([`ServerBuilder::principal_fn`]) into the scope the runtime and the store see (`HMAC-SHA256`, [`ScopeKey`]), so
    /// no principal or bearer token is ever stored. By default every process draws a random
    /// one.
    pub fn scope_secret(mut self, secret: &[u8]) -> Self {
        self.scope_key = Some(ScopeKey::from_secret(secret));
        self
    }

    /// Maps each request head to its caller's [`Principal`] (e.g. a user id from
    /// `Authorization`), or rejects it (HTTP 401), for requests that carry no `Principal` in
    /// their extensions (an authentication layer's). The principal is hashed with the scope key
    /// into the scope its tasks live in ([`ServerBuilder::scope_secret`]), and reaches the tools
    /// as [`ToolContext::principal`](tasks_runtime::ToolContext::principal) (a task keeps it
    /// sealed under the [`ServerBuilder::secret`]); the empty principal is the shared scope.
    /// Default: one shared scope.
    pub fn principal_fn(
        mut self,
        principal_fn: impl Fn(&Parts) -> Result<Principal, McpError> + Send + Sync + 'static,
    ) -> Self {
        self.principal_fn = Some(Arc::new(principal_fn));
        self
    }

    /// [`ServerBuilder::principal_fn`] under its former name, with the principal as a
    /// [`Scope`] naming it.
    #[deprecated(note = "use `principal_fn`, which returns a `Principal`")]
    pub fn scope_fn(
        self,
        scope_fn: impl Fn(&Parts) -> Result<Scope, McpError> + Send + Sync + 'static,
    ) -> Self {
        self.principal_fn(move |parts| scope_fn(parts).map(|scope| Principal::new(scope.as_str())))
    }

    /// Sets the `WWW-Authenticate` header of every HTTP 401 the server sends (those of
    /// [`ServerBuilder::principal_fn`]), which MCP authorization requires
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>), e.g.
    /// `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`.
    /// An authentication layer in front of [`ServerBuilder::into_service`] sends its own.
    pub fn www_authenticate(mut self, challenge: http::HeaderValue) -> Self {
        self.challenge = Some(challenge);
        self
    }

    /// Uses `store` instead of a new [`MemoryStore`]. With a durable store (such as
    /// `tasks_store_sqlite::SqliteStore`) tasks survive a restart: [`ServerBuilder::bind`] takes
    /// over the tasks the previous process left unfinished before it serves. Set a stable
    /// [`ServerBuilder::secret`] as well, or authenticated clients lose their tasks at a
    /// restart.
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// Announces tool-list changes: `server/discover` then advertises
    /// `capabilities.tools.listChanged`, `subscriptions/listen` honours `toolsListChanged`, and
    /// every [`ListChanges::announce`](tasks_runtime::ListChanges::announce) of
    /// [`ListKind::Tools`](tasks_runtime::ListKind::Tools) reaches those streams as
    /// `notifications/tools/list_changed`. Keep a clone of `changes` to announce with.
    /// [`TaskRuntime::register_tool`] and [`TaskRuntime::remove_tool`] (on
    /// `dispatcher.runtime()`) announce through it by themselves.
    pub fn list_changes(mut self, changes: ListChanges) -> Self {
        self.runtime.list_changes = Some(changes.clone());
        self.dispatch.list_changes = Some(changes);
        self
    }

    /// The 2025 session path on the same endpoint (on by default, with
    /// [`SessionConfig::default`]): `initialize` opens a session that `ping`, `tools/list`,
    /// `tools/call` and `logging/setLevel` are served on, with its standalone GET stream and
    /// DELETE. `None` serves 2026-07-28 only: a 2025 `initialize` is then -32022 naming the
    /// supported versions. Sessions live in this process: behind a load balancer, route a
    /// session's requests to one node (`docs/deployment.md`).
    pub fn sessions(mut self, sessions: Option<SessionConfig>) -> Self {
        self.dispatch.sessions = sessions;
        self
    }

    /// Declares `extensions` to 2025 sessions: the `initialize` result carries them as
    /// `capabilities.extensions` (SEP-2133 legacy negotiation), each key an extension id
    /// (`vendor/name`), each value its settings object, as given (e.g.
    /// `{"io.modelcontextprotocol/ui": {}}`). A later call replaces the earlier set; an empty
    /// set (the default) sends no `extensions` member. The Tasks extension
    /// (`io.modelcontextprotocol/tasks`) is dropped from the set: a 2025-11-25 session has the
    /// built-in `tasks` capability instead, and SEP-2663 negotiates the extension on 2026-07-28
    /// only. `server/discover` is unchanged (it declares the Tasks extension alone). What
    /// the client declared is in its session's capabilities, which a tool reads with
    /// [`ToolContext::client_capabilities`](tasks_runtime::ToolContext::client_capabilities)
    /// (`extensions`).
    pub fn session_extensions(mut self, mut extensions: tasks_core::JsonObject) -> Self {
        extensions.remove(tasks_core::protocol::TASKS_EXTENSION);
        self.dispatch.session_extensions = extensions;
        self
    }

    /// Sets `instructions` for `server/discover` (and the 2025 `InitializeResult`).
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.dispatch.instructions = Some(text.into());
        self
    }

    /// Sets the `ttlMs` of `server/discover` and `tools/list` results, in milliseconds.
    pub fn cache_ttl_ms(mut self, ttl_ms: u64) -> Self {
        self.dispatch.cache_ttl_ms = ttl_ms;
        self
    }

    /// [`ServerBuilder::cache_ttl_ms`] as a [`Duration`](std::time::Duration).
    pub fn cache_ttl(self, ttl: std::time::Duration) -> Self {
        self.cache_ttl_ms(tasks_runtime::duration_ms(ttl))
    }

    /// Builds the dispatcher without binding (for in-process use and tests). Unlike
    /// [`ServerBuilder::into_service`] and [`ServerBuilder::bind`], nothing runs in the
    /// background: with a durable store, start the node yourself with
    /// [`TaskRuntime::start`] on `dispatcher.runtime()`.
    pub fn build(self) -> Dispatcher {
        let store = self.store.unwrap_or_else(|| Arc::new(MemoryStore::new()));
        let runtime = TaskRuntime::new(store, self.tools, self.runtime);
        runtime.set_catalog(self.catalog);
        let state_key = self
            .state_key
            .unwrap_or_else(|| StateKey::from_bytes(random_key(&runtime)));
        let scope_key = self
            .scope_key
            .unwrap_or_else(|| ScopeKey::from_bytes(random_key(&runtime)));
        Dispatcher::new(
            runtime,
            self.dispatch,
            state_key,
            scope_key,
            self.principal_fn,
        )
    }

    /// Builds the MCP endpoint as a tower service to mount in a host application (an axum
    /// `Router`, a hyper server, behind tower layers): takes over the tasks a previous process
    /// left unfinished ([`TaskRuntime::recover`]), starts the TTL reaper and the node's liveness
    /// loop ([`TaskRuntime::spawn_liveness`]), and returns the service with the handle that
    /// shuts it down. The service is path-agnostic: the mount point is the endpoint.
    ///
    /// ```no_run
    /// # async fn run(builder: tasks_http::ServerBuilder) -> std::io::Result<()> {
    /// let (mcp, handle) = builder.into_service().await?;
    /// let app: axum::Router = axum::Router::new()
    ///     .route("/", axum::routing::get(|| async { "my app" }))
    ///     .nest_service("/api/mcp", mcp);
    /// # let _ = (app, handle);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// When the store fails during recovery.
    pub async fn into_service(self) -> io::Result<(McpService, McpHandle)> {
        let max_body_bytes = self.max_body_bytes;
        let drain_timeout = self.drain_timeout;
        let challenge = self.challenge.clone();
        crate::service::start(self.build(), max_body_bytes, challenge, drain_timeout).await
    }

    /// Sets the path [`ServerBuilder::bind`] serves the MCP endpoint at (default `/mcp`);
    /// other paths answer 404 naming it. A service from [`ServerBuilder::into_service`] ignores
    /// it: there the mount point decides.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Binds `addr` and serves the endpoint at [`ServerBuilder::path`] (default `/mcp`) with
    /// [`serve`](crate::serve): [`ServerBuilder::into_service`] with its own HTTP server. Logs
    /// one INFO line through `tracing` once it listens: `serving MCP` with the URL, the kind
    /// of store and the node id (nothing is printed without a `tracing` subscriber).
    ///
    /// # Errors
    /// When the address cannot be bound, or the store fails during recovery.
    pub async fn bind(self, addr: impl ToSocketAddrs) -> io::Result<RunningServer> {
        let path: Arc<str> = Arc::from(self.path.as_str());
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let (service, handle) = self.into_service().await?;
        let runtime = handle.dispatcher().runtime();
        tracing::info!(
            url = %format!("http://{local_addr}{path}"),
            store = runtime.store_kind(),
            node = %runtime.node(),
            "serving MCP"
        );
        let serving = tokio::spawn(crate::server::serve(
            listener,
            AtPath {
                path: path.clone(),
                service,
            },
            handle.shutdown_token(),
        ));
        Ok(RunningServer {
            local_addr,
            path,
            serving,
            handle,
        })
    }
}

/// [`McpService`] at one path; other paths get [`not_found`].
#[derive(Clone)]
struct AtPath {
    path: Arc<str>,
    service: McpService,
}

impl tower_service::Service<Request<Incoming>> for AtPath {
    type Response = Response<HttpBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        if request.uri().path() == &*self.path {
            self.service.call(request)
        } else {
            let response = not_found(&self.path);
            Box::pin(async move { Ok(response) })
        }
    }
}

/// A server accepting connections.
pub struct RunningServer {
    local_addr: std::net::SocketAddr,
    path: Arc<str>,
    serving: JoinHandle<()>,
    handle: McpHandle,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("local_addr", &self.local_addr)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl RunningServer {
    /// The bound address.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.local_addr
    }

    /// The endpoint URL, e.g. `http://127.0.0.1:3000/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.path)
    }

    /// The dispatcher (and through it the runtime).
    pub fn dispatcher(&self) -> &Arc<Dispatcher> {
        self.handle.dispatcher()
    }

    /// A token that stops the server when cancelled (e.g. from a signal handler): open listen
    /// streams end with their closing response, then the server stops accepting.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.handle.shutdown_token()
    }

    /// Waits until the server stops (after [`RunningServer::shutdown_token`] is cancelled),
    /// then shuts down as [`McpHandle::shutdown`] does: lets running tasks finish for up to the
    /// drain timeout ([`ServerBuilder::drain_timeout`]), stops the reaper and the liveness loop
    /// and ends this node's lease ([`TaskRuntime::retire`]), so unfinished tasks can be taken
    /// over at once.
    pub async fn wait(self) {
        let _ = self.serving.await;
        self.handle.shutdown().await;
    }

    /// Stops accepting, closes connections gracefully, lets running tasks finish for up to the
    /// drain timeout, stops the reaper and the liveness loop, and ends the node's lease.
    pub async fn shutdown(self) {
        self.handle.shutdown_token().cancel();
        self.wait().await;
    }
}

/// 32 random bytes from the runtime's entropy source, for a key.
///
/// # Panics
/// When the source has no randomness to give (at server start, never per request).
fn random_key(runtime: &TaskRuntime) -> [u8; 32] {
    runtime
        .entropy()
        .bytes()
        .expect("the runtime's entropy source gives a key")
}
