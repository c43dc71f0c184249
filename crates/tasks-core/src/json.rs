//! Reading JSON from bytes this process did not write: every member name is a plain name.
//!
//! `serde_json`'s [`Value`] gives two member names a meaning of their own when the build enables
//! one of its features: with `raw_value`, an object whose first member is named
//! `$serde_json::private::RawValue` reads as the JSON text held in that member's string (parsed
//! anew, so it also escapes the parser's 128-level nesting limit); with `arbitrary_precision`,
//! `$serde_json::private::Number` reads as a number. Cargo turns a feature on for the whole
//! build when any crate asks for it (axum's `json` feature asks for `raw_value`), so a library
//! cannot rely on it being off. Through it a client could spell a `taskId` as an object, nest a
//! body 2 000 levels deep in 40 kB, or get values stored that the same parser cannot read back.
//!
//! So this crate reads untrusted bytes with [`Plain`]: it builds the same [`Value`] as
//! `serde_json` would without those features, with every member name a plain string, and
//! **refuses** a body that has a member named after a marker ([`MARKERS`]) at any depth, written
//! with escapes or not. Refused, not kept as an ordinary member: a `Value` holding such a name
//! would be read specially by the next `serde_json::from_value` or `from_str` anywhere in the
//! process (a tool's typed arguments, a store reading its row back), so no such name enters the
//! process at all. The HTTP adapter answers such a body -32600 `"A member name is reserved:
//! $serde_json::private::…"` (HTTP 400), see [`crate::plan::parse_message`].
//!
//! What the process writes itself is checked before it is kept: [`check_text`] tells whether a
//! text reads back (JSON, nesting within the parser's limit, no marker names) and
//! [`check_value`] whether a value will, from its depth and names, before it is written.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::JsonObject;

/// `serde_json`'s private marker names (`raw_value`'s and `arbitrary_precision`'s): a member
/// with one of these names is refused wherever it appears.
pub const MARKERS: [&str; 2] = [
    "$serde_json::private::RawValue",
    "$serde_json::private::Number",
];

/// The message of the error a marker name raises while reading (see [`is_marker_error`]).
pub const MARKER_MESSAGE: &str = "A member name is reserved: $serde_json::private::...";

/// The deepest nesting of arrays and objects `serde_json` reads (its recursion limit): a text
/// nested deeper is refused by the parser (-32700 for a body).
pub const MAX_PARSE_DEPTH: usize = 127;

/// Whether `name` is one of [`MARKERS`] (after unescaping: compare the decoded name).
pub fn is_marker(name: &str) -> bool {
    name.starts_with("$serde_json::private::") && MARKERS.contains(&name)
}

/// Whether a reading error is the refusal of a marker name (a body that is otherwise valid
/// JSON), rather than a syntax error or the end of the input. Only meaningful for errors of
/// this module's readers, which raise no other data error.
pub fn is_marker_error(error: &serde_json::Error) -> bool {
    error.is_data() && error.to_string().starts_with(MARKER_MESSAGE)
}

fn marker_error<E: de::Error>() -> E {
    E::custom(MARKER_MESSAGE)
}

/// Parses `bytes` as one JSON value with plain member names (the module docs).
///
/// # Errors
/// `serde_json`'s error: a syntax error, nesting past [`MAX_PARSE_DEPTH`], invalid UTF-8, a lone
/// surrogate escape, trailing characters, or a marker name ([`is_marker_error`]).
pub fn parse(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice::<Plain>(bytes).map(|plain| plain.0)
}

/// Parses `bytes` as a `T`, through a plain [`Value`] ([`parse`]): for readers of whole
/// messages (a client reading a server's answers), where `T`'s own `Value` members would
/// otherwise be read by `serde_json`'s rules.
///
/// # Errors
/// [`parse`]'s, or `serde_json`'s error for a value that is not a `T`.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    serde_json::from_value(parse(bytes)?)
}

/// Whether `text` reads back: one JSON value, nested at most [`MAX_PARSE_DEPTH`] deep, with no
/// marker name. Reads without building anything (a parse that keeps nothing), so a store can
/// check what it is about to commit.
///
/// # Errors
/// `serde_json`'s error for the first problem found.
pub fn check_text(text: &str) -> Result<(), serde_json::Error> {
    serde_json::from_str::<Checked>(text).map(|_| ())
}

/// Why a value built in this process would not read back once written ([`check_value`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unstorable {
    /// Arrays and objects nest deeper than allowed (the value itself counting as 1).
    #[error("the value nests {depth} levels deep, more than the {max} allowed")]
    TooDeep {
        /// The value's depth (at least `max + 1`).
        depth: usize,
        /// The deepest allowed.
        max: usize,
    },
    /// A member is named after one of `serde_json`'s markers ([`MARKERS`]).
    #[error("a member name is reserved: {0}")]
    ReservedName(&'static str),
}

