//! A `subscriptions/listen` stream on a connection of its own: the SSE response is read as it
//! arrives, and each task notification is stamped with the instant its event was complete.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use serde_json::Value;
use tokio::time::Instant;

use crate::conn::{Connection, Endpoint};
use crate::mcp::Call;

/// One `notifications/tasks` message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskNote {
    /// `taskId`.
    pub task_id: String,
    /// `status`.
    pub status: String,
    /// `statusMessage` (empty when absent).
    pub message: String,
}

impl TaskNote {
    /// Whether the task is in a terminal status.
    pub(crate) fn is_terminal(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "failed" | "cancelled")
    }
}

/// An open listen stream.
pub(crate) struct Listen {
    body: Incoming,
    events: SseBuffer,
}

impl Listen {
    /// Opens a listen stream on `endpoint` for `task_ids` and waits (up to `limit`) for its
    /// acknowledgement.
    pub(crate) async fn open(
        endpoint: &Endpoint,
        task_ids: &[String],
        limit: Duration,
    ) -> Result<Listen, String> {
        let request = Call::listen(task_ids)?.request(endpoint);
        let response = Connection::open(endpoint).await?.stream(request).await?;
        if response.status() != http::StatusCode::OK {
            return Err(format!("listen: HTTP {}", response.status()));
        }
        let mut listen = Listen {
            body: response.into_body(),
            events: SseBuffer::default(),
        };
        let ack = listen.next_message(limit).await?;
        if ack["method"] != "notifications/subscriptions/acknowledged" {
            return Err(format!("listen: not an acknowledgement: {ack}"));
        }
        Ok(listen)
    }

    /// The next task notification and when it arrived, waiting at most `limit`; other messages
    /// are skipped.
    pub(crate) async fn next_task(
        &mut self,
        limit: Duration,
    ) -> Result<(Instant, TaskNote), String> {
        let deadline = Instant::now() + limit;
        loop {
            let message = self
                .next_message(deadline.saturating_duration_since(Instant::now()))
                .await?;
            let arrived = Instant::now();
            if let Some(note) = task_note(&message) {
                return Ok((arrived, note));
            }
        }
    }

    /// The next JSON message of the stream, waiting at most `limit`.
    async fn next_message(&mut self, limit: Duration) -> Result<Value, String> {
        let read = async {
            loop {
                if let Some(message) = self.events.next_message()? {
                    return Ok(message);
                }
                match self.body.frame().await {
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            self.events.push(&data);
                        }
                    }
                    Some(Err(error)) => return Err(format!("listen stream: {error}")),
                    None => return Err("listen stream ended".to_owned()),
                }
            }
        };
        tokio::time::timeout(limit, read)
            .await
            .map_err(|_| format!("listen: nothing within {limit:?}"))?
    }
}

/// The task of a `notifications/tasks` message.
fn task_note(message: &Value) -> Option<TaskNote> {
    if message["method"] != "notifications/tasks" {
        return None;
    }
    let params = &message["params"];
    let text = |key: &str| params[key].as_str().unwrap_or_default().to_owned();
    Some(TaskNote {
        task_id: text("taskId"),
        status: text("status"),
        message: text("statusMessage"),
    })
}

/// Bytes of an SSE stream not parsed yet.
#[derive(Debug, Default)]
struct SseBuffer {
    pending: Vec<u8>,
}

impl SseBuffer {
    fn push(&mut self, data: &Bytes) {
        self.pending.extend_from_slice(data);
    }

    /// The JSON of the next complete event with data (comments and keep-alives are skipped),
    /// or `None` until one is complete.
    fn next_message(&mut self) -> Result<Option<Value>, String> {
        loop {
            let Some(end) = self.pending.windows(2).position(|w| w == b"\n\n") else {
                return Ok(None);
            };
            let event: Vec<u8> = self.pending.drain(..end + 2).collect();
            let text = String::from_utf8_lossy(&event);
            let data: String = text
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            if !data.is_empty() {
                return serde_json::from_str(&data)
                    .map(Some)
                    .map_err(|e| format!("listen: event {data:?}: {e}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_split_and_comments_skipped() {
        let mut sse = SseBuffer::default();
        sse.push(&Bytes::from_static(
            b": keep-alive\n\nevent: message\ndata: {\"a\"",
        ));
        assert_eq!(sse.next_message(), Ok(None), "incomplete");
        sse.push(&Bytes::from_static(b":1}\n\ndata: {\"b\":2}\n\n"));
        assert_eq!(sse.next_message(), Ok(Some(serde_json::json!({"a": 1}))));
        assert_eq!(sse.next_message(), Ok(Some(serde_json::json!({"b": 2}))));
        assert_eq!(sse.next_message(), Ok(None));
        sse.push(&Bytes::from_static(b"data: nope\n\n"));
        assert!(sse.next_message().is_err());
    }

    #[test]
    fn task_notifications_are_read() {
        let message = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tasks",
            "params": {"taskId": "t", "status": "working", "statusMessage": "Step 1 of 2 (attempt 2)"}});
        let note = task_note(&message).unwrap();
        assert_eq!(
            (note.task_id.as_str(), note.status.as_str()),
            ("t", "working")
        );
        assert!(note.message.ends_with("(attempt 2)") && !note.is_terminal());
        let done = serde_json::json!({"method": "notifications/tasks",
            "params": {"taskId": "t", "status": "completed"}});
        assert!(task_note(&done).unwrap().is_terminal());
        assert!(task_note(&serde_json::json!({"method": "other"})).is_none());
    }
}
