//! In-process tests of the dispatcher (no network): the task decision table, the not-declared
//! table, the admission order of `tasks_core::plan::admit`, the status payloads (SEP-2663 "Task
//! Status"), acknowledgements, MRTR `requestState`, id echo, scope isolation and the listen
//! stream. The planner's rule tables (headers, message, params) are tasks-core's
//! (`crates/tasks-core/tests/call_plan/`); here one case of each shows the adapter carries the
//! decision to the wire.

// Modules rather than binaries of their own (each integration-test binary links the
// whole stack, and linking is slow): their tests are named `<module>::<test>`.
mod catalog;
mod connections;
mod dispatch_props;
mod drain;
mod hardening;
mod legacy_era;
mod mrtr_replay;
mod progress;
mod related_tasks;
mod scopes;
#[cfg(feature = "sessions")] // the 2025 session path
mod session_tasks;
#[cfg(feature = "sessions")] // the 2025 session path
mod sessions;
mod store_refusals;
mod streams;
mod typed;
#[cfg(feature = "sessions")] // the 2025 session path
mod waits;

use std::collections::BTreeSet;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use http::Method;
use serde_json::{json, Value};
use tasks_core::TaskStatus;
use tasks_http::BodyError;
use tasks_test_support::dispatcher::*;
use tasks_test_support::events::wait_status;
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
use tasks_test_support::tools::*;

fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

fn set<'a>(items: &[&'a str]) -> BTreeSet<&'a str> {
    items.iter().copied().collect()
}

fn b64(text: &str) -> String {
    format!("=?base64?{}?=", STANDARD.encode(text))
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// A synchronous `CallToolResult`: complete, no task fields.
fn assert_sync_result(result: &Value, text: &str) {
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(text_of(result), text, "{result}");
    for absent in ["taskId", "status", "task", "requestState", "inputRequests"] {
        assert!(result.get(absent).is_none(), "{absent} in {result}");
    }
}

/// A `CreateTaskResult`: flat, `resultType: "task"`, no payload.
fn assert_create_result(result: &Value) {
    assert_eq!(
        keys(result),
        set(&[
            "resultType",
            "taskId",
            "status",
            "statusMessage",
            "createdAt",
            "lastUpdatedAt",
            "ttlMs",
            "pollIntervalMs",
            "_meta"
        ]),
        "{result}"
    );
    assert_eq!(result["resultType"], "task");
    assert_eq!(result["status"], "working");
    assert_eq!(result["statusMessage"], "Task accepted");
    assert_eq!(result["taskId"].as_str().unwrap().len(), 32, "{result}");
    assert_eq!(result["createdAt"], result["lastUpdatedAt"]);
    assert!(result["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(result["ttlMs"], 3_600_000);
    assert_eq!(result["pollIntervalMs"], 100);
    assert_eq!(result["_meta"], server_meta());
}

fn ack() -> Value {
    json!({"resultType": "complete", "_meta": server_meta()})
}

// ---------------------------------------------------------------------------------------------
// The decision table (`TaskPolicy::decide`) and the not-declared cases (-32021: SEP-2663
// "Capability Negotiation", "Error Handling").
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn sync_tool_runs_synchronously_whether_or_not_tasks_are_declared() {
    let (d, _) = dispatcher();
    let before = d.runtime().stored_tasks().await.unwrap();
    for req in [
        Req::call("sync_echo", json!({"text": "a"})),
        Req::call("sync_echo", json!({"text": "a"})).tasks(),
        // A legacy `params.task` hint is ignored.
        Req::call("sync_echo", json!({"text": "a"}))
            .tasks()
            .param("task", json!({"ttl": 60000, "pollInterval": 100})),
    ] {
        let result = req.send(&d).await.result();
        assert_sync_result(&result, "echo: a");
        assert_eq!(result["_meta"], server_meta());
    }
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), before);
}

#[tokio::test]
async fn optional_tool_creates_a_task_only_when_declared() {
    let (d, _) = dispatcher();
    let result = Req::call("optional_job", json!({})).send(&d).await.result();
    assert_sync_result(&result, "optional done");
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), 0);

    let mut events = d.runtime().subscribe();
    let result = Req::call("optional_job", json!({}))
        .tasks()
        .send(&d)
        .await
        .result();
    assert_create_result(&result);
    let id = result["taskId"].as_str().unwrap();
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), 1);
    wait_status(&mut events, id, TaskStatus::Completed).await;
    let got = Req::get(id).tasks().send(&d).await.result();
    assert_eq!(got["status"], "completed");
    assert_eq!(text_of(&got["result"]), "optional done");
}

#[tokio::test]
async fn required_tool_creates_a_task_when_declared_and_is_32021_otherwise() {
    let (d, runs) = dispatcher();
    let error = Req::call("required_job", json!({}))
        .id(json!(5))
        .send(&d)
        .await
        .error(400, -32021, "Missing required client capability");
    assert_eq!(error["data"], tasks_missing_data());
    assert_eq!(
        error["data"]["requiredCapabilities"]["extensions"][TASKS],
        json!({})
    );
    assert_eq!(Runs::get(&runs.required_job), 0, "the handler never ran");
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), 0);

    let mut events = d.runtime().subscribe();
    let result = Req::call("required_job", json!({}))
        .tasks()
        .send(&d)
        .await
        .result();
    assert_create_result(&result);
    let id = result["taskId"].as_str().unwrap();
    wait_status(&mut events, id, TaskStatus::Completed).await;
    assert_eq!(Runs::get(&runs.required_job), 1);
}

#[tokio::test]
async fn a_task_is_readable_right_after_its_create_result() {
    let (d, _) = dispatcher();
    let id = create(&d, Req::call("block", json!({})).tasks()).await;
    let got = Req::get(&id).tasks().send(&d).await.result();
    assert_eq!(got["taskId"], id);
    assert_eq!(got["status"], "working");
    Req::cancel(&id).tasks().send(&d).await.result();
}

