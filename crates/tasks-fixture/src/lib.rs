//! The conformance fixture: the tools the official MCP conformance runner's
//! (`@modelcontextprotocol/conformance@0.2.0-alpha.12`) Tasks scenarios (`tasks-*`) and
//! 2026-07-28 core server scenarios (`server-stateless`, `tools-*`, `input-required-result-*`,
//! the header scenarios; see `conformance/scenarios.txt`) call, with one
//! shared scope, on the in-memory store or a durable SQLite database (`--store sqlite:PATH`). It announces tool-list changes (advertising
//! `tools.listChanged`) so that `test_trigger_tool_change` reaches listen streams.
//!
//! [`server`] builds an in-memory server from [`Settings`]; [`open_server`] applies the store
//! and the secret file as well, as the `tasks-fixture` binary does with the settings of its
//! command line; [`app::router`] mounts the MCP service in the fixture's axum application
//! (`/mcp`, `GET /healthz` and `GET /metrics`), and [`app::App`], which the binary serves, hands
//! requests for `/mcp` to the service without the router when no layer wraps the endpoint.
//!
//! # Modules
//!
//! | module | uses |
//! |---|---|
//! | `app` (the HTTP application), `settings` (the command line), `memory` (freed memory back to the OS) | nothing of this crate |

pub mod app;
pub mod memory;
pub mod settings;

/// The `--store` choice (memory, SQLite, PostgreSQL): [`tasks_conformance::store`].
pub use tasks_conformance::store;
/// The fixture's tools: [`tasks_conformance::tools`].
pub use tasks_conformance::tools;

pub use settings::Settings;

use tasks_http::ServerBuilder;
use tasks_runtime::ListChanges;

/// The fixture's server name in serverInfo.
pub const SERVER_NAME: &str = "tasks-fixture";

/// A [`ServerBuilder`] with every fixture tool, prompt and resource
/// ([`tasks_conformance::catalog`]) and `settings` applied.
pub fn server(settings: &Settings) -> ServerBuilder {
    let builder = ServerBuilder::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
        .limits(settings.limits())
        .ttl_ms(Some(settings.ttl_ms))
        .poll_interval_ms(settings.poll_interval_ms)
        .max_body_bytes(settings.max_body_bytes)
        .drain_timeout(std::time::Duration::from_millis(settings.drain_ms))
        .leases(settings.leases())
        .allowed_hosts(settings.allowed_hosts.clone())
        .allowed_origins(settings.cors_origins.clone())
        .session_extensions(tools::session::session_extensions());
    let changes = ListChanges::new();
    let builder = builder.list_changes(changes.clone());
    builder
        .tools(tools::all(&changes, settings.run_log.as_deref()))
        .tools(tasks_conformance::catalog::tools(&changes))
        .catalog(tasks_conformance::catalog::catalog())
}

/// [`server`] with the store of `settings.store` and the keys of its secret file
/// ([`Settings::secret_path`]).
///
/// # Errors
/// A one-line reason the store or the secret file cannot be opened (nothing stored is changed
/// then).
pub async fn open_server(settings: &Settings) -> Result<ServerBuilder, String> {
    // The store first: a database that cannot be opened leaves no new secret file behind.
    let store = store::open(
        &settings.store,
        settings.sqlite_synchronous,
        &settings.postgres_schema,
    )
    .await?;
    let mut builder = server(settings).store(store);
    if let Some(path) = settings.secret_path() {
        let secret = tasks_runtime::load_or_create_secret(&path)
            .map_err(|error| format!("cannot use secret file {}: {error}", path.display()))?;
        builder = builder.secret(&secret);
    } else if matches!(settings.store, store::StoreSpec::Postgres(_)) {
        tracing::warn!(
            "no --secret-file: this node draws its own secret, so an MRTR retry or a scope \
             reaching another node will not verify; give every node the same secret file"
        );
    }
    Ok(builder)
}

/// The durable-tasks guide's example (`docs/guides/durable.md`), compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guides/durable.md")]
mod guide_durable {}
