//! # tasks-http
//!
//! MCP 2026-07-28 over Streamable HTTP with the Tasks extension (`io.modelcontextprotocol/tasks`).
//!
//! Layers, as in h2: wire types and rules live in `tasks-core`; every protocol decision of the
//! transport lives in the transport-agnostic [`Dispatcher`] (request head + body + scope in,
//! status + JSON or SSE messages out, testable in process); [`server`] is a thin hyper adapter
//! that only moves bytes; [`ServerBuilder`] is the API a server author uses.
//!
//! Served methods: `server/discover`, `tools/list`, `tools/call` (synchronous, MRTR
//! `input_required`, or `CreateTaskResult` by the tool's task policy), `tasks/get`,
//! `tasks/update`, `tasks/cancel`, and `subscriptions/listen` with `notifications.taskIds`.
//! Everything else is -32601 (HTTP 404). Every result carries
//! `_meta["io.modelcontextprotocol/serverInfo"]`.

pub mod builder;
pub mod dispatcher;
mod head;
mod methods;
pub mod origin;
pub mod response;
pub mod server;

pub use builder::{RunningServer, ServerBuilder, DEFAULT_MAX_BODY_BYTES};
pub use dispatcher::{BodyError, DispatchConfig, Dispatcher, ScopeFn};
pub use head::Head;
pub use response::{McpResponse, ResponseBody};

/// The README's library example, compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme {}
