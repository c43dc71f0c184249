//! In-process tests (no sockets) of the core 2026-07-28 wire features added with the core
//! scenarios: progress and log notifications on a synchronous call's SSE response
//! (MCP 2026-07-28 progress, logging, streamable-http "Receiving Messages"), cancellation when
//! the client drops that stream (streamable-http "Cancellation"), `Mcp-Param-*` headers of
//! `x-mcp-header` arguments (streamable-http "Custom Headers from Tool Parameters"),
//! `tools.listChanged` and `notifications/tools/list_changed` on `subscriptions/listen`
//! (subscriptions; tools "List Changed Notification"), and the request's client capabilities as
//! seen by tools. Spec pages: <https://modelcontextprotocol.io/specification/2026-07-28>.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use http_body_util::BodyExt as _;
use serde_json::{json, Value};
use tasks_core::input::ClientCapability;
use tasks_core::{JsonRpcError, LogLevel, TaskPolicy, TaskStatus};
use tasks_http::MessageStream;
use tasks_http::{Dispatcher, McpResponse, ResponseBody};
use tasks_runtime::{text_result, ListChanges, ListKind, Tool, ToolContext, ToolError};
use tasks_test_support::dispatcher::*;
use tasks_test_support::events::wait_status;
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
use tasks_test_support::tools::*;
use tasks_test_support::wait::WAIT_LIMIT;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

// ---------------------------------------------------------------------------------------------
// Test tools and the server under test.
// ---------------------------------------------------------------------------------------------

/// What the client-going-away tool reports to the test.
#[derive(Default)]
struct GoneProbe {
    /// The run's cancellation token fired (observed by a watcher task holding a clone).
    fired: AtomicBool,
    fired_notify: Notify,
    /// The tool's future was dropped (the run stopped).
    dropped: AtomicBool,
    dropped_notify: Notify,
    /// The token itself, to check it is not cancelled before the client leaves.
    token: Mutex<Option<CancellationToken>>,
}

/// Sets `dropped` when the tool future holding it is dropped.
struct DropSignal(Arc<GoneProbe>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
        self.0.dropped_notify.notify_one();
    }
}

/// Shared state of the extra tools.
#[derive(Default)]
struct Extras {
    regional_runs: AtomicUsize,
    gone: Arc<GoneProbe>,
}

fn echo_args(ctx: &ToolContext) -> String {
    Value::Object(ctx.arguments().clone()).to_string()
}

/// The tools of this file, registered after the common test tools.
///
/// | tool | behaviour |
/// |---|---|
/// | `progress_steps` | progress 0/100, 0 (again), 50/100 "half", 40 (back), 100.5/200 "fraction"; answers with what `progress` returned |
/// | `silent_progress` | never notifies; answers `quiet` |
/// | `log_levels` | logs at debug, info, warning (`db`), error; answers with `logs()` and what `log` returned |
/// | `mixed_notifications` | progress 1/2, a warning and a debug log, progress 2/2 |
/// | `progress_then_input` | progress 1 "asking", then asks `confirm` (elicitation) |
/// | `progress_then_error` | progress 1, then a JSON-RPC error -32050 with data |
/// | `hang` | progress 1 "started", then waits for cancellation (see [`GoneProbe`]) |
/// | `caps_probe` | optional task; answers with the client capabilities it sees |
/// | `regional` | optional task; `region`/`count`/`dry` mirrored in `Mcp-Param-Region/Count/Dry` |
fn extra_tools(extras: &Arc<Extras>) -> Vec<Tool> {
    let regional = extras.clone();
    let gone = extras.gone.clone();
    vec![
        Tool::new("progress_steps", "Reports progress", |ctx| async move {
            let sent = [
                ctx.progress(0.0, Some(100.0), None),
                ctx.progress(0.0, Some(100.0), Some("again")),
                ctx.progress(50.0, Some(100.0), Some("half")),
                ctx.progress(40.0, None, Some("back")),
                ctx.progress(100.5, Some(200.0), Some("fraction")),
            ];
            Ok(text_result(format!("sent={sent:?}")))
        }),
        Tool::new("silent_progress", "Never notifies", |_ctx| async {
            Ok(text_result("quiet"))
        }),
        Tool::new("log_levels", "Logs", |ctx| async move {
            let logs = [ctx.logs(LogLevel::Info), ctx.logs(LogLevel::Warning)];
            let sent = [
                ctx.log(LogLevel::Debug, Some("d"), json!("debug detail")),
                ctx.log(LogLevel::Info, None, json!("info line")),
                ctx.log(LogLevel::Warning, Some("d"), json!("disk low")),
                ctx.log(LogLevel::Error, None, json!({"code": 5})),
            ];
            Ok(text_result(format!("logs={logs:?} sent={sent:?}")))
        }),
        Tool::new(
            "mixed_notifications",
            "Progress and logs interleaved",
            |ctx| async move {
                ctx.progress(1.0, Some(2.0), Some("one"));
                ctx.log(LogLevel::Warning, Some("mix"), json!("between"));
                ctx.log(LogLevel::Debug, Some("mix"), json!("dropped"));
                ctx.progress(2.0, Some(2.0), Some("two"));
                Ok(text_result("mixed"))
            },
        ),
        Tool::new(
            "progress_then_input",
            "Progress, then input",
            |ctx| async move {
                ctx.progress(1.0, None, Some("asking"));
                let answer = ctx
                    .input("confirm", elicitation("Proceed?", "answer"))
                    .await?;
                let answer = accepted_str(&answer, "answer").unwrap_or("none").to_owned();
                Ok(text_result(format!("answer={answer}")))
            },
        ),
        Tool::new(
            "progress_then_error",
            "Progress, then an error",
            |ctx| async move {
                ctx.progress(1.0, None, None);
                Err::<Value, _>(ToolError::Rpc(JsonRpcError {
                    code: -32050,
                    message: "Backend unavailable".into(),
                    data: Some(json!({"retry": false})),
                }))
            },
        ),
        Tool::new("hang", "Runs until cancelled", move |ctx| {
            let probe = gone.clone();
            async move {
                let token = ctx.cancellation().clone();
                *probe.token.lock().unwrap() = Some(token.clone());
                let watcher = probe.clone();
                tokio::spawn(async move {
                    token.cancelled().await;
                    watcher.fired.store(true, Ordering::SeqCst);
                    watcher.fired_notify.notify_one();
                });
                let _dropped = DropSignal(probe);
                ctx.progress(1.0, None, Some("started"));
                ctx.cancellation().cancelled().await;
                Err::<Value, _>(ToolError::Cancelled)
            }
        }),
        Tool::new(
            "caps_probe",
            "Reports the client capabilities",
            |ctx| async move {
                Ok(text_result(format!(
                    "sampling={} elicitation={} task={} caps={}",
                    ctx.client_declares(ClientCapability::Sampling),
                    ctx.client_declares(ClientCapability::ElicitationForm),
                    ctx.is_task(),
                    Value::Object(ctx.client_capabilities().clone())
                )))
            },
        )
        .with_policy(TaskPolicy::Optional),
        Tool::new("regional", "Routes on region", move |ctx| {
            regional.regional_runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok(text_result(format!("args={}", echo_args(&ctx)))) }
        })
        .with_input_schema(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer", "x-mcp-header": "Count"},
                "dry": {"type": "boolean", "x-mcp-header": "Dry"},
                "note": {"type": "string"},
            },
        }))
        .with_policy(TaskPolicy::Optional),
    ]
}

