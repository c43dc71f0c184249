//! Generators and helpers shared by the tasks-core integration tests.
//!
//! These stay here rather than in `tasks-test-support` (the workspace's one place for test
//! support): only tasks-core's tests use them (proptest strategies over the reducer's events,
//! a stub `ServerView` for the planner), and tasks-core, the pure bottom layer, would otherwise
//! build tasks-runtime and tokio for its own tests.
//!
//! Each test binary uses a different subset, hence the `dead_code` allowance.
#![allow(dead_code)]

pub(crate) mod stub;

use std::collections::BTreeMap;
use std::num::NonZeroU64;

use proptest::prelude::*;
use serde_json::{json, Value};
use tasks_core::input::InvalidResponse;
use tasks_core::input::{ElicitAnswer, InputRequest, InputResponse, Root};
use tasks_core::protocol::META_RELATED_TASK;
use tasks_core::{
    apply, Event, JsonObject, JsonRpcError, Progress, Task, TaskId, TaskState, Timestamp,
};

/// `2026-11-03T18:04:05.123Z`.
pub(crate) const T0: u64 = 1_793_729_045_123;

/// The input-request key alphabet.
pub(crate) const KEYS: [&str; 5] = ["a", "b", "c", "d", "e"];

/// Keys that no projection may ever contain, at any depth.
pub(crate) const FORBIDDEN_KEYS: [&str; 5] = [
    "requestState",
    "ttl",
    "pollInterval",
    "task",
    META_RELATED_TASK,
];

pub(crate) fn ts(ms: u64) -> Timestamp {
    Timestamp::from_unix_millis(ms)
}

pub(crate) fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// Two distinct bare input requests (`n` is 0 or 1).
pub(crate) fn request(n: u8) -> InputRequest {
    match n {
        0 => InputRequest {
            method: "elicitation/create".into(),
            params: Some(object(json!({
                "message": "Delete mrtr-input.txt?",
                "requestedSchema": {"type": "object",
                    "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
            }))),
        },
        _ => InputRequest {
            method: "roots/list".into(),
            params: None,
        },
    }
}

/// The expected answer of a catalogued response to one request.
pub(crate) type Expected = Result<InputResponse, InvalidResponse>;

/// Answers the property tests send: `(response, expected answer to request(0), expected answer
/// to request(1))`, written out by hand so the model is independent of the checker.
pub(crate) fn responses() -> Vec<(Value, Expected, Expected)> {
    let accept = |content: Value| Ok(InputResponse::Elicit(ElicitAnswer::Accept(object(content))));
    vec![
        (
            json!({"action": "accept", "content": {"confirm": true}}),
            accept(json!({"confirm": true})),
            Err(InvalidResponse::Roots),
        ),
        (
            json!({"action": "accept", "content": {"confirm": false}}),
            accept(json!({"confirm": false})),
            Err(InvalidResponse::Roots),
        ),
        (
            json!({"action": "decline", "content": {"confirm": true}}),
            Ok(InputResponse::Elicit(ElicitAnswer::Decline)),
            Err(InvalidResponse::Roots),
        ),
        (
            json!({"action": "cancel"}),
            Ok(InputResponse::Elicit(ElicitAnswer::Cancel)),
            Err(InvalidResponse::Roots),
        ),
        (
            json!({"action": "maybe", "content": {"confirm": true}}),
            Err(InvalidResponse::Action),
            Err(InvalidResponse::Roots),
        ),
        (
            json!({"action": "accept", "content": {"confirm": "yes"}}),
            Err(InvalidResponse::Schema),
            Err(InvalidResponse::Roots),
        ),
        (
            json!({"action": "accept"}),
            Err(InvalidResponse::Content),
            Err(InvalidResponse::Roots),
        ),
        (
            json!({"roots": [{"uri": "file:///a", "name": "A"}]}),
            Err(InvalidResponse::Action),
            Ok(InputResponse::Roots(vec![Root {
                uri: "file:///a".into(),
                name: Some("A".into()),
            }])),
        ),
        (
            json!({}),
            Err(InvalidResponse::Action),
            Err(InvalidResponse::Roots),
        ),
    ]
}

pub(crate) fn arb_request() -> impl Strategy<Value = InputRequest> {
    (0u8..2).prop_map(request)
}

/// A key from the alphabet, rarely the (invalid) empty key.
pub(crate) fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        30 => prop::sample::select(KEYS.to_vec()).prop_map(str::to_owned),
        1 => Just(String::new()),
    ]
}

