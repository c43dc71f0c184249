//! The 2025 session path in process (`crates/tasks-http/src/sessions`): `initialize` and the
//! session id, the lifecycle, errors inside and outside a session, server-to-client requests
//! answered by POSTed responses, cancellation, the GET stream, DELETE, the session limits and
//! scope binding. Over real HTTP: `tests/tests/http_e2e/sessions_http.rs`; the runner's 2025-11-25
//! scenarios: `conformance/`.

use std::time::Duration;

use futures_util::StreamExt as _;
use http::Method;
use serde_json::{json, Value};
use tasks_core::exchange::ListKind;
use tasks_core::LogLevel;
use tasks_http::SessionConfig;
use tasks_runtime::{text_result, ListChanges, Tool};
use tasks_test_support::dispatcher::*;
use tasks_test_support::protocol::*;
use tasks_test_support::request::*;
use tasks_test_support::sessions::*;
use tasks_test_support::tools::*;
use tasks_test_support::wait::WAIT_LIMIT;

#[tokio::test]
async fn initialize_opens_a_session_and_the_lifecycle_runs_in_it() {
    let (d, _) = dispatcher();
    let reply = initialize().send(&d).await;
    let session = reply.session_id.clone().unwrap();
    assert_eq!(session.len(), 32);
    assert!(session.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(
        legacy_result(&reply),
        json!({"protocolVersion": V2025,
               "capabilities": {"tools": {"listChanged": false}, "logging": {},
                                "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}},
               "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION}})
    );
    // Requests are served before `initialized` too.
    let ping = in_session(&session, "ping").id(json!(1)).send(&d).await;
    assert_eq!(legacy_result(&ping), json!({}));
    let level = in_session(&session, "logging/setLevel")
        .param("level", json!("debug"))
        .id(json!(2))
        .send(&d)
        .await;
    assert_eq!(legacy_result(&level), json!({}));
    let tools = legacy_result(
        &in_session(&session, "tools/list")
            .id(json!(3))
            .send(&d)
            .await,
    );
    let echo = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "sync_echo")
        .unwrap();
    assert_eq!(echo["description"], "Echoes text synchronously");
    let support = |name: &str| {
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["execution"]["taskSupport"]
            .clone()
    };
    assert_eq!(
        [
            support("sync_echo"),
            support("optional_job"),
            support("required_job")
        ],
        [json!("forbidden"), json!("optional"), json!("required")]
    );
    let call = in_session(&session, "tools/call")
        .param("name", json!("sync_echo"))
        .param("arguments", json!({"text": "hi"}))
        .id(json!("c"))
        .send(&d)
        .await;
    assert_eq!(
        legacy_result(&call),
        json!({"content": [{"type": "text", "text": "echo: hi"}], "isError": false})
    );
    // Two sessions are two ids.
    let other = initialize().send(&d).await.session_id.unwrap();
    assert_ne!(other, session);
}

#[tokio::test]
async fn a_2025_06_18_session_has_no_tasks_and_runs_every_tool_now() {
    let (d, runs) = dispatcher();
    let reply = initialize_at("2025-06-18").send(&d).await;
    let result = legacy_result(&reply);
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert!(result["capabilities"].get("tasks").is_none(), "{result}");
    let session = reply.session_id.unwrap();
    let tools = legacy_result(
        &in_session(&session, "tools/list")
            .id(json!(1))
            .send(&d)
            .await,
    );
    assert!(tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.get("execution").is_none()));
    // A required tool runs now, with or without a hint (ignored).
    for hint in [None, Some(json!({"ttl": 1000}))] {
        let mut req = in_session(&session, "tools/call").param("name", json!("required_job"));
        if let Some(hint) = hint {
            req = req.param("task", hint);
        }
        let reply = req.id(json!(2)).send(&d).await;
        assert_eq!(legacy_result(&reply)["content"][0]["text"], "required done");
    }
    assert_eq!(
        runs.required_job.load(std::sync::atomic::Ordering::SeqCst),
        2
    );
    in_session(&session, "tasks/get")
        .param("taskId", json!("x"))
        .id(json!(3))
        .send(&d)
        .await
        .error(200, -32601, "Method not found");
}

#[tokio::test]
async fn errors_inside_a_session_are_json_rpc_errors_at_http_200() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let cases = [
        (
            in_session(&session, "resources/list"),
            -32601,
            "Method not found",
        ),
        (
            in_session(&session, "tasks/update"),
            -32601,
            "Method not found",
        ),
        (
            in_session(&session, "tools/call").param("name", json!("nope")),
            -32602,
            "Unknown tool",
        ),
        (
            in_session(&session, "logging/setLevel").param("level", json!("loud")),
            -32602,
            "level must be a log level",
        ),
        (
            in_session(&session, "tools/call").param("name", json!("explode")),
            -32601,
            "This tool must be called with a task (params.task)",
        ),
        (
            in_session(&session, "tools/call")
                .param("name", json!("sync_echo"))
                .param("task", json!({})),
            -32601,
            "This tool does not support task-augmented calls",
        ),
    ];
    for (req, code, message) in cases {
        req.id(json!(5)).send(&d).await.error(200, code, message);
    }
    // A tool's own JSON-RPC error is the answer (a 2025-06-18 session runs `explode` now).
    let old = open_at(&d, "2025-06-18").await;
    in_session(&old, "tools/call")
        .param("name", json!("explode"))
        .id(json!(5))
        .send(&d)
        .await
        .error(200, -32603, "Tool exploded");
    let invalid = in_session(&session, "tools/call")
        .param("name", json!("strict"))
        .param("arguments", json!({"count": "x"}))
        .id(json!(6))
        .send(&d)
        .await;
    let result = legacy_result(&invalid);
    assert_eq!(result["isError"], true, "{result}");
}

#[tokio::test]
async fn messages_outside_a_live_session_are_refused_at_the_http_level() {
    let (d, _) = dispatcher();
    legacy("ping").id(json!(1)).send(&d).await.error(
        400,
        -32600,
        "Bad Request: Mcp-Session-Id header is required",
    );
    for stale in ["0123456789abcdef0123456789abcdef", "not-a-session", ""] {
        in_session(stale, "ping").id(json!(1)).send(&d).await.error(
            404,
            -32001,
            "Session not found",
        );
    }
    let session = open(&d).await;
    // Two session headers name no one session.
    in_session(&session, "ping")
        .append("mcp-session-id", &session)
        .id(json!(1))
        .send(&d)
        .await
        .error(404, -32001, "Session not found");
    initialize()
        .header("mcp-session-id", &session)
        .send(&d)
        .await
        .error(400, -32600, "Invalid Request: Server already initialized");
    // A version never served is refused, naming every version served.
    let error = initialize()
        .param("protocolVersion", json!("2024-11-05"))
        .send(&d)
        .await
        .error(400, -32022, "Unsupported protocol version");
    assert_eq!(
        error["data"],
        json!({"supported": ["2026-07-28", "2025-11-25", "2025-06-18"], "requested": "2024-11-05"})
    );
    // An answer to a request never sent.
    let reply = answer(&session, json!({"jsonrpc": "2.0", "id": 99, "result": {}}))
        .send(&d)
        .await;
    reply.anonymous_error(400, -32600, "No outstanding request has this id");
}

#[tokio::test]
async fn the_2026_path_ignores_session_ids_and_stays_unchanged() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    // A 2026 request carrying a live or a stale session id is served statelessly.
    for id in [session.as_str(), "0123456789abcdef0123456789abcdef"] {
        let reply = Req::call("sync_echo", json!({"text": "x"}))
            .header("mcp-session-id", id)
            .send(&d)
            .await;
        assert!(reply.session_id.is_none());
        reply.result();
    }
    // The removed methods stay -32601 there, and `initialize` with `_meta` is 404.
    for method in [
        "tasks/result",
        "tasks/list",
        "ping",
        "logging/setLevel",
        "initialize",
    ] {
        Req::new(method)
            .header("mcp-session-id", &session)
            .send(&d)
            .await
            .error(404, -32601, "Method not found");
    }
    // GET and DELETE without a live session are the 2026 answer: 405.
    for method in [Method::GET, Method::DELETE] {
        for header in [None, Some("0123456789abcdef0123456789abcdef")] {
            let mut req = legacy("ping").http_method(method.clone());
            if let Some(id) = header {
                req = req.header("mcp-session-id", id);
            }
            let reply = req.send(&d).await;
            assert_eq!(reply.status, 405, "{method} {header:?}");
        }
    }
}

