//! Property tests of the wire projections over reachable task states.

use crate::common;

use common::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{json, Value};
use tasks_core::protocol::{META_SERVER_INFO, META_SUBSCRIPTION_ID};
use tasks_core::wire::{ack, creation, detailed, task_notification};
use tasks_core::{apply, Event, JsonObject, Task, TaskState, META_PROGRESS};

const PAYLOADS: [&str; 3] = ["inputRequests", "result", "error"];
const BASE_KEYS: [&str; 8] = [
    "taskId",
    "status",
    "statusMessage",
    "createdAt",
    "lastUpdatedAt",
    "ttlMs",
    "pollIntervalMs",
    "_meta",
];

fn arb_subscription_id() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[ -~]{0,16}".prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
    ]
}

/// A result `_meta` for `with_meta`: serverInfo plus random keys, sometimes a stale
/// subscription id (which a notification must overwrite).
fn arb_meta() -> impl Strategy<Value = JsonObject> {
    (arb_safe_object(), any::<bool>()).prop_map(|(mut meta, stale)| {
        meta.insert(
            META_SERVER_INFO.into(),
            json!({"name": "presa", "version": "0.1.0"}),
        );
        if stale {
            meta.insert(META_SUBSCRIPTION_ID.into(), json!("stale"));
        }
        meta
    })
}

fn as_object(value: &Value) -> Result<&JsonObject, TestCaseError> {
    value
        .as_object()
        .ok_or_else(|| TestCaseError::fail(format!("not a JSON object: {value}")))
}

/// The base fields every task projection carries.
fn check_base(view: &JsonObject, task: &Task) -> Result<(), TestCaseError> {
    prop_assert_eq!(&view["taskId"], &json!(task.id().as_str()));
    prop_assert_eq!(&view["status"], &json!(task.status().as_str()));
    prop_assert_eq!(
        view.get("statusMessage").and_then(Value::as_str),
        task.status_message()
    );
    for (key, at) in [
        ("createdAt", task.created_at()),
        ("lastUpdatedAt", task.last_updated_at()),
    ] {
        let text = view[key].as_str().unwrap_or_default();
        prop_assert!(is_wire_timestamp(text), "{} = {:?}", key, view[key]);
        prop_assert_eq!(tasks_core::Timestamp::parse_rfc3339(text), Some(at));
    }
    let ttl = view.get("ttlMs");
    prop_assert!(ttl.is_some(), "ttlMs must always be present");
    match task.ttl_ms() {
        None => prop_assert_eq!(ttl, Some(&Value::Null)),
        Some(ms) => prop_assert_eq!(ttl.and_then(Value::as_u64), Some(ms)),
    }
    match view.get("pollIntervalMs") {
        None => prop_assert!(task.poll_interval_ms().is_none()),
        Some(value) => {
            let ms = value.as_u64().unwrap_or(0);
            prop_assert!(ms > 0, "pollIntervalMs = {}", value);
            prop_assert_eq!(task.poll_interval_ms().map(|p| p.get()), Some(ms));
        }
    }
    Ok(())
}

/// Exactly the status's payload, with the right shape.
fn check_payload(view: &JsonObject, task: &Task) -> Result<(), TestCaseError> {
    let want = match task.state() {
        TaskState::Working | TaskState::Cancelled => None,
        TaskState::InputRequired { .. } => Some("inputRequests"),
        TaskState::Completed { .. } => Some("result"),
        TaskState::Failed { .. } => Some("error"),
    };
    for key in PAYLOADS {
        prop_assert_eq!(view.contains_key(key), want == Some(key), "payload {}", key);
    }
    if let Some(requests) = view.get("inputRequests") {
        let requests = as_object(requests)?;
        prop_assert!(!requests.is_empty());
        for entry in requests.values() {
            prop_assert!(entry["method"].is_string());
            prop_assert!(entry.get("jsonrpc").is_none() && entry.get("id").is_none());
        }
    }
    if let Some(result) = view.get("result") {
        prop_assert!(result.is_object());
    }
    if let Some(error) = view.get("error") {
        prop_assert!(error["code"].is_i64());
        prop_assert!(error["message"].is_string());
        prop_assert_eq!(view.get("statusMessage"), Some(&error["message"]));
    }
    Ok(())
}

