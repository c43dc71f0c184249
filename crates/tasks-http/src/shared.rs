//! What the method handlers share: the runtime, the settings, and what is built once (or once
//! per change of the tools: the `tools/list` result).

use std::sync::Arc;

use arc_swap::ArcSwap;
use tasks_core::jsonrpc::with_server_meta;
use tasks_core::plan::ServerView;
use tasks_core::plan::StateKey;
use tasks_core::wire::ResultMeta;
use tasks_core::wire::ToolsListResult;
use tasks_core::{Feature, JsonObject};
use tasks_runtime::catalog::Catalog;
use tasks_runtime::{Executor, TaskRuntime, Tool, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::config::DispatchConfig;
use crate::metrics::Metrics;

/// The live 2025 sessions; without the `sessions` feature a type with no values.
#[cfg(feature = "sessions")]
pub(crate) type Sessions = tasks_runtime::sessions::Sessions;
/// The live 2025 sessions; without the `sessions` feature a type with no values.
#[cfg(not(feature = "sessions"))]
pub(crate) type Sessions = std::convert::Infallible;

/// The state every method handler reads.
pub(crate) struct Shared {
    pub(crate) runtime: TaskRuntime,
    /// Carries out the planned task methods and task creations on `runtime`.
    pub(crate) executor: Executor,
    pub(crate) config: DispatchConfig,
    /// `{"io.modelcontextprotocol/serverInfo": {name, version}}`, shared with streaming
    /// responses that outlive a dispatch call.
    pub(crate) server_meta: Arc<ResultMeta>,
    pub(crate) state_key: StateKey,
    /// The `tools/list` result of the newest tool snapshot asked for.
    pub(crate) tools_list: ArcSwap<ToolsList>,
    /// Fires on shutdown: open `subscriptions/listen` streams then close gracefully.
    pub(crate) shutdown: CancellationToken,
    /// The server's metrics.
    pub(crate) metrics: Arc<Metrics>,
    /// The live 2025 sessions, when the session path is on.
    pub(crate) sessions: Option<Sessions>,
}

/// A `tools/list` result and the tool snapshot it lists.
pub(crate) struct ToolsList {
    pub(crate) tools: Arc<ToolRegistry>,
    pub(crate) result: Arc<ToolsListResult>,
}

impl Shared {
    /// The `tools/list` result of `tools`: the cached one when it lists the same snapshot,
    /// else built (once per change of the tools) and cached.
    pub(crate) fn tools_list(&self, tools: &Arc<ToolRegistry>) -> Arc<ToolsListResult> {
        let cached = self.tools_list.load();
        if Arc::ptr_eq(&cached.tools, tools) {
            return cached.result.clone();
        }
        let meta = JsonObject::clone(&self.server_meta);
        let result = Arc::new(tools.list_result(self.config.cache_ttl_ms, meta));
        self.tools_list.store(Arc::new(ToolsList {
            tools: tools.clone(),
            result: result.clone(),
        }));
        result
    }

    /// A result object with the serverInfo `_meta` added (existing `_meta` keys kept).
    pub(crate) fn with_server_meta(&self, result: JsonObject) -> JsonObject {
        with_server_meta(&self.server_meta, result)
    }
}

/// What the planner sees of the server for one request: the tools as registered when the
/// request arrived (a snapshot: tools registered or removed meanwhile do not change it).
pub(crate) struct View<'a> {
    pub(crate) tools: Arc<ToolRegistry>,
    /// The prompts and resources as registered when the request arrived.
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) state_key: &'a StateKey,
}

impl ServerView for View<'_> {
    type Tool = Arc<Tool>;

    fn tool(&self, name: &str) -> Option<Arc<Tool>> {
        self.tools.get(name).cloned()
    }

    fn state_key(&self) -> &StateKey {
        self.state_key
    }

    fn offers(&self, feature: Feature) -> bool {
        self.catalog.offers(feature)
    }
}
