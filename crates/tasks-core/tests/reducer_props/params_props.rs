//! Params, request `_meta` and routing-header parsing: total on arbitrary input, fixed error
//! codes and messages.

use crate::common;

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use common::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use tasks_core::headers::{check_mirrored, decode_value, encode_value, MirroredHeader};
use tasks_core::plan::{check_param_headers, mirror, param_headers};
use tasks_core::plan::{parse_task_ref, parse_update};
use tasks_core::protocol::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use tasks_core::{LogLevel, McpError, RequestMeta};

const PARAMS_MESSAGES: [&str; 5] = [
    "params must be an object",
    "A non-empty taskId is required",
    "taskId is longer than 256 bytes",
    "tasks/update requires an inputResponses object",
    "inputResponses is invalid",
];

/// Independent model of the params table: the task id, or the error message.
fn model_task_id(params: &Value) -> Result<String, &'static str> {
    let object = params.as_object().ok_or(PARAMS_MESSAGES[0])?;
    match object.get("taskId").and_then(Value::as_str) {
        None | Some("") => Err(PARAMS_MESSAGES[1]),
        Some(id) if id.len() > 256 => Err(PARAMS_MESSAGES[2]),
        Some(id) => Ok(id.to_owned()),
    }
}

fn model_update(params: &Value) -> Result<(String, BTreeMap<String, Value>), &'static str> {
    let id = model_task_id(params)?;
    let responses = params["inputResponses"]
        .as_object()
        .ok_or(PARAMS_MESSAGES[3])?;
    if responses
        .iter()
        .any(|(k, v)| k.is_empty() || !v.is_object())
    {
        return Err(PARAMS_MESSAGES[4]);
    }
    Ok((id, responses.clone().into_iter().collect()))
}

fn invalid_params_message(error: &McpError) -> Result<String, TestCaseError> {
    prop_assert_eq!(error.code(), -32602);
    prop_assert_eq!(error.http_status(), 400);
    let object = error.to_error_object();
    prop_assert_eq!(object.code, -32602);
    prop_assert!(object.data.is_none());
    Ok(object.message)
}

/// Params shaped like real `tasks/*` params, with every member sometimes wrong.
fn arb_task_params() -> impl Strategy<Value = Value> {
    let task_id = prop_oneof![
        4 => "[A-Za-z0-9_-]{1,40}".prop_map(Value::from),
        1 => Just(json!("")),
        1 => (250usize..262).prop_map(|n| Value::from("x".repeat(n))),
        1 => (84usize..87).prop_map(|n| Value::from("€".repeat(n))),
        1 => arb_any_json(),
    ];
    let response = prop_oneof![
        3 => Just(json!({"action": "accept"})),
        1 => arb_any_json(),
    ];
    let responses = prop_oneof![
        4 => prop::collection::btree_map(prop_oneof![3 => "[a-e]", 1 => Just(String::new())],
                response, 0..4)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        1 => arb_any_json(),
    ];
    (
        proptest::option::of(task_id),
        proptest::option::of(responses),
        proptest::option::of(arb_any_json()),
    )
        .prop_map(|(task_id, responses, meta)| {
            let mut params = serde_json::Map::new();
            for (key, value) in [
                ("taskId", task_id),
                ("inputResponses", responses),
                ("_meta", meta),
            ] {
                if let Some(value) = value {
                    params.insert(key.into(), value);
                }
            }
            Value::Object(params)
        })
}

/// Request `_meta` shaped like the real one, with every member sometimes wrong.
fn arb_meta_params() -> impl Strategy<Value = Value> {
    let version = prop_oneof![3 => Just(json!("2026-07-28")), 1 => arb_any_json()];
    let capabilities = prop_oneof![
        2 => Just(json!({})),
        2 => Just(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})),
        1 => arb_any_json().prop_map(|v| json!({"extensions": {"io.modelcontextprotocol/tasks": v}})),
        1 => arb_any_json(),
    ];
    (
        proptest::option::of(version),
        proptest::option::of(capabilities),
        proptest::option::of(arb_any_json()),
        proptest::option::of(arb_any_json()),
    )
        .prop_map(|(version, capabilities, level, token)| {
            let mut meta = serde_json::Map::new();
            for (key, value) in [
                (META_PROTOCOL_VERSION, version),
                (META_CLIENT_CAPABILITIES, capabilities),
                ("io.modelcontextprotocol/logLevel", level),
                ("progressToken", token),
            ] {
                if let Some(value) = value {
                    meta.insert(key.into(), value);
                }
            }
            json!({"_meta": meta})
        })
}

