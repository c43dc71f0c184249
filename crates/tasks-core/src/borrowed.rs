//! The typed, borrowed read of the hot requests: `tasks/get`, `tasks/cancel` and `tools/call`.
//!
//! [`crate::admission::parse_message`] builds every member of the body, `params` included, as
//! a [`Value`] tree that admission and the planner then walk. For the requests served most, this
//! read takes the body straight into typed fields instead: `taskId`, `name` and the `_meta`
//! strings borrowed from the body (owned only when written with escapes), the client
//! capabilities and a call's `arguments` as values (the arguments move on to the tool
//! uncopied). Every other member is parsed and dropped without being built.
//!
//! It only ever accepts: any body it does not read as an ordinary, well-formed request of one of
//! these methods (another method, a notification, a missing or mistyped member, a `_meta`
//! `logLevel` or `progressToken`, an MRTR retry's `inputResponses` or `requestState`, a member
//! named after one of `serde_json`'s private markers, anything that is not JSON) is declined
//! (`None`), and the `Value` path decides it as before. So it answers no error of its own, and
//! what it accepts is what the `Value` path accepts: the same texts are JSON (every value is read
//! or skipped as [`json::Plain`] reads it: numbers in range, strings valid UTF-8 without lone
//! surrogates, nesting within `serde_json`'s limit), a name written with escapes is the same
//! name, and a repeated member keeps its last value, as a map does. The property tests in
//! `tests/reducer_props/typed_props.rs` hold the planner built on it to the `Value` path.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::json::{self, Checked, Plain};
use crate::method::Method;
use crate::negotiation::RequestMeta;
use crate::protocol::{
    META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROGRESS_TOKEN, META_PROTOCOL_VERSION,
};
use crate::trace::{TraceParent, META_TRACEPARENT};

/// A hot request as read from its body (steps 3 and 7's reading; the checks are admission's).
#[derive(Debug)]
pub(crate) struct Typed<'a> {
    /// The request id: a string or an integer.
    pub(crate) id: Value,
    /// `tasks/get`, `tasks/cancel` or `tools/call`.
    pub(crate) method: Method,
    /// The params object's members this read keeps.
    pub(crate) params: Params<'a>,
    /// The request `_meta`, with both required members.
    pub(crate) meta: RequestMeta,
}

/// The members of a hot request's params that its planning reads.
#[derive(Debug, Default)]
pub(crate) struct Params<'a> {
    /// `taskId`, when a string.
    pub(crate) task_id: Option<Cow<'a, str>>,
    /// `name`, when a string.
    pub(crate) name: Option<Cow<'a, str>>,
    /// `arguments`, of any type.
    pub(crate) arguments: Option<Value>,
    /// `_meta`.
    meta: Option<Meta<'a>>,
}

/// The members of a request `_meta` that [`RequestMeta`] keeps.
#[derive(Debug, Default)]
struct Meta<'a> {
    protocol_version: Option<Cow<'a, str>>,
    client_capabilities: Option<Value>,
    trace_parent: Option<Cow<'a, str>>,
}

/// Reads `body` as a hot request; `None` declines it (see the module docs).
pub(crate) fn read(body: &[u8]) -> Option<Typed<'_>> {
    let top: Top<'_> = serde_json::from_slice(body).ok()?;
    if top.jsonrpc.as_deref() != Some("2.0") {
        return None;
    }
    let id = top.id.filter(|id| match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    })?;
    let mut params = top.params?;
    let meta = params.meta.take()?;
    let client_capabilities = match meta.client_capabilities? {
        Value::Object(capabilities) => capabilities,
        _ => return None,
    };
    Some(Typed {
        id,
        method: top.method?,
        params,
        meta: RequestMeta {
            protocol_version: meta.protocol_version?.into_owned(),
            client_capabilities,
            log_level: None,
            progress_token: None,
            trace_parent: meta.trace_parent.as_deref().and_then(TraceParent::parse),
        },
    })
}

/// The methods this read takes; any other is declined as soon as it is read.
fn hot_method(name: &str) -> Option<Method> {
    Method::parse(name).filter(|m| {
        matches!(
            m,
            Method::TasksGet | Method::TasksCancel | Method::ToolsCall
        )
    })
}

/// The error that declines a body (its text is never shown).
fn decline<E: de::Error>() -> E {
    E::custom("declined")
}

/// The top-level object's members this read keeps; each is the member's last value.
#[derive(Default)]
struct Top<'a> {
    jsonrpc: Option<Cow<'a, str>>,
    id: Option<Value>,
    method: Option<Method>,
    params: Option<Params<'a>>,
}

impl<'de> Deserialize<'de> for Top<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Top<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC request object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top<'de>, A::Error> {
                let mut top = Top::default();
                while let Some(name) =
                    map.next_key_seed(Names(&["jsonrpc", "id", "method", "params"]))?
                {
                    match name {
                        Some(0) => top.jsonrpc = Some(map.next_value::<Str<'de>>()?.0),
                        Some(1) => top.id = Some(map.next_value::<Plain>()?.0),
                        Some(2) => {
                            let method = map.next_value::<Str<'de>>()?.0;
                            top.method = Some(hot_method(&method).ok_or_else(decline)?);
                        }
                        Some(3) => top.params = Some(map.next_value()?),
                        _ => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                Ok(top)
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for Params<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Params<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a params object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params<'de>, A::Error> {
                const NAMES: &[&str] = &[
                    "taskId",
                    "name",
                    "arguments",
                    "_meta",
                    "inputResponses",
                    "requestState",
                ];
                let mut params = Params::default();
                while let Some(name) = map.next_key_seed(Names(NAMES))? {
                    match name {
                        Some(0) => params.task_id = Some(map.next_value::<Str<'de>>()?.0),
                        Some(1) => params.name = Some(map.next_value::<Str<'de>>()?.0),
                        Some(2) => params.arguments = Some(map.next_value::<Plain>()?.0),
                        Some(3) => params.meta = Some(map.next_value()?),
                        Some(_) => return Err(decline()),
                        None => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                Ok(params)
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for Meta<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Meta<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a _meta object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Meta<'de>, A::Error> {
                const NAMES: &[&str] = &[
                    META_PROTOCOL_VERSION,
                    META_CLIENT_CAPABILITIES,
                    META_TRACEPARENT,
                    META_LOG_LEVEL,
                    META_PROGRESS_TOKEN,
                ];
                let mut meta = Meta::default();
                while let Some(name) = map.next_key_seed(Names(NAMES))? {
                    match name {
                        Some(0) => meta.protocol_version = Some(map.next_value::<Str<'de>>()?.0),
                        Some(1) => meta.client_capabilities = Some(map.next_value::<Plain>()?.0),
                        Some(2) => meta.trace_parent = Some(map.next_value::<Str<'de>>()?.0),
                        Some(_) => return Err(decline()),
                        None => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                Ok(meta)
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// A member name, as its index in the names given, `None` for another name. A name that is
/// one of `serde_json`'s private markers declines the body (the `Value` path refuses it): [`Value`] treats an object whose
/// first member has one specially.
struct Names(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Names {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for Names {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E: de::Error>(self, name: &str) -> Result<Option<usize>, E> {
        if json::is_marker(name) {
            return Err(decline());
        }
        Ok(self.0.iter().position(|known| *known == name))
    }
}

/// A string, borrowed from the body unless written with escapes.
struct Str<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(text)))
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(text.to_owned())))
            }
            fn visit_string<E: de::Error>(self, text: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(text)))
            }
        }
        deserializer.deserialize_str(V)
    }
}
