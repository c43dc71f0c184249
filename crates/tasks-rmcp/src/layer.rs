//! [`ListenPrefilter`]: the HTTP layer that carries `subscriptions/listen` `taskIds` past
//! rmcp 3.11.0's typed filter, and refuses the member names serde_json gives a meaning.

use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{HeaderValue, CONTENT_TYPE};
use http::{HeaderMap, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt as _, Either, Full, LengthLimitError, Limited};
use serde_json::Value;
use tasks_core::exchange::ListenFilter;
use tasks_core::headers::MirroredHeader;
use tasks_core::plan::{admit, parse_envelope};
use tasks_core::protocol::PROTOCOL_VERSION;
use tasks_core::{json, jsonrpc, McpError, Method, TaskId};

use crate::convert::Headers;

/// The default body limit of [`ListenLayer`]: 4 MiB, the default of rmcp 3.11.0's
/// `StreamableHttpServerConfig::max_request_body_bytes`.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The `taskIds` of a `subscriptions/listen` request, validated by [`ListenPrefilter`]: in the
/// HTTP request's extensions, where [`TasksBridge::listen`](crate::TasksBridge::listen) reads
/// them (`http::request::Parts::extensions`). Deduplicated, in request order; empty for
/// `taskIds: []`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenTaskIds(pub Vec<TaskId>);

/// The layer of [`ListenPrefilter`]: `tower::Layer`, for `ServiceBuilder`, axum's
/// `Router::layer` or by hand (`listen_layer().layer(service)`).
#[derive(Debug, Clone, Copy)]
pub struct ListenLayer {
    max_body_bytes: usize,
}

/// A [`ListenLayer`] with the default body limit ([`DEFAULT_MAX_BODY_BYTES`]).
pub fn listen_layer() -> ListenLayer {
    ListenLayer::default()
}