/// A dispatcher with the common tools and [`extra_tools`], announcing list changes on
/// `changes` when given.
fn server(changes: Option<ListChanges>) -> (Dispatcher, Arc<Extras>) {
    let runs = Arc::new(Runs::default());
    let extras = Arc::new(Extras::default());
    let mut builder = builder(&runs);
    for tool in extra_tools(&extras) {
        builder = builder.tool(tool);
    }
    if let Some(changes) = changes {
        builder = builder.list_changes(changes);
    }
    (builder.build(), extras)
}

/// A `_meta` with the protocol version, `caps`, and the entries of `extra`.
fn meta(caps: Value, extra: Value) -> Value {
    let mut meta = json!({META_VERSION: VERSION, META_CAPS: caps});
    let object = meta.as_object_mut().unwrap();
    for (key, value) in extra.as_object().unwrap() {
        object.insert(key.clone(), value.clone());
    }
    meta
}

/// `tools/call` of `tool` with `{}` arguments and progress token `token`.
fn with_token(tool: &str, token: Value) -> Req {
    Req::call(tool, json!({})).meta(meta(json!({}), json!({"progressToken": token})))
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// The stream of an SSE reply (status 200).
fn stream_of(reply: Reply) -> MessageStream {
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.into_stream()
}

/// Asserts that the stream has ended (within the wait limit).
async fn assert_ended(stream: &mut MessageStream) {
    let next = tokio::time::timeout(WAIT_LIMIT, stream.next())
        .await
        .expect("the stream ends within the wait limit");
    assert!(
        next.is_none(),
        "nothing after the final response: {:?}",
        next.map(|b| String::from_utf8_lossy(&b).into_owned())
    );
}

/// Every message of a stream until it ends.
async fn all_messages(mut stream: MessageStream) -> Vec<Value> {
    let mut messages = Vec::new();
    loop {
        let next = tokio::time::timeout(WAIT_LIMIT, stream.next())
            .await
            .expect("the stream ends within the wait limit");
        match next {
            Some(bytes) => messages.push(serde_json::from_slice(&bytes).unwrap()),
            None => return messages,
        }
    }
}

fn progress(token: Value, params: Value) -> Value {
    let mut params = params;
    params
        .as_object_mut()
        .unwrap()
        .insert("progressToken".into(), token);
    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
}

fn log_message(params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": params})
}

/// The final result frame of `id` with `result` (serverInfo `_meta` added).
fn final_result(id: Value, result: Value) -> Value {
    let mut result = result;
    result
        .as_object_mut()
        .unwrap()
        .insert("_meta".into(), server_meta());
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn text_complete(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": false,
           "resultType": "complete"})
}

