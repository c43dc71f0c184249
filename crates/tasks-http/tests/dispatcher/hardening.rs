//! Hostile and sloppy clients against the in-process dispatcher: malformed requests leave
//! every stored task as it was, `Mcp-Name` hygiene on the task methods, tools that panic, hang
//! or return a non-result, and races driven through the whole dispatcher thousands of times
//! (the sections Malformed requests, Headers, Tool failures and Races of `docs/hardening.md`,
//! which also describes the behaviour chosen where the references are silent).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Value};
use tasks_core::{TaskPolicy, TaskStatus};
use tasks_http::{BodyError, Dispatcher};
use tasks_runtime::{text_result, Limits, Tool, ToolError};
use tasks_test_support::dispatcher::*;
use tasks_test_support::events::{wait_for, wait_status};
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
use tasks_test_support::tools::*;
use tasks_test_support::wait::WAIT_LIMIT;

const PANIC_TEXT: &str = "hunter2-secret-panic-payload";

fn b64(text: impl AsRef<[u8]>) -> String {
    format!("=?base64?{}?=", STANDARD.encode(text))
}

fn ack() -> Value {
    json!({"resultType": "complete", "_meta": server_meta()})
}

/// Every stored task as `tasks/get` shows it, plus the stored count.
async fn snapshot(d: &Dispatcher, ids: &[&str]) -> (usize, Vec<Value>) {
    let mut views = Vec::new();
    for id in ids {
        views.push(Req::get(id).tasks().send(d).await.result());
    }
    (d.runtime().stored_tasks().await.unwrap(), views)
}

/// Three tasks in three states: completed (with a result), parked (`input_required`), working.
async fn three_tasks(d: &Dispatcher) -> [String; 3] {
    let mut events = d.runtime().subscribe();
    let done = create(d, Req::call("optional_job", json!({})).tasks()).await;
    let parked = create(d, Req::call("park", json!({})).tasks().elicitation()).await;
    let working = create(d, Req::call("block", json!({})).tasks()).await;
    wait_status(&mut events, &done, TaskStatus::Completed).await;
    wait_status(&mut events, &parked, TaskStatus::InputRequired).await;
    [done, parked, working]
}

/// Nested arrays `depth` deep.
fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// One hostile request and the error it must get.
struct Case {
    label: &'static str,
    req: Req,
    status: u16,
    code: i64,
    message: &'static str,
    /// Whether the request id can be read (and so must be echoed).
    echoed: bool,
}

fn case(label: &'static str, req: Req, status: u16, code: i64, message: &'static str) -> Case {
    Case {
        label,
        req,
        status,
        code,
        message,
        echoed: true,
    }
}

fn anonymous(label: &'static str, req: Req, status: u16, code: i64, message: &'static str) -> Case {
    Case {
        echoed: false,
        ..case(label, req, status, code, message)
    }
}

const PARSE: &str = "Parse error";
const BATCH: &str = "Batch requests are not supported: send one message per POST";
const NOT_OBJECT: &str = "params must be an object";
const NO_ID: &str = "A non-empty taskId is required";
const NEEDS_RESPONSES: &str = "tasks/update requires an inputResponses object";
const BAD_RESPONSES: &str = "inputResponses is invalid";

