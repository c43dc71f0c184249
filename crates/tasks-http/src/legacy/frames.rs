//! The response of a session request that may send messages before its answer (one JSON body
//! when the answer comes first, else an SSE stream of every message, then the answer) and the
//! server-to-client requests such a stream carries.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream;
use serde_json::{json, Value};
use tasks_core::input::METHOD_ELICIT;
use tasks_core::legacy::tasks::{related_task, META_RELATED_TASK};
use tasks_core::{InputRequest, JsonObject};
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

/// An input request the client answered with a JSON-RPC error.
pub(crate) struct Refused {
    /// The input key.
    pub(crate) key: String,
    /// The error's code (0 when it had none).
    pub(crate) code: i64,
}

/// Sends each input request to the client as a JSON-RPC request of the session (with
/// `_meta["io.modelcontextprotocol/related-task"]` when it is for task `related`) and waits
/// for every answer, matched by id. `None` when the request stopped meanwhile (its stream
/// closed, a cancellation, the session ended, the task no longer needs the input): the
/// requests are then forgotten, so a late answer is refused, and withdrawn on a stream still
/// open ([`withdraw`]). `Some(Err(_))` when the client answered one with a JSON-RPC error.
pub(crate) async fn ask(
    session: &Arc<Session>,
    asked: BTreeMap<String, InputRequest>,
    related: Option<&str>,
    tx: &mpsc::Sender<Frame>,
    cancel: &CancellationToken,
) -> Option<Result<JsonObject, Refused>> {
    let mut waiting = Vec::with_capacity(asked.len());
    // Forgets every request still outstanding when this returns or is dropped (the stream
    // closed, the driver aborted), so a late answer is refused rather than lost.
    let mut ids = Outstanding {
        session,
        ids: Vec::with_capacity(asked.len()),
    };
    for (key, request) in asked {
        let (request_id, answer) = session.ask(cancel);
        ids.ids.push(request_id);
        let mut params = request.params.unwrap_or_default();
        // `mode` exists from 2025-11-25 on; an older session gets the form request without it.
        if !session.tasks
            && request.method == METHOD_ELICIT
            && params.get("mode").and_then(Value::as_str) == Some("form")
        {
            params.remove("mode");
        }
        if let Some(task_id) = related {
            let mut meta = match params.remove("_meta") {
                Some(Value::Object(meta)) => meta,
                _ => JsonObject::new(),
            };
            meta.insert(META_RELATED_TASK.into(), related_task(task_id));
            params.insert("_meta".into(), Value::Object(meta));
        }
        let message = json!({"jsonrpc": "2.0", "id": request_id, "method": request.method,
                             "params": params});
        let bytes = Bytes::from(serde_json::to_vec(&message).unwrap_or_default());
        if tx.send(Frame::Message(bytes)).await.is_err() {
            return None;
        }
        waiting.push((key, answer));
    }
    let mut answers = JsonObject::new();
    for (at, (key, answer)) in waiting.into_iter().enumerate() {
        let answer = tokio::select! {
            () = cancel.cancelled() => {
                // A task's requests are withdrawn when the task no longer needs them (the
                // caller stops `cancel` for that too); a call's stop only when it ended.
                if related.is_some() {
                    withdraw(tx, &ids.ids[at..]);
                }
                None
            }
            answer = answer => answer.ok(),
        };
        match answer {
            None => return None,
            Some(Ok(result)) => {
                answers.insert(key, result);
            }
            Some(Err(error)) => {
                let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
                return Some(Err(Refused { key, code }));
            }
        }
    }
    Some(Ok(answers))
}

/// Tells the client that the requests `ids` are withdrawn (`notifications/cancelled`, MCP
/// 2025-11-25 cancellation: either side may cancel a request it sent), when their stream is
/// still open: the call or the task they were for no longer needs them (a task gone or ended,
/// a request answered elsewhere). Best effort: never waits for a slow stream; the requests are
/// forgotten either way, so a late answer is refused.
fn withdraw(tx: &mpsc::Sender<Frame>, ids: &[u64]) {
    for id in ids {
        let notice = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": id, "reason": "No longer needed"}});
        let bytes = Bytes::from(serde_json::to_vec(&notice).unwrap_or_default());
        if tx.try_send(Frame::Message(bytes)).is_err() {
            return;
        }
    }
}

/// The ids of server-to-client requests a driver waits on.
struct Outstanding<'a> {
    session: &'a Arc<Session>,
    ids: Vec<u64>,
}

impl Drop for Outstanding<'_> {
    fn drop(&mut self) {
        self.session.forget(&self.ids);
    }
}
