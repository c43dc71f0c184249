//! The public builder: register tools, set limits, bind, shut down.

use std::io;
use std::num::NonZeroU64;
use std::sync::Arc;

use http::request::Parts;
use tasks_core::McpError;
use tasks_runtime::{
    LeaseConfig, Limits, ListChanges, MemoryStore, RuntimeConfig, Scope, ScopeKey, Store,
    TaskRuntime, Tool, ToolRegistry,
};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::dispatcher::{DispatchConfig, Dispatcher, ScopeFn};
use crate::origin::HostPolicy;
use tasks_core::mrtr::StateKey;

/// Default request body limit in bytes (1 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// Builds an MCP server with the Tasks extension.
///
/// ```no_run
/// use serde_json::json;
/// use tasks_core::TaskPolicy;
/// use tasks_http::ServerBuilder;
/// use tasks_runtime::{text_result, Tool};
///
/// # async fn run() -> std::io::Result<()> {
/// let server = ServerBuilder::new("my-server", "1.0.0")
///     .tool(
///         Tool::new("report", "Builds a long report", |ctx| async move {
///             let topic = ctx.arguments().get("topic").and_then(|v| v.as_str()).unwrap_or("?");
///             Ok(text_result(format!("Report on {topic}")))
///         })
///         .with_input_schema(json!({"type": "object", "properties": {"topic": {"type": "string"}}}))
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
    runtime: RuntimeConfig,
    dispatch: DispatchConfig,
    max_body_bytes: usize,
    state_key: Option<StateKey>,
    scope_key: Option<ScopeKey>,
    scope_fn: Option<Arc<ScopeFn>>,
    store: Option<Arc<dyn Store>>,
    drain_timeout: std::time::Duration,
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
            runtime: RuntimeConfig::default(),
            dispatch: DispatchConfig {
                server_name: name.into(),
                server_version: version.into(),
                ..DispatchConfig::default()
            },
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            state_key: None,
            scope_key: None,
            scope_fn: None,
            store: None,
            drain_timeout: std::time::Duration::ZERO,
        }
    }

    /// Registers a tool; `tools/list` lists tools in registration order.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.register(tool);
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

    /// Sets `pollIntervalMs` of new tasks in milliseconds (0 omits the field).
    pub fn poll_interval_ms(mut self, poll_interval_ms: u64) -> Self {
        self.runtime.poll_interval_ms = NonZeroU64::new(poll_interval_ms);
        self
    }

    /// Sets the node lease and how often it is renewed (and orphaned tasks are looked for);
    /// see [`LeaseConfig`] and [`TaskRuntime::spawn_liveness`]. Defaults: 30 s and 2 s.
    pub fn leases(mut self, leases: LeaseConfig) -> Self {
        self.runtime.leases = leases;
        self
    }

    /// Sets how long a graceful shutdown waits for running tasks to finish before it ends the
    /// node's lease (tasks still running then are interrupted, and recovered by policy by the
    /// next node or start). Default zero: no wait.
    pub fn drain_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// Sets the request body limit in bytes (over it: HTTP 413).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Allows more `Host`/`Origin` names than the loopback ones.
    pub fn allowed_hosts(mut self, hosts: Vec<String>) -> Self {
        self.dispatch.host_policy = HostPolicy {
            allowed_hosts: hosts,
        };
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
    pub fn secret(self, secret: &[u8]) -> Self {
        self.state_secret(secret).scope_secret(secret)
    }

    /// Sets the secret of the key that turns each principal [`ServerBuilder::scope_fn`]
    /// returns into the scope the runtime and the store see (`HMAC-SHA256`, [`ScopeKey`]), so
    /// no principal or bearer token is ever stored. By default every process draws a random
    /// one.
    pub fn scope_secret(mut self, secret: &[u8]) -> Self {
        self.scope_key = Some(ScopeKey::from_secret(secret));
        self
    }

    /// Maps each request head to a principal (e.g. from `Authorization`), or rejects it (HTTP
    /// 401). The principal is hashed with the scope key before it goes further
    /// ([`ServerBuilder::scope_secret`]); the empty principal is the shared scope. Default: one
    /// shared scope.
    pub fn scope_fn(
        mut self,
        scope_fn: impl Fn(&Parts) -> Result<Scope, McpError> + Send + Sync + 'static,
    ) -> Self {
        self.scope_fn = Some(Arc::new(scope_fn));
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

    /// Sets `instructions` for `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.dispatch.instructions = Some(text.into());
        self
    }

    /// Sets the `ttlMs` of `server/discover` and `tools/list` results, in milliseconds.
    pub fn cache_ttl_ms(mut self, ttl_ms: u64) -> Self {
        self.dispatch.cache_ttl_ms = ttl_ms;
        self
    }

    /// Builds the dispatcher without binding (for in-process use and tests). Unlike
    /// [`ServerBuilder::bind`], nothing runs in the background: with a durable store, call
    /// [`TaskRuntime::recover`], [`TaskRuntime::spawn_liveness`] and
    /// [`TaskRuntime::spawn_reaper`] on `dispatcher.runtime()` yourself.
    pub fn build(self) -> Dispatcher {
        let store = self.store.unwrap_or_else(|| Arc::new(MemoryStore::new()));
        let runtime = TaskRuntime::new(store, self.tools, self.runtime);
        let scope_key = self
            .scope_key
            .unwrap_or_else(|| ScopeKey::from_bytes(random_bytes()));
        let scope_fn = self.scope_fn.map(|principal_of| -> Arc<ScopeFn> {
            Arc::new(move |parts: &Parts| {
                principal_of(parts).map(|principal| scope_key.scope_of(&principal))
            })
        });
        Dispatcher::new(
            runtime,
            self.dispatch,
            self.state_key
                .unwrap_or_else(|| StateKey::from_bytes(random_bytes())),
            scope_fn,
        )
    }

    /// Binds `addr`, takes over the tasks a previous process left unfinished
    /// ([`TaskRuntime::recover`]), starts serving, the TTL reaper and the node's liveness loop
    /// ([`TaskRuntime::spawn_liveness`]), and returns the running server.
    ///
    /// # Errors
    /// When the address cannot be bound, or the store fails during recovery.
    pub async fn bind(self, addr: impl ToSocketAddrs) -> io::Result<RunningServer> {
        let max_body_bytes = self.max_body_bytes;
        let drain_timeout = self.drain_timeout;
        let dispatcher = Arc::new(self.build());
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let runtime = dispatcher.runtime();
        // Renewing the lease from the start: taking over many tasks may outlast it.
        let liveness = runtime.spawn_liveness();
        let recovered = match runtime.recover().await {
            Ok(recovered) => recovered,
            Err(error) => {
                liveness.abort();
                return Err(io::Error::other(format!("task recovery failed: {error}")));
            }
        };
        if recovered > 0 {
            tracing::info!(recovered, "took over unfinished tasks");
        }
        let shutdown = CancellationToken::new();
        let reaper = runtime.spawn_reaper();
        let serving = tokio::spawn(crate::server::serve(
            listener,
            dispatcher.clone(),
            max_body_bytes,
            shutdown.clone(),
        ));
        Ok(RunningServer {
            local_addr,
            shutdown,
            serving,
            reaper,
            liveness,
            dispatcher,
            drain_timeout,
        })
    }
}

