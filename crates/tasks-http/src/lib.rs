//! # tasks-http
//!
//! MCP 2026-07-28 over Streamable HTTP with the Tasks extension (`io.modelcontextprotocol/tasks`).
//!
//! Layers, as in h2: every protocol rule and decision lives in `tasks-core` (the planner,
//! [`tasks_core::plan`], turns a message into a rejection or an action); the transport-agnostic
//! [`Dispatcher`] only carries plans out on the runtime (request head + body + scope in,
//! status + JSON or SSE messages out, testable in process); [`server`] is a thin hyper adapter
//! that only moves bytes; [`ServerBuilder`] is the API a server author uses.
//!
//! ## Module layers
//!
//! A module may use only the modules listed below it (checked by `tests/tests/layering.rs`,
//! which fails on any cycle):
//!
//! | module | uses |
//! |---|---|
//! | `builder` | `dispatcher`, `server`, `origin`, `config` |
//! | `server` | `dispatcher`, `response` |
//! | `dispatcher` | `methods`, `shared`, `head`, `config`, `origin`, `response` |
//! | `methods::*` | `shared`, `config`, `response`, `head`, `methods::sync_call` |
//! | `shared` | `config` |
//! | `config`, `origin`, `response`, `head` | nothing of this crate |
//!
//! Served methods: `server/discover`, `tools/list`, `tools/call` (synchronous, MRTR
//! `input_required`, or `CreateTaskResult` by the tool's task policy), `tasks/get`,
//! `tasks/update`, `tasks/cancel`, and `subscriptions/listen` with `notifications.taskIds`.
//! Everything else is [`tasks_core::McpError::MethodNotFound`] (HTTP 404). Every result carries
//! `_meta["io.modelcontextprotocol/serverInfo"]`.
#![forbid(unsafe_code)]

pub mod builder;
pub mod config;
pub mod dispatcher;
mod head;
mod methods;
pub mod origin;
pub mod response;
pub mod server;
mod shared;

pub use builder::{RunningServer, ServerBuilder, DEFAULT_MAX_BODY_BYTES};
pub use config::DispatchConfig;
pub use dispatcher::{Dispatcher, ScopeFn};
pub use head::Head;
pub use response::BodyError;
pub use response::{McpResponse, ResponseBody};

/// The crate deriving `JsonSchema` for typed tool arguments
/// ([`Tool::typed`](tasks_runtime::Tool::typed)), re-exported so its version is the one the
/// runtime uses.
pub use schemars;

/// What a tool author needs, in one `use tasks_http::prelude::*;`: the server builder, tools
/// and their context, errors and results, task policies, client input, and the derives for
/// typed arguments. The derives expand to paths into `serde` and `schemars`, so a crate
/// deriving them also lists `serde = { version = "1", features = ["derive"] }` and
/// `schemars = "1"` in its `[dependencies]` (the README shows them).
pub mod prelude {
    pub use crate::ServerBuilder;
    pub use schemars::JsonSchema;
    pub use serde::Deserialize;
    pub use tasks_core::{ClientCapability, ElicitAnswer, TaskPolicy};
    pub use tasks_runtime::{error_result, text_result, Recovery, Tool, ToolContext, ToolError};
}

/// The README's library example, compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme {}
