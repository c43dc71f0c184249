//! Replaying the final MRTR round of a call that creates a task: the same
//! retry answers with the same task, and no state outlives the tasks it could replay.

use serde_json::{json, Value};
use tasks_test_support::dispatcher::*;
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
use tasks_test_support::tools::*;

fn state_of(result: &Value) -> String {
    assert_eq!(result["resultType"], "input_required", "{result}");
    result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned()
}

fn retry(state: &str, name: &str) -> Req {
    Req::call("compose", json!({}))
        .tasks()
        .elicitation()
        .param("requestState", json!(state))
        .param(
            "inputResponses",
            json!({"user_name": accept(json!({"name": name}))}),
        )
}

#[tokio::test]
async fn a_replayed_final_round_is_the_same_task() {
    let (d, _) = dispatcher();
    let state = state_of(
        &Req::call("compose", json!({}))
            .elicitation()
            .send(&d)
            .await
            .result(),
    );
    let first = retry(&state, "Ada").send(&d).await.result();
    assert_eq!(first["resultType"], "task", "{first}");
    let replay = retry(&state, "Ada").id(json!(2)).send(&d).await.result();
    assert_eq!(replay["taskId"], first["taskId"]);
    let other = retry(&state, "Bob").id(json!(3)).send(&d).await.result();
    assert_ne!(
        other["taskId"], first["taskId"],
        "other answers are another task"
    );
    // Answers to keys the state did not ask do not make a replay a new task.
    let padded = retry(&state, "Ada")
        .param(
            "inputResponses",
            json!({"user_name": accept(json!({"name": "Ada"})), "extra": {"action": "maybe"}}),
        )
        .id(json!(4))
        .send(&d)
        .await
        .result();
    assert_eq!(padded["taskId"], first["taskId"]);
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_state_never_outlives_the_tasks_it_could_replay() {
    // Found by the hostile pass: with a TTL shorter than the state's 10 minutes, a replay after
    // the task expired created the task again and ran the tool twice.
    let runs = std::sync::Arc::new(Runs::default());
    let d = builder(&runs).ttl_ms(Some(2_000)).build();
    let state = state_of(
        &Req::call("compose", json!({}))
            .elicitation()
            .send(&d)
            .await
            .result(),
    );
    let first = retry(&state, "Ada").send(&d).await.result();
    assert_eq!(first["resultType"], "task", "{first}");
    tokio::time::advance(std::time::Duration::from_millis(2_500)).await;
    retry(&state, "Ada")
        .id(json!(2))
        .send(&d)
        .await
        .error(400, -32602, "Invalid requestState");
}
