//! The fixture's HTTP application: an axum `Router` with the MCP service at [`ENDPOINT_PATH`],
//! `GET /healthz` and `GET /metrics`, as a server author would mount it next to their own
//! routes ([`router`]), and the [`App`] the binary serves: the same router, with requests for
//! the endpoint handed to the MCP service directly when no layer wraps it.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::task::{Context, Poll};

use axum::middleware::Next;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use futures_util::future::{Either as EitherFuture, FutureExt as _, Map};
use http::{HeaderName, HeaderValue, Method, Request};
use http_body_util::Either;
use tasks_core::McpError;
use tasks_http::McpService;
use tasks_http::{HttpBody, ResponseFuture};
use tasks_http::{McpResponse, Principal};
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};
use tower_service::Service;

use crate::Settings;

/// The path of the MCP endpoint.
pub const ENDPOINT_PATH: &str = "/mcp";

/// Where `--admin-token-file` mounts the operator's console.
pub const ADMIN_PATH: &str = "/admin";

/// `router` with the operator's console ([`tasks_admin::router`]) nested at [`ADMIN_PATH`],
/// over `runtime`, behind `credential`.
pub fn with_admin(
    router: Router,
    runtime: tasks_runtime::TaskRuntime,
    credential: tasks_admin::AdminCredential,
) -> Router {
    let config = tasks_admin::AdminConfig::new(ADMIN_PATH, credential);
    router.nest(ADMIN_PATH, tasks_admin::router(runtime, config))
}

/// The application: `POST /mcp` (the MCP endpoint; other methods there are answered by the
/// service: 405), `GET /healthz` (`200 ok`, or `503` while the task store cannot be written:
/// [`TaskRuntime::store_writable`](tasks_runtime::TaskRuntime::store_writable)), `GET /metrics` (OpenMetrics
/// text for Prometheus: counts and timings only, no task data, ids or principals), and a 404
/// naming the endpoint for every other path (a 405 naming it for another method than GET at
/// `/healthz` and `/metrics`). `/healthz` and `/metrics` skip the endpoint's
/// Host/Origin check: a load balancer or a scraper addresses the node from elsewhere, and
/// neither route acts on anything (the DNS-rebinding protection guards the MCP endpoint). With
/// `--cors-origin`, the endpoint answers CORS preflights from those origins; with
/// `--bearer-scope`, its requests are scoped by their bearer token.
pub fn router(mcp: McpService, settings: &Settings) -> Router {
    let dispatcher = mcp.dispatcher().clone();
    let writable = dispatcher.runtime().clone();
    let mut endpoint = Router::new().route_service(ENDPOINT_PATH, mcp);
    if settings.bearer_scope {
        endpoint = endpoint.route_layer(axum::middleware::from_fn(bearer_principal));
    }
    if let Some(cors) = cors(&settings.cors_origins) {
        endpoint = endpoint.layer(cors);
    }
    Router::new()
        .route(
            "/healthz",
            get(move || async move { health(writable.store_writable()) })
                .fallback(|| async { get_only(ENDPOINT_PATH) }),
        )
        .route(
            "/metrics",
            get(move || {
                let dispatcher = dispatcher.clone();
                async move {
                    let text = dispatcher.encode_metrics().await;
                    (
                        [(http::header::CONTENT_TYPE, tasks_http::METRICS_CONTENT_TYPE)],
                        text,
                    )
                }
            })
            .fallback(|| async { get_only(ENDPOINT_PATH) }),
        )
        .merge(endpoint)
        .fallback(|| async { tasks_http::not_found(ENDPOINT_PATH) })
}

/// The body of an [`App`] response: the MCP service's own, or the router's.
pub type AppBody = Either<HttpBody, axum::body::Body>;

/// What an [`App`] answers.
type Answer = Result<http::Response<AppBody>, Infallible>;

/// The fixture's HTTP service, as the `tasks-fixture` binary serves it: the [`router`], except
/// that a request for [`ENDPOINT_PATH`] goes to the MCP service directly when nothing wraps the
/// endpoint (no `--bearer-scope`, no `--cors-origin`). The answers are the same (the router's
/// route hands the request to the same service unchanged); skipping it saves the router's path
/// lookup, its boxed services and futures, and boxing the request and response bodies, about
/// 9 % of the instructions of a `tasks/get` served in process (docs/benchmarks.md, round 3).
#[derive(Clone, Debug)]
pub struct App {
    endpoint: Option<McpService>,
    router: Router,
}

