//! A `tools/call` run now on a 2025 session: progress and log notifications and the tool's
//! input requests travel on the POST's SSE stream, and the client POSTs its answers back.
//!
//! MCP 2025-11-25 transports, "Sending Messages to the Server": on the SSE stream of a request
//! the server may send requests and notifications related to it before the response. An input
//! request of the tool (elicitation, sampling, roots: [`ToolContext::input`]) becomes a
//! JSON-RPC request with a fresh id of the session's own id space; the client's answer
//! (matched by id, HTTP 202) is handed to the tool, which runs again with every answer so far
//! (the same replay as an MRTR round of 2026-07-28), until it completes. The answer is one JSON
//! body when the tool finishes before sending anything, else the stream ends with it.
//!
//! The call stops, and its stream ends without a response, when the client closes the stream,
//! sends `notifications/cancelled` for it, or the session ends. A client that answers an
//! input request with a JSON-RPC error gets a tool error result naming the error code.
//!
//! [`ToolContext::input`]: tasks_runtime::ToolContext::input

use std::sync::Arc;

use serde_json::Value;
use tasks_core::sessions::wire::session_result;
use tasks_core::sessions::SessionCall;
use tasks_core::{JsonObject, JsonRpcError};
use tasks_runtime::{error_result, run_sync, Notifier, SyncCall, SyncOutcome, Tool};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::frames::{ask, respond, Frame, Start};
use super::sessions::{InFlight, Session};
use crate::methods::sync_call::notification_frame;
use crate::response::{error_bytes, result_bytes, McpResponse};

/// At most this many input rounds per call: a tool that keeps asking new questions is stopped
/// with -32603 rather than looping forever.
pub(crate) const MAX_INPUT_ROUNDS: usize = 32;

/// Runs `call` of `tool` for request `id` on `session` and builds the response.
pub(crate) async fn run(
    session: Arc<Session>,
    id: Value,
    tool: Arc<Tool>,
    call: SessionCall<Arc<Tool>>,
    in_flight: InFlight,
) -> McpResponse {
    if let Some(result) = call.invalid_arguments {
        return McpResponse::result(&id, &result);
    }
    let cancel = in_flight.token.clone();
    respond(cancel.clone(), Start::FirstFrame, move |tx| {
        drive(session, id, tool, call, tx, cancel, in_flight)
    })
    .await
}

async fn drive(
    session: Arc<Session>,
    id: Value,
    tool: Arc<Tool>,
    call: SessionCall<Arc<Tool>>,
    tx: mpsc::Sender<Frame>,
    cancel: CancellationToken,
    _in_flight: InFlight,
) {
    let mut answers = JsonObject::new();
    for _round in 0..MAX_INPUT_ROUNDS {
        let (notifier, mut notifications) =
            Notifier::channel(call.progress_token.is_some(), session.log_level());
        let sync = SyncCall::new(call.arguments.clone())
            .with_input_responses((!answers.is_empty()).then(|| answers.clone()))
            .with_client_capabilities(session.client_capabilities.clone())
            .with_principal(session.principal.clone())
            .with_notifier(Some(notifier))
            .with_cancel(cancel.clone());
        let run = run_sync(&tool, sync);
        tokio::pin!(run);
        let outcome = loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => return,
                Some(n) = notifications.recv() => {
                    let frame = notification_frame(n, call.progress_token.as_ref());
                    if tx.send(Frame::Message(frame)).await.is_err() {
                        return;
                    }
                }
                outcome = &mut run => break outcome,
            }
        };
        while let Ok(n) = notifications.try_recv() {
            let frame = notification_frame(n, call.progress_token.as_ref());
            if tx.send(Frame::Message(frame)).await.is_err() {
                return;
            }
        }
        let asked = match outcome {
            SyncOutcome::Complete(result) => {
                let _ = tx
                    .send(Frame::Final(result_bytes(&id, &session_result(result))))
                    .await;
                return;
            }
            SyncOutcome::Error(error) => {
                let _ = tx.send(Frame::Final(error_bytes(Some(&id), &error))).await;
                return;
            }
            SyncOutcome::InputRequired(asked) => asked,
        };
        match ask(&session, asked, None, &tx, &cancel).await {
            Some(Ok(new_answers)) => answers.extend(new_answers),
            Some(Err(refused)) => {
                let result = error_result(format!(
                    "The client refused input request {} (JSON-RPC error {})",
                    refused.key, refused.code
                ));
                let _ = tx.send(Frame::Final(result_bytes(&id, &result))).await;
                return;
            }
            None => return,
        }
    }
    let error = JsonRpcError::internal("Tool asked for input too many times");
    let _ = tx.send(Frame::Final(error_bytes(Some(&id), &error))).await;
}