#[tokio::test]
async fn delete_ends_the_session() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let reply = in_session(&session, "x")
        .http_method(Method::DELETE)
        .send(&d)
        .await;
    assert_eq!((reply.status, reply.is_empty()), (200, true));
    in_session(&session, "ping")
        .id(json!(1))
        .send(&d)
        .await
        .error(404, -32001, "Session not found");
    let again = in_session(&session, "x")
        .http_method(Method::DELETE)
        .send(&d)
        .await;
    assert_eq!(again.status, 405);
}

/// Reads the next message of a call's stream.
async fn next(stream: &mut tasks_http::MessageStream) -> Value {
    next_message(stream).await
}

#[tokio::test]
async fn input_requests_go_out_on_the_call_stream_and_answers_resume_the_tool() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let mut stream = in_session(&session, "tools/call")
        .param("name", json!("interview"))
        .id(json!(7))
        .send(&d)
        .await
        .into_stream();
    let first = next(&mut stream).await;
    assert_eq!(first["method"], "elicitation/create");
    assert_eq!(first["params"]["message"], "First?");
    let first_id = first["id"].clone();
    assert!(first_id.is_u64(), "{first}");
    let reply = answer(
        &session,
        json!({"jsonrpc": "2.0", "id": first_id, "result": accept(json!({"name": "ann"}))}),
    )
    .send(&d)
    .await;
    assert_eq!((reply.status, reply.is_empty()), (202, true));
    // The same answer again: nothing outstanding has that id any more.
    answer(
        &session,
        json!({"jsonrpc": "2.0", "id": first_id, "result": accept(json!({"name": "ann"}))}),
    )
    .send(&d)
    .await
    .anonymous_error(400, -32600, "No outstanding request has this id");
    let second = next(&mut stream).await;
    assert_eq!(second["params"]["message"], "Second?");
    assert_ne!(second["id"], first_id, "fresh ids per request");
    let reply = answer(
        &session,
        json!({"jsonrpc": "2.0", "id": second["id"], "result": accept(json!({"name": "bo"}))}),
    )
    .send(&d)
    .await;
    assert_eq!(reply.status, 202);
    let done = next(&mut stream).await;
    assert_eq!(done["id"], 7);
    assert_eq!(
        done["result"],
        json!({"content": [{"type": "text", "text": "first=ann second=bo"}], "isError": false})
    );
    assert!(
        stream.next().await.is_none(),
        "the response ends the stream"
    );
}

