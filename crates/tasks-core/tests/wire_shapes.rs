//! The typed base-protocol shapes (`tasks_core::wire`): their wire form, and that a client
//! can read back what the server writes.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tasks_core::input::InputRequest;
use tasks_core::wire::{
    complete, CacheScope, DiscoverResult, InputRequiredResult, LogParams, ProgressParams,
    ResultType, ToolEntry, ToolsListResult,
};
use tasks_core::{JsonObject, LogLevel};

fn object(value: Value) -> JsonObject {
    value.as_object().cloned().unwrap()
}

fn meta() -> JsonObject {
    object(json!({"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}))
}

/// Serializes `value`, reads it back, and returns the JSON.
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: &T) -> Value {
    let json = serde_json::to_value(value).unwrap();
    let back: T = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(&back, value);
    json
}

#[test]
fn result_shapes() {
    insta::assert_json_snapshot!(
        "discover",
        round_trip(&DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions: vec!["2026-07-28".into()],
            capabilities: object(
                json!({"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
            ),
            ttl_ms: 300_000,
            cache_scope: CacheScope::Public,
            instructions: None,
            meta: meta(),
        })
    );
    insta::assert_json_snapshot!(
        "tools_list",
        round_trip(&ToolsListResult {
            result_type: ResultType::Complete,
            tools: vec![ToolEntry {
                name: "greet".into(),
                description: "Greets".into(),
                input_schema: object(json!({"type": "object"})),
                annotations: Some(object(json!({"readOnlyHint": true}))),
                output_schema: Some(object(
                    json!({"type": "object", "properties": {"text": {"type": "string"}}})
                )),
                title: Some("Greeter".into()),
                execution: None,
            }],
            ttl_ms: 300_000,
            cache_scope: CacheScope::Public,
            meta: meta(),
            next_cursor: None,
        })
    );
    insta::assert_json_snapshot!(
        "input_required",
        round_trip(&InputRequiredResult {
            result_type: ResultType::InputRequired,
            input_requests: BTreeMap::from([("roots".to_owned(), InputRequest::list_roots())]),
            request_state: "opaque".into(),
            meta: meta(),
        })
    );
}

#[test]
fn notification_params() {
    let progress = ProgressParams {
        progress_token: json!("p-1"),
        progress: 50.0,
        total: Some(100.0),
        message: None,
    };
    assert_eq!(
        serde_json::to_string(&progress).unwrap(),
        r#"{"progress":50,"progressToken":"p-1","total":100}"#,
        "whole numbers are written as integers, keys in wire order"
    );
    let fraction = ProgressParams {
        progress: 0.5,
        total: None,
        message: Some("half".into()),
        ..progress
    };
    assert_eq!(
        serde_json::to_value(&fraction).unwrap(),
        json!({"message": "half", "progress": 0.5, "progressToken": "p-1"})
    );
    let log = LogParams {
        level: LogLevel::Warning,
        logger: None,
        data: json!({"disk": "full"}),
    };
    assert_eq!(
        round_trip(&log),
        json!({"data": {"disk": "full"}, "level": "warning"})
    );
}

#[test]
fn a_result_without_result_type_is_complete() {
    assert_eq!(
        Value::Object(complete(object(json!({"content": []})))),
        json!({"content": [], "resultType": "complete"})
    );
    assert_eq!(
        Value::Object(complete(object(json!({"resultType": "input_required"})))),
        json!({"resultType": "input_required"}),
        "a tool's own resultType is kept"
    );
}
