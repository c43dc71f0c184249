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

use bytes::Bytes;

use serde_json::Value;
use tasks_core::sessions::wire::session_result;
use tasks_core::sessions::SessionCall;
use tasks_core::{JsonObject, JsonRpcError};
use tasks_runtime::catalog::{render_prompt, Prompt};
use tasks_runtime::{error_result, run_sync, Notifier, SyncCall, SyncOutcome, Tool};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::frames::{ask, respond, Frame, Refused, Start};
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
    let rounds = Rounds {
        arguments: call.arguments,
        progress_token: call.progress_token,
        refused: |id: &Value, refused: Refused| result_bytes(id, &error_result(refused.message())),
        what: "Tool",
    };
    let handler = move |sync| {
        let tool = tool.clone();
        async move { run_sync(&tool, sync).await }
    };
    start(session, id, rounds, handler, in_flight).await
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
    let rounds = Rounds {
        arguments,
        progress_token: None,
        refused: |id: &Value, refused: Refused| {
            error_bytes(Some(id), &JsonRpcError::internal(refused.message()))
        },
        what: "Prompt",
    };
    let prompt = Arc::new(prompt);
    let handler = move |sync| {
        let prompt = prompt.clone();
        async move { render_prompt(&prompt, sync).await }
    };
    start(session, id, rounds, handler, in_flight).await
}

/// What a synchronous request's rounds need beside its handler.
struct Rounds {
    /// The request's arguments, the same in every round.
    arguments: JsonObject,
    /// Its progress token, if it asked for progress.
    progress_token: Option<Value>,
    /// The final answer to request `id` when the client refuses an input request: a tool's
    /// error result, a prompt's -32603.
    refused: fn(&Value, Refused) -> Bytes,
    /// "Tool" or "Prompt", for the error after [`MAX_INPUT_ROUNDS`].
    what: &'static str,
}

async fn start<H, Fut>(
    session: Arc<Session>,
    id: Value,
    rounds: Rounds,
    handler: H,
    in_flight: InFlight,
) -> McpResponse
where
    H: Fn(SyncCall) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = SyncOutcome> + Send + 'static,
{
    let cancel = in_flight.token.clone();
    respond(cancel.clone(), Start::FirstFrame, move |tx| {
        drive(session, id, rounds, handler, tx, cancel, in_flight)
    })
    .await
}

async fn drive<H, Fut>(
    session: Arc<Session>,
    id: Value,
    rounds: Rounds,
    handler: H,
    tx: mpsc::Sender<Frame>,
    cancel: CancellationToken,
    _in_flight: InFlight,
) where
    H: Fn(SyncCall) -> Fut,
    Fut: std::future::Future<Output = SyncOutcome>,
{
    let progress_token = rounds.progress_token.as_ref();
    let mut answers = JsonObject::new();
    for _round in 0..MAX_INPUT_ROUNDS {
        let (notifier, mut notifications) =
            Notifier::channel(progress_token.is_some(), session.log_level());
        let sync = SyncCall::new(rounds.arguments.clone())
            .with_input_responses((!answers.is_empty()).then(|| answers.clone()))
            .with_client_capabilities(session.client_capabilities.clone())
            .with_principal(session.principal.clone())
            .with_notifier(Some(notifier))
            .with_cancel(cancel.clone());
        let run = handler(sync);
        tokio::pin!(run);
        let outcome = loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => return,
                Some(n) = notifications.recv() => {
                    let frame = notification_frame(n, progress_token);
                    if tx.send(Frame::Message(frame)).await.is_err() {
                        return;
                    }
                }
                outcome = &mut run => break outcome,
            }
        };
        while let Ok(n) = notifications.try_recv() {
            let frame = notification_frame(n, progress_token);
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
                let _ = tx.send(Frame::Final((rounds.refused)(&id, refused))).await;
                return;
            }
            None => return,
        }
    }
    let error = JsonRpcError::internal(format!("{} asked for input too many times", rounds.what));
    let _ = tx.send(Frame::Final(error_bytes(Some(&id), &error))).await;
}
