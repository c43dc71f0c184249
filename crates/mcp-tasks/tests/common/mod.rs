//! What both test files of the terminal client need: the fixture on an ephemeral port.

use std::net::SocketAddr;

use tasks_http::RunningServer;

/// The fixture on `127.0.0.1:0`, polling interval 100 ms, not waiting for running tasks at
/// shutdown.
pub(crate) async fn fixture() -> RunningServer {
    fixture_at("127.0.0.1:0".parse().expect("an address")).await
}

/// The fixture as [`fixture`] starts it, on `address` (a restart on the same port).
#[allow(dead_code, reason = "not every test file restarts a server")]
pub(crate) async fn fixture_at(address: SocketAddr) -> RunningServer {
    let settings = tasks_fixture::Settings {
        listen: address,
        drain_ms: 0,
        poll_interval_ms: 100,
        ..Default::default()
    };
    tasks_fixture::server(&settings)
        .bind(settings.listen)
        .await
        .expect("the fixture binds")
}
