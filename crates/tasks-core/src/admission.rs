//! Admission of one POSTed message: steps 3–11 of this server's admission order.
//!
//! MCP 2026-07-28 defines each rejection (streamable-http "Sending Messages", "Protocol Version
//! Header", "Standard Request Headers" and "Server Validation":
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>;
//! basic, "`_meta`": <https://modelcontextprotocol.io/specification/2026-07-28/basic/index>) but
//! not the order between them. The order below is this server's. The conformance runner fixes
//! three points of it: `_meta` before the header/body version comparison
//! (`server-stateless/sep-2575-request-meta-invalid-missing-protocol-version`), that comparison
//! before version support (`server-stateless/sep-2575-http-server-header-mismatch-400`), and an
//! unknown method before `Mcp-Name` (`tasks-dispatch-and-envelope/tasks-removed-tasks-list` sends
//! `tasks/list` without one).
//!
//! | step | check | failure |
//! |---|---|---|
//! | 3 | body is JSON, one request or notification | -32700 / -32600, HTTP 400 |
//! | 4 | a notification (no `id`) | HTTP 202, no body (decided by the caller) |
//! | 5 | a 2025-era request (no `_meta` version; `initialize` or a legacy header version) | -32022, HTTP 400, `data.supported` |
//! | 5 | `MCP-Protocol-Version` present, once | -32020, HTTP 400 |
//! | 6 | `Mcp-Method` present, once, equal to `method` | -32020, HTTP 400 |
//! | 7 | `params._meta` has `protocolVersion` and `clientCapabilities` | -32602, HTTP 400 |
//! | 8 | header version equals `_meta` version | -32020, HTTP 400 |
//! | 9 | version supported | -32022, HTTP 400 |
//! | 10 | method known (a prompts, resources or completion method only on a server offering that feature) | -32601, HTTP 404 (`initialize` also names `data.supported`) |
//! | 11 | `Mcp-Name` for `tools/call` and the task methods | -32020, HTTP 400 |
//!
//! Steps 1–2 (Host/Origin, POST) are the transport's; steps 12–13 (`Mcp-Param-*`,
//! capabilities, params) follow per method. The request head comes in as plain data
//! ([`HeaderSource`]), so the whole order is testable without a network.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::borrowed;
use crate::error::McpError;
use crate::headers::{self, MirroredHeader, NameRule};
use crate::json::{self, Checked, Plain};
use crate::method::{Feature, Method};
use crate::negotiation::{session_era_error, RequestMeta};
use crate::protocol::{METHOD_INITIALIZE, SUPPORTED_VERSIONS};

/// The request headers as plain data: every value of a header, by its name (matched
/// ASCII-case-insensitively, as HTTP header names are), in the order received. A transport
/// implements it over its own header map.
pub trait HeaderSource {
    /// The values of header `name`, in order; none when absent. (An iterator, so a lookup on
    /// the hot path allocates nothing.)
    fn values<'a, 'n>(&'a self, name: &'n str) -> impl Iterator<Item = &'a [u8]> + 'n
    where
        'a: 'n;
}

/// Headers as `(name, value)` pairs, for tests and tools.
impl HeaderSource for [(&str, &[u8])] {
    fn values<'a, 'n>(&'a self, name: &'n str) -> impl Iterator<Item = &'a [u8]> + 'n
    where
        'a: 'n,
    {
        self.iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }
}

/// A parsed JSON-RPC message (step 3).
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The request id; `None` for a notification.
    pub id: Option<Value>,
    /// The method.
    pub method: String,
    /// The params, when present.
    pub params: Option<Value>,
}

/// A request that passed steps 3–11.
#[derive(Debug, Clone, PartialEq)]
pub struct Admitted {
    /// The request id (a string or an integer).
    pub id: Value,
    /// The method.
    pub method: Method,
    /// The params object.
    pub params: Value,
    /// The validated request `_meta`.
    pub meta: RequestMeta,
}

/// A step-3 failure, with the request id when one could be read (so the error can echo it).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EnvelopeError {
    /// The id of the message, when it was an object with a valid `id`.
    pub id: Option<Value>,
    /// The error: -32700 or -32600.
    pub error: McpError,
}

