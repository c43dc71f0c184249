//! What both test files of the terminal client need: the fixture on an ephemeral port.

use tasks_http::RunningServer;

/// The fixture on `127.0.0.1:0`, polling interval 100 ms, not waiting for running tasks at
/// shutdown.
pub(crate) async fn fixture() -> RunningServer {
    let settings = tasks_fixture::Settings {
        listen: "127.0.0.1:0".parse().expect("an address"),
        drain_ms: 0,
        poll_interval_ms: 100,
        ..Default::default()
    };
    tasks_fixture::server(&settings)
        .bind(settings.listen)
        .await
        .expect("the fixture binds")
}