/// Malformed requests: each gets its code and HTTP status, and afterwards every stored task
/// reads exactly as before (nothing cancelled, answered, lost or added).
#[tokio::test]
async fn malformed_requests_get_their_error_and_change_nothing_stored() {
    let (d, runs) = dispatcher();
    let [done, parked, working] = three_tasks(&d).await;
    let ids = [done.as_str(), parked.as_str(), working.as_str()];
    let before = snapshot(&d, &ids).await;
    assert_eq!(before.0, 3);

    let answer = json!({"confirm": accept(json!({"answer": "hostile"}))});
    let cancel_working = Req::cancel(&working).tasks().message();
    let prefix = r#"{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":"#;
    let mut cases = vec![
        // Bodies that are not JSON.
        anonymous(
            "truncated JSON",
            Req::cancel(&working)
                .tasks()
                .body(&prefix[..prefix.len() - 1]),
            400,
            -32700,
            PARSE,
        ),
        anonymous(
            "invalid UTF-8 in a string",
            Req::cancel(&working)
                .tasks()
                .body([prefix.as_bytes(), b"{\"taskId\":\"\xff\xfe\"}}".as_slice()].concat()),
            400,
            -32700,
            PARSE,
        ),
        anonymous(
            "a lone UTF-16 surrogate escape",
            Req::cancel(&working)
                .tasks()
                .body(format!(r#"{prefix}{{"taskId":"\ud800"}}}}"#)),
            400,
            -32700,
            PARSE,
        ),
        anonymous(
            "100 000 nested arrays",
            Req::cancel(&working).tasks().body(nested(100_000)),
            400,
            -32700,
            PARSE,
        ),
        anonymous(
            "100 000 nested arrays inside params",
            Req::cancel(&working)
                .tasks()
                .body(format!("{prefix}{}}}", nested(100_000))),
            400,
            -32700,
            PARSE,
        ),
        anonymous(
            "100 000 nested objects",
            Req::cancel(&working).tasks().body(format!(
                "{}1{}",
                "{\"a\":".repeat(100_000),
                "}".repeat(100_000)
            )),
            400,
            -32700,
            PARSE,
        ),
        anonymous(
            "a body over the size limit",
            Req::cancel(&working)
                .tasks()
                .body_error(BodyError::TooLarge(1_048_576)),
            413,
            -32600,
            "Request body is larger than 1048576 bytes",
        ),
        anonymous(
            "a body cut off by the transport",
            Req::cancel(&working)
                .tasks()
                .body_error(BodyError::Incomplete),
            400,
            -32700,
            PARSE,
        ),
        // serde_json's private marker names are refused wherever they are (docs/hardening.md,
        // "What a body may contain"): no value spelt as a string, no nesting past the limit,
        // no task created from arguments that would not read back.
        anonymous(
            "a taskId spelt through serde_json's RawValue marker",
            Req::cancel(&working).tasks().body(format!(
                r#"{prefix}{{"taskId":{{"$serde_json::private::RawValue":"\"{working}\""}}}}}}"#
            )),
            400,
            -32600,
            tasks_core::json::MARKER_MESSAGE,
        ),
        anonymous(
            "an id spelt through the marker, its name escaped",
            Req::cancel(&working).tasks().body(format!(
                r#"{{"jsonrpc":"2.0","id":{{"\u0024serde_json::private::RawValue":"7"}},"method":"tasks/cancel","params":{{"taskId":"{working}"}}}}"#
            )),
            400,
            -32600,
            tasks_core::json::MARKER_MESSAGE,
        ),
        anonymous(
            "2 000 nested arrays inside a marker",
            Req::cancel(&working).tasks().body(format!(
                r#"{prefix}{{"taskId":"{working}","x":{{"$serde_json::private::RawValue":"{}"}}}}}}"#,
                nested(2_000)
            )),
            400,
            -32600,
            tasks_core::json::MARKER_MESSAGE,
        ),
        anonymous(
            "a task-creating call with a marker in its arguments",
            Req::call("optional_job", json!({"n": {"$serde_json::private::RawValue": "[1]"}}))
                .tasks(),
            400,
            -32600,
            tasks_core::json::MARKER_MESSAGE,
        ),
        // Batches are refused whole: the cancel inside never runs.
        anonymous(
            "a batch holding a valid cancel",
            Req::cancel(&working)
                .tasks()
                .body_json(json!([cancel_working.clone()])),
            400,
            -32600,
            BATCH,
        ),
        anonymous(
            "a batch of two",
            Req::cancel(&working)
                .tasks()
                .body_json(json!([cancel_working.clone(), cancel_working.clone()])),
            400,
            -32600,
            BATCH,
        ),
        anonymous(
            "a batch holding a notification",
            Req::cancel(&working)
                .tasks()
                .body_json(json!([Req::cancel(&working)
                    .tasks()
                    .notification()
                    .message()])),
            400,
            -32600,
            BATCH,
        ),
        anonymous(
            "a float id",
            Req::cancel(&working).tasks().id(json!(1.5)),
            400,
            -32600,
            "id must be a string or an integer",
        ),
        anonymous(
            "a null id",
            Req::cancel(&working).tasks().id(json!(null)),
            400,
            -32600,
            "id must be a string or an integer",
        ),
        case(
            "jsonrpc 1.0",
            Req::cancel(&working).tasks().body_json({
                let mut m = cancel_working.clone();
                m["jsonrpc"] = json!("1.0");
                m
            }),
            400,
            -32600,
            "jsonrpc must be \"2.0\"",
        ),
        case(
            "a numeric method",
            Req::cancel(&working).tasks().body_json({
                let mut m = cancel_working.clone();
                m["method"] = json!(7);
                m
            }),
            400,
            -32600,
            "method must be a string",
        ),
        // params missing or of the wrong type.
        case(
            "params missing",
            Req::cancel(&working)
                .tasks()
                .body_json(json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel"})),
            400,
            -32602,
            "params._meta is required",
        ),
        // `_meta` without one of its two required keys, or not an object.
        case(
            "_meta without protocolVersion",
            Req::cancel(&working)
                .tasks()
                .meta(json!({META_CAPS: {"extensions": {TASKS: {}}}})),
            400,
            -32602,
            "params._meta is missing io.modelcontextprotocol/protocolVersion",
        ),
        case(
            "_meta without clientCapabilities",
            Req::cancel(&working)
                .tasks()
                .meta(json!({META_VERSION: VERSION})),
            400,
            -32602,
            "params._meta is missing io.modelcontextprotocol/clientCapabilities",
        ),
        case(
            "_meta as an array",
            Req::cancel(&working).tasks().meta(json!([VERSION])),
            400,
            -32602,
            "params._meta is required",
        ),
        case(
            "a numeric protocolVersion",
            Req::cancel(&working)
                .tasks()
                .meta(json!({META_VERSION: 20260728, META_CAPS: {}})),
            400,
            -32602,
            "params._meta is missing io.modelcontextprotocol/protocolVersion",
        ),
        case(
            "an unsupported protocol version",
            Req::cancel(&working).tasks().version("2099-01-01"),
            400,
            -32022,
            "Unsupported protocol version",
        ),
        case(
            "an unknown method naming the task",
            Req::task_method("tasks/delete", &working).tasks(),
            404,
            -32601,
            "Method not found",
        ),
        case(
            "the removed tasks/result",
            Req::task_method("tasks/result", &done).tasks(),
            404,
            -32601,
            "Method not found",
        ),
        // Numbers (and other non-strings) where strings belong.
        case(
            "taskId: 42 on cancel",
            Req::new("tasks/cancel")
                .tasks()
                .param("taskId", json!(42))
                .header("mcp-name", "42"),
            400,
            -32602,
            NO_ID,
        ),
        case(
            "taskId: [id] on cancel",
            Req::new("tasks/cancel")
                .tasks()
                .param("taskId", json!([working]))
                .header("mcp-name", &working),
            400,
            -32602,
            NO_ID,
        ),
        case(
            "taskId: {id} on get",
            Req::new("tasks/get")
                .tasks()
                .param("taskId", json!({"id": done}))
                .header("mcp-name", &done),
            400,
            -32602,
            NO_ID,
        ),
        case(
            "taskId: 42 on update",
            Req::new("tasks/update")
                .tasks()
                .param("taskId", json!(42))
                .param("inputResponses", answer.clone())
                .header("mcp-name", "42"),
            400,
            -32602,
            NO_ID,
        ),
        case(
            "tools/call name: 42",
            Req::new("tools/call")
                .tasks()
                .param("name", json!(42))
                .header("mcp-name", "42"),
            400,
            -32602,
            "tools/call requires a string name",
        ),
        case(
            "tools/call arguments: \"x\"",
            Req::call("block", json!("x")).tasks(),
            400,
            -32602,
            "arguments must be an object",
        ),
        // inputResponses that is [], a string, has an empty key, or a non-object answer.
        case(
            "inputResponses: []",
            Req::update(&parked, json!([])).tasks(),
            400,
            -32602,
            NEEDS_RESPONSES,
        ),
        case(
            "inputResponses: a string",
            Req::update(&parked, json!("confirm")).tasks(),
            400,
            -32602,
            NEEDS_RESPONSES,
        ),
        case(
            "inputResponses missing",
            Req::task_method("tasks/update", &parked).tasks(),
            400,
            -32602,
            NEEDS_RESPONSES,
        ),
        case(
            "inputResponses with an empty key",
            Req::update(
                &parked,
                json!({"": accept(json!({})), "confirm": answer["confirm"]}),
            )
            .tasks(),
            400,
            -32602,
            BAD_RESPONSES,
        ),
        case(
            "inputResponses with a string answer",
            Req::update(&parked, json!({"confirm": "yes"})).tasks(),
            400,
            -32602,
            BAD_RESPONSES,
        ),
    ];
    for bad in [json!("x"), json!(7), json!([]), json!(true), json!(null)] {
        let mut message = cancel_working.clone();
        message["params"] = bad;
        cases.push(case(
            "params of the wrong type",
            Req::cancel(&working).tasks().body_json(message),
            400,
            -32602,
            NOT_OBJECT,
        ));
    }

    for Case {
        label,
        req,
        status,
        code,
        message,
        echoed,
    } in cases
    {
        let reply = req.send(&d).await;
        let body = reply.json();
        assert_eq!(
            (
                reply.status,
                &body["error"]["code"],
                &body["error"]["message"]
            ),
            (status, &json!(code), &json!(message)),
            "{label}: {body}"
        );
        assert!(body.get("result").is_none(), "{label}: {body}");
        assert_eq!(
            body.get("id").is_some(),
            echoed,
            "{label}: id echoed only when readable: {body}"
        );
        if code == -32022 {
            assert_eq!(
                body["error"]["data"],
                json!({"supported": [VERSION], "requested": "2099-01-01"}),
                "{label}"
            );
        }
        for id in ids {
            assert!(!reply.text().contains(id), "{label}: echoes a task id");
        }
    }

    // Notifications are acknowledged and never acted upon: the cancel and the answer are lost.
    for req in [
        Req::cancel(&working).tasks().notification(),
        Req::update(&parked, answer.clone()).tasks().notification(),
        Req::call("sync_echo", json!({"text": "x"})).notification(),
    ] {
        let reply = req.send(&d).await;
        assert_eq!(reply.status, 202);
        assert!(reply.is_empty(), "{reply:?}");
    }
    assert_eq!(Runs::get(&runs.sync_echo), 0);

    assert_eq!(snapshot(&d, &ids).await, before, "nothing stored changed");
    assert_eq!(snapshot(&d, &ids).await.1[2]["status"], "working");

    // And the server still serves: the parked task takes its answer, the working one cancels.
    let mut events = d.runtime().subscribe();
    assert_eq!(
        Req::update(&parked, answer).tasks().send(&d).await.result(),
        ack()
    );
    wait_status(&mut events, &parked, TaskStatus::Completed).await;
    assert_eq!(Req::cancel(&working).tasks().send(&d).await.result(), ack());
    let after = snapshot(&d, &ids).await;
    assert_eq!(after.1[0], before.1[0]);
    assert_eq!(
        after.1[1]["result"]["content"][0]["text"],
        "confirmed: hostile"
    );
    assert_eq!(after.1[2]["status"], "cancelled");
}

/// JSON nested just under the parser's limit is still served; the limit is what protects the
/// stack, not the size.
#[tokio::test]
async fn nesting_under_the_limit_is_served() {
    let (d, _) = dispatcher();
    // envelope → params → arguments → "deep" → 100 arrays: 103 levels.
    let deep: Value = serde_json::from_str(&nested(100)).unwrap();
    let result = Req::call("sync_echo", json!({"text": "deep", "deep": deep}))
        .send(&d)
        .await
        .result();
    assert_eq!(result["content"][0]["text"], "echo: deep");
    // Same request with 200 levels: a parse error.
    let message = Req::call("sync_echo", json!({"text": "deep"})).message();
    let text = serde_json::to_string(&message).unwrap().replace(
        r#""text":"deep""#,
        &format!(r#""text":"deep","deep":{}"#, nested(200)),
    );
    Req::call("sync_echo", json!({}))
        .body(text)
        .send(&d)
        .await
        .anonymous_error(400, -32700, PARSE);
}

/// Duplicate JSON keys: the last one wins (serde_json), and `Mcp-Method` must match the winner,
/// so an intermediary reading the first key and the server cannot disagree unnoticed.
#[tokio::test]
async fn duplicate_json_keys_take_the_last_value_and_must_match_the_headers() {
    let (d, _) = dispatcher();
    let working = create(&d, Req::call("block", json!({})).tasks()).await;
    let meta = format!(
        r#"{{"{META_VERSION}":"{VERSION}","{META_CAPS}":{{"extensions":{{"{TASKS}":{{}}}}}}}}"#
    );
    let smuggled = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tasks/get","method":"tasks/cancel","params":{{"taskId":"{working}","_meta":{meta}}}}}"#
    );
    Req::get(&working)
        .tasks()
        .body(smuggled)
        .send(&d)
        .await
        .error(
            400,
            -32020,
            "Mcp-Method header does not match the request method",
        );
    let got = Req::get(&working).tasks().send(&d).await.result();
    assert_eq!(got["status"], "working", "the smuggled cancel never ran");
    // The winner is the last key.
    let last_wins = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"server/discover","params":{{"_meta":{meta}}}}}"#
    );
    let result = Req::new("server/discover")
        .body(last_wins)
        .send(&d)
        .await
        .result();
    assert!(result["capabilities"].is_object(), "{result}");
    Req::cancel(&working).tasks().send(&d).await.result();
}

