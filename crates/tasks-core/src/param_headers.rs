//! Tool arguments mirrored in `Mcp-Param-<Name>` headers (`x-mcp-header`, SEP-2243; MCP
//! 2026-07-28 streamable-http "Custom Headers from Tool Parameters" and "Server Validation",
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>;
//! tools "x-mcp-header", <https://modelcontextprotocol.io/specification/2026-07-28/server/tools>).
//!
//! A tool's `inputSchema` may annotate a top-level property with `"x-mcp-header": "<Name>"`; a
//! client then sends the argument's value in the `Mcp-Param-<Name>` header as well, so that
//! intermediaries can route on it without parsing the body. The server checks that the two
//! agree:
//!
//! * a non-null argument needs its header, else -32020 (HTTP 400);
//! * the header is trimmed, checked for visible ASCII, and `=?base64?…?=` is decoded strictly
//!   (as for `Mcp-Name`, [`crate::headers::decode_value`]); failures are -32020;
//! * strings compare exactly, integers numerically and exactly (`42.0` equals `42`; no
//!   rounding through floating point), booleans as `true`/`false`; a mismatch is -32020;
//! * an absent or `null` argument expects no header (one that is sent anyway is ignored), and
//!   so does an argument that is not of the declared type (argument validation answers it).
//!
//! [`param_headers`] reads and validates the annotations once, when a tool is registered: a
//! schema that breaks the annotation rules would make clients drop the tool, so it is refused.

use serde_json::Value;

use crate::error::McpError;
use crate::headers::{decode_value, MirroredHeader};
use crate::JsonObject;

/// The annotation keyword.
pub(crate) const X_MCP_HEADER: &str = "x-mcp-header";

/// The JSON type of an annotated property; only these three may be mirrored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// `"type": "string"`
    String,
    /// `"type": "integer"`
    Integer,
    /// `"type": "boolean"`
    Boolean,
}

/// One annotated property: argument `property` travels in header `Mcp-Param-<header>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The argument (top-level property) name.
    pub property: String,
    /// The full header name, `Mcp-Param-<Name>`.
    pub header: String,
    /// The property's declared type.
    pub kind: ParamKind,
}

/// Why a schema's `x-mcp-header` annotations cannot be published.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidAnnotation {
    /// The annotation is not a non-empty RFC 9110 token.
    #[error("x-mcp-header of property {0:?} must be a non-empty header token")]
    NotAToken(String),
    /// The property's `type` is not `string`, `integer` or `boolean`.
    #[error("x-mcp-header property {0:?} must have type string, integer or boolean")]
    WrongType(String),
    /// Two properties use the same header name (compared case-insensitively).
    #[error("x-mcp-header {0:?} is used by more than one property")]
    Duplicate(String),
    /// The annotation sits somewhere other than directly on a top-level property.
    #[error("x-mcp-header may only annotate top-level properties")]
    Nested,
}

fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Counts `x-mcp-header` annotations in every subschema of `schema`, walking only the
/// keywords that hold subschemas (so a property *named* `x-mcp-header`, or the key inside a
/// `default` or `const` value, is not an annotation).
fn count_annotations(schema: &Value) -> usize {
    let Value::Object(object) = schema else {
        return 0;
    };
    let mut count = usize::from(object.contains_key(X_MCP_HEADER));
    for (keyword, value) in object {
        count += match keyword.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                value
                    .as_object()
                    .map_or(0, |map| map.values().map(count_annotations).sum())
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => value
                .as_array()
                .map_or(0, |items| items.iter().map(count_annotations).sum()),
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "additionalItems" => match value {
                Value::Array(items) => items.iter().map(count_annotations).sum(),
                other => count_annotations(other),
            },
            _ => 0,
        };
    }
    count
}

/// The mirrored kind of a property's `type`: one of `string`, `integer`, `boolean`, alone or
/// with `"null"` (a null argument sends no header).
fn kind_of(definition: &Value) -> Option<ParamKind> {
    let kind = |name: &str| match name {
        "string" => Some(ParamKind::String),
        "integer" => Some(ParamKind::Integer),
        "boolean" => Some(ParamKind::Boolean),
        _ => None,
    };
    match definition.get("type")? {
        Value::String(name) => kind(name),
        Value::Array(names) => {
            let mut kinds = names.iter().filter(|n| n.as_str() != Some("null"));
            let only = kinds.next()?.as_str().and_then(kind);
            if kinds.next().is_some() {
                None
            } else {
                only
            }
        }
        _ => None,
    }
}

