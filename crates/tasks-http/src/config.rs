//! The dispatcher's settings.

pub use tasks_runtime::sessions::SessionConfig;
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
    /// The extensions declared in the 2025 `initialize` result's `capabilities.extensions`
    /// (SEP-2133 legacy negotiation): each key an extension id, each value its settings
    /// object. Default empty (no `extensions` member). Never holds the Tasks extension
    /// ([`ServerBuilder::session_extensions`](crate::ServerBuilder::session_extensions)
    /// drops it); `server/discover` does not read it.
    pub session_extensions: tasks_core::JsonObject,
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
            session_extensions: tasks_core::JsonObject::new(),
        }
    }
}
