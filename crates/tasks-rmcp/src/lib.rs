//! Durable, multi-node MCP Tasks (SEP-2663,
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>)
//! for servers built on [rmcp](https://docs.rs/rmcp) 3.11.0, the official Rust SDK: the
//! server keeps its `#[tool]` tools, prompts, resources and transports, and hands its
//! long-running tools to a [`TaskRuntime`](tasks_runtime::TaskRuntime) with any store (memory,
//! SQLite, PostgreSQL), whose node recovers tasks after a restart, renews its lease, takes over
//! the tasks of a dead node and reaps expired ones.
//!
//! The handler keeps its own `impl ServerHandler` and calls a [`TasksBridge`] from it:
//!
//! * `get_info`: advertise the Tasks extension (`ServerCapabilities::builder()
//!   .enable_tools().enable_tasks()`);
//! * `supported_protocol_versions`: MCP 2026-07-28 only (the bridge serves no 2025 session);
//! * `call_tool`: a tool of the runtime ([`TasksBridge::serves`]) goes to
//!   [`TasksBridge::call_tool`], the others to the handler's own router;
//! * `list_tools`: the handler's tools and [`TasksBridge::tools`];
//! * `get_task`, `update_task`, `cancel_task`, `on_custom_request`,
//!   `accepted_subscription_filter` and `listen`: written by [`delegate_tasks!`] (its
//!   `without custom` / `without listen` forms leave some to the handler).
//!
//! On HTTP, serve it with [`streamable_http_service`] (rmcp's Streamable HTTP server set up
//! for the bridge, behind [`listen_layer()`], which carries `subscriptions/listen` `taskIds` to
//! [`TasksBridge::listen`] and refuses a listener that names them without declaring the Tasks
//! extension: [`ListenPrefilter`]).
//!
//! A whole server: one rmcp `#[tool]`, one task tool, tasks in SQLite, the endpoint at `/mcp`
//! (the repository's `examples/rmcp-app` is a larger one):
//!
//! ```no_run
//! use std::borrow::Cow;
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use rmcp::handler::server::router::tool::ToolRouter;
//! use rmcp::handler::server::tool::ToolCallContext;
//! use rmcp::handler::server::wrapper::Parameters;
//! use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
//!     ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig};
//! use rmcp::service::{RequestContext, RoleServer};
//! use rmcp::{tool, tool_router, ErrorData, ServerHandler};
//! use tasks_core::TaskPolicy;
//! use tasks_rmcp::TasksBridge;
//! use tasks_runtime::{text_result, RuntimeConfig, TaskRuntime, Tool, ToolRegistry};
//! use tasks_store_sqlite::{SqliteOptions, SqliteStore};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo {
//!     text: String,
//! }
//!
//! #[derive(Clone)]
//! struct Server {
//!     tasks: TasksBridge,
//!     tool_router: ToolRouter<Server>,
//! }
//!
//! #[tool_router]
//! impl Server {
//!     #[tool(description = "Echoes the text at once")]
//!     async fn echo(&self, Parameters(args): Parameters<Echo>) -> Result<CallToolResult, ErrorData> {
//!         Ok(CallToolResult::success(vec![ContentBlock::text(args.text)]))
//!     }
//! }
//!
//! impl ServerHandler for Server {
//!     fn get_info(&self) -> ServerConfig {
//!         ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
//!     }
//!
//!     fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
//!         Cow::Borrowed(&[ProtocolVersion::V_2026_07_28])
//!     }
//!
//!     async fn list_tools(
//!         &self,
//!         _request: Option<PaginatedRequestParams>,
//!         _cx: RequestContext<RoleServer>,
//!     ) -> Result<ListToolsResult, ErrorData> {
//!         let mut tools = self.tasks.tools();
//!         tools.extend(self.tool_router.list_all());
//!         Ok(ListToolsResult::with_all_items(tools))
//!     }
//!
//!     async fn call_tool(
//!         &self,
//!         request: CallToolRequestParams,
//!         cx: RequestContext<RoleServer>,
//!     ) -> Result<CallToolResponse, ErrorData> {
//!         if self.tasks.serves(&request.name) {
//!             return self.tasks.call_tool(self, request, &cx).await;
//!         }
//!         self.tool_router.call(ToolCallContext::new(self, request, cx)).await
//!     }
//!
//!     tasks_rmcp::delegate_tasks!(tasks);
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let mut tools = ToolRegistry::new();
//!     tools.register(
//!         Tool::new("report", "Builds the report", |_ctx| async { Ok(text_result("done")) })
//!             .with_policy(TaskPolicy::Required),
//!     );
//!     let store = Arc::new(SqliteStore::open("tasks.db", SqliteOptions::default())?);
//!     // The same secret on every restart (and node), or callers lose their tasks.
//!     let secret = tasks_runtime::load_or_create_secret(std::path::Path::new("tasks.db.secret"))?;
//!     let runtime = TaskRuntime::new(store, tools, RuntimeConfig::default());
//!     let node = runtime.start().await?; // recovery, lease renewal, reaping
//!     let tasks = TasksBridge::builder(runtime).secret(&secret).build();
//!     let server = Server { tasks, tool_router: Server::tool_router() };
//!
//!     let stop = tokio_util::sync::CancellationToken::new();
//!     let mcp = tasks_rmcp::streamable_http_service(server, stop.clone());
//!     let app = axum::Router::new().nest_service("/mcp", mcp);
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//!     axum::serve(listener, app)
//!         .with_graceful_shutdown(async move {
//!             let _ = tokio::signal::ctrl_c().await;
//!             stop.cancel(); // ends open streams, so the shutdown does not wait on them
//!         })
//!         .await?;
//!     node.shutdown(Duration::from_secs(10)).await; // drain running tasks, end the lease
//!     Ok(())
//! }
//! ```
//!
//! # The caller
//!
//! Tasks are scoped by the caller's [`Principal`](tasks_runtime::Principal): on rmcp's HTTP
//! server, an authentication layer inserts one into the request's extensions (rmcp hands the
//! request's `http::request::Parts` to every handler); on stdio, give the bridge a fixed one
//! ([`PrincipalSource::Fixed`]). Without one, every caller shares one scope.
//!
//! # What rmcp 3.11.0 decides
//!
//! The bridge answers what reaches the handler. rmcp answers the rest before it: -32601 for
//! task methods when `get_info()` does not advertise the extension, -32021 when a well-formed
//! task request did not declare it, -32020 for a wrong `Mcp-Name` (HTTP), and it sends every
//! error but -32020/-32021/-32022/-32601 with HTTP 200. The 2025-11-25 task path is out of
//! scope (rmcp keeps the originating request of a session private). `subscriptions/listen`
//! cannot carry `taskIds` through rmcp's typed filter: [`ListenPrefilter`] carries them past it
//! on HTTP, but rmcp's acknowledgement still cannot echo them, rmcp's own client drops the
//! notifications, and stdio has no such layer. The repository's `docs/guides/rmcp-limits.md`
//! lists what works, what each limit costs and the rmcp change that would lift it.
//!
//! # Supported rmcp versions
//!
//! Exactly rmcp 3.11.0 (`rmcp = "=3.11.0"`): the bridge relies on how that release dispatches
//! task requests and malformed ones. An rmcp upgrade is checked by raising the pin and running
//! the repository's test command, whose conformance phase runs the runner's Tasks scenarios
//! against the `rmcp-app` example.
//!
//! # Modules
//!
//! Each module uses only what its row names (checked by the workspace's layering test):
//!
//! | module | uses |
//! |---|---|
//! | `serve` (the Streamable HTTP endpoint, set up) | `layer` |
//! | `listen` (`subscriptions/listen` with `taskIds`) | `bridge`, `layer`, `convert` |
//! | `layer` ([`ListenPrefilter`]) | `convert` |
//! | `call`, `tasks` (`tools/call`; `tasks/get`, `tasks/update`, `tasks/cancel`) | `bridge`, `convert` |
//! | `bridge` ([`TasksBridge`]) | `convert` |
//! | `convert` (this project's wire values and rmcp's model), `macros`, `wrap` | nothing of this crate |

mod bridge;
mod call;
mod convert;
mod layer;
mod listen;
mod macros;
#[cfg(feature = "http-server")]
mod serve;
mod tasks;
mod wrap;

pub use bridge::{BridgeBuilder, PrincipalSource, TasksBridge};
pub use layer::{
    listen_layer, ListenLayer, ListenPrefilter, ListenTaskIds, DEFAULT_MAX_BODY_BYTES,
};
#[cfg(feature = "http-server")]
pub use serve::{streamable_http_service, TasksHttpService};
pub use wrap::rmcp_tool;
