//! A synchronous run carried out for every host: the handler (a tool's or a prompt's) runs
//! within its request, and [`SyncExchange`] turns its notifications and its outcome into the
//! messages the client gets (which notifications go out, the response, the next MRTR round
//! and its `requestState`; the exchange's docs cite the spec). A host only moves the messages:
//! one JSON response, or a stream of notifications ending with the response
//! (streamable-http "Sending Messages" and "Cancellation":
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).
//!
//! * When the exchange wants no notifications (none requested, or the host cannot send any
//!   before the response), the handler runs inline in [`drive_sync`]: dropping that future
//!   (the client went away) drops the handler's and cancels its token.
//! * Otherwise the handler runs on its own tokio task with a [`Notifier`]. If it finishes
//!   before notifying, the answer is [`SyncStart::Done`] as above. The first notification
//!   makes it [`SyncStart::Streaming`]: every notification, then the response. Dropping the
//!   [`SyncStream`] (the client went away) cancels the handler's token and aborts its task.

use std::future::Future;

use futures_util::future::Map;
use futures_util::FutureExt as _;
use tasks_core::exchange::{SyncExchange, SyncResponse};
use tasks_core::plan::NONCE_BYTES;
use tasks_core::McpError;
use tokio::task::{AbortHandle, JoinError, JoinHandle};
use tokio_util::sync::DropGuard;

use crate::entropy::Randomness;
use crate::notify::{Notifier, NotifyingRun};
use crate::sync::{SyncCall, SyncOutcome};

/// How a synchronous run began: the whole answer, or a stream of messages.
#[derive(Debug)]
pub enum SyncStart {
    /// The handler finished before it notified: send [`SyncResponse::message`] alone, with
    /// [`SyncResponse::status`].
    Done(SyncResponse),
    /// The handler notified first: send every message of the stream, in order (HTTP: as
    /// server-sent events with status 200). Boxed: the stream is large, the response small.
    Streaming(Box<SyncStream>),
}

/// One message of a [`SyncStream`].
#[derive(Debug)]
pub enum SyncFrame {
    /// A `notifications/progress` or `notifications/message` message, serialized.
    Notification(Vec<u8>),
    /// The final JSON-RPC response; the stream ends after it.
    Response(SyncResponse),
}

impl SyncFrame {
    /// The serialized message, whichever kind it is.
    pub fn into_message(self) -> Vec<u8> {
        match self {
            SyncFrame::Notification(message) => message,
            SyncFrame::Response(response) => response.message,
        }
    }
}

/// The rest of a streaming synchronous run ([`SyncStart::Streaming`]); dropping it stops the
/// handler (its token fires and its task is aborted).
#[derive(Debug)]
pub struct SyncStream {
    /// The first notification, not yet taken.
    first: Option<Vec<u8>>,
    /// The handler's run and the exchange, until the handler's outcome is in.
    run: Option<(Run, SyncExchange)>,
    entropy: Randomness,
    _guard: RunGuard,
}

/// The handler's run: its notifications, then its outcome (a panic is an internal error).
type Run =
    NotifyingRun<Map<JoinHandle<SyncOutcome>, fn(Result<SyncOutcome, JoinError>) -> SyncOutcome>>;

/// Runs `handler` for one synchronous request through `exchange`, as the module docs say.
/// `streaming` says whether the host can send notifications before the response (over HTTP:
/// the client accepts `text/event-stream`); `entropy` draws the nonce of an `input_required`
/// round. The handler's token is a child of `call.cancel`, so firing it on a drop never
/// cancels the caller's own token.
pub async fn drive_sync<H, F>(
    handler: H,
    call: SyncCall,
    mut exchange: SyncExchange,
    streaming: bool,
    entropy: Randomness,
) -> SyncStart
where
    H: FnOnce(SyncCall) -> F,
    F: Future<Output = SyncOutcome> + Send + 'static,
{
    let cancel = call.cancel.child_token();
    let call = call.with_cancel(cancel.clone());
    let Some(wanted) = exchange.notifications(streaming) else {
        // Inline: dropping this future drops the handler's, and the guard fires its token.
        let guard = cancel.drop_guard();
        let outcome = handler(call).await;
        guard.disarm();
        return SyncStart::Done(exchange.finish(outcome, || nonce(&entropy)));
    };
    let (notifier, notifications) = Notifier::channel(wanted.progress, wanted.log_level);
    let spawned = tokio::spawn(handler(call.with_notifier(Some(notifier))));
    let guard = RunGuard {
        abort: spawned.abort_handle(),
        _cancel: cancel.drop_guard(),
    };
    let join: fn(_) -> _ = joined;
    let mut run = NotifyingRun::new(spawned.map(join), notifications);
    let Some(first) = run.notification().await else {
        let outcome = run.output().await;
        return SyncStart::Done(exchange.finish(outcome, || nonce(&entropy)));
    };
    SyncStart::Streaming(Box::new(SyncStream {
        first: Some(exchange.on_notification(first)),
        run: Some((run, exchange)),
        entropy,
        _guard: guard,
    }))
}

impl SyncStream {
    /// The next message; `None` after the response. Cancel-safe until the handler's outcome
    /// is in.
    pub async fn next(&mut self) -> Option<SyncFrame> {
        if let Some(first) = self.first.take() {
            return Some(SyncFrame::Notification(first));
        }
        let (run, exchange) = self.run.as_mut()?;
        if let Some(notification) = run.notification().await {
            return Some(SyncFrame::Notification(
                exchange.on_notification(notification),
            ));
        }
        let (run, exchange) = self.run.take()?;
        let outcome = run.output().await;
        Some(SyncFrame::Response(
            exchange.finish(outcome, || nonce(&self.entropy)),
        ))
    }
}

