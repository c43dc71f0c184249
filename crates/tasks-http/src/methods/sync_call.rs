//! A synchronous `tools/call`: run the tool now, answer with JSON, or with an SSE stream when
//! the tool sends notifications first (MCP 2026-07-28 progress and logging; streamable-http
//! "Sending Messages", "Receiving Messages" and "Cancellation":
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).
//!
//! * Without a `progressToken` or `logLevel` in the request `_meta` (or when the client does
//!   not accept `text/event-stream`), the tool runs inline and the answer is one JSON message.
//!   Dropping the response future (the client went away) drops the tool's and cancels its
//!   token (streamable-http "Cancellation").
//! * Otherwise the tool runs on its own tokio task with a [`Notifier`]. If it finishes before
//!   notifying, the answer is JSON as above. The first notification switches the response to
//!   SSE: every notification (`notifications/progress` with the request's token,
//!   `notifications/message`), then the final response, then the stream ends. Dropping the
//!   stream (the client went away) cancels the tool's token and aborts its task
//!   (streamable-http "Cancellation").
//! * The final response is the `CallToolResult`, the MRTR `input_required` result (with a fresh
//!   `requestState`), or the tool's JSON-RPC error.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream;
use http::HeaderMap;
use serde_json::Value;
use tasks_core::wire::{InputRequiredResult, LogParams, ProgressParams, ResultType};
use tasks_core::{InputRequest, JsonObject, McpError, Method, RequestMeta, Timestamp};
use tasks_runtime::{run_sync, Notifier, RequestNotification, Scope, SyncCall, SyncOutcome, Tool};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinHandle};
use tokio_util::sync::DropGuard;

use tasks_core::jsonrpc::with_server_meta;
use tasks_core::projection::ResultMeta;

use crate::response::{notification_bytes, McpResponse, ResponseBody};
use tasks_core::mrtr::{self, Binding, RequestState, StateKey, NONCE_BYTES};

/// Everything needed to turn the tool's outcome into the final response, owned, so that it can
/// outlive the dispatcher call when the response streams.
pub(crate) struct Finish {
    pub(crate) id: Value,
    pub(crate) server_meta: Arc<ResultMeta>,
    pub(crate) state_key: StateKey,
    /// How long the issued `requestState` lives (never longer than the tasks).
    pub(crate) state_lifetime_ms: u64,
    /// The runtime's randomness, for the state's nonce.
    pub(crate) entropy: tasks_runtime::Randomness,
    pub(crate) name: String,
    pub(crate) arguments: JsonObject,
    pub(crate) scope: Scope,
    pub(crate) meta: RequestMeta,
    pub(crate) previous: Option<RequestState>,
    pub(crate) answers: Option<JsonObject>,
    pub(crate) now: Timestamp,
}

impl Finish {
    fn response(self, outcome: SyncOutcome) -> McpResponse {
        match outcome {
            SyncOutcome::Complete(result) => {
                McpResponse::result(&self.id, &with_server_meta(&self.server_meta, result))
            }
            SyncOutcome::Error(error) => McpResponse::rpc_error(&self.id, &error),
            SyncOutcome::InputRequired(asked) => {
                McpResponse::result(&self.id, &self.input_required(asked))
            }
        }
    }

    /// The MRTR `input_required` result asking `asked`, with a fresh `requestState` carrying
    /// the answers so far and what this round asked. [`ToolContext::input`] already refused
    /// any request the client did not declare it can answer.
    ///
    /// [`ToolContext::input`]: tasks_runtime::ToolContext::input
    fn input_required(&self, asked: BTreeMap<String, InputRequest>) -> InputRequiredResult {
        let binding = Binding {
            method: Method::ToolsCall,
            name: &self.name,
            arguments: &self.arguments,
            scope: self.scope.as_str(),
        };
        let state = RequestState {
            round: self
                .previous
                .as_ref()
                .map_or(1, |p| p.round.saturating_add(1)),
            answers: self.answers.clone().unwrap_or_default(),
            asked: asked.clone(),
        };
        // A failed draw leaves zeros; the round number still makes the state change.
        let nonce = self.entropy.bytes().unwrap_or([0u8; NONCE_BYTES]);
        let request_state = mrtr::issue(
            &self.state_key,
            binding,
            state,
            self.now,
            self.state_lifetime_ms,
            nonce,
        );
        InputRequiredResult {
            result_type: ResultType::InputRequired,
            input_requests: asked,
            request_state,
            meta: JsonObject::clone(&self.server_meta),
        }
    }
}