// ---------------------------------------------------------------------------------------------
// 1. Progress notifications on the SSE response of a synchronous call.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn progress_streams_increasing_notifications_then_the_result() {
    let (d, _) = server(None);
    for token in [json!("tok-1"), json!(7)] {
        let reply = with_token("progress_steps", token.clone())
            .id(json!("call-1"))
            .send(&d)
            .await;
        let messages = all_messages(stream_of(reply)).await;
        assert_eq!(
            messages,
            vec![
                progress(token.clone(), json!({"progress": 0, "total": 100})),
                progress(
                    token.clone(),
                    json!({"progress": 50, "total": 100, "message": "half"})
                ),
                progress(
                    token.clone(),
                    json!({"progress": 100.5, "total": 200, "message": "fraction"})
                ),
                final_result(
                    json!("call-1"),
                    text_complete("sent=[true, false, true, false, true]")
                ),
            ],
            "token {token}"
        );
        // Integral values are written as JSON integers, with the token's own JSON type.
        assert!(messages[0]["params"]["progress"].is_u64());
        assert!(messages[1]["params"]["total"].is_u64());
        assert!(messages[2]["params"]["progress"].is_f64());
        assert_eq!(
            messages[0]["params"]["progressToken"].is_string(),
            token.is_string()
        );
    }
}

/// `<status>\n<content-type>|<cache-control>|<x-accel-buffering>\n<body bytes>` of the HTTP
/// response the hyper adapter writes for `reply`.
async fn http_wire(reply: Reply) -> String {
    let response = tasks_http::into_http(McpResponse {
        status: reply.status,
        body: reply.body,
        session_id: reply.session_id,
    });
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_owned()
    };
    let head = format!(
        "{}\n{}|{}|{}",
        response.status().as_u16(),
        header("content-type"),
        header("cache-control"),
        header("x-accel-buffering")
    );
    let body = tokio::time::timeout(WAIT_LIMIT, response.into_body().collect())
        .await
        .expect("the body ends within the wait limit")
        .unwrap()
        .to_bytes();
    format!("{head}\n{}", String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test]
async fn progress_sse_wire_bytes() {
    let (d, _) = server(None);
    let reply = with_token("progress_steps", json!("progress-test-1"))
        .id(json!(41))
        .send(&d)
        .await;
    let wire = http_wire(reply).await;
    assert!(
        wire.starts_with("200\ntext/event-stream|no-cache|no\ndata: {"),
        "{wire}"
    );
    assert_eq!(wire.matches("data: ").count(), 4, "{wire}");
    insta::assert_snapshot!("progress_sse", wire);
}

#[tokio::test]
async fn without_a_progress_token_or_event_stream_accept_the_answer_is_json() {
    let (d, _) = server(None);
    let json_answer = text_complete("sent=[false, false, false, false, false]");
    // No progressToken.
    let reply = Req::call("progress_steps", json!({})).send(&d).await;
    assert!(matches!(reply.body, ResponseBody::Json(_)), "{reply:?}");
    assert_eq!(reply.json(), final_result(json!(1), json_answer.clone()));
    // A progressToken, but the client does not accept text/event-stream.
    for accept in [
        "application/json",
        "application/json;q=1",
        "application/json, text/event-stream;q=0",
        "text/event-stream; q=0.0, application/json",
    ] {
        let reply = with_token("progress_steps", json!("tok"))
            .header("accept", accept)
            .send(&d)
            .await;
        assert!(matches!(reply.body, ResponseBody::Json(_)), "{reply:?}");
        assert_eq!(reply.json(), final_result(json!(1), json_answer.clone()));
    }
    // Wildcards covering text/event-stream do stream.
    for accept in ["*/*", "text/*", "text/event-stream;q=0.5"] {
        let reply = with_token("progress_steps", json!("tok"))
            .header("accept", accept)
            .send(&d)
            .await;
        let messages = all_messages(stream_of(reply)).await;
        assert_eq!(messages.len(), 4, "{accept}: {messages:?}");
    }
}

/// The module docs of `sync_call.rs`: "If it finishes before notifying, the answer is JSON":
/// a request that opted into notifications (progress token or log level) whose tool sends none
/// is answered with one JSON message, not an SSE stream.
#[tokio::test]
async fn a_call_that_opted_in_but_never_notifies_answers_json() {
    let (d, _) = server(None);
    let cases = [
        ("silent_progress", json!({"progressToken": "tok"}), "quiet"),
        // A log level alone: the tool's progress calls are not sent, so nothing is.
        (
            "progress_steps",
            json!({LOG_LEVEL: "info"}),
            "sent=[false, false, false, false, false]",
        ),
    ];
    for (tool, extra, text) in cases {
        let reply = Req::call(tool, json!({}))
            .meta(meta(json!({}), extra.clone()))
            .send(&d)
            .await;
        if let ResponseBody::Stream(stream) = reply.body {
            panic!(
                "{tool} {extra}: expected one JSON answer, got an SSE stream carrying {:?}",
                all_messages(stream).await
            );
        }
        assert_eq!(reply.json(), final_result(json!(1), text_complete(text)));
    }
}

