//! 2025-11-25 tasks on a session, in process: the hinted `tools/call` and its nested
//! `CreateTaskResult` (with the hint's `ttl` clamped), `tasks/get` (flat, the 2025 status),
//! the blocking `tasks/result` with its input side channel, `tasks/cancel`, and
//! `notifications/tasks/status` on the session's GET stream; one task seen from both eras.

use futures_util::StreamExt as _;
use http::Method;
use serde_json::{json, Value};
use tasks_core::{TaskPolicy, TaskStatus};
use tasks_http::Dispatcher;
use tasks_runtime::{Tool, ToolError};
use tasks_test_support::dispatcher::*;
use tasks_test_support::events::{wait_for, wait_status};
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
use tasks_test_support::sessions::*;
use tasks_test_support::tools::*;

/// A hinted call of `tool`; returns the `task` of its `CreateTaskResult`.
async fn create(d: &Dispatcher, session: &str, tool: &str, hint: Value) -> Value {
    let reply = in_session(session, "tools/call")
        .param("name", json!(tool))
        .param("task", hint)
        .id(json!("c"))
        .send(d)
        .await;
    let result = legacy_result(&reply);
    assert_eq!(
        result.as_object().unwrap().len(),
        1,
        "only `task`: {result}"
    );
    result["task"].clone()
}

/// The 2025 status `tasks/get` answers for `task_id`.
async fn status_of(d: &Dispatcher, session: &str, task_id: &Value) -> Value {
    legacy_result(&task_method(session, "tasks/get", task_id).send(d).await)["status"].clone()
}

fn task_method(session: &str, method: &str, task_id: &Value) -> Req {
    in_session(session, method)
        .param("taskId", task_id.clone())
        .id(json!(7))
}

#[tokio::test]
async fn a_hinted_call_creates_a_task_followed_with_get_and_result() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let mut events = d.runtime().subscribe();
    let task = create(&d, &session, "optional_job", json!({"ttl": 60_000})).await;
    let id = task["taskId"].clone();
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60_000);
    assert_eq!(task["pollInterval"], 100);
    for field in ["createdAt", "lastUpdatedAt"] {
        assert!(task[field].is_string(), "{task}");
    }
    assert!(
        task.get("ttlMs").is_none() && task.get("resultType").is_none(),
        "{task}"
    );
    wait_status(&mut events, id.as_str().unwrap(), TaskStatus::Completed).await;
    let got = legacy_result(&task_method(&session, "tasks/get", &id).send(&d).await);
    assert_eq!(got["status"], "completed");
    assert_eq!(got["taskId"], id);
    assert!(
        got.get("result").is_none(),
        "no payload on tasks/get: {got}"
    );
    // tasks/result: the call's result with the related-task `_meta`, as often as asked.
    for _ in 0..2 {
        let body = task_method(&session, "tasks/result", &id)
            .send(&d)
            .await
            .json();
        assert_eq!(
            body["result"],
            json!({"content": [{"type": "text", "text": "optional done"}], "isError": false,
                   "_meta": {"io.modelcontextprotocol/related-task": {"taskId": id}}})
        );
    }
    // The asked ttl is clamped to the server's bounds.
    let short = create(&d, &session, "optional_job", json!({"ttl": 5})).await;
    assert_eq!(short["ttl"], 1_000);
    let long = create(&d, &session, "optional_job", json!({"ttl": u64::MAX})).await;
    assert_eq!(long["ttl"], 3_600_000);
    let default = create(&d, &session, "optional_job", json!({})).await;
    assert_eq!(default["ttl"], 3_600_000);
    // Unknown ids.
    task_method(&session, "tasks/get", &json!("nope"))
        .send(&d)
        .await
        .error(200, -32602, "Unknown or inaccessible taskId");
    task_method(&session, "tasks/result", &json!("nope"))
        .send(&d)
        .await
        .error(200, -32602, "Unknown or inaccessible taskId");
}