fn check_all(task: &Task, sub: &Value, meta: &JsonObject) -> Result<(), TestCaseError> {
    let views = [
        creation(task).to_value(),
        creation(task).with_meta(meta).to_value(),
        detailed(task).to_value(),
        detailed(task).with_meta(meta).to_value(),
        task_notification(task, sub).to_value(),
        task_notification(task, sub).with_meta(meta).to_value(),
        ack(None),
        ack(Some(meta)),
    ];
    for view in &views {
        as_object(view)?;
        prop_assert_eq!(find_forbidden(view, ""), None, "in {}", view);
    }
    // The serde path and `to_value` agree.
    prop_assert_eq!(
        &serde_json::to_value(detailed(task).with_meta(meta)).unwrap(),
        &views[3]
    );

    for (view, with_meta) in [(&views[0], false), (&views[1], true)] {
        let view = as_object(view)?;
        prop_assert_eq!(&view["resultType"], &json!("task"));
        for key in PAYLOADS {
            prop_assert!(!view.contains_key(key), "creation carries {}", key);
        }
        check_base(view, task)?;
        for key in view.keys() {
            prop_assert!(
                key == "resultType" || BASE_KEYS.contains(&key.as_str()),
                "{}",
                key
            );
        }
        prop_assert_eq!(
            view.get("_meta").cloned(),
            with_meta.then(|| Value::Object(meta.clone()))
        );
    }

    // The work's progress, in `_meta` of the views that show the task's state.
    let with_progress = |mut meta: JsonObject| {
        if let Some(progress) = task.progress() {
            meta.insert(
                META_PROGRESS.into(),
                serde_json::to_value(progress).unwrap(),
            );
        }
        meta
    };
    for (view, with_meta) in [(&views[2], false), (&views[3], true)] {
        let view = as_object(view)?;
        prop_assert_eq!(&view["resultType"], &json!("complete"));
        check_base(view, task)?;
        check_payload(view, task)?;
        let expected = with_progress(if with_meta {
            meta.clone()
        } else {
            JsonObject::new()
        });
        prop_assert_eq!(
            view.get("_meta").cloned(),
            (!expected.is_empty()).then_some(Value::Object(expected))
        );
        if let Some(progress) = task.progress() {
            let shown = &view["_meta"][META_PROGRESS];
            prop_assert_eq!(shown["progress"].as_f64(), Some(progress.done()));
            prop_assert_eq!(shown["total"].as_f64(), progress.total());
        }
    }

    for (view, with_meta) in [(&views[4], false), (&views[5], true)] {
        let view = as_object(view)?;
        prop_assert!(!view.contains_key("resultType"));
        check_base(view, task)?;
        check_payload(view, task)?;
        let got_meta = as_object(&view["_meta"])?;
        prop_assert_eq!(&got_meta[META_SUBSCRIPTION_ID], sub);
        let mut expected_meta = with_progress(if with_meta {
            meta.clone()
        } else {
            JsonObject::new()
        });
        expected_meta.insert(META_SUBSCRIPTION_ID.into(), sub.clone());
        prop_assert_eq!(got_meta, &expected_meta);
        // Otherwise identical to what tasks/get returns.
        let mut rest = view.clone();
        rest.remove("_meta");
        let mut get = as_object(&views[2])?.clone();
        get.remove("resultType");
        get.remove("_meta");
        prop_assert_eq!(rest, get);
    }

    prop_assert_eq!(&views[6], &json!({"resultType": "complete"}));
    prop_assert_eq!(&views[7], &json!({"resultType": "complete", "_meta": meta}));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn projections_have_the_wire_shape(
        task in arb_reachable_task(),
        sub in arb_subscription_id(),
        meta in arb_meta(),
    ) {
        check_all(&task, &sub, &meta)?;
    }

    /// A completed result whose `_meta` carried the 2025-11-25 related-task key never shows it.
    #[test]
    fn completed_results_never_carry_related_task(
        task in arb_reachable_task(),
        mut result in arb_result(),
        sub in arb_subscription_id(),
        meta in arb_meta(),
        delta in 0u64..10_000,
    ) {
        let mut result_meta = result
            .get("_meta")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        result_meta.insert(
            tasks_core::protocol::META_RELATED_TASK.into(),
            json!({"taskId": task.id().as_str()}),
        );
        result.insert("_meta".into(), Value::Object(result_meta.clone()));
        let now = task.last_updated_at().plus_millis(delta);
        let done = apply(&task, Event::Completed { result: result.into() }, now).unwrap().task;
        if !task.is_terminal() {
            let inlined = detailed(&done).to_value();
            result_meta.remove(tasks_core::protocol::META_RELATED_TASK);
            prop_assert_eq!(&inlined["result"]["_meta"], &Value::Object(result_meta));
        }
        check_all(&done, &sub, &meta)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A client reads every view the server writes into the owned wire types, with the same
    /// fields, and writes them back to the same JSON.
    #[test]
    fn clients_read_back_every_view(task in arb_reachable_task(), sub in arb_subscription_id(), meta in arb_meta()) {
        use tasks_core::wire::{CreateTaskResult, DetailedTask, ResultType};
        let created = creation(&task).with_meta(&meta).to_value();
        let read: CreateTaskResult = serde_json::from_value(created.clone()).unwrap();
        prop_assert_eq!(read.result_type, ResultType::Task);
        prop_assert_eq!(&read.task.task_id, task.id());
        prop_assert_eq!(read.status, task.status());
        prop_assert_eq!(read.task.status_message.as_deref(), task.status_message());
        prop_assert_eq!(read.task.ttl_ms, task.ttl_ms());
        prop_assert_eq!(read.task.created_at, task.created_at());
        prop_assert_eq!(serde_json::to_value(&read).unwrap(), created);

        let got = detailed(&task).with_meta(&meta).to_value();
        let read: DetailedTask = serde_json::from_value(got.clone()).unwrap();
        prop_assert_eq!(read.result_type, Some(ResultType::Complete));
        prop_assert_eq!(&read.state, task.state());
        prop_assert_eq!(read.task.last_updated_at, task.last_updated_at());
        prop_assert_eq!(serde_json::to_value(&read).unwrap(), got);

        let note = serde_json::to_value(task_notification(&task, &sub).with_meta(&meta)).unwrap();
        let read: DetailedTask = serde_json::from_value(note.clone()).unwrap();
        prop_assert_eq!(read.result_type, None);
        prop_assert_eq!(&read.state, task.state());
        prop_assert_eq!(read.meta.get(META_SUBSCRIPTION_ID), Some(&sub));
        prop_assert_eq!(read.progress(), task.progress());
        prop_assert_eq!(serde_json::to_value(&read).unwrap(), note);
    }
}
