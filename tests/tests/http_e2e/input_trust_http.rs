//! Over HTTP against the fixture: what an answer means, what a client is asked, idempotent MRTR
//! task creation, status messages, and what a 2025-era client is told (docs/hardening.md,
//! "Client input"). The other tests of the 2025-era answer are in
//! `crates/tasks-http/tests/dispatcher/legacy_era.rs`.

use serde_json::{json, Value};
use tasks_core::TaskStatus;
use tasks_test_support::client::*;
use tasks_test_support::events::{wait_for, wait_status};
use tasks_test_support::fixture::*;
use tasks_test_support::protocol::*;

fn text_of(task: &Value) -> &str {
    task["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

async fn stored(server: &tasks_http::RunningServer) -> usize {
    server.dispatcher().runtime().stored_tasks().await.unwrap()
}

#[tokio::test]
async fn confirm_delete_reads_the_action_not_the_content() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let mut events = server.dispatcher().runtime().subscribe();
    for (answer, expected) in [
        // The minimal case: a decline carrying confirm: true is no consent.
        (
            json!({"action": "decline", "content": {"confirm": true}}),
            "Delete declined: nothing deleted",
        ),
        (
            json!({"action": "cancel", "content": {"confirm": true}}),
            "Delete cancelled: nothing deleted",
        ),
        (
            json!({"action": "accept", "content": {"confirm": false}}),
            "Delete confirmed: false",
        ),
        (
            json!({"action": "accept", "content": {"confirm": true}}),
            "Delete confirmed: true",
        ),
    ] {
        let created = client
            .create_task("confirm_delete", json!({"filename": "q3-report.txt"}))
            .await;
        let id = created["taskId"].as_str().unwrap();
        wait_status(&mut events, id, TaskStatus::InputRequired).await;
        let parked = client.get_task(id).await;
        assert_eq!(parked["statusMessage"], "Waiting for input: confirm-delete");
        let ack = client
            .update_task(id, json!({"confirm-delete": answer.clone()}))
            .await;
        assert_eq!(ack["resultType"], "complete");
        let done = client.poll_until_terminal(id).await;
        assert_eq!(done["status"], "completed", "{answer}: {done}");
        assert_eq!(text_of(&done), expected, "{answer}");
    }
}

#[tokio::test]
async fn a_malformed_answer_is_32602_and_the_task_stays_parked() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let mut events = server.dispatcher().runtime().subscribe();
    let created = client.create_task("multi_input", json!({})).await;
    let id = created["taskId"].as_str().unwrap();
    wait_for(&mut events, id, |t| {
        t.status() == TaskStatus::InputRequired
            && t.status_message() == Some("Waiting for input: first-input, second-input")
    })
    .await;
    let before = client.get_task(id).await;
    for (bad, reason) in [
        (
            json!({"action": "maybe", "content": {"name": "x"}}),
            "action must be accept, decline or cancel",
        ),
        (
            json!({"action": "accept", "content": {"name": 12}}),
            "content does not match the requested schema",
        ),
        (
            json!({"content": {"name": "x"}}),
            "action must be accept, decline or cancel",
        ),
    ] {
        let reply = client
            .request(
                "tasks/update",
                json!({"taskId": id, "inputResponses": {
                    "first-input": {"action": "accept", "content": {"name": "good"}},
                    "second-input": bad,
                }}),
                tasks_caps(),
            )
            .await;
        reply.error(
            400,
            -32602,
            &format!("Invalid input response for second-input: {reason}"),
        );
    }
    let after = client.get_task(id).await;
    assert_eq!(after, before, "nothing of a refused update was applied");
    // Keys never asked are still ignored, whatever they hold.
    let ack = client
        .update_task(id, json!({"never-asked": {"action": "maybe"}}))
        .await;
    assert_eq!(ack["resultType"], "complete");
    assert_eq!(client.get_task(id).await, before);
    client.cancel_task(id).await;
}

