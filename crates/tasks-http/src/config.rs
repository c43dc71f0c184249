//! The dispatcher's settings.

use std::time::Duration;

use tasks_runtime::ListChanges;

use crate::origin::HostPolicy;

/// Dispatcher settings ([`ServerBuilder`](crate::ServerBuilder) sets them).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DispatchConfig {
    /// `serverInfo.name`.
    pub server_name: String,
    /// `serverInfo.version`.
    pub server_version: String,
    /// Accepted `Host`/`Origin` values.
    pub host_policy: HostPolicy,
    /// `ttlMs` of the cacheable results (`server/discover`, `tools/list`), in milliseconds.
    pub cache_ttl_ms: u64,
    /// Optional `instructions` in `server/discover`.
    pub instructions: Option<String>,
    /// Where tool-list changes are announced, when the tool list can change (advertised as
    /// `tools.listChanged`). Default `None`.
    pub list_changes: Option<ListChanges>,
    /// The 2025 session path on the same endpoint ([`SessionConfig`]); `None` serves
    /// 2026-07-28 only and refuses a 2025 `initialize` with -32022 naming the supported
    /// versions. Default: on, with [`SessionConfig::default`]. Without the crate's
    /// `sessions` feature it is ignored, as if `None`.
    pub sessions: Option<SessionConfig>,
}

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

impl Default for DispatchConfig {
    fn default() -> Self {
        DispatchConfig {
            server_name: "mcp-tasks".into(),
            server_version: env!("CARGO_PKG_VERSION").into(),
            host_policy: HostPolicy::default(),
            cache_ttl_ms: 300_000,
            instructions: None,
            list_changes: None,
            sessions: Some(SessionConfig::default()),
        }
    }
}
