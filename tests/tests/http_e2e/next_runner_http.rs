//! The checks of the official conformance repository's unreleased server scenarios (not in the
//! pinned runner `@modelcontextprotocol/conformance@0.2.0-alpha.12`), over real HTTP against the
//! fixture. Each test names its scenario, the upstream commit read, and its check ids;
//! `conformance/README.md` ("Unreleased upstream scenarios") has the table and what does not
//! apply.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tasks_fixture::tools::content::SLOW_CANCELLED_LOG;
use tasks_fixture::tools::session::session_extensions;
use tasks_test_support::client::{Client, Reply};
use tasks_test_support::fixture::*;
use tasks_test_support::protocol::*;
use tasks_test_support::request::Req;
use tasks_test_support::sse::Sse;
use tasks_test_support::wait::WAIT_LIMIT;

use super::log_secrets::Captured;
use super::sessions_http::{open_session_at, Legacy};

const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const SESSION_ID: &str = "mcp-session-id";
const BATCH: &str = "Batch requests are not supported: send one message per POST";
const ERAS_2025: [&str; 2] = ["2025-06-18", "2025-11-25"];

/// A 2026 `tools/call` of `tool` with `arguments` whose `_meta` adds `extra` to the protocol
/// version and (empty) client capabilities.
fn call_with_meta(tool: &str, arguments: Value, extra: Value) -> Req {
    let mut meta = meta(VERSION, json!({}));
    for (key, value) in extra.as_object().into_iter().flatten() {
        meta[key] = value.clone();
    }
    Req::call(tool, arguments).meta(meta)
}

/// Every JSON-RPC message of a response: the events of an SSE body (to its end), or the one
/// JSON body.
async fn messages(response: reqwest::Response) -> Vec<Value> {
    let sse = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !sse {
        return vec![response.json().await.expect("a JSON body")];
    }
    let mut events = Sse::of(response);
    let mut all = Vec::new();
    while let Some(message) = tokio::time::timeout(WAIT_LIMIT, events.next_or_end())
        .await
        .expect("the SSE response ends")
    {
        all.push(message);
    }
    all
}

fn log_messages(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect()
}

/// The response to request `id` among `messages`.
fn response_to<'a>(messages: &'a [Value], id: &Value) -> &'a Value {
    messages
        .iter()
        .find(|m| &m["id"] == id && m.get("method").is_none())
        .unwrap_or_else(|| panic!("no response to {id} in {messages:?}"))
}

/// Captures the process's logs of the fixture's tools (nextest runs each test in a process of
/// its own, so the global subscriber is this test's).
fn capture_tool_logs() -> Captured {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_env_filter("tasks_conformance=info")
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();
    captured
}

