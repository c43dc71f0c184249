//! The response of a session request that may send messages before its answer (one JSON body
//! when the answer comes first, else an SSE stream of every message, then the answer).

use std::future::Future;

use futures_util::stream;
use tasks_runtime::sessions::Frame;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::response::McpResponse;

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