fn arb_params() -> impl Strategy<Value = Value> {
    prop_oneof![arb_any_json(), arb_task_params(), arb_meta_params()]
}

const HEADERS: [MirroredHeader; 3] = [
    MirroredHeader::ProtocolVersion,
    MirroredHeader::Method,
    MirroredHeader::Name,
];

fn arb_header_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..48),
        "[ \t]{0,2}[ -~]{0,20}[ \t]{0,2}".prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 0..24).prop_map(|b| format!(
            "=?base64?{}?=",
            STANDARD.encode(b)
        )
        .into_bytes()),
        "[ -~]{0,12}".prop_map(|s| format!("=?base64?{s}?=").into_bytes()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn params_parsers_are_total_and_match_the_table(params in arb_params()) {
        match (parse_task_ref(&params), model_task_id(&params)) {
            (Ok(got), Ok(id)) => prop_assert_eq!(got.task_id.as_str(), id.as_str()),
            (Err(e), Err(message)) => prop_assert_eq!(invalid_params_message(&e)?, message),
            (got, want) => prop_assert!(false, "{}: got {:?}, want {:?}", params, got, want),
        }
        match (parse_update(&params), model_update(&params)) {
            (Ok(got), Ok((id, responses))) => {
                prop_assert_eq!(got.task_id.as_str(), id.as_str());
                prop_assert_eq!(got.input_responses, responses);
            }
            (Err(e), Err(message)) => prop_assert_eq!(invalid_params_message(&e)?, message),
            (got, want) => prop_assert!(false, "{}: got {:?}, want {:?}", params, got, want),
        }
    }

    #[test]
    fn request_meta_parse_is_total(params in arb_params()) {
        prop_assert!(RequestMeta::parse(None).is_err());
        let meta = params.get("_meta").and_then(Value::as_object);
        let version = meta.and_then(|m| m.get(META_PROTOCOL_VERSION)).and_then(Value::as_str);
        let capabilities = meta
            .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
            .and_then(Value::as_object);
        let level = meta
            .and_then(|m| m.get("io.modelcontextprotocol/logLevel"))
            .map(|l| l.as_str().and_then(|s| s.parse::<LogLevel>().ok()));
        match RequestMeta::parse(Some(&params)) {
            Ok(parsed) => {
                prop_assert_eq!(parsed.log_level, level.flatten());
                prop_assert!(level.is_none_or(|l| l.is_some()));
                prop_assert_eq!(Some(parsed.protocol_version.as_str()), version);
                prop_assert_eq!(Some(&parsed.client_capabilities), capabilities);
                if let Some(token) = &parsed.progress_token {
                    prop_assert!(token.is_string() || token.is_i64() || token.is_u64());
                }
                let declared = parsed
                    .client_capabilities
                    .get("extensions")
                    .and_then(|e| e.get("io.modelcontextprotocol/tasks"));
                match parsed.declares_tasks() {
                    Ok(yes) => prop_assert_eq!(yes, declared.is_some()),
                    Err(e) => {
                        prop_assert_eq!(
                            invalid_params_message(&e)?,
                            "The Tasks extension defines no settings"
                        );
                        prop_assert_ne!(declared, Some(&json!({})));
                    }
                }
            }
            Err(e) => {
                let message = invalid_params_message(&e)?;
                let bad_level = level.is_some_and(|l| l.is_none());
                let bad_token = meta
                    .and_then(|m| m.get("progressToken"))
                    .is_some_and(|t| !(t.is_string() || t.is_i64() || t.is_u64()));
                prop_assert!(
                    version.is_none() || capabilities.is_none() || bad_level || bad_token,
                    "{}",
                    message
                );
                prop_assert!(message.starts_with("params._meta"), "{}", message);
            }
        }
    }

    #[test]
    fn header_decoding_is_total(raw in arb_header_bytes(), which in 0usize..3) {
        let header = HEADERS[which];
        let trimmed = std::str::from_utf8(&raw)
            .ok()
            .map(|s| s.trim_matches(|c| c == ' ' || c == '\t'));
        match decode_value(header, &raw) {
            Ok(value) => {
                let trimmed = trimmed.expect("accepted bytes are UTF-8");
                prop_assert!(trimmed.bytes().all(|b| (0x20..=0x7e).contains(&b) || b == b'\t'));
                // Only Mcp-Name takes the base64 form; other headers' values are literals.
                let wrapped = header.allows_base64()
                    && trimmed.starts_with("=?base64?") && trimmed.ends_with("?=")
                    && trimmed.len() >= "=?base64??=".len();
                if wrapped {
                    let payload = &trimmed["=?base64?".len()..trimmed.len() - 2];
                    let decoded = STANDARD.decode(payload).expect("accepted base64");
                    prop_assert!(!decoded.is_empty());
                    prop_assert_eq!(value.as_bytes(), &decoded[..]);
                } else {
                    prop_assert_eq!(&*value, trimmed);
                }
                prop_assert!(check_mirrored(header, Some(&raw), Some(&value)).is_ok());
                prop_assert!(check_mirrored(header, Some(&raw), None).is_ok());
            }
            Err(e) => {
                prop_assert!(
                    header.allows_base64() || !trimmed.is_some_and(|t| t.bytes().all(|b| (0x20..=0x7e).contains(&b) || b == b'\t')),
                    "a literal header rejects only characters outside visible ASCII"
                );
                prop_assert_eq!(e.code(), -32020);
                prop_assert_eq!(e.http_status(), 400);
                prop_assert!(e.data().is_none());
                prop_assert!(check_mirrored(header, Some(&raw), None).is_err());
            }
        }
    }

    /// Base64-wrapped values decode to exactly the encoded UTF-8 text.
    #[test]
    fn base64_values_round_trip(text in "\\PC{0,16}", pad in "[ \t]{0,2}") {
        let raw = format!("{pad}=?base64?{}?={pad}", STANDARD.encode(&text));
        let decoded = decode_value(MirroredHeader::Name, raw.as_bytes());
        if text.is_empty() {
            prop_assert_eq!(decoded.unwrap_err().code(), -32020);
        } else {
            prop_assert_eq!(decoded.unwrap(), text);
        }
    }
}

