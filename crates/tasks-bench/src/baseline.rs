//! The baseline: a server on the fixture's runtime settings (a multi-threaded tokio runtime with
//! the same worker-thread count) and its very connection loop ([`tasks_http::serve`]: hyper-util's
//! `auto` builder, the same header timeout, `TCP_NODELAY`) that answers every POST with the same
//! fixed JSON-RPC response, a captured `tasks/get` response of the fixture. It does no MCP work,
//! so its requests per second are the ceiling of the HTTP stack on this machine.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

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
    let runtime = runtime.enable_all().build();
    let served = runtime
        .map_err(|e| format!("baseline: {e}"))?
        .block_on(async {
            let listener = TcpListener::bind(listen).await?;
            // Stdout is line-buffered: the line is out before the first request.
            println!("http://{}/mcp", listener.local_addr()?);
            let service = tower::service_fn(move |request| answer(request, body.clone()));
            tasks_http::serve(listener, service, CancellationToken::new()).await;
            std::io::Result::Ok(())
        });
    served.map_err(|e| format!("baseline: {e}"))
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
