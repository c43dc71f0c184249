//! Property tests of the reducer: random event sequences against an independent model.

// Modules rather than binaries of their own (each integration-test binary links the
// whole stack, and linking is slow): their tests are named `<module>::<test>`.
mod envelope_props;
mod exchange_props;
mod model_props;
mod params_props;
mod plain_props;
mod plan_props;
mod projection_props;
mod session_props;
mod typed_props;

#[path = "../common/mod.rs"]
mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{json, Value};
use tasks_core::input::InvalidResponse;
use tasks_core::input::{ElicitAnswer, InputResponse};
use tasks_core::protocol::META_RELATED_TASK;
use tasks_core::wire::detailed;
use tasks_core::{apply, Event, InputRequests, Progress, ReduceError, Task, TaskState, TaskStatus};
use tasks_core::{MESSAGE_ACCEPTED, MESSAGE_CANCELLED, MESSAGE_INPUT_RECEIVED};

/// What the model predicts for one event.
#[derive(Debug)]
enum Expect {
    Refused(ReduceError),
    Unchanged,
    Changed {
        state: TaskState,
        message: Option<String>,
        fulfilled: BTreeMap<String, InputResponse>,
        /// `None`: as before the event.
        progress: Option<Progress>,
    },
}

/// `Waiting for input: a, b`: the message of an `input_required` task, from the model's keys.
fn waiting(pending: &BTreeMap<String, tasks_core::input::InputRequest>) -> Option<String> {
    let keys: Vec<&str> = pending.keys().map(String::as_str).collect();
    Some(format!("Waiting for input: {}", keys.join(", ")))
}

/// The catalogued answer of `response` to `request`, by [`responses`].
fn model_answer(
    request: &tasks_core::input::InputRequest,
    response: &Value,
) -> Result<InputResponse, tasks_core::input::InvalidResponse> {
    let (_, to_elicit, to_roots) = responses()
        .into_iter()
        .find(|(value, _, _)| value == response)
        .expect("a catalogued response");
    if *request == common::request(0) {
        to_elicit
    } else {
        to_roots
    }
}

fn input_required(map: BTreeMap<String, tasks_core::input::InputRequest>) -> TaskState {
    TaskState::InputRequired {
        input_requests: InputRequests::try_from(map).expect("non-empty map"),
    }
}

/// The model: derived from the public state of `before` and the keys the test saw answered.
fn expect(before: &Task, event: &Event, answered: &BTreeSet<String>) -> Expect {
    if before.is_terminal() {
        return Expect::Unchanged;
    }
    let pending = pending_map(before);
    match event {
        Event::InputRequested { key, request } => {
            if key.is_empty() {
                return Expect::Refused(ReduceError::EmptyKey);
            }
            if answered.contains(key) {
                return Expect::Refused(ReduceError::KeyReused(key.clone()));
            }
            match pending.get(key) {
                Some(existing) if existing == request => Expect::Unchanged,
                Some(_) => Expect::Refused(ReduceError::KeyReused(key.clone())),
                None => {
                    let mut next = pending.clone();
                    next.insert(key.clone(), request.clone());
                    Expect::Changed {
                        message: waiting(&next),
                        state: input_required(next),
                        fulfilled: BTreeMap::new(),
                        progress: None,
                    }
                }
            }
        }
        Event::InputResponsesAccepted { responses } => {
            let mut fulfilled = BTreeMap::new();
            for (key, response) in responses {
                let Some(request) = pending.get(key) else {
                    continue;
                };
                match model_answer(request, response) {
                    Ok(answer) => {
                        fulfilled.insert(key.clone(), answer);
                    }
                    Err(reason) => {
                        return Expect::Refused(ReduceError::InvalidResponse {
                            key: key.clone(),
                            reason,
                        })
                    }
                }
            }
            if fulfilled.is_empty() {
                return Expect::Unchanged;
            }
            let rest: BTreeMap<_, _> = pending
                .into_iter()
                .filter(|(k, _)| !fulfilled.contains_key(k))
                .collect();
            let (state, message) = if rest.is_empty() {
                (TaskState::Working, Some(MESSAGE_INPUT_RECEIVED.to_owned()))
            } else {
                (input_required(rest.clone()), waiting(&rest))
            };
            Expect::Changed {
                state,
                message,
                fulfilled,
                progress: None,
            }
        }
        Event::StatusMessage { message } => {
            if !pending.is_empty() || before.status_message() == Some(message.as_str()) {
                Expect::Unchanged
            } else {
                Expect::Changed {
                    state: before.state().clone(),
                    message: Some(message.clone()),
                    fulfilled: BTreeMap::new(),
                    progress: None,
                }
            }
        }
        Event::Progress { progress, message } => {
            let ahead = before.progress().is_none_or(|p| progress.done() > p.done());
            let message = message
                .as_ref()
                .filter(|m| pending.is_empty() && before.status_message() != Some(m.as_str()));
            if !ahead && message.is_none() {
                return Expect::Unchanged;
            }
            Expect::Changed {
                state: before.state().clone(),
                message: message
                    .cloned()
                    .or_else(|| before.status_message().map(str::to_owned)),
                fulfilled: BTreeMap::new(),
                progress: ahead.then_some(*progress),
            }
        }
        Event::Completed { result } => {
            // The model: parse the stored text and drop the key from `_meta`.
            let mut result = result.to_object();
            if let Some(Value::Object(meta)) = result.get_mut("_meta") {
                meta.remove(META_RELATED_TASK);
            }
            Expect::Changed {
                state: TaskState::Completed {
                    result: result.into(),
                },
                message: None,
                fulfilled: BTreeMap::new(),
                progress: None,
            }
        }
        Event::Failed { error } => Expect::Changed {
            message: Some(error.message.clone()),
            state: TaskState::Failed {
                error: Box::new(error.clone()),
            },
            fulfilled: BTreeMap::new(),
            progress: None,
        },
        Event::Cancelled => Expect::Changed {
            state: TaskState::Cancelled,
            message: Some(MESSAGE_CANCELLED.to_owned()),
            fulfilled: BTreeMap::new(),
            progress: None,
        },
        Event::CancelledByOperator => Expect::Changed {
            state: TaskState::Cancelled,
            message: Some(tasks_core::MESSAGE_CANCELLED_BY_OPERATOR.to_owned()),
            fulfilled: BTreeMap::new(),
            progress: None,
        },
    }
}