/// Headers: `Mcp-Name` on the task methods, with `T` a working task.
#[tokio::test]
async fn mcp_name_hygiene_on_task_methods() {
    let (d, _) = dispatcher();
    let t = create(&d, Req::call("block", json!({})).tasks()).await;
    let invalid = "Invalid Mcp-Name header value";
    let get = || Req::get(&t).tasks().id(json!("h"));

    // The base64 form of T is accepted like T itself, also with surrounding blanks.
    for good in [
        t.clone(),
        b64(&t),
        format!(" \t{}\t ", b64(&t)),
        format!("\t\t{t}  "),
    ] {
        let got = get().header("mcp-name", &good).send(&d).await.result();
        assert_eq!(got["taskId"], t, "{good:?}");
    }
    // Empty, non-base64, and non-UTF-8 payloads are invalid on all three methods.
    let reqs: [fn(&str) -> Req; 3] = [
        |t| Req::get(t),
        |t| Req::cancel(t),
        |t| Req::update(t, json!({})),
    ];
    for bad in [
        "=?base64??=",
        "=?base64?***?=",
        "=?base64?wyg=?=",
        "=?base64?=?=",
    ] {
        for req in reqs {
            req(&t)
                .tasks()
                .id(json!("h"))
                .header("mcp-name", bad)
                .send(&d)
                .await
                .error(400, -32020, invalid);
        }
    }
    // An empty decoded value never skips the comparison: with an empty or missing taskId the
    // malformed wrapper is still -32020, before the params check could answer -32602.
    for params in [Some(json!("")), None, Some(json!(42))] {
        let mut req = Req::new("tasks/get").tasks().id(json!("h"));
        if let Some(task_id) = params {
            req = req.param("taskId", task_id);
        }
        req.header("mcp-name", "=?base64??=")
            .send(&d)
            .await
            .error(400, -32020, invalid);
    }
    // An empty header value is compared too: it is not T.
    for empty in ["", "   ", "\t"] {
        get().header("mcp-name", empty).send(&d).await.error(
            400,
            -32020,
            "Mcp-Name header does not match the request params",
        );
    }

    // A non-ASCII id raw in the header is refused; base64-wrapped it passes the header check
    // and is an unknown id.
    let accented = "t\u{e2}che-\u{65e5}\u{672c}";
    Req::get(accented)
        .tasks()
        .id(json!("h"))
        .send(&d)
        .await
        .error(400, -32020, invalid);
    let reply = Req::get(accented)
        .tasks()
        .id(json!("h"))
        .header("mcp-name", b64(accented))
        .send(&d)
        .await;
    reply.error(400, -32602, "Unknown or inaccessible taskId");
    assert!(!reply.text().contains("che"), "{}", reply.text());

    // Two Mcp-Name lines, equal or not, are -32020 on every task method; the cancel never ran.
    for second in [t.clone(), b64(&t), "other".into()] {
        for req in reqs {
            req(&t)
                .tasks()
                .id(json!("h"))
                .append("mcp-name", &second)
                .send(&d)
                .await
                .error(400, -32020, "Mcp-Name header is repeated");
        }
    }
    assert_eq!(get().send(&d).await.result()["status"], "working");
    Req::cancel(&t).tasks().send(&d).await.result();
}

