//! A `tools/call` or a `prompts/get` run now on a 2025 session: progress and log notifications
//! and the handler's input requests travel on the POST's SSE stream, and the client POSTs its
//! answers back.
//!
//! MCP 2025-11-25 transports, "Sending Messages to the Server": on the SSE stream of a request
//! the server may send requests and notifications related to it before the response. An input
//! request of the handler (elicitation, sampling, roots: [`ToolContext::input`]) becomes a
//! JSON-RPC request with a fresh id of the session's own id space; the client's answer
//! (matched by id, HTTP 202) is handed to the handler, which runs again with every answer so
//! far (the same replay as an MRTR round of 2026-07-28), until it completes. The answer is one
//! JSON body when the handler finishes before sending anything, else the stream ends with it.
//!
//! The call stops, and its stream ends without a response, when the client closes the stream,
//! sends `notifications/cancelled` for it, or the session ends. A client that answers an
//! input request with a JSON-RPC error gets, for a tool, a tool error result naming the error
//! code; for a prompt, which has no error result, a -32603 error saying the same.
//!
//! [`ToolContext::input`]: tasks_runtime::ToolContext::input

use std::sync::Arc;

use serde_json::Value;
use tasks_core::sessions::session::{Asker, CallRounds};
use tasks_core::sessions::SessionCall;
use tasks_core::JsonObject;
use tasks_runtime::catalog::{render_prompt, Prompt};
use tasks_runtime::sessions::{drive_rounds, InFlight, RoundsCall, Session};
use tasks_runtime::{run_sync, SyncCall, SyncOutcome, Tool};

use super::frames::{respond, Start};
use crate::response::McpResponse;

/// Runs `call` of `tool` for request `id` on `session` and builds the response.
pub(crate) async fn run(
    session: Arc<Session>,
    id: Value,
    call: SessionCall<Arc<Tool>>,
    in_flight: InFlight,
) -> McpResponse {
    if let Some(result) = call.invalid_arguments {
        return McpResponse::result(&id, &result);
    }
    let tool = call.tool;
    let handler = move |sync| {
        let tool = tool.clone();
        async move { run_sync(&tool, sync).await }
    };
    let call = RoundsCall {
        rounds: CallRounds::new(id, Asker::Tool),
        arguments: call.arguments,
        progress_token: call.progress_token,
    };
    start(session, call, handler, in_flight).await
}

/// Renders `prompt` (its arguments checked) for request `id` on `session`, its input requests
/// asked on the stream like a tool's, and builds the response.
pub(crate) async fn run_prompt(
    session: Arc<Session>,
    id: Value,
    prompt: Prompt,
    arguments: JsonObject,
    in_flight: InFlight,
) -> McpResponse {
    let prompt = Arc::new(prompt);
    let handler = move |sync| {
        let prompt = prompt.clone();
        async move { render_prompt(&prompt, sync).await }
    };
    let call = RoundsCall {
        rounds: CallRounds::new(id, Asker::Prompt),
        arguments,
        progress_token: None,
    };
    start(session, call, handler, in_flight).await
}

/// Drives `call`'s rounds ([`drive_rounds`]) toward the response.
async fn start<H, Fut>(
    session: Arc<Session>,
    call: RoundsCall,
    handler: H,
    in_flight: InFlight,
) -> McpResponse
where
    H: Fn(SyncCall) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = SyncOutcome> + Send + 'static,
{
    let cancel = in_flight.token.clone();
    respond(cancel.clone(), Start::FirstFrame, move |tx| async move {
        let _in_flight = in_flight;
        drive_rounds(session, call, handler, tx, cancel).await;
    })
    .await
}