/// Invariants that hold for every reachable task.
fn check_invariants(
    task: &Task,
    origin: &Task,
    answered: &BTreeSet<String>,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(task.id(), origin.id());
    prop_assert_eq!(task.created_at(), origin.created_at());
    prop_assert_eq!(task.ttl_ms(), origin.ttl_ms());
    prop_assert_eq!(task.poll_interval_ms(), origin.poll_interval_ms());
    prop_assert!(task.last_updated_at() >= task.created_at());

    let status = task.status();
    let view = detailed(task).to_value();
    prop_assert_eq!(&view["status"], &json!(status.as_str()));
    prop_assert_eq!(
        view.get("inputRequests").is_some(),
        status == TaskStatus::InputRequired
    );
    prop_assert_eq!(
        view.get("result").is_some(),
        status == TaskStatus::Completed
    );
    prop_assert_eq!(view.get("error").is_some(), status == TaskStatus::Failed);
    if let Some(requests) = view.get("inputRequests").and_then(Value::as_object) {
        prop_assert!(!requests.is_empty());
        for key in requests.keys() {
            prop_assert!(!answered.contains(key), "answered key {key:?} reappeared");
        }
    }

    let message = task.status_message();
    match task.state() {
        TaskState::Working => {
            let known = [MESSAGE_ACCEPTED, MESSAGE_INPUT_RECEIVED];
            prop_assert!(
                message.is_some_and(|m| known.contains(&m) || TOOL_MESSAGES.contains(&m)),
                "working with statusMessage {message:?}"
            );
        }
        TaskState::InputRequired { .. } => {
            prop_assert_eq!(message.map(str::to_owned), waiting(&pending_map(task)));
        }
        TaskState::Completed { .. } => prop_assert_eq!(message, None),
        TaskState::Failed { error } => prop_assert_eq!(message, Some(error.message.as_str())),
        TaskState::Cancelled => prop_assert!(
            message == Some(MESSAGE_CANCELLED)
                || message == Some(tasks_core::MESSAGE_CANCELLED_BY_OPERATOR),
            "cancelled with statusMessage {message:?}"
        ),
    }
    prop_assert_eq!(view.get("statusMessage").and_then(Value::as_str), message);

    let kept: BTreeSet<String> = task.answered_keys().map(str::to_owned).collect();
    for key in &kept {
        prop_assert!(
            task.answer(key).is_some(),
            "answered key {key:?} keeps its answer"
        );
    }
    if task.is_terminal() {
        prop_assert!(kept.is_empty());
    } else {
        prop_assert_eq!(&kept, answered);
    }
    Ok(())
}

