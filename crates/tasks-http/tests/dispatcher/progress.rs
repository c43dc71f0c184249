//! A task's progress ([`tasks_runtime::ToolContext::progress`]) as clients see it, in process
//! under tokio's paused clock: under the experimental `_meta` key `dev.mcp-tasks/progress` of
//! `tasks/get` and of `notifications/tasks` on a listen stream (2026-07-28), and as
//! `notifications/progress` with the creating call's `progressToken` on a 2025-11-25 session's
//! GET stream.

use std::time::Duration;

use http::Method;
use serde_json::{json, Value};
use tasks_core::{TaskPolicy, TaskStatus};
use tasks_http::Dispatcher;
use tasks_runtime::{text_result, Tool};
use tasks_test_support::dispatcher::*;
use tasks_test_support::events::{wait_for, wait_status};
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
use tasks_test_support::sessions::*;
use tasks_test_support::tools::*;

/// The experimental key.
const PROGRESS: &str = "dev.mcp-tasks/progress";

/// How many steps `count` takes.
const STEPS: u32 = 8;

/// `count`: step `i` of 8 every 200 ms (twice the poll interval, so each is written), with
/// the message `Step i of 8`, then `counted`.
fn count_tool() -> Tool {
    Tool::new("count", "Counts to eight", |ctx| async move {
        for step in 1..=STEPS {
            ctx.progress(
                f64::from(step),
                Some(f64::from(STEPS)),
                Some(&format!("Step {step} of {STEPS}")),
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Ok(text_result("counted"))
    })
    .with_policy(TaskPolicy::Optional)
}

fn server() -> Dispatcher {
    builder(&std::sync::Arc::new(Runs::default()))
        .tool(count_tool())
        .build()
}

/// The progress in a task view's `_meta`: `(progress, total)`.
fn progress_of(view: &Value) -> Option<(f64, f64)> {
    let shown = view["_meta"].get(PROGRESS)?;
    Some((shown["progress"].as_f64()?, shown["total"].as_f64()?))
}

#[tokio::test(start_paused = true)]
async fn tasks_get_and_listen_show_increasing_progress() {
    let d = server();
    let mut events = d.runtime().subscribe();
    let id = create(&d, Req::call("count", json!({})).tasks()).await;
    let mut stream = Req::listen(json!({"taskIds": [id]}))
        .id(json!("watch"))
        .tasks()
        .send(&d)
        .await
        .into_stream();
    assert_eq!(
        next_message(&mut stream).await["method"],
        "notifications/subscriptions/acknowledged"
    );
    // tasks/get: the key beside the serverInfo `_meta`, with the status message.
    wait_for(&mut events, &id, |t| {
        t.progress().is_some_and(|p| p.done() >= 2.0)
    })
    .await;
    let got = Req::get(&id).tasks().send(&d).await.result();
    let (done, total) = progress_of(&got).expect("tasks/get shows progress");
    assert!(done >= 2.0 && total == f64::from(STEPS), "{got}");
    assert_eq!(
        got["statusMessage"],
        format!("Step {done} of {STEPS}"),
        "{got}"
    );
    assert_eq!(got["_meta"][SERVER_INFO], server_meta()[SERVER_INFO]);
    // listen: each notification ahead of the last, up to the end.
    let mut seen = Vec::new();
    loop {
        let note = next_message(&mut stream).await;
        assert_eq!(note["method"], "notifications/tasks", "{note}");
        assert_eq!(note["params"]["_meta"][SUBSCRIPTION_ID], "watch");
        if let Some((done, _)) = progress_of(&note["params"]) {
            seen.push(done);
        }
        if note["params"]["status"] == "completed" {
            break;
        }
    }
    // The completion repeats the last progress; every other change moved it forward.
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "never backwards: {seen:?}"
    );
    assert!(
        seen.len() >= 3 && seen.last() == Some(&f64::from(STEPS)),
        "the stream showed it grow to the end: {seen:?}"
    );
    // The completed task keeps it.
    let done = Req::get(&id).tasks().send(&d).await.result();
    assert_eq!(done["status"], "completed");
    assert_eq!(
        progress_of(&done),
        Some((f64::from(STEPS), f64::from(STEPS)))
    );
}

#[tokio::test(start_paused = true)]
async fn a_2025_session_gets_notifications_progress_with_the_calls_token() {
    let d = server();
    let session = open(&d).await;
    let mut get_stream = in_session(&session, "x")
        .http_method(Method::GET)
        .send(&d)
        .await
        .into_stream();
    let mut events = d.runtime().subscribe();
    // One call asks for progress, one does not.
    let create = |meta: Value| {
        in_session(&session, "tools/call")
            .param("name", json!("count"))
            .param("task", json!({}))
            .meta(meta)
            .id(json!("c"))
    };
    let followed = legacy_result(&create(json!({"progressToken": "p-1"})).send(&d).await)["task"]
        ["taskId"]
        .clone();
    let silent = legacy_result(&create(json!({})).send(&d).await)["task"]["taskId"].clone();
    let mut progress = Vec::new();
    let mut ended = 0;
    while ended < 2 {
        let note = next_message(&mut get_stream).await;
        match note["method"].as_str() {
            Some("notifications/tasks/status") => {
                if note["params"]["status"] == "completed" {
                    ended += 1;
                }
            }
            Some("notifications/progress") => {
                let params = &note["params"];
                assert_eq!(params["progressToken"], "p-1", "{note}");
                assert_eq!(
                    params["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], followed,
                    "only the task whose call carried a token: {note}"
                );
                assert_eq!(params["total"], STEPS, "{note}");
                let done = params["progress"].as_f64().unwrap();
                assert_eq!(params["message"], format!("Step {done} of {STEPS}"));
                progress.push(done);
            }
            other => panic!("unexpected {other:?}: {note}"),
        }
    }
    assert!(
        progress.windows(2).all(|w| w[0] < w[1]),
        "each value above the last: {progress:?}"
    );
    assert!(
        progress.len() >= 3 && progress.last() == Some(&f64::from(STEPS)),
        "{progress:?}"
    );
    wait_status(&mut events, silent.as_str().unwrap(), TaskStatus::Completed).await;
    // A new GET stream does not send a progress the session already sent.
    let mut again = in_session(&session, "x")
        .http_method(Method::GET)
        .send(&d)
        .await
        .into_stream();
    let quiet = tokio::time::timeout(Duration::from_secs(5), next_message(&mut again)).await;
    assert!(
        quiet.is_err(),
        "nothing new to say: {:?}",
        quiet.map(|n| n.to_string())
    );
}