/// Headers: hostile task ids are rejected or unknown, and no error ever echoes them.
#[tokio::test]
async fn hostile_task_ids_are_unknown_and_never_echoed() {
    let (d, _) = dispatcher();
    let long = "x".repeat(257);
    let long_ascii_reply = Req::get(&long).tasks().send(&d).await;
    long_ascii_reply.error(400, -32602, "taskId is longer than 256 bytes");
    assert!(!long_ascii_reply.text().contains("xxxx"));
    // Exactly 256 bytes is a valid (unknown) id.
    Req::get(&"x".repeat(256)).tasks().send(&d).await.error(
        400,
        -32602,
        "Unknown or inaccessible taskId",
    );

    let hostile = [
        "../../etc/passwd",
        "..%2F..%2Fetc%2Fpasswd",
        "a\u{0}b",
        "line\rbreak",
        "line\nbreak",
        "x\r\nSet-Cookie: pwned=1",
        "<script>alert(1)</script>",
        "' OR 1=1 --",
        "\u{202e}gnp.exe",
        "\u{0}",
    ];
    for id in hostile {
        // Control bytes cannot travel raw in a header value, so they go base64-wrapped.
        let name = if id.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            id.to_owned()
        } else {
            b64(id)
        };
        for req in [
            Req::get(id),
            Req::cancel(id),
            Req::update(id, json!({"k": accept(json!({}))})),
        ] {
            let reply = req
                .tasks()
                .id(json!("hostile"))
                .header("mcp-name", &name)
                .send(&d)
                .await;
            let text = reply.text();
            reply.error(400, -32602, "Unknown or inaccessible taskId");
            let escaped = serde_json::to_string(id).unwrap();
            assert!(
                !text.contains(escaped.trim_matches('"')),
                "{id:?} echoed: {text}"
            );
            for fragment in ["passwd", "script", "pwned", "OR 1=1", "gnp"] {
                assert!(!text.contains(fragment), "{id:?} echoed: {text}");
            }
        }
    }
    // The same ids in a listen filter are dropped silently.
    let mut stream = Req::listen(json!({"taskIds": hostile}))
        .tasks()
        .send(&d)
        .await
        .into_stream();
    assert_eq!(
        next_message(&mut stream).await["params"]["notifications"],
        json!({})
    );
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), 0);
}