#[tokio::test]
async fn a_client_error_answer_ends_the_call_with_a_tool_error() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let mut stream = in_session(&session, "tools/call")
        .param("name", json!("park"))
        .id(json!(8))
        .send(&d)
        .await
        .into_stream();
    let request = next(&mut stream).await;
    let reply = answer(
        &session,
        json!({"jsonrpc": "2.0", "id": request["id"],
               "error": {"code": -32601, "message": "no elicitation here"}}),
    )
    .send(&d)
    .await;
    assert_eq!(reply.status, 202);
    let done = next(&mut stream).await;
    assert_eq!(
        done["result"],
        json!({"content": [{"type": "text",
                            "text": "The client refused input request confirm (JSON-RPC error -32601)"}],
               "isError": true})
    );
}

#[tokio::test]
async fn cancelled_closed_or_ended_calls_stop_without_a_response() {
    let (d, _) = dispatcher();
    // 2025-06-18: `block` (a required tool) runs now.
    let session = open_at(&d, "2025-06-18").await;
    // notifications/cancelled for the request.
    let mut stream = in_session(&session, "tools/call")
        .param("name", json!("park"))
        .id(json!("p1"))
        .send(&d)
        .await
        .into_stream();
    let request = next(&mut stream).await;
    let note = in_session(&session, "notifications/cancelled")
        .param("requestId", json!("p1"))
        .notification()
        .send(&d)
        .await;
    assert_eq!(note.status, 202);
    let end = tokio::time::timeout(WAIT_LIMIT, stream.next())
        .await
        .unwrap();
    assert!(end.is_none(), "no response after a cancellation: {end:?}");
    // Its input request is no longer outstanding.
    answer(
        &session,
        json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}}),
    )
    .send(&d)
    .await
    .anonymous_error(400, -32600, "No outstanding request has this id");
    // The session ending (DELETE) stops a running call: its stream ends without a response.
    let d = std::sync::Arc::new(d);
    let call = tokio::spawn({
        let d = d.clone();
        let req = in_session(&session, "tools/call")
            .param("name", json!("block"))
            .id(json!(2));
        async move { req.send(&d).await }
    });
    // `block` sends nothing: the response stays pending until the call ends.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!call.is_finished());
    let reply = in_session(&session, "x")
        .http_method(Method::DELETE)
        .send(&d)
        .await;
    assert_eq!(reply.status, 200);
    let reply = tokio::time::timeout(WAIT_LIMIT, call)
        .await
        .unwrap()
        .unwrap();
    let mut stream = reply.into_stream();
    assert!(
        stream.next().await.is_none(),
        "no response for a call its session ended"
    );
}

