//! A JSON object kept as its compact text: how a task holds its stored `result`.
//!
//! A small result such as `{"content":[{"type":"text","text":"Completed"}]}` is 88 bytes as
//! text but about 1 350 bytes of heap as a [`serde_json::Value`] tree (every object is a
//! `BTreeMap` whose leaf node has room for eleven entries). A stored task keeps its result for
//! its whole time to live and is read far more often than it is examined, so the task keeps the
//! text and a projection writes it out unchanged; the rare reader that looks inside
//! ([`RawObject::to_object`]) parses it.
//!
//! The text is what `serde_json` writes for the object: compact, keys in sorted order (the
//! workspace does not enable `preserve_order`). So the storage form of a task is byte for byte
//! what it was when the result was a [`JsonObject`], and two equal objects have equal text.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::JsonObject;

/// The deepest nesting of arrays and objects a stored result may have, the result object itself
/// counting as 1: the stored task, and every response that carries the result (inside the
/// JSON-RPC envelope and its `result`), then stay within the 128 levels that JSON parsers such as
/// `serde_json` accept, so a stored task can always be read back. A worker whose result is
/// deeper fails the task instead (-32603).
pub const MAX_RESULT_DEPTH: usize = 120;

/// A JSON object held as its compact serialized text (whose limits [`MAX_RESULT_DEPTH`] gives).
///
/// Serializes as the object itself, the text written unchanged, with `serde_json` (the only
/// format this project writes; another serializer sees `serde_json`'s raw-value wrapper, so
/// convert with [`RawObject::to_object`] first). Deserializes from any JSON object, which it
/// re-serializes compactly, so it works inside `#[serde(flatten)]` and internally tagged enums
/// as well.
#[derive(Clone)]
pub struct RawObject(Box<RawValue>);

impl RawObject {
    /// The object's text, e.g. `{"content":[]}`.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The object, parsed. Empty for an object nested deeper than the parser's 128 levels,
    /// which a stored result never is ([`MAX_RESULT_DEPTH`]).
    pub fn to_object(&self) -> JsonObject {
        match crate::json::parse(self.0.get().as_bytes()) {
            Ok(serde_json::Value::Object(object)) => object,
            _ => JsonObject::new(),
        }
    }

    /// Whether the object has `"isError": true` (a tool error in a `CallToolResult`), read
    /// without building the object.
    pub fn is_error(&self) -> bool {
        #[derive(Deserialize)]
        struct Flag {
            #[serde(rename = "isError", default)]
            is_error: Option<serde_json::Value>,
        }
        serde_json::from_str::<Flag>(self.0.get())
            .is_ok_and(|flag| flag.is_error == Some(serde_json::Value::Bool(true)))
    }
}

impl From<&JsonObject> for RawObject {
    fn from(object: &JsonObject) -> Self {
        // Writing a map with string keys into a string cannot fail; were it to, the object
        // would read as empty rather than take the process down.
        RawObject(serde_json::value::to_raw_value(object).unwrap_or_else(|_| empty()))
    }
}

impl From<JsonObject> for RawObject {
    fn from(object: JsonObject) -> Self {
        RawObject::from(&object)
    }
}

fn empty() -> Box<RawValue> {
    RawValue::from_string(String::from("{}")).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

impl PartialEq for RawObject {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for RawObject {}

impl fmt::Debug for RawObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RawObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Member names are plain, whatever serde_json features the build has: a stored result
        // with a marker name is refused (the task's row is then unreadable, not misread).
        crate::json::object(deserializer).map(RawObject::from)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: serde_json::Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn keeps_the_compact_sorted_text_and_writes_it_unchanged() {
        let raw = RawObject::from(object(json!({"z": 1, "a": [true, null], "m": {"k": "v"}})));
        assert_eq!(raw.as_str(), r#"{"a":[true,null],"m":{"k":"v"},"z":1}"#);
        assert_eq!(
            serde_json::to_string(&json!({"result": raw})).unwrap(),
            r#"{"result":{"a":[true,null],"m":{"k":"v"},"z":1}}"#
        );
    }

    #[test]
    fn reads_any_object_back_in_the_same_form() {
        let raw: RawObject = serde_json::from_str(r#"{ "b" : 2 , "a" : 1.5 }"#).unwrap();
        assert_eq!(raw.as_str(), r#"{"a":1.5,"b":2}"#);
        assert_eq!(raw.to_object(), object(json!({"a": 1.5, "b": 2})));
        assert!(serde_json::from_str::<RawObject>("[1]").is_err());
        assert!(serde_json::from_str::<RawObject>("null").is_err());
    }

    #[test]
    fn reads_through_a_buffered_deserializer() {
        #[derive(Deserialize)]
        #[serde(tag = "status")]
        enum Tagged {
            #[serde(rename = "done")]
            Done { result: RawObject },
        }
        let Tagged::Done { result } =
            serde_json::from_str(r#"{"result":{"x":[1,2]},"status":"done"}"#).unwrap();
        assert_eq!(result.as_str(), r#"{"x":[1,2]}"#);
    }

    #[test]
    fn tells_a_tool_error() {
        assert!(RawObject::from(object(json!({"isError": true, "content": []}))).is_error());
        assert!(!RawObject::from(object(json!({"isError": false}))).is_error());
        assert!(!RawObject::from(object(json!({"isError": "true"}))).is_error());
        assert!(!RawObject::from(object(json!({"content": []}))).is_error());
    }

    #[test]
    fn a_result_at_the_depth_limit_reads_back_inside_a_response() {
        let mut deep = json!(1);
        for _ in 0..MAX_RESULT_DEPTH - 1 {
            deep = json!([deep]);
        }
        let deep = object(json!({ "deep": deep }));
        assert_eq!(crate::json::check_object(&deep, MAX_RESULT_DEPTH), Ok(()));
        assert!(crate::json::check_object(&deep, MAX_RESULT_DEPTH - 1).is_err());
        let raw = RawObject::from(&deep);
        assert_eq!(raw.to_object(), deep);
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": {"result": raw}}).to_string();
        assert!(serde_json::from_str::<serde_json::Value>(&response).is_ok());
    }

    #[test]
    fn equal_objects_have_equal_text() {
        let a = RawObject::from(object(json!({"b": 1, "a": 2})));
        let b: RawObject = serde_json::from_str(r#"{"a":2,"b":1}"#).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_object(), object(json!({"a": 2, "b": 1})));
    }
}