#[tokio::test]
async fn a_tool_that_notifies_then_needs_input_ends_the_stream_with_input_required() {
    let (d, _) = server(None);
    let caps = json!({"elicitation": {}});
    let reply = Req::call("progress_then_input", json!({}))
        .id(json!(5))
        .meta(meta(caps.clone(), json!({"progressToken": "p"})))
        .send(&d)
        .await;
    let mut stream = stream_of(reply);
    assert_eq!(
        next_message(&mut stream).await,
        progress(json!("p"), json!({"progress": 1, "message": "asking"}))
    );
    let last = next_message(&mut stream).await;
    assert_ended(&mut stream).await;
    assert_eq!(last["id"], 5, "{last}");
    let result = &last["result"];
    assert_eq!(result["resultType"], "input_required", "{last}");
    assert_eq!(
        result["inputRequests"],
        json!({"confirm": {"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "Proceed?",
            "requestedSchema": {"type": "object", "properties": {"answer": {"type": "string"}}}
        }}})
    );
    assert_eq!(result["_meta"], server_meta());
    let state = result["requestState"].as_str().unwrap().to_owned();

    // The retry with the answer and the state streams the progress again, then completes.
    let reply = Req::call("progress_then_input", json!({}))
        .id(json!(6))
        .meta(meta(caps, json!({"progressToken": "p"})))
        .param("requestState", json!(state))
        .param(
            "inputResponses",
            json!({"confirm": accept(json!({"answer": "yes"}))}),
        )
        .send(&d)
        .await;
    assert_eq!(
        all_messages(stream_of(reply)).await,
        vec![
            progress(json!("p"), json!({"progress": 1, "message": "asking"})),
            final_result(json!(6), text_complete("answer=yes")),
        ]
    );
}

#[tokio::test]
async fn a_tool_that_notifies_then_fails_ends_the_stream_with_the_error() {
    let (d, _) = server(None);
    let reply = with_token("progress_then_error", json!(99))
        .id(json!("e"))
        .send(&d)
        .await;
    assert_eq!(
        all_messages(stream_of(reply)).await,
        vec![
            progress(json!(99), json!({"progress": 1})),
            json!({"jsonrpc": "2.0", "id": "e", "error": {
                "code": -32050, "message": "Backend unavailable", "data": {"retry": false}}}),
        ]
    );
    // Undeclared capability after a notification: the -32021 error closes the stream.
    let reply = Req::call("progress_then_input", json!({}))
        .id(json!(8))
        .meta(meta(json!({}), json!({"progressToken": "p"})))
        .send(&d)
        .await;
    assert_eq!(
        all_messages(stream_of(reply)).await,
        vec![
            progress(json!("p"), json!({"progress": 1, "message": "asking"})),
            json!({"jsonrpc": "2.0", "id": 8, "error": {
                "code": -32021, "message": "Missing required client capability",
                "data": {"requiredCapabilities": {"elicitation": {"form": {}}}}}}),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// 2. Log messages at or above the requested level.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn log_level_warning_delivers_only_warning_and_above() {
    let (d, _) = server(None);
    let reply = Req::call("log_levels", json!({}))
        .id(json!(3))
        .meta(meta(json!({}), json!({LOG_LEVEL: "warning"})))
        .send(&d)
        .await;
    assert_eq!(
        all_messages(stream_of(reply)).await,
        vec![
            log_message(json!({"level": "warning", "logger": "d", "data": "disk low"})),
            log_message(json!({"level": "error", "data": {"code": 5}})),
            final_result(
                json!(3),
                text_complete("logs=[false, true] sent=[false, false, true, true]")
            ),
        ]
    );

    // "debug" delivers every level, in order.
    let reply = Req::call("log_levels", json!({}))
        .meta(meta(json!({}), json!({LOG_LEVEL: "debug"})))
        .send(&d)
        .await;
    let messages = all_messages(stream_of(reply)).await;
    let levels: Vec<&str> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["debug", "info", "warning", "error"]);
    assert_eq!(
        messages[0],
        log_message(json!({"level": "debug", "logger": "d", "data": "debug detail"}))
    );
    assert_eq!(
        text_of(&messages[4]["result"]),
        "logs=[true, true] sent=[true, true, true, true]"
    );
}

#[tokio::test]
async fn without_a_log_level_no_message_is_sent() {
    let (d, _) = server(None);
    let reply = Req::call("log_levels", json!({})).send(&d).await;
    assert!(matches!(reply.body, ResponseBody::Json(_)), "{reply:?}");
    assert_eq!(
        reply.json(),
        final_result(
            json!(1),
            text_complete("logs=[false, false] sent=[false, false, false, false]")
        )
    );
}

#[tokio::test]
async fn progress_and_log_messages_share_the_stream_in_order() {
    let (d, _) = server(None);
    let reply = Req::call("progress_then_error", json!({}))
        .meta(meta(
            json!({}),
            json!({LOG_LEVEL: "error", "progressToken": "both"}),
        ))
        .send(&d)
        .await;
    let methods: Vec<Value> = all_messages(stream_of(reply))
        .await
        .into_iter()
        .map(|m| m.get("method").cloned().unwrap_or(json!("<response>")))
        .collect();
    assert_eq!(
        methods,
        [json!("notifications/progress"), json!("<response>")]
    );

    // Both opted in: progress and log messages interleave in the order the tool sent them.
    let reply = Req::call("mixed_notifications", json!({}))
        .id(json!(12))
        .meta(meta(
            json!({}),
            json!({LOG_LEVEL: "warning", "progressToken": "mix"}),
        ))
        .send(&d)
        .await;
    assert_eq!(
        all_messages(stream_of(reply)).await,
        vec![
            progress(
                json!("mix"),
                json!({"progress": 1, "total": 2, "message": "one"})
            ),
            log_message(json!({"level": "warning", "logger": "mix", "data": "between"})),
            progress(
                json!("mix"),
                json!({"progress": 2, "total": 2, "message": "two"})
            ),
            final_result(json!(12), text_complete("mixed")),
        ]
    );
}

#[tokio::test]
async fn an_invalid_log_level_is_invalid_params() {
    let (d, extras) = server(None);
    for level in [
        json!("loud"),
        json!(3),
        json!("WARNING"),
        json!({"level": "info"}),
    ] {
        let reply = Req::call("regional", json!({}))
            .meta(meta(json!({}), json!({LOG_LEVEL: level})))
            .send(&d)
            .await;
        reply.error(
            400,
            -32602,
            "params._meta io.modelcontextprotocol/logLevel is not a log level",
        );
    }
    let reply = Req::new("server/discover")
        .meta(meta(json!({}), json!({LOG_LEVEL: "loud"})))
        .send(&d)
        .await;
    reply.error(
        400,
        -32602,
        "params._meta io.modelcontextprotocol/logLevel is not a log level",
    );
    assert_eq!(extras.regional_runs.load(Ordering::SeqCst), 0);
}

// ---------------------------------------------------------------------------------------------
// 3. The client going away cancels the run.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn dropping_the_stream_cancels_the_tool() {
    let (d, extras) = server(None);
    let probe = extras.gone.clone();
    let reply = with_token("hang", json!("gone")).send(&d).await;
    let mut stream = stream_of(reply);
    assert_eq!(
        next_message(&mut stream).await,
        progress(json!("gone"), json!({"progress": 1, "message": "started"}))
    );
    let token = probe.token.lock().unwrap().clone().expect("the tool ran");
    assert!(!token.is_cancelled());
    assert!(!probe.fired.load(Ordering::SeqCst));
    assert!(!probe.dropped.load(Ordering::SeqCst));

    drop(stream);
    tokio::time::timeout(WAIT_LIMIT, probe.fired_notify.notified())
        .await
        .expect("the cancellation token fires");
    assert!(probe.fired.load(Ordering::SeqCst));
    assert!(token.is_cancelled());
    tokio::time::timeout(WAIT_LIMIT, probe.dropped_notify.notified())
        .await
        .expect("the tool run stops");
    assert!(probe.dropped.load(Ordering::SeqCst));
}