/// A JSON-RPC response the client POSTed: its answer to a request the server sent (only the
/// 2025-era session path sends any; see [`crate::sessions`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the server's request it answers.
    pub id: Value,
    /// The `result` member, or the `error` member.
    pub outcome: Result<Value, Value>,
}

/// One POSTed JSON-RPC message: a request or notification, or a response.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request (`id` present) or a notification.
    Envelope(Envelope),
    /// A response to a server-to-client request.
    Response(Response),
}

/// Step 3: parses the body as exactly one JSON-RPC request or notification.
///
/// # Errors
/// -32700 for bytes that are not JSON (invalid UTF-8 and nesting deeper than 128 levels
/// included); -32600 for a batch array or an object that is not a JSON-RPC 2.0 message (with
/// the id echoed when the object carries a valid one), a response included.
pub fn parse_envelope(body: &[u8]) -> Result<Envelope, EnvelopeError> {
    match parse_message(body)? {
        Message::Envelope(envelope) => Ok(envelope),
        Message::Response(response) => Err(EnvelopeError {
            id: Some(response.id),
            error: McpError::InvalidRequest("method must be a string"),
        }),
    }
}

/// Step 3 for a transport that also takes responses: parses the body as exactly one JSON-RPC
/// request, notification, or response (an object with a valid `id`, no `method`, and exactly
/// one of `result` and `error`, the error an object).
///
/// The top-level object is read member by member rather than into a map:
/// only the values are built, each a [`Value`] with plain member names ([`json::Plain`]).
/// Every other member is parsed the same way and dropped, so the same bodies are JSON (invalid
/// UTF-8, lone surrogate escapes and nesting past 127 levels are -32700 wherever they are), and
/// a repeated member keeps its last value, as a map does. A member named after one of
/// `serde_json`'s markers ([`json::MARKERS`]), at any depth, is -32600 with the message
/// [`json::MARKER_MESSAGE`] and a null id, whatever serde_json features the build has.
///
/// # Errors
/// As [`parse_envelope`], except that a well-formed response is a [`Message::Response`].
pub fn parse_message(body: &[u8]) -> Result<Message, EnvelopeError> {
    let fail = |id: Option<Value>, error: McpError| Err(EnvelopeError { id, error });
    let members = match serde_json::from_slice::<TopLevel>(body) {
        Ok(TopLevel::Object(members)) => members,
        Ok(TopLevel::Array) => {
            return fail(
                None,
                McpError::InvalidRequest(
                    "Batch requests are not supported: send one message per POST",
                ),
            )
        }
        Ok(TopLevel::Other) => {
            return fail(
                None,
                McpError::InvalidRequest("Expected a JSON-RPC request object"),
            )
        }
        Err(error) if json::is_marker_error(&error) => {
            return fail(None, McpError::InvalidRequest(json::MARKER_MESSAGE))
        }
        Err(_) => return fail(None, McpError::Parse),
    };
    let Members {
        jsonrpc,
        id,
        method,
        params,
        result,
        error,
    } = members;
    let id = match id {
        None => None,
        Some(id @ Value::String(_)) => Some(id),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n)),
        Some(_) => {
            return fail(
                None,
                McpError::InvalidRequest("id must be a string or an integer"),
            )
        }
    };
    if jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return fail(id, McpError::InvalidRequest("jsonrpc must be \"2.0\""));
    }
    let method = match method {
        Some(Value::String(method)) => method,
        None => {
            let error = error.filter(Value::is_object);
            return match (id, result, error) {
                (Some(id), Some(result), None) => Ok(Message::Response(Response {
                    id,
                    outcome: Ok(result),
                })),
                (Some(id), None, Some(error)) => Ok(Message::Response(Response {
                    id,
                    outcome: Err(error),
                })),
                (id, Some(_), Some(_)) => fail(
                    id,
                    McpError::InvalidRequest("A response carries result or error, not both"),
                ),
                (id, _, _) => fail(id, McpError::InvalidRequest("method must be a string")),
            };
        }
        _ => return fail(id, McpError::InvalidRequest("method must be a string")),
    };
    Ok(Message::Envelope(Envelope { id, method, params }))
}