/// Reads the `x-mcp-header` annotations of an `inputSchema`, in property order.
///
/// # Errors
/// [`InvalidAnnotation`] when an annotation is not a token, sits on a property that is not a
/// string, integer or boolean, repeats a header name, or is nested below the top-level
/// `properties`.
pub fn param_headers(schema: &JsonObject) -> Result<Vec<ParamHeader>, InvalidAnnotation> {
    let mut found = Vec::new();
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (property, definition) in properties {
            let Some(annotation) = definition.get(X_MCP_HEADER) else {
                continue;
            };
            let name = annotation
                .as_str()
                .filter(|name| is_token(name))
                .ok_or_else(|| InvalidAnnotation::NotAToken(property.clone()))?;
            let kind = kind_of(definition)
                .ok_or_else(|| InvalidAnnotation::WrongType(property.clone()))?;
            let header = format!("{}{name}", MirroredHeader::Param.name());
            if found
                .iter()
                .any(|p: &ParamHeader| p.header.eq_ignore_ascii_case(&header))
            {
                return Err(InvalidAnnotation::Duplicate(name.to_owned()));
            }
            found.push(ParamHeader {
                property: property.clone(),
                header,
                kind,
            });
        }
    }
    let total = count_annotations(&Value::Object(schema.clone()));
    if total != found.len() {
        return Err(InvalidAnnotation::Nested);
    }
    Ok(found)
}

/// Whether `value` is of the declared kind, and so mirrored in a header (an argument of another
/// type is left to argument validation).
fn mirrored(kind: ParamKind, value: &Value) -> bool {
    match (kind, value) {
        (ParamKind::String, Value::String(_)) | (ParamKind::Boolean, Value::Bool(_)) => true,
        (ParamKind::Integer, Value::Number(number)) => number.is_i64() || number.is_u64(),
        _ => false,
    }
}

/// Whether a decoded header value stands for the mirrored argument `value`.
fn matches(value: &Value, header: &str) -> bool {
    match value {
        Value::String(text) => text == header,
        Value::Bool(flag) => header == if *flag { "true" } else { "false" },
        Value::Number(number) => {
            let body = number
                .as_i64()
                .map(i128::from)
                .or_else(|| number.as_u64().map(i128::from));
            body.is_some() && header_integer(header) == body
        }
        _ => false,
    }
}

/// An integer header value, compared numerically: decimal digits with an optional `-`, or a
/// decimal with only zeros after the point (`42.0`). Exact, without going through `f64`.
fn header_integer(header: &str) -> Option<i128> {
    let (whole, fraction) = match header.split_once('.') {
        Some((whole, fraction)) if !fraction.is_empty() => (whole, fraction),
        Some(_) => return None,
        None => (header, ""),
    };
    if !fraction.bytes().all(|b| b == b'0') {
        return None;
    }
    let digits = whole.strip_prefix('-').unwrap_or(whole);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    whole.parse().ok()
}

/// The `Mcp-Param-*` headers a client sends with `arguments`: `(header name, encoded value)`
/// for every annotated argument of its declared type, in annotation order (strings encoded by
/// [`crate::headers::encode_value`], integers in decimal, booleans as `true`/`false`).
/// [`check_param_headers`] accepts exactly these.
pub fn mirror(params: &[ParamHeader], arguments: &JsonObject) -> Vec<(String, String)> {
    params
        .iter()
        .filter_map(|param| {
            let value = arguments.get(&param.property)?;
            if !mirrored(param.kind, value) {
                return None;
            }
            let text = match value {
                Value::String(text) => {
                    crate::headers::encode_value(MirroredHeader::Param, text)?.into_owned()
                }
                other => other.to_string(),
            };
            Some((param.header.clone(), text))
        })
        .collect()
}