// ---------------------------------------------------------------------------------------------
// 4. Mcp-Param-* headers of x-mcp-header arguments.
/// The same for a call answered as plain JSON (no progress token): the tool runs inline in the
/// response future, and the client going away (hyper dropping that future) fires its token.
#[tokio::test]
async fn dropping_a_plain_json_call_cancels_the_tool() {
    let (d, extras) = server(None);
    let probe = extras.gone.clone();
    let d = Arc::new(d);
    let call = {
        let d = d.clone();
        tokio::spawn(async move { Req::call("hang", json!({})).send(&d).await })
    };
    let token = tokio::time::timeout(WAIT_LIMIT, async {
        loop {
            if let Some(token) = probe.token.lock().unwrap().clone() {
                return token;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the tool ran");
    assert!(!token.is_cancelled());
    call.abort();
    tokio::time::timeout(WAIT_LIMIT, probe.fired_notify.notified())
        .await
        .expect("the cancellation token fires");
    assert!(token.is_cancelled());
    assert!(probe.dropped.load(Ordering::SeqCst), "the tool run stopped");
    assert!(call.await.unwrap_err().is_cancelled());
}

// ---------------------------------------------------------------------------------------------

const PARAM_MISSING: &str = "Missing Mcp-Param header for an x-mcp-header argument";
const PARAM_MISMATCH: &str = "Mcp-Param header does not match the tool arguments";

/// A `regional` call with `arguments` and the given `Mcp-Param-*` headers (appended in order).
fn regional(arguments: Value, headers: &[(&str, &str)]) -> Req {
    let mut req = Req::call("regional", arguments);
    for (name, value) in headers {
        req = req.append(name, value);
    }
    req
}

/// One accepted and one refused case of the table in
/// `tasks-core/tests/call_plan/params_rules.rs` (which has every case): the adapter hands the
/// `Mcp-Param-*` headers to the core, the accepted call runs the tool, the refused one does
/// not. And what only the tool knows: its schema validator's message for an argument of the
/// wrong type, which is not mirrored, header or not.
#[tokio::test]
async fn param_headers_runner_table_and_more() {
    let (d, extras) = server(None);
    let arguments = json!({"region": "\u{e9}"});
    let result = regional(
        arguments.clone(),
        &[("MCP-PARAM-REGION", "=?base64?w6k=?=")],
    )
    .send(&d)
    .await
    .result();
    assert_eq!(text_of(&result), format!("args={arguments}"));
    let error = regional(json!({"region": "eu"}), &[("Mcp-Param-Region", "us")])
        .id(json!("h"))
        .send(&d)
        .await
        .error(400, -32020, PARAM_MISMATCH);
    assert!(error.get("data").is_none(), "{error}");
    assert_eq!(
        extras.regional_runs.load(Ordering::SeqCst),
        1,
        "the refused call did not run the tool"
    );
    for headers in [vec![], vec![("Mcp-Param-Count", "many")]] {
        let result = regional(json!({"count": "many"}), &headers)
            .send(&d)
            .await
            .result();
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(
            result["content"][0]["text"],
            "Invalid arguments at /count: violates inputSchema rule /properties/count/type (expected integer)"
        );
    }
    assert_eq!(
        extras.regional_runs.load(Ordering::SeqCst),
        1,
        "an invalid argument never runs the tool"
    );
}

#[tokio::test]
async fn param_header_errors_never_echo_the_value() {
    let (d, _) = server(None);
    for (body, header) in [
        ("body-secret-zz9", "header-secret-qq7"),
        ("body-secret-zz9", "=?base64?aGVhZGVyLXNlY3JldC1xcTc?="),
        ("body-secret-zz9", "=?base64?aGVhZGVyLXNlY3JldC1xcTc=?="),
    ] {
        let reply = regional(json!({"region": body}), &[("Mcp-Param-Region", header)])
            .send(&d)
            .await;
        let text = reply.text();
        assert_eq!(reply.status, 400, "{text}");
        assert_eq!(reply.json()["error"]["code"], -32020, "{text}");
        for secret in ["zz9", "qq7", "aGVhZGVy"] {
            assert!(!text.contains(secret), "{secret} echoed in {text}");
        }
    }
}

#[tokio::test]
async fn param_headers_are_checked_after_lookup_and_before_state_and_task_creation() {
    let (d, extras) = server(None);
    // Unknown tool: the lookup answers first, whatever the headers.
    Req::call("no_such_tool", json!({"region": "eu"}))
        .header("Mcp-Param-Region", "us")
        .send(&d)
        .await
        .error(400, -32602, "Unknown tool");
    // Malformed params come before the header check too.
    Req::call("regional", json!("not an object"))
        .send(&d)
        .await
        .error(400, -32602, "arguments must be an object");
    // The header check comes before the requestState check.
    regional(json!({"region": "eu"}), &[])
        .param("requestState", json!("forged"))
        .send(&d)
        .await
        .error(400, -32020, PARAM_MISSING);
    regional(json!({"region": "eu"}), &[("Mcp-Param-Region", "eu")])
        .param("requestState", json!("forged"))
        .send(&d)
        .await
        .error(400, -32602, "Invalid requestState");

    // Before task creation: nothing is stored on failure.
    let before = d.runtime().stored_tasks().await.unwrap();
    for headers in [
        vec![],
        vec![("Mcp-Param-Region", "us")],
        vec![("Mcp-Param-Region", "eu"), ("Mcp-Param-Region", "eu")],
    ] {
        regional(json!({"region": "eu"}), &headers)
            .tasks()
            .send(&d)
            .await
            .json()["error"]["code"]
            .as_i64()
            .filter(|code| *code == -32020)
            .expect("-32020");
    }
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), before);
    assert_eq!(extras.regional_runs.load(Ordering::SeqCst), 0);
    // The same call with the right header creates the task.
    let mut events = d.runtime().subscribe();
    let id = create(
        &d,
        regional(json!({"region": "eu"}), &[("Mcp-Param-Region", "eu")]).tasks(),
    )
    .await;
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), before + 1);
    wait_status(&mut events, &id, TaskStatus::Completed).await;
    assert_eq!(extras.regional_runs.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------------------------------------
// 5. subscriptions/listen and tool-list changes.
// ---------------------------------------------------------------------------------------------

fn tools_list_changed(subscription_id: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
           "params": {"_meta": {SUBSCRIPTION_ID: subscription_id}}})
}

