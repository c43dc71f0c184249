//! What the method handlers share: the runtime, the settings and what is built once.

use std::sync::Arc;

use tasks_core::jsonrpc::with_server_meta;
use tasks_core::mrtr::StateKey;
use tasks_core::wire::ToolsListResult;
use tasks_core::JsonObject;
use tasks_runtime::TaskRuntime;
use tokio_util::sync::CancellationToken;

use crate::config::DispatchConfig;

/// The state every method handler reads.
pub(crate) struct Shared {
    pub(crate) runtime: TaskRuntime,
    pub(crate) config: DispatchConfig,
    /// `{"io.modelcontextprotocol/serverInfo": {name, version}}`, shared with streaming
    /// responses that outlive a dispatch call.
    pub(crate) server_meta: Arc<JsonObject>,
    pub(crate) state_key: StateKey,
    pub(crate) tools_list: ToolsListResult,
    /// Fires on shutdown: open `subscriptions/listen` streams then close gracefully.
    pub(crate) shutdown: CancellationToken,
}

impl Shared {
    /// A result object with the serverInfo `_meta` added (existing `_meta` keys kept).
    pub(crate) fn with_server_meta(&self, result: JsonObject) -> JsonObject {
        with_server_meta(&self.server_meta, result)
    }
}
