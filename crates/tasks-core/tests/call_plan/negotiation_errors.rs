//! The task decision table, the Tasks declaration, and the error table's codes and statuses.

use serde_json::{json, Value};
use tasks_core::{CapacityLimit, Decision, McpError, RequestMeta, TaskPolicy};

#[test]
fn decision_table_has_six_cells() {
    let cells = [
        (TaskPolicy::Sync, true, Decision::RunSync),
        (TaskPolicy::Sync, false, Decision::RunSync),
        (TaskPolicy::Optional, true, Decision::CreateTask),
        (TaskPolicy::Optional, false, Decision::RunSync),
        (TaskPolicy::Required, true, Decision::CreateTask),
        (TaskPolicy::Required, false, Decision::MissingCapability),
    ];
    for (policy, declared, want) in cells {
        assert_eq!(
            policy.decide(declared),
            want,
            "{policy:?} declared={declared}"
        );
    }
}

fn meta_with(capabilities: Value) -> RequestMeta {
    RequestMeta::parse(Some(&json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/logLevel": "info",
        "progressToken": 7,
    }})))
    .expect("valid _meta")
}

#[test]
fn declares_tasks() {
    let absent = meta_with(json!({"elicitation": {}}));
    assert_eq!(absent.protocol_version, "2026-07-28");
    assert_eq!(absent.log_level, Some(tasks_core::LogLevel::Info));
    assert_eq!(absent.progress_token, Some(json!(7)));
    assert!(absent.declares("elicitation"));
    assert!(!absent.declares("sampling"));
    assert_eq!(absent.declares_tasks(), Ok(false));
    assert_eq!(
        meta_with(json!({"extensions": {}})).declares_tasks(),
        Ok(false)
    );
    assert_eq!(
        meta_with(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})).declares_tasks(),
        Ok(true)
    );
    for settings in [json!({"x": 1}), json!(true), json!([])] {
        let error = meta_with(json!({"extensions": {"io.modelcontextprotocol/tasks": settings}}))
            .declares_tasks()
            .unwrap_err();
        assert_eq!(error.code(), -32602);
        assert_eq!(error.http_status(), 400);
        assert_eq!(error.to_string(), "The Tasks extension defines no settings");
    }
}

#[test]
fn codes_and_http_statuses() {
    let table = [
        (McpError::Parse, -32700, 400),
        (McpError::InvalidRequest("Invalid Request"), -32600, 400),
        (McpError::BodyTooLarge { limit: 10 }, -32600, 413),
        (McpError::Unauthorized, -32600, 401),
        (McpError::ForbiddenOrigin, -32600, 403),
        (McpError::HttpMethodNotAllowed, -32600, 405),
        (McpError::UnsupportedMediaType, -32600, 415),
        (McpError::MethodNotFound, -32601, 404),
        (McpError::invalid_params("x"), -32602, 400),
        (McpError::UnknownTask, -32602, 400),
        (McpError::TaskInputTooLarge { limit: 10 }, -32602, 400),
        (
            McpError::HeaderMismatch("Missing Mcp-Name header"),
            -32020,
            400,
        ),
        (McpError::missing_tasks_capability(), -32021, 400),
        (
            McpError::UnsupportedVersion {
                requested: "1".into(),
            },
            -32022,
            400,
        ),
        (McpError::Internal("Internal error"), -32603, 500),
        (
            McpError::CapacityExhausted(CapacityLimit::MaxTasks),
            -32603,
            500,
        ),
        (McpError::StoreUnavailable, -32603, 503),
        (McpError::StoreOutcomeUnknown, -32603, 503),
    ];
    for (error, code, status) in table {
        assert_eq!(error.code(), code, "{error:?}");
        assert_eq!(error.http_status(), status, "{error:?}");
        assert_eq!(error.to_error_object().code, code);
        assert_eq!(error.to_error_object().message, error.to_string());
    }
}

/// A store that is briefly unavailable is a retryable 503, saying whether anything changed.
#[test]
fn store_unavailable_refusals() {
    assert_eq!(
        serde_json::to_value(McpError::StoreUnavailable.to_error_object()).unwrap(),
        json!({"code": -32603, "message": "Task store unavailable: nothing was stored or changed",
            "data": {"retryable": true}})
    );
    assert_eq!(
        serde_json::to_value(McpError::StoreOutcomeUnknown.to_error_object()).unwrap(),
        json!({"code": -32603,
            "message": "Task store unavailable: whether the request took effect is unknown",
            "data": {"retryable": true, "outcome": "unknown"}})
    );
    assert_eq!(McpError::StoreUnavailable.http_status(), 503);
    assert_eq!(McpError::StoreOutcomeUnknown.http_status(), 503);
}

#[test]
fn error_data() {
    let capacity = McpError::CapacityExhausted(CapacityLimit::MaxTasks).to_error_object();
    assert_eq!(capacity.message, "Task capacity exhausted");
    assert_eq!(
        capacity.data,
        Some(json!({"retryable": true, "limit": "max_tasks"}))
    );
    for (limit, name) in [
        (CapacityLimit::MaxJobs, "max_jobs"),
        (
            CapacityLimit::MaxActiveTasksPerScope,
            "max_active_tasks_per_scope",
        ),
    ] {
        assert_eq!(
            McpError::CapacityExhausted(limit).data().unwrap()["limit"],
            json!(name)
        );
    }
    assert_eq!(
        serde_json::to_value(McpError::missing_tasks_capability().to_error_object()).unwrap(),
        json!({"code": -32021, "message": "Missing required client capability", "data":
            {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}})
    );
    assert_eq!(
        McpError::UnsupportedVersion {
            requested: "2025-11-25".into()
        }
        .data(),
        Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}))
    );
    assert_eq!(
        McpError::UnknownTask.to_string(),
        "Unknown or inaccessible taskId"
    );
    assert_eq!(McpError::UnknownTask.data(), None);
    // A stored error keeps a present `"data": null` through the storage form.
    let stored: tasks_core::JsonRpcError =
        serde_json::from_value(json!({"code": 1, "message": "m", "data": null})).unwrap();
    assert_eq!(stored.data, Some(Value::Null));
    let absent: tasks_core::JsonRpcError =
        serde_json::from_value(json!({"code": 1, "message": "m"})).unwrap();
    assert_eq!(absent.data, None);
}

#[test]
fn optional_meta_keys_of_the_wrong_type_are_invalid_params() {
    let parse = |key: &str, value: Value| {
        RequestMeta::parse(Some(&json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            key: value,
        }})))
    };
    for token in [json!(1.5), json!(null), json!({}), json!([1]), json!(true)] {
        let error = parse("progressToken", token.clone()).unwrap_err();
        assert_eq!(error.code(), -32602, "{token}");
        assert_eq!(
            error.to_string(),
            "params._meta progressToken must be a string or an integer"
        );
    }
    for token in [json!("t"), json!(-3), json!(u64::MAX)] {
        assert_eq!(
            parse("progressToken", token.clone())
                .unwrap()
                .progress_token,
            Some(token)
        );
    }
    for level in [json!("INFO"), json!("loud"), json!(3), json!(null)] {
        let error = parse("io.modelcontextprotocol/logLevel", level.clone()).unwrap_err();
        assert_eq!(error.code(), -32602, "{level}");
    }
    assert_eq!(
        parse("io.modelcontextprotocol/logLevel", json!("emergency"))
            .unwrap()
            .log_level,
        Some(tasks_core::LogLevel::Emergency)
    );
}
