//! The 2025-era (session-based) protocol on the same endpoint: era routing, the session state
//! machine, version negotiation, the planner of a legacy message and the 2025 wire shapes.
//!
//! MCP 2026-07-28 lets one endpoint serve both eras (versioning, "Backward Compatibility with
//! Initialization-Based Versions":
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>; streamable-http
//! "Earlier Streamable HTTP Revisions"). A request carrying the 2026 `_meta` protocol version
//! is served statelessly whatever else it carries (a stale `Mcp-Session-Id` is ignored); an
//! `initialize` without it opens a 2025 session; other messages of a session carry its
//! `Mcp-Session-Id` ([`route`]).
//!
//! The 2025 session path follows MCP 2025-11-25 (lifecycle:
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>; transports,
//! "Streamable HTTP" and "Session Management":
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>), and serves
//! 2025-06-18 sessions the same way ([`negotiate`]).
//!
//! | module | concept |
//! |---|---|
//! | `era` | [`route`]: which era a message belongs to, before any session lookup |
//! | `version` | the revisions served on the session path and `initialize` negotiation |
//! | [`session`] | [`SessionId`](session::SessionId), the session's [`Phase`](session::Phase) machine, and the machines of what outlives a message: the session table, request ids and input rounds, GET-stream re-delivery |
//! | `plan` | [`plan_session`]: one message of a session in, a [`SessionPlan`] out |
//! | `label` | the bounded label a session message is counted and logged under |
//! | [`tasks`] | 2025-11-25 tasks: the hint and `taskSupport` table, the task view, `tasks/result` |
//! | [`wire`] | `InitializeResult`, server capabilities, the 2025 `tools/list` entry |
//!
//! What the protocol decides about a message lives here, like the 2026 planner
//! ([`crate::plan`]), and so do the decisions about what outlives a message ([`session`]); the
//! transport keeps only the async part (streams, tokens, channels).

mod era;
mod label;
mod plan;
pub mod session;
pub mod tasks;
mod version;
pub mod wire;

pub use crate::negotiation::session_era_error;
pub use era::{route, Era, SESSION_HEADER};
pub use label::{session_label_index, SESSION_LABELS};
pub use plan::{plan_session, SessionAction, SessionCall, SessionPlan, SessionView};
pub use version::{negotiate, serves_tasks};