#[tokio::test]
async fn task_methods_without_the_declaration_are_32021_before_params_and_lookup() {
    let (d, _) = dispatcher();
    let existing = create(&d, Req::call("block", json!({})).tasks()).await;
    let cases = [
        Req::get("gate-test"),
        Req::update("gate-test", json!({})),
        Req::cancel("gate-test"),
        // Invalid params still lose to the capability check.
        Req::update("gate-test", json!("not an object")),
        Req::update("gate-test", json!({"": 1})),
        Req::task_method("tasks/update", "gate-test"),
        Req::new("tasks/get")
            .param("taskId", json!(42))
            .header("mcp-name", "42"),
        Req::new("tasks/cancel").header("mcp-name", "x"),
        Req::get(&"x".repeat(300)),
        // An existing task is not revealed either.
        Req::get(&existing),
        Req::cancel(&existing),
        // Other capabilities do not stand in for Tasks.
        Req::get("gate-test")
            .elicitation()
            .cap("extensions", json!({})),
    ];
    for (i, req) in cases.into_iter().enumerate() {
        let error = req.id(json!(i)).send(&d).await.error(
            400,
            -32021,
            "Missing required client capability",
        );
        assert_eq!(error["data"], tasks_missing_data(), "case {i}");
    }
    // The existing task was not cancelled by the undeclared request.
    let got = Req::get(&existing).tasks().send(&d).await.result();
    assert_eq!(got["status"], "working");
    Req::cancel(&existing).tasks().send(&d).await.result();
}

#[tokio::test]
async fn tasks_extension_settings_must_be_empty() {
    let (d, _) = dispatcher();
    for req in [
        Req::new("server/discover"),
        Req::call("sync_echo", json!({})),
        Req::get("gate-test"),
    ] {
        req.cap("extensions", json!({TASKS: {"mode": "fast"}}))
            .send(&d)
            .await
            .error(400, -32602, "The Tasks extension defines no settings");
    }
    Req::new("server/discover")
        .cap("extensions", json!({TASKS: true}))
        .send(&d)
        .await
        .error(400, -32602, "The Tasks extension defines no settings");
}

// ---------------------------------------------------------------------------------------------
// Admission (the order of `tasks_core::plan::admit`).
// ---------------------------------------------------------------------------------------------

/// One request failing every step; each line fixes the step that failed and shows the next.
#[tokio::test]
async fn admission_order_step_by_step() {
    let (d, _) = dispatcher();
    let task = create(&d, Req::call("block", json!({})).tasks()).await;

    // 1. Host/Origin → 403 (even for a GET with a broken body and no MCP headers).
    let bad = || {
        Req::new("bogus/method")
            .http_method(Method::GET)
            .header("host", "evil.example.com")
            .header("origin", "http://evil.example.com")
            .without("mcp-protocol-version")
            .without("mcp-method")
            .body("not json")
    };
    bad()
        .send(&d)
        .await
        .anonymous_error(403, -32600, "Forbidden: Host or Origin is not allowed");
    // 1b. A good Host with an evil Origin is still 403.
    bad().header("host", HOST).send(&d).await.anonymous_error(
        403,
        -32600,
        "Forbidden: Host or Origin is not allowed",
    );
    // 2. HTTP method → 405.
    let bad = || {
        bad()
            .header("host", HOST)
            .header("origin", "http://127.0.0.1:3000")
    };
    bad().send(&d).await.anonymous_error(
        405,
        -32600,
        "Method not allowed: the MCP endpoint accepts POST",
    );
    // 2b. A body declared as something other than JSON → 415 (a missing Content-Type is fine).
    let bad = || bad().http_method(Method::POST);
    for content_type in [
        "text/plain",
        "application/jsonx",
        "multipart/form-data; boundary=x",
    ] {
        bad()
            .header("content-type", content_type)
            .send(&d)
            .await
            .anonymous_error(415, -32600, "Content-Type must be application/json");
    }
    bad()
        .append("content-type", "application/json")
        .send(&d)
        .await
        .anonymous_error(415, -32600, "Content-Type must be application/json");
    for accepted in ["application/json; charset=utf-8", "Application/JSON"] {
        bad()
            .header("content-type", accepted)
            .send(&d)
            .await
            .anonymous_error(400, -32700, "Parse error");
    }
    bad()
        .without("content-type")
        .send(&d)
        .await
        .anonymous_error(400, -32700, "Parse error");
    // 3. Parse → -32700, then the JSON-RPC shape → -32600.
    bad()
        .send(&d)
        .await
        .anonymous_error(400, -32700, "Parse error");
    bad().body("[]").send(&d).await.anonymous_error(
        400,
        -32600,
        "Batch requests are not supported: send one message per POST",
    );
    // From here on the body is the built message: bogus/method with a v999.0.0 _meta.
    let bad = || {
        Req::new("bogus/method")
            .id(json!("ladder"))
            .version("v999.0.0")
            .without("mcp-protocol-version")
            .without("mcp-method")
            .no_meta()
    };
    // 4. A notification is accepted before any header check.
    let reply = bad().notification().send(&d).await;
    assert_eq!(reply.status, 202);
    assert!(reply.is_empty());
    // 5. MCP-Protocol-Version.
    bad()
        .send(&d)
        .await
        .error(400, -32020, "Missing MCP-Protocol-Version header");
    let bad = || bad().header("mcp-protocol-version", VERSION);
    // 6. Mcp-Method.
    bad()
        .send(&d)
        .await
        .error(400, -32020, "Missing Mcp-Method header");
    bad()
        .header("mcp-method", "tools/list")
        .send(&d)
        .await
        .error(
            400,
            -32020,
            "Mcp-Method header does not match the request method",
        );
    let bad = || bad().header("mcp-method", "bogus/method");
    // 7. Required _meta → -32602 (the headers are valid).
    bad()
        .send(&d)
        .await
        .error(400, -32602, "params._meta is required");
    let bad = || bad().meta(json!({META_VERSION: "v999.0.0", META_CAPS: {}}));
    // 8. Header version vs body version → -32020.
    bad().send(&d).await.error(
        400,
        -32020,
        "MCP-Protocol-Version header does not match the request _meta protocolVersion",
    );
    // 9. Supported version → -32022.
    let error = bad()
        .header("mcp-protocol-version", "v999.0.0")
        .send(&d)
        .await
        .error(400, -32022, "Unsupported protocol version");
    assert_eq!(
        error["data"],
        json!({"supported": [VERSION], "requested": "v999.0.0"})
    );
    // 10. Known method → -32601, HTTP 404.
    let bad = || bad().meta(json!({META_VERSION: VERSION, META_CAPS: {}}));
    bad().send(&d).await.error(404, -32601, "Method not found");
    // 11. Mcp-Name for a task method.
    let bad = || Req::get(&task).id(json!("ladder")).without("mcp-name");
    bad()
        .send(&d)
        .await
        .error(400, -32020, "Missing Mcp-Name header");
    // 13. Capability → -32021.
    let bad = || bad().header("mcp-name", &task);
    bad()
        .send(&d)
        .await
        .error(400, -32021, "Missing required client capability");
    // Then params → -32602, then lookup → -32602.
    let bad = || bad().tasks();
    bad()
        .param("taskId", json!(42))
        .header("mcp-name", "42")
        .send(&d)
        .await
        .error(400, -32602, "A non-empty taskId is required");
    bad()
        .param("taskId", json!("missing-task"))
        .header("mcp-name", "missing-task")
        .send(&d)
        .await
        .error(400, -32602, "Unknown or inaccessible taskId");
    // And everything right.
    let got = bad().send(&d).await.result();
    assert_eq!(got["taskId"], task);
    Req::cancel(&task).tasks().send(&d).await.result();
}

