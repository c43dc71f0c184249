//! The MCP endpoint of an rmcp server with tasks, over Streamable HTTP, set up as the bridge
//! needs it (feature `http-server`, on by default).

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServerHandler;
use tokio_util::sync::CancellationToken;
use tower::Layer as _;

use crate::layer::{listen_layer, ListenPrefilter};

/// The endpoint service [`streamable_http_service`] builds: rmcp's `StreamableHttpService`
/// behind [`ListenPrefilter`].
pub type TasksHttpService<H> = ListenPrefilter<StreamableHttpService<H, LocalSessionManager>>;

/// The MCP endpoint for `handler` (a clone per request), to mount at a path of your HTTP
/// server (`axum::Router::nest_service("/mcp", service)`, or any tower host): rmcp's
/// Streamable HTTP server set up for MCP 2026-07-28 and the bridge, behind
/// [`listen_layer`] (which carries `subscriptions/listen` `taskIds` to the handler and refuses
/// a listener that names them without declaring the Tasks extension).
///
/// The settings, and why:
/// * stateless (`legacy_session_mode: false`): 2026-07-28 has no sessions;
/// * one JSON body for a plain answer (`json_response: true`), SSE only when notifications go
///   first, so any HTTP client reads the answers;
/// * no SSE keep-alive comments;
/// * `stop` ends every open stream: cancel it when the server shuts down, before waiting for
///   the HTTP server to finish, or an open `subscriptions/listen` (which the bridge keeps open
///   after its tasks end, until the client closes it) holds the shutdown forever.
///
/// Body limit: rmcp's default `max_request_body_bytes` (4 MiB), for rmcp and the layer alike.
pub fn streamable_http_service<H>(handler: H, stop: CancellationToken) -> TasksHttpService<H>
where
    H: ServerHandler + Clone + Send + Sync + 'static,
{
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_cancellation_token(stop);
    let layer = listen_layer().max_body_bytes(config.max_request_body_bytes);
    let mcp = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    layer.layer(mcp)
}
