//! The conformance fixture: the tools the official MCP conformance runner's Tasks scenarios
//! (tasks-wire-reference §9) and core server scenarios (`runner-core-checks.md`) call, on an
//! in-memory store with one shared scope. It announces tool-list changes (advertising
//! `tools.listChanged`) so that `test_trigger_tool_change` reaches listen streams.
//!
//! [`server`] builds the server from [`Settings`]; the `tasks-fixture` binary parses the same
//! settings from its command line.

pub mod memory;
pub mod settings;
pub mod tools;

pub use settings::Settings;

use tasks_http::ServerBuilder;
use tasks_runtime::ListChanges;

/// The fixture's server name in serverInfo.
pub const SERVER_NAME: &str = "tasks-fixture";

/// A [`ServerBuilder`] with every fixture tool and `settings` applied.
pub fn server(settings: &Settings) -> ServerBuilder {
    let mut builder = ServerBuilder::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
        .limits(settings.limits())
        .ttl_ms(Some(settings.ttl_ms))
        .poll_interval_ms(settings.poll_interval_ms)
        .max_body_bytes(settings.max_body_bytes);
    let changes = ListChanges::new();
    builder = builder.list_changes(changes.clone());
    for tool in tools::all(&changes) {
        builder = builder.tool(tool);
    }
    builder
}
