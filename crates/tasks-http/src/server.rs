//! A hardened connection loop for any tower service (the [`McpService`](crate::McpService)
//! alone, or an axum `Router` it is mounted in): HTTP/1.1 and HTTP/2, `TCP_NODELAY`, a time
//! limit on the request head ([`HEADER_READ_TIMEOUT`]), and graceful shutdown bounded by
//! [`SHUTDOWN_GRACE`]. No protocol decision is made here.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// How long a client may take to send the request head.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long graceful shutdown waits for open connections (SSE streams included).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Accepts connections on `listener` and serves each request with `service` until `shutdown`
/// is cancelled, then closes gracefully (waiting at most [`SHUTDOWN_GRACE`] for open
/// connections). With an [`McpHandle::shutdown_token`](crate::McpHandle::shutdown_token) as
/// `shutdown`, open listen streams get their closing response first.
///
/// ```no_run
/// # async fn run(builder: tasks_http::ServerBuilder) -> std::io::Result<()> {
/// let (mcp, handle) = builder.into_service().await?;
/// let app = axum::Router::new()
///     .route("/healthz", axum::routing::get(|| async { "ok" }))
///     .route_service("/mcp", mcp);
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// tasks_http::serve(listener, app, handle.shutdown_token()).await;
/// handle.shutdown().await;
/// # Ok(()) }
/// ```
pub async fn serve<S, B>(listener: TcpListener, service: S, shutdown: CancellationToken)
where
    S: tower_service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, peer): (_, SocketAddr) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    continue;
                }
            },
            _ = shutdown.cancelled() => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(service.clone());
        let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
        let connection = graceful.watch(connection.into_owned());
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::info!("graceful shutdown timed out; closing remaining connections");
    }
}

/// Resolves on Ctrl-C (SIGINT) or, on Unix, SIGTERM (what a process manager sends to stop a
/// service): the usual trigger of a graceful shutdown.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