/// A server accepting connections.
pub struct RunningServer {
    local_addr: std::net::SocketAddr,
    shutdown: CancellationToken,
    serving: JoinHandle<()>,
    reaper: JoinHandle<()>,
    liveness: JoinHandle<()>,
    dispatcher: Arc<Dispatcher>,
    drain_timeout: std::time::Duration,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("local_addr", &self.local_addr)
            .field("drain_timeout", &self.drain_timeout)
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
        format!(
            "http://{}{}",
            self.local_addr, self.dispatcher.shared.config.endpoint_path
        )
    }

    /// The dispatcher (and through it the runtime).
    pub fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.dispatcher
    }

    /// A token that stops the server when cancelled (e.g. from a signal handler).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Waits until the server stops (after [`RunningServer::shutdown_token`] is cancelled),
    /// lets running tasks finish for up to the drain timeout
    /// ([`ServerBuilder::drain_timeout`]), then stops the reaper and the liveness loop and ends
    /// this node's lease ([`TaskRuntime::retire`]), so unfinished tasks can be taken over at
    /// once.
    pub async fn wait(self) {
        let _ = self.serving.await;
        let runtime = self.dispatcher.runtime();
        if !self.drain_timeout.is_zero() && !runtime.drain(self.drain_timeout).await {
            tracing::warn!(
                running = runtime.busy_workers(),
                "tasks still running after the drain timeout are interrupted"
            );
        }
        self.reaper.abort();
        self.liveness.abort();
        if let Err(error) = self.dispatcher.runtime().retire().await {
            tracing::warn!(%error, "ending the node lease failed");
        }
    }

    /// Stops accepting, closes connections gracefully, lets running tasks finish for up to the
    /// drain timeout, stops the reaper and the liveness loop, and ends the node's lease.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        self.wait().await;
    }
}

/// 32 random bytes from the OS CSPRNG, for a key.
///
/// # Panics
/// When the OS has no randomness to give (at server start, never per request).
fn random_bytes() -> [u8; 32] {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).expect("the OS random source is unavailable");
    key
}