#[tokio::test]
async fn failures_show_as_failed_and_tasks_result_answers_the_stored_outcome() {
    let runs = std::sync::Arc::new(Runs::default());
    let oops = Tool::new("oops", "A tool error", |_ctx| async {
        Err::<Value, _>(ToolError::tool("it went wrong"))
    })
    .with_policy(TaskPolicy::Optional);
    let d = builder(&runs).tool(oops).build();
    let session = open(&d).await;
    let mut events = d.runtime().subscribe();
    let task = create(&d, &session, "explode", json!({})).await;
    let id = task["taskId"].clone();
    wait_status(&mut events, id.as_str().unwrap(), TaskStatus::Failed).await;
    assert_eq!(status_of(&d, &session, &id).await, "failed");
    task_method(&session, "tasks/result", &id)
        .send(&d)
        .await
        .error(200, -32603, "Tool exploded");
    // A tool error result fails the task in 2025-11-25, and completes it in 2026-07-28: one
    // task, two views.
    let task = create(&d, &session, "oops", json!({})).await;
    let id = task["taskId"].clone();
    let strict_id = id.as_str().unwrap().to_owned();
    let done = wait_for(&mut events, &strict_id, |t| t.is_terminal()).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(status_of(&d, &session, &id).await, "failed");
    let result = task_method(&session, "tasks/result", &id)
        .send(&d)
        .await
        .json();
    assert_eq!(result["result"]["isError"], true, "{result}");
    let modern = Req::get(&strict_id).tasks().send(&d).await.result();
    assert_eq!(modern["status"], "completed");
    assert_eq!(modern["result"]["isError"], true);
}

#[tokio::test]
async fn cancel_answers_the_cancelled_task_and_refuses_terminal_ones() {
    let d = std::sync::Arc::new(dispatcher().0);
    let session = open(&d).await;
    let task = create(&d, &session, "block", json!({})).await;
    let id = task["taskId"].clone();
    // A tasks/result waiting for the task streams (keep-alives) until it ends.
    let mut waiting = task_method(&session, "tasks/result", &id)
        .send(&d)
        .await
        .into_stream();
    let cancelled = legacy_result(&task_method(&session, "tasks/cancel", &id).send(&d).await);
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["taskId"], id);
    let answer = next_message(&mut waiting).await;
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["code"], -32602);
    assert_eq!(
        answer["error"]["message"],
        "Task was cancelled: it has no result"
    );
    assert!(waiting.next().await.is_none());
    task_method(&session, "tasks/cancel", &id)
        .send(&d)
        .await
        .error(200, -32602, "Task is already terminal");
    task_method(&session, "tasks/cancel", &json!("nope"))
        .send(&d)
        .await
        .error(200, -32602, "Unknown or inaccessible taskId");
}

#[tokio::test]
async fn tasks_result_carries_the_input_requests_and_the_answers_resume_the_task() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let mut events = d.runtime().subscribe();
    let task = create(&d, &session, "park", json!({})).await;
    let id = task["taskId"].clone();
    let task_id = id.as_str().unwrap().to_owned();
    wait_status(&mut events, &task_id, TaskStatus::InputRequired).await;
    assert_eq!(status_of(&d, &session, &id).await, "input_required");
    // A first tasks/result gets the request, then goes away without answering.
    let mut first = task_method(&session, "tasks/result", &id)
        .send(&d)
        .await
        .into_stream();
    let request = next_message(&mut first).await;
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Proceed?");
    assert_eq!(
        request["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": id})
    );
    drop(first);
    // The task waits on; its request is no longer outstanding on the closed stream.
    answer(
        &session,
        json!({"jsonrpc": "2.0", "id": request["id"], "result": accept(json!({"answer": "late"}))}),
    )
    .send(&d)
    .await
    .anonymous_error(400, -32600, "No outstanding request has this id");
    assert_eq!(status_of(&d, &session, &id).await, "input_required");
    // The next tasks/result sends it again; the answer resumes the task.
    let mut second = task_method(&session, "tasks/result", &id)
        .id(json!(8))
        .send(&d)
        .await
        .into_stream();
    let again = next_message(&mut second).await;
    assert_eq!(again["params"]["message"], "Proceed?");
    let reply = answer(
        &session,
        json!({"jsonrpc": "2.0", "id": again["id"], "result": accept(json!({"answer": "yes"}))}),
    )
    .send(&d)
    .await;
    assert_eq!(reply.status, 202);
    let done = next_message(&mut second).await;
    assert_eq!(done["id"], 8);
    assert_eq!(done["result"]["content"][0]["text"], "confirmed: yes");
    assert!(second.next().await.is_none());
    // The 2026 view of the same task has the answer in its history and the result.
    let modern = Req::get(&task_id).tasks().send(&d).await.result();
    assert_eq!(modern["status"], "completed");
}