/// A fresh nonce; a failed draw leaves zeros (the round number still makes the state change).
fn nonce(entropy: &Randomness) -> [u8; NONCE_BYTES] {
    entropy.bytes().unwrap_or([0u8; NONCE_BYTES])
}

/// Stops the handler when the stream is dropped before the handler finished.
#[derive(Debug)]
struct RunGuard {
    abort: AbortHandle,
    _cancel: DropGuard,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        self.abort.abort();
    }
}

fn joined(outcome: Result<SyncOutcome, JoinError>) -> SyncOutcome {
    outcome.unwrap_or_else(|_| {
        SyncOutcome::Error(McpError::Internal("Tool raised an exception").to_error_object())
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{json, Value};
    use tasks_core::exchange::{StateIssuer, SyncRequest};
    use tasks_core::plan::StateKey;
    use tasks_core::wire::ResultMeta;
    use tasks_core::{JsonObject, Method, Timestamp};
    use tokio_util::sync::CancellationToken;

    use super::*;

    fn exchange(progress_token: Option<Value>) -> SyncExchange {
        SyncExchange::new(
            SyncRequest {
                id: json!(7),
                method: Method::ToolsCall,
                name: "t".into(),
                arguments: JsonObject::new(),
                scope: String::new(),
                progress_token,
                log_level: None,
                previous_round: None,
                answers: None,
            },
            StateIssuer {
                key: StateKey::from_bytes([1; 32]),
                lifetime_ms: 60_000,
                now: Timestamp::from_unix_millis(0),
            },
            Arc::new(ResultMeta::new(JsonObject::new())),
        )
    }

    fn complete(text: &str) -> SyncOutcome {
        let mut result = JsonObject::new();
        result.insert("content".into(), json!([{"type": "text", "text": text}]));
        SyncOutcome::Complete(tasks_core::wire::complete(result))
    }

    /// `drive_sync` of `handler` for a request asking for progress (token `"p"`).
    async fn start<H, F>(handler: H, call: SyncCall, streaming: bool) -> SyncStart
    where
        H: FnOnce(SyncCall) -> F,
        F: std::future::Future<Output = SyncOutcome> + Send + 'static,
    {
        let exchange = exchange(Some(json!("p")));
        drive_sync(handler, call, exchange, streaming, Randomness::default()).await
    }

    fn message(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).expect("a JSON message")
    }

    #[tokio::test]
    async fn a_run_that_never_notifies_is_one_response_even_when_the_host_could_stream() {
        let start = start(|_| async { complete("done") }, SyncCall::default(), true).await;
        let SyncStart::Done(response) = start else {
            panic!("expected one response, got {start:?}");
        };
        assert_eq!(response.status, 200);
        let message = message(&response.message);
        assert_eq!(message["id"], json!(7));
        assert_eq!(message["result"]["content"][0]["text"], json!("done"));
    }

    #[tokio::test]
    async fn notifications_come_first_in_order_then_the_response_then_nothing() {
        let handler = |call: SyncCall| async move {
            let notifier = call
                .notifier
                .expect("a notifier when progress was asked for");
            assert!(notifier.progress(1.0, Some(2.0), None));
            assert!(notifier.progress(2.0, Some(2.0), None));
            complete("after two")
        };
        let start = start(handler, SyncCall::default(), true).await;
        let SyncStart::Streaming(mut stream) = start else {
            panic!("expected a stream, got {start:?}");
        };
        let mut progress = Vec::new();
        let response = loop {
            match stream.next().await.expect("a frame before the end") {
                SyncFrame::Notification(bytes) => progress.push(message(&bytes)),
                SyncFrame::Response(response) => break response,
            }
        };
        assert_eq!(progress.len(), 2);
        assert_eq!(progress[0]["method"], json!("notifications/progress"));
        assert_eq!(progress[0]["params"]["progressToken"], json!("p"));
        assert_eq!(progress[1]["params"]["progress"].as_f64(), Some(2.0));
        assert!(response.streamed);
        assert_eq!(
            message(&response.message)["result"]["content"][0]["text"],
            json!("after two")
        );
        assert!(stream.next().await.is_none());
    }

    #[tokio::test]
    async fn without_a_stream_the_handler_gets_no_notifier() {
        let start = start(
            |call: SyncCall| async move { complete(&call.notifier.is_some().to_string()) },
            SyncCall::default(),
            false,
        )
        .await;
        let SyncStart::Done(response) = start else {
            panic!("expected one response");
        };
        assert_eq!(
            message(&response.message)["result"]["content"][0]["text"],
            json!("false")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_the_stream_cancels_the_handler_and_never_the_callers_token() {
        let caller = CancellationToken::new();
        let (token_tx, token_rx) = tokio::sync::oneshot::channel();
        let handler = move |call: SyncCall| async move {
            let _ = token_tx.send(call.cancel.clone());
            let notifier = call.notifier.expect("a notifier");
            notifier.progress(1.0, None, None);
            call.cancel.cancelled().await;
            complete("cancelled")
        };
        let call = SyncCall::default().with_cancel(caller.clone());
        let start = start(handler, call, true).await;
        let SyncStart::Streaming(mut stream) = start else {
            panic!("expected a stream");
        };
        assert!(matches!(
            stream.next().await,
            Some(SyncFrame::Notification(_))
        ));
        let handlers = token_rx.await.expect("the handler started");
        assert!(!handlers.is_cancelled());
        drop(stream);
        assert!(handlers.is_cancelled(), "the handler's token fires on drop");
        assert!(
            !caller.is_cancelled(),
            "the caller's token is not the handler's"
        );
    }
}
