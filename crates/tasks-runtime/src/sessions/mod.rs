//! The live 2025 sessions of this process, host-agnostic: the driver state of the core's session
//! machines ([`tasks_core::sessions::session`]): the table ([`Sessions`]), each session's
//! request-id space, client requests and task book ([`Session`]), the rounds of questions asked
//! on one of its streams ([`ask`]), the delivery of a task's input requests ([`deliver`]), and
//! the session's 2025-11-25 task operations ([`tasks`]); and the async drivers of the session's
//! exchanges: a request run in rounds ([`drive_rounds`]), a `tasks/result` wait
//! ([`ResultDriver`]) and the standalone stream ([`standalone_stream`]). A transport carries
//! the [`Frame`]s out (the HTTP adapter as SSE) and hands back the client's answers
//! ([`Session::answer`]).
//!
//! A session belongs to the caller that opened it: looked up under another scope it does not
//! exist (HTTP 404), so a leaked session id is useless to another principal. Sessions live in
//! memory only: with several nodes, a load balancer must send every request of a session to
//! the node that opened it (affinity on the `Mcp-Session-Id` header; `docs/deployment.md`).

#[cfg(feature = "sessions")]
mod ask;
#[cfg(feature = "sessions")]
mod call;
#[cfg(feature = "sessions")]
mod live;
#[cfg(feature = "sessions")]
mod result_wait;
#[cfg(feature = "sessions")]
mod stream;
#[cfg(feature = "sessions")]
mod table;
#[cfg(feature = "sessions")]
pub mod tasks;

use std::time::Duration;

#[cfg(feature = "sessions")]
pub use ask::{ask, deliver, Frame};
#[cfg(feature = "sessions")]
pub use call::{drive_rounds, RoundsCall};
#[cfg(feature = "sessions")]
pub use live::{Answer, Delivery, InFlight, Session, StreamClaim, MAX_SUBSCRIPTIONS};
#[cfg(feature = "sessions")]
pub use result_wait::ResultDriver;
#[cfg(feature = "sessions")]
pub use stream::standalone_stream;
#[cfg(feature = "sessions")]
pub use table::Sessions;

/// Limits of the 2025 session path: sessions live in this process's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionConfig {
    /// Live sessions at once. When full, the session idle longest ends to make room (its
    /// client gets HTTP 404 and starts a new one); when every session is busy (an open stream
    /// or a request being served), `initialize` is -32603 `Too many sessions` (HTTP 503,
    /// `data.retryable`). Default 10 000.
    pub max_sessions: usize,
    /// A session without requests and without an open GET stream for this long ends (its id
    /// then gets HTTP 404, and the client starts a new session). Default 30 minutes.
    pub idle_timeout: Duration,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            max_sessions: 10_000,
            idle_timeout: Duration::from_secs(30 * 60),
        }
    }
}

impl SessionConfig {
    /// Sets [`SessionConfig::max_sessions`].
    pub fn with_max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max;
        self
    }

    /// Sets [`SessionConfig::idle_timeout`].
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }
}