fn acknowledged(subscription_id: Value, notifications: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
           "params": {"_meta": {SUBSCRIPTION_ID: subscription_id},
                      "notifications": notifications}})
}

/// One case of the table in `tasks-core/tests/call_plan/params_rules.rs` (which has every
/// case), and the acknowledgement, which is the server's.
#[tokio::test]
async fn listen_filter_values_must_have_their_schema_types() {
    let (d, _) = server(Some(ListChanges::new()));
    Req::listen(json!({"toolsListChanged": "true"}))
        .send(&d)
        .await
        .error(
            400,
            -32602,
            "notifications list-changed flags must be booleans",
        );
    // Well-typed keys this server does not honour, and unknown keys, are left out of the ack.
    let mut stream = stream_of(
        Req::listen(
            json!({"toolsListChanged": false, "resourceSubscriptions": ["test://a"],
                           "futureKey": 7}),
        )
        .id(json!(9))
        .send(&d)
        .await,
    );
    assert_eq!(
        next_message(&mut stream).await,
        acknowledged(json!(9), json!({}))
    );
}

#[tokio::test]
async fn discover_advertises_list_changed_only_with_a_handle() {
    let (with, _) = server(Some(ListChanges::new()));
    let capabilities =
        Req::new("server/discover").send(&with).await.result()["capabilities"].clone();
    assert_eq!(capabilities["tools"], json!({"listChanged": true}));
    assert_eq!(capabilities["extensions"], json!({TASKS: {}}));

    let (without, _) = server(None);
    let capabilities =
        Req::new("server/discover").send(&without).await.result()["capabilities"].clone();
    assert_eq!(capabilities["tools"], json!({}));
}

