//! A hardened connection loop for any tower service (the [`McpService`](crate::McpService)
//! alone, or an axum `Router` it is mounted in): HTTP/1.1 and HTTP/2, `TCP_NODELAY`, at most
//! [`MAX_CONNECTIONS`] open at once, a time limit on a new connection's first bytes and on the
//! request head ([`HEADER_READ_TIMEOUT`]), HTTP/2 keep-alive pings ([`H2_KEEP_ALIVE`]), a
//! pause after a failed accept (out of file descriptors, say) instead of a busy loop, and
//! graceful shutdown bounded by [`SHUTDOWN_GRACE`]. No protocol decision is made here.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::net::SocketAddr;
use std::sync::Arc;
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
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// How long a client may take to send the request head.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The first pause after a failed accept; it doubles with each failure in a row, up to
/// [`ACCEPT_PAUSE_MAX`].
const ACCEPT_PAUSE_MIN: Duration = Duration::from_millis(10);

/// The longest pause after failed accepts.
const ACCEPT_PAUSE_MAX: Duration = Duration::from_secs(1);

/// How long graceful shutdown waits for open connections (SSE streams included).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// At most this many connections are served at once; beyond it new connections wait in the
/// listen backlog until one closes.
pub const MAX_CONNECTIONS: usize = 10_000;

/// An HTTP/2 connection is pinged after this long without a frame, and closed when the ping is
/// not answered within the same time.
pub const H2_KEEP_ALIVE: Duration = Duration::from_secs(20);

/// The HTTP/2 connection preface: a connection that starts with it is HTTP/2.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Waits (within [`HEADER_READ_TIMEOUT`]) until the first bytes of `stream` tell HTTP/1 from
/// HTTP/2, without consuming them. `false` when the peer closed, stalled or failed first: the
/// connection is dropped (hyper would otherwise wait for the protocol forever).
async fn protocol_known(stream: &tokio::net::TcpStream) -> bool {
    let wait = async {
        let mut buffer = [0u8; H2_PREFACE.len()];
        loop {
            match stream.peek(&mut buffer).await {
                Ok(0) | Err(_) => return false,
                Ok(n) if n == H2_PREFACE.len() || buffer[..n] != H2_PREFACE[..n] => return true,
                // A prefix of the HTTP/2 preface: wait for more.
                Ok(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    };
    tokio::time::timeout(HEADER_READ_TIMEOUT, wait)
        .await
        .unwrap_or(false)
}

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
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(H2_KEEP_ALIVE)
        .keep_alive_timeout(H2_KEEP_ALIVE);
    let builder = Arc::new(builder);
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut pause = ACCEPT_PAUSE_MIN;
    loop {
        let accepted = tokio::select! {
            accepted = async {
                let slot = slots.clone().acquire_owned().await;
                (slot, listener.accept().await)
            } => accepted,
            _ = shutdown.cancelled() => break,
        };
        let (slot, stream, peer): (_, _, SocketAddr) = match accepted {
            (Ok(slot), Ok((stream, peer))) => (slot, stream, peer),
            (_, Err(error)) => {
                // Out of file descriptors, say: pause (longer each time, up to a second)
                // rather than spin, and say so once per pause.
                tracing::warn!(%error, pause_ms = pause.as_millis() as u64, "accept failed");
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = shutdown.cancelled() => break,
                }
                pause = (pause * 2).min(ACCEPT_PAUSE_MAX);
                continue;
            }
            (Err(_closed), _) => break,
        };
        pause = ACCEPT_PAUSE_MIN;
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(service.clone());
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let stopping = shutdown.clone();
        tokio::spawn(async move {
            let _slot = slot;
            // A connection that has not said which protocol it speaks when shutdown starts has
            // no request in flight: it is dropped rather than waited for.
            let known = tokio::select! {
                known = protocol_known(&stream) => known,
                () = stopping.cancelled() => false,
            };
            if !known {
                return;
            }
            let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            if let Err(error) = watcher.watch(connection).await {
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