#[tokio::test]
async fn the_get_stream_is_one_per_session_and_carries_tool_list_changes() {
    let runs = std::sync::Arc::new(Runs::default());
    let changes = ListChanges::new();
    let d = builder(&runs).list_changes(changes.clone()).build();
    let reply = initialize().send(&d).await;
    assert_eq!(
        legacy_result(&reply)["capabilities"]["tools"],
        json!({"listChanged": true})
    );
    let session = reply.session_id.unwrap();
    let get = || in_session(&session, "x").http_method(Method::GET);
    let mut first = get().send(&d).await.into_stream();
    // A second GET replaces the first, which ends: each message goes out on one stream.
    let mut stream = get().send(&d).await.into_stream();
    let end = tokio::time::timeout(WAIT_LIMIT, first.next())
        .await
        .unwrap();
    assert!(end.is_none(), "the replaced stream ended");
    changes.announce(ListKind::Prompts);
    changes.announce(ListKind::Tools);
    let message = next(&mut stream).await;
    assert_eq!(
        message,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})
    );
    // Ending the session closes it.
    let reply = in_session(&session, "x")
        .http_method(Method::DELETE)
        .send(&d)
        .await;
    assert_eq!(reply.status, 200);
    let end = tokio::time::timeout(WAIT_LIMIT, stream.next())
        .await
        .unwrap();
    assert!(end.is_none());
}

