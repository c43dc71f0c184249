//! The baseline: a bare hyper server with the fixture's runtime and connection settings (a
//! multi-threaded tokio runtime with the same worker-thread count, hyper-util's `auto` builder
//! with the same HTTP/1 header timeout, `TCP_NODELAY`) that answers every POST with the same
//! fixed JSON-RPC response, a captured `tasks/get` response of the fixture. It does no MCP work,
//! so its requests per second are the ceiling of the HTTP stack on this machine.

use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
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
pub(crate) fn serve(listen: SocketAddr, worker_threads: Option<u16>, body: Bytes) -> ExitCode {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(threads) = worker_threads {
        runtime.worker_threads(usize::from(threads));
    }
    let runtime = match runtime.build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("baseline: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(accept_loop(listen, body)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("baseline: {error}");
            ExitCode::FAILURE
        }
    }
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

async fn answer(
    request: Request<Incoming>,
    body: Bytes,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = request.method().clone();
    // Read the request body like the fixture does, then drop it.
    let read = request.into_body().collect().await;
    let mut response = if method == Method::POST && read.is_ok() {
        let mut response = Response::new(Full::new(body));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    } else {
        Response::new(Full::new(Bytes::new()))
    };
    if method != Method::POST {
        *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
    } else if read.is_err() {
        *response.status_mut() = StatusCode::BAD_REQUEST;
    }
    Ok(response)
}
