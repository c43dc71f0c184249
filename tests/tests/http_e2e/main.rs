//! End-to-end tests over loopback HTTP against the real conformance fixture: admission
//! statuses and headers, task lifecycles, input parking, cancellation, the
//! `subscriptions/listen` SSE stream, and shutdown.

// Modules rather than binaries of their own (each integration-test binary links the
// whole stack, and linking is slow): their tests are named `<module>::<test>`.
mod core_wire_http;
mod elicit_as_http;
mod hardening_http;
mod input_trust_http;
mod log_secrets;
mod mount_http;
mod next_runner_http;
mod rmcp_listen_http;
mod session_input_http;
mod session_restart_http;
mod sessions_http;

use std::time::Duration;

use serde_json::{json, Value};
use tasks_core::TaskStatus;
use tasks_fixture::Settings;
use tasks_test_support::client::*;
use tasks_test_support::events::{wait_for, wait_status};
use tasks_test_support::fixture::*;
use tasks_test_support::protocol::*;
use tasks_test_support::sse::Sse;
use tasks_test_support::wait::WAIT_LIMIT;

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn assert_ack(result: &Value) {
    assert_eq!(keys(result), ["_meta", "resultType"], "{result}");
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["_meta"][SERVER_INFO]["name"], "tasks-fixture");
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_failures_have_their_status_and_a_json_body() {
    let server = start(settings()).await;
    let client = Client::of(&server);

    // 403: DNS-rebinding protection.
    let reply = Client::send_replacing(
        client.post(json!(1), "server/discover", json!({}), json!({})),
        &[
            ("host", "evil.example.com"),
            ("origin", "http://evil.example.com"),
        ],
    )
    .await;
    reply.error(403, -32600, "Forbidden: Host or Origin is not allowed");
    assert!(reply.body.get("id").is_none());
    // A matching loopback Origin is fine.
    let origin = format!("http://{}", server.local_addr());
    let reply = Client::send(
        client
            .post(json!(2), "server/discover", json!({}), json!({}))
            .header("origin", origin),
    )
    .await;
    assert_eq!(
        reply.result()["capabilities"]["extensions"][TASKS],
        json!({})
    );

    // 405: GET on the endpoint.
    let reply = Client::send(client.http().get(client.url())).await;
    reply.error(
        405,
        -32600,
        "Method not allowed: the MCP endpoint accepts POST",
    );

    // 404: an unknown (removed) method, echoing the id.
    let reply =
        Client::send(client.post(json!("removed"), "tasks/list", json!({}), tasks_caps())).await;
    reply.error(404, -32601, "Method not found");
    assert_eq!(reply.body["id"], "removed");

    // 400: a header mismatch, a parse error.
    Client::send_replacing(
        client.post(json!(3), "tools/list", json!({}), json!({})),
        &[("mcp-method", "TOOLS/LIST")],
    )
    .await
    .error(
        400,
        -32020,
        "Mcp-Method header does not match the request method",
    );
    Client::send(
        client
            .post(json!(4), "tools/list", json!({}), json!({}))
            .body("{not json"),
    )
    .await
    .error(400, -32700, "Parse error");

    // 202: a notification, with an empty body.
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": 1}});
    let reply = Client::send(
        client
            .http()
            .post(client.url())
            .header("content-type", "application/json")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-method", "notifications/cancelled")
            .body(serde_json::to_vec(&notification).unwrap()),
    )
    .await;
    assert_eq!((reply.status, &reply.body), (202, &Value::Null));

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_the_limit_are_413() {
    let server = start(Settings {
        max_body_bytes: 4096,
        ..settings()
    })
    .await;
    let client = Client::of(&server);
    let big = json!({"name": "greet", "arguments": {"name": "x".repeat(8192)}});

    // A declared Content-Length over the limit.
    let reply = Client::send(client.post(json!(1), "tools/call", big.clone(), json!({}))).await;
    reply.error(413, -32600, "Request body is larger than 4096 bytes");
    assert!(reply.body.get("id").is_none());

    // A chunked body without Content-Length, cut off while reading.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        vec![Ok(vec![b' '; 3000]), Ok(vec![b' '; 3000])];
    let reply = Client::send(client.post(json!(2), "tools/call", big, json!({})).body(
        reqwest::Body::wrap_stream(futures_util::stream::iter(chunks)),
    ))
    .await;
    reply.error(413, -32600, "Request body is larger than 4096 bytes");

    // Just under the limit is served.
    let reply = client
        .request(
            "tools/call",
            json!({"name": "greet", "arguments": {"name": "x".repeat(3000)}}),
            json!({}),
        )
        .await;
    assert_eq!(reply.result()["resultType"], "complete");

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_compute_lifecycle() {
    let server = start(settings()).await;
    let client = Client::of(&server);

    let created = client
        .create_task("slow_compute", json!({"seconds": 0.2, "label": "e2e-life"}))
        .await;
    assert_eq!(created["status"], "working");
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 100);
    for absent in ["result", "error", "inputRequests", "requestState", "task"] {
        assert!(created.get(absent).is_none(), "{absent}: {created}");
    }
    let id = created["taskId"].as_str().unwrap();

    let first = client.get_task(id).await;
    assert_eq!(first["taskId"], id);
    assert_eq!(first["resultType"], "complete");

    let done = client.poll_until_terminal(id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(text_of(&done["result"]), "Completed e2e-life");
    assert_eq!(done["result"]["isError"], false);
    assert!(done.get("statusMessage").is_none(), "{done}");
    assert!(done["lastUpdatedAt"].as_str() > done["createdAt"].as_str());

    // Without the declaration the same tool answers synchronously.
    let sync = client
        .request(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0, "label": "now"}}),
            json!({}),
        )
        .await
        .result();
    assert_eq!(sync["resultType"], "complete");
    assert_eq!(text_of(&sync), "Completed now");
    assert!(sync.get("taskId").is_none());

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirm_delete_parks_until_tasks_update() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let mut events = server.dispatcher().runtime().subscribe();

    let created = client
        .create_task("confirm_delete", json!({"filename": "e2e.txt"}))
        .await;
    let id = created["taskId"].as_str().unwrap();
    wait_status(&mut events, id, TaskStatus::InputRequired).await;

    let parked = client.get_task(id).await;
    assert_eq!(parked["status"], "input_required");
    assert_eq!(
        parked["inputRequests"],
        json!({"confirm-delete": {"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "Delete e2e.txt?",
            "requestedSchema": {"type": "object",
                                "properties": {"confirm": {"type": "boolean"}},
                                "required": ["confirm"]}}}})
    );

    let ack = client
        .update_task(
            id,
            json!({"confirm-delete": {"action": "accept", "content": {"confirm": true}}}),
        )
        .await;
    assert_ack(&ack);
    wait_status(&mut events, id, TaskStatus::Completed).await;
    let done = client.get_task(id).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(text_of(&done["result"]), "Delete confirmed: true");
    assert!(done.get("inputRequests").is_none());

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_input_accepts_partial_fulfillment() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let mut events = server.dispatcher().runtime().subscribe();

    let id = client.create_task("multi_input", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_for(&mut events, &id, |task| {
        matches!(task.state(), tasks_core::TaskState::InputRequired { input_requests }
                 if input_requests.as_map().len() == 2)
    })
    .await;
    let both = client.get_task(&id).await;
    assert_eq!(
        keys(&both["inputRequests"]),
        ["first-input", "second-input"]
    );

    let ack = client
        .update_task(
            &id,
            json!({"first-input": {"action": "accept",
                                   "content": {"name": "partial-1", "confirm": true}}}),
        )
        .await;
    assert_ack(&ack);
    let one_left = client.get_task(&id).await;
    assert_eq!(one_left["status"], "input_required");
    assert_eq!(keys(&one_left["inputRequests"]), ["second-input"]);

    assert_ack(
        &client
            .update_task(
                &id,
                json!({"second-input": {"action": "accept", "content": {"confirm": true}}}),
            )
            .await,
    );
    wait_status(&mut events, &id, TaskStatus::Completed).await;
    let done = client.get_task(&id).await;
    assert_eq!(
        text_of(&done["result"]),
        "Inputs received: partial-1, confirmed"
    );

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_long_slow_compute() {
    let server = start(settings()).await;
    let client = Client::of(&server);

    let id = client
        .create_task("slow_compute", json!({"seconds": 60, "label": "never"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(client.get_task(&id).await["status"], "working");
    assert_ack(&client.cancel_task(&id).await);
    // Cancellation is committed before the ack.
    let cancelled = client.get_task(&id).await;
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["statusMessage"], "Cancellation requested");
    for absent in ["result", "error", "inputRequests"] {
        assert!(cancelled.get(absent).is_none(), "{cancelled}");
    }
    // Idempotent on a terminal task.
    assert_ack(&client.cancel_task(&id).await);
    assert_eq!(client.get_task(&id).await, cancelled);
    // The worker gives its slot back once it sees the cancellation, which can be just after the
    // ack (asserting it at once failed about one run in 30).
    tokio::time::timeout(WAIT_LIMIT, async {
        while server.dispatcher().runtime().busy_workers() != 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the cancelled worker releases its slot");

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_streams_status_notifications_over_sse() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let mut events = server.dispatcher().runtime().subscribe();

    let id = client
        .create_task("confirm_delete", json!({"filename": "listen.txt"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_status(&mut events, &id, TaskStatus::InputRequired).await;

    let response = client
        .post(
            json!("listen-1"),
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [id, "no-such-task", id]}}),
            tasks_caps(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    assert_eq!(header("content-type").as_deref(), Some("text/event-stream"));
    assert_eq!(header("cache-control").as_deref(), Some("no-cache"));
    assert_eq!(header("x-accel-buffering").as_deref(), Some("no"));
    let mut sse = Sse::of(response);

    let ack = sse.next().await;
    assert_eq!(
        ack,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"_meta": {SUBSCRIPTION_ID: "listen-1"},
                          "notifications": {"taskIds": [id]}}})
    );

    assert_ack(
        &client
            .update_task(
                &id,
                json!({"confirm-delete": {"action": "accept", "content": {"confirm": false}}}),
            )
            .await,
    );
    let mut seen = Vec::new();
    loop {
        let message = sse.next().await;
        assert_eq!(message["method"], "notifications/tasks", "{message}");
        assert!(message.get("id").is_none());
        let params = &message["params"];
        assert_eq!(params["_meta"][SUBSCRIPTION_ID], "listen-1");
        assert!(params.get("resultType").is_none(), "{params}");
        assert_eq!(params["taskId"], id);
        for field in ["createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"] {
            assert!(params.get(field).is_some(), "{field}: {params}");
        }
        let status = params["status"].as_str().unwrap().to_owned();
        seen.push(status.clone());
        if status == "completed" {
            assert_eq!(text_of(&params["result"]), "Delete confirmed: false");
            break;
        }
        assert!(params.get("result").is_none());
    }
    assert_eq!(seen, ["working", "completed"]);
    drop(sse);

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_filter_errors() {
    let server = start(settings()).await;
    let client = Client::of(&server);

    let error = client
        .request(
            "subscriptions/listen",
            json!({"notifications": {"taskIds": ["a"]}}),
            json!({"elicitation": {}}),
        )
        .await
        .error(400, -32021, "Missing required client capability");
    assert_eq!(
        error["data"],
        json!({"requiredCapabilities": {"extensions": {TASKS: {}}}})
    );

    let ids: Vec<String> = (0..101).map(|i| format!("t-{i}")).collect();
    client
        .request(
            "subscriptions/listen",
            json!({"notifications": {"taskIds": ids}}),
            tasks_caps(),
        )
        .await
        .error(400, -32602, "taskIds lists more than 100 ids");

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_returns_and_stops_accepting() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    // A kept-alive connection from an earlier request must not hold shutdown up.
    client
        .request("server/discover", json!({}), json!({}))
        .await
        .result();
    let url = server.url();
    tokio::time::timeout(Duration::from_secs(3), server.shutdown())
        .await
        .expect("shutdown returns promptly");
    let refused = reqwest::Client::new().post(url).body("{}").send().await;
    assert!(refused.is_err(), "the port no longer accepts: {refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_is_not_held_up_by_a_closed_listen_stream() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let response = client
        .post(
            json!(1),
            "subscriptions/listen",
            json!({"notifications": {}}),
            json!({}),
        )
        .send()
        .await
        .unwrap();
    let mut sse = Sse::of(response);
    assert_eq!(
        sse.next().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    // The client going away ends the stream on the server.
    drop(sse);
    tokio::time::timeout(Duration::from_secs(3), server.shutdown())
        .await
        .expect("shutdown returns well before the grace period");
}
