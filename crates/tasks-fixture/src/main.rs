//! `tasks-fixture`: run the conformance fixture server. See `tasks-fixture --help`.

use std::io::Write as _;

use clap::Parser as _;
use tasks_fixture::Settings;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let settings = Settings::parse();
    let server = match tasks_fixture::server(&settings).bind(settings.listen).await {
        Ok(server) => server,
        Err(error) => {
            tracing::error!(%error, listen = %settings.listen, "cannot bind");
            return std::process::ExitCode::FAILURE;
        }
    };
    let url = server.url();
    tracing::info!(%url, "serving MCP 2026-07-28 with the Tasks extension");
    // The one line a harness waits for.
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{url}");
    let _ = stdout.flush();
    drop(stdout);
    let stop = server.shutdown_token();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("shutting down");
        stop.cancel();
    });
    server.wait().await;
    std::process::ExitCode::SUCCESS
}