/// Waits until `test_tool_slow` has logged its cancellation `count` times; returns the
/// `elapsed_ms` of each.
async fn cancellations(captured: &Captured, count: usize) -> Vec<u64> {
    tokio::time::timeout(WAIT_LIMIT, async {
        loop {
            let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
            let elapsed: Vec<u64> = text
                .lines()
                .filter(|line| line.contains(SLOW_CANCELLED_LOG))
                .map(|line| {
                    let at = line.find("elapsed_ms=").expect("elapsed_ms") + "elapsed_ms=".len();
                    let digits: String = line[at..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect();
                    digits.parse().expect("a number of milliseconds")
                })
                .collect();
            if elapsed.len() >= count {
                return elapsed;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("test_tool_slow logged {count} cancellations"))
}

/// `test_tool_fast` answers at once: the health check of the cancellation scenarios.
async fn assert_healthy(client: &Client) {
    let reply = client
        .send_req(&Req::call("test_tool_fast", json!({})))
        .await;
    assert_eq!(reply.result()["content"][0]["text"], "Fast tool completed");
}

/// Scenario `server-protocol-version-header` (protocol-version-header.ts at 518f1914), checks
/// `server-protocol-version-header-{malformed,unsupported-past,unsupported-future}` and their
/// `-post-init` forms, on 2025-06-18 and 2025-11-25: a `tools/list` whose `MCP-Protocol-Version`
/// is malformed or an unsupported past or future date is HTTP 400, without a session and in an
/// initialized one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_version_header_bad_values_are_400_before_and_after_initialize() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let tools_list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let bad_values = ["invalid-protocol-version", "2000-01-01", "2099-01-01"];
    for bad in bad_values {
        let reply = Client::send(
            client
                .http()
                .post(client.url())
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", bad)
                .body(tools_list.to_string()),
        )
        .await;
        assert_eq!(reply.status, 400, "pre-init {bad}: {}", reply.body);
        assert!(reply.body["error"]["code"].is_i64(), "{}", reply.body);
    }
    for version in ERAS_2025 {
        let (session, _) = open_session_at(&server, version, json!({})).await;
        for bad in bad_values {
            let reply = Client::send_replacing(
                session.post(tools_list.clone()),
                &[("mcp-protocol-version", bad)],
            )
            .await;
            assert_eq!(
                reply.status, 400,
                "post-init {version} {bad}: {}",
                reply.body
            );
            assert!(reply.body["error"]["code"].is_i64(), "{}", reply.body);
        }
        // The same session with its own version is served.
        let listed = Client::send(session.post(tools_list.clone()))
            .await
            .result();
        assert!(listed["tools"].as_array().is_some_and(|t| !t.is_empty()));
    }
    server.shutdown().await;
}

/// Scenario `json-rpc-batch-rejection` (json-rpc-batch-rejection.ts at c96f4e6b), check
/// `json-rpc-batch-rejected`: a JSON array body is HTTP 400 with one JSON-RPC error object (not
/// an array), on 2026-07-28 (a `server/discover` + `tools/list` batch with per-request `_meta`)
/// and in initialized 2025-06-18 and 2025-11-25 sessions (two `ping`s with the session id).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_bodies_get_one_json_rpc_error_in_both_eras() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let per_request = json!({"_meta": {META_VERSION: VERSION, META_CAPS: {},
        "io.modelcontextprotocol/clientInfo": {"name": "batch", "version": "1"}}});
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": per_request},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": per_request},
    ]);
    let assert_rejected = |reply: Reply| {
        assert!(reply.body.is_object(), "one error object: {}", reply.body);
        reply.error(400, -32600, BATCH);
        assert!(reply.body.get("id").is_none(), "{}", reply.body);
    };
    assert_rejected(
        Client::send(
            client
                .post(json!(1), "server/discover", json!({}), json!({}))
                .body(batch.to_string()),
        )
        .await,
    );
    for version in ERAS_2025 {
        let (session, _) = open_session_at(&server, version, json!({})).await;
        let pings = json!([
            {"jsonrpc": "2.0", "id": 901, "method": "ping", "params": {}},
            {"jsonrpc": "2.0", "id": 902, "method": "ping", "params": {}},
        ]);
        assert_rejected(Client::send(session.post(pings)).await);
        // The session is unharmed.
        let pong =
            Client::send(session.post(json!({"jsonrpc": "2.0", "id": 903, "method": "ping"})))
                .await;
        assert_eq!(pong.result(), json!({}));
    }
    server.shutdown().await;
}

/// Scenario `per-request-loglevel` (per-request-loglevel.ts at 4d824f7c), 2026-07-28:
/// `per-request-loglevel-positive-emission` (`debug`: `test_logging_tool`'s messages on its SSE
/// response), `-severity-filtering` (`error`: none below error), `-invalid-rejection`
/// (`banana`: -32602) and `-request-scoped` (a concurrent `test_tool_fast` call without a
/// `logLevel` gets no `notifications/message`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_request_log_level_emits_filters_rejects_and_stays_on_its_stream() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let logging = |level: &str| {
        client.req(
            &call_with_meta("test_logging_tool", json!({}), json!({LOG_LEVEL: level}))
                .id(json!(level)),
        )
    };

    let debug = messages(logging("debug").send().await.unwrap()).await;
    let logs = log_messages(&debug);
    assert_eq!(logs.len(), 2, "{debug:?}");
    for (log, data) in logs
        .iter()
        .zip(["Tool execution started", "Tool execution completed"])
    {
        assert_eq!(
            log["params"],
            json!({"level": "info", "logger": "test_logging_tool", "data": data})
        );
    }
    assert_eq!(
        response_to(&debug, &json!("debug"))["result"]["content"][0]["text"],
        "Logging test completed"
    );

    let error = messages(logging("error").send().await.unwrap()).await;
    assert_eq!(log_messages(&error), Vec::<&Value>::new(), "{error:?}");
    assert_eq!(
        response_to(&error, &json!("error"))["result"]["content"][0]["text"],
        "Logging test completed"
    );

    Client::send(logging("banana")).await.error(
        400,
        -32602,
        "params._meta io.modelcontextprotocol/logLevel is not a log level",
    );

    let fast = client.req(&Req::call("test_tool_fast", json!({})).id(json!("fast")));
    let (logged, quiet) = tokio::join!(
        async { messages(logging("debug").send().await.unwrap()).await },
        async { messages(fast.send().await.unwrap()).await },
    );
    assert_eq!(log_messages(&logged).len(), 2, "{logged:?}");
    assert_eq!(log_messages(&quiet), Vec::<&Value>::new(), "{quiet:?}");
    assert_eq!(
        response_to(&quiet, &json!("fast"))["result"]["content"][0]["text"],
        "Fast tool completed"
    );
    server.shutdown().await;
}

