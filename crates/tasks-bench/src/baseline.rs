//! The baseline: a bare hyper server with the fixture's runtime and connection settings (a
//! multi-threaded tokio runtime with the same worker-thread count, hyper-util's `auto` builder
//! with the same HTTP/1 header timeout, `TCP_NODELAY`) that answers every POST with the same
//! fixed JSON-RPC response, a captured `tasks/get` response of the fixture. It does no MCP work,
//! so its requests per second are the ceiling of the HTTP stack on this machine.

use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

/// The fixture's header read timeout (tasks-http `READ_TIMEOUT`).
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the baseline server on `listen` with `worker_threads` (tokio's default when `None`),
/// answering with `body`; prints its URL as the first stdout line, like the fixture. Runs until
/// killed.
pub(crate) fn serve(
    listen: SocketAddr,
    worker_threads: Option<u16>,
    body: Bytes,
) -> Result<(), String> {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(threads) = worker_threads {
        runtime.worker_threads(usize::from(threads));
    }
    let runtime = runtime
        .enable_all()
        .build()
        .map_err(|e| format!("baseline: {e}"))?;
    let served = runtime.block_on(accept_loop(listen, body));
    served.map_err(|e| format!("baseline: {e}"))
}

async fn accept_loop(listen: SocketAddr, body: Bytes) -> std::io::Result<()> {
    let listener = TcpListener::bind(listen).await?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "http://{}/mcp", listener.local_addr()?)?;
    stdout.flush()?;
    drop(stdout);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(READ_TIMEOUT);
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => continue,
        };
        let _ = stream.set_nodelay(true);
        let body = body.clone();
        let service = service_fn(move |request| answer(request, body.clone()));
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        tokio::spawn(async move {
            let _ = connection.await;
        });
    }
}

/// Reads the request body like the fixture does, then answers a POST with `body`.
async fn answer(
    request: Request<Incoming>,
    body: Bytes,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let post = request.method() == Method::POST;
    let read = request.into_body().collect().await.is_ok();
    let (status, body) = match (post, read) {
        (true, true) => (StatusCode::OK, body),
        (true, false) => (StatusCode::BAD_REQUEST, Bytes::new()),
        (false, _) => (StatusCode::METHOD_NOT_ALLOWED, Bytes::new()),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    if status == StatusCode::OK {
        let json = HeaderValue::from_static("application/json");
        response.headers_mut().insert(header::CONTENT_TYPE, json);
    }
    Ok(response)
}
