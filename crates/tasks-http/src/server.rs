//! The thin hyper adapter: bytes and headers in, [`Dispatcher`] call, bytes out.
//!
//! It reads the head and the body under a time limit ([`READ_TIMEOUT`]) and the body under the
//! size limit (a refused body is drained in the background, up to [`DRAIN_LIMIT`], so the
//! client reads its 413 rather than a connection reset), frames SSE (`data: <one JSON message>` per event, a `: keep-alive` comment after
//! [`KEEP_ALIVE`] of silence, `Cache-Control: no-cache`, `X-Accel-Buffering: no`), and runs
//! connections with graceful shutdown (listen streams are closed with their final response
//! first). No protocol decision is made here.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::{stream, StreamExt as _};
use http::{header, HeaderValue, Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt as _, Empty, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::dispatcher::Dispatcher;
use crate::response::BodyError;
use crate::response::{McpResponse, ResponseBody};

/// The HTTP response body type.
pub type HttpBody = UnsyncBoxBody<Bytes, Infallible>;

/// How long a client may take to send the request head, and then the body.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// After this long without a message, an SSE stream gets a keep-alive comment line, so that
/// proxies and clients do not drop an idle `subscriptions/listen` stream (§11 rule 7).
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The keep-alive frame: an SSE comment, ignored by clients.
pub const KEEP_ALIVE_COMMENT: &[u8] = b": keep-alive\n\n";

/// How long graceful shutdown waits for open connections (SSE streams included).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// At most this many bytes of a refused body are read and discarded after its 413, so that the
/// client, still sending, reads the answer instead of a connection reset. Larger bodies are cut
/// off (the connection is closed under them).
pub const DRAIN_LIMIT: usize = 8 * 1024 * 1024;

/// How long a refused body may take to drain.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Reads the body up to `limit` bytes. On success the body is consumed; when it is too large,
/// what is left of it is drained in the background.
async fn read_body(mut body: Incoming, limit: usize) -> Result<Bytes, BodyError> {
    let mut collected = BytesMut::new();
    let read = async {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| BodyError::Incomplete)?;
            if let Ok(data) = frame.into_data() {
                if collected.len() + data.len() > limit {
                    return Err(BodyError::TooLarge(limit));
                }
                collected.extend_from_slice(&data);
            }
        }
        Ok(())
    };
    match tokio::time::timeout(READ_TIMEOUT, read).await {
        Ok(Ok(())) => Ok(collected.freeze()),
        Ok(Err(BodyError::TooLarge(limit))) => {
            drain(body);
            Err(BodyError::TooLarge(limit))
        }
        Ok(Err(error)) => Err(error),
        Err(_elapsed) => Err(BodyError::Incomplete),
    }
}

/// Discards the rest of a refused body (at most [`DRAIN_LIMIT`] bytes, for at most
/// [`DRAIN_TIMEOUT`]) while the response is written.
fn drain(mut body: Incoming) {
    tokio::spawn(async move {
        let mut left = DRAIN_LIMIT;
        let discard = async {
            while let Some(Ok(frame)) = body.frame().await {
                let size = frame.data_ref().map_or(0, Bytes::len);
                if size > left {
                    break;
                }
                left -= size;
            }
        };
        let _ = tokio::time::timeout(DRAIN_TIMEOUT, discard).await;
    });
}

fn declared_length(headers: &http::HeaderMap) -> Option<usize> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// Serves one HTTP request.
pub async fn handle(
    dispatcher: &Dispatcher,
    request: Request<Incoming>,
    max_body_bytes: usize,
) -> Response<HttpBody> {
    let declared = declared_length(request.headers());
    let (parts, body) = request.into_parts();
    // A body refused unread is drained, unless it announces more than DRAIN_LIMIT.
    let refuse = |body: Incoming| {
        if declared.is_none_or(|n| n <= DRAIN_LIMIT) {
            drain(body);
        }
    };
    let response = match dispatcher.admit_head(&parts) {
        Err(response) => {
            refuse(body);
            response
        }
        Ok(_) if declared.is_some_and(|n| n > max_body_bytes) => {
            refuse(body);
            McpResponse::body_error(BodyError::TooLarge(max_body_bytes))
        }
        Ok(scope) => match read_body(body, max_body_bytes).await {
            Ok(bytes) => dispatcher.dispatch(&parts.headers, &bytes, scope).await,
            Err(error) => McpResponse::body_error(error),
        },
    };
    into_http(response)
}

/// Converts a dispatcher response to an HTTP response.
pub fn into_http(response: McpResponse) -> Response<HttpBody> {
    let status = StatusCode::from_u16(response.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut builder = Response::builder().status(status);
    let body: HttpBody = match response.body {
        ResponseBody::Empty => Empty::new().boxed_unsync(),
        ResponseBody::Json(bytes) => {
            builder = builder.header(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            Full::new(bytes).boxed_unsync()
        }
        ResponseBody::Stream(messages) => {
            builder = builder
                .header(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/event-stream"),
                )
                .header(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))
                .header("x-accel-buffering", HeaderValue::from_static("no"));
            let frames = stream::unfold(messages, |mut messages| async move {
                let frame = match tokio::time::timeout(KEEP_ALIVE, messages.next()).await {
                    Ok(Some(message)) => {
                        let mut event = Vec::with_capacity(message.len() + 8);
                        event.extend_from_slice(b"data: ");
                        event.extend_from_slice(&message);
                        event.extend_from_slice(b"\n\n");
                        Bytes::from(event)
                    }
                    Ok(None) => return None,
                    Err(_idle) => Bytes::from_static(KEEP_ALIVE_COMMENT),
                };
                Some((Ok::<_, Infallible>(Frame::data(frame)), messages))
            });
            StreamBody::new(frames).boxed_unsync()
        }
    };
    builder
        .body(body)
        .unwrap_or_else(|_| Response::new(Empty::new().boxed_unsync()))
}

/// Accepts connections on `listener` until `shutdown` fires, then closes gracefully (waiting at
/// most [`SHUTDOWN_GRACE`] for open connections).
pub async fn serve(
    listener: TcpListener,
    dispatcher: Arc<Dispatcher>,
    max_body_bytes: usize,
    shutdown: CancellationToken,
) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(READ_TIMEOUT);
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
        let dispatcher = dispatcher.clone();
        let service = service_fn(move |request| {
            let dispatcher = dispatcher.clone();
            async move { Ok::<_, Infallible>(handle(&dispatcher, request, max_body_bytes).await) }
        });
        let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
        let connection = graceful.watch(connection.into_owned());
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    dispatcher.close_streams();
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::info!("graceful shutdown timed out; closing remaining connections");
    }
}
