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
//! * `call_tool`: a tool of the runtime ([`TasksBridge::serves`]) goes to
//!   [`TasksBridge::call_tool`], the others to the handler's own router;
//! * `list_tools`: the handler's tools and [`TasksBridge::tools`];
//! * `get_task`, `update_task`, `cancel_task`, `on_custom_request`,
//!   `accepted_subscription_filter` and `listen`: written by [`delegate_tasks!`].
//!
//! On HTTP, put [`listen_layer()`] in front of rmcp's `StreamableHttpService`: it carries
//! `subscriptions/listen` `taskIds` to [`TasksBridge::listen`] and refuses a listener that
//! names them without declaring the Tasks extension (see [`ListenPrefilter`]).
//!
//! ```
//! use std::sync::Arc;
//! use rmcp::model::{CallToolRequestParams, CallToolResponse, ListToolsResult,
//!     PaginatedRequestParams, ServerCapabilities, ServerConfig};
//! use rmcp::service::{RequestContext, RoleServer};
//! use rmcp::{ErrorData, ServerHandler};
//! use tasks_rmcp::TasksBridge;
//! use tasks_runtime::{text_result, MemoryStore, RuntimeConfig, TaskRuntime, Tool, ToolRegistry};
//! use tasks_core::negotiation::TaskPolicy;
//!
//! #[derive(Clone)]
//! struct Server {
//!     tasks: TasksBridge,
//! }
//!
//! impl ServerHandler for Server {
//!     fn get_info(&self) -> ServerConfig {
//!         ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
//!     }
//!
//!     async fn list_tools(
//!         &self,
//!         _request: Option<PaginatedRequestParams>,
//!         _cx: RequestContext<RoleServer>,
//!     ) -> Result<ListToolsResult, ErrorData> {
//!         Ok(ListToolsResult::with_all_items(self.tasks.tools()))
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
//!         Err(ErrorData::invalid_params("Unknown tool", None)) // or the handler's own router
//!     }
//!
//!     tasks_rmcp::delegate_tasks!(tasks);
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), tasks_core::McpError> {
//! let mut tools = ToolRegistry::new();
//! tools.register(
//!     Tool::new("report", "Builds the report", |_ctx| async { Ok(text_result("done")) })
//!         .with_policy(TaskPolicy::Required),
//! );
//! let runtime = TaskRuntime::new(Arc::new(MemoryStore::new()), tools, RuntimeConfig::default());
//! let node = runtime.start().await?; // recovery, lease renewal, reaping
//! let server = Server { tasks: TasksBridge::builder(runtime).build() };
//! // Serve `server` with rmcp's StreamableHttpService (behind `tasks_rmcp::listen_layer()`)
//! // or stdio transport; at the end:
//! # let _ = server;
//! node.shutdown(std::time::Duration::from_secs(5)).await;
//! # Ok(()) }
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

mod bridge;
mod call;
mod convert;
mod layer;
mod listen;
mod macros;
mod tasks;
mod wrap;

pub use bridge::{BridgeBuilder, PrincipalSource, TasksBridge};
pub use layer::{
    listen_layer, ListenLayer, ListenPrefilter, ListenTaskIds, DEFAULT_MAX_BODY_BYTES,
};
pub use wrap::rmcp_tool;
