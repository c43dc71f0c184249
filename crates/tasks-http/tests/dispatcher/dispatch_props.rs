//! Property test (docs/fuzzing.md): arbitrary bodies and headers through
//! `Dispatcher::dispatch` never panic and always get a well-formed answer.
//!
//! Inputs range from random bytes and arbitrary JSON to well-formed-looking JSON-RPC envelopes
//! with a served (or removed, or random) method, random params (known and unknown task ids,
//! random `inputResponses`, tool names and arguments), random `_meta`, and random routing
//! headers (missing, repeated, wrong, base64-wrapped). For each answer:
//!
//! * the HTTP status is one the server uses, and consistent with the JSON-RPC code;
//! * 202 with an empty body exactly for a readable notification;
//! * an SSE stream only for `subscriptions/listen` (and `tools/call`), starting with the
//!   acknowledgement;
//! * otherwise one JSON-RPC object: `"jsonrpc":"2.0"`, exactly one of `result`/`error`, an error
//!   with an integer code and a string message, the id echoed when the request's was a string
//!   or an integer, and absent when it could not be read.
//!
//! The long-running coverage-guided version of this lives in `fuzz/` (see `docs/fuzzing.md`).

use std::sync::OnceLock;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use futures_util::StreamExt as _;
use http::{HeaderMap, HeaderName, HeaderValue};
use proptest::prelude::*;
use proptest::strategy::ValueTree as _;
use serde_json::{json, Map, Value};
use tasks_core::Method;
use tasks_http::{Dispatcher, ResponseBody};
use tasks_test_support::dispatcher::*;
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
use tasks_test_support::wait::WAIT_LIMIT;

/// Tool names of the common test dispatcher, plus an unknown one.
const TOOLS: &[&str] = &[
    "sync_echo",
    "optional_job",
    "required_job",
    "park",
    "block",
    "explode",
    "interview",
    "sample",
    "compose",
    "strict",
    "no_such_tool",
];

const OTHER_METHODS: &[&str] = &[
    "tasks/result",
    "tasks/list",
    "initialize",
    "ping",
    "notifications/cancelled",
    "",
    "tools/call/",
];

/// Statuses the server answers with.
const STATUSES: &[u16] = &[200, 202, 400, 401, 403, 404, 405, 413, 415, 500];

struct World {
    rt: tokio::runtime::Runtime,
    d: Dispatcher,
    /// Real task ids: a parked one, a working one, a completed one.
    ids: Vec<String>,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (d, _) = dispatcher();
        // A prompt and a resource, so that the catalog methods are served too.
        d.runtime()
            .register_prompt(tasks_runtime::catalog::Prompt::new(
                "park",
                "A prompt named like a tool",
                |_ctx| async { Ok(tasks_runtime::catalog::PromptResult::default()) },
            ));
        d.runtime()
            .register_resource(tasks_runtime::catalog::Resource::text(
                "t://r",
                "r",
                "text/plain",
                "r",
            ));
        let ids = rt.block_on(async {
            let mut ids = Vec::new();
            for req in [
                Req::call("park", json!({})).tasks().elicitation(),
                Req::call("block", json!({})).tasks(),
                Req::call("optional_job", json!({})).tasks(),
            ] {
                ids.push(create(&d, req).await);
            }
            ids
        });
        World { rt, d, ids }
    })
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("\\PC{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A task id: one of the real ones (by index, resolved at run time) or a random string.
#[derive(Debug, Clone)]
enum TaskRef {
    Known(usize),
    Random(String),
    NotAString(Value),
}

fn arb_task_ref() -> impl Strategy<Value = TaskRef> {
    prop_oneof![
        4 => (0usize..3).prop_map(TaskRef::Known),
        2 => "\\PC{0,20}".prop_map(TaskRef::Random),
        1 => "[a-z]{257,300}".prop_map(TaskRef::Random),
        1 => arb_json().prop_map(TaskRef::NotAString),
    ]
}

fn arb_caps() -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => Just(json!({})),
        3 => Just(json!({"extensions": {TASKS: {}}})),
        5 => Just(json!({"elicitation": {}, "sampling": {}, "extensions": {TASKS: {}}})),
        1 => Just(json!({"extensions": {TASKS: {"setting": 1}}})),
        1 => Just(json!({"extensions": []})),
        1 => arb_json(),
    ]
}

