//! `server/discover` (MCP 2026-07-28 discover:
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/discover>; SEP-2663
//! "Capability Negotiation"; no legacy `capabilities.tasks`: runner check
//! `tasks-capability-negotiation/tasks-extension-advertised`).
//!
//! Result: `supportedVersions`, `capabilities` ([`discover_capabilities`]: `tools`, with
//! `listChanged: true` when list changes are announced; `prompts`, `resources` and
//! `completions` when the catalog offers them; and `extensions["io.modelcontextprotocol/tasks"]
//! = {}`, never a legacy `capabilities.tasks`; `extensions["io.modelcontextprotocol/skills"] =
//! {"directoryRead": true}` when the catalog has a skill),
//! `ttlMs`, `cacheScope: "public"`, optional `instructions` and the serverInfo `_meta`.

use serde_json::Value;
use tasks_core::catalog::discover_capabilities;
use tasks_core::protocol::SUPPORTED_VERSIONS;
use tasks_core::wire::{CacheScope, DiscoverResult, ResultType};
use tasks_core::JsonObject;

use crate::response::McpResponse;
use crate::shared::Shared;

pub(crate) fn handle(d: &Shared, id: &Value) -> McpResponse {
    let catalog = d.runtime.catalog();
    let offers = |feature| catalog.offers(feature);
    let result = DiscoverResult {
        result_type: ResultType::Complete,
        supported_versions: SUPPORTED_VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
        capabilities: discover_capabilities(offers, d.config.list_changes.is_some()),
        ttl_ms: d.config.cache_ttl_ms,
        cache_scope: CacheScope::Public,
        instructions: d.config.instructions.clone(),
        meta: JsonObject::clone(&d.server_meta),
    };
    McpResponse::result(id, &result)
}
