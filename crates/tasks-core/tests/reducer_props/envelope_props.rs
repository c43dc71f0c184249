//! Step 3 (`tasks_core::plan::parse_message`) reads the top-level object member by member
//! instead of building a map of it. These properties hold it to the parser it replaced, kept
//! here as the reference: the body parsed into a `serde_json::Value`, then the members taken out
//! of its map. Both must give the same message or the same error (with the same echoed id) for
//! well-formed messages, near misses (wrong types, repeated members, missing members), and
//! bodies that are not JSON at all.

use proptest::prelude::*;
use serde_json::{json, Value};
use tasks_core::plan::{parse_message, Message, Response};
use tasks_core::McpError;

/// What step 3 answers: the message, or the error and the id it echoes.
type Parsed = Result<Message, (Option<Value>, McpError)>;

/// `parse_message`, its error as a pair.
fn parse(body: &[u8]) -> Parsed {
    parse_message(body).map_err(|failure| (failure.id, failure.error))
}

/// The parser `parse_message` replaced (a `Value` tree of the whole body).
fn reference(body: &[u8]) -> Parsed {
    let fail = |id: Option<Value>, error: McpError| Err((id, error));
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(_) => return fail(None, McpError::Parse),
    };
    let mut object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return fail(
                None,
                McpError::InvalidRequest(
                    "Batch requests are not supported: send one message per POST",
                ),
            )
        }
        _ => {
            return fail(
                None,
                McpError::InvalidRequest("Expected a JSON-RPC request object"),
            )
        }
    };
    let id = match object.remove("id") {
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
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return fail(id, McpError::InvalidRequest("jsonrpc must be \"2.0\""));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        None => {
            let result = object.remove("result");
            let error = object.remove("error").filter(Value::is_object);
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
    Ok(Message::Envelope(tasks_core::plan::Envelope {
        id,
        method,
        params: object.remove("params"),
    }))
}

/// A member value of every JSON type, with the values the checks look at over-represented.
fn member_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("2.0")),
        Just(json!("1.0")),
        Just(json!("tasks/get")),
        Just(json!(null)),
        Just(json!(true)),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        Just(json!(1.5)),
        "[a-z/]{0,8}".prop_map(Value::from),
        Just(json!({})),
        Just(json!({"code": -1, "message": "no"})),
        Just(json!([1, {"a": []}])),
        Just(
            json!({"taskId": "t", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
        ),
    ]
}

/// A member name: the ones step 3 reads, others, and one written with an escape.
fn member_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("jsonrpc".to_owned()),
        Just("id".to_owned()),
        Just("method".to_owned()),
        Just("params".to_owned()),
        Just("result".to_owned()),
        Just("error".to_owned()),
        Just("extra".to_owned()),
        Just("Id".to_owned()),
        "[a-z]{1,4}",
    ]
}

/// A top-level object written member by member, so that a member may repeat; `escaped`
/// writes the first letter of each name as a `\u` escape (the parser then sees an owned name).
fn object_text(members: &[(String, Value)], escaped: bool) -> String {
    let members: Vec<String> = members
        .iter()
        .map(|(name, value)| {
            let name = if escaped && !name.is_empty() {
                let first = name.as_bytes()[0];
                format!("\"\\u{first:04x}{}\"", &name[1..])
            } else {
                serde_json::to_string(name).unwrap()
            };
            format!("{name}:{value}")
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Objects of any mix of members, repeated ones included.
    #[test]
    fn objects_parse_as_the_reference_does(
        members in prop::collection::vec((member_name(), member_value()), 0..8),
        escaped in any::<bool>(),
    ) {
        let body = object_text(&members, escaped);
        prop_assert_eq!(parse(body.as_bytes()), reference(body.as_bytes()), "{}", body);
    }

    /// Any top-level JSON value, and its text cut short or with a byte changed.
    #[test]
    fn other_bodies_parse_as_the_reference_does(
        value in member_value(),
        members in prop::collection::vec((member_name(), member_value()), 1..5),
        cut in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let whole = serde_json::to_vec(&value).unwrap();
        prop_assert_eq!(parse(&whole), reference(&whole));
        let object = object_text(&members, false).into_bytes();
        let at = cut.index(object.len());
        let short = &object[..at];
        prop_assert_eq!(parse(short), reference(short));
        let mut changed = object.clone();
        changed[at] = byte;
        prop_assert_eq!(parse(&changed), reference(&changed));
    }
}

#[test]
fn bodies_that_are_not_json_text_are_parse_errors() {
    let bodies: [&[u8]; 7] = [
        b"",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"extra\":\"\xff\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"extra\":\"\\ud800\"}",
        b"[\"\\ud800\"]",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"} trailing",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",}",
        b"\"\\ud800\"",
    ];
    for body in bodies {
        assert_eq!(parse(body), reference(body), "{body:?}");
        assert_eq!(
            parse_message(body).unwrap_err().error,
            McpError::Parse,
            "{body:?}"
        );
    }
    // 128 levels deep inside a member is past the parser's limit, as before.
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{}{}}}",
        "[".repeat(128),
        "]".repeat(128)
    );
    assert_eq!(
        parse_message(deep.as_bytes()).unwrap_err().error,
        McpError::Parse
    );
    assert_eq!(parse(deep.as_bytes()), reference(deep.as_bytes()));
}