fn assert_storage_round_trip(task: &Task) -> Result<(), TestCaseError> {
    let text = serde_json::to_string(task).expect("serialize");
    let back: Task = serde_json::from_str(&text)
        .map_err(|e| TestCaseError::fail(format!("deserialize {text}: {e}")))?;
    prop_assert_eq!(&back, task, "storage form: {}", text);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn reducer_follows_the_model(origin in arb_new_task(), steps in arb_steps(24)) {
        prop_assert_eq!(origin.status(), TaskStatus::Working);
        prop_assert_eq!(origin.revision(), 1);
        prop_assert_eq!(origin.last_updated_at(), origin.created_at());
        let mut answered = BTreeSet::new();
        check_invariants(&origin, &origin, &answered)?;

        let mut task = origin.clone();
        let mut now = origin.created_at().unix_millis() as i64;
        let mut changes = 0u64;
        let mut settled: Option<Task> = None;
        for (event, delta) in steps {
            now = (now + delta).max(0);
            let at = ts(now as u64);
            let before = task.clone();
            let expected = expect(&before, &event, &answered);
            let outcome = apply(&before, event.clone(), at);
            match (expected, outcome) {
                (Expect::Refused(want), Err(got)) => {
                    prop_assert_eq!(got, want);
                    // A refused event leaves the stored task as it was; it still accepts events.
                    let empty = Event::InputResponsesAccepted { responses: BTreeMap::new() };
                    prop_assert!(apply(&before, empty, at).is_ok());
                }
                (Expect::Unchanged, Ok(t)) => {
                    prop_assert!(!t.changed, "{:?} changed the task", event);
                    prop_assert_eq!(&t.task, &before);
                    prop_assert!(t.fulfilled.is_empty());
                }
                (Expect::Changed { state, message, fulfilled, progress }, Ok(t)) => {
                    prop_assert!(t.changed);
                    prop_assert_eq!(t.task.state(), &state);
                    prop_assert_eq!(t.task.status_message(), message.as_deref());
                    prop_assert_eq!(t.task.progress(), progress.or(before.progress()));
                    prop_assert_eq!(&t.fulfilled, &fulfilled);
                    prop_assert_eq!(t.task.revision(), before.revision() + 1);
                    prop_assert_eq!(
                        t.task.last_updated_at(),
                        at.max(before.last_updated_at())
                    );
                    let pending_before = pending_map(&before);
                    let pending_after = pending_map(&t.task);
                    for key in fulfilled.keys() {
                        prop_assert!(pending_before.contains_key(key));
                        prop_assert!(!pending_after.contains_key(key));
                    }
                    changes += 1;
                    task = t.task;
                    if !task.is_terminal() {
                        answered.extend(fulfilled.keys().cloned());
                        // A fulfilled key can never be requested again, whatever the request.
                        for key in fulfilled.keys() {
                            for n in 0..2 {
                                prop_assert_eq!(
                                    apply(&task, Event::InputRequested {
                                        key: key.clone(),
                                        request: request(n),
                                    }, at),
                                    Err(ReduceError::KeyReused(key.clone()))
                                );
                            }
                        }
                    }
                }
                (expected, outcome) => {
                    prop_assert!(false, "event {:?} on {:?}: expected {:?}, got {:?}",
                        event, before, expected, outcome);
                }
            }
            prop_assert_eq!(task.revision(), 1 + changes);
            prop_assert!(task.last_updated_at() >= before.last_updated_at());
            // Progress never moves backwards, and once reported never goes away.
            if let Some(earlier) = before.progress() {
                let now = task.progress().expect("progress kept");
                prop_assert!(now.done() >= earlier.done(), "{:?} after {:?}", now, earlier);
            }
            check_invariants(&task, &origin, &answered)?;
            match &settled {
                Some(terminal) => prop_assert_eq!(&task, terminal),
                None if task.is_terminal() => settled = Some(task.clone()),
                None => {}
            }
        }
    }

    #[test]
    fn storage_form_round_trips(origin in arb_new_task(), steps in arb_steps(16)) {
        let mut task = origin;
        let mut now = task.created_at().unix_millis() as i64;
        assert_storage_round_trip(&task)?;
        for (event, delta) in steps {
            now = (now + delta).max(0);
            if let Ok(t) = apply(&task, event, ts(now as u64)) {
                task = t.task;
            }
            assert_storage_round_trip(&task)?;
        }
    }
}

fn working() -> Task {
    Task::new(
        tasks_core::TaskId::parse("t-1").unwrap(),
        ts(T0),
        Some(60_000),
        None,
    )
}

