//! Params validation (`tasks_core::plan::parse_task_ref`, `parse_update`) and request `_meta` parsing
//! (`tasks_core::RequestMeta::parse`) on arbitrary JSON: total, -32602 with a fixed message
//! that never echoes the client's values, and accepted values exactly as sent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tasks_core::plan::{parse_task_ref, parse_update};
use tasks_core::{McpError, RequestMeta};

const MESSAGES: [&str; 5] = [
    "params must be an object",
    "A non-empty taskId is required",
    "taskId is longer than 256 bytes",
    "tasks/update requires an inputResponses object",
    "inputResponses is invalid",
];

fn check_error(error: &McpError) {
    assert_eq!(error.code(), -32602, "{error:?}");
    assert_eq!(error.http_status(), 400);
    assert!(error.data().is_none());
}

fn check(params: &Value) {
    match parse_task_ref(params) {
        Ok(target) => {
            let id = params["taskId"].as_str().expect("a string taskId");
            assert_eq!(target.task_id.as_str(), id);
            assert!(!id.is_empty() && id.len() <= 256);
        }
        Err(error) => {
            check_error(&error);
            assert!(
                MESSAGES[..3].contains(&error.to_string().as_str()),
                "{error}"
            );
        }
    }
    match parse_update(params) {
        Ok(update) => {
            assert_eq!(update.task_id.as_str(), params["taskId"].as_str().unwrap());
            let sent = params["inputResponses"].as_object().expect("an object");
            assert_eq!(update.input_responses.len(), sent.len());
            for (key, value) in &update.input_responses {
                assert!(!key.is_empty() && value.is_object());
                assert_eq!(sent.get(key), Some(value));
            }
        }
        Err(error) => {
            check_error(&error);
            assert!(MESSAGES.contains(&error.to_string().as_str()), "{error}");
        }
    }
    match RequestMeta::parse(Some(params)) {
        Ok(meta) => {
            let sent = &params["_meta"];
            assert_eq!(
                sent["io.modelcontextprotocol/protocolVersion"].as_str(),
                Some(meta.protocol_version.as_str())
            );
            let _ = meta.declares_tasks();
        }
        Err(error) => check_error(&error),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    check(&value);
    // The same value in each position a client controls.
    check(&json!({"taskId": value, "inputResponses": {"k": {}}}));
    check(&json!({"taskId": "t", "inputResponses": value}));
    check(&json!({"_meta": value}));
});
