//! An existing axum application that mounts the MCP Tasks endpoint at [`MCP_PATH`], using only
//! the public API of `tasks-http`:
//!
//! - its own routes (`GET /`, `GET /api/status`) and an application-wide middleware (every
//!   response carries `X-Served-By: axum-app`);
//! - the MCP service from [`ServerBuilder::into_service`](tasks_http::ServerBuilder::into_service),
//!   nested with `Router::nest_service`;
//! - optional bearer authentication as a layer on the MCP route: a known token becomes a
//!   [`Principal`] in the request extensions (tasks are scoped by it); anything else is HTTP
//!   401 with `WWW-Authenticate: Bearer resource_metadata="…"` pointing at the OAuth
//!   protected-resource metadata (RFC 9728) the application serves at
//!   `/.well-known/oauth-protected-resource/api/mcp`, as MCP authorization asks
//!   (<https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization>).
//!
//! The tools are the conformance fixture's, so the official runner's Tasks scenarios can be run
//! against the mount (the workspace's test command does).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use http::{header, HeaderValue};
use serde_json::json;
use tasks_core::McpError;
use tasks_http::prelude::*;
use tasks_http::{McpHandle, McpResponse, Principal};
use tasks_runtime::ListChanges;

/// Where the MCP endpoint is mounted.
pub const MCP_PATH: &str = "/api/mcp";

/// Where the OAuth protected-resource metadata of the endpoint is served (RFC 9728 §3: the
/// well-known prefix, then the resource's path).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource/api/mcp";

/// Bearer authentication of the MCP endpoint.
#[derive(Clone, Debug)]
pub struct Auth {
    /// Bearer token → the user it authenticates (the principal tasks are scoped by).
    pub tokens: HashMap<String, String>,
    /// The application's public base URL, e.g. `https://app.example.com` (no trailing `/`).
    pub base_url: String,
    /// The authorization servers that issue tokens for the endpoint, listed in the metadata.
    pub authorization_servers: Vec<String>,
}

impl Auth {
    /// The `WWW-Authenticate` challenge of a refused request, with the RFC 6750 `error` code
    /// when there is one (`invalid_token`, `invalid_request`).
    pub fn challenge(&self, error: Option<&str>) -> String {
        let error = error.map_or(String::new(), |code| format!(r#", error="{code}""#));
        format!(
            r#"Bearer resource_metadata="{}{METADATA_PATH}"{error}"#,
            self.base_url
        )
    }
}

/// The arguments of the application's own tool, `word_count`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WordCount {
    /// The text whose words are counted.
    pub text: String,
}

/// The MCP server of the application: its own tool, `word_count` (typed arguments, answered
/// synchronously), then the conformance fixture's tools.
pub fn mcp_server() -> ServerBuilder {
    let changes = ListChanges::new();
    let word_count = Tool::typed(
        "word_count",
        "Counts the words of a text",
        |_ctx, args: WordCount| async move {
            Ok(text_result(
                args.text.split_whitespace().count().to_string(),
            ))
        },
    );
    let mut builder = ServerBuilder::new("axum-app", env!("CARGO_PKG_VERSION"))
        .ttl_ms(Some(3_600_000))
        .poll_interval_ms(100)
        .list_changes(changes.clone())
        .tool(word_count);
    for tool in tasks_fixture::tools::all(&changes, None) {
        builder = builder.tool(tool);
    }
    builder
}

/// The application with the MCP endpoint mounted at [`MCP_PATH`], authenticated by `auth`
/// when given, and the handle that shuts the endpoint down.
///
/// # Errors
/// When the MCP service cannot start (its store fails during recovery).
pub async fn app(
    server: ServerBuilder,
    auth: Option<Auth>,
) -> std::io::Result<(Router, McpHandle)> {
    let (mcp, handle) = server.into_service().await?;
    let mut mcp_routes = Router::new().nest_service(MCP_PATH, mcp);
    let mut app = Router::new()
        .route("/", get(|| async { "The example application.\n" }))
        .route("/api/status", get(|| async { Json(json!({"ok": true})) }));
    if let Some(auth) = auth {
        let auth = Arc::new(auth);
        // `route_layer`: only requests routed to the endpoint are authenticated; other paths
        // stay 404 instead of becoming 401s.
        mcp_routes = mcp_routes.route_layer(middleware::from_fn_with_state(auth.clone(), bearer));
        app = app.route(METADATA_PATH, get(metadata).with_state(auth));
    }
    let app = app.merge(mcp_routes).layer(middleware::from_fn(served_by));
    Ok((app, handle))
}

/// The application-wide middleware: marks every response.
async fn served_by(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert("x-served-by", HeaderValue::from_static("axum-app"));
    response
}

/// The authentication layer: a known bearer token becomes the [`Principal`] of the request;
/// none or an unknown one is refused with 401 and the challenge, and several `Authorization`
/// headers with 400 (`invalid_request`, RFC 6750 §3.1: which one would count is ambiguous).
async fn bearer(State(auth): State<Arc<Auth>>, mut request: Request, next: Next) -> Response {
    let mut values = request.headers().get_all(header::AUTHORIZATION).iter();
    let (first, second) = (values.next(), values.next());
    if second.is_some() {
        return refusal(&auth, Refusal::InvalidRequest);
    }
    // The scheme is case-insensitive (RFC 9110 §11.1).
    let token = first
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    match token.and_then(|token| auth.tokens.get(token)) {
        Some(user) => {
            request.extensions_mut().insert(Principal::new(user));
            next.run(request).await
        }
        None if first.is_some() => refusal(&auth, Refusal::InvalidToken),
        None => refusal(&auth, Refusal::NoToken),
    }
}

/// Why [`bearer`] refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    NoToken,
    InvalidToken,
    InvalidRequest,
}

/// The refusal: 401 (400 for `InvalidRequest`, -32600 either way) with the challenge and a
/// JSON-RPC error body.
fn refusal(auth: &Auth, why: Refusal) -> Response {
    let (error, refused) = match why {
        Refusal::NoToken => (None, McpError::Unauthorized),
        Refusal::InvalidToken => (Some("invalid_token"), McpError::Unauthorized),
        Refusal::InvalidRequest => (
            Some("invalid_request"),
            McpError::InvalidRequest("Only one Authorization header is allowed"),
        ),
    };
    let mut response = tasks_http::into_http(McpResponse::error(None, &refused)).into_response();
    if let Ok(challenge) = HeaderValue::from_str(&auth.challenge(error)) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// The OAuth protected-resource metadata of the endpoint (RFC 9728 §2).
async fn metadata(State(auth): State<Arc<Auth>>) -> Json<serde_json::Value> {
    Json(json!({
        "resource": format!("{}{MCP_PATH}", auth.base_url),
        "authorization_servers": auth.authorization_servers,
        "bearer_methods_supported": ["header"],
    }))
}