fn arb_meta() -> impl Strategy<Value = Option<Value>> {
    let version = prop_oneof![
        30 => Just(Some(json!(VERSION))),
        1 => Just(Some(json!("2025-11-25"))),
        1 => Just(None),
        1 => arb_json().prop_map(Some),
    ];
    prop_oneof![
        20 => (version, prop::option::weighted(0.95, arb_caps())).prop_map(|(v, c)| {
            let mut meta = Map::new();
            if let Some(v) = v {
                meta.insert(META_VERSION.into(), v);
            }
            if let Some(c) = c {
                meta.insert(META_CAPS.into(), c);
            }
            Some(Value::Object(meta))
        }),
        1 => Just(None),
        1 => arb_json().prop_map(Some),
    ]
}

/// The parts of a request before the task refs are resolved.
#[derive(Debug, Clone)]
struct Envelope {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Value,
    task: TaskRef,
    tool: String,
    arguments: Value,
    input_responses: Option<Value>,
    extra: Option<(String, Value)>,
    /// `notifications` of a `subscriptions/listen`: `None` names every known id and a few
    /// unknown ones in `taskIds`.
    notifications: Option<Value>,
    meta: Option<Value>,
    params_override: Option<Value>,
    headers: Headers,
}

#[derive(Debug, Clone)]
struct Headers {
    version: HeaderChoice,
    method: HeaderChoice,
    name: HeaderChoice,
}

/// How one routing header is sent.
#[derive(Debug, Clone)]
enum HeaderChoice {
    /// The value matching the body.
    Matching,
    /// The matching value, base64-wrapped.
    Wrapped,
    /// The matching value with blanks around it.
    Padded,
    Missing,
    /// Sent twice.
    Repeated,
    /// Any bytes a header value may carry.
    Raw(Vec<u8>),
}

fn arb_header_choice() -> impl Strategy<Value = HeaderChoice> {
    prop_oneof![
        40 => Just(HeaderChoice::Matching),
        1 => Just(HeaderChoice::Wrapped),
        1 => Just(HeaderChoice::Padded),
        1 => Just(HeaderChoice::Missing),
        1 => Just(HeaderChoice::Repeated),
        1 => prop::collection::vec(
            prop_oneof![0x20u8..0x7f, Just(b'\t'), 0x80u8..=0xff],
            0..24
        )
        .prop_map(HeaderChoice::Raw),
        1 => "[ -~]{0,12}".prop_map(|s| HeaderChoice::Raw(format!("=?base64?{s}?=").into_bytes())),
    ]
}