/// Scenario `http-stream-cancellation` (http-stream-cancellation.ts at 4d824f7c), 2026-07-28:
/// `http-stream-cancel-closes-request` (closing a `test_tool_slow` response stream mid-flight
/// cancels the call: the tool observes its cancellation (or its run is dropped) and stops well before its 10 s, so
/// nothing more is produced for it), `http-stream-cancel-server-health` (`test_tool_fast`
/// answers afterwards) and `http-stream-cancel-rapid-burst` (5 calls opened and closed at once
/// each stop too, and the server still answers). Unlike the upstream check, the calls carry a
/// `progressToken`: without one a 2026-07-28 server has nothing to send before the result
/// (`conformance/README.md`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_response_stream_cancels_a_slow_call() {
    let captured = capture_tool_logs();
    let server = start(settings()).await;
    let client = Client::of(&server);
    let slow = |token: &str| {
        client.req(&call_with_meta(
            "test_tool_slow",
            json!({"durationMs": 10_000}),
            json!({"progressToken": token}),
        ))
    };

    let started = Instant::now();
    let response = slow("slow-1").send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut stream = Sse::of(response);
    let first = stream
        .next_within(Duration::from_secs(3))
        .await
        .expect("an SSE event within 3 s");
    assert_eq!(
        first,
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": "slow-1", "progress": 0, "total": 10, "message": "Started"}})
    );
    drop(stream);
    let stopped = cancellations(&captured, 1).await;
    assert!(stopped[0] < 9_000, "stopped after {} ms", stopped[0]);
    assert!(started.elapsed() < Duration::from_secs(9));
    assert_healthy(&client).await;
    assert_healthy(&client).await;

    for i in 0..5 {
        let response = slow(&format!("burst-{i}")).send().await.unwrap();
        assert_eq!(response.status(), 200);
        drop(response);
    }
    assert_eq!(cancellations(&captured, 6).await.len(), 6);
    assert_healthy(&client).await;
    server.shutdown().await;
}