#[tokio::test]
async fn host_and_origin_checks_are_403() {
    let (d, _) = dispatcher();
    let forbidden = [
        Req::new("server/discover").header("host", "evil.example.com"),
        Req::new("server/discover")
            .header("host", "evil.example.com")
            .header("origin", "http://evil.example.com"),
        Req::new("server/discover").header("origin", "http://evil.example.com"),
        Req::new("server/discover").header("origin", "null"),
        Req::new("server/discover").header("origin", "http://127.0.0.1.evil.example.com"),
        Req::new("server/discover").without("host"),
        Req::new("server/discover").header("host", "localhost.evil.example.com:3000"),
    ];
    for req in forbidden {
        req.send(&d)
            .await
            .anonymous_error(403, -32600, "Forbidden: Host or Origin is not allowed");
    }
    for (host, origin) in [
        ("127.0.0.1:3000", Some("http://127.0.0.1:3000")),
        ("localhost:8080", Some("http://localhost:8080")),
        ("LOCALHOST", None),
        ("[::1]:3000", Some("http://[::1]:3000")),
        ("127.0.0.1", None),
    ] {
        let mut req = Req::new("server/discover").header("host", host);
        if let Some(origin) = origin {
            req = req.header("origin", origin);
        }
        req.send(&d).await.result();
    }
}

#[tokio::test]
async fn only_post_on_the_endpoint_is_served() {
    let (d, _) = dispatcher();
    for method in [Method::GET, Method::DELETE, Method::PUT, Method::OPTIONS] {
        Req::new("server/discover")
            .http_method(method)
            .send(&d)
            .await
            .anonymous_error(
                405,
                -32600,
                "Method not allowed: the MCP endpoint accepts POST",
            );
    }
    // The dispatcher is path-agnostic: the mount point is the endpoint (a server answers other
    // paths itself: tests/tests/http_e2e/mount_http.rs).
    for path in ["/", "/mcp/", "/api/mcp", "/MCP"] {
        let result = Req::new("server/discover")
            .path(path)
            .send(&d)
            .await
            .result();
        assert_eq!(result["resultType"], "complete");
    }
}

#[tokio::test]
async fn body_errors_from_the_transport() {
    let (d, _) = dispatcher();
    Req::new("server/discover")
        .body_error(BodyError::TooLarge(1024))
        .send(&d)
        .await
        .anonymous_error(413, -32600, "Request body is larger than 1024 bytes");
    Req::new("server/discover")
        .body_error(BodyError::Incomplete)
        .send(&d)
        .await
        .anonymous_error(400, -32700, "Parse error");
    // The head is checked before the body.
    Req::new("server/discover")
        .header("host", "evil.example.com")
        .body_error(BodyError::TooLarge(1024))
        .send(&d)
        .await
        .anonymous_error(403, -32600, "Forbidden: Host or Origin is not allowed");
    Req::new("server/discover")
        .http_method(Method::GET)
        .body_error(BodyError::TooLarge(1024))
        .send(&d)
        .await
        .anonymous_error(
            405,
            -32600,
            "Method not allowed: the MCP endpoint accepts POST",
        );
}

/// One case of the table in `tasks-core/tests/call_plan/envelope_rules.rs` (which has every
/// case): the adapter hands the body it read to the core and answers without an id.
#[tokio::test]
async fn unparseable_bodies_are_32700() {
    let (d, _) = dispatcher();
    let deep_arrays = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    Req::new("server/discover")
        .body(deep_arrays)
        .send(&d)
        .await
        .anonymous_error(400, -32700, "Parse error");
}

/// One case of the table in `tasks-core/tests/call_plan/envelope_rules.rs` (which has every
/// case): a readable integer id is echoed even when the rest of the message is invalid.
#[tokio::test]
async fn bodies_that_are_not_one_request_are_32600() {
    let (d, _) = dispatcher();
    Req::new("server/discover")
        .body_json(json!({"jsonrpc": "1.0", "id": 1, "method": "server/discover"}))
        .send(&d)
        .await
        .error(400, -32600, "jsonrpc must be \"2.0\"");
}

