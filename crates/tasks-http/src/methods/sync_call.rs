//! A synchronous `tools/call`: the driver of [`SyncExchange`], which decides the frames (which
//! notifications go out, the response, the next MRTR round and its `requestState`; its docs
//! cite the spec). Here the tool runs and the response is written, as JSON or as SSE
//! (streamable-http "Sending Messages" and "Cancellation":
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).
//!
//! * When the exchange wants no notifications (none requested, or the client does not accept
//!   `text/event-stream`), the tool runs inline and the answer is one JSON message. Dropping
//!   the response future (the client went away) drops the tool's and cancels its token.
//! * Otherwise the tool runs on its own tokio task with a [`Notifier`]. If it finishes before
//!   notifying, the answer is JSON as above. The first notification switches the response to
//!   SSE: every notification, then the final response, then the stream ends. Dropping the
//!   stream (the client went away) cancels the tool's token and aborts its task.

use std::collections::VecDeque;

use bytes::Bytes;
use futures_util::future::Map;
use futures_util::{stream, FutureExt as _};
use http::HeaderMap;
use tasks_core::exchange::{SyncExchange, SyncResponse};
use tasks_core::plan::NONCE_BYTES;
use tasks_core::McpError;
use tasks_runtime::{Notifier, NotifyingRun, Randomness, SyncCall, SyncOutcome};
use tokio::task::{AbortHandle, JoinError, JoinHandle};
use tokio_util::sync::DropGuard;

use crate::response::McpResponse;

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

/// Runs `handler` (a tool's or a prompt's) for one synchronous request and builds the
/// response, as the module docs say; `entropy` draws the nonce of an `input_required` round.
pub(crate) async fn drive<H, F>(
    handler: H,
    call: SyncCall,
    headers: &HeaderMap,
    mut exchange: SyncExchange,
    entropy: Randomness,
) -> McpResponse
where
    H: FnOnce(SyncCall) -> F,
    F: std::future::Future<Output = SyncOutcome> + Send + 'static,
{
    // The tool's token: fired when the response is dropped before the tool finished (the
    // client went away: streamable-http "Cancellation"), whichever way it answers; a child, so
    // that firing it never cancels the caller's own token.
    let cancel = call.cancel.child_token();
    let call = call.with_cancel(cancel.clone());
    let Some(wanted) = exchange.notifications(accepts_event_stream(headers)) else {
        // Inline: dropping this future drops the tool's, and the guard fires its token.
        let guard = cancel.drop_guard();
        let outcome = handler(call).await;
        guard.disarm();
        return json(exchange.finish(outcome, || nonce(&entropy)));
    };
    let (notifier, notifications) = Notifier::channel(wanted.progress, wanted.log_level);
    let call = call.with_notifier(Some(notifier));
    let spawned = tokio::spawn(handler(call));
    let guard = RunGuard {
        abort: spawned.abort_handle(),
        _cancel: cancel.drop_guard(),
    };
    let join: fn(_) -> _ = joined::<JoinError>;
    let mut run = NotifyingRun::new(spawned.map(join), notifications);
    let Some(first) = run.notification().await else {
        return json(exchange.finish(run.output().await, || nonce(&entropy)));
    };
    let first = Bytes::from(exchange.on_notification(first));
    let live = Live {
        frames: VecDeque::from([first]),
        run: Some((run, exchange)),
        entropy,
        _guard: guard,
    };
    McpResponse::stream(Box::pin(stream::unfold(live, Live::next)))
}

/// A fresh nonce; a failed draw leaves zeros (the round number still makes the state change).
fn nonce(entropy: &Randomness) -> [u8; NONCE_BYTES] {
    entropy.bytes().unwrap_or([0u8; NONCE_BYTES])
}

/// The response as one JSON message.
fn json(response: SyncResponse) -> McpResponse {
    McpResponse::json_with_status(response.status, Bytes::from(response.message))
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

fn joined<E>(outcome: Result<SyncOutcome, E>) -> SyncOutcome {
    outcome.unwrap_or_else(|_| {
        SyncOutcome::Error(McpError::Internal("Tool raised an exception").to_error_object())
    })
}

/// The tool's run: its notifications, then its outcome (a panic is an internal error).
type Run =
    NotifyingRun<Map<JoinHandle<SyncOutcome>, fn(Result<SyncOutcome, JoinError>) -> SyncOutcome>>;

/// The state of a streaming response.
struct Live {
    /// Frames ready to go out.
    frames: VecDeque<Bytes>,
    /// The tool's run and the exchange, until the tool's outcome is in.
    run: Option<(Run, SyncExchange)>,
    entropy: Randomness,
    _guard: RunGuard,
}

impl Live {
    async fn next(mut self) -> Option<(Bytes, Self)> {
        loop {
            if let Some(frame) = self.frames.pop_front() {
                return Some((frame, self));
            }
            // The final response went out: the stream is over.
            let (run, exchange) = self.run.as_mut()?;
            if let Some(notification) = run.notification().await {
                self.frames
                    .push_back(exchange.on_notification(notification).into());
                continue;
            }
            let (run, exchange) = self.run.take()?;
            let response = exchange.finish(run.output().await, || nonce(&self.entropy));
            self.frames.push_back(response.message.into());
        }
    }
}
