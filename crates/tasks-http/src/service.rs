//! The MCP endpoint as a [`tower_service::Service`]: mount it anywhere (an axum `Router`, a
//! hyper server, behind tower layers), and the [`McpHandle`] that owns its background work.
//!
//! The service is path-agnostic: whatever path the host routes to it is the MCP endpoint (with
//! axum, `Router::nest_service("/api/mcp", service)` or `route_service`). It reads the request
//! body itself, under a time limit ([`READ_TIMEOUT`]) and the size limit
//! ([`ServerBuilder::max_body_bytes`](crate::ServerBuilder::max_body_bytes)); a refused body is
//! drained in the background (up to [`DRAIN_LIMIT`]) so the client reads its 413 rather than a
//! connection reset. It frames SSE (`data: <one JSON message>` per event, a `: keep-alive`
//! comment after [`KEEP_ALIVE`] of silence, `Cache-Control: no-cache`,
//! `X-Accel-Buffering: no`). No protocol decision is made here: the [`Dispatcher`] and the
//! core's planner make them.
//!
//! The caller's scope comes from a [`Principal`](crate::Principal) in the request extensions (put there by an
//! authentication layer), else from [`ServerBuilder::principal_fn`](crate::ServerBuilder::principal_fn),
//! else the one shared scope.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf as _, Bytes};
use futures_util::{stream, StreamExt as _};
use http::{header, HeaderValue, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt as _, Empty, Full, LengthLimitError, Limited, StreamBody};
use hyper::body::Frame;
use tasks_core::sessions::SESSION_HEADER;
use tasks_runtime::{Node, TaskRuntime};
use tokio_util::sync::CancellationToken;

use crate::dispatcher::Dispatcher;
use crate::response::{BodyError, McpResponse, ResponseBody};

/// The HTTP response body type.
pub type HttpBody = UnsyncBoxBody<Bytes, Infallible>;

/// How long a client may take to send the request body.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// After this long without a message, an SSE stream gets a keep-alive comment line, so that
/// proxies and clients do not drop an idle `subscriptions/listen` stream.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The keep-alive frame: an SSE comment, ignored by clients.
pub const KEEP_ALIVE_COMMENT: &[u8] = b": keep-alive\n\n";

/// At most this many bytes of a refused body are read and discarded after its 413, so that the
/// client, still sending, reads the answer instead of a connection reset. Larger bodies are cut
/// off (the connection is closed under them).
pub const DRAIN_LIMIT: usize = 8 * 1024 * 1024;

/// How long a refused body may take to drain.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// The `Retry-After` of every 503 the endpoint answers (a task store that is briefly
/// unavailable, every 2025 session slot busy), in seconds: RFC 9110 section 10.2.3 lets a 503
/// say when to retry. This server's choice.
pub const RETRY_AFTER_SECS: u64 = 1;

/// The MCP endpoint as a `tower::Service<http::Request<B>>`, for any request body `B`
/// (hyper's `Incoming`, `axum::body::Body`, …). Cheap to clone; every clone serves the same
/// tasks. Never fails (`Error = Infallible`): every problem is an HTTP response (403 for a
/// foreign `Host`/`Origin`, 405 for a method other than POST, 415, 413, 401 from
/// [`ServerBuilder::principal_fn`](crate::ServerBuilder::principal_fn), and JSON-RPC errors).
///
/// Built by [`ServerBuilder::into_service`](crate::ServerBuilder::into_service), with the
/// [`McpHandle`] that shuts it down. The background work (reaper, liveness) runs as long as a
/// clone of the service or the handle lives, so it cannot be forgotten.
#[derive(Clone, Debug)]
pub struct McpService {
    dispatcher: Arc<Dispatcher>,
    max_body_bytes: usize,
    challenge: Option<HeaderValue>,
    /// The node (liveness loop, reaper), kept running by every clone.
    _node: Arc<Node>,
}