#[tokio::test]
async fn listen_for_tool_list_changes_is_acknowledged_then_notified() {
    let changes = ListChanges::new();
    let (d, _) = server(Some(changes.clone()));
    for id in [json!("listen-tools"), json!(77)] {
        let mut stream = stream_of(
            Req::listen(json!({"toolsListChanged": true}))
                .id(id.clone())
                .send(&d)
                .await,
        );
        assert_eq!(
            next_message(&mut stream).await,
            acknowledged(id.clone(), json!({"toolsListChanged": true}))
        );
        // A prompts announcement is not carried; the tools one is.
        assert_eq!(changes.announce(ListKind::Prompts), 1);
        assert_eq!(changes.announce(ListKind::Tools), 1);
        let message = next_message(&mut stream).await;
        assert_eq!(message, tools_list_changed(id.clone()));
        assert_eq!(
            message["params"]["_meta"][SUBSCRIPTION_ID].is_string(),
            id.is_string()
        );
        changes.announce(ListKind::Tools);
        assert_eq!(next_message(&mut stream).await, tools_list_changed(id));
    }
}

/// Tools registered and removed at run time: `tools/list` and `tools/call` follow, and each
/// change is announced to the listen streams that asked for tool-list changes.
#[tokio::test]
async fn tools_added_and_removed_at_run_time_are_listed_called_and_announced() {
    let changes = ListChanges::new();
    let (d, _) = server(Some(changes.clone()));
    async fn names(d: &Dispatcher) -> Vec<String> {
        Req::new("tools/list").send(d).await.result()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    }
    let before = names(&d).await;
    assert!(!before.contains(&"late".to_owned()));
    let mut stream = stream_of(
        Req::listen(json!({"toolsListChanged": true}))
            .id(json!("t"))
            .send(&d)
            .await,
    );
    assert_eq!(
        next_message(&mut stream).await,
        acknowledged(json!("t"), json!({"toolsListChanged": true}))
    );

    d.runtime()
        .register_tool(Tool::new("late", "Added at run time", |_ctx| async {
            Ok(text_result("late answer"))
        }));
    assert_eq!(
        next_message(&mut stream).await,
        tools_list_changed(json!("t"))
    );
    let after = names(&d).await;
    assert_eq!(
        after[..before.len()],
        before[..],
        "the others keep their order"
    );
    assert_eq!(after.last().map(String::as_str), Some("late"));
    let answer = Req::call("late", json!({})).send(&d).await.result();
    assert_eq!(text_of(&answer), "late answer");

    assert!(d.runtime().remove_tool("late"));
    assert!(
        !d.runtime().remove_tool("late"),
        "already gone: nothing to announce"
    );
    assert_eq!(
        next_message(&mut stream).await,
        tools_list_changed(json!("t"))
    );
    assert_eq!(names(&d).await, before);
    let unknown = Req::call("late", json!({})).send(&d).await.json();
    assert_eq!(unknown["error"]["code"], json!(-32602), "{unknown}");
}

#[tokio::test(start_paused = true)]
async fn a_prompts_only_listen_never_receives_tool_list_changes() {
    let changes = ListChanges::new();
    let (d, _) = server(Some(changes.clone()));
    let mut prompts = stream_of(
        Req::listen(json!({"promptsListChanged": true, "resourcesListChanged": true}))
            .id(json!("p"))
            .send(&d)
            .await,
    );
    assert_eq!(
        next_message(&mut prompts).await,
        acknowledged(json!("p"), json!({}))
    );
    let mut tools = stream_of(
        Req::listen(json!({"toolsListChanged": true}))
            .id(json!("t"))
            .send(&d)
            .await,
    );
    next_message(&mut tools).await;
    for kind in ListKind::ALL {
        changes.announce(kind);
    }
    // The tools stream got its notification...
    assert_eq!(
        next_message(&mut tools).await,
        tools_list_changed(json!("t"))
    );
    // ...and the prompts-only stream gets nothing (the paused clock runs the wait out).
    let silent = tokio::time::timeout(Duration::from_secs(60), prompts.next()).await;
    assert!(
        silent.is_err(),
        "unexpected message: {:?}",
        silent.map(|m| m.map(|b| String::from_utf8_lossy(&b).into_owned()))
    );
}

