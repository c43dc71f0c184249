//! Snapshots of the exact wire bytes the dispatcher writes: `server/discover`, `tools/list`, a
//! `CreateTaskResult` (id and timestamps redacted) and every admission error body.

use http::Method;
use serde_json::{json, Value};
use tasks_http::BodyError;
use tasks_test_support::dispatcher::*;
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;

/// `<status>\n<body bytes>`.
fn wire(reply: &Reply) -> String {
    format!("{}\n{}", reply.status, reply.text())
}

#[tokio::test]
async fn server_discover_bytes() {
    let (d, _) = dispatcher();
    let reply = Req::new("server/discover").send(&d).await;
    insta::assert_snapshot!("server_discover", wire(&reply));
}

#[tokio::test]
async fn tools_list_bytes() {
    let (d, _) = dispatcher();
    let reply = Req::new("tools/list").id(json!("list")).send(&d).await;
    insta::assert_snapshot!("tools_list", wire(&reply));
}

#[tokio::test]
async fn create_task_result_bytes() {
    let (d, _) = dispatcher();
    let reply = Req::call("block", json!({}))
        .tasks()
        .id(json!(3))
        .send(&d)
        .await;
    let result: Value = reply.json()["result"].clone();
    let id = result["taskId"].as_str().unwrap().to_owned();
    let created = result["createdAt"].as_str().unwrap().to_owned();
    assert_eq!(result["lastUpdatedAt"], result["createdAt"]);
    let text = wire(&reply)
        .replace(&id, "[task-id]")
        .replace(&created, "[timestamp]");
    insta::assert_snapshot!("create_task_result", text);
    Req::cancel(&id).tasks().send(&d).await.result();
}

#[tokio::test]
async fn admission_error_bytes() {
    let (d, _) = dispatcher();
    let discover = || Req::new("server/discover").id(json!(9));
    let cases: Vec<(&str, Req)> = vec![
        (
            "403 forbidden host",
            discover().header("host", "evil.example.com"),
        ),
        (
            "403 forbidden origin",
            discover().header("origin", "http://evil.example.com"),
        ),
        ("405 GET", discover().http_method(Method::GET)),
        (
            "413 body too large",
            discover().body_error(BodyError::TooLarge(1_048_576)),
        ),
        ("-32700 parse error", discover().body("{")),
        ("-32600 batch", discover().body("[]")),
        ("-32600 not an object", discover().body("42")),
        (
            "-32600 bad jsonrpc",
            discover().body(r#"{"jsonrpc":"1.0","id":9,"method":"server/discover"}"#),
        ),
        (
            "-32600 bad id",
            discover().body(r#"{"jsonrpc":"2.0","id":null,"method":"server/discover"}"#),
        ),
        (
            "-32600 no method",
            discover().body(r#"{"jsonrpc":"2.0","id":9}"#),
        ),
        (
            "-32020 missing MCP-Protocol-Version",
            discover().without("mcp-protocol-version"),
        ),
        (
            "-32020 repeated MCP-Protocol-Version",
            discover().append("mcp-protocol-version", VERSION),
        ),
        (
            "-32020 missing Mcp-Method",
            discover().without("mcp-method"),
        ),
        (
            "-32020 mismatched Mcp-Method",
            discover().header("mcp-method", "SERVER/DISCOVER"),
        ),
        ("-32602 missing _meta", discover().no_meta()),
        (
            "-32602 missing protocolVersion",
            discover().meta(json!({META_CAPS: {}})),
        ),
        (
            "-32602 missing clientCapabilities",
            discover().meta(json!({META_VERSION: VERSION})),
        ),
        (
            "-32020 header and body versions differ",
            discover().meta(json!({META_VERSION: "v999.0.0", META_CAPS: {}})),
        ),
        ("-32022 unsupported version", discover().version("v999.0.0")),
        (
            "-32601 removed method",
            Req::new("tasks/result")
                .id(json!(9))
                .param("taskId", json!("tasks-conformance-isolation-probe")),
        ),
        (
            "-32020 missing Mcp-Name",
            Req::get("t-1").id(json!(9)).without("mcp-name"),
        ),
        (
            "-32020 mismatched Mcp-Name",
            Req::get("t-1").id(json!(9)).header("mcp-name", "t-2"),
        ),
        (
            "-32020 invalid Mcp-Name",
            Req::get("t-1")
                .id(json!(9))
                .header("mcp-name", "=?base64?SGVsbG8?="),
        ),
        (
            "-32020 repeated Mcp-Name",
            Req::get("t-1").id(json!(9)).append("mcp-name", "t-1"),
        ),
        (
            "-32021 tasks not declared",
            Req::update("gate-test", json!({})).id(json!(9)),
        ),
        (
            "-32602 unknown task",
            Req::get("t-1").id(json!("nine")).tasks(),
        ),
    ];
    let mut text = String::new();
    for (name, req) in cases {
        let reply = req.send(&d).await;
        text.push_str(&format!("== {name}\n{}\n", wire(&reply)));
    }
    let reply = Req::new("notifications/cancelled")
        .notification()
        .send(&d)
        .await;
    assert!(reply.is_empty());
    text.push_str(&format!("== 202 notification\n{}\n", reply.status));
    insta::assert_snapshot!("admission_errors", text);
}