impl App {
    /// This application with the operator's console at [`ADMIN_PATH`] ([`with_admin`]):
    /// requests there always go through the router (only [`ENDPOINT_PATH`] may bypass it).
    pub fn with_admin(
        mut self,
        runtime: tasks_runtime::TaskRuntime,
        credential: tasks_admin::AdminCredential,
    ) -> App {
        self.router = with_admin(self.router, runtime, credential);
        self
    }
}

/// The [`App`] of `mcp` with `settings`.
pub fn app(mcp: McpService, settings: &Settings) -> App {
    let wrapped = settings.bearer_scope || cors(&settings.cors_origins).is_some();
    App {
        endpoint: (!wrapped).then(|| mcp.clone()),
        router: router(mcp, settings),
    }
}

fn from_endpoint(answer: Result<http::Response<HttpBody>, Infallible>) -> Answer {
    answer.map(|response| response.map(Either::Left))
}

fn from_router(answer: Result<Response, Infallible>) -> Answer {
    answer.map(|response| response.map(Either::Right))
}

impl<B> Service<Request<B>> for App
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    type Response = http::Response<AppBody>;
    type Error = Infallible;
    type Future = EitherFuture<
        Map<ResponseFuture, fn(Result<http::Response<HttpBody>, Infallible>) -> Answer>,
        Map<<Router as Service<Request<B>>>::Future, fn(Result<Response, Infallible>) -> Answer>,
    >;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Both the service and the router are always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        match &mut self.endpoint {
            Some(endpoint) if request.uri().path() == ENDPOINT_PATH => {
                EitherFuture::Left(endpoint.call(request).map(from_endpoint as fn(_) -> Answer))
            }
            _ => EitherFuture::Right(
                Service::<Request<B>>::call(&mut self.router, request)
                    .map(from_router as fn(_) -> Answer),
            ),
        }
    }
}

/// `--bearer-scope`: the request's bearer token becomes its [`Principal`] (tasks are scoped
/// by it); without a non-empty one, HTTP 401 with `WWW-Authenticate: Bearer` and a JSON-RPC
/// error body (-32600 `Unauthorized`).
async fn bearer_principal(mut request: axum::extract::Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .filter(|token| !token.is_empty())
        .map(Principal::new);
    match token {
        Some(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        None => {
            let refusal = McpResponse::error(None, &McpError::Unauthorized);
            let mut response = tasks_http::into_http(refusal).map(axum::body::Body::new);
            response.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer"),
            );
            response
        }
    }
}

/// The answer to another method than GET at `/healthz` or `/metrics` (a POST of an MCP client
/// given the wrong URL, say): HTTP 405 naming the MCP endpoint, as the 404 of an unknown path
/// does (`Method not allowed: this path takes GET; the MCP endpoint is /mcp`).
fn get_only(endpoint_path: &str) -> Response {
    Response::builder()
        .status(http::StatusCode::METHOD_NOT_ALLOWED)
        .header(http::header::ALLOW, HeaderValue::from_static("GET,HEAD"))
        .header(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )
        .body(axum::body::Body::from(format!(
            "Method not allowed: this path takes GET; the MCP endpoint is {endpoint_path}\n"
        )))
        .unwrap_or_default()
}

/// The `/healthz` answer: `200 ok` while the store accepts the node's lease renewals (writes),
/// else `503` saying the store cannot be written, so a load balancer stops sending requests
/// this node could not serve.
fn health(store_writable: bool) -> (http::StatusCode, &'static str) {
    if store_writable {
        (http::StatusCode::OK, "ok\n")
    } else {
        (
            http::StatusCode::SERVICE_UNAVAILABLE,
            "unhealthy: the task store cannot be written\n",
        )
    }
}

/// The CORS layer for `origins`, or `None` when there are none (CORS off).
///
/// MCP requests carry `Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version` and `Mcp-Param-<Name>`
/// headers, the last named by each tool's input schema: they cannot be listed, so the headers a
/// preflight asks for are mirrored.
pub fn cors(origins: &[String]) -> Option<CorsLayer> {
    let origins: Vec<HeaderValue> = origins
        .iter()
        .filter_map(|origin| HeaderValue::from_str(origin).ok())
        .collect();
    if origins.is_empty() {
        return None;
    }
    Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            // GET and DELETE serve 2025 sessions, whose id the browser app must read.
            .allow_methods([Method::POST, Method::GET, Method::DELETE])
            .allow_headers(AllowHeaders::mirror_request())
            .expose_headers([HeaderName::from_static("mcp-session-id")])
            .max_age(std::time::Duration::from_secs(600)),
    )
}