#[tokio::test]
async fn progress_and_logs_follow_the_token_and_the_session_level() {
    let runs = std::sync::Arc::new(Runs::default());
    let chatty = Tool::new(
        "chatty",
        "Reports progress, logs, answers",
        |ctx| async move {
            ctx.progress(1.0, Some(2.0), None);
            ctx.log(LogLevel::Debug, None, json!("below the level"));
            ctx.log(LogLevel::Info, Some("chatty"), json!("hello"));
            Ok(text_result("chatted"))
        },
    );
    let d = builder(&runs).tool(chatty).build();
    let session = open(&d).await;
    let req = || {
        in_session(&session, "tools/call")
            .param("name", json!("chatty"))
            .id(json!(3))
    };
    // Without a token or a level, the answer is one JSON body.
    let quiet = req().send(&d).await;
    assert_eq!(legacy_result(&quiet)["content"][0]["text"], "chatted");
    let level = in_session(&session, "logging/setLevel")
        .param("level", json!("info"))
        .id(json!(4))
        .send(&d)
        .await;
    assert_eq!(level.status, 200);
    let mut stream = req()
        .param("_meta", json!({"progressToken": "t"}))
        .send(&d)
        .await
        .into_stream();
    let mut methods = Vec::new();
    loop {
        let message = next(&mut stream).await;
        if message.get("id").is_some() {
            assert_eq!(message["result"]["content"][0]["text"], "chatted");
            break;
        }
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], "t");
        }
        methods.push(message["method"].as_str().unwrap().to_owned());
    }
    assert_eq!(methods, ["notifications/progress", "notifications/message"]);
}

