//! The response of a session request that may send messages before its answer (one JSON body
//! when the answer comes first, else an SSE stream of every message, then the answer) and the
//! server-to-client requests such a stream carries.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream;
use tasks_core::sessions::session::{Refused, Resolution, RoundId};
use tasks_core::{InputRequest, JsonObject, TaskId};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::sessions::Session;
use crate::response::McpResponse;

/// What a driver sends toward the response.
pub(crate) enum Frame {
    /// A notification or a server-to-client request.
    Message(Bytes),
    /// The response: the last frame.
    Final(Bytes),
}

/// How a response starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// Wait for the first frame: JSON when it is the answer, else a stream.
    FirstFrame,
    /// A stream at once (a wait that may be long: the stream carries keep-alive comments).
    Stream,
}

/// Runs `driver` (given the sender of its frames) on its own task and builds the response as
/// `start` says. Dropping the stream (the client went away) fires `cancel` and aborts the
/// driver; a driver that ends without an answer ends the stream without one.
pub(crate) async fn respond<F, Fut>(
    cancel: CancellationToken,
    start: Start,
    driver: F,
) -> McpResponse
where
    F: FnOnce(mpsc::Sender<Frame>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (tx, mut rx) = mpsc::channel(16);
    let driver = tokio::spawn(driver(tx));
    let guard = Guard {
        _cancel: cancel.drop_guard(),
        driver: driver.abort_handle(),
    };
    // The rest of the frames, as the stream's messages; the guard lives as long as the stream.
    let rest = |rx: mpsc::Receiver<Frame>, guard: Guard| {
        stream::unfold((rx, guard), |(mut rx, guard)| async move {
            match rx.recv().await? {
                Frame::Message(bytes) | Frame::Final(bytes) => Some((bytes, (rx, guard))),
            }
        })
    };
    if start == Start::Stream {
        return McpResponse::stream(Box::pin(rest(rx, guard)));
    }
    match rx.recv().await {
        Some(Frame::Final(bytes)) => McpResponse::message(bytes),
        // Stopped before anything was sent: the request gets no response (an empty stream).
        None => McpResponse::stream(Box::pin(stream::empty())),
        Some(Frame::Message(first)) => McpResponse::stream(Box::pin(
            futures_util::StreamExt::chain(stream::iter([first]), rest(rx, guard)),
        )),
    }
}

/// Stops the driver when its response is dropped.
struct Guard {
    _cancel: DropGuard,
    driver: tokio::task::AbortHandle,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// Asks the client the input requests `asked` (of task `related`, if any) as one round of
/// the session ([`Session::ask`]) on `tx`, and waits for the round to resolve. `None` when
/// the request stopped meanwhile (its stream closed, a cancellation, the session ended, the
/// task no longer needs the input): the round is closed, so a late answer is refused, and a
/// task's requests are withdrawn on a stream still open (`notifications/cancelled`, MCP
/// 2025-11-25 cancellation; best effort: never waits for a slow stream). `Some(Err(_))` when
/// the client answered one with a JSON-RPC error.
pub(crate) async fn ask(
    session: &Arc<Session>,
    asked: BTreeMap<String, InputRequest>,
    related: Option<&TaskId>,
    tx: &mpsc::Sender<Frame>,
    cancel: &CancellationToken,
) -> Option<Result<JsonObject, Refused>> {
    let (round, messages, resolution) = session.ask(asked, related, cancel);
    // Closes the round when this returns or is dropped (the stream closed, the driver
    // aborted), so a late answer is refused rather than lost.
    let _open = OpenRound { session, round };
    for message in messages {
        if tx.send(Frame::Message(message)).await.is_err() {
            return None;
        }
    }
    tokio::select! {
        () = cancel.cancelled() => {
            for notice in session.close(round, true) {
                if tx.try_send(Frame::Message(notice)).is_err() {
                    break;
                }
            }
            None
        }
        resolution = resolution => match resolution.ok()? {
            Resolution::Answered(answers) => Some(Ok(answers)),
            Resolution::Refused { key, code } => Some(Err(Refused { key, code })),
            Resolution::Waiting => None,
        },
    }
}

/// A round a driver waits on.
struct OpenRound<'a> {
    session: &'a Arc<Session>,
    round: RoundId,
}

impl Drop for OpenRound<'_> {
    fn drop(&mut self) {
        self.session.close(self.round, false);
    }
}