#[tokio::test]
async fn an_error_answer_declines_an_elicitation() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let mut events = d.runtime().subscribe();
    let task = create(&d, &session, "park", json!({})).await;
    let id = task["taskId"].clone();
    wait_status(&mut events, id.as_str().unwrap(), TaskStatus::InputRequired).await;
    let mut stream = task_method(&session, "tasks/result", &id)
        .send(&d)
        .await
        .into_stream();
    let request = next_message(&mut stream).await;
    let reply = answer(
        &session,
        json!({"jsonrpc": "2.0", "id": request["id"],
               "error": {"code": -32601, "message": "no elicitation"}}),
    )
    .send(&d)
    .await;
    assert_eq!(reply.status, 202);
    let done = next_message(&mut stream).await;
    assert_eq!(done["result"]["content"][0]["text"], "confirmed: none");
}

#[tokio::test]
async fn status_notifications_reach_the_creating_session_only() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let other = open(&d).await;
    let mut mine = in_session(&session, "x")
        .http_method(Method::GET)
        .send(&d)
        .await
        .into_stream();
    let mut theirs = in_session(&other, "x")
        .http_method(Method::GET)
        .send(&d)
        .await
        .into_stream();
    let task = create(&d, &session, "optional_job", json!({})).await;
    let mut statuses = Vec::new();
    while statuses.last().map(String::as_str) != Some("completed") {
        let note = next_message(&mut mine).await;
        assert_eq!(note["method"], "notifications/tasks/status");
        assert_eq!(note["params"]["taskId"], task["taskId"]);
        assert!(note["params"]["ttl"].is_u64());
        assert!(note["params"].get("_meta").is_none());
        statuses.push(note["params"]["status"].as_str().unwrap().to_owned());
    }
    assert_eq!(statuses.last().unwrap(), "completed");
    let quiet = tokio::time::timeout(std::time::Duration::from_millis(200), theirs.next()).await;
    assert!(quiet.is_err(), "another session hears nothing: {quiet:?}");
}

#[tokio::test]
async fn tasks_are_scoped_to_the_caller_not_the_session() {
    let d = scoped_dispatcher();
    let open_as = |who: &'static str| {
        let d = &d;
        async move {
            let reply = initialize().bearer(who).send(d).await;
            reply.session_id.unwrap()
        }
    };
    let alice = open_as("alice").await;
    let task = {
        let reply = in_session(&alice, "tools/call")
            .bearer("alice")
            .param("name", json!("block"))
            .param("task", json!({}))
            .id(json!(1))
            .send(&d)
            .await;
        legacy_result(&reply)["task"].clone()
    };
    // Alice's next session (say after a restart of her client) finds the task.
    let alice_again = open_as("alice").await;
    let got = task_method(&alice_again, "tasks/get", &task["taskId"])
        .bearer("alice")
        .send(&d)
        .await;
    assert_eq!(legacy_result(&got)["status"], "working");
    // Bob cannot see it.
    let bob = open_as("bob").await;
    task_method(&bob, "tasks/get", &task["taskId"])
        .bearer("bob")
        .send(&d)
        .await
        .error(200, -32602, "Unknown or inaccessible taskId");
    let cancelled = task_method(&alice, "tasks/cancel", &task["taskId"])
        .bearer("alice")
        .send(&d)
        .await;
    assert_eq!(legacy_result(&cancelled)["status"], "cancelled");
}

/// Polls task `id` until `tasks/get` shows it `input_required`: the client names the task
/// (it read the `CreateTaskResult`), so from then on the GET stream may ask its questions.
async fn poll_until_parked(d: &Dispatcher, session: &str, id: &Value) {
    let mut events = d.runtime().subscribe();
    if status_of(d, session, id).await == "working" {
        wait_status(&mut events, id.as_str().unwrap(), TaskStatus::InputRequired).await;
        assert_eq!(status_of(d, session, id).await, "input_required");
    }
}

