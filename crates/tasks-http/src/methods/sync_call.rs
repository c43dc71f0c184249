//! A synchronous request (a `tools/call` run now, a `prompts/get`) written over HTTP: the
//! runtime drives the run ([`tasks_runtime::drive_sync`], whose docs say when it streams and
//! how a dropped response stops the handler); here its messages become one JSON response or
//! an SSE stream (streamable-http "Sending Messages":
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).

use bytes::Bytes;
use futures_util::stream;
use http::HeaderMap;
use tasks_runtime::{SyncStart, SyncStream};

use crate::response::McpResponse;

/// Whether the client accepts an SSE response: `Accept` names `text/event-stream` (or a
/// wildcard covering it) without `q=0`.
pub(crate) fn accepts_event_stream(headers: &HeaderMap) -> bool {
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

/// The response for a run that began as `start`: one JSON message, or every message of its
/// stream as SSE (dropping the response stops the handler).
pub(crate) fn respond(start: SyncStart) -> McpResponse {
    match start {
        SyncStart::Done(response) => {
            McpResponse::json_with_status(response.status, Bytes::from(response.message))
        }
        SyncStart::Streaming(run) => {
            let messages = stream::unfold(run, |mut run: Box<SyncStream>| async move {
                let frame = run.next().await?;
                Some((Bytes::from(frame.into_message()), run))
            });
            McpResponse::stream(Box::pin(messages))
        }
    }
}