fn step(task: &Task, event: Event, ms: u64) -> Task {
    let t = apply(task, event, ts(ms)).expect("accepted");
    assert!(t.changed);
    t.task
}

#[test]
fn partial_fulfilment_keeps_the_other_key_then_returns_to_working() {
    let t = step(
        &working(),
        Event::InputRequested {
            key: "a".into(),
            request: request(0),
        },
        T0 + 1,
    );
    let t = step(
        &t,
        Event::InputRequested {
            key: "b".into(),
            request: request(1),
        },
        T0 + 2,
    );
    let answer = |key: &str, response: Value| Event::InputResponsesAccepted {
        responses: BTreeMap::from([
            (key.to_owned(), response),
            ("zz".to_owned(), json!({"ignored": true})),
        ]),
    };
    assert_eq!(t.status_message(), Some("Waiting for input: a, b"));
    let first = apply(
        &t,
        answer(
            "a",
            json!({"action": "accept", "content": {"confirm": true}}),
        ),
        ts(T0 + 3),
    )
    .unwrap();
    assert_eq!(
        first.fulfilled,
        BTreeMap::from([(
            "a".to_owned(),
            InputResponse::Elicit(ElicitAnswer::Accept(object(json!({"confirm": true}))))
        )])
    );
    assert_eq!(first.task.status(), TaskStatus::InputRequired);
    assert_eq!(first.task.status_message(), Some("Waiting for input: b"));
    assert_eq!(
        pending_map(&first.task).keys().collect::<Vec<_>>(),
        vec!["b"]
    );
    assert_eq!(first.task.revision(), 4);
    let second = apply(&first.task, answer("b", json!({"roots": []})), ts(T0 + 4)).unwrap();
    assert_eq!(
        second.fulfilled,
        BTreeMap::from([("b".to_owned(), InputResponse::Roots(vec![]))])
    );
    assert_eq!(second.task.status(), TaskStatus::Working);
    assert_eq!(second.task.status_message(), Some(MESSAGE_INPUT_RECEIVED));
    assert_eq!(
        second.task.answered_keys().collect::<Vec<_>>(),
        vec!["a", "b"]
    );
    assert_eq!(
        apply(
            &second.task,
            Event::InputRequested {
                key: "a".into(),
                request: request(0)
            },
            ts(T0 + 5)
        ),
        Err(ReduceError::KeyReused("a".into()))
    );
}

#[test]
fn only_unknown_keys_change_nothing() {
    let t = step(
        &working(),
        Event::InputRequested {
            key: "a".into(),
            request: request(0),
        },
        T0 + 10,
    );
    let out = apply(
        &t,
        Event::InputResponsesAccepted {
            responses: BTreeMap::from([("nope".to_owned(), json!({}))]),
        },
        T0.checked_add(99).map(ts).unwrap(),
    )
    .unwrap();
    assert!(!out.changed);
    assert_eq!(out.task, t);
    assert_eq!(out.task.last_updated_at(), ts(T0 + 10));
}

#[test]
fn completed_strips_related_task_and_clock_never_goes_back() {
    let result = object(json!({
        "content": [{"type": "text", "text": "done"}],
        "_meta": {META_RELATED_TASK: {"taskId": "x"}, "keep": 1}
    }));
    let t = step(
        &working(),
        Event::Completed {
            result: result.into(),
        },
        T0 - 5_000,
    );
    assert_eq!(t.last_updated_at(), ts(T0));
    assert_eq!(t.status_message(), None);
    assert_eq!(
        detailed(&t).to_value()["result"],
        json!({"content": [{"type": "text", "text": "done"}], "_meta": {"keep": 1}})
    );
    let late = apply(&t, Event::Cancelled, ts(T0 + 1)).unwrap();
    assert!(!late.changed);
    assert_eq!(late.task.status(), TaskStatus::Completed);
}

fn parked_on_a_and_b() -> Task {
    let t = step(
        &working(),
        Event::InputRequested {
            key: "a".into(),
            request: request(0),
        },
        T0 + 1,
    );
    step(
        &t,
        Event::InputRequested {
            key: "b".into(),
            request: request(0),
        },
        T0 + 2,
    )
}

