//! Member names are plain wherever a body is read (`tasks_core::json`): over generated JSON
//! texts with `serde_json`'s marker names at any depth (written with escapes or not), repeated
//! members and nesting around the parser's limit, inside the arguments of a `tools/call` the
//! typed path takes, the value the planner acts on equals the text read by a parser that gives no
//! name a meaning (the generator's own model), or the body is refused: -32600 with the marker
//! message for a marker name, -32700 past the nesting limit. The typed path and its fallback
//! answer alike (`typed_props::check`).

use proptest::prelude::*;
use serde_json::{Map, Value};
use tasks_core::json::{MARKERS, MARKER_MESSAGE, MAX_PARSE_DEPTH};
use tasks_core::plan::parse_envelope;
use tasks_core::{McpError, TaskPolicy};

use crate::typed_props::{check, headers};

/// A JSON text's model: objects keep every member as written (repeats included) and whether
/// its name is written with a `\u` escape of its first character.
#[derive(Debug, Clone)]
enum Json {
    Null,
    Int(i64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, bool, Json)>),
}

fn names() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["a", "b", "k"]).prop_map(str::to_owned),
        1 => prop::sample::select(MARKERS.to_vec()).prop_map(str::to_owned),
        1 => Just("$serde_json::private::Other".to_owned()),
    ]
}

fn json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<i64>().prop_map(Json::Int),
        prop_oneof![
            "[a-z]{0,3}",
            prop::sample::select(MARKERS.to_vec()).prop_map(str::to_owned)
        ]
        .prop_map(Json::Str),
    ];
    leaf.prop_recursive(6, 40, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            prop::collection::vec((names(), prop::bool::weighted(0.3), inner), 0..4)
                .prop_map(Json::Object),
        ]
    })
}

fn text(json: &Json) -> String {
    match json {
        Json::Null => "null".into(),
        Json::Int(n) => n.to_string(),
        Json::Str(s) => serde_json::to_string(s).unwrap(),
        Json::Array(items) => format!("[{}]", items.iter().map(text).collect::<Vec<_>>().join(",")),
        Json::Object(members) => {
            let members: Vec<String> = members
                .iter()
                .map(|(name, escaped, value)| {
                    let name = if *escaped {
                        let mut chars = name.chars();
                        let first = chars.next().unwrap() as u32;
                        format!("\"\\u{first:04x}{}\"", chars.as_str())
                    } else {
                        serde_json::to_string(name).unwrap()
                    };
                    format!("{name}:{}", text(value))
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
    }
}

/// The value a parser that gives no name a meaning reads: a repeated member keeps its last
/// value.
fn value(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Int(n) => Value::from(*n),
        Json::Str(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::Array(items.iter().map(value).collect()),
        Json::Object(members) => {
            let mut object = Map::new();
            for (name, _, item) in members {
                object.insert(name.clone(), value(item));
            }
            Value::Object(object)
        }
    }
}

fn has_marker(json: &Json) -> bool {
    match json {
        Json::Array(items) => items.iter().any(has_marker),
        Json::Object(members) => members
            .iter()
            .any(|(name, _, item)| MARKERS.contains(&name.as_str()) || has_marker(item)),
        _ => false,
    }
}

fn depth(json: &Json) -> usize {
    match json {
        Json::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Json::Object(members) => 1 + members.iter().map(|m| depth(&m.2)).max().unwrap_or(0),
        _ => 0,
    }
}

const META: &str = concat!(
    r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#
);

/// The arguments `{"x": <wrap arrays around json>}` of a `tools/call` of the tool `t`.
fn body(json: &Json, wrap: usize) -> String {
    let x = format!("{}{}{}", "[".repeat(wrap), text(json), "]".repeat(wrap));
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"t","arguments":{{"x":{x}}},"_meta":{META}}}}}"#
    )
}

fn wrapped(mut value: Value, wrap: usize) -> Value {
    for _ in 0..wrap {
        value = Value::Array(vec![value]);
    }
    value
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn the_value_acted_on_is_the_plain_reading_or_the_body_is_refused(
        json in json(),
        wrap in prop_oneof![6 => Just(0usize), 1 => 110usize..130],
        policy in prop::sample::select(vec![TaskPolicy::Sync, TaskPolicy::Optional, TaskPolicy::Required]),
    ) {
        let body = body(&json, wrap);
        // The envelope, params and arguments objects hold `x`.
        let too_deep = 3 + wrap + depth(&json) > MAX_PARSE_DEPTH;
        let marker = has_marker(&json);
        match parse_envelope(body.as_bytes()) {
            Ok(envelope) => {
                prop_assert!(!marker && !too_deep, "accepted {}", body);
                let params = envelope.params.unwrap_or_default();
                prop_assert_eq!(
                    &params["arguments"]["x"],
                    &wrapped(value(&json), wrap)
                );
                // Without marker names, serde_json's own Value reads the same.
                let own: Value = serde_json::from_str(&body).unwrap();
                prop_assert_eq!(&own["params"]["arguments"]["x"], &params["arguments"]["x"]);
            }
            Err(refused) => {
                prop_assert_eq!(refused.id, None);
                let expected = match (marker, too_deep) {
                    (false, false) => return Err(TestCaseError::fail(format!("refused {body}"))),
                    (true, false) => vec![McpError::InvalidRequest(MARKER_MESSAGE)],
                    (false, true) => vec![McpError::Parse],
                    // Whichever the parser meets first.
                    (true, true) => vec![McpError::InvalidRequest(MARKER_MESSAGE), McpError::Parse],
                };
                prop_assert!(expected.contains(&refused.error), "{:?} for {}", refused.error, body);
            }
        }
        let headers = headers(body.as_bytes(), (None, None, None));
        let typed = check(body.as_bytes(), &headers, policy)?;
        prop_assert!(!typed || (!marker && !too_deep), "typed path took {}", body);
    }
}

/// A marker name spelt with escapes anywhere is refused like the plain one, and a marker used
/// to spell a value (`"7"` for `7`) or to nest past the limit no longer works.
#[test]
fn markers_no_longer_spell_values_or_nest_past_the_limit() {
    for body in [
        r#"{"jsonrpc":"2.0","id":{"$serde_json::private::RawValue":"7"},"method":"tasks/get","params":{}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":{"\u0024serde_json::private::RawValue":"\"tasks/get\""},"params":{}}"#.to_owned(),
        r#"{"$serde_json::private::RawValue":"{}","jsonrpc":"2.0","id":1,"method":"tasks/get"}"#.to_owned(),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{{"x":{{"{}":"{}1{}"}}}},"_meta":{META}}}}}"#,
            MARKERS[0],
            "[".repeat(300),
            "]".repeat(300)
        ),
    ] {
        let refused = parse_envelope(body.as_bytes()).unwrap_err();
        assert_eq!(refused.error, McpError::InvalidRequest(MARKER_MESSAGE), "{body}");
        assert_eq!(refused.id, None);
    }
}
