//! One MCP 2026-07-28 request over Streamable HTTP: the body with its per-request `_meta`, the
//! routing headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), and the
//! answer read from `application/json` or from a `text/event-stream`. Answers are read with
//! plain member names (`tasks_core::json::parse`): a server's message with a member named after
//! one of serde_json's markers, or nested past 127 levels, is a malformed answer, not a value
//! spelt another way.
//!
//! Sources: MCP 2026-07-28 streamable-http "Sending Messages to the Server" and "Standard
//! Request Headers"
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use eventsource_stream::Eventsource as _;
use futures_util::{Stream, StreamExt as _};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{json, Value};
use tasks_core::headers::{encode_value, MirroredHeader};
use tasks_core::protocol::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, PROTOCOL_VERSION,
};
use tasks_core::{JsonObject, JsonRpcError, Method};

use crate::error::{body_line, ClientError};

/// The JSON-RPC messages of an SSE response, in order.
pub(crate) type MessageStream = Pin<Box<dyn Stream<Item = Result<Value, ClientError>> + Send>>;

/// The endpoint, its credentials and the request-id counter.
pub(crate) struct Connection {
    http: reqwest::Client,
    url: String,
    bearer: Option<String>,
    client_info: Value,
    request_timeout: Option<Duration>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("url", &self.url)
            .field("bearer", &self.bearer.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

/// One request to send.
#[derive(Debug)]
pub(crate) struct Request<'a> {
    pub(crate) method: &'a str,
    pub(crate) params: JsonObject,
    pub(crate) capabilities: &'a JsonObject,
    /// `Mcp-Param-*` headers, already encoded.
    pub(crate) param_headers: Vec<(String, String)>,
}

impl Connection {
    pub(crate) fn new(
        http: reqwest::Client,
        url: String,
        bearer: Option<String>,
        client_info: Value,
        request_timeout: Option<Duration>,
    ) -> Self {
        Connection {
            http,
            url,
            bearer,
            client_info,
            request_timeout,
            next_id: AtomicU64::new(1),
        }
    }

    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    fn build(&self, request: Request<'_>) -> (u64, reqwest::RequestBuilder) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let name = Method::parse(request.method)
            .and_then(Method::name_field)
            .and_then(|field| request.params.get(field))
            .and_then(Value::as_str)
            .and_then(|name| encode_value(MirroredHeader::Name, name))
            .map(|name| name.into_owned());
        let mut params = request.params;
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(meta)) => meta,
            _ => JsonObject::new(),
        };
        meta.insert(META_PROTOCOL_VERSION.into(), json!(PROTOCOL_VERSION));
        meta.insert(
            META_CLIENT_CAPABILITIES.into(),
            Value::Object(request.capabilities.clone()),
        );
        meta.insert(META_CLIENT_INFO.into(), self.client_info.clone());
        params.insert("_meta".into(), Value::Object(meta));
        let body = json!({"jsonrpc": "2.0", "id": id, "method": request.method, "params": params});
        let mut builder = self
            .http
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header(MirroredHeader::ProtocolVersion.name(), PROTOCOL_VERSION)
            .header(MirroredHeader::Method.name(), request.method)
            .body(body.to_string());
        if let Some(name) = name {
            builder = builder.header(MirroredHeader::Name.name(), name);
        }
        for (header, value) in request.param_headers {
            builder = builder.header(header, value);
        }
        if let Some(token) = &self.bearer {
            builder = builder.bearer_auth(token);
        }
        (id, builder)
    }

    /// Sends `request` and returns its result object; notifications on an SSE answer
    /// (progress, log messages) are skipped.
    ///
    /// # Errors
    /// [`ClientError::Rpc`] for a JSON-RPC error, [`ClientError::Http`] for an HTTP error
    /// without one, [`ClientError::Transport`] and [`ClientError::Malformed`].
    pub(crate) async fn call(&self, request: Request<'_>) -> Result<JsonObject, ClientError> {
        let (id, mut builder) = self.build(request);
        if let Some(timeout) = self.request_timeout {
            builder = builder.timeout(timeout);
        }
        let response = builder.send().await.map_err(ClientError::Transport)?;
        let status = response.status().as_u16();
        if is_event_stream(&response) && status == 200 {
            let mut messages = messages(response);
            while let Some(message) = messages.next().await {
                let message = message?;
                if message.get("id") == Some(&json!(id)) {
                    return answer(message, 200);
                }
            }
            return Err(ClientError::malformed("the stream ended without an answer"));
        }
        let bytes = read_body(response).await?;
        match tasks_core::json::parse(&bytes) {
            Ok(message) if message.get("jsonrpc").is_some() => answer(message, status),
            _ if !(200..300).contains(&status) => Err(ClientError::Http {
                status,
                body: body_line(&bytes),
            }),
            _ => Err(ClientError::malformed(
                "the answer is not a JSON-RPC message",
            )),
        }
    }

    /// Sends `request`, whose answer is a stream (`subscriptions/listen`): its messages.
    ///
    /// # Errors
    /// As [`Connection::call`], when the server answers with JSON instead of a stream.
    pub(crate) async fn stream(&self, request: Request<'_>) -> Result<MessageStream, ClientError> {
        let (_, builder) = self.build(request);
        let response = builder.send().await.map_err(ClientError::Transport)?;
        let status = response.status().as_u16();
        if is_event_stream(&response) && status == 200 {
            return Ok(messages(response));
        }
        let bytes = read_body(response).await?;
        match tasks_core::json::parse(&bytes) {
            Ok(message) if message.get("jsonrpc").is_some() => {
                answer(message, status)?;
                Err(ClientError::malformed("expected a stream, got one message"))
            }
            _ if !(200..300).contains(&status) => Err(ClientError::Http {
                status,
                body: body_line(&bytes),
            }),
            _ => Err(ClientError::malformed("the answer is not a stream")),
        }
    }
}

fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// The most bytes one reply body, or one SSE event, may take (16 MiB); more is
/// [`ClientError::Malformed`], so a hostile server cannot exhaust the client's memory.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// The whole body, at most [`MAX_MESSAGE_BYTES`].
async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, ClientError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(ClientError::Transport)? {
        if body.len() + chunk.len() > MAX_MESSAGE_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn too_large() -> ClientError {
    ClientError::malformed(format!("a message larger than {MAX_MESSAGE_BYTES} bytes"))
}

/// Counts the bytes of the SSE event being received (reset at each blank line) and fails the
/// stream when one exceeds [`MAX_MESSAGE_BYTES`].
#[derive(Default)]
struct EventLimit {
    pending: usize,
    after_newline: bool,
}

impl EventLimit {
    fn check(&mut self, chunk: &[u8]) -> Result<(), ClientError> {
        for &byte in chunk {
            match byte {
                b'\n' if self.after_newline => self.pending = 0,
                b'\n' => self.after_newline = true,
                b'\r' => {}
                _ => {
                    self.after_newline = false;
                    self.pending += 1;
                }
            }
        }
        if self.pending > MAX_MESSAGE_BYTES {
            Err(too_large())
        } else {
            Ok(())
        }
    }
}

/// The JSON `data` of each event of an SSE body (comments and empty events skipped).
fn messages(response: reqwest::Response) -> MessageStream {
    let mut limit = EventLimit::default();
    Box::pin(
        response
            .bytes_stream()
            .map(move |chunk| {
                let chunk = chunk.map_err(ClientError::Transport)?;
                limit.check(&chunk)?;
                Ok::<_, ClientError>(chunk)
            })
            .eventsource()
            .filter_map(|event| async move {
                match event {
                    Ok(event) if event.data.trim().is_empty() => None,
                    Ok(event) => Some(
                        tasks_core::json::parse(event.data.as_bytes())
                            .map_err(|_| ClientError::malformed("an SSE event is not JSON")),
                    ),
                    Err(eventsource_stream::EventStreamError::Transport(error)) => Some(Err(error)),
                    Err(_) => Some(Err(ClientError::malformed("a broken SSE stream"))),
                }
            }),
    )
}

/// The result of a JSON-RPC response, or its error.
fn answer(mut message: Value, http_status: u16) -> Result<JsonObject, ClientError> {
    if let Some(error) = message.get_mut("error") {
        let error: JsonRpcError = serde_json::from_value(error.take())
            .map_err(|_| ClientError::malformed("an error without code and message"))?;
        return Err(ClientError::rpc(error, http_status));
    }
    match message.get_mut("result").map(Value::take) {
        Some(Value::Object(result)) if (200..300).contains(&http_status) => Ok(result),
        _ if !(200..300).contains(&http_status) => Err(ClientError::Http {
            status: http_status,
            body: String::new(),
        }),
        _ => Err(ClientError::malformed("a response without a result object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_limit_counts_one_event_at_a_time() {
        let mut limit = EventLimit::default();
        let event = vec![b'x'; MAX_MESSAGE_BYTES / 2];
        for _ in 0..8 {
            // Many events, each half the limit, separated by blank lines (LF or CRLF).
            limit.check(b"data: ").expect("small");
            limit.check(&event).expect("half the limit");
            limit.check(b"\r\n\r\n").expect("the event ends");
        }
        // One event of more than the limit, in pieces: refused.
        limit.check(&event).expect("half");
        limit.check(b"\n").expect("one line break is not the end");
        limit.check(&event).expect("the limit exactly");
        let error = limit.check(b"y").expect_err("past the limit");
        assert!(matches!(error, ClientError::Malformed(_)), "{error}");
    }
}