impl Default for ListenLayer {
    fn default() -> Self {
        ListenLayer {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

impl ListenLayer {
    /// Sets the most bytes a body read by the layer may have (default
    /// [`DEFAULT_MAX_BODY_BYTES`]); give it the `max_request_body_bytes` of the rmcp service
    /// behind, so that both refuse the same bodies.
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body_bytes = limit;
        self
    }
}

impl<S> tower::Layer<S> for ListenLayer {
    type Service = ListenPrefilter<S>;

    fn layer(&self, inner: S) -> ListenPrefilter<S> {
        ListenPrefilter {
            inner,
            max_body_bytes: self.max_body_bytes,
        }
    }
}

/// The service [`ListenLayer`] puts in front of `S` (rmcp's `StreamableHttpService`). `S` gets
/// the request body as an [`Either`]: the original body, or the bytes the layer read; the
/// layer's own answers are the [`Either::Right`] of its response body.
///
/// rmcp parses the listen filter into its `SubscriptionFilter`, which has no `taskIds` and drops
/// unknown keys, and sends the acknowledgement before the handler's `listen` runs; its
/// `accepted_subscription_filter` sees no request context. So nothing inside the handler can
/// read the requested task ids, or refuse a listener that names them without declaring the
/// Tasks extension. This service does both from the
/// request itself (SEP-2663 "Task Status Notifications",
/// <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>;
/// MCP 2026-07-28 "Subscriptions",
/// <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>).
///
/// For a `POST` that may be a `subscriptions/listen` request it buffers the body (at most
/// [`ListenLayer::max_body_bytes`]), and when the body is a listen request whose
/// `params.notifications` has a `taskIds` member it runs this project's admission and filter
/// checks ([`tasks_core::plan::admit`], then [`tasks_core::exchange::ListenFilter::parse`]),
/// in our own server's order. A refusal is answered here with the error table's code and HTTP
/// status, before rmcp sees the request; otherwise the ids go into the request's extensions as
/// [`ListenTaskIds`] (rmcp hands the request's `http::request::Parts`, extensions included, to
/// the handler) and the request goes on to rmcp with the same bytes.
///
/// | request | answer |
/// |---|---|
/// | `taskIds` without `_meta["io.modelcontextprotocol/clientCapabilities"].extensions["io.modelcontextprotocol/tasks"]` | -32021 `Missing required client capability`, HTTP 400, `data.requiredCapabilities = {"extensions": {"io.modelcontextprotocol/tasks": {}}}` |
/// | `taskIds` not an array of at most 100 task ids (non-empty strings of at most 256 bytes) | -32602, HTTP 400 (`taskIds must be an array of task ids`, `taskIds lists more than 100 ids`) |
/// | a core filter key of the wrong type beside `taskIds` | -32602, HTTP 400 |
/// | a head or `_meta` our admission refuses (headers, versions), `taskIds` present | its -32020 / -32022 / -32602, HTTP 400 |
/// | body larger than the limit | -32600 `Request body is larger than N bytes`, HTTP 413 |
/// | body that cannot be read to its end | -32700 `Parse error`, HTTP 400 |
/// | any `POST` body with a member named `$serde_json::private::RawValue` or `$serde_json::private::Number` at any depth, escaped or not | -32600 `A member name is reserved: $serde_json::private::...`, HTTP 400, no id (as this project's own transport answers it) |
/// | anything else | passed on unchanged |
///
/// Every `POST` body is read into memory once (rmcp reads it whole too) and handed on as those
/// bytes; `GET` and `DELETE` pass untouched. Each is checked for `serde_json`'s private
/// marker names, once: by this project's admission parse when it reads the body as a request,
/// else by a parse that keeps nothing ([`tasks_core::json::Checked`]). rmcp builds
/// `Value`s with `serde_json`'s rules, under which such a member is read as the JSON text in
/// its string (an id, a task id or an argument spelt as an object, or nesting past the parser's
/// limit), so this server refuses it before rmcp reads it, as its own HTTP transport does.
/// Only a body that could be a listen is inspected further: a `POST` whose
/// `MCP-Protocol-Version` header is at least `2026-07-28` and whose single `Mcp-Method` header
/// names another method is not, because rmcp 3.11.0 then refuses a body whose method differs
/// from that header (-32020, MCP 2026-07-28 streamable-http "Standard Request Headers",
/// <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).
#[derive(Debug, Clone)]
pub struct ListenPrefilter<S> {
    inner: S,
    max_body_bytes: usize,
}

/// The request body `S` gets.
type InnerBody<B> = Either<B, Full<Bytes>>;

impl<S, B, ResBody> tower::Service<Request<B>> for ListenPrefilter<S>
where
    S: tower::Service<Request<InnerBody<B>>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    type Response = Response<Either<ResBody, Full<Bytes>>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The service polled ready is the one to call; a clone takes its place.
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        if request.method() != http::Method::POST {
            let answer = inner.call(request.map(Either::Left));
            return Box::pin(async move { Ok(answer.await?.map(Either::Left)) });
        }
        let listen = may_be_listen(request.method(), request.headers());
        let limit = self.max_body_bytes;
        Box::pin(async move {
            let (mut parts, body) = request.into_parts();
            let bytes = match Limited::new(body, limit).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => {
                    return Ok(refusal(None, &McpError::BodyTooLarge { limit }));
                }
                Err(_) => return Ok(refusal(None, &McpError::Parse)),
            };
            let inspection = if listen {
                inspect(&parts.headers, &bytes)
            } else {
                unread(&bytes)
            };
            match inspection {
                Inspection::PassOn => {}
                Inspection::Follow(ids) => {
                    parts.extensions.insert(ListenTaskIds(ids));
                }
                Inspection::Refuse(id, error) => return Ok(refusal(id.as_ref(), &error)),
            }
            let request = Request::from_parts(parts, Either::Right(Full::new(bytes)));
            Ok(inner.call(request).await?.map(Either::Left))
        })
    }
}

/// Whether a request may be a `subscriptions/listen` that the layer must inspect: any `POST`
/// unless rmcp guarantees its body's method is the one its `Mcp-Method` header names, and that
/// is another method.
fn may_be_listen(method: &http::Method, headers: &HeaderMap) -> bool {
    if method != http::Method::POST {
        return false;
    }
    let single = |name: &str| {
        let mut values = headers.get_all(name).iter();
        match (values.next(), values.next()) {
            (Some(value), None) => value.to_str().ok(),
            _ => None,
        }
    };
    // rmcp compares the version as text: `version >= "2026-07-28"`.
    let headers_checked = single(MirroredHeader::ProtocolVersion.name())
        .is_some_and(|version| version >= PROTOCOL_VERSION);
    let named = single(MirroredHeader::Method.name());
    !(headers_checked && named.is_some_and(|m| m != Method::SubscriptionsListen.as_str()))
}

