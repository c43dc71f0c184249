//! A `tools/call` on a 2025 session: the tool runs now; its progress and log notifications and
//! its input requests travel on the POST's SSE stream, and the client POSTs its answers back.
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

use bytes::Bytes;
use futures_util::stream;
use serde_json::{json, Value};
use tasks_core::legacy::wire::legacy_result;
use tasks_core::legacy::LegacyCall;
use tasks_core::{InputRequest, JsonObject, JsonRpcError};
use tasks_runtime::{run_sync, Notifier, SyncCall, SyncOutcome, Tool};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::sessions::{InFlight, Session};
use crate::methods::sync_call::notification_frame;
use crate::response::{error_bytes, result_bytes, McpResponse};

/// At most this many input rounds per call: a tool that keeps asking new questions is stopped
/// with -32603 rather than looping forever.
pub(crate) const MAX_INPUT_ROUNDS: usize = 32;

/// What the driver sends toward the response.
enum Frame {
    /// A notification or a server-to-client request.
    Message(Bytes),
    /// The response: the last frame.
    Final(Bytes),
}

/// Runs `call` of `tool` for request `id` on `session` and builds the response.
pub(crate) async fn run(
    session: Arc<Session>,
    id: Value,
    tool: Arc<Tool>,
    call: LegacyCall,
    in_flight: InFlight,
) -> McpResponse {
    if let Some(result) = call.invalid_arguments {
        return McpResponse::result(&id, &result);
    }
    let (tx, mut rx) = mpsc::channel(16);
    let cancel = in_flight.token.clone();
    let driver = tokio::spawn(drive(
        session,
        id,
        tool,
        call,
        tx,
        cancel.clone(),
        in_flight,
    ));
    let guard = Guard {
        _cancel: cancel.drop_guard(),
        driver: driver.abort_handle(),
    };
    match rx.recv().await {
        Some(Frame::Final(bytes)) => McpResponse::message(bytes),
        // Cancelled before anything was sent: the request gets no response (an empty stream).
        None => McpResponse::stream(Box::pin(stream::empty())),
        Some(Frame::Message(first)) => {
            let rest = stream::unfold((rx, guard), |(mut rx, guard)| async move {
                match rx.recv().await? {
                    Frame::Message(bytes) | Frame::Final(bytes) => Some((bytes, (rx, guard))),
                }
            });
            McpResponse::stream(Box::pin(futures_util::StreamExt::chain(
                stream::iter([first]),
                rest,
            )))
        }
    }
}

/// Stops the call when its response is dropped (the client went away).
struct Guard {
    _cancel: DropGuard,
    driver: tokio::task::AbortHandle,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

async fn drive(
    session: Arc<Session>,
    id: Value,
    tool: Arc<Tool>,
    call: LegacyCall,
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
                    .send(Frame::Final(result_bytes(&id, &legacy_result(result))))
                    .await;
                return;
            }
            SyncOutcome::Error(error) => {
                let _ = tx.send(Frame::Final(error_bytes(Some(&id), &error))).await;
                return;
            }
            SyncOutcome::InputRequired(asked) => asked,
        };
        match ask(&session, asked, &tx, &cancel).await {
            Some(Ok(new_answers)) => answers.extend(new_answers),
            Some(Err(result)) => {
                let _ = tx.send(Frame::Final(result_bytes(&id, &result))).await;
                return;
            }
            None => return,
        }
    }
    let error = JsonRpcError::internal("Tool asked for input too many times");
    let _ = tx.send(Frame::Final(error_bytes(Some(&id), &error))).await;
}

/// Sends each input request to the client and waits for every answer. `None` when the call
/// stopped meanwhile; `Some(Err(result))` (a tool error result) when the client answered one
/// with a JSON-RPC error.
async fn ask(
    session: &Arc<Session>,
    asked: std::collections::BTreeMap<String, InputRequest>,
    tx: &mpsc::Sender<Frame>,
    cancel: &CancellationToken,
) -> Option<Result<JsonObject, JsonObject>> {
    let mut waiting = Vec::with_capacity(asked.len());
    let mut ids = Vec::with_capacity(asked.len());
    for (key, request) in asked {
        let (request_id, answer) = session.ask();
        ids.push(request_id);
        let mut message = json!({"jsonrpc": "2.0", "id": request_id, "method": request.method});
        if let Some(params) = request.params {
            message["params"] = Value::Object(params);
        }
        let bytes = Bytes::from(serde_json::to_vec(&message).unwrap_or_default());
        if tx.send(Frame::Message(bytes)).await.is_err() {
            session.forget(&ids);
            return None;
        }
        waiting.push((key, answer));
    }
    let mut answers = JsonObject::new();
    for (key, answer) in waiting {
        let answer = tokio::select! {
            () = cancel.cancelled() => None,
            answer = answer => answer.ok(),
        };
        match answer {
            None => {
                session.forget(&ids);
                return None;
            }
            Some(Ok(result)) => {
                answers.insert(key, result);
            }
            Some(Err(error)) => {
                session.forget(&ids);
                let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
                let text =
                    format!("The client refused input request {key} (JSON-RPC error {code})");
                let result = json!({"content": [{"type": "text", "text": text}], "isError": true});
                return Some(Err(result.as_object().cloned().unwrap_or_default()));
            }
        }
    }
    Some(Ok(answers))
}