/// Checks that `value` nests at most `max_depth` deep (a scalar is 0 deep, `{}` and `[]` 1)
/// and has no member named after a marker: what a value needs to read back once written at
/// the top of a stored text.
///
/// # Errors
/// [`Unstorable`]: the first reserved name found, else the depth when it is too deep.
pub fn check_value(value: &Value, max_depth: usize) -> Result<(), Unstorable> {
    walk(vec![(value, 1)], 0, max_depth)
}

/// [`check_value`] for an object (which counts as 1 deep).
///
/// # Errors
/// As [`check_value`].
pub fn check_object(object: &JsonObject, max_depth: usize) -> Result<(), Unstorable> {
    check_names(object)?;
    walk(
        object.values().map(|item| (item, 2)).collect(),
        1,
        max_depth,
    )
}

fn check_names(object: &JsonObject) -> Result<(), Unstorable> {
    match object
        .keys()
        .find_map(|name| MARKERS.iter().find(|m| **m == name))
    {
        Some(marker) => Err(Unstorable::ReservedName(marker)),
        None => Ok(()),
    }
}

/// Walks `pending` (values with their depth), names first, then the deepest nesting found
/// against `max_depth`.
fn walk(
    mut pending: Vec<(&Value, usize)>,
    mut deepest: usize,
    max_depth: usize,
) -> Result<(), Unstorable> {
    while let Some((value, depth)) = pending.pop() {
        match value {
            Value::Array(items) => {
                deepest = deepest.max(depth);
                pending.extend(items.iter().map(|item| (item, depth + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(depth);
                check_names(map)?;
                pending.extend(map.values().map(|item| (item, depth + 1)));
            }
            _ => {}
        }
    }
    if deepest > max_depth {
        return Err(Unstorable::TooDeep {
            depth: deepest,
            max: max_depth,
        });
    }
    Ok(())
}

/// A [`Value`] read with plain member names, refusing marker names (the module docs). Use it
/// wherever a `Value` is read from untrusted bytes: `serde_json::from_slice::<Plain>`, a
/// visitor's `next_value::<Plain>()`, or `#[serde(deserialize_with = "json::object")]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Plain(pub Value);

impl<'de> Deserialize<'de> for Plain {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(PlainVisitor).map(Plain)
    }
}

/// Reads a [`JsonObject`] with plain member names (for `#[serde(deserialize_with)]`).
///
/// # Errors
/// The deserializer's error for anything but an object, or for a marker name.
pub fn object<'de, D: Deserializer<'de>>(deserializer: D) -> Result<JsonObject, D::Error> {
    match Plain::deserialize(deserializer)?.0 {
        Value::Object(object) => Ok(object),
        other => Err(de::Error::invalid_type(
            unexpected(&other),
            &"a JSON object",
        )),
    }
}

/// [`object`] for an optional member (`#[serde(default, deserialize_with = "json::object_opt")]`).
///
/// # Errors
/// As [`object`]; `null` reads as `None`.
pub fn object_opt<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<JsonObject>, D::Error> {
    match Plain::deserialize(deserializer)?.0 {
        Value::Null => Ok(None),
        Value::Object(object) => Ok(Some(object)),
        other => Err(de::Error::invalid_type(
            unexpected(&other),
            &"a JSON object",
        )),
    }
}

/// A [`Value`] with plain member names (for `#[serde(deserialize_with)]`).
///
/// # Errors
/// The deserializer's error for a marker name.
pub fn value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
    Plain::deserialize(deserializer).map(|plain| plain.0)
}

fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

/// Builds a [`Value`] as `serde_json`'s own visitor does, but reads member names as plain
/// strings and refuses the markers.
struct PlainVisitor;

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }
    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Plain::deserialize(deserializer).map(|plain| plain.0)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(Plain(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(name) = map.next_key::<Name>()? {
            let Plain(item) = map.next_value()?;
            object.insert(name.0, item);
        }
        Ok(Value::Object(object))
    }
}

/// A member name, refused when it is a marker.
struct Name(String);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Name;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Name, E> {
                if is_marker(name) {
                    return Err(marker_error());
                }
                Ok(Name(name.to_owned()))
            }
            fn visit_string<E: de::Error>(self, name: String) -> Result<Name, E> {
                if is_marker(&name) {
                    return Err(marker_error());
                }
                Ok(Name(name))
            }
        }
        deserializer.deserialize_string(V)
    }
}

/// Any JSON value, visited as [`Plain`] visits it (so the same texts are accepted, marker names
/// refused) and dropped without being built.
#[derive(Debug, Clone, Copy)]
pub struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Checked)
    }
}

/// A member name visited without being kept, refused when it is a marker.
struct CheckedName;

impl<'de> Deserialize<'de> for CheckedName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(CheckedName)
    }
}

impl Visitor<'_> for CheckedName {
    type Value = CheckedName;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E: de::Error>(self, name: &str) -> Result<CheckedName, E> {
        if is_marker(name) {
            return Err(marker_error());
        }
        Ok(CheckedName)
    }
}