/// The body's top-level JSON value, as far as step 3 needs it.
enum TopLevel {
    /// An object, with the members a JSON-RPC message may have.
    Object(Members),
    /// An array (a batch).
    Array,
    /// A string, number, boolean or null.
    Other,
}

/// The members of a top-level object that step 3 reads; each is the member's last value.
#[derive(Default)]
struct Members {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
}

/// A member name of the top-level object.
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
                if json::is_marker(name) {
                    return Err(E::custom(json::MARKER_MESSAGE));
                }
                Ok(match name {
                    "jsonrpc" => Member::Jsonrpc,
                    "id" => Member::Id,
                    "method" => Member::Method,
                    "params" => Member::Params,
                    "result" => Member::Result,
                    "error" => Member::Error,
                    _ => Member::Other,
                })
            }
        }
        deserializer.deserialize_identifier(Name)
    }
}

impl<'de> Deserialize<'de> for TopLevel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Top;
        impl<'de> Visitor<'de> for Top {
            type Value = TopLevel;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopLevel, A::Error> {
                let mut members = Members::default();
                while let Some(name) = map.next_key::<Member>()? {
                    let value = Some(map.next_value::<Plain>()?.0);
                    match name {
                        Member::Jsonrpc => members.jsonrpc = value,
                        Member::Id => members.id = value,
                        Member::Method => members.method = value,
                        Member::Params => members.params = value,
                        Member::Result => members.result = value,
                        Member::Error => members.error = value,
                        Member::Other => {}
                    }
                }
                Ok(TopLevel::Object(members))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TopLevel, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(TopLevel::Array)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<TopLevel, E> {
                Ok(TopLevel::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<TopLevel, E> {
                Ok(TopLevel::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<TopLevel, E> {
                Ok(TopLevel::Other)
            }
            fn visit_i128<E: de::Error>(self, _: i128) -> Result<TopLevel, E> {
                Ok(TopLevel::Other)
            }
            fn visit_u128<E: de::Error>(self, _: u128) -> Result<TopLevel, E> {
                Ok(TopLevel::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<TopLevel, E> {
                Ok(TopLevel::Other)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<TopLevel, E> {
                Ok(TopLevel::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<TopLevel, E> {
                Ok(TopLevel::Other)
            }
        }
        deserializer.deserialize_any(Top)
    }
}

fn one<H: HeaderSource + ?Sized>(
    headers: &H,
    header: MirroredHeader,
) -> Result<Option<&[u8]>, McpError> {
    headers::single(header, headers.values(header.name()))
}

/// Steps 5–11 for a request (`envelope.id` is present), on a server offering every feature.
///
/// # Errors
/// The first failing step's error, as in the module table.
pub fn admit<H: HeaderSource + ?Sized>(
    headers: &H,
    envelope: Envelope,
) -> Result<Admitted, McpError> {
    admit_offering(headers, envelope, |_| true)
}

/// [`admit`] on a server offering the features `offers` accepts: at step 10 the method of a
/// feature it does not offer is unknown (-32601), before its `Mcp-Name` is looked at.
///
/// # Errors
/// The first failing step's error, as in the module table.
pub(crate) fn admit_offering<H: HeaderSource + ?Sized>(
    headers: &H,
    envelope: Envelope,
    offers: impl Fn(Feature) -> bool,
) -> Result<Admitted, McpError> {
    let Envelope { id, method, params } = envelope;
    let id = id.unwrap_or(Value::Null);
    // 5. A 2025-era request is told which revisions this server speaks, whatever else is
    // wrong with its headers (a repeated version header included: the first one is read).
    let first_version = headers
        .values(MirroredHeader::ProtocolVersion.name())
        .next()
        .and_then(|raw| headers::decode_value(MirroredHeader::ProtocolVersion, raw).ok());
    if let Some(error) = session_era_error(&method, params.as_ref(), first_version.as_deref()) {
        return Err(error);
    }
    // 5. MCP-Protocol-Version present.
    let header_version = header_version(headers)?;
    // 6. Mcp-Method present and equal to the body method.
    check_method(headers, &method)?;
    // 7. Required _meta.
    if params.as_ref().is_some_and(|p| !p.is_object()) {
        return Err(McpError::invalid_params("params must be an object"));
    }
    let meta = RequestMeta::parse(params.as_ref())?;
    // 8–9. Header version equals the body version, and is supported.
    check_version(&header_version, &meta)?;
    // 10. Known method (of a feature the server offers).
    let Some(method) = Method::parse(&method).filter(|m| m.feature().is_none_or(&offers)) else {
        return Err(if method == METHOD_INITIALIZE {
            McpError::InitializeNotServed
        } else {
            McpError::MethodNotFound
        });
    };
    // 11. Mcp-Name.
    check_name(headers, headers::name_rule(method, params.as_ref()))?;
    Ok(Admitted {
        id,
        method,
        params: params.unwrap_or(Value::Null),
        meta,
    })
}

/// Step 5's header: `MCP-Protocol-Version` present, once, and decodable.
fn header_version<H: HeaderSource + ?Sized>(headers: &H) -> Result<Cow<'_, str>, McpError> {
    let raw = one(headers, MirroredHeader::ProtocolVersion)?.ok_or(McpError::HeaderMismatch(
        "Missing MCP-Protocol-Version header",
    ))?;
    headers::decode_value(MirroredHeader::ProtocolVersion, raw)
}

/// Step 6: `Mcp-Method` present, once, and equal to the body's `method`.
fn check_method<H: HeaderSource + ?Sized>(headers: &H, method: &str) -> Result<(), McpError> {
    headers::check_mirrored(
        MirroredHeader::Method,
        one(headers, MirroredHeader::Method)?,
        Some(method),
    )
}

/// Steps 8–9: the header's version equals the `_meta` one, which this server supports.
fn check_version(header_version: &str, meta: &RequestMeta) -> Result<(), McpError> {
    if header_version != meta.protocol_version {
        return Err(McpError::HeaderMismatch(
            "MCP-Protocol-Version header does not match the request _meta protocolVersion",
        ));
    }
    if !SUPPORTED_VERSIONS.contains(&meta.protocol_version.as_str()) {
        return Err(McpError::UnsupportedVersion {
            requested: meta.protocol_version.clone(),
        });
    }
    Ok(())
}

/// Step 11: `Mcp-Name` as `rule` asks.
fn check_name<H: HeaderSource + ?Sized>(headers: &H, rule: NameRule<'_>) -> Result<(), McpError> {
    headers::check_name(rule, one(headers, MirroredHeader::Name)?)
}

/// A hot request (`tasks/get`, `tasks/cancel`, `tools/call`) that passed steps 3–11, read by
/// [`crate::borrowed`] without a [`Value`] tree of its params.
#[derive(Debug)]
pub(crate) struct TypedAdmitted<'a> {
    /// The request id (a string or an integer).
    pub(crate) id: Value,
    /// The method.
    pub(crate) method: Method,
    /// The members of the params its planning reads.
    pub(crate) params: borrowed::Params<'a>,
    /// The validated request `_meta`.
    pub(crate) meta: RequestMeta,
}

/// Steps 3–11 by the typed read: `Some` only when `body` is a hot request that the typed read
/// accepts and that passes every step, with what [`parse_message`] and [`admit`] give for it;
/// `None` otherwise, and those two then decide (and answer any error).
///
/// Its method is a request's (step 4) of no optional feature (step 10); a `_meta` with a
/// protocol version is neither a 2025-era request nor routed to a 2025 session (step 5,
/// [`crate::sessions::route`]); its params are an object with a `_meta` object (step 7).
pub(crate) fn admit_typed<'a, H: HeaderSource + ?Sized>(
    headers: &H,
    body: &'a [u8],
) -> Option<TypedAdmitted<'a>> {
    let borrowed::Typed {
        id,
        method,
        params,
        meta,
    } = borrowed::read(body)?;
    let header_version = header_version(headers).ok()?;
    check_method(headers, method.as_str()).ok()?;
    check_version(&header_version, &meta).ok()?;
    let name = match method.name_field() {
        Some("taskId") => params.task_id.as_deref(),
        _ => params.name.as_deref(),
    };
    check_name(headers, NameRule::Compare(name?)).ok()?;
    Some(TypedAdmitted {
        id,
        method,
        params,
        meta,
    })
}
