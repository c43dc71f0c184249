//! # tasks-http
//!
//! MCP 2026-07-28 over Streamable HTTP with the Tasks extension (`io.modelcontextprotocol/tasks`).
//!
//! Layers, as in h2: every protocol rule and decision lives in `tasks-core` (the planner,
//! [`tasks_core::plan`], turns a message into a rejection or an action; the exchanges,
//! [`tasks_core::exchange`], decide the frames of what outlives a message: a listen stream, a
//! synchronous call's notifications and next MRTR round); the transport-agnostic
//! [`Dispatcher`] only carries plans out on the runtime and drives the exchanges (request head + body + scope in,
//! status + JSON or SSE messages out, testable in process); [`McpService`] is the thin HTTP
//! adapter, a `tower::Service` that only moves bytes; [`serve`] runs connections for any tower
//! service; [`ServerBuilder`] is the API a server author uses.
//!
//! ## Serving
//!
//! - [`ServerBuilder::bind`]: its own HTTP server at `/mcp` (the quickest start).
//! - [`ServerBuilder::into_service`]: an [`McpService`] to mount in an existing application
//!   (axum `Router::nest_service("/api/mcp", service)`, or any tower stack), with the
//!   [`McpHandle`] that owns its background work and shuts it down.
//!
//! ## A complete server
//!
//! Tools, prompts, resources and completions on one endpoint (the embedding guide,
//! `docs/guides/embed.md`, says more):
//!
//! ```
//! use tasks_http::catalog::{Completer, Prompt, PromptArgument, PromptMessage, PromptResult, Resource};
//! use tasks_http::prelude::*;
//!
//! let server = ServerBuilder::new("notes", "1.0.0")
//!     .tool(Tool::new("ping", "Answers pong", |_ctx| async { Ok(text_result("pong")) }))
//!     .prompt(
//!         Prompt::new("summarize", "Summarizes a note", |ctx| async move {
//!             let note = ctx.arguments()["note"].as_str().unwrap_or_default().to_owned();
//!             Ok(PromptResult::new([PromptMessage::user(format!("Summarize note {note}"))]))
//!         })
//!         .with_argument(PromptArgument::required("note", "The note's name"))
//!         .complete("note", Completer::from_values(["groceries", "ideas"])),
//!     )
//!     .resource(Resource::text("notes://groceries", "groceries", "text/plain", "milk, eggs"))
//!     .build();
//! let catalog = server.runtime().catalog();
//! assert!(catalog.offers(tasks_core::Feature::Prompts));
//! assert!(catalog.offers(tasks_core::Feature::Resources));
//! ```
//!
//! ## Authentication
//!
//! Put a tower layer in front of the service that checks the credentials and inserts a
//! [`Principal`] into the request extensions; tasks are then scoped by it (one principal never
//! sees another's tasks). The layer refuses a request itself, with HTTP 401 and a
//! `WWW-Authenticate` header (MCP authorization, <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>:
//! `Bearer resource_metadata="https://host/.well-known/oauth-protected-resource/api/mcp"`);
//! the host application serves that OAuth protected-resource metadata document (RFC 9728) on
//! its own route. The workspace's `examples/axum-app` does exactly this.
//!
//! ## Browser clients (CORS)
//!
//! A browser app on another origin (the MCP Inspector's web UI) needs a CORS layer in front of
//! the service, and its origin allowed with [`ServerBuilder::allowed_origins`] (the endpoint
//! refuses a foreign `Origin` with 403 otherwise, against DNS rebinding). With tower-http
//! (`tower-http = { version = "0.6", features = ["cors"] }` and `http = "1"` in
//! `[dependencies]`):
//!
//! ```
//! use http::{HeaderName, HeaderValue, Method};
//! use tower_http::cors::{AllowHeaders, CorsLayer};
//!
//! let origin = "https://inspector.example.com";
//! let cors = CorsLayer::new()
//!     .allow_origin(origin.parse::<HeaderValue>().unwrap())
//!     // GET and DELETE, and reading `Mcp-Session-Id`, serve 2025 sessions.
//!     .allow_methods([Method::POST, Method::GET, Method::DELETE])
//!     .expose_headers([HeaderName::from_static("mcp-session-id")])
//!     // MCP requests carry `Mcp-Param-<Name>` headers named by each tool's schema: they
//!     // cannot be listed, so the preflight's requested headers are mirrored.
//!     .allow_headers(AllowHeaders::mirror_request())
//!     .max_age(std::time::Duration::from_secs(600));
//! let builder = tasks_http::ServerBuilder::new("my-server", "1.0.0")
//!     .allowed_origins(vec![origin.to_owned()]);
//! # let _ = (cors, builder);
//! ```
//!
//! With authentication too, the CORS layer goes outside it (added after it:
//! `.layer(auth).layer(cors)`), so that preflights, which carry no credentials, are answered
//! rather than refused with 401.
//!
//! ## Host names
//!
//! Only requests addressed to a loopback name (`localhost`, `127.0.0.1`, `[::1]`) are served
//! until [`ServerBuilder::allowed_hosts`] names the others (the name clients and load balancers
//! use in `Host`): everything else is 403, against DNS rebinding. This holds for a mounted
//! service too, whatever the host application's other routes accept.
//!
//! ## Module layers
//!
//! A module may use only the modules listed below it (checked by `tests/tests/layering.rs`,
//! which fails on any cycle):
//!
//! | module | uses |
//! |---|---|
//! | `builder` | `service`, `server`, `dispatcher`, `config` |
//! | `service` | `dispatcher`, `response` |
//! | `dispatcher` | `sessions`, `methods`, `shared`, `head`, `config`, `origin`, `principal`, `metrics`, `response` |
//! | `sessions` (the 2025 session path), `sessions_off` (its stand-in without the `sessions` feature) | `methods::catalog`, `shared`, `config`, `head`, `metrics`, `response` |
//! | `methods::*` | `shared`, `config`, `metrics`, `response`, `head`, `methods::sync_call` |
//! | `shared` | `config`, `metrics` |
//! | `config` | `origin` |
//! | `metrics` | `head` |
//! | `origin`, `principal`, `response`, `head`, `server` | nothing of this crate |
//!
//! Served methods: `server/discover`, `tools/list`, `tools/call` (synchronous, MRTR
//! `input_required`, or `CreateTaskResult` by the tool's task policy), `tasks/get`,
//! `tasks/update`, `tasks/cancel`, and `subscriptions/listen` with `notifications.taskIds`.
//! Everything else is [`tasks_core::McpError::MethodNotFound`] (HTTP 404). Every result carries
//! `_meta["io.modelcontextprotocol/serverInfo"]`.
//!
//! ## 2025 clients on the same endpoint
//!
//! A client of the session-based revisions (2025-11-25, 2025-06-18) that starts with
//! `initialize` gets a session ([`ServerBuilder::sessions`], on by default): `Mcp-Session-Id`,
//! `ping`, `tools/list`, `tools/call` (its progress, logs and input requests on the call's SSE
//! stream, the client's answers POSTed back), `logging/setLevel`, the standalone GET stream and
//! DELETE. Requests carrying the 2026 `_meta` are served statelessly whatever session id they
//! carry. Sessions live in the process that opened them.
//!
//! The session path is the cargo feature `sessions`, on by default. Without it the
//! crate serves 2026-07-28 only, as with `sessions(None)`: a 2025 `initialize` gets -32022
//! naming the supported versions, and a GET or DELETE is HTTP 405. Its decisions are the
//! core's session machines ([`tasks_core::sessions::session`]), the state they act on the
//! runtime's ([`tasks_runtime::sessions`]); the `sessions` module drives them.
#![forbid(unsafe_code)]