#[tokio::test]
async fn a_session_belongs_to_its_caller() {
    let d = scoped_dispatcher();
    let reply = initialize().bearer("alice").send(&d).await;
    let session = reply.session_id.unwrap();
    let ping = || in_session(&session, "ping").id(json!(1));
    assert_eq!(ping().bearer("alice").send(&d).await.status, 200);
    ping()
        .bearer("bob")
        .send(&d)
        .await
        .error(404, -32001, "Session not found");
    let get = in_session(&session, "x")
        .http_method(Method::GET)
        .bearer("bob")
        .send(&d)
        .await;
    assert_eq!(get.status, 405);
    let delete = in_session(&session, "x")
        .http_method(Method::DELETE)
        .bearer("bob")
        .send(&d)
        .await;
    assert_eq!(delete.status, 405);
    assert_eq!(
        ping().bearer("alice").send(&d).await.status,
        200,
        "bob ended nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn sessions_are_bounded_in_number_and_idle_time() {
    let runs = std::sync::Arc::new(Runs::default());
    let config = SessionConfig::default()
        .with_max_sessions(2)
        .with_idle_timeout(Duration::from_secs(60));
    let d = builder(&runs).sessions(Some(config)).build();
    let ping = |session: &str| in_session(session, "ping").id(json!(1));
    let first = initialize().send(&d).await.session_id.unwrap();
    tokio::time::advance(Duration::from_secs(1)).await;
    let second = initialize().send(&d).await.session_id.unwrap();
    tokio::time::advance(Duration::from_secs(1)).await;
    // Full: the session idle longest makes room, and its client is told it is gone.
    let third = initialize().send(&d).await.session_id.unwrap();
    ping(&first)
        .send(&d)
        .await
        .error(404, -32001, "Session not found");
    assert_eq!(ping(&second).send(&d).await.status, 200);
    // Busy sessions (an open GET stream) are never ended to make room.
    let get = |session: &str| in_session(session, "x").http_method(Method::GET);
    let second_stream = get(&second).send(&d).await.into_stream();
    let third_stream = get(&third).send(&d).await.into_stream();
    let error = initialize()
        .send(&d)
        .await
        .error(503, -32603, "Too many sessions");
    assert_eq!(
        error["data"],
        json!({"retryable": true, "limit": "max_sessions"})
    );
    // An idle session ends after the idle timeout; a busy one does not.
    drop(third_stream);
    tokio::time::advance(Duration::from_secs(61)).await;
    ping(&third)
        .send(&d)
        .await
        .error(404, -32001, "Session not found");
    assert_eq!(ping(&second).send(&d).await.status, 200);
    drop(second_stream);
}

#[tokio::test]
async fn a_request_id_in_use_is_refused_and_session_headers_must_fit() {
    let (d, _) = dispatcher();
    let session = open_at(&d, "2025-06-18").await;
    let running = in_session(&session, "tools/call")
        .param("name", json!("park"))
        .id(json!(5))
        .send(&d)
        .await
        .into_stream();
    in_session(&session, "tools/call")
        .param("name", json!("sync_echo"))
        .id(json!(5))
        .send(&d)
        .await
        .error(200, -32600, "A request with this id is still being served");
    drop(running);
    // A 2026 version or a foreign Mcp-Method on a session request is refused, not served.
    in_session(&session, "tools/call")
        .param("name", json!("sync_echo"))
        .header("mcp-protocol-version", "2026-07-28")
        .id(json!(6))
        .send(&d)
        .await
        .error(400, -32022, "Unsupported protocol version");
    in_session(&session, "tools/call")
        .param("name", json!("sync_echo"))
        .header("mcp-method", "tools/list")
        .id(json!(7))
        .send(&d)
        .await
        .error(
            400,
            -32020,
            "Mcp-Method header does not match the request method",
        );
}

#[tokio::test]
async fn shutdown_ends_sessions_streams_and_calls() {
    let (d, _) = dispatcher();
    let session = open_at(&d, "2025-06-18").await;
    let mut get = in_session(&session, "x")
        .http_method(Method::GET)
        .send(&d)
        .await
        .into_stream();
    let mut call = in_session(&session, "tools/call")
        .param("name", json!("park"))
        .id(json!(1))
        .send(&d)
        .await
        .into_stream();
    let request = next(&mut call).await;
    assert_eq!(request["method"], "elicitation/create");
    assert!(
        request["params"].get("mode").is_none(),
        "2025-06-18 has no mode: {request}"
    );
    d.close_streams();
    for stream in [&mut get, &mut call] {
        let end = tokio::time::timeout(WAIT_LIMIT, stream.next())
            .await
            .unwrap();
        assert!(end.is_none());
    }
}

#[tokio::test]
async fn with_the_session_path_off_a_2025_initialize_is_refused() {
    let runs = std::sync::Arc::new(Runs::default());
    let d = builder(&runs).sessions(None).build();
    let error = initialize()
        .send(&d)
        .await
        .error(400, -32022, "Unsupported protocol version");
    assert_eq!(
        error["data"],
        json!({"supported": ["2026-07-28"], "requested": V2025})
    );
}

/// The count `mcp_requests_total` shows for `method` and `code`.
async fn requests_counted(d: &tasks_http::Dispatcher, method: &str, code: &str) -> u64 {
    let series = format!("mcp_requests_total{{method=\"{method}\",code=\"{code}\"}} ");
    let text = d.encode_metrics().await;
    text.lines()
        .find_map(|line| line.strip_prefix(&series))
        .unwrap_or_else(|| panic!("no series {series} in:\n{text}"))
        .parse()
        .expect("a count")
}

#[tokio::test]
async fn session_messages_are_counted_under_their_own_method_labels() {
    let (d, _) = dispatcher();
    let session = open(&d).await;
    let ping = in_session(&session, "ping").id(json!(1)).send(&d).await;
    assert_eq!(ping.status, 200);
    for n in 0..2 {
        let list = in_session(&session, "tools/list")
            .id(json!(10 + n))
            .send(&d)
            .await;
        assert_eq!(list.status, 200);
    }
    let unknown = in_session(&session, "sampling/createMessage")
        .id(json!(3))
        .send(&d)
        .await;
    assert_eq!(unknown.json()["error"]["code"], -32601);
    // A method of a feature this server does not offer keeps its own label, with -32601.
    let not_offered = in_session(&session, "resources/list")
        .id(json!(4))
        .send(&d)
        .await;
    assert_eq!(not_offered.json()["error"]["code"], -32601);
    for (method, code, count) in [
        ("session/resources/list", "-32601", 1),
        ("session/initialize", "ok", 1),
        ("session/notification", "ok", 1),
        ("session/ping", "ok", 1),
        ("session/tools/list", "ok", 2),
        ("session/other", "-32601", 1),
        // The 2026 label of the same method is untouched.
        ("tools/list", "ok", 0),
        ("other", "ok", 0),
    ] {
        assert_eq!(
            requests_counted(&d, method, code).await,
            count,
            "{method} {code}"
        );
    }
}