/// The next message of `stream` that is not a status notification.
async fn next_request(stream: &mut tasks_http::MessageStream) -> Value {
    loop {
        let message = next_message(stream).await;
        if message["method"] != "notifications/tasks/status" {
            return message;
        }
    }
}

#[tokio::test]
async fn without_a_tasks_result_the_get_stream_carries_the_input_requests() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let get = || in_session(&session, "x").http_method(Method::GET);
    let mut stream = get().send(&d).await.into_stream();
    let task = create(&d, &session, "park", json!({})).await;
    let id = task["taskId"].clone();
    poll_until_parked(&d, &session, &id).await;
    let request = next_request(&mut stream).await;
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(
        request["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": id})
    );
    // A tasks/result opened meanwhile waits without sending the request a second time.
    let mut result = task_method(&session, "tasks/result", &id)
        .send(&d)
        .await
        .into_stream();
    // A newer GET stream replaces this one: the request is sent again there, under a new id.
    let mut newer = get().send(&d).await.into_stream();
    let again = next_request(&mut newer).await;
    assert_eq!(again["method"], "elicitation/create");
    assert_ne!(again["id"], request["id"]);
    answer(
        &session,
        json!({"jsonrpc": "2.0", "id": request["id"], "result": accept(json!({"answer": "old"}))}),
    )
    .send(&d)
    .await
    .anonymous_error(400, -32600, "No outstanding request has this id");
    let reply = answer(
        &session,
        json!({"jsonrpc": "2.0", "id": again["id"], "result": accept(json!({"answer": "yes"}))}),
    )
    .send(&d)
    .await;
    assert_eq!(reply.status, 202);
    let done = next_message(&mut result).await;
    assert_eq!(done["result"]["content"][0]["text"], "confirmed: yes");
    drop(stream);
}

#[tokio::test]
async fn concurrent_creations_get_unique_ids_and_no_task_expires_before_its_ttl() {
    let d = std::sync::Arc::new(dispatcher().0);
    let session = open(&d).await;
    let creations = (0..20).map(|_| {
        let d = d.clone();
        let session = session.clone();
        tokio::spawn(async move { create(&d, &session, "block", json!({"ttl": 60_000})).await })
    });
    let mut ids = std::collections::BTreeSet::new();
    for creation in creations {
        let task = creation.await.unwrap();
        assert_eq!(task["ttl"], 60_000);
        ids.insert(task["taskId"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids.len(), 20, "unique task ids");
    // A reaper pass right after creation keeps every task: none is past its ttl.
    assert_eq!(d.runtime().reap_now().await.unwrap(), 0);
    for id in &ids {
        let task = legacy_result(
            &task_method(&session, "tasks/get", &json!(id))
                .send(&d)
                .await,
        );
        assert_eq!(task["status"], "working");
    }
}

#[tokio::test]
async fn a_missing_capability_is_refused_before_any_task_exists() {
    let runs = std::sync::Arc::new(Runs::default());
    let asks = Tool::new("asks", "Needs form elicitation", |_ctx| async {
        Ok(tasks_runtime::text_result("never"))
    })
    .with_policy(TaskPolicy::Optional)
    .requires_client([tasks_core::input::ClientCapability::ElicitationForm]);
    let d = builder(&runs).tool(asks).build();
    let reply = initialize()
        .param("capabilities", json!({"sampling": {}}))
        .send(&d)
        .await;
    let session = reply.session_id.unwrap();
    let error = in_session(&session, "tools/call")
        .param("name", json!("asks"))
        .param("task", json!({}))
        .id(json!(1))
        .send(&d)
        .await
        .error(200, -32021, "Missing required client capability");
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"elicitation": {"form": {}}})
    );
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), 0);
}