/// What [`McpService`] returns for every request.
pub type ResponseFuture =
    Pin<Box<dyn Future<Output = Result<Response<HttpBody>, Infallible>> + Send>>;

impl<B> tower_service::Service<Request<B>> for McpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    type Response = Response<HttpBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}

impl McpService {
    /// The dispatcher (and through it the runtime).
    pub fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.dispatcher
    }

    /// Serves one request.
    pub async fn handle<B>(&self, request: Request<B>) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn StdError + Send + Sync>>,
    {
        let limit = self.max_body_bytes;
        let declared = declared_length(request.headers());
        let (parts, body) = request.into_parts();
        // A body refused unread is drained, unless it announces more than DRAIN_LIMIT.
        let refuse = |body: B| {
            if declared.is_none_or(|n| n <= DRAIN_LIMIT) {
                drain(Box::pin(body));
            }
        };
        let response = match self.dispatcher.admit_head(&parts) {
            Err(response) => {
                refuse(body);
                response
            }
            Ok(caller) if parts.method != http::Method::POST => {
                refuse(body);
                self.dispatcher.session_request(&parts, &caller.scope)
            }
            Ok(_) if declared.is_some_and(|n| n > limit) => {
                refuse(body);
                McpResponse::body_error(BodyError::TooLarge(limit))
            }
            Ok(caller) => match read_body(body, limit).await {
                Ok(bytes) => {
                    self.dispatcher
                        .dispatch(&parts.headers, &bytes, caller)
                        .await
                }
                Err(error) => McpResponse::body_error(error),
            },
        };
        let mut response = into_http(response);
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            // RFC 9110 §15.5.6: a 405 lists the methods the resource supports.
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
        }
        if let Some(challenge) = &self.challenge {
            if response.status() == StatusCode::UNAUTHORIZED {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, challenge.clone());
            }
        }
        response
    }
}

/// Owns what an [`McpService`] runs besides requests, and shuts it down.
///
/// ```no_run
/// # async fn run(builder: tasks_http::ServerBuilder) -> std::io::Result<()> {
/// let (service, handle) = builder.into_service().await?;
/// let app = axum::Router::new().nest_service("/mcp", service);
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// let stop = handle.shutdown_token();
/// tokio::spawn({
///     let stop = stop.clone();
///     async move {
///         let _ = tokio::signal::ctrl_c().await;
///         stop.cancel(); // open listen streams end with their closing response
///     }
/// });
/// axum::serve(listener, app)
///     .with_graceful_shutdown(stop.cancelled_owned())
///     .await?;
/// handle.shutdown().await; // drain, stop the reaper, end the node's lease
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping the handle gives up graceful shutdown (listen streams, the node lease)"]
pub struct McpHandle {
    dispatcher: Arc<Dispatcher>,
    node: Arc<Node>,
    drain_timeout: Duration,
}

impl McpHandle {
    /// The dispatcher (and through it the runtime).
    pub fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.dispatcher
    }

    /// Every metric of the server as OpenMetrics text
    /// ([`metrics::CONTENT_TYPE`](crate::metrics::CONTENT_TYPE)), for the host application's
    /// `GET /metrics` route.
    pub async fn encode_metrics(&self) -> String {
        self.dispatcher.encode_metrics().await
    }

    /// The runtime: register or remove tools at run time, look at tasks.
    pub fn runtime(&self) -> &TaskRuntime {
        self.dispatcher.runtime()
    }

    /// The token that starts shutting down when cancelled: every open `subscriptions/listen`
    /// stream ends with its graceful-closure response, and listen requests arriving later close
    /// right after their acknowledgement. Pass `token.cancelled_owned()` to the host server's
    /// graceful shutdown (it would otherwise wait for those streams forever), then call
    /// [`McpHandle::shutdown`].
    pub fn shutdown_token(&self) -> CancellationToken {
        self.dispatcher.shared.shutdown.clone()
    }

    /// Shuts down: ends open listen streams (as [`McpHandle::shutdown_token`] does), lets
    /// running tasks finish for up to the drain timeout
    /// ([`ServerBuilder::drain_timeout`](crate::ServerBuilder::drain_timeout)), stops the reaper
    /// and the liveness loop, and ends this node's lease
    /// ([`TaskRuntime::retire`](tasks_runtime::TaskRuntime::retire)), so unfinished tasks can
    /// be taken over at once. Requests still served after this are answered, but nothing reaps
    /// their tasks any more.
    pub async fn shutdown(self) {
        self.dispatcher.close_streams();
        self.node.shutdown(self.drain_timeout).await;
    }
}