/// Whether the client accepts an SSE response: `Accept` names `text/event-stream` (or a
/// wildcard covering it) without `q=0`.
fn accepts_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let media = parts.next().unwrap_or("");
            let covered = media.eq_ignore_ascii_case("text/event-stream")
                || media.eq_ignore_ascii_case("text/*")
                || media == "*/*";
            let refused = parts.any(|param| {
                param
                    .split_once('=')
                    .filter(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
                    .and_then(|(_, q)| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            covered && !refused
        })
}

/// Runs `tool` for one synchronous call and builds the response.
pub(crate) async fn run(
    tool: Arc<Tool>,
    call: SyncCall,
    headers: &HeaderMap,
    finish: Finish,
) -> McpResponse {
    let meta = &finish.meta;
    let notifies = meta.progress_token.is_some() || meta.log_level.is_some();
    // The tool's token: fired when the response is dropped before the tool finished (the
    // client went away: streamable-http "Cancellation"), whichever way it answers; a child, so
    // that firing it never cancels the caller's own token.
    let cancel = call.cancel.child_token();
    let call = call.with_cancel(cancel.clone());
    if !notifies || !accepts_event_stream(headers) {
        // Inline: dropping this future drops the tool's, and the guard fires its token.
        let guard = cancel.drop_guard();
        let outcome = run_sync(&tool, call).await;
        guard.disarm();
        return finish.response(outcome);
    }
    let (notifier, mut notifications) =
        Notifier::channel(meta.progress_token.is_some(), meta.log_level);
    let call = call.with_notifier(Some(notifier));
    let mut run = tokio::spawn(async move { run_sync(&tool, call).await });
    let guard = RunGuard {
        abort: run.abort_handle(),
        _cancel: cancel.drop_guard(),
    };
    tokio::select! {
        biased;
        // A closed channel (the tool finished without notifying) disables this branch.
        Some(first) = notifications.recv() => {
            let progress_token = finish.meta.progress_token.clone();
            let live = Live {
                first: Some(notification_frame(first, progress_token.as_ref())),
                notifications,
                run,
                outcome: None,
                finish: Some(finish),
                progress_token,
                _guard: guard,
            };
            McpResponse::stream(Box::pin(stream::unfold(live, Live::next)))
        }
        outcome = &mut run => finish.response(joined(outcome)),
    }
}

/// Stops the tool when the response is dropped before the tool finished.
struct RunGuard {
    abort: AbortHandle,
    _cancel: DropGuard,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        self.abort.abort();
    }
}

fn joined(outcome: Result<SyncOutcome, tokio::task::JoinError>) -> SyncOutcome {
    outcome.unwrap_or_else(|_| {
        SyncOutcome::Error(McpError::Internal("Tool raised an exception").to_error_object())
    })
}

/// The state of a streaming response.
struct Live {
    first: Option<Bytes>,
    notifications: mpsc::Receiver<RequestNotification>,
    run: JoinHandle<SyncOutcome>,
    outcome: Option<SyncOutcome>,
    finish: Option<Finish>,
    progress_token: Option<Value>,
    _guard: RunGuard,
}

impl Live {
    async fn next(mut self) -> Option<(Bytes, Self)> {
        if let Some(first) = self.first.take() {
            return Some((first, self));
        }
        loop {
            if let Some(outcome) = self.outcome.take() {
                // The tool is done: flush what it queued, then the final response.
                if let Ok(notification) = self.notifications.try_recv() {
                    self.outcome = Some(outcome);
                    let frame = notification_frame(notification, self.progress_token.as_ref());
                    return Some((frame, self));
                }
                let finish = self.finish.take()?;
                return match finish.response(outcome).body {
                    ResponseBody::Json(bytes) => Some((bytes, self)),
                    _ => None,
                };
            }
            // The final response went out: the stream is over.
            self.finish.as_ref()?;
            tokio::select! {
                biased;
                notification = self.notifications.recv(), if !self.notifications.is_closed() || !self.notifications.is_empty() => {
                    if let Some(notification) = notification {
                        let frame = notification_frame(notification, self.progress_token.as_ref());
                        return Some((frame, self));
                    }
                }
                outcome = &mut self.run => self.outcome = Some(joined(outcome)),
            }
        }
    }
}

/// The wire form of one request notification.
pub(crate) fn notification_frame(
    notification: RequestNotification,
    progress_token: Option<&Value>,
) -> Bytes {
    match notification {
        RequestNotification::Progress {
            progress,
            total,
            message,
        } => {
            let params = ProgressParams {
                progress_token: progress_token.cloned().unwrap_or(Value::Null),
                progress,
                total,
                message,
            };
            notification_bytes("notifications/progress", &params)
        }
        RequestNotification::Log {
            level,
            logger,
            data,
        } => notification_bytes(
            "notifications/message",
            &LogParams {
                level,
                logger,
                data,
            },
        ),
    }
}