#[tokio::test]
async fn tasks_list_pages_the_callers_tasks_and_is_offered_only_to_identified_callers() {
    // The shared scope (no principal): no `tasks/list`.
    let (d, _) = dispatcher();
    let reply = initialize().send(&d).await;
    let capabilities = legacy_result(&reply)["capabilities"]["tasks"].clone();
    assert!(capabilities.get("list").is_none(), "{capabilities}");
    in_session(&reply.session_id.unwrap(), "tasks/list")
        .id(json!(1))
        .send(&d)
        .await
        .error(200, -32601, "Method not found");

    // Room for 101 tasks running at once.
    let runs = std::sync::Arc::new(Runs::default());
    let d = builder(&runs)
        .limits(tasks_runtime::Limits::default().with_max_workers(200))
        .principal_fn(bearer_principal)
        .build();
    let open_as = |who: &'static str| {
        let d = &d;
        async move {
            let reply = initialize().bearer(who).send(d).await;
            assert_eq!(
                legacy_result(&reply)["capabilities"]["tasks"]["list"],
                json!({})
            );
            reply.session_id.unwrap()
        }
    };
    let alice = open_as("alice").await;
    let mut created = std::collections::BTreeSet::new();
    for _ in 0..101 {
        let reply = in_session(&alice, "tools/call")
            .bearer("alice")
            .param("name", json!("optional_job"))
            .param("task", json!({}))
            .id(json!("c"))
            .send(&d)
            .await;
        let task = legacy_result(&reply);
        created.insert(task["task"]["taskId"].as_str().expect("a task").to_owned());
    }
    // Alice's next session pages through all of them, in id order.
    let again = open_as("alice").await;
    let list = |cursor: Option<Value>| {
        let mut req = in_session(&again, "tasks/list")
            .bearer("alice")
            .id(json!(2));
        if let Some(cursor) = cursor {
            req = req.param("cursor", cursor);
        }
        req
    };
    let first = legacy_result(&list(None).send(&d).await);
    let page: Vec<String> = first["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(page.len(), 100);
    assert!(page.windows(2).all(|w| w[0] < w[1]), "id order");
    let second = legacy_result(&list(Some(first["nextCursor"].clone())).send(&d).await);
    assert!(
        second.get("nextCursor").is_none(),
        "the last page: {second}"
    );
    let last = second["tasks"][0]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(second["tasks"].as_array().unwrap().len(), 1);
    let mut listed: std::collections::BTreeSet<String> = page.into_iter().collect();
    listed.insert(last);
    assert_eq!(listed, created, "every task the caller can get, once");
    // Bob sees none of them.
    let bob = open_as("bob").await;
    let bobs = in_session(&bob, "tasks/list")
        .bearer("bob")
        .id(json!(3))
        .send(&d)
        .await;
    assert_eq!(legacy_result(&bobs), json!({"tasks": []}));
    list(Some(json!("not a cursor")))
        .send(&d)
        .await
        .error(200, -32602, "Invalid cursor");
}

#[tokio::test]
async fn the_2026_task_methods_reach_a_task_created_in_a_session() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let task = create(&d, &session, "block", json!({})).await;
    let id = task["taskId"].as_str().unwrap().to_owned();
    // Same scope, the 2026-07-28 path: tasks/get sees it, tasks/cancel acknowledges.
    let modern = Req::get(&id).tasks().send(&d).await.result();
    assert_eq!(modern["status"], "working");
    assert_eq!(modern["taskId"], id.as_str());
    let ack = Req::cancel(&id).tasks().send(&d).await.result();
    assert_eq!(ack["resultType"], "complete");
    let legacy = legacy_result(
        &task_method(&session, "tasks/get", &json!(id))
            .send(&d)
            .await,
    );
    assert_eq!(legacy["status"], "cancelled");
    // Without the Tasks declaration, the 2026 path refuses as it does for any task (-32021).
    Req::get(&id)
        .send(&d)
        .await
        .error(400, -32021, "Missing required client capability");
}