/// What the layer does with a body it read.
#[derive(Debug, PartialEq)]
enum Inspection {
    /// Not a listen naming `taskIds`: on to rmcp unchanged.
    PassOn,
    /// A listen whose `taskIds` passed: on to rmcp with these ids in the extensions.
    Follow(Vec<TaskId>),
    /// Refused here, with the request id when it could be read.
    Refuse(Option<Value>, McpError),
}

/// -32600 [`json::MARKER_MESSAGE`] when `body` is JSON with a member named after one of
/// `serde_json`'s private markers at any depth ([`json::MARKERS`]), which rmcp's parser would
/// read as the JSON text in its string; `None` for any other body, JSON or not (what is not
/// JSON is rmcp's to answer).
fn reserved_name(body: &[u8]) -> Option<McpError> {
    match serde_json::from_slice::<json::Checked>(body) {
        Err(error) if json::is_marker_error(&error) => {
            Some(McpError::InvalidRequest(json::MARKER_MESSAGE))
        }
        _ => None,
    }
}

/// A body the layer does not read as a listen: refused when it has a marker name
/// ([`reserved_name`]), else passed on.
fn unread(body: &[u8]) -> Inspection {
    reserved_name(body).map_or(Inspection::PassOn, |error| Inspection::Refuse(None, error))
}

/// Reads one body: see [`ListenPrefilter`].
fn inspect(headers: &HeaderMap, body: &[u8]) -> Inspection {
    // A body rmcp cannot parse, a notification or another method is rmcp's to answer. A
    // request read whole has no marker name anywhere (the parser refuses one); any other body
    // is checked for one on its own.
    let Ok(envelope) = parse_envelope(body) else {
        return unread(body);
    };
    let names_task_ids = envelope
        .params
        .as_ref()
        .and_then(|params| params.get("notifications"))
        .and_then(|filter| filter.get("taskIds"))
        .is_some();
    if envelope.id.is_none()
        || envelope.method != Method::SubscriptionsListen.as_str()
        || !names_task_ids
    {
        return Inspection::PassOn;
    }
    let id = envelope.id.clone();
    let filter = admit(&Headers(Some(headers)), envelope).and_then(|request| {
        let declared = request.meta.declares_tasks()?;
        ListenFilter::parse(&request.params, declared)
    });
    match filter {
        Ok(filter) => Inspection::Follow(filter.task_ids.unwrap_or_default()),
        Err(error) => Inspection::Refuse(id, error),
    }
}