impl<'de> Visitor<'de> for Checked {
    type Value = Checked;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_key::<CheckedName>()?.is_some() {
            map.next_value::<Checked>()?;
        }
        Ok(Checked)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn reads_what_serde_json_reads_without_its_features() {
        let text = r#"{"b":[1,-2,3.5,"x",null,true],"a":{"c":{}},"\u0041":"\ud83d\ude00"}"#;
        assert_eq!(
            parse(text.as_bytes()).unwrap(),
            json!({"a": {"c": {}}, "b": [1, -2, 3.5, "x", null, true], "A": "😀"})
        );
        assert_eq!(parse(br#"{"k":1,"k":2}"#).unwrap(), json!({"k": 2}));
        assert!(parse(b"[1,]").is_err());
        assert!(parse(br#""\ud800""#).is_err());
        assert!(!is_marker_error(&parse(b"[1,]").unwrap_err()));
    }

    #[test]
    fn refuses_marker_names_at_any_depth_and_however_written() {
        for text in [
            r#"{"$serde_json::private::RawValue":"7"}"#,
            r#"{"a":[{"x":1,"$serde_json::private::RawValue":"7"}]}"#,
            r#"{"$serde_json::private::Number":"1e999"}"#,
            r#"{"\u0024serde_json::private::RawValu\u0065":"[]"}"#,
        ] {
            let error = parse(text.as_bytes()).unwrap_err();
            assert!(is_marker_error(&error), "{text}: {error}");
            let error = check_text(text).unwrap_err();
            assert!(is_marker_error(&error), "{text}: {error}");
        }
        // A marker name as a string value, or a name that only starts like one, is plain.
        let text = r#"{"v":"$serde_json::private::RawValue","$serde_json::private::X":1}"#;
        assert_eq!(
            parse(text.as_bytes()).unwrap(),
            json!({"v": "$serde_json::private::RawValue", "$serde_json::private::X": 1})
        );
        assert!(check_text(text).is_ok());
    }

    #[test]
    fn nesting_stops_at_the_parsers_limit() {
        assert!(parse(nested(MAX_PARSE_DEPTH).as_bytes()).is_ok());
        assert!(parse(nested(MAX_PARSE_DEPTH + 1).as_bytes()).is_err());
        assert!(check_text(&nested(MAX_PARSE_DEPTH)).is_ok());
        assert!(check_text(&nested(MAX_PARSE_DEPTH + 1)).is_err());
        // The same limit as serde_json's own Value.
        assert!(serde_json::from_str::<Value>(&nested(MAX_PARSE_DEPTH)).is_ok());
        assert!(serde_json::from_str::<Value>(&nested(MAX_PARSE_DEPTH + 1)).is_err());
    }

    #[test]
    fn checks_values_before_they_are_written() {
        assert_eq!(check_value(&json!(1), 0), Ok(()));
        assert_eq!(check_value(&json!({"a": [[]]}), 3), Ok(()));
        assert_eq!(
            check_value(&json!({"a": [[]]}), 2),
            Err(Unstorable::TooDeep { depth: 3, max: 2 })
        );
        let marker = json!({"a": [{"$serde_json::private::RawValue": "1"}]});
        assert_eq!(
            check_value(&marker, 10),
            Err(Unstorable::ReservedName("$serde_json::private::RawValue"))
        );
        let object = json!({"a": [[]]}).as_object().cloned().unwrap();
        assert_eq!(check_object(&object, 3), Ok(()));
        assert_eq!(
            check_object(&object, 2),
            Err(Unstorable::TooDeep { depth: 3, max: 2 })
        );
        let deep: Value = parse(nested(MAX_PARSE_DEPTH).as_bytes()).unwrap();
        assert!(check_value(&deep, MAX_PARSE_DEPTH).is_ok());
        assert!(check_text(&deep.to_string()).is_ok());
    }

    #[test]
    fn reads_typed_messages_through_plain_values() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Message {
            id: u32,
            #[serde(deserialize_with = "object")]
            result: JsonObject,
            #[serde(default, deserialize_with = "object_opt")]
            meta: Option<JsonObject>,
        }
        let read: Message = from_slice(br#"{"id":1,"result":{"x":[1]}}"#).unwrap();
        assert_eq!(read.result, json!({"x": [1]}).as_object().cloned().unwrap());
        assert_eq!(read.meta, None);
        let read: Message = serde_json::from_str(r#"{"id":1,"result":{},"meta":{"k":2}}"#).unwrap();
        assert_eq!(read.meta, json!({"k": 2}).as_object().cloned());
        let error = serde_json::from_str::<Message>(
            r#"{"id":1,"result":{"$serde_json::private::RawValue":"{}"}}"#,
        )
        .unwrap_err();
        assert!(is_marker_error(&error), "{error}");
        assert!(from_slice::<Message>(br#"{"id":1,"result":[]}"#).is_err());
    }
}