#[tokio::test]
async fn notifications_are_accepted_with_202_and_no_body() {
    let (d, runs) = dispatcher();
    for req in [
        Req::new("notifications/cancelled").notification(),
        // No MCP headers, no _meta, unknown method: still only acknowledged.
        Req::new("notifications/whatever")
            .notification()
            .without("mcp-protocol-version")
            .without("mcp-method")
            .no_meta(),
        // A "notification" naming a tool call never runs it.
        Req::call("sync_echo", json!({})).notification(),
    ] {
        let reply = req.send(&d).await;
        assert_eq!(reply.status, 202);
        assert!(reply.is_empty(), "{reply:?}");
    }
    assert_eq!(Runs::get(&runs.sync_echo), 0);
}

/// One case of the table in `tasks-core/tests/call_plan/header_rules.rs` (which has every
/// case): the adapter reads the header off the request and puts the core's refusal, `data`
/// included, on the wire.
#[tokio::test]
async fn protocol_version_header_rules() {
    let (d, _) = dispatcher();
    let error = Req::new("server/discover")
        .id(json!("v"))
        .version("2025-11-25")
        .send(&d)
        .await
        .error(400, -32022, "Unsupported protocol version");
    assert_eq!(
        error["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
    );
}

/// One case of the table in `tasks-core/tests/call_plan/header_rules.rs` (which has every
/// case): a header the adapter hands over twice is refused.
#[tokio::test]
async fn mcp_method_header_rules() {
    let (d, _) = dispatcher();
    Req::new("tools/list")
        .id(json!("m"))
        .append("mcp-method", "tools/list")
        .send(&d)
        .await
        .error(400, -32020, "Mcp-Method header is repeated");
}

/// One case of the table in `tasks-core/tests/call_plan/envelope_rules.rs` (which has every
/// case).
#[tokio::test]
async fn required_meta_is_32602_with_http_400_even_with_valid_headers() {
    let (d, _) = dispatcher();
    Req::get("t")
        .id(json!("meta"))
        .no_meta()
        .send(&d)
        .await
        .error(400, -32602, "params._meta is required");
}

/// One case of the table in `tasks-core/tests/call_plan/envelope_rules.rs` (which has every
/// case): the adapter answers the core's -32601 with HTTP 404.
#[tokio::test]
async fn unknown_and_removed_methods_are_404_even_without_mcp_name() {
    let (d, _) = dispatcher();
    let reply = Req::new("tasks/list")
        .tasks()
        .id(json!("tasks/list"))
        .send(&d)
        .await;
    assert!(!reply.text().contains("mcp-name"));
    reply.error(404, -32601, "Method not found");
}

/// One refusal and one base64 name of the table in
/// `tasks-core/tests/call_plan/header_rules.rs` (which has every case), on a real task: the
/// refusal leaves it alone, the decoded name reads it.
#[tokio::test]
async fn mcp_name_rules_on_tasks_get() {
    let (d, _) = dispatcher();
    let task = create(&d, Req::call("block", json!({})).tasks()).await;
    Req::cancel(&task)
        .tasks()
        .id(json!("name"))
        .header("mcp-name", b64("other"))
        .send(&d)
        .await
        .error(
            400,
            -32020,
            "Mcp-Name header does not match the request params",
        );
    let got = Req::get(&task)
        .tasks()
        .header("mcp-name", b64(&task))
        .send(&d)
        .await
        .result();
    assert_eq!(
        (&got["taskId"], &got["status"]),
        (&json!(task), &json!("working"))
    );
    Req::cancel(&task).tasks().send(&d).await.result();
}

/// One case of the table in `tasks-core/tests/call_plan/header_rules.rs` (which has every
/// case): the refused call never runs the tool.
#[tokio::test]
async fn mcp_name_rules_on_tools_call() {
    let (d, runs) = dispatcher();
    Req::call("sync_echo", json!({"text": "n"}))
        .id(json!(3))
        .header("mcp-name", "SYNC_ECHO")
        .send(&d)
        .await
        .error(
            400,
            -32020,
            "Mcp-Name header does not match the request params",
        );
    assert_eq!(Runs::get(&runs.sync_echo), 0, "rejected calls never ran");
}

// ---------------------------------------------------------------------------------------------
// tasks/* params (`tasks_core::plan::plan_task_method`) and unknown ids (-32602: SEP-2663 "Error Handling").
// ---------------------------------------------------------------------------------------------

/// One case of the table in `tasks-core/tests/call_plan/params_rules.rs` (which has every
/// case), and what only the store answers: a valid id at the length limit is looked up.
#[tokio::test]
async fn tasks_params_validation_table() {
    let (d, _) = dispatcher();
    let long_utf8 = "\u{e9}".repeat(129); // 258 bytes, 129 characters
    let at_limit = "\u{e9}".repeat(128);
    let get = |id: &str| {
        Req::new("tasks/get")
            .tasks()
            .param("taskId", json!(id))
            .header("mcp-name", b64(id))
    };
    get(&long_utf8).id(json!(5)).send(&d).await.error(
        400,
        -32602,
        "taskId is longer than 256 bytes",
    );
    get(&at_limit)
        .send(&d)
        .await
        .error(400, -32602, "Unknown or inaccessible taskId");
}

#[tokio::test]
async fn unknown_task_ids_are_32602_on_all_three_methods() {
    let (d, _) = dispatcher();
    let id = "tasks-conformance-nonexistent-12345";
    for req in [
        Req::get(id),
        Req::update(id, json!({"confirm": accept(json!({}))})),
        Req::update(id, json!({})),
        Req::cancel(id),
    ] {
        req.tasks().id(json!("unknown")).send(&d).await.error(
            400,
            -32602,
            "Unknown or inaccessible taskId",
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The status payloads (SEP-2663 "Task Status") and the acknowledgements ("Task Update Requests",
// "Task Cancellation").
// ---------------------------------------------------------------------------------------------

const BASE: &[&str] = &[
    "resultType",
    "taskId",
    "status",
    "createdAt",
    "lastUpdatedAt",
    "ttlMs",
    "pollIntervalMs",
    "_meta",
];

fn detailed_keys(extra: &[&'static str]) -> BTreeSet<&'static str> {
    BASE.iter().chain(extra).copied().collect()
}

#[tokio::test]
async fn tasks_get_payload_for_each_status() {
    let (d, _) = dispatcher();
    let mut events = d.runtime().subscribe();
    let get = |id: &str| Req::get(id).tasks().elicitation();

    // working
    let working = create(&d, Req::call("block", json!({})).tasks()).await;
    let got = get(&working).send(&d).await.result();
    assert_eq!(keys(&got), detailed_keys(&["statusMessage"]), "{got}");
    assert_eq!(
        (&got["resultType"], &got["status"], &got["statusMessage"]),
        (
            &json!("complete"),
            &json!("working"),
            &json!("Task accepted")
        )
    );

    // input_required
    let parked = create(&d, Req::call("park", json!({})).tasks().elicitation()).await;
    wait_status(&mut events, &parked, TaskStatus::InputRequired).await;
    let got = get(&parked).send(&d).await.result();
    assert_eq!(
        keys(&got),
        detailed_keys(&["statusMessage", "inputRequests"]),
        "{got}"
    );
    assert_eq!(got["status"], "input_required");
    assert_eq!(got["statusMessage"], "Waiting for input: confirm");
    assert_eq!(
        got["inputRequests"],
        json!({"confirm": {"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "Proceed?",
            "requestedSchema": {"type": "object", "properties": {"answer": {"type": "string"}}}
        }}})
    );

    // completed
    let completed = create(&d, Req::call("required_job", json!({})).tasks()).await;
    wait_status(&mut events, &completed, TaskStatus::Completed).await;
    let got = get(&completed).send(&d).await.result();
    assert_eq!(keys(&got), detailed_keys(&["result"]), "{got}");
    assert_eq!(got["status"], "completed");
    assert_eq!(
        got["result"],
        json!({"resultType": "complete", "isError": false,
               "content": [{"type": "text", "text": "required done"}]})
    );

    // failed
    let failed = create(&d, Req::call("explode", json!({})).tasks()).await;
    wait_status(&mut events, &failed, TaskStatus::Failed).await;
    let got = get(&failed).send(&d).await.result();
    assert_eq!(
        keys(&got),
        detailed_keys(&["statusMessage", "error"]),
        "{got}"
    );
    assert_eq!(got["status"], "failed");
    assert_eq!(got["statusMessage"], "Tool exploded");
    assert_eq!(
        got["error"],
        json!({"code": -32603, "message": "Tool exploded"})
    );

    // cancelled
    let ack_result = Req::cancel(&working).tasks().send(&d).await.result();
    assert_eq!(ack_result, ack());
    let got = get(&working).send(&d).await.result();
    assert_eq!(keys(&got), detailed_keys(&["statusMessage"]), "{got}");
    assert_eq!(got["status"], "cancelled");
    assert_eq!(got["statusMessage"], "Cancellation requested");
    assert!(got["lastUpdatedAt"].as_str() >= got["createdAt"].as_str());

    Req::cancel(&parked).tasks().send(&d).await.result();
}

#[tokio::test]
async fn update_and_cancel_acknowledge_with_an_empty_result() {
    let (d, _) = dispatcher();
    let mut events = d.runtime().subscribe();
    let parked = create(&d, Req::call("park", json!({})).tasks().elicitation()).await;
    wait_status(&mut events, &parked, TaskStatus::InputRequired).await;

    // Unknown keys: acked, nothing changes.
    let reply = Req::update(&parked, json!({"unknown-key": {"ignored": true}}))
        .tasks()
        .id(json!("u1"))
        .send(&d)
        .await;
    assert_eq!(reply.result(), ack());
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": "u1", "result": ack()})
    );
    let got = Req::get(&parked).tasks().send(&d).await.result();
    assert_eq!(got["status"], "input_required");
    // An empty update is acked too.
    assert_eq!(
        Req::update(&parked, json!({}))
            .tasks()
            .send(&d)
            .await
            .result(),
        ack()
    );

    // The answer resumes the task.
    let reply = Req::update(
        &parked,
        json!({"confirm": accept(json!({"answer": "yes"}))}),
    )
    .tasks()
    .id(json!(12))
    .send(&d)
    .await;
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": 12, "result": ack()})
    );
    wait_status(&mut events, &parked, TaskStatus::Completed).await;
    let got = Req::get(&parked).tasks().send(&d).await.result();
    assert_eq!(text_of(&got["result"]), "confirmed: yes");

    // Terminal tasks: update and cancel are acked and change nothing.
    for req in [
        Req::update(&parked, json!({"confirm": accept(json!({"answer": "no"}))})),
        Req::cancel(&parked),
    ] {
        assert_eq!(req.tasks().send(&d).await.result(), ack());
    }
    let again = Req::get(&parked).tasks().send(&d).await.result();
    assert_eq!(again, got);

    // Cancel of a working task.
    let blocked = create(&d, Req::call("block", json!({})).tasks()).await;
    let reply = Req::cancel(&blocked).tasks().id(json!("c")).send(&d).await;
    assert_eq!(
        reply.json(),
        json!({"jsonrpc": "2.0", "id": "c", "result": ack()})
    );
    assert_eq!(
        Req::get(&blocked).tasks().send(&d).await.result()["status"],
        "cancelled"
    );
}

#[tokio::test]
async fn server_info_meta_is_on_every_result() {
    let (d, _) = dispatcher();
    let discover = Req::new("server/discover").send(&d).await.result();
    assert_eq!(
        discover["capabilities"],
        json!({"tools": {}, "extensions": {TASKS: {}}})
    );
    assert_eq!(discover["supportedVersions"], json!([VERSION]));
    assert!(discover.get("serverInfo").is_none());
    let list = Req::new("tools/list").send(&d).await.result();
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "sync_echo",
            "optional_job",
            "required_job",
            "park",
            "block",
            "explode",
            "interview",
            "sample",
            "compose",
            "strict"
        ]
    );
    for tool in list["tools"].as_array().unwrap() {
        assert!(tool.get("execution").is_none() && tool.get("taskSupport").is_none());
    }
    // Every other result kind is checked by `Reply::result` throughout this file.
    let input = Req::call("interview", json!({}))
        .elicitation()
        .send(&d)
        .await
        .result();
    assert_eq!(input["_meta"], server_meta());
    let invalid = Req::call("strict", json!({})).send(&d).await.result();
    assert_eq!(invalid["_meta"], server_meta());
}

// ---------------------------------------------------------------------------------------------
// MRTR (MCP 2026-07-28 basic/patterns/mrtr).
// ---------------------------------------------------------------------------------------------

fn interview() -> Req {
    Req::call("interview", json!({})).elicitation()
}

fn input_required_state(result: &Value) -> String {
    assert_eq!(result["resultType"], "input_required", "{result}");
    assert_eq!(
        keys(result),
        set(&["resultType", "inputRequests", "requestState", "_meta"]),
        "{result}"
    );
    result["requestState"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn mrtr_rounds_carry_earlier_answers_and_each_state_differs() {
    let (d, _) = dispatcher();
    let r1 = interview().send(&d).await.result();
    let s1 = input_required_state(&r1);
    assert_eq!(
        r1["inputRequests"],
        json!({"first": {"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "First?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
        }}})
    );

    let r2 = interview()
        .id(json!(2))
        .param(
            "inputResponses",
            json!({"first": accept(json!({"name": "Ada"}))}),
        )
        .param("requestState", json!(s1))
        .send(&d)
        .await
        .result();
    let s2 = input_required_state(&r2);
    assert_eq!(keys(&r2["inputRequests"]), set(&["second"]));
    assert_ne!(s1, s2, "each round's requestState differs");

    // Round 3 sends only the newest answer; the state carries the first.
    let r3 = interview()
        .id(json!(3))
        .param(
            "inputResponses",
            json!({"second": accept(json!({"name": "Bob"}))}),
        )
        .param("requestState", json!(s2))
        .send(&d)
        .await
        .result();
    assert_sync_result(&r3, "first=Ada second=Bob");

    // The same round twice yields two different states.
    let again = interview().send(&d).await.result();
    assert_ne!(input_required_state(&again), s1);

    // Without a state, a synchronous run takes the answers as sent, each checked when the
    // tool asks (runner scenario input-required-result-ignore-extra-params).
    let direct = interview()
        .param(
            "inputResponses",
            json!({"first": accept(json!({"name": "X"})), "second": accept(json!({"name": "Y"})),
                   "never_asked": {"action": "maybe"}}),
        )
        .send(&d)
        .await
        .result();
    assert_sync_result(&direct, "first=X second=Y");
    interview()
        .param("inputResponses", json!({"first": {"action": "maybe"}}))
        .send(&d)
        .await
        .error(
            400,
            -32602,
            "Invalid input response for first: action must be accept, decline or cancel",
        );

    // Answers to keys the state did not ask are ignored too: round 2's state asked `second`
    // only, so a `first` sent with it does not replace Ada.
    let r3b = interview()
        .id(json!(4))
        .param(
            "inputResponses",
            json!({"first": accept(json!({"name": "Mallory"})),
                   "second": accept(json!({"name": "Bob"}))}),
        )
        .param("requestState", json!(s2))
        .send(&d)
        .await
        .result();
    assert_sync_result(&r3b, "first=Ada second=Bob");
}

#[tokio::test]
async fn a_malformed_mrtr_answer_is_invalid_params_and_nothing_runs() {
    let (d, _) = dispatcher();
    let s1 = input_required_state(&interview().send(&d).await.result());
    for (bad, reason) in [
        (
            json!({"action": "maybe", "content": {"name": "A"}}),
            "action must be accept, decline or cancel",
        ),
        (
            json!({"name": "A"}),
            "action must be accept, decline or cancel",
        ),
        (
            accept(json!({"name": 7})),
            "content does not match the requested schema",
        ),
        (
            json!({"action": "accept"}),
            "accepted content must be an object of primitive values",
        ),
    ] {
        let error = interview()
            .id(json!("bad"))
            .param("inputResponses", json!({"first": bad.clone()}))
            .param("requestState", json!(s1))
            .send(&d)
            .await
            .error(
                400,
                -32602,
                &format!("Invalid input response for first: {reason}"),
            );
        assert!(error.get("data").is_none(), "{bad}");
    }
    // A decline is an answer: the call goes on to the next question.
    let declined = interview()
        .param(
            "inputResponses",
            json!({"first": {"action": "decline", "content": {"name": "A"}}}),
        )
        .param("requestState", json!(s1))
        .send(&d)
        .await
        .result();
    assert_eq!(
        keys(&declined["inputRequests"]),
        set(&["second"]),
        "{declined}"
    );
}

#[tokio::test]
async fn tampered_or_foreign_request_state_is_rejected() {
    let (d, _) = dispatcher();
    let s1 = input_required_state(&interview().send(&d).await.result());
    let retry = |state: Value| {
        interview()
            .id(json!("retry"))
            .param(
                "inputResponses",
                json!({"first": accept(json!({"name": "A"}))}),
            )
            .param("requestState", state)
    };
    for bad in [
        format!("{s1}-TAMPERED"),
        format!("x{s1}"),
        s1.replace('.', ""),
        String::new(),
        "tasks-composition-round-1".into(),
    ] {
        retry(json!(bad))
            .send(&d)
            .await
            .error(400, -32602, "Invalid requestState");
    }
    retry(json!(42))
        .send(&d)
        .await
        .error(400, -32602, "requestState must be a string");

    // Bound to the arguments and the tool.
    let with_args = |args: Value| {
        Req::call("interview", args).elicitation().param(
            "inputResponses",
            json!({"first": accept(json!({"name": "A"}))}),
        )
    };
    let s_args = input_required_state(
        &Req::call("interview", json!({"x": 1}))
            .elicitation()
            .send(&d)
            .await
            .result(),
    );
    with_args(json!({"x": 2}))
        .param("requestState", json!(s_args))
        .send(&d)
        .await
        .error(400, -32602, "Invalid requestState");
    with_args(json!({}))
        .param("requestState", json!(s_args))
        .send(&d)
        .await
        .error(400, -32602, "Invalid requestState");
    let r = with_args(json!({"x": 1}))
        .param("requestState", json!(s_args))
        .send(&d)
        .await
        .result();
    assert_eq!(r["resultType"], "input_required", "the round advanced: {r}");
    Req::call("compose", json!({}))
        .elicitation()
        .param("requestState", json!(s1))
        .send(&d)
        .await
        .error(400, -32602, "Invalid requestState");

    // Another process with its own random key rejects it; a shared secret accepts it.
    let (other, _) = dispatcher();
    retry(json!(s1))
        .send(&other)
        .await
        .error(400, -32602, "Invalid requestState");
    let runs = std::sync::Arc::new(Runs::default());
    let a = builder(&runs).state_secret(b"shared").build();
    let b = builder(&runs).state_secret(b"shared").build();
    let s = input_required_state(&interview().send(&a).await.result());
    let r = retry(json!(s)).send(&b).await.result();
    assert_eq!(keys(&r["inputRequests"]), set(&["second"]));
}

#[tokio::test]
async fn input_requests_need_the_declared_client_capability() {
    let (d, _) = dispatcher();
    let error = Req::call("interview", json!({}))
        .id(json!("cap"))
        .send(&d)
        .await
        .error(400, -32021, "Missing required client capability");
    assert_eq!(
        error["data"],
        json!({"requiredCapabilities": {"elicitation": {"form": {}}}})
    );
    // Declaring Tasks does not stand in for elicitation.
    Req::call("interview", json!({}))
        .tasks()
        .send(&d)
        .await
        .error(400, -32021, "Missing required client capability");
    let error = Req::call("sample", json!({}))
        .elicitation()
        .send(&d)
        .await
        .error(400, -32021, "Missing required client capability");
    assert_eq!(
        error["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    let sampled = Req::call("sample", json!({}))
        .cap("sampling", json!({}))
        .send(&d)
        .await
        .result();
    assert_eq!(keys(&sampled["inputRequests"]), set(&["draft"]));
}

#[tokio::test]
async fn per_call_policy_creates_the_task_on_the_final_round() {
    let (d, _) = dispatcher();
    let compose = || Req::call("compose", json!({})).elicitation().tasks();
    let r1 = compose().send(&d).await.result();
    let state = input_required_state(&r1);
    assert_eq!(keys(&r1["inputRequests"]), set(&["user_name"]));
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), 0);

    let answers = json!({"user_name": accept(json!({"name": "Alice"}))});
    // The final round needs the Tasks declaration (the policy is now `required`).
    Req::call("compose", json!({}))
        .elicitation()
        .param("inputResponses", answers.clone())
        .param("requestState", json!(state))
        .send(&d)
        .await
        .error(400, -32021, "Missing required client capability");
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), 0);

    let mut events = d.runtime().subscribe();
    let r2 = compose()
        .id(json!(2))
        .param("inputResponses", answers)
        .param("requestState", json!(state))
        .send(&d)
        .await
        .result();
    assert_create_result(&r2);
    let id = r2["taskId"].as_str().unwrap();
    wait_status(&mut events, id, TaskStatus::Completed).await;
    let got = Req::get(id).tasks().send(&d).await.result();
    assert_eq!(text_of(&got["result"]), "Hello, Alice (task: true)");
}

/// One case of the table in `tasks-core/tests/call_plan/params_rules.rs` (which has every
/// case): the tool is looked up among the runtime's.
#[tokio::test]
async fn tools_call_params_are_checked() {
    let (d, _) = dispatcher();
    Req::call("no_such_tool", json!({}))
        .elicitation()
        .tasks()
        .send(&d)
        .await
        .error(400, -32602, "Unknown tool");
}

#[tokio::test]
async fn invalid_arguments_are_a_tool_error_and_create_no_task() {
    let (d, runs) = dispatcher();
    let before = d.runtime().stored_tasks().await.unwrap();
    for (args, text) in [
        (
            json!({"count": "x"}),
            "Invalid arguments at /count: violates inputSchema rule /properties/count/type (expected integer)",
        ),
        (
            json!({}),
            "Invalid arguments at /: violates inputSchema rule /required (`count` is required)",
        ),
    ] {
        for declared in [true, false] {
            let mut req = Req::call("strict", args.clone());
            if declared {
                req = req.tasks();
            }
            let result = req.send(&d).await.result();
            assert_eq!(
                result,
                json!({"resultType": "complete", "isError": true,
                       "content": [{"type": "text", "text": text}], "_meta": server_meta()})
            );
        }
    }
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), before);
    assert_eq!(Runs::get(&runs.strict), 0);
    // Valid arguments do create the task.
    create(&d, Req::call("strict", json!({"count": 3})).tasks()).await;
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), before + 1);
}