#[test]
fn a_decline_or_cancel_is_never_consent_whatever_it_carries() {
    let t = parked_on_a_and_b();
    let out = apply(
        &t,
        Event::InputResponsesAccepted {
            responses: BTreeMap::from([
                (
                    "a".to_owned(),
                    json!({"action": "decline", "content": {"confirm": true}}),
                ),
                (
                    "b".to_owned(),
                    json!({"action": "cancel", "content": {"confirm": true}}),
                ),
            ]),
        },
        ts(T0 + 3),
    )
    .unwrap();
    assert_eq!(
        out.fulfilled,
        BTreeMap::from([
            ("a".to_owned(), InputResponse::Elicit(ElicitAnswer::Decline)),
            ("b".to_owned(), InputResponse::Elicit(ElicitAnswer::Cancel)),
        ])
    );
    assert_eq!(
        out.fulfilled["a"].to_value(),
        json!({"action": "decline"}),
        "the content of a decline is dropped"
    );
}

#[test]
fn one_malformed_answer_rejects_the_whole_update() {
    let t = parked_on_a_and_b();
    for (bad, reason) in [
        (
            json!({"action": "maybe", "content": {"confirm": true}}),
            InvalidResponse::Action,
        ),
        (
            json!({"content": {"confirm": true}}),
            InvalidResponse::Action,
        ),
        (
            json!({"action": "accept", "content": {"confirm": "yes"}}),
            InvalidResponse::Schema,
        ),
        (
            json!({"action": "accept", "content": {}}),
            InvalidResponse::Schema,
        ),
        (
            json!({"action": "accept", "content": {"confirm": {"nested": 1}}}),
            InvalidResponse::Content,
        ),
    ] {
        let out = apply(
            &t,
            Event::InputResponsesAccepted {
                responses: BTreeMap::from([
                    (
                        "a".to_owned(),
                        json!({"action": "accept", "content": {"confirm": true}}),
                    ),
                    ("b".to_owned(), bad.clone()),
                ]),
            },
            ts(T0 + 3),
        );
        assert_eq!(
            out,
            Err(ReduceError::InvalidResponse {
                key: "b".into(),
                reason
            }),
            "{bad}"
        );
        assert_eq!(
            reason.to_error("b").to_error_object().message,
            format!("Invalid input response for b: {reason}")
        );
    }
}

#[test]
fn status_messages_are_set_by_the_work_but_not_while_waiting() {
    let t = step(
        &working(),
        Event::StatusMessage {
            message: "Indexing".into(),
        },
        T0 + 1,
    );
    assert_eq!(t.status_message(), Some("Indexing"));
    assert_eq!(t.revision(), 2);
    let same = apply(
        &t,
        Event::StatusMessage {
            message: "Indexing".into(),
        },
        ts(T0 + 2),
    )
    .unwrap();
    assert!(!same.changed, "the same message is not a new revision");
    let parked = parked_on_a_and_b();
    let ignored = apply(
        &parked,
        Event::StatusMessage {
            message: "Indexing".into(),
        },
        ts(T0 + 3),
    )
    .unwrap();
    assert!(!ignored.changed);
    assert_eq!(parked.status_message(), Some("Waiting for input: a, b"));
}

#[test]
fn tampered_storage_forms_are_refused() {
    // A parked task whose key `a` is outstanding and `b` answered, then a finished one.
    let parked = step(
        &parked_on_a_and_b(),
        Event::InputResponsesAccepted {
            responses: BTreeMap::from([(
                "b".to_owned(),
                json!({"action": "accept", "content": {"confirm": true}}),
            )]),
        },
        T0 + 3,
    );
    let good = serde_json::to_value(&parked).unwrap();
    assert_eq!(
        serde_json::from_value::<Task>(good.clone()).unwrap(),
        parked
    );
    let refused = |edit: &dyn Fn(&mut Value), why: &str| {
        let mut bad = good.clone();
        edit(&mut bad);
        let error = serde_json::from_value::<Task>(bad)
            .expect_err(why)
            .to_string();
        assert!(error.contains(why), "{error}");
    };
    refused(&|t| t["revision"] = json!(0), "revision starts at 1");
    refused(
        &|t| t["lastUpdatedAt"] = json!("2000-01-01T00:00:00.000Z"),
        "before createdAt",
    );
    refused(
        &|t| {
            t["answered"]["a"] = json!({"request": t["inputRequests"]["a"].clone(), "response": {"action": "cancel"}})
        },
        "already answered",
    );
    refused(&|t| t["inputRequests"] = json!({}), "must not be empty");
    let done = step(&parked, Event::Cancelled, T0 + 4);
    let mut finished = serde_json::to_value(&done).unwrap();
    finished["answered"] = good["answered"].clone();
    let error = serde_json::from_value::<Task>(finished)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("terminal task keeps no answered keys"),
        "{error}"
    );
}
