//! [`Sse`]: the JSON messages of a Server-Sent Events response, one per event's `data:`.

use std::pin::Pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt as _};
use serde_json::Value;

use crate::wait::WAIT_LIMIT;

type Chunks = Pin<Box<dyn Stream<Item = Result<Vec<u8>, String>> + Send>>;

/// Reads the events of an SSE byte stream: each event's `data:` lines joined, parsed as JSON;
/// comments and keep-alives (events without data) are skipped.
pub struct Sse {
    stream: Chunks,
    buffer: Vec<u8>,
}

impl std::fmt::Debug for Sse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sse")
            .field("buffered", &self.buffer.len())
            .finish_non_exhaustive()
    }
}

impl Sse {
    /// Wraps a byte stream (a `reqwest::Response::bytes_stream()`, say).
    pub fn new<S, B, E>(stream: S) -> Self
    where
        S: Stream<Item = Result<B, E>> + Send + 'static,
        B: AsRef<[u8]>,
        E: std::fmt::Debug,
    {
        let chunks = stream.map(|chunk| match chunk {
            Ok(bytes) => Ok(bytes.as_ref().to_vec()),
            Err(error) => Err(format!("{error:?}")),
        });
        Sse {
            stream: Box::pin(chunks),
            buffer: Vec::new(),
        }
    }

    /// The body of `response`, read as events.
    pub fn of(response: reqwest::Response) -> Self {
        Sse::new(response.bytes_stream())
    }

    /// The next message, within [`WAIT_LIMIT`].
    ///
    /// # Panics
    /// When the stream ends, fails, or stays silent too long.
    pub async fn next(&mut self) -> Value {
        match self.next_within(WAIT_LIMIT).await {
            Some(message) => message,
            None => panic!("no SSE message within {WAIT_LIMIT:?}"),
        }
    }

    /// The next message if one comes within `limit`; `None` when the stream stays open and
    /// silent that long.
    ///
    /// # Panics
    /// When the stream ends or fails.
    pub async fn next_within(&mut self, limit: Duration) -> Option<Value> {
        match tokio::time::timeout(limit, self.read()).await {
            Ok(Ok(message)) => Some(message),
            Ok(Err(why)) => panic!("the SSE stream ended: {why}"),
            Err(_) => None,
        }
    }

    /// The next message, or `None` when `limit` passes or the stream ends first.
    pub async fn try_next(&mut self, limit: Duration) -> Option<Value> {
        tokio::time::timeout(limit, self.read()).await.ok()?.ok()
    }

    /// The next message, or `None` when the stream ends or fails; no time limit of its own
    /// (for a reader spawned beside the test).
    pub async fn next_or_end(&mut self) -> Option<Value> {
        self.read().await.ok()
    }

    /// The next message, or why the stream ended.
    async fn read(&mut self) -> Result<Value, String> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let text = String::from_utf8(event).expect("UTF-8 SSE");
                let data: String = text
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if data.is_empty() {
                    continue; // a comment or keep-alive
                }
                return Ok(serde_json::from_str(&data).expect("JSON in data:"));
            }
            match self.stream.next().await {
                // CR only ends lines (JSON escapes it in a string): `\r\n` reads as `\n`.
                Some(Ok(chunk)) => self
                    .buffer
                    .extend(chunk.into_iter().filter(|b| *b != b'\r')),
                Some(Err(error)) => return Err(error),
                None => return Err("end of stream".into()),
            }
        }
    }
}
