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
use tasks_core::exchange::notification_message;
use tasks_core::sessions::session::{Asker, CallRounds, RoundStep};
use tasks_core::sessions::SessionCall;
use tasks_core::JsonObject;
use tasks_runtime::catalog::{render_prompt, Prompt};
use tasks_runtime::{run_sync, Notifier, NotifyingRun, SyncCall, SyncOutcome, Tool};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use tasks_runtime::session::{ask, Frame, InFlight, Session};

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
    let rounds = CallRounds::new(id, Asker::Tool);
    let handler = move |sync| {
        let tool = tool.clone();
        async move { run_sync(&tool, sync).await }
    };
    let request = (call.arguments, call.progress_token);
    start(session, rounds, request, handler, in_flight).await
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
    let rounds = CallRounds::new(id, Asker::Prompt);
    let prompt = Arc::new(prompt);
    let handler = move |sync| {
        let prompt = prompt.clone();
        async move { render_prompt(&prompt, sync).await }
    };
    start(session, rounds, (arguments, None), handler, in_flight).await
}

/// The request's arguments (the same in every round) and its progress token, if it asked
/// for progress.
type Request = (JsonObject, Option<Value>);

async fn start<H, Fut>(
    session: Arc<Session>,
    rounds: CallRounds,
    request: Request,
    handler: H,
    in_flight: InFlight,
) -> McpResponse
where
    H: Fn(SyncCall) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = SyncOutcome> + Send + 'static,
{
    let cancel = in_flight.token.clone();
    respond(cancel.clone(), Start::FirstFrame, move |tx| {
        drive(session, rounds, request, handler, tx, cancel, in_flight)
    })
    .await
}

/// Carries out the core's [`CallRounds`]: runs the handler, sends its notifications, asks
/// its rounds, until the final frame (or the request stops).
async fn drive<H, Fut>(
    session: Arc<Session>,
    mut rounds: CallRounds,
    (arguments, progress_token): Request,
    handler: H,
    tx: mpsc::Sender<Frame>,
    cancel: CancellationToken,
    _in_flight: InFlight,
) where
    H: Fn(SyncCall) -> Fut,
    Fut: std::future::Future<Output = SyncOutcome>,
{
    let progress_token = progress_token.as_ref();
    let mut step = RoundStep::Run;
    loop {
        step = match step {
            RoundStep::Final(frame) => {
                let _ = tx.send(Frame::Final(Bytes::from(frame))).await;
                return;
            }
            RoundStep::Ask(asked) => match ask(&session, asked, None, &tx, &cancel).await {
                Some(resolution) => rounds.answered(resolution),
                None => return,
            },
            RoundStep::Run => {
                let (notifier, notifications) =
                    Notifier::channel(progress_token.is_some(), session.log_level());
                let sync = SyncCall::new(arguments.clone())
                    .with_input_responses(rounds.input_responses())
                    .with_client_capabilities(session.client_capabilities.clone())
                    .with_principal(session.principal.clone())
                    .with_notifier(Some(notifier))
                    .with_cancel(cancel.clone());
                let mut run = NotifyingRun::new(handler(sync), notifications);
                loop {
                    let notification = tokio::select! {
                        biased;
                        () = cancel.cancelled() => return,
                        notification = run.notification() => notification,
                    };
                    let Some(n) = notification else { break };
                    let frame = Bytes::from(notification_message(n, progress_token));
                    if tx.send(Frame::Message(frame)).await.is_err() {
                        return;
                    }
                }
                let outcome = run.output().await;
                rounds.outcome(outcome)
            }
        };
    }
}