/// Checks every annotated argument against its header.
///
/// `header` returns the single raw value of a header by name (or `None` when absent), or the
/// -32020 error for a repeated header.
///
/// # Errors
/// -32020, HTTP 400, with a fixed message (never the client's value): a missing header for a
/// non-null argument, an invalid or malformed value, a repeated header, or a mismatch.
pub fn check_param_headers<'h>(
    params: &[ParamHeader],
    arguments: &JsonObject,
    header: impl Fn(&str) -> Result<Option<&'h [u8]>, McpError>,
) -> Result<(), McpError> {
    for param in params {
        let value = match arguments.get(&param.property) {
            None | Some(Value::Null) => continue,
            Some(value) => value,
        };
        if !mirrored(param.kind, value) {
            // Not of the declared type: argument validation answers (isError), not the header.
            continue;
        }
        let raw = header(&param.header)?.ok_or_else(|| MirroredHeader::Param.missing())?;
        let decoded = decode_value(MirroredHeader::Param, raw)?;
        if !matches(value, &decoded) {
            return Err(MirroredHeader::Param.mismatch());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    fn region_tool() -> Vec<ParamHeader> {
        param_headers(&schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "note": {"type": "string"},
        }})))
        .unwrap()
    }

    fn check(arguments: Value, headers: &[(&str, &str)]) -> Result<(), i64> {
        let arguments = schema(arguments);
        check_param_headers(&region_tool(), &arguments, |name| {
            let mut values = headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_bytes());
            crate::headers::single(MirroredHeader::Param, &mut values)
        })
        .map_err(|e| e.code())
    }

    #[test]
    fn annotations_are_read_in_order() {
        let params = region_tool();
        let names: Vec<_> = params.iter().map(|p| p.header.as_str()).collect();
        assert_eq!(
            names,
            ["Mcp-Param-Count", "Mcp-Param-Dry", "Mcp-Param-Region"]
        );
        assert_eq!(params[0].kind, ParamKind::Integer);
    }

    #[test]
    fn invalid_annotations_are_refused() {
        let bad = [
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
                InvalidAnnotation::NotAToken("a".into()),
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "My Region"}}}),
                InvalidAnnotation::NotAToken("a".into()),
            ),
            (
                json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
                InvalidAnnotation::WrongType("a".into()),
            ),
            (
                json!({"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}),
                InvalidAnnotation::WrongType("a".into()),
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "F"},
                                   "b": {"type": "string", "x-mcp-header": "f"}}}),
                InvalidAnnotation::Duplicate("f".into()),
            ),
            (
                json!({"properties": {"a": {"type": "array",
                                         "items": {"type": "string", "x-mcp-header": "A"}}}}),
                InvalidAnnotation::Nested,
            ),
            (
                json!({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
                InvalidAnnotation::Nested,
            ),
            (
                json!({"x-mcp-header": "Top", "properties": {}}),
                InvalidAnnotation::Nested,
            ),
            (
                json!({"properties": {"a": {"type": ["string", "integer"], "x-mcp-header": "A"}}}),
                InvalidAnnotation::WrongType("a".into()),
            ),
        ];
        for (schema_value, want) in bad {
            assert_eq!(param_headers(&schema(schema_value)), Err(want));
        }
    }

    #[test]
    fn only_schema_keywords_hold_annotations() {
        let fine = schema(json!({"type": "object", "properties": {
            "x-mcp-header": {"type": "string"},
            "config": {"type": "object", "default": {"x-mcp-header": "NotOne"},
                       "const": {"x-mcp-header": "NorThis"}},
            "zone": {"type": ["string", "null"], "x-mcp-header": "Zone"},
        }}));
        let params = param_headers(&fine).unwrap();
        assert_eq!(params.len(), 1);
        assert_eq!(params[0].header, "Mcp-Param-Zone");
        assert_eq!(params[0].kind, ParamKind::String);
    }

    #[test]
    fn headers_must_match_the_arguments() {
        assert_eq!(
            check(json!({"region": "eu"}), &[("Mcp-Param-Region", " eu ")]),
            Ok(())
        );
        assert_eq!(
            check(
                json!({"region": "Hello"}),
                &[("mcp-param-region", "=?base64?SGVsbG8=?=")]
            ),
            Ok(())
        );
        assert_eq!(
            check(
                json!({"region": "=?base64?SGVsbG8="}),
                &[("Mcp-Param-Region", "=?base64?SGVsbG8=")]
            ),
            Ok(())
        );
        assert_eq!(
            check(
                json!({"count": 42, "dry": false}),
                &[("Mcp-Param-Count", "42.0"), ("Mcp-Param-Dry", "false")]
            ),
            Ok(())
        );
        assert_eq!(
            check(json!({"count": -7}), &[("Mcp-Param-Count", "-7")]),
            Ok(())
        );
        assert_eq!(
            check(
                json!({"count": u64::MAX}),
                &[("Mcp-Param-Count", "18446744073709551615")]
            ),
            Ok(())
        );
        // Arguments of the wrong type are left to argument validation, header or not.
        assert_eq!(
            check(json!({"region": {"a": 1}, "count": "x", "dry": 1}), &[]),
            Ok(())
        );
        assert_eq!(
            check(json!({"region": 5}), &[("Mcp-Param-Region", "x")]),
            Ok(())
        );
        // Absent or null arguments expect no header; an unneeded header is ignored.
        assert_eq!(
            check(json!({"region": null}), &[("Mcp-Param-Count", "1")]),
            Ok(())
        );
        for (arguments, headers) in [
            (json!({"region": "eu"}), vec![]),
            (json!({"region": "eu"}), vec![("Mcp-Param-Region", "us")]),
            (
                json!({"region": "Hello"}),
                vec![("Mcp-Param-Region", "=?base64?SGVsbG8?=")],
            ),
            (
                json!({"region": "Hello"}),
                vec![("Mcp-Param-Region", "=?base64?SGVs!!!bG8=?=")],
            ),
            (
                json!({"region": "eu"}),
                vec![("Mcp-Param-Region", "eu"), ("Mcp-Param-Region", "eu")],
            ),
            (json!({"count": 42}), vec![("Mcp-Param-Count", "43")]),
            (
                json!({"count": 9_007_199_254_740_993_u64}),
                vec![("Mcp-Param-Count", "9007199254740992")],
            ),
            (json!({"count": 100}), vec![("Mcp-Param-Count", "1e2")]),
            (json!({"count": 42}), vec![("Mcp-Param-Count", "+42")]),
            (
                json!({"count": 42}),
                vec![("Mcp-Param-Count", "42.0000000000000001")],
            ),
            (json!({"count": 1}), vec![("Mcp-Param-Count", "1.")]),
            (json!({"dry": true}), vec![("Mcp-Param-Dry", "True")]),
            (json!({"region": "é"}), vec![("Mcp-Param-Region", "é")]),
        ] {
            assert_eq!(
                check(arguments.clone(), &headers),
                Err(-32020),
                "{arguments} {headers:?}"
            );
        }
    }
}