mod builder;
mod config;
mod dispatcher;
mod head;
mod methods;
mod metrics;
mod origin;
mod principal;
mod response;
mod server;
mod service;
#[cfg(feature = "sessions")]
mod sessions;
#[cfg(not(feature = "sessions"))]
#[path = "sessions_off.rs"]
mod sessions;
mod shared;

pub use builder::{RunningServer, ServerBuilder, DEFAULT_MAX_BODY_BYTES};
pub use config::{DispatchConfig, SessionConfig};
pub use dispatcher::{Dispatcher, PrincipalFn};
pub use head::Head;
pub use metrics::{Metrics, CONTENT_TYPE as METRICS_CONTENT_TYPE};
pub use origin::HostPolicy;
pub use principal::Principal;
pub use response::{
    error_bytes, notification_bytes, result_bytes, BodyError, McpResponse, MessageStream,
    ResponseBody,
};
pub use server::{
    serve, shutdown_signal, H2_KEEP_ALIVE, HEADER_READ_TIMEOUT, MAX_CONNECTIONS, SHUTDOWN_GRACE,
};
pub use service::{
    into_http, not_found, HttpBody, McpHandle, McpService, ResponseFuture, DRAIN_LIMIT,
    DRAIN_TIMEOUT, KEEP_ALIVE, KEEP_ALIVE_COMMENT, READ_TIMEOUT, RETRY_AFTER_SECS,
};
/// What [`ServerBuilder::list_changes`] takes: the list-change announcements
/// ([`tasks_runtime::ListChanges`], re-exported so that a server needs no other crate for it).
pub use tasks_runtime::ListChanges;

/// The crate deriving `JsonSchema` for typed tool arguments
/// ([`Tool::typed`](tasks_runtime::Tool::typed)), re-exported so its version is the one the
/// runtime uses.
pub use schemars;

/// Prompts, resources, completion and skills beside tools ([`tasks_runtime::catalog`],
/// re-exported): register them with [`ServerBuilder::prompt`], [`ServerBuilder::resource`],
/// [`ServerBuilder::resource_template`] and [`ServerBuilder::skill`].
pub mod catalog {
    pub use tasks_runtime::catalog::*;
}

/// What a tool author needs, in one `use tasks_http::prelude::*;`: the server builder, tools
/// and their context, errors and results, task policies, client input, and the derives for
/// typed arguments. The derives expand to paths into `serde` and `schemars`, so a crate
/// deriving them also lists `serde = { version = "1", features = ["derive"] }` and
/// `schemars = "1"` in its `[dependencies]` (the embedding guide, `docs/guides/embed.md`, shows them).
pub mod prelude {
    pub use crate::ServerBuilder;
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use tasks_core::input::{ClientCapability, ElicitAnswer};
    pub use tasks_core::TaskPolicy;
    pub use tasks_runtime::{
        error_result, load_or_create_secret, text_result, Elicited, Json, Recovery, Tool,
        ToolContext, ToolError,
    };
}

/// The README, whose code blocks are doctested (it has no Rust example of its own now).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme {}

/// The embedding guide's examples (`docs/guides/embed.md`), compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guides/embed.md")]
mod guide_embed {}