/// Scenario `cancellation` (2025-era `notifications/cancelled`; cancellation.ts at 35452176),
/// on 2025-11-25: `cancellation-unknown-request-stability` (a cancellation of an unknown id is
/// accepted and `test_tool_fast` answers), `cancellation-in-progress-request` (cancelling a
/// running `test_tool_slow` stops it: its response stream ends without a response, the tool
/// logs that it stopped before its end, and the session still answers) and
/// `cancellation-rapid-burst-stability` (5 cancellations of unknown ids, then an answer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_cancelled_stops_a_2025_slow_call() {
    let captured = capture_tool_logs();
    let server = start(settings()).await;
    let (session, _) = open_session_at(&server, "2025-11-25", json!({})).await;
    let cancel = |id: Value| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": id, "reason": "test"}})
    };
    let fast = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "test_tool_fast", "arguments": {}}})
    };
    let assert_fast = |messages: Vec<Value>, id: i64| {
        assert_eq!(
            response_to(&messages, &json!(id))["result"]["content"][0]["text"],
            "Fast tool completed"
        );
    };

    let accepted = session
        .post(cancel(json!("nonexistent-request-99999")))
        .send()
        .await;
    assert_eq!(accepted.unwrap().status(), 202);
    assert_fast(
        messages(session.post(fast(10)).send().await.unwrap()).await,
        10,
    );

    let response = session
        .post(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "test_tool_slow", "arguments": {"durationMs": 10_000},
            "_meta": {"progressToken": "slow-2025"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut stream = Sse::of(response);
    let first = stream.next().await;
    assert_eq!(first["method"], "notifications/progress", "{first}");
    assert_eq!(first["params"]["progressToken"], "slow-2025");
    let started = Instant::now();
    assert_eq!(
        session
            .post(cancel(json!(1)))
            .send()
            .await
            .unwrap()
            .status(),
        202
    );
    let mut rest = Vec::new();
    while let Some(message) = tokio::time::timeout(WAIT_LIMIT, stream.next_or_end())
        .await
        .expect("the cancelled call's stream ends")
    {
        rest.push(message);
    }
    assert!(
        rest.iter().all(|m| m.get("id").is_none()),
        "no response to a cancelled request: {rest:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(9));
    let stopped = cancellations(&captured, 1).await;
    assert!(stopped[0] < 9_000, "stopped after {} ms", stopped[0]);
    assert_fast(
        messages(session.post(fast(11)).send().await.unwrap()).await,
        11,
    );

    for i in 0..5 {
        let burst = session.post(cancel(json!(format!("burst-cancel-{i}"))));
        assert_eq!(burst.send().await.unwrap().status(), 202);
    }
    assert_fast(
        messages(session.post(fast(12)).send().await.unwrap()).await,
        12,
    );
    server.shutdown().await;
}

/// The ids of a whole 2026 list (`tools/list`, `resources/list` or `prompts/list`), page by
/// page, sorted; each response is checked to carry no `Mcp-Session-Id`.
async fn list_ids(client: &Client, method: &str, field: &str, id_key: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor: Option<Value> = None;
    loop {
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let reply = client.request(method, params, json!({})).await;
        assert!(reply.headers.get(SESSION_ID).is_none());
        let result = reply.result();
        for item in result[field].as_array().expect("a list") {
            ids.push(item[id_key].as_str().expect("an id").to_owned());
        }
        match result.get("nextCursor") {
            Some(next) => cursor = Some(next.clone()),
            None => break,
        }
    }
    ids.sort();
    ids
}

/// Scenario `server-sessionless` (sessionless.ts at 67da8601), 2026-07-28:
/// `sep-2567-server-accepts-requests-without-session-id` (`server/discover` without
/// `Mcp-Session-Id` is served) and `sep-2567-{tools,resources,prompts}-list-connection-invariant`
/// (each declared list gives the same set twice, with other requests between). The fixture also
/// serves the 2025 `initialize` (asserted here), so the scenario SKIPs
/// `sep-2567-server-rejects-get-and-delete`, `-ignores-session-id` and `-ignores-last-event-id`
/// for it; what of them holds on the 2026 path is asserted anyway: a 2026 request carrying a
/// stale `Mcp-Session-Id` or a `Last-Event-ID` is served, and no 2026 response carries an
/// `Mcp-Session-Id`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessionless_2026_requests_are_served_and_lists_do_not_vary() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let discover = client
        .request("server/discover", json!({}), json!({}))
        .await;
    assert!(discover.headers.get(SESSION_ID).is_none());
    let capabilities = discover.result()["capabilities"].clone();
    let lists = [
        ("tools", "tools/list", "name"),
        ("resources", "resources/list", "uri"),
        ("prompts", "prompts/list", "name"),
    ];
    for (capability, _, _) in lists {
        assert!(capabilities[capability].is_object(), "{capabilities}");
    }
    for (field, method, id_key) in lists {
        let first = list_ids(&client, method, field, id_key).await;
        assert!(!first.is_empty(), "{method}");
        client
            .request("server/discover", json!({}), json!({}))
            .await
            .result();
        for (other_field, other, other_key) in lists {
            if other != method {
                list_ids(&client, other, other_field, other_key).await;
            }
        }
        assert_eq!(
            list_ids(&client, method, field, id_key).await,
            first,
            "{method}"
        );
    }

    for (header, value) in [
        ("mcp-session-id", "conformance-stale-session-id"),
        ("last-event-id", "1"),
    ] {
        let reply = Client::send(
            client
                .post(json!(header), "tools/list", json!({}), json!({}))
                .header(header, value),
        )
        .await;
        assert!(reply.headers.get(SESSION_ID).is_none(), "{header}");
        assert!(reply.result()["tools"].is_array(), "{header}");
    }

    // Dual-era: a legacy initialize (no version header, no _meta) opens a session.
    let probe = Client::send(
        client
            .http()
            .post(client.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc": "2.0", "id": 90001, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "conformance-era-probe", "version": "1.0.0"}}})
                .to_string(),
            ),
    )
    .await;
    assert_eq!(probe.result()["protocolVersion"], "2025-11-25");
    server.shutdown().await;
}

/// The extensions the upstream scenario's client declares (`CLIENT_EXTENSIONS`).
fn client_extensions() -> Value {
    json!({
        "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]},
        "com.example/conformance": {"nested": {"enabled": false, "limit": 0}, "values": ["a", 2, null]},
        "com.example/empty": {},
    })
}

/// The `result` of a 2025 request of `session`, answered as JSON or on an SSE stream.
async fn session_result(session: &Legacy, body: Value) -> Value {
    let id = body["id"].clone();
    let all = messages(session.post(body).send().await.unwrap()).await;
    response_to(&all, &id)["result"].clone()
}

/// Scenario `server-legacy-extensions` (server/legacy-extensions.ts at 415be526 with
/// legacy-extensions.ts at 9c138c2a), on 2025-11-25: `legacy-extensions-server-handshake`,
/// `legacy-extensions-server-advertisement-{ui,conformance,empty}` (the `initialize` result's
/// `capabilities.extensions` is exactly the scenario's server extensions, without the Tasks
/// extension) and `legacy-extensions-server-reception-{ui,conformance,empty}`
/// (`test_legacy_extension_capabilities` reports the client's extensions as its session holds
/// them). The 2026 `server/discover` still declares the Tasks extension alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_extensions_are_declared_and_the_clients_are_reported() {
    let server = start(settings()).await;
    let (session, init) = open_session_at(
        &server,
        "2025-11-25",
        json!({"extensions": client_extensions()}),
    )
    .await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(
        init["capabilities"]["extensions"],
        json!({
            "io.modelcontextprotocol/ui": {},
            "com.example/conformance": {"nested": {"enabled": true, "limit": 3}, "values": [null, "b", 4]},
            "com.example/empty": {},
        })
    );
    assert_eq!(
        init["capabilities"]["extensions"],
        Value::Object(session_extensions())
    );
    let result = session_result(
        &session,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "test_legacy_extension_capabilities", "arguments": {}}}),
    )
    .await;
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    let reported: Value = serde_json::from_str(text).expect("JSON text");
    assert_eq!(reported, json!({"extensions": client_extensions()}));

    // A session whose client declared none: `{}`.
    let (plain, _) = open_session_at(&server, "2025-06-18", json!({})).await;
    let result = session_result(
        &plain,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "test_legacy_extension_capabilities", "arguments": {}}}),
    )
    .await;
    assert_eq!(result["content"][0]["text"], r#"{"extensions":{}}"#);

    let client = Client::of(&server);
    let discover = client
        .request("server/discover", json!({}), json!({}))
        .await;
    let discovered = discover.result()["capabilities"]["extensions"].clone();
    assert_eq!(discovered[TASKS], json!({}), "{discovered}");
    for id in session_extensions().keys() {
        assert!(discovered.get(id).is_none(), "{id}: {discovered}");
    }
    server.shutdown().await;
}

