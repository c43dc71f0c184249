//! `server/discover` (`wire-2026-07-28.md` §4).
//!
//! Result: `supportedVersions`, `capabilities` (`tools`, with `listChanged: true` when list
//! changes are announced, and `extensions["io.modelcontextprotocol/tasks"] = {}`, never a legacy
//! `capabilities.tasks`),
//! `ttlMs`, `cacheScope: "public"`, optional `instructions` and the serverInfo `_meta`.

use serde_json::{json, Value};
use tasks_core::protocol::{SUPPORTED_VERSIONS, TASKS_EXTENSION};

use crate::dispatcher::Dispatcher;
use crate::response::McpResponse;
use tasks_core::admission::Admitted;

pub(crate) fn handle(d: &Dispatcher, request: &Admitted) -> McpResponse {
    let mut result = json!({
        "resultType": "complete",
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": {
            "tools": if d.config.list_changes.is_some() {
                json!({"listChanged": true})
            } else {
                json!({})
            },
            "extensions": { TASKS_EXTENSION: {} },
        },
        "ttlMs": d.config.cache_ttl_ms,
        "cacheScope": "public",
        "_meta": d.server_meta,
    });
    if let (Some(text), Value::Object(object)) = (&d.config.instructions, &mut result) {
        object.insert("instructions".into(), Value::from(text.clone()));
    }
    McpResponse::result(&request.id, &result)
}
