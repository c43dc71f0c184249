//! Hostile and sloppy clients over real loopback HTTP against the fixture: malformed requests
//! keep the server up and stored tasks intact, header hygiene including what hyper refuses
//! before our code and what response headers may carry, oversized task input and results, and
//! scope isolation by bearer token on every task method and on the `subscriptions/listen`
//! filter. Choices are described in `docs/hardening.md`, under the same headings (Malformed
//! requests, Headers, Oversized work, Scopes).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Value};
use tasks_core::TaskStatus;
use tasks_fixture::Settings;
use tasks_test_support::client::*;
use tasks_test_support::events::wait_status;
use tasks_test_support::fixture::*;
use tasks_test_support::protocol::*;
use tasks_test_support::raw::raw_exchange;
use tasks_test_support::sse::Sse;

fn b64(text: impl AsRef<[u8]>) -> String {
    format!("=?base64?{}?=", STANDARD.encode(text))
}

fn text_of(task: &Value) -> &str {
    task["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// The response header names every JSON answer may carry: none is built from client input.
const JSON_HEADERS: [&str; 3] = ["content-length", "content-type", "date"];

fn header_names(reply: &Reply) -> Vec<String> {
    let mut names: Vec<String> = reply.headers.keys().map(|k| k.to_string()).collect();
    names.sort();
    names
}

/// A POST with the correct headers of `method` (and `Mcp-Name`) and this raw body.
async fn send_raw(client: &Client, method: &str, name: Option<&str>, body: Vec<u8>) -> Reply {
    let mut request = client
        .http()
        .post(client.url())
        .header("content-type", "application/json")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", method)
        .body(body);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    Client::send(request).await
}

/// A correct message of `method` with `params` (the `_meta` declares Tasks), as JSON.
fn message(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": tasks_caps(),
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A raw request and its expected error: `Mcp-Method`, `Mcp-Name`, body, HTTP status, code,
/// message, and whether the id is echoed.
type RawCase<'a> = (&'a str, Option<&'a str>, Vec<u8>, u16, i64, &'a str, bool);

/// Reads three tasks and the stored count.
async fn snapshot(server: &tasks_http::RunningServer, client: &Client, ids: &[&str]) -> Vec<Value> {
    let mut views = vec![json!(server
        .dispatcher()
        .runtime()
        .stored_tasks()
        .await
        .unwrap())];
    for id in ids {
        views.push(client.get_task(id).await);
    }
    views
}

/// Malformed requests over HTTP: each gets its status and code as JSON, the server stays up,
/// and the stored tasks (completed, parked, working) read exactly as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_keep_the_server_up_and_stored_tasks_intact() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let mut events = server.dispatcher().runtime().subscribe();
    // A second receiver: waiting for `done` on `events` drops the events before it, and the
    // parked task's may be among them (then the second wait timed out, about one run in 40).
    let mut events_too = server.dispatcher().runtime().subscribe();
    let done = client
        .create_task("slow_compute", json!({"seconds": 0, "label": "kept"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let parked = client
        .create_task("confirm_delete", json!({"filename": "kept.txt"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let working = client
        .create_task("slow_compute", json!({"seconds": 60, "label": "kept"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_status(&mut events, &done, TaskStatus::Completed).await;
    wait_status(&mut events_too, &parked, TaskStatus::InputRequired).await;
    let ids = [done.as_str(), parked.as_str(), working.as_str()];
    let before = snapshot(&server, &client, &ids).await;
    assert_eq!(before[0], 3);

    let cancel = message(json!(1), "tasks/cancel", json!({"taskId": working}));
    let answer = json!({"confirm-delete": {"action": "accept", "content": {"confirm": true}}});
    let with = |mut m: Value, pointer: &str, value: Value| {
        *m.pointer_mut(pointer).expect("a member") = value;
        m
    };
    let json_body = |m: &Value| serde_json::to_vec(m).unwrap();
    let update = |responses: Value| {
        json_body(&message(
            json!(1),
            "tasks/update",
            json!({"taskId": parked, "inputResponses": responses}),
        ))
    };
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut invalid_utf8 = json_body(&cancel);
    let at = invalid_utf8
        .windows(6)
        .position(|w| w == b"taskId")
        .unwrap();
    invalid_utf8.splice(at..at + 6, *b"\xff\xfeskId");

    let cases: Vec<RawCase<'_>> = vec![
        (
            "tasks/cancel",
            Some(&working),
            b"{\"jsonrpc\":".to_vec(),
            400,
            -32700,
            "Parse error",
            false,
        ),
        (
            "tasks/cancel",
            Some(&working),
            invalid_utf8,
            400,
            -32700,
            "Parse error",
            false,
        ),
        (
            "tasks/cancel",
            Some(&working),
            deep.into_bytes(),
            400,
            -32700,
            "Parse error",
            false,
        ),
        (
            "tasks/cancel",
            Some(&working),
            json_body(&json!([cancel])),
            400,
            -32600,
            "Batch requests are not supported: send one message per POST",
            false,
        ),
        (
            "tasks/cancel",
            Some(&working),
            json_body(&with(cancel.clone(), "/params", json!("x"))),
            400,
            -32602,
            "params must be an object",
            true,
        ),
        (
            "tasks/cancel",
            Some(&working),
            json_body(&json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel"})),
            400,
            -32602,
            "params._meta is required",
            true,
        ),
        (
            "tasks/cancel",
            Some(&working),
            json_body(&with(
                cancel.clone(),
                "/params/_meta",
                json!({"io.modelcontextprotocol/clientCapabilities": tasks_caps()}),
            )),
            400,
            -32602,
            "params._meta is missing io.modelcontextprotocol/protocolVersion",
            true,
        ),
        (
            "tasks/cancel",
            Some(&working),
            json_body(&with(
                cancel.clone(),
                "/params/_meta",
                json!({"io.modelcontextprotocol/protocolVersion": VERSION}),
            )),
            400,
            -32602,
            "params._meta is missing io.modelcontextprotocol/clientCapabilities",
            true,
        ),
        (
            "tasks/delete",
            Some(&working),
            json_body(&with(cancel.clone(), "/method", json!("tasks/delete"))),
            404,
            -32601,
            "Method not found",
            true,
        ),
        (
            "tasks/cancel",
            Some("42"),
            json_body(&with(cancel.clone(), "/params/taskId", json!(42))),
            400,
            -32602,
            "A non-empty taskId is required",
            true,
        ),
        (
            "tasks/update",
            Some(&parked),
            update(json!([])),
            400,
            -32602,
            "tasks/update requires an inputResponses object",
            true,
        ),
        (
            "tasks/update",
            Some(&parked),
            update(json!("confirm-delete")),
            400,
            -32602,
            "tasks/update requires an inputResponses object",
            true,
        ),
        (
            "tasks/update",
            Some(&parked),
            update(
                json!({"": answer["confirm-delete"], "confirm-delete": answer["confirm-delete"]}),
            ),
            400,
            -32602,
            "inputResponses is invalid",
            true,
        ),
    ];
    for (i, (method, name, body, status, code, text, echoed)) in cases.into_iter().enumerate() {
        let reply = send_raw(&client, method, name, body).await;
        assert_eq!(reply.content_type(), Some("application/json"), "case {i}");
        assert_eq!(
            (
                reply.status,
                reply.body["error"]["code"].as_i64(),
                reply.body["error"]["message"].as_str()
            ),
            (status, Some(code), Some(text)),
            "case {i}: {}",
            reply.body
        );
        assert_eq!(reply.body.get("id").is_some(), echoed, "case {i}");
        assert_eq!(header_names(&reply), JSON_HEADERS, "case {i}");
    }

    // An unsupported version: -32022 with the supported list.
    let reply = Client::send_replacing(
        client
            .post(
                json!("v"),
                "tasks/cancel",
                json!({"taskId": working}),
                tasks_caps(),
            )
            .body(json_body(&with(
                with(cancel.clone(), "/id", json!("v")),
                "/params/_meta/io.modelcontextprotocol~1protocolVersion",
                json!("2099-01-01"),
            ))),
        &[("mcp-protocol-version", "2099-01-01")],
    )
    .await;
    let error = reply.error(400, -32022, "Unsupported protocol version");
    assert_eq!(
        error["data"],
        json!({"supported": [VERSION], "requested": "2099-01-01"})
    );
    // A body over the size limit (1 MiB by default).
    let reply = send_raw(
        &client,
        "tasks/cancel",
        Some(&working),
        vec![b' '; 1_048_577],
    )
    .await;
    reply.error(413, -32600, "Request body is larger than 1048576 bytes");
    // Notifications are acknowledged with 202 and never acted upon.
    for (method, params) in [
        ("tasks/cancel", json!({"taskId": working})),
        (
            "tasks/update",
            json!({"taskId": parked, "inputResponses": answer}),
        ),
    ] {
        let mut notification = message(Value::Null, method, params);
        notification.as_object_mut().unwrap().remove("id");
        let id = if method == "tasks/cancel" {
            &working
        } else {
            &parked
        };
        let reply = send_raw(&client, method, Some(id), json_body(&notification)).await;
        assert_eq!((reply.status, &reply.body), (202, &Value::Null));
    }

    assert_eq!(
        snapshot(&server, &client, &ids).await,
        before,
        "nothing stored changed"
    );
    // Still serving: the parked task takes its answer and the working one cancels.
    client.update_task(&parked, answer).await;
    wait_status(&mut events, &parked, TaskStatus::Completed).await;
    client.cancel_task(&working).await;
    let after = snapshot(&server, &client, &ids).await;
    assert_eq!(after[1], before[1]);
    assert_eq!(text_of(&after[2]), "Delete confirmed: true");
    assert_eq!(after[3]["status"], "cancelled");
    server.shutdown().await;
}

/// Headers over HTTP: what hyper refuses before the dispatcher, what reaches it, repeated
/// `Mcp-Name` lines, and response headers that never carry client input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_hygiene_over_http() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let t = client
        .create_task("slow_compute", json!({"seconds": 60, "label": "hdr"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let get = || client.post(json!("h"), "tasks/get", json!({"taskId": t}), tasks_caps());

    // The base64 form, and surrounding blanks, are accepted like the plain value.
    for good in [b64(&t), format!(" \t{t}\t "), format!("\t{}  ", b64(&t))] {
        let reply = Client::send_replacing(get(), &[("mcp-name", &good)]).await;
        assert_eq!(reply.result()["taskId"], t, "{good:?}");
        assert_eq!(header_names(&reply), JSON_HEADERS);
    }
    for bad in ["=?base64??=", "=?base64?***?=", "=?base64?wyg=?="] {
        Client::send_replacing(get(), &[("mcp-name", bad)])
            .await
            .error(400, -32020, "Invalid Mcp-Name header value");
    }
    // Non-ASCII bytes (obs-text) pass hyper and are refused by the header rules.
    let (http, request) = get().build_split();
    let mut request = request.unwrap();
    request.headers_mut().insert(
        "mcp-name",
        reqwest::header::HeaderValue::from_bytes("t\u{e2}che".as_bytes()).unwrap(),
    );
    let reply = client_execute(&http, request).await;
    reply.error(400, -32020, "Invalid Mcp-Name header value");
    // Two Mcp-Name lines, even equal ones, are -32020.
    let (http, request) = get().build_split();
    let mut request = request.unwrap();
    request.headers_mut().append(
        "mcp-name",
        reqwest::header::HeaderValue::from_str(&t).unwrap(),
    );
    assert_eq!(request.headers().get_all("mcp-name").iter().count(), 2);
    client_execute(&http, request)
        .await
        .error(400, -32020, "Mcp-Name header is repeated");

    // Control bytes never reach the dispatcher: hyper answers a bare 400 and closes.
    let body =
        serde_json::to_string(&message(json!(1), "tasks/get", json!({"taskId": t}))).unwrap();
    let addr = server.local_addr();
    for bad_header in [
        &b"Mcp-Name: a\x01b"[..],
        b"Mcp-Name: a\x00b",
        b"Mcp-Name: a\x7fb",
        b"Mcp-Name: a\rb",
        b"Mcp-Name : spaced",
        b"Mcp-Name\x01: x",
    ] {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             MCP-Protocol-Version: {VERSION}\r\nMcp-Method: tasks/get\r\nConnection: close\r\n\
             Content-Length: {}\r\n",
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(bad_header);
        request.extend_from_slice(b"\r\n\r\n");
        request.extend_from_slice(body.as_bytes());
        let response = raw_exchange(addr, &request).await;
        let head = response.split("\r\n\r\n").next().unwrap_or_default();
        assert!(
            head.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{bad_header:?}: {response:?}"
        );
        assert!(
            !response.contains("jsonrpc"),
            "{bad_header:?}: {response:?}"
        );
    }
    // The same raw request with a clean Mcp-Name is served (so the 400s above are the bytes).
    let good = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         MCP-Protocol-Version: {VERSION}\r\nMcp-Method: tasks/get\r\nConnection: close\r\n\
         Content-Length: {}\r\nMcp-Name: {t}\r\n\r\n{body}",
        body.len()
    );
    let response = raw_exchange(addr, good.as_bytes()).await;
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response:?}");
    assert!(response.contains(r#""status":"working""#), "{response:?}");
    // An obs-folded continuation line is refused the same way.
    let folded = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Name: {t}\r\n continued\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let response = raw_exchange(addr, folded.as_bytes()).await;
    assert!(
        response.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{response:?}"
    );

    // Error responses carry the fixed headers only, whatever the client sent.
    let injected = "x\r\nSet-Cookie: pwned=1";
    let request = message(json!("i"), "tasks/get", json!({"taskId": injected}));
    let reply = send_raw(
        &client,
        "tasks/get",
        Some(&b64(injected)),
        serde_json::to_vec(&request).unwrap(),
    )
    .await;
    reply.error(400, -32602, "Unknown or inaccessible taskId");
    assert_eq!(header_names(&reply), JSON_HEADERS);
    assert!(!reply.body.to_string().contains("pwned"));

    // The server is still up and T untouched.
    assert_eq!(client.get_task(&t).await["status"], "working");
    client.cancel_task(&t).await;
    server.shutdown().await;
}

async fn client_execute(http: &reqwest::Client, request: reqwest::Request) -> Reply {
    let response = http.execute(request).await.expect("the server answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.json().await.expect("a JSON body");
    Reply {
        status,
        headers,
        body,
    }
}

/// Oversized work: task input over 262 144 bytes is refused and stores nothing; a 200 000-character
/// result is returned whole by every `tasks/get`; a result over `--max-result-bytes` fails the
/// task with -32603 instead of being truncated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_task_input_and_results() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let runtime = server.dispatcher().runtime();
    let mut events = runtime.subscribe();

    let huge = "h".repeat(300_000);
    let reply = client
        .request(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0, "label": huge}}),
            tasks_caps(),
        )
        .await;
    reply.error(400, -32602, "Task input is larger than 262144 bytes");
    assert!(!reply.body.to_string().contains("hhhh"));
    assert_eq!(runtime.stored_tasks().await.unwrap(), 0, "nothing created");
    assert!(events.try_recv().is_err(), "nothing published");

    let label: String = (0..200_000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let id = client
        .create_task("slow_compute", json!({"seconds": 0, "label": label}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_status(&mut events, &id, TaskStatus::Completed).await;
    let expected = format!("Completed {label}");
    for _ in 0..5 {
        let task = client.get_task(&id).await;
        assert_eq!(task["status"], "completed");
        assert_eq!(text_of(&task).len(), expected.len());
        assert!(text_of(&task) == expected, "the full text, untruncated");
    }
    server.shutdown().await;

    // A cap on stored results: over it the task fails, with a clear message and no result.
    let server = start(Settings {
        max_result_bytes: 100_000,
        ..settings()
    })
    .await;
    let client = Client::of(&server);
    let mut events = server.dispatcher().runtime().subscribe();
    let mut events_too = server.dispatcher().runtime().subscribe();
    let too_big = client
        .create_task(
            "slow_compute",
            json!({"seconds": 0, "label": "r".repeat(150_000)}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let fits = client
        .create_task(
            "slow_compute",
            json!({"seconds": 0, "label": "r".repeat(1_000)}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_status(&mut events, &too_big, TaskStatus::Failed).await;
    wait_status(&mut events_too, &fits, TaskStatus::Completed).await;
    let failed = client.get_task(&too_big).await;
    assert_eq!(
        failed["error"],
        json!({"code": -32603, "message": "Task result is larger than 100000 bytes"})
    );
    assert!(failed.get("result").is_none(), "{failed}");
    assert_eq!(text_of(&client.get_task(&fits).await).len(), 1_010);
    assert_eq!(server.dispatcher().runtime().busy_workers(), 0);
    server.shutdown().await;
}

/// Scopes over HTTP: with a scope per bearer token, Alice's tasks are unknown to Bob on
/// `tasks/get`, `tasks/update` and `tasks/cancel`, and silently dropped from Bob's
/// `subscriptions/listen` filter and stream; no credentials is HTTP 401.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_scopes_isolate_principals_over_http() {
    let server = start_scoped(settings()).await;
    let client = Client::of(&server);
    let mut events = server.dispatcher().runtime().subscribe();
    let as_user = |token: &str, id: Value, method: &str, params: Value| {
        client
            .post(id, method, params, tasks_caps())
            .bearer_auth(token)
    };
    let call = |token: &str, tool: &str, arguments: Value| {
        as_user(
            token,
            json!("c"),
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
    };

    // Without a bearer token: 401 before anything else.
    for request in [
        client.post(json!(1), "server/discover", json!({}), json!({})),
        client
            .post(json!(1), "server/discover", json!({}), json!({}))
            .header("authorization", "Bearer "),
        client
            .post(json!(1), "server/discover", json!({}), json!({}))
            .header("authorization", "Basic YWxpY2U6eA=="),
    ] {
        let reply = Client::send(request).await;
        reply.error(401, -32600, "Unauthorized");
        assert!(reply.body.get("id").is_none());
    }

    let parked = created_task_id(call(
        "alice",
        "confirm_delete",
        json!({"filename": "a.txt"}),
    ))
    .await;
    let working = created_task_id(call("alice", "slow_compute", json!({"seconds": 60}))).await;
    let bobs = created_task_id(call("bob", "slow_compute", json!({"seconds": 60}))).await;
    wait_status(&mut events, &parked, TaskStatus::InputRequired).await;
    let answer = json!({"confirm-delete": {"action": "accept", "content": {"confirm": true}}});

    // Bob cannot read, answer or cancel Alice's tasks: they are unknown to him.
    for id in [&parked, &working] {
        for (method, params) in [
            ("tasks/get", json!({"taskId": id})),
            (
                "tasks/update",
                json!({"taskId": id, "inputResponses": answer}),
            ),
            ("tasks/cancel", json!({"taskId": id})),
        ] {
            let reply = Client::send(as_user("bob", json!("b"), method, params)).await;
            reply.error(400, -32602, "Unknown or inaccessible taskId");
            assert_eq!(reply.body["id"], "b");
            assert!(!reply.body.to_string().contains(id.as_str()));
        }
    }
    // Nor can Alice touch Bob's.
    Client::send(as_user(
        "alice",
        json!("a"),
        "tasks/cancel",
        json!({"taskId": bobs}),
    ))
    .await
    .error(400, -32602, "Unknown or inaccessible taskId");
    let alice_get = |id: &str| as_user("alice", json!("a"), "tasks/get", json!({"taskId": id}));
    assert_eq!(
        Client::send(alice_get(&parked)).await.result()["status"],
        "input_required"
    );
    assert_eq!(
        Client::send(alice_get(&working)).await.result()["status"],
        "working"
    );

    // Bob's listen naming Alice's tasks and his own: only his is acknowledged ...
    let response = as_user(
        "bob",
        json!("bob-sub"),
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [parked, working, bobs]}}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), 200);
    let mut bob_stream = Sse::of(response);
    assert_eq!(
        bob_stream.next().await,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"_meta": {SUBSCRIPTION_ID: "bob-sub"},
                          "notifications": {"taskIds": [bobs]}}})
    );
    // ... while Alice's own listen accepts hers.
    let response = as_user(
        "alice",
        json!("alice-sub"),
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [parked, bobs]}}),
    )
    .send()
    .await
    .unwrap();
    let mut alice_stream = Sse::of(response);
    assert_eq!(
        alice_stream.next().await["params"]["notifications"],
        json!({"taskIds": [parked]})
    );

    // Alice answers and cancels hers; then Bob cancels his. Bob's stream shows only his task,
    // so Alice's changes (published first) were dropped from it.
    Client::send(as_user(
        "alice",
        json!("a"),
        "tasks/update",
        json!({"taskId": parked, "inputResponses": answer}),
    ))
    .await
    .result();
    wait_status(&mut events, &parked, TaskStatus::Completed).await;
    Client::send(as_user(
        "alice",
        json!("a"),
        "tasks/cancel",
        json!({"taskId": working}),
    ))
    .await
    .result();
    Client::send(as_user(
        "bob",
        json!("b"),
        "tasks/cancel",
        json!({"taskId": bobs}),
    ))
    .await
    .result();
    let first = bob_stream.next().await;
    assert_eq!(first["method"], "notifications/tasks");
    assert_eq!(first["params"]["taskId"], bobs, "{first}");
    assert_eq!(first["params"]["status"], "cancelled");
    assert_eq!(first["params"]["_meta"][SUBSCRIPTION_ID], "bob-sub");
    // Alice's stream saw her task through to completion.
    let mut statuses = Vec::new();
    while statuses.last().map(String::as_str) != Some("completed") {
        let message = alice_stream.next().await;
        assert_eq!(message["params"]["taskId"], parked, "{message}");
        statuses.push(message["params"]["status"].as_str().unwrap().to_owned());
    }
    assert_eq!(statuses, ["working", "completed"]);

    server.shutdown().await;
}

/// Sends a task-creating request and returns the new task's id.
async fn created_task_id(request: reqwest::RequestBuilder) -> String {
    let result = Client::send(request).await.result();
    assert_eq!(result["resultType"], "task", "{result}");
    result["taskId"].as_str().expect("a taskId").to_owned()
}