// ---------------------------------------------------------------------------------------------
// Ids, scopes and the listen stream.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn errors_and_results_echo_string_and_integer_ids() {
    let (d, _) = dispatcher();
    for id in [
        json!("abc-1"),
        json!(""),
        json!(7),
        json!(0),
        json!(-3),
        json!(u64::MAX),
        json!(i64::MIN),
    ] {
        let with = |req: Req| req.id(id.clone());
        let reply = with(Req::new("server/discover")).send(&d).await;
        assert_eq!(reply.json()["id"], id);
        reply.result();
        with(Req::new("server/discover").without("mcp-method"))
            .send(&d)
            .await
            .error(400, -32020, "Missing Mcp-Method header");
        with(Req::new("server/discover").no_meta())
            .send(&d)
            .await
            .error(400, -32602, "params._meta is required");
        with(Req::new("server/discover").version("v9"))
            .send(&d)
            .await
            .error(400, -32022, "Unsupported protocol version");
        with(Req::new("tasks/list"))
            .send(&d)
            .await
            .error(404, -32601, "Method not found");
        with(Req::get("x"))
            .send(&d)
            .await
            .error(400, -32021, "Missing required client capability");
        with(Req::get("x").tasks()).send(&d).await.error(
            400,
            -32602,
            "Unknown or inaccessible taskId",
        );
        with(Req::call("required_job", json!({})))
            .send(&d)
            .await
            .error(400, -32021, "Missing required client capability");
    }
}