/// An object key that is never one of [`FORBIDDEN_KEYS`].
pub(crate) fn safe_key() -> impl Strategy<Value = String> {
    "[a-zA-Z_]{1,5}".prop_map(|k| {
        if FORBIDDEN_KEYS.contains(&k.as_str()) {
            format!("{k}_")
        } else {
            k
        }
    })
}

/// JSON without floats (serde_json float parsing is not guaranteed to round-trip) and without
/// forbidden keys.
pub(crate) fn arb_safe_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        "[ -~]{0,8}".prop_map(Value::from),
        Just(json!(0.5)),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(safe_key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

pub(crate) fn arb_safe_object() -> impl Strategy<Value = JsonObject> {
    prop::collection::btree_map(safe_key(), arb_safe_json(), 0..4)
        .prop_map(|m| m.into_iter().collect())
}

/// A response value for `tasks/update` (always an object, as params validation guarantees):
/// one of [`responses`].
pub(crate) fn arb_response() -> impl Strategy<Value = Value> {
    prop::sample::select(
        responses()
            .into_iter()
            .map(|(value, _, _)| value)
            .collect::<Vec<_>>(),
    )
}

/// Messages a tool sets.
pub(crate) const TOOL_MESSAGES: &[&str] = &["Indexing", "Half way"];

/// A result `_meta`: sometimes serverInfo, sometimes the 2025-11-25 related-task key.
pub(crate) fn arb_result_meta() -> impl Strategy<Value = Option<JsonObject>> {
    proptest::option::of((any::<bool>(), any::<bool>(), arb_safe_object()).prop_map(
        |(info, related, mut m)| {
            if info {
                m.insert(
                    "io.modelcontextprotocol/serverInfo".into(),
                    json!({"name": "presa", "version": "0.1.0"}),
                );
            }
            if related {
                m.insert(META_RELATED_TASK.into(), json!({"taskId": "old-v1-id"}));
            }
            m
        },
    ))
}

/// A small `CallToolResult`-like object.
pub(crate) fn arb_result() -> impl Strategy<Value = JsonObject> {
    (
        "[ -~]{0,12}",
        any::<bool>(),
        arb_result_meta(),
        arb_safe_object(),
    )
        .prop_map(|(text, is_error, meta, extra)| {
            let mut result = extra;
            result.insert("content".into(), json!([{"type": "text", "text": text}]));
            result.insert("isError".into(), Value::Bool(is_error));
            if let Some(meta) = meta {
                result.insert("_meta".into(), Value::Object(meta));
            }
            result
        })
}

pub(crate) fn arb_error() -> impl Strategy<Value = JsonRpcError> {
    (
        prop_oneof![Just(-32603i64), Just(-32602), any::<i64>()],
        "[A-Za-z ]{1,24}",
        prop_oneof![
            Just(None),
            Just(Some(Value::Null)),
            arb_safe_json().prop_map(Some),
        ],
    )
        .prop_map(|(code, message, data)| JsonRpcError {
            code,
            message,
            data,
        })
}

pub(crate) fn arb_event() -> impl Strategy<Value = Event> {
    let response_key = prop_oneof![
        3 => prop::sample::select(KEYS.to_vec()).prop_map(str::to_owned),
        1 => "[f-z]{1,2}",
    ];
    prop_oneof![
        6 => (arb_key(), arb_request())
            .prop_map(|(key, request)| Event::InputRequested { key, request }),
        6 => prop::collection::btree_map(response_key, arb_response(), 0..4)
            .prop_map(|responses| Event::InputResponsesAccepted { responses }),
        1 => arb_result().prop_map(|result| Event::Completed { result: result.into() }),
        1 => arb_error().prop_map(|error| Event::Failed { error }),
        1 => Just(Event::Cancelled),
        1 => Just(Event::CancelledByOperator),
        2 => prop::sample::select(TOOL_MESSAGES.to_vec())
            .prop_map(|message| Event::StatusMessage { message: message.to_owned() }),
        3 => (arb_progress(), proptest::option::of(prop::sample::select(TOOL_MESSAGES.to_vec())))
            .prop_map(|(progress, message)| Event::Progress {
                progress,
                message: message.map(str::to_owned),
            }),
    ]
}

/// A valid progress: a few whole or half steps done, of a total not below them (or none).
pub(crate) fn arb_progress() -> impl Strategy<Value = Progress> {
    (0u8..12, proptest::option::of(0u8..6)).prop_map(|(done, more)| {
        let done = f64::from(done) / 2.0;
        let total = more.map(|more| (done + f64::from(more)).max(1.0));
        Progress::new(done, total).expect("a valid progress")
    })
}

/// Clock movement between events: mostly forward, sometimes backward.
pub(crate) fn arb_delta() -> impl Strategy<Value = i64> {
    prop_oneof![
        2 => Just(0i64),
        8 => 1i64..5_000,
        3 => -10_000i64..0,
    ]
}

pub(crate) fn arb_task_id() -> impl Strategy<Value = TaskId> {
    prop_oneof![
        any::<[u8; 24]>().prop_map(TaskId::from_random_bytes),
        "[A-Za-z0-9_-]{1,40}".prop_map(|s| TaskId::parse(&s).unwrap()),
    ]
}

/// A fresh task: created between 1970 and ~2096, with an optional ttl and poll interval.
pub(crate) fn arb_new_task() -> impl Strategy<Value = Task> {
    (
        arb_task_id(),
        prop_oneof![Just(T0), 0u64..4_000_000_000_000],
        proptest::option::of(1u64..100_000_000),
        proptest::option::of(1u64..600_000),
    )
        .prop_map(|(id, created, ttl, poll)| {
            Task::new(id, ts(created), ttl, poll.and_then(NonZeroU64::new))
        })
}

pub(crate) fn arb_steps(max: usize) -> impl Strategy<Value = Vec<(Event, i64)>> {
    prop::collection::vec((arb_event(), arb_delta()), 0..max)
}

/// Applies `steps` in order from the task's creation time, skipping refused events.
pub(crate) fn run(task: Task, steps: Vec<(Event, i64)>) -> Task {
    let mut now = task.created_at().unix_millis() as i64;
    let mut task = task;
    for (event, delta) in steps {
        now = (now + delta).max(0);
        if let Ok(t) = apply(&task, event, ts(now as u64)) {
            task = t.task;
        }
    }
    task
}

/// A task in any reachable state.
pub(crate) fn arb_reachable_task() -> impl Strategy<Value = Task> {
    (arb_new_task(), arb_steps(12)).prop_map(|(task, steps)| run(task, steps))
}

/// The outstanding input requests of a task (empty unless `input_required`).
pub(crate) fn pending_map(task: &Task) -> BTreeMap<String, InputRequest> {
    match task.state() {
        TaskState::InputRequired { input_requests } => input_requests.as_map().clone(),
        _ => BTreeMap::new(),
    }
}

/// The first path (JSON pointer-ish) at which a forbidden key occurs, at any depth.
pub(crate) fn find_forbidden(value: &Value, path: &str) -> Option<String> {
    match value {
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            let here = format!("{path}/{k}");
            if FORBIDDEN_KEYS.contains(&k.as_str()) {
                Some(here)
            } else {
                find_forbidden(v, &here)
            }
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_forbidden(v, &format!("{path}/{i}"))),
        _ => None,
    }
}

/// `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`.
pub(crate) fn is_wire_timestamp(text: &str) -> bool {
    const PATTERN: &[u8] = b"dddd-dd-ddTdd:dd:dd.dddZ";
    text.len() == PATTERN.len()
        && text.bytes().zip(PATTERN).all(|(c, p)| match p {
            b'd' => c.is_ascii_digit(),
            literal => c == *literal,
        })
}

/// Arbitrary JSON biased towards the member names the parsers look at.
pub(crate) fn arb_any_json() -> impl Strategy<Value = Value> {
    let string = prop_oneof![
        4 => ".{0,12}",
        1 => "a{250,260}",
        1 => "€{80,90}",
        1 => Just(String::new()),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        string.prop_map(Value::from),
    ];
    let key = prop_oneof![
        3 => prop::sample::select(vec![
            "taskId",
            "inputResponses",
            "_meta",
            "io.modelcontextprotocol/protocolVersion",
            "io.modelcontextprotocol/clientCapabilities",
            "io.modelcontextprotocol/logLevel",
            "progressToken",
            "extensions",
            "io.modelcontextprotocol/tasks",
            "",
        ])
        .prop_map(str::to_owned),
        1 => ".{0,6}",
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