fn arb_envelope() -> impl Strategy<Value = Envelope> {
    let jsonrpc = prop_oneof![
        40 => Just(Some(json!("2.0"))),
        1 => Just(None),
        1 => Just(Some(json!("1.0"))),
        1 => Just(Some(json!(2.0))),
    ];
    let id = prop_oneof![
        8 => any::<i64>().prop_map(|n| Some(json!(n))),
        8 => "\\PC{0,10}".prop_map(|s| Some(json!(s))),
        1 => any::<u64>().prop_map(|n| Some(json!(n))),
        2 => Just(None),
        1 => arb_json().prop_map(Some),
    ];
    let method = prop_oneof![
        10 => prop::sample::select(Method::ALL.to_vec()).prop_map(|m| json!(m.as_str())),
        2 => prop::sample::select(OTHER_METHODS).prop_map(|m| json!(m)),
        1 => "\\PC{0,16}".prop_map(|m| json!(m)),
        1 => arb_json(),
    ];
    let input_responses = prop::option::weighted(
        0.3,
        prop_oneof![
            3 => prop::collection::btree_map(
                prop_oneof![Just("confirm".to_owned()), Just(String::new()), "\\PC{0,6}"],
                prop_oneof![
                    Just(json!({"action": "accept", "content": {"answer": "p"}})),
                    arb_json(),
                ],
                0..3,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
            1 => arb_json(),
        ],
    );
    let headers = (
        arb_header_choice(),
        arb_header_choice(),
        arb_header_choice(),
    )
        .prop_map(|(version, method, name)| Headers {
            version,
            method,
            name,
        });
    (
        (jsonrpc, id, method, arb_task_ref()),
        (
            prop::sample::select(TOOLS).prop_map(str::to_owned),
            prop_oneof![4 => Just(json!({})), 1 => arb_json()],
            input_responses,
            prop::option::weighted(
                0.3,
                (
                    prop::sample::select(&["notifications", "cursor", "requestState", "task"][..])
                        .prop_map(str::to_owned),
                    prop_oneof![Just(json!({"taskIds": []})), Just(json!({})), arb_json(),],
                ),
            ),
        ),
        arb_meta(),
        prop::option::weighted(0.1, arb_json()),
        headers,
        prop::option::weighted(
            0.5,
            prop_oneof![Just(json!({})), Just(json!({"taskIds": []})), arb_json()],
        ),
    )
        .prop_map(
            |(
                (jsonrpc, id, method, task),
                (tool, arguments, input_responses, extra),
                meta,
                params_override,
                headers,
                notifications,
            )| Envelope {
                jsonrpc,
                id,
                method,
                task,
                tool,
                arguments,
                input_responses,
                extra,
                notifications,
                meta,
                params_override,
                headers,
            },
        )
}

#[derive(Debug, Clone)]
enum Input {
    Envelope(Box<Envelope>),
    Json(Value),
    Bytes(Vec<u8>),
}

fn arb_input() -> impl Strategy<Value = Input> {
    prop_oneof![
        12 => arb_envelope().prop_map(|e| Input::Envelope(Box::new(e))),
        1 => arb_json().prop_map(Input::Json),
        1 => prop::collection::vec(any::<u8>(), 0..64).prop_map(Input::Bytes),
    ]
}

fn header_value(bytes: &[u8]) -> Option<HeaderValue> {
    HeaderValue::from_bytes(bytes).ok()
}

fn put(headers: &mut HeaderMap, name: &'static str, choice: &HeaderChoice, matching: &str) {
    let name = HeaderName::from_static(name);
    let value = match choice {
        HeaderChoice::Missing => return,
        HeaderChoice::Matching | HeaderChoice::Repeated => matching.as_bytes().to_vec(),
        HeaderChoice::Wrapped => format!("=?base64?{}?=", STANDARD.encode(matching)).into_bytes(),
        HeaderChoice::Padded => format!(" \t{matching} ").into_bytes(),
        HeaderChoice::Raw(bytes) => bytes.clone(),
    };
    // Values no HTTP stack would deliver (control bytes) are left out.
    let Some(value) = header_value(&value) else {
        return;
    };
    if matches!(choice, HeaderChoice::Repeated) {
        headers.append(name.clone(), value.clone());
    }
    headers.append(name, value);
}

/// Builds the body and headers of an input.
fn materialize(input: &Input, ids: &[String]) -> (HeaderMap, Vec<u8>) {
    let envelope = match input {
        Input::Bytes(bytes) => return (default_headers("tools/list"), bytes.clone()),
        Input::Json(value) => {
            return (
                default_headers("tools/list"),
                serde_json::to_vec(value).unwrap(),
            )
        }
        Input::Envelope(envelope) => envelope,
    };
    let task_id = match &envelope.task {
        TaskRef::Known(i) => json!(ids[*i]),
        TaskRef::Random(s) => json!(s),
        TaskRef::NotAString(v) => v.clone(),
    };
    let method = envelope.method.as_str().unwrap_or("");
    let mut params = Map::new();
    match method {
        "tools/call" => {
            params.insert("name".into(), json!(envelope.tool));
            params.insert("arguments".into(), envelope.arguments.clone());
        }
        "subscriptions/listen" => {
            let notifications = envelope.notifications.clone().unwrap_or_else(|| {
                let mut task_ids: Vec<Value> = ids.iter().map(|id| json!(id)).collect();
                task_ids.push(task_id.clone());
                json!({"taskIds": task_ids})
            });
            params.insert("notifications".into(), notifications);
        }
        _ => {
            params.insert("taskId".into(), task_id.clone());
        }
    }
    if let Some(responses) = &envelope.input_responses {
        params.insert("inputResponses".into(), responses.clone());
    }
    if let Some((key, value)) = &envelope.extra {
        params.insert(key.clone(), value.clone());
    }
    if let Some(meta) = &envelope.meta {
        params.insert("_meta".into(), meta.clone());
    }
    let mut message = Map::new();
    if let Some(jsonrpc) = &envelope.jsonrpc {
        message.insert("jsonrpc".into(), jsonrpc.clone());
    }
    if let Some(id) = &envelope.id {
        message.insert("id".into(), id.clone());
    }
    message.insert("method".into(), envelope.method.clone());
    message.insert(
        "params".into(),
        envelope
            .params_override
            .clone()
            .unwrap_or(Value::Object(params.clone())),
    );

    let mut headers = HeaderMap::new();
    let version = envelope
        .meta
        .as_ref()
        .and_then(|m| m.get(META_VERSION))
        .and_then(Value::as_str)
        .unwrap_or(VERSION);
    put(
        &mut headers,
        "mcp-protocol-version",
        &envelope.headers.version,
        version,
    );
    put(&mut headers, "mcp-method", &envelope.headers.method, method);
    let name = match method {
        "tools/call" => Some(envelope.tool.clone()),
        _ => task_id.as_str().map(str::to_owned),
    };
    put(
        &mut headers,
        "mcp-name",
        &envelope.headers.name,
        name.as_deref().unwrap_or("x"),
    );
    (
        headers,
        serde_json::to_vec(&Value::Object(message)).unwrap(),
    )
}

fn default_headers(method: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("mcp-protocol-version", HeaderValue::from_static(VERSION));
    headers.insert("mcp-method", HeaderValue::from_str(method).unwrap());
    headers
}

/// What the request says about itself, read independently of the server.
struct Expect {
    /// A readable id (string or integer) to echo.
    id: Option<Value>,
    /// Parsed as one JSON-RPC 2.0 notification: must be answered 202 with no body.
    notification: bool,
    method: Option<String>,
}

fn expect(body: &[u8]) -> Expect {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let object = parsed.as_ref().and_then(Value::as_object);
    let id = object.and_then(|o| o.get("id")).and_then(|id| match id {
        Value::String(_) => Some(id.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(id.clone()),
        _ => None,
    });
    let valid_id = object.is_some_and(|o| o.get("id").is_none_or(|_| id.is_some()));
    let method = object
        .and_then(|o| o.get("method"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let notification = object.is_some_and(|o| {
        o.get("id").is_none() && o.get("jsonrpc") == Some(&json!("2.0")) && method.is_some()
    }) && valid_id;
    Expect {
        id,
        notification,
        method,
    }
}

fn status_for_code(code: i64) -> &'static [u16] {
    match code {
        -32700 | -32602 | -32020 | -32021 | -32022 => &[400],
        -32600 => &[400, 401, 403, 405, 413, 415],
        -32601 => &[404],
        _ => &[500],
    }
}

fn check_message(message: &Value, expect: &Expect, status: u16) -> Result<(), TestCaseError> {
    let object = message
        .as_object()
        .ok_or_else(|| TestCaseError::fail(format!("not an object: {message}")))?;
    prop_assert_eq!(object.get("jsonrpc"), Some(&json!("2.0")), "{}", message);
    for key in object.keys() {
        prop_assert!(
            ["jsonrpc", "id", "result", "error"].contains(&key.as_str()),
            "unexpected member {} in {}",
            key,
            message
        );
    }
    match (object.get("result"), object.get("error")) {
        (Some(result), None) => {
            prop_assert_eq!(status, 200, "{}", message);
            prop_assert!(result["resultType"].is_string(), "{}", message);
            prop_assert!(result["_meta"][SERVER_INFO].is_object(), "{}", message);
            prop_assert_eq!(object.get("id"), expect.id.as_ref(), "{}", message);
        }
        (None, Some(error)) => {
            let code = error["code"].as_i64();
            prop_assert!(code.is_some(), "integer code: {}", message);
            prop_assert!(error["message"].is_string(), "string message: {}", message);
            for key in error.as_object().unwrap().keys() {
                prop_assert!(["code", "message", "data"].contains(&key.as_str()));
            }
            let code = code.unwrap();
            prop_assert!(
                status_for_code(code).contains(&status),
                "status {} for code {}: {}",
                status,
                code,
                message
            );
            // The id is echoed when it could be read, and only then.
            prop_assert_eq!(object.get("id"), expect.id.as_ref(), "{}", message);
        }
        _ => prop_assert!(false, "exactly one of result/error: {}", message),
    }
    Ok(())
}

fn check(input: &Input) -> Result<(), TestCaseError> {
    let w = world();
    let (headers, body) = materialize(input, &w.ids);
    let expect = expect(&body);
    let response =
        w.rt.block_on(w.d.dispatch(&headers, &body, tasks_runtime::Caller::shared()));
    prop_assert!(STATUSES.contains(&response.status), "{}", response.status);
    match response.body {
        ResponseBody::Empty => {
            prop_assert_eq!(response.status, 202);
            prop_assert!(expect.notification, "202 only for a notification");
        }
        ResponseBody::Json(bytes) => {
            prop_assert_ne!(response.status, 202);
            let message: Value = serde_json::from_slice(&bytes)
                .map_err(|e| TestCaseError::fail(format!("not JSON ({e})")))?;
            if expect.notification {
                // Only a notification the server cannot accept gets a body: an HTTP 4xx with
                // a JSON-RPC error without an id (streamable HTTP "Sending Messages to the
                // Server"); the 2025 session path refuses one without a session this way.
                prop_assert!(
                    (400..500).contains(&response.status),
                    "a notification got a body: {}",
                    message
                );
                prop_assert!(message.get("error").is_some(), "{}", message);
                prop_assert!(message.get("id").is_none_or(Value::is_null), "{}", message);
            } else {
                check_message(&message, &expect, response.status)?;
            }
        }
        ResponseBody::Stream(mut stream) => {
            prop_assert_eq!(response.status, 200);
            prop_assert!(
                matches!(
                    expect.method.as_deref(),
                    Some("subscriptions/listen" | "tools/call")
                ),
                "a stream for {:?}",
                expect.method
            );
            let first = w.rt.block_on(async {
                tokio::time::timeout(WAIT_LIMIT, stream.next())
                    .await
                    .ok()
                    .flatten()
            });
            let first: Value = first
                .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                .ok_or_else(|| TestCaseError::fail("a stream starts with one JSON message"))?;
            prop_assert_eq!(&first["jsonrpc"], "2.0");
            if expect.method.as_deref() == Some("subscriptions/listen") {
                prop_assert_eq!(&first["method"], "notifications/subscriptions/acknowledged");
                prop_assert_eq!(
                    Some(&first["params"]["_meta"][SUBSCRIPTION_ID]),
                    expect.id.as_ref()
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn dispatch_always_answers_well_formed(input in arb_input()) {
        check(&input)?;
    }
}

/// The generator reaches the interesting outcomes, so the property is not vacuous.
#[test]
fn generated_inputs_reach_results_errors_notifications_and_streams() {
    let w = world();
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = arb_input();
    let (mut results, mut errors, mut accepted, mut streams) = (0, 0, 0, 0);
    let mut codes = std::collections::BTreeSet::new();
    for _ in 0..400 {
        let input = strategy.new_tree(&mut runner).unwrap().current();
        let (headers, body) = materialize(&input, &w.ids);
        let response =
            w.rt.block_on(w.d.dispatch(&headers, &body, tasks_runtime::Caller::shared()));
        match &response.body {
            ResponseBody::Empty => accepted += 1,
            ResponseBody::Stream(_) => streams += 1,
            ResponseBody::Json(_) => match response.json().unwrap().get("error") {
                Some(error) => {
                    errors += 1;
                    codes.insert(error["code"].as_i64().unwrap());
                }
                None => results += 1,
            },
        }
    }
    assert!(results >= 20, "results: {results}");
    assert!(errors >= 100, "errors: {errors}");
    assert!(accepted >= 1, "notifications: {accepted}");
    assert!(streams >= 1, "streams: {streams}");
    for code in [-32700, -32600, -32601, -32602, -32020, -32021] {
        assert!(codes.contains(&code), "{code} never produced: {codes:?}");
    }
}