#[tokio::test]
async fn a_client_is_never_asked_for_what_it_did_not_declare() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let form = json!({"requiredCapabilities": {"elicitation": {"form": {}}}});
    for caps in [
        json!({"extensions": {TASKS: {}}}),
        json!({"sampling": {}, "extensions": {TASKS: {}}}),
        json!({"elicitation": {"url": {}}, "extensions": {TASKS: {}}}),
        json!({"elicitation": {"url": {}}}),
        json!({}),
    ] {
        for tool in ["confirm_delete", "multi_input"] {
            let reply = client
                .request(
                    "tools/call",
                    json!({"name": tool, "arguments": {"filename": "a.txt"}}),
                    caps.clone(),
                )
                .await;
            let error = reply.error(400, -32021, "Missing required client capability");
            assert_eq!(error["data"], form, "{tool} {caps}");
        }
        // The synchronous MRTR path: never a form to a client that cannot show one.
        let reply = client
            .request(
                "tools/call",
                json!({"name": "test_input_required_result_elicitation", "arguments": {}}),
                caps.clone(),
            )
            .await;
        let error = reply.error(400, -32021, "Missing required client capability");
        assert_eq!(error["data"], form, "{caps}");
    }
    assert_eq!(
        stored(&server).await,
        0,
        "no task was stored for a refused call"
    );
    // Sampling is asked only of a client that declared it.
    let reply = client
        .request(
            "tools/call",
            json!({"name": "test_missing_capability", "arguments": {}}),
            json!({"elicitation": {}}),
        )
        .await;
    let error = reply.error(400, -32021, "Missing required client capability");
    assert_eq!(
        error["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
}

#[tokio::test]
async fn mrtr_answers_are_checked_and_unasked_keys_ignored() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let caps = json!({"elicitation": {}});
    let tool = "test_input_required_result_elicitation";
    let round1 = client
        .request(
            "tools/call",
            json!({"name": tool, "arguments": {}}),
            caps.clone(),
        )
        .await
        .result();
    let state = round1["requestState"].as_str().unwrap().to_owned();
    for (bad, reason) in [
        (
            json!({"action": "maybe", "content": {"name": "Alice"}}),
            "action must be accept, decline or cancel",
        ),
        (
            json!({"action": "accept", "content": {}}),
            "content does not match the requested schema",
        ),
    ] {
        client
            .request(
                "tools/call",
                json!({"name": tool, "arguments": {}, "requestState": state,
                       "inputResponses": {"user_name": bad}}),
                caps.clone(),
            )
            .await
            .error(
                400,
                -32602,
                &format!("Invalid input response for user_name: {reason}"),
            );
    }
    let declined = client
        .request(
            "tools/call",
            json!({"name": tool, "arguments": {}, "requestState": state,
                   "inputResponses": {"user_name": {"action": "decline", "content": {"name": "Eve"}}}}),
            caps.clone(),
        )
        .await
        .result();
    assert_eq!(
        declined["content"][0]["text"], "Hello, there!",
        "a decline names nobody"
    );
    // Without the state, a synchronous run checks each answer when the tool asks; keys it
    // never asks for are ignored.
    let stateless = client
        .request(
            "tools/call",
            json!({"name": tool, "arguments": {},
                   "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Eve"}},
                                      "extra": {"action": "maybe"}}}),
            caps.clone(),
        )
        .await
        .result();
    assert_eq!(
        stateless["content"][0]["text"], "Hello, Eve!",
        "{stateless}"
    );
    client
        .request(
            "tools/call",
            json!({"name": tool, "arguments": {},
                   "inputResponses": {"user_name": {"action": "accept", "content": {"name": 7}}}}),
            caps,
        )
        .await
        .error(
            400,
            -32602,
            "Invalid input response for user_name: content does not match the requested schema",
        );
}

#[tokio::test]
async fn replaying_the_final_mrtr_round_answers_with_the_same_task() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let caps = tasks_caps();
    let round1 = client
        .request(
            "tools/call",
            json!({"name": "test_tool_with_task", "arguments": {}}),
            caps.clone(),
        )
        .await
        .result();
    let state = round1["requestState"].as_str().unwrap().to_owned();
    let retry = |name: &str| {
        json!({"name": "test_tool_with_task", "arguments": {}, "requestState": state,
               "inputResponses": {"user_name": {"action": "accept", "content": {"name": name}}}})
    };
    let first = client
        .request("tools/call", retry("Alice"), caps.clone())
        .await
        .result();
    let replay = client
        .request("tools/call", retry("Alice"), caps.clone())
        .await
        .result();
    assert_eq!(first["resultType"], "task", "{first}");
    assert_eq!(
        replay["taskId"], first["taskId"],
        "a replay is the same task"
    );
    let done = client
        .poll_until_terminal(first["taskId"].as_str().unwrap())
        .await;
    assert_eq!(text_of(&done), "Hello, Alice");
    let again = client
        .request("tools/call", retry("Alice"), caps.clone())
        .await
        .result();
    assert_eq!(again["taskId"], first["taskId"]);
    assert_eq!(
        again["status"], "completed",
        "answered with the task as it is now"
    );
    let other = client
        .request("tools/call", retry("Bob"), caps)
        .await
        .result();
    assert_ne!(
        other["taskId"], first["taskId"],
        "other answers are another task"
    );
    assert_eq!(
        stored(&server).await,
        2,
        "the tool ran once per distinct retry"
    );
}

#[tokio::test]
async fn a_2025_initialize_is_told_the_supported_versions() {
    // The 2025 revisions served open a session (tests/tests/http_e2e/sessions_http.rs); any other is
    // refused naming every version served. The table with the session path off is in
    // crates/tasks-http/tests/dispatcher/legacy_era.rs.
    let server = start(settings()).await;
    let client = Client::of(&server);
    for (requested, header) in [
        ("2024-11-05", None),
        ("2025-03-26", Some("2025-03-26")),
        ("2026-07-28", None),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": requested, "capabilities": {},
            "clientInfo": {"name": "inspector-cli", "version": "0.17.0"}}});
        let mut request = client
            .http()
            .post(client.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(version) = header {
            request = request.header("mcp-protocol-version", version);
        }
        let reply = Client::send(request).await;
        let error = reply.error(400, -32022, "Unsupported protocol version");
        assert_eq!(
            error["data"],
            json!({"supported": ["2026-07-28", "2025-11-25", "2025-06-18"],
                   "requested": requested}),
            "{header:?}"
        );
    }
}