#[tokio::test]
async fn scopes_isolate_principals() {
    let d = scoped_dispatcher();
    // No credentials: 401, decided on the head before the body is parsed.
    Req::new("server/discover")
        .send(&d)
        .await
        .anonymous_error(401, -32600, "Unauthorized");
    Req::new("server/discover")
        .body("not json")
        .send(&d)
        .await
        .anonymous_error(401, -32600, "Unauthorized");
    // Host/Origin still come first.
    Req::new("server/discover")
        .header("host", "evil.example.com")
        .send(&d)
        .await
        .anonymous_error(403, -32600, "Forbidden: Host or Origin is not allowed");

    let mut events = d.runtime().subscribe();
    let parked = create(
        &d,
        Req::call("park", json!({}))
            .tasks()
            .elicitation()
            .bearer("alice"),
    )
    .await;
    wait_status(&mut events, &parked, TaskStatus::InputRequired).await;
    for req in [
        Req::get(&parked),
        Req::update(
            &parked,
            json!({"confirm": accept(json!({"answer": "bob"}))}),
        ),
        Req::cancel(&parked),
    ] {
        req.tasks().bearer("bob").send(&d).await.error(
            400,
            -32602,
            "Unknown or inaccessible taskId",
        );
    }
    let got = Req::get(&parked)
        .tasks()
        .bearer("alice")
        .send(&d)
        .await
        .result();
    assert_eq!(got["status"], "input_required", "bob changed nothing");

    // Bob's listen drops Alice's id silently.
    let mut stream = Req::listen(json!({"taskIds": [parked]}))
        .tasks()
        .bearer("bob")
        .id(json!("bob-sub"))
        .send(&d)
        .await
        .into_stream();
    let acknowledged = next_message(&mut stream).await;
    assert_eq!(acknowledged["params"]["notifications"], json!({}));

    // MRTR state is bound to the principal.
    let state = input_required_state(
        &Req::call("interview", json!({}))
            .elicitation()
            .bearer("alice")
            .send(&d)
            .await
            .result(),
    );
    Req::call("interview", json!({}))
        .elicitation()
        .bearer("bob")
        .param(
            "inputResponses",
            json!({"first": accept(json!({"name": "B"}))}),
        )
        .param("requestState", json!(state))
        .send(&d)
        .await
        .error(400, -32602, "Invalid requestState");

    assert_eq!(
        Req::cancel(&parked)
            .tasks()
            .bearer("alice")
            .send(&d)
            .await
            .result(),
        ack()
    );
}