// ---------------------------------------------------------------------------------------------
// Tool failures: failures inside tools, through the dispatcher, with one worker slot.
// ---------------------------------------------------------------------------------------------

/// Tools that fail in every way a tool can, on a server with a single worker slot.
fn failing_dispatcher(max_runtime: Duration) -> Dispatcher {
    let runs = Arc::new(Runs::default());
    builder(&runs)
        .limits(
            Limits::default()
                .with_max_workers(1)
                .with_max_runtime(max_runtime),
        )
        .tool(
            Tool::new("panics", "Panics", |_ctx| async {
                if PANIC_TEXT.is_empty() {
                    return Ok(Value::Null);
                }
                panic!("{PANIC_TEXT}");
            })
            .with_policy(TaskPolicy::Optional),
        )
        .tool(
            Tool::new("hangs", "Never returns, ignores cancellation", |_ctx| {
                std::future::pending::<Result<Value, ToolError>>()
            })
            .with_policy(TaskPolicy::Required),
        )
        .tool(
            Tool::new("not_a_result", "Returns a JSON string", |_ctx| async {
                Ok(json!("not a CallToolResult"))
            })
            .with_policy(TaskPolicy::Optional),
        )
        .tool(
            Tool::new("array_result", "Returns a JSON array", |_ctx| async {
                Ok(json!([{"type": "text", "text": "x"}]))
            })
            .with_policy(TaskPolicy::Optional),
        )
        .build()
}