/// SEP-2663 "Backward Compatibility" (its version table): a 2026-07-28 client that declares
/// only the 2025-11-25 `tasks` capability is non-declaring for the extension, yet may
/// `tasks/get` and `tasks/cancel` the tasks a 2025 session created; a task of the extension,
/// an unknown id and `tasks/update` get the non-declaring -32021.
#[tokio::test]
async fn a_legacy_only_2026_client_reaches_the_tasks_of_the_2025_flow_only() {
    let (d, _) = dispatcher();
    let legacy = |req: Req| req.cap("tasks", json!({"requests": {"tools": {"call": {}}}}));
    let refused = "Missing required client capability";
    let session = open(&d).await;
    let task = create(&d, &session, "block", json!({})).await;
    let id = task["taskId"].as_str().unwrap().to_owned();
    let got = legacy(Req::get(&id)).send(&d).await.result();
    assert_eq!(got["status"], "working", "{got}");
    assert_eq!(got["taskId"], id.as_str());
    assert_eq!(got["resultType"], "complete");
    let error = legacy(Req::update(&id, json!({"k": {"action": "accept"}})))
        .send(&d)
        .await
        .error(400, -32021, refused);
    assert_eq!(error["data"], tasks_missing_data());
    // A task of the extension (same caller) reads as unknown would: -32021.
    let modern =
        tasks_test_support::dispatcher::create(&d, Req::call("block", json!({})).tasks()).await;
    for target in [modern.as_str(), "no-such-task"] {
        for req in [Req::get(target), Req::cancel(target)] {
            legacy(req).send(&d).await.error(400, -32021, refused);
        }
    }
    assert_eq!(
        Req::get(&modern).tasks().send(&d).await.result()["status"],
        "working",
        "the refused cancel left the extension's task alone"
    );
    // The 2025 task is cancelled from the 2026 path, and its session sees it so.
    let ack = legacy(Req::cancel(&id)).send(&d).await.result();
    assert_eq!(ack["resultType"], "complete");
    let seen = legacy_result(
        &task_method(&session, "tasks/get", &json!(id))
            .send(&d)
            .await,
    );
    assert_eq!(seen["status"], "cancelled");
    assert_eq!(
        legacy(Req::get(&id)).send(&d).await.result()["status"],
        "cancelled"
    );
}

#[tokio::test]
async fn a_tasks_result_takes_over_the_questions_when_the_get_stream_that_asked_them_closes() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let mut stream = in_session(&session, "x")
        .http_method(Method::GET)
        .send(&d)
        .await
        .into_stream();
    let task = create(&d, &session, "park", json!({})).await;
    let id = task["taskId"].clone();
    poll_until_parked(&d, &session, &id).await;
    let asked = next_request(&mut stream).await;
    assert_eq!(asked["method"], "elicitation/create");
    // The GET stream holds the delivery: a tasks/result opened now waits without asking...
    let mut result = task_method(&session, "tasks/result", &id)
        .send(&d)
        .await
        .into_stream();
    tokio::task::yield_now().await;
    // ...until that stream closes with the question unanswered: then it asks it itself.
    drop(stream);
    let again = next_message(&mut result).await;
    assert_eq!(again["method"], "elicitation/create", "{again}");
    assert_ne!(again["id"], asked["id"]);
    let reply = answer(
        &session,
        json!({"jsonrpc": "2.0", "id": again["id"], "result": accept(json!({"answer": "yes"}))}),
    )
    .send(&d)
    .await;
    assert_eq!(reply.status, 202);
    let done = next_message(&mut result).await;
    assert_eq!(done["result"]["content"][0]["text"], "confirmed: yes");
}

/// On a 2025 session the caller's principal reaches the tool too: in a synchronous call and
/// in a hinted call's task.
#[tokio::test]
async fn a_sessions_tools_see_the_principal_that_opened_it() {
    let runs = std::sync::Arc::new(Runs::default());
    let whoami = Tool::new("whoami", "Names its caller", |ctx| async move {
        let caller = ctx.principal().map_or("nobody", |p| p.as_str()).to_owned();
        Ok(tasks_runtime::text_result(caller))
    })
    .with_policy(TaskPolicy::Optional);
    let d = builder(&runs)
        .tool(whoami)
        .principal_fn(bearer_principal)
        .build();
    let reply = initialize().bearer("alice").send(&d).await;
    let session = reply.session_id.clone().expect("a session id");
    let call = in_session(&session, "tools/call")
        .bearer("alice")
        .param("name", json!("whoami"))
        .id(json!(1))
        .send(&d)
        .await;
    assert_eq!(legacy_result(&call)["content"][0]["text"], "alice");
    let task = legacy_result(
        &in_session(&session, "tools/call")
            .bearer("alice")
            .param("name", json!("whoami"))
            .param("task", json!({}))
            .id(json!(2))
            .send(&d)
            .await,
    )["task"]["taskId"]
        .clone();
    let result = task_method(&session, "tasks/result", &task)
        .bearer("alice")
        .send(&d)
        .await
        .json();
    assert_eq!(result["result"]["content"][0]["text"], "alice", "{result}");
}