#[tokio::test]
async fn listen_acknowledges_accepted_ids_and_streams_status_changes() {
    let (d, _) = dispatcher();
    let mut events = d.runtime().subscribe();
    let parked = create(&d, Req::call("park", json!({})).tasks().elicitation()).await;
    wait_status(&mut events, &parked, TaskStatus::InputRequired).await;

    let reply = Req::listen(json!({"taskIds": [parked, "unknown-id", parked]}))
        .tasks()
        .id(json!("sub-1"))
        .send(&d)
        .await;
    assert_eq!(reply.status, 200);
    let mut stream = reply.into_stream();
    assert_eq!(
        next_message(&mut stream).await,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"_meta": {SUBSCRIPTION_ID: "sub-1"},
                          "notifications": {"taskIds": [parked]}}})
    );
    Req::update(&parked, json!({"confirm": accept(json!({"answer": "ok"}))}))
        .tasks()
        .send(&d)
        .await
        .result();
    let mut statuses = Vec::new();
    loop {
        let message = next_message(&mut stream).await;
        assert_eq!(message["method"], "notifications/tasks", "{message}");
        assert!(message.get("id").is_none());
        let params = &message["params"];
        assert_eq!(params["taskId"], parked);
        assert_eq!(params["_meta"], json!({SUBSCRIPTION_ID: "sub-1"}));
        assert!(params.get("resultType").is_none(), "{params}");
        let status = params["status"].as_str().unwrap().to_owned();
        if status == "completed" {
            assert_eq!(text_of(&params["result"]), "confirmed: ok");
            statuses.push(status);
            break;
        }
        statuses.push(status);
    }
    assert_eq!(statuses, ["working", "completed"]);
}