async fn wait_slot_free(d: &Dispatcher) {
    tokio::time::timeout(WAIT_LIMIT, async {
        while d.runtime().busy_workers() != 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the worker slot is released");
}

/// The slot is free: one more task can start (and is cleaned up again).
async fn assert_slot_usable(d: &Dispatcher) {
    wait_slot_free(d).await;
    let mut events = d.runtime().subscribe();
    let id = create(d, Req::call("optional_job", json!({})).tasks()).await;
    wait_status(&mut events, &id, TaskStatus::Completed).await;
    wait_slot_free(d).await;
}

fn assert_failed(task: &Value, message: &str) {
    assert_eq!(task["status"], "failed", "{task}");
    assert_eq!(
        task["error"],
        json!({"code": -32603, "message": message}),
        "{task}"
    );
    assert!(task.get("result").is_none(), "{task}");
    assert!(!task.to_string().contains("hunter2"), "panic text leaked");
}

#[tokio::test]
async fn failing_tools_end_in_the_right_status_and_release_the_slot() {
    let d = failing_dispatcher(Duration::from_secs(3600));
    let mut events = d.runtime().subscribe();

    // A panic: failed, generic message, slot released.
    let id = create(&d, Req::call("panics", json!({})).tasks()).await;
    wait_status(&mut events, &id, TaskStatus::Failed).await;
    assert_failed(
        &Req::get(&id).tasks().send(&d).await.result(),
        "Tool raised an exception",
    );
    assert_slot_usable(&d).await;

    // Results that are not a CallToolResult object: failed, generic message.
    for tool in ["not_a_result", "array_result"] {
        let id = create(&d, Req::call(tool, json!({})).tasks()).await;
        wait_status(&mut events, &id, TaskStatus::Failed).await;
        assert_failed(
            &Req::get(&id).tasks().send(&d).await.result(),
            "Task worker returned a non-object result",
        );
        assert_slot_usable(&d).await;
    }

    // A tool that never returns holds the only slot: the next creation is refused ...
    let hung = create(&d, Req::call("hangs", json!({})).tasks()).await;
    let error = Req::call("optional_job", json!({}))
        .tasks()
        .send(&d)
        .await
        .error(500, -32603, "Task capacity exhausted");
    assert_eq!(
        error["data"],
        json!({"retryable": true, "limit": "max_jobs"})
    );
    // ... until it is cancelled, even though it ignores its cancellation token.
    assert_eq!(Req::cancel(&hung).tasks().send(&d).await.result(), ack());
    let cancelled = Req::get(&hung).tasks().send(&d).await.result();
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["statusMessage"], "Cancellation requested");
    assert_slot_usable(&d).await;

    // Synchronously, the same failures are JSON-RPC errors with HTTP 500 and generic messages.
    for (tool, message) in [
        ("panics", "Tool raised an exception"),
        ("not_a_result", "Task worker returned a non-object result"),
        ("array_result", "Task worker returned a non-object result"),
    ] {
        let reply = Req::call(tool, json!({})).send(&d).await;
        assert!(!reply.text().contains("hunter2"));
        reply.error(500, -32603, message);
    }
    assert_eq!(d.runtime().busy_workers(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_never_returns_fails_at_its_maximum_runtime() {
    let d = failing_dispatcher(Duration::from_secs(5));
    let mut events = d.runtime().subscribe();
    let id = create(&d, Req::call("hangs", json!({})).tasks()).await;
    // Paused time auto-advances to the runtime limit once everything is idle.
    wait_status(&mut events, &id, TaskStatus::Failed).await;
    assert_failed(
        &Req::get(&id).tasks().send(&d).await.result(),
        "Task exceeded its maximum runtime",
    );
    assert_slot_usable(&d).await;
}

// ---------------------------------------------------------------------------------------------
// Races: races through the whole dispatcher, on a multi-thread runtime.
// ---------------------------------------------------------------------------------------------

/// A dispatcher with a roomy worker pool and `ask_once`, which parks on `confirm` and counts
/// the answers it receives.
fn race_dispatcher(received: Arc<AtomicUsize>) -> Arc<Dispatcher> {
    let runs = Arc::new(Runs::default());
    let tool = Tool::new("ask_once", "Asks once", move |ctx| {
        let received = received.clone();
        async move {
            let answer = ctx.input("confirm", elicitation("Proceed?", "who")).await?;
            received.fetch_add(1, Ordering::SeqCst);
            let who = accepted_str(&answer, "who").unwrap_or("?").to_owned();
            Ok(text_result(who))
        }
    })
    .with_policy(TaskPolicy::Required);
    // Completes after `delay_us` microseconds, so that cancel and completion each win often
    // whatever the machine's load (a zero delay favours completion, a long one the cancel).
    let racing = Tool::new(
        "racing_job",
        "Completes after a short delay",
        |ctx| async move {
            let delay = ctx
                .arguments()
                .get("delay_us")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            if delay > 0 {
                tokio::time::sleep(std::time::Duration::from_micros(delay)).await;
            }
            Ok(text_result("race done"))
        },
    )
    .with_policy(TaskPolicy::Optional);
    Arc::new(
        builder(&runs)
            .limits(Limits::default().with_max_workers(10_000))
            .tool(tool)
            .tool(racing)
            .build(),
    )
}

async fn get(d: &Dispatcher, id: &str) -> Value {
    Req::get(id).tasks().send(d).await.result()
}

fn spawn_send(d: &Arc<Dispatcher>, req: Req) -> tokio::task::JoinHandle<Value> {
    let d = d.clone();
    tokio::spawn(async move { req.send(&d).await.result() })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_racing_completion_through_the_dispatcher() {
    let d = race_dispatcher(Arc::new(AtomicUsize::new(0)));
    let (mut completed, mut cancelled) = (0, 0);
    for i in 0..2_000_u64 {
        let mut events = d.runtime().subscribe();
        let delay_us = (i % 8) * 250;
        let id = create(
            &d,
            Req::call("racing_job", json!({"delay_us": delay_us})).tasks(),
        )
        .await;
        let cancel = spawn_send(&d, Req::cancel(&id).tasks());
        assert_eq!(cancel.await.unwrap(), ack());
        let terminal = wait_for(&mut events, &id, |t| t.is_terminal()).await;
        wait_slot_free(&d).await;
        let first = get(&d, &id).await;
        assert_eq!(first["status"], terminal.status().as_str());
        match first["status"].as_str().unwrap() {
            "completed" => {
                assert_eq!(first["result"]["content"][0]["text"], "race done");
                completed += 1;
            }
            "cancelled" => {
                assert!(first.get("result").is_none(), "{first}");
                cancelled += 1;
            }
            other => panic!("unexpected terminal status {other}"),
        }
        // Settled: a second cancel is acked and changes nothing.
        assert_eq!(Req::cancel(&id).tasks().send(&d).await.result(), ack());
        assert_eq!(get(&d, &id).await, first);
    }
    assert_eq!(completed + cancelled, 2_000);
    assert!(cancelled > 0, "the cancel never won");
    assert!(completed > 0, "the completion never won");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_updates_for_one_key_through_the_dispatcher() {
    let received = Arc::new(AtomicUsize::new(0));
    let d = race_dispatcher(received.clone());
    for i in 0..1_000 {
        let mut events = d.runtime().subscribe();
        let id = create(&d, Req::call("ask_once", json!({})).tasks().elicitation()).await;
        wait_status(&mut events, &id, TaskStatus::InputRequired).await;
        let updates: Vec<_> = ["left", "right"]
            .into_iter()
            .map(|who| {
                spawn_send(
                    &d,
                    Req::update(&id, json!({"confirm": accept(json!({"who": who}))})).tasks(),
                )
            })
            .collect();
        for update in updates {
            assert_eq!(update.await.unwrap(), ack(), "both updates are acked");
        }
        wait_status(&mut events, &id, TaskStatus::Completed).await;
        let done = get(&d, &id).await;
        let who = done["result"]["content"][0]["text"].as_str().unwrap();
        assert!(who == "left" || who == "right", "{done}");
        wait_slot_free(&d).await;
        assert_eq!(
            received.load(Ordering::SeqCst),
            i + 1,
            "delivered exactly once"
        );
        // No second completion follows: the task reads the same afterwards.
        assert_eq!(get(&d, &id).await, done);
        assert!(
            std::iter::from_fn(|| events.try_recv().ok()).all(|e| e.task.id().as_str() != id),
            "no change after completion"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creations_through_the_dispatcher_get_distinct_ids() {
    let d = race_dispatcher(Arc::new(AtomicUsize::new(0)));
    let creations: Vec<_> = (0..2_000)
        .map(|_| spawn_send(&d, Req::call("optional_job", json!({})).tasks()))
        .collect();
    let mut ids = std::collections::HashSet::new();
    for creation in creations {
        let result = creation.await.unwrap();
        assert_eq!(result["resultType"], "task");
        assert!(ids.insert(result["taskId"].as_str().unwrap().to_owned()));
    }
    assert_eq!(ids.len(), 2_000);
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), 2_000);
    for id in &ids {
        let task = tokio::time::timeout(WAIT_LIMIT, async {
            loop {
                let task = get(&d, id).await;
                if task["status"] == "completed" {
                    return task;
                }
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("every created task completes");
        assert_eq!(task["taskId"], json!(id));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_parked_through_the_dispatcher() {
    let received = Arc::new(AtomicUsize::new(0));
    let d = race_dispatcher(received.clone());
    for i in 0..1_000 {
        let mut events = d.runtime().subscribe();
        let id = create(&d, Req::call("ask_once", json!({})).tasks().elicitation()).await;
        wait_status(&mut events, &id, TaskStatus::InputRequired).await;
        // Cancel and a concurrent read; the cancel is committed before its ack.
        let cancel = spawn_send(&d, Req::cancel(&id).tasks());
        let read = spawn_send(&d, Req::get(&id).tasks());
        assert_eq!(cancel.await.unwrap(), ack());
        let seen = read.await.unwrap()["status"].clone();
        assert!(seen == "input_required" || seen == "cancelled", "{seen}");
        let cancelled = get(&d, &id).await;
        assert_eq!(cancelled["status"], "cancelled", "round {i}");
        assert!(cancelled.get("inputRequests").is_none(), "{cancelled}");
        // A later update is acked without effect.
        let late = Req::update(&id, json!({"confirm": accept(json!({"who": "late"}))})).tasks();
        assert_eq!(late.send(&d).await.result(), ack());
        wait_slot_free(&d).await;
        assert_eq!(get(&d, &id).await, cancelled);
    }
    assert_eq!(
        received.load(Ordering::SeqCst),
        0,
        "no answer ever reached the tool"
    );
}
