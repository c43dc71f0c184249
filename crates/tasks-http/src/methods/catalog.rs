//! Prompts, resources and completion on both eras (the rules are
//! [`tasks_runtime::catalog`]'s; MCP 2026-07-28 server "Prompts" and "Resources", utilities
//! "Completion", and "Caching":
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/prompts>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/resources>).
//!
//! On 2026-07-28 every result carries `resultType: "complete"` and the serverInfo `_meta`; the
//! cacheable ones carry `ttlMs` (the server's
//! [`cache_ttl_ms`](crate::ServerBuilder::cache_ttl_ms)) and `cacheScope`
//! ([`CatalogRequest::cache_scope`]). A `prompts/get` runs like a synchronous tool call: its handler may ask for input,
//! answered by a retry of the same request ([`sync_call`]). A 2025 session gets the bare
//! results, and a prompt there asks for input on the request's stream as a tool does
//! (`sessions::call`).

use http::HeaderMap;
use serde_json::Value;
use std::sync::Arc;
use tasks_core::catalog::{CatalogRequest, PromptRequest};
use tasks_core::exchange::{StateIssuer, SyncExchange, SyncRequest};
use tasks_core::sessions::wire::session_result;
use tasks_core::{McpError, Method, RequestMeta, Timestamp};

use tasks_runtime::catalog::{render_prompt, Catalog, Prompt};
use tasks_runtime::{drive_sync, Caller, Principal, SyncCall};

use crate::methods::sync_call;
use crate::response::McpResponse;
use crate::shared::Shared;

/// A planned request of the 2026-07-28 protocol.
pub(crate) struct Request<'a> {
    /// The catalog as it was when the request was planned.
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) id: Value,
    pub(crate) meta: RequestMeta,
    pub(crate) headers: &'a HeaderMap,
    pub(crate) caller: &'a Caller,
    pub(crate) now: Timestamp,
}

/// Answers `request` on the 2026-07-28 protocol.
pub(crate) async fn handle(
    d: &Shared,
    r: Request<'_>,
    request: CatalogRequest,
) -> Result<McpResponse, McpError> {
    if let CatalogRequest::GetPrompt(prompt) = request {
        return get_prompt(d, r, prompt).await;
    }
    let result = r
        .catalog
        .answer(&request, r.caller.principal.clone())
        .await?;
    let mut result = tasks_core::wire::complete(result);
    if let Some(scope) = request.cache_scope() {
        result.insert("ttlMs".into(), Value::from(d.config.cache_ttl_ms));
        result.insert(
            "cacheScope".into(),
            serde_json::to_value(scope).unwrap_or_default(),
        );
    }
    Ok(McpResponse::result(&r.id, &d.with_server_meta(result)))
}

/// Answers `request` in a 2025 session: the bare result (`prompts/get` runs on the session's
/// stream, `sessions::call::run_prompt`).
#[cfg_attr(not(feature = "sessions"), allow(dead_code))]
pub(crate) async fn handle_session(
    d: &Shared,
    id: &Value,
    principal: Option<Principal>,
    request: CatalogRequest,
) -> Result<McpResponse, McpError> {
    let catalog = d.runtime.catalog();
    let result = catalog.answer(&request, principal).await?;
    Ok(McpResponse::result(id, &session_result(result)))
}

/// The prompt a `prompts/get` names, its arguments checked.
///
/// # Errors
/// -32602 `Unknown prompt`; the argument check's -32602 ([`Prompt::check_arguments`]).
pub(crate) fn find_prompt(catalog: &Catalog, request: &PromptRequest) -> Result<Prompt, McpError> {
    let prompt = catalog
        .prompt(&request.name)
        .map(|p| Prompt::clone(p))
        .ok_or_else(|| McpError::invalid_params("Unknown prompt"))?;
    prompt.check_arguments(&request.arguments)?;
    Ok(prompt)
}

/// A 2026-07-28 `prompts/get`: the prompt rendered now, its input rounds as MRTR.
async fn get_prompt(
    d: &Shared,
    r: Request<'_>,
    request: PromptRequest,
) -> Result<McpResponse, McpError> {
    let prompt = find_prompt(&r.catalog, &request)?;
    let PromptRequest {
        name,
        arguments,
        answers,
        previous,
    } = request;
    let call = SyncCall::new(arguments.clone())
        .with_input_responses(answers.clone())
        .with_principal(r.caller.principal.clone())
        .with_client_capabilities(r.meta.client_capabilities.clone());
    let sync = SyncRequest::named(
        Method::PromptsGet,
        r.id,
        &name,
        arguments,
        r.caller.scope.as_str(),
        &r.meta,
        previous.as_ref(),
        answers,
    );
    let issuer = StateIssuer::new(d.state_key.clone(), d.runtime.config().ttl_ms, r.now);
    let exchange = SyncExchange::new(sync, issuer, d.server_meta.clone());
    let handler = move |call| async move { render_prompt(&prompt, call).await };
    let streaming = sync_call::accepts_event_stream(r.headers);
    let entropy = d.runtime.entropy().clone();
    let start = drive_sync(handler, call, exchange, streaming, entropy).await;
    Ok(sync_call::respond(start))
}