/// One case of the table in `tasks-core/tests/call_plan/params_rules.rs` (which has every
/// case), and the acknowledgements, which are the server's: unknown ids are dropped, the
/// subscription id keeps its type, and filters this server does not honour are left out.
#[tokio::test]
async fn listen_filter_rules() {
    let (d, _) = dispatcher();
    // taskIds needs the Tasks declaration.
    let error = Req::listen(json!({"taskIds": ["a"]}))
        .id(json!("l"))
        .send(&d)
        .await
        .error(400, -32021, "Missing required client capability");
    assert_eq!(error["data"], tasks_missing_data());
    let ids: Vec<String> = (0..100).map(|i| format!("id-{i}")).collect();
    let mut stream = Req::listen(json!({"taskIds": ids, "toolsListChanged": true}))
        .tasks()
        .id(json!(77))
        .send(&d)
        .await
        .into_stream();
    assert_eq!(
        next_message(&mut stream).await["params"],
        json!({"_meta": {SUBSCRIPTION_ID: 77}, "notifications": {}})
    );
    // Without taskIds no declaration is needed.
    let mut stream = Req::listen(json!({})).send(&d).await.into_stream();
    assert_eq!(
        next_message(&mut stream).await["method"],
        "notifications/subscriptions/acknowledged"
    );
}