/// The layer's answer to a refused request: the error table's HTTP status and JSON-RPC error.
fn refusal<ResBody>(
    id: Option<&Value>,
    error: &McpError,
) -> Response<Either<ResBody, Full<Bytes>>> {
    let (status, body) = jsonrpc::refusal(id, error);
    let mut response = Response::new(Either::Right(Full::new(Bytes::from(body))));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    fn listen_head() -> HeaderMap {
        headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "subscriptions/listen"),
        ])
    }

    fn listen(caps: Value, notifications: Value) -> Vec<u8> {
        serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen",
            "params": {"notifications": notifications, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": caps}}}),
        )
        .unwrap()
    }

    fn tasks() -> Value {
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    }

    #[test]
    fn only_posts_that_may_be_a_listen_are_read() {
        let post = http::Method::POST;
        let named = |method: &str| {
            headers(&[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", method),
            ])
        };
        assert!(!may_be_listen(&post, &named("tools/call")));
        assert!(!may_be_listen(&http::Method::GET, &HeaderMap::new()));
        assert!(may_be_listen(&post, &named("subscriptions/listen")));
        assert!(may_be_listen(&post, &HeaderMap::new()));
        // Without a version rmcp checks headers at, a header proves nothing about the body.
        assert!(may_be_listen(
            &post,
            &headers(&[("mcp-method", "tools/call")])
        ));
        assert!(may_be_listen(
            &post,
            &headers(&[
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/call")
            ])
        ));
        let mut twice = named("tools/call");
        twice.append("mcp-method", HeaderValue::from_static("tools/list"));
        assert!(may_be_listen(&post, &twice));
    }

    #[test]
    fn a_declaring_listen_follows_its_ids_deduplicated() {
        let body = listen(tasks(), json!({"taskIds": ["a", "b", "a"]}));
        let ids = ["a", "b"].map(|id| TaskId::parse(id).unwrap()).to_vec();
        assert_eq!(inspect(&listen_head(), &body), Inspection::Follow(ids));
        let empty = listen(tasks(), json!({"taskIds": []}));
        assert_eq!(
            inspect(&listen_head(), &empty),
            Inspection::Follow(Vec::new())
        );
    }

    #[test]
    fn refusals_carry_the_core_error_and_the_request_id() {
        let refused = |caps: Value, notifications: Value| match inspect(
            &listen_head(),
            &listen(caps, notifications),
        ) {
            Inspection::Refuse(id, error) => {
                assert_eq!(id, Some(json!(3)));
                let (status, body) = jsonrpc::refusal(id.as_ref(), &error);
                (status, serde_json::from_slice::<Value>(&body).unwrap())
            }
            other => panic!("not refused: {other:?}"),
        };
        assert_eq!(
            refused(json!({}), json!({"taskIds": ["a"]})),
            (
                400,
                json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32021,
                "message": "Missing required client capability",
                "data": {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}}})
            )
        );
        assert_eq!(
            refused(tasks(), json!({"taskIds": "a"})),
            (
                400,
                json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602,
                "message": "taskIds must be an array of task ids"}})
            )
        );
        assert_eq!(
            refused(tasks(), json!({"taskIds": [""]})).1["error"]["message"],
            "taskIds must be an array of task ids"
        );
        let many: Vec<String> = (0..101).map(|i| format!("t{i}")).collect();
        assert_eq!(
            refused(tasks(), json!({"taskIds": many})).1["error"]["message"],
            "taskIds lists more than 100 ids"
        );
        assert_eq!(
            refused(tasks(), json!({"taskIds": ["a"], "toolsListChanged": 1})).1["error"],
            json!({"code": -32602, "message": "notifications list-changed flags must be booleans"})
        );
        // The Tasks extension defines no settings.
        assert_eq!(
            refused(
                json!({"extensions": {"io.modelcontextprotocol/tasks": {"x": 1}}}),
                json!({"taskIds": ["a"]})
            )
            .1["error"]["message"],
            "The Tasks extension defines no settings"
        );
    }

    #[test]
    fn a_head_our_admission_refuses_is_refused_when_task_ids_are_named() {
        let body = listen(json!({}), json!({"taskIds": ["a"]}));
        let head = headers(&[("mcp-protocol-version", "2026-07-28")]);
        assert_eq!(
            inspect(&head, &body),
            Inspection::Refuse(
                Some(json!(3)),
                McpError::HeaderMismatch("Missing Mcp-Method header")
            )
        );
    }

    #[test]
    fn marker_names_are_refused_at_any_depth_and_however_escaped() {
        let refused = Some(McpError::InvalidRequest(json::MARKER_MESSAGE));
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":{"$serde_json::private::RawValue":"\"a\""}}}"#,
            r#"{"id":{"\u0024serde_json::private::Number":"1"}}"#,
            r#"[[{"a":[{"$serde_json::private::Number":"1e999"}]}]]"#,
        ] {
            assert_eq!(reserved_name(body.as_bytes()), refused, "{body}");
            assert_eq!(
                inspect(&listen_head(), body.as_bytes()),
                Inspection::Refuse(None, McpError::InvalidRequest(json::MARKER_MESSAGE)),
                "{body}"
            );
        }
        let listen_with_marker =
            br#"{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"notifications":{"taskIds":[{"$serde_json::private::RawValue":"1"}]}}}"#;
        assert_eq!(
            inspect(&listen_head(), listen_with_marker),
            Inspection::Refuse(None, McpError::InvalidRequest(json::MARKER_MESSAGE))
        );
        // Plain JSON, and what is not JSON at all (rmcp answers it), pass.
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"$other":1}"#,
            "{",
            "",
        ] {
            assert_eq!(reserved_name(body.as_bytes()), None, "{body}");
        }
    }

    #[test]
    fn everything_else_passes_on() {
        let head = listen_head();
        for body in [
            b"not json".to_vec(),
            listen(json!({}), json!({"toolsListChanged": true})),
            listen(json!({}), json!({})),
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": "subscriptions/listen",
                "params": {"notifications": {"taskIds": ["a"]}}}))
            .unwrap(),
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                "params": {"notifications": {"taskIds": ["a"]}}}))
            .unwrap(),
        ] {
            assert_eq!(inspect(&head, &body), Inspection::PassOn);
        }
    }
}
