//! `_meta["io.modelcontextprotocol/relatedTaskIds"]`, the draft's advisory list of tasks a
//! request relates to ("Related Task IDs", a draft SEP for the Tasks extension: the key is
//! client-to-server only, "A server MAY ignore it entirely", "MUST NOT treat the presence of the
//! key as a request to create a task", and no response field reports it). This server ignores
//! it: every request that may carry it, in both eras and whatever the value, is answered
//! exactly as without it, the tasks it names are left alone, and no answer echoes it.

use serde_json::{json, Value};
use tasks_test_support::dispatcher::*;
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
#[cfg(feature = "sessions")]
use tasks_test_support::sessions::*;

const RELATED: &str = "io.modelcontextprotocol/relatedTaskIds";

/// `req` with `RELATED: value` added to the `_meta` it would send.
fn related(req: Req, value: Value) -> Req {
    let mut meta = req.params_value()["_meta"].clone();
    meta[RELATED] = value;
    req.meta(meta)
}

/// Values a client may send, well formed or not: each is ignored alike.
fn values(known: &str) -> Vec<Value> {
    let many: Vec<String> = (0..1_000).map(|i| format!("t{i}")).collect();
    vec![
        json!([known]),
        json!([]),
        json!([known, known]),
        json!(["no-such-task", known]),
        json!(many),
        json!("not-an-array"),
        json!([1, null, {"taskId": known}]),
        Value::Null,
    ]
}

/// `reply`'s body, checked not to mention the key anywhere.
fn unechoed(text: String) -> String {
    assert!(!text.contains("relatedTaskIds"), "echoed: {text}");
    text
}

#[tokio::test]
async fn a_2026_call_and_the_task_methods_ignore_related_task_ids() {
    let (d, _) = dispatcher();
    // A task the values name: left as it is by every request below.
    let known = create(&d, Req::call("block", json!({})).tasks()).await;
    let sync = || Req::call("sync_echo", json!({"text": "hi"}));
    let plain = sync().send(&d).await.text();
    for value in values(&known) {
        // A synchronous call: the same answer, byte for byte.
        let text = unechoed(related(sync(), value.clone()).send(&d).await.text());
        assert_eq!(text, plain, "{value}");
        // A task-creating call creates one task, of its own id, as without the key.
        let reply = related(Req::call("required_job", json!({})).tasks(), value.clone())
            .send(&d)
            .await;
        let created = reply.result();
        unechoed(reply.text());
        assert_eq!(created["resultType"], "task", "{value}");
        assert_ne!(created["taskId"], known.as_str(), "{value}");
        let id = created["taskId"].as_str().unwrap();
        let got = unechoed(
            related(Req::get(id).tasks(), value.clone())
                .send(&d)
                .await
                .text(),
        );
        assert!(got.contains("\"taskId\""), "{got}");
        // The task methods and a listen take it as any other `_meta` member.
        let ack = related(Req::cancel(id).tasks(), value.clone())
            .send(&d)
            .await;
        assert_eq!(ack.result()["resultType"], "complete", "{value}");
        let ack = related(
            Req::update(id, json!({"k": {"action": "accept"}})).tasks(),
            value.clone(),
        )
        .send(&d)
        .await;
        assert_eq!(ack.result()["resultType"], "complete", "{value}");
    }
    // A call without the Tasks declaration is still not given a task by the key.
    related(
        Req::call("required_job", json!({})),
        json!([known.as_str()]),
    )
    .send(&d)
    .await
    .error(400, -32021, "Missing required client capability");
    let known_now = Req::get(&known).tasks().send(&d).await.result();
    assert_eq!(
        known_now["status"], "working",
        "the named task is untouched"
    );
}

#[tokio::test]
async fn an_mrtr_retry_and_a_listen_ignore_related_task_ids() {
    let (d, _) = dispatcher();
    let first = Req::call("compose", json!({}))
        .elicitation()
        .send(&d)
        .await
        .result();
    let state = first["requestState"].as_str().expect("a requestState");
    let retry = || {
        Req::call("compose", json!({}))
            .tasks()
            .elicitation()
            .param("requestState", json!(state))
            .param(
                "inputResponses",
                json!({"user_name": accept(json!({"name": "Ada"}))}),
            )
    };
    let plain = retry().send(&d).await.result();
    assert_eq!(plain["resultType"], "task", "{plain}");
    let reply = related(retry(), json!([plain["taskId"].clone()]))
        .id(json!(2))
        .send(&d)
        .await;
    unechoed(reply.text());
    assert_eq!(
        reply.result()["taskId"],
        plain["taskId"],
        "the same retry, the same task"
    );
    let id = plain["taskId"].as_str().unwrap();
    let mut stream = related(Req::listen(json!({"taskIds": [id]})).tasks(), json!([id]))
        .send(&d)
        .await
        .into_stream();
    let first = next_message(&mut stream).await;
    assert!(
        !first.to_string().contains("relatedTaskIds"),
        "echoed: {first}"
    );
}

/// A 2025-11-25 session: a hinted `tools/call` with the key creates its task as without it.
#[cfg(feature = "sessions")] // the 2025 session path
#[tokio::test]
async fn a_2025_call_ignores_related_task_ids() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let call = |meta: Option<Value>| {
        let req = in_session(&session, "tools/call")
            .param("name", json!("optional_job"))
            .param("task", json!({"ttl": 60_000}));
        match meta {
            Some(meta) => req.param("_meta", meta),
            None => req,
        }
    };
    let hinted = call(Some(json!({RELATED: ["a", "b"]}))).send(&d).await;
    let text = unechoed(hinted.text());
    let task = &legacy_result(&hinted)["task"];
    assert_eq!(task["status"], "working", "{text}");
    let id = task["taskId"].as_str().unwrap();
    let got = in_session(&session, "tasks/get")
        .param("taskId", json!(id))
        .param("_meta", json!({RELATED: [id]}))
        .send(&d)
        .await;
    unechoed(got.text());
    assert_eq!(legacy_result(&got)["taskId"], id);
    // A call without a hint stays synchronous with the key.
    let sync = in_session(&session, "tools/call")
        .param("name", json!("sync_echo"))
        .param("arguments", json!({"text": "x"}))
        .param("_meta", json!({RELATED: [id]}))
        .send(&d)
        .await;
    assert_eq!(legacy_result(&sync)["content"][0]["text"], "echo: x");
}
