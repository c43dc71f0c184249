//! A request run now on a 2025 session (a `tools/call`, a `prompts/get`): the driver of the
//! core's [`CallRounds`]. The handler's progress and log notifications and its input requests
//! go out as [`Frame`]s toward the request's stream; the client's answers come back through
//! [`Session::answer`], and the handler runs again with every answer so far (the replay of an
//! MRTR round of 2026-07-28) until it completes.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;
use tasks_core::exchange::notification_message;
use tasks_core::sessions::session::{CallRounds, RoundStep};
use tasks_core::JsonObject;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{ask, Frame, Session};
use crate::{Notifier, NotifyingRun, SyncCall, SyncOutcome};

/// A request to run in rounds: the core's round machine, the request's arguments (the same
/// in every round) and its progress token, if it asked for progress.
#[derive(Debug)]
pub struct RoundsCall {
    /// The rounds of the request (its id, who asks).
    pub rounds: CallRounds,
    /// The request's arguments.
    pub arguments: JsonObject,
    /// The request's `progressToken`.
    pub progress_token: Option<Value>,
}

/// Carries out the core's [`CallRounds`]: runs the handler, sends its notifications, asks
/// its rounds on `tx`, until the final frame (or the request stops: `cancel`, the stream
/// closed). `handler` runs the request once per round ([`run_sync`](crate::run_sync) of a
/// tool, [`render_prompt`](crate::catalog::render_prompt) of a prompt).
pub async fn drive_rounds<H, Fut>(
    session: Arc<Session>,
    call: RoundsCall,
    handler: H,
    tx: mpsc::Sender<Frame>,
    cancel: CancellationToken,
) where
    H: Fn(SyncCall) -> Fut,
    Fut: std::future::Future<Output = SyncOutcome>,
{
    let RoundsCall {
        mut rounds,
        arguments,
        progress_token,
    } = call;
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