fn message(result: Result<impl std::fmt::Debug, McpError>) -> String {
    let error = result.expect_err("must be refused");
    assert_eq!(error.code(), -32602);
    error.to_error_object().message
}

#[test]
fn params_message_table() {
    let cases: &[(Value, &str)] = &[
        (json!([]), "params must be an object"),
        (json!("t"), "params must be an object"),
        (Value::Null, "params must be an object"),
        (json!({}), "A non-empty taskId is required"),
        (json!({"taskId": 42}), "A non-empty taskId is required"),
        (json!({"taskId": null}), "A non-empty taskId is required"),
        (json!({"taskId": ""}), "A non-empty taskId is required"),
        (
            json!({"taskId": "a".repeat(257)}),
            "taskId is longer than 256 bytes",
        ),
        (
            json!({"taskId": "é".repeat(129)}),
            "taskId is longer than 256 bytes",
        ),
    ];
    for (params, want) in cases {
        assert_eq!(message(parse_task_ref(params)), *want, "{params}");
        assert_eq!(message(parse_update(params)), *want, "{params}");
    }
    let ok = "a".repeat(256);
    assert_eq!(
        parse_task_ref(&json!({"taskId": ok}))
            .unwrap()
            .task_id
            .as_str(),
        ok
    );
    let legacy = json!({"taskId": "t1", "task": {"ttl": 1}, "_meta": {}});
    assert_eq!(parse_task_ref(&legacy).unwrap().task_id.as_str(), "t1");
}

