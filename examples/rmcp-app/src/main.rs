//! `rmcp-app`: an rmcp server with durable tasks. See `rmcp-app --help`.

use std::io::Write as _;

use clap::Parser as _;
use rmcp::ServiceExt as _;
use rmcp_app::{App, Settings, ENDPOINT_PATH};
use tokio_util::sync::CancellationToken;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let settings = Settings::parse();
    // rmcp logs every request at INFO, and an ERROR "failed to send pending response during
    // drain" each time a client closes a listen stream (harmless): WARN and above from rmcp.
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let (app, node) = match rmcp_app::start(&settings).await {
        Ok(started) => started,
        Err(error) => {
            tracing::error!("{error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let store_kind = node.runtime().store_kind();
    let served = if settings.stdio {
        serve_stdio(app).await
    } else {
        serve_http(app, &settings, store_kind).await
    };
    tracing::info!("draining running tasks");
    node.shutdown(settings.drain()).await;
    tracing::info!(store = %settings.store.describe(), "stopped");
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Serves `/mcp` until Ctrl-C or SIGTERM (a second one stops at once, saying what becomes of
/// running tasks in a store of `store_kind`).
async fn serve_http(app: App, settings: &Settings, store_kind: &'static str) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .map_err(|error| format!("cannot bind {}: {error}", settings.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|error| format!("cannot read the bound address: {error}"))?;
    let url = format!("http://{addr}{ENDPOINT_PATH}");
    let stop = CancellationToken::new();
    let router = rmcp_app::router(app, stop.child_token());
    tracing::info!(%url, store = %settings.store.describe(), "serving MCP 2026-07-28 with the Tasks extension (rmcp)");
    // The one line a harness waits for.
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{url}");
    let _ = stdout.flush();
    drop(stdout);
    tokio::spawn({
        let stop = stop.clone();
        async move {
            signal().await;
            tracing::info!("shutting down (a second Ctrl-C or SIGTERM stops at once)");
            stop.cancel();
            signal().await;
            tracing::warn!(
                "stopping at once: running tasks are stopped: {}",
                tasks_runtime::unfinished_fate(store_kind)
            );
            std::process::exit(130);
        }
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(stop.cancelled_owned())
        .await
        .map_err(|error| format!("the server failed: {error}"))
}

/// Speaks MCP over stdin and stdout until the client closes stdin.
async fn serve_stdio(app: App) -> Result<(), String> {
    let running = app
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| format!("cannot start the stdio server: {error}"))?;
    running
        .waiting()
        .await
        .map(drop)
        .map_err(|error| format!("the stdio server failed: {error}"))
}

/// Ctrl-C or SIGTERM.
async fn signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