/// `ServerBuilder::session_extensions` drops the Tasks extension (SEP-2663 negotiates it on
/// 2026-07-28 only) and keeps the rest as given; without it a 2025 `initialize` result has no
/// `extensions` member.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_extensions_never_declare_the_tasks_extension() {
    let declared = json!({TASKS: {}, "com.example/kept": {"n": 1}});
    for (extensions, expected) in [
        (declared, json!({"com.example/kept": {"n": 1}})),
        (json!({TASKS: {}}), Value::Null),
    ] {
        let server = tasks_http::ServerBuilder::new("extensions", "1")
            .session_extensions(extensions.as_object().unwrap().clone())
            .bind("127.0.0.1:0")
            .await
            .unwrap();
        let (_, init) = initialize_result(&server).await;
        assert_eq!(init["capabilities"]["extensions"], expected, "{init}");
        assert!(init["capabilities"]["tasks"].is_object(), "{init}");
        server.shutdown().await;
    }
}

/// A 2025-11-25 `initialize` of a server that is not the fixture: its result.
async fn initialize_result(server: &tasks_http::RunningServer) -> (u16, Value) {
    let reply = Client::send(
        reqwest::Client::new()
            .post(server.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "e2e", "version": "1"}}})
                .to_string(),
            ),
    )
    .await;
    (reply.status, reply.result())
}
