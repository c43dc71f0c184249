//! The conformance fixture in process, on an ephemeral loopback port.

use tasks_fixture::Settings;
use tasks_http::RunningServer;

use crate::dispatcher::bearer_principal;

/// Fixture settings listening on an ephemeral loopback port, shutting down without waiting
/// for running tasks (tests stop servers with long tasks still running).
pub fn settings() -> Settings {
    Settings {
        listen: "127.0.0.1:0".parse().expect("a socket address"),
        drain_ms: 0,
        ..Default::default()
    }
}

/// [`settings`] with a 100 ms polling interval (the terminal client's tests watch tasks
/// change).
pub fn quick_settings() -> Settings {
    Settings {
        poll_interval_ms: 100,
        ..settings()
    }
}

/// Starts the fixture with `settings`.
///
/// # Panics
/// When the address cannot be bound.
pub async fn start(settings: Settings) -> RunningServer {
    tasks_fixture::server(&settings)
        .bind(settings.listen)
        .await
        .expect("the fixture binds a loopback port")
}

/// Starts the fixture with `settings` and a scope per bearer token ([`bearer_principal`]).
///
/// # Panics
/// When the address cannot be bound.
pub async fn start_scoped(settings: Settings) -> RunningServer {
    tasks_fixture::server(&settings)
        .principal_fn(bearer_principal)
        .bind(settings.listen)
        .await
        .expect("the fixture binds a loopback port")
}