#[test]
fn update_message_table() {
    let with = |responses: Value| json!({"taskId": "t1", "inputResponses": responses});
    let cases: &[(Value, &str)] = &[
        (
            json!({"taskId": "t1"}),
            "tasks/update requires an inputResponses object",
        ),
        (
            with(json!([])),
            "tasks/update requires an inputResponses object",
        ),
        (
            with(json!("yes")),
            "tasks/update requires an inputResponses object",
        ),
        (
            with(Value::Null),
            "tasks/update requires an inputResponses object",
        ),
        (with(json!({"": {}})), "inputResponses is invalid"),
        (with(json!({"k": 1})), "inputResponses is invalid"),
        (
            with(json!({"k": {}, "j": [] })),
            "inputResponses is invalid",
        ),
        // The taskId check runs first.
        (
            json!({"taskId": 42, "inputResponses": []}),
            "A non-empty taskId is required",
        ),
    ];
    for (params, want) in cases {
        assert_eq!(message(parse_update(params)), *want, "{params}");
    }
    let ok = parse_update(&with(json!({"k": {"action": "accept"}}))).unwrap();
    assert_eq!(ok.task_id.as_str(), "t1");
    assert_eq!(
        ok.input_responses,
        BTreeMap::from([("k".to_owned(), json!({"action": "accept"}))])
    );
    assert!(parse_update(&with(json!({})))
        .unwrap()
        .input_responses
        .is_empty());
}

#[test]
fn request_meta_messages() {
    let parse = |params: Value| message(RequestMeta::parse(Some(&params)));
    assert_eq!(
        message(RequestMeta::parse(None)),
        "params._meta is required"
    );
    assert_eq!(parse(json!({})), "params._meta is required");
    assert_eq!(parse(json!({"_meta": []})), "params._meta is required");
    assert_eq!(
        parse(json!({"_meta": {META_CLIENT_CAPABILITIES: {}}})),
        "params._meta is missing io.modelcontextprotocol/protocolVersion"
    );
    assert_eq!(
        parse(
            json!({"_meta": {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: []}})
        ),
        "params._meta is missing io.modelcontextprotocol/clientCapabilities"
    );
}

proptest! {
    /// What a client encodes (`encode_value`) the server decodes back to the same string, for
    /// `Mcp-Name` and `Mcp-Param-*`; the literal-only headers encode only plain values.
    #[test]
    fn encoded_header_values_decode_to_themselves(value in any::<String>()) {
        for header in [MirroredHeader::Name, MirroredHeader::Param] {
            let encoded = encode_value(header, &value).expect("base64 headers encode anything");
            let decoded = decode_value(header, encoded.as_bytes()).expect("decodes");
            prop_assert_eq!(decoded.as_ref(), value.as_str());
        }
        match encode_value(MirroredHeader::Method, &value) {
            Some(encoded) => {
                prop_assert_eq!(encoded.as_ref(), value.as_str());
                prop_assert_eq!(decode_value(MirroredHeader::Method, value.as_bytes()).expect("plain"), value.as_str());
            }
            None => prop_assert!(value.trim_matches([' ', '\t']) != value || !value.bytes().all(|b| (0x20..=0x7e).contains(&b) || b == b'\t')),
        }
    }

    /// The `Mcp-Param-*` headers a client mirrors (`param_headers::mirror`) pass the server's
    /// check, for any string, integer and boolean arguments.
    #[test]
    fn mirrored_arguments_pass_the_server_check(
        text in any::<String>(),
        number in any::<i64>(),
        flag in any::<bool>(),
    ) {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
        }});
        let params = param_headers(schema.as_object().expect("object")).expect("valid annotations");
        let arguments = json!({"region": text, "count": number, "dry": flag});
        let arguments = arguments.as_object().expect("object");
        let sent = mirror(&params, arguments);
        prop_assert_eq!(sent.len(), 3);
        let lookup = |name: &str| -> Result<Option<&[u8]>, McpError> {
            Ok(sent.iter().find(|(h, _)| h.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_bytes()))
        };
        prop_assert_eq!(check_param_headers(&params, arguments, lookup), Ok(()));
    }
}