/// Starts the runtime's node ([`TaskRuntime::start`]: recovery, the liveness loop, the
/// reaper) and returns the service and its handle.
pub(crate) async fn start(
    dispatcher: Dispatcher,
    max_body_bytes: usize,
    challenge: Option<HeaderValue>,
    drain_timeout: Duration,
) -> std::io::Result<(McpService, McpHandle)> {
    let dispatcher = Arc::new(dispatcher);
    let node = dispatcher
        .runtime()
        .start()
        .await
        .map_err(|error| std::io::Error::other(format!("task recovery failed: {error}")))?;
    let node = Arc::new(node);
    let service = McpService {
        dispatcher: dispatcher.clone(),
        max_body_bytes,
        challenge,
        _node: node.clone(),
    };
    let handle = McpHandle {
        dispatcher,
        node,
        drain_timeout,
    };
    Ok((service, handle))
}

/// Reads the body up to `limit` bytes, within [`READ_TIMEOUT`]. When it is too large, what is
/// left of it is drained in the background.
async fn read_body<B>(body: B, limit: usize) -> Result<Bytes, BodyError>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let mut body = Box::pin(body);
    let read = Limited::new(&mut body, limit).collect();
    match tokio::time::timeout(READ_TIMEOUT, read).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) if error.is::<LengthLimitError>() => {
            drain(body);
            Err(BodyError::TooLarge(limit))
        }
        Ok(Err(_)) | Err(_) => Err(BodyError::Incomplete),
    }
}

/// Discards the rest of a refused body (at most [`DRAIN_LIMIT`] bytes, for at most
/// [`DRAIN_TIMEOUT`]) while the response is written.
fn drain<B>(mut body: Pin<Box<B>>)
where
    B: Body + Send + 'static,
    B::Data: Send,
{
    tokio::spawn(async move {
        let mut left = DRAIN_LIMIT;
        let discard = async {
            while let Some(Ok(frame)) = body.frame().await {
                let size = frame.data_ref().map_or(0, |data| data.remaining());
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

/// Converts a dispatcher response to an HTTP response; a 503 gets
/// `Retry-After: `[`RETRY_AFTER_SECS`].
pub fn into_http(response: McpResponse) -> Response<HttpBody> {
    let status = StatusCode::from_u16(response.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut builder = Response::builder().status(status);
    if status == StatusCode::SERVICE_UNAVAILABLE {
        builder = builder.header(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    }
    if let Some(id) = response
        .session_id
        .as_deref()
        .and_then(|id| HeaderValue::from_str(id).ok())
    {
        builder = builder.header(SESSION_HEADER, id);
    }
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

/// The answer to a request for a path other than the one the server serves: HTTP 404 with a
/// plain-text body naming the MCP endpoint's path (`Not found: the MCP endpoint is /mcp`), not
/// a JSON-RPC error (the request never reached the MCP endpoint).
pub fn not_found(endpoint_path: &str) -> Response<HttpBody> {
    let text = format!("Not found: the MCP endpoint is {endpoint_path}\n");
    Response::builder()
        .status(StatusCode::NOT_FOUND)
        .header(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )
        .body(Full::new(Bytes::from(text)).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Empty::new().boxed_unsync()))
}