#[tokio::test(start_paused = true)]
async fn without_a_handle_tools_list_changed_is_not_acknowledged() {
    let (d, _) = server(None);
    let mut stream = stream_of(
        Req::listen(json!({"toolsListChanged": true}))
            .id(json!(3))
            .send(&d)
            .await,
    );
    assert_eq!(
        next_message(&mut stream).await,
        acknowledged(json!(3), json!({}))
    );
    let silent = tokio::time::timeout(Duration::from_secs(60), stream.next()).await;
    assert!(silent.is_err(), "nothing follows the acknowledgement");
}

#[tokio::test]
async fn task_notifications_and_list_changes_share_one_stream() {
    let changes = ListChanges::new();
    let (d, _) = server(Some(changes.clone()));
    let mut events = d.runtime().subscribe();
    let id = create(&d, Req::call("park", json!({})).tasks().elicitation()).await;
    wait_status(&mut events, &id, TaskStatus::InputRequired).await;

    let mut stream = stream_of(
        Req::listen(json!({"toolsListChanged": true, "taskIds": [id]}))
            .id(json!("both"))
            .tasks()
            .send(&d)
            .await,
    );
    assert_eq!(
        next_message(&mut stream).await,
        acknowledged(
            json!("both"),
            json!({"toolsListChanged": true, "taskIds": [id]})
        )
    );
    changes.announce(ListKind::Tools);
    assert_eq!(
        next_message(&mut stream).await,
        tools_list_changed(json!("both"))
    );
    Req::update(&id, json!({"confirm": accept(json!({"answer": "ok"}))}))
        .tasks()
        .send(&d)
        .await
        .result();
    let mut statuses = Vec::new();
    while statuses.last().map(String::as_str) != Some("completed") {
        let message = next_message(&mut stream).await;
        assert_eq!(message["method"], "notifications/tasks", "{message}");
        assert_eq!(message["params"]["_meta"][SUBSCRIPTION_ID], "both");
        assert_eq!(message["params"]["taskId"], json!(id));
        statuses.push(message["params"]["status"].as_str().unwrap().to_owned());
    }
    assert_eq!(statuses, ["working", "completed"]);
    changes.announce(ListKind::Tools);
    assert_eq!(
        next_message(&mut stream).await,
        tools_list_changed(json!("both"))
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Client capabilities in tool contexts.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_sync_tool_sees_the_request_client_capabilities() {
    let (d, _) = server(None);
    let result = Req::call("caps_probe", json!({}))
        .cap("sampling", json!({}))
        .send(&d)
        .await
        .result();
    assert_eq!(
        text_of(&result),
        r#"sampling=true elicitation=false task=false caps={"sampling":{}}"#
    );
    let result = Req::call("caps_probe", json!({}))
        .elicitation()
        .send(&d)
        .await
        .result();
    assert_eq!(
        text_of(&result),
        r#"sampling=false elicitation=true task=false caps={"elicitation":{}}"#
    );
}

#[tokio::test]
async fn a_task_sees_the_creating_request_client_capabilities() {
    let (d, _) = server(None);
    let mut events = d.runtime().subscribe();
    let id = create(
        &d,
        Req::call("caps_probe", json!({}))
            .tasks()
            .cap("sampling", json!({})),
    )
    .await;
    wait_status(&mut events, &id, TaskStatus::Completed).await;
    let result = Req::get(&id).tasks().send(&d).await.result();
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(
        text_of(&result["result"]),
        format!(
            r#"sampling=true elicitation=false task=true caps={{"extensions":{{"{TASKS}":{{}}}},"sampling":{{}}}}"#
        ),
        "{result}"
    );
}

#[tokio::test]
async fn input_for_an_undeclared_capability_is_missing_capability() {
    let (d, _) = server(None);
    // `interview` asks with elicitation/create; `sample` with sampling/createMessage.
    for (tool, caps, missing) in [
        (
            "interview",
            json!({"sampling": {}}),
            json!({"elicitation": {"form": {}}}),
        ),
        // A URL-only client is never sent a form.
        (
            "interview",
            json!({"elicitation": {"url": {}}}),
            json!({"elicitation": {"form": {}}}),
        ),
        (
            "sample",
            json!({"elicitation": {}}),
            json!({"sampling": {}}),
        ),
        ("sample", json!({"sampling": true}), json!({"sampling": {}})),
    ] {
        let error = Req::call(tool, json!({}))
            .meta(meta(caps.clone(), json!({})))
            .id(json!("c"))
            .send(&d)
            .await
            .error(400, -32021, "Missing required client capability");
        assert_eq!(
            error["data"],
            json!({"requiredCapabilities": missing}),
            "{tool} {caps}"
        );
    }
    // Declared: an MRTR round instead.
    let result = Req::call("sample", json!({}))
        .cap("sampling", json!({}))
        .send(&d)
        .await
        .result();
    assert_eq!(result["resultType"], "input_required", "{result}");
    assert_eq!(
        result["inputRequests"]["draft"]["method"],
        "sampling/createMessage"
    );
}
