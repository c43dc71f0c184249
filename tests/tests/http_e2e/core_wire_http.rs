//! End-to-end tests over loopback HTTP of the fixture's core 2026-07-28 tools, each with the
//! runner scenario it serves: the tool listing order (`tools-list`, `http-header-validation`),
//! progress over SSE
//! (`tools-call-with-progress`), `Mcp-Param-Region` validation
//! (`http-custom-header-server-validation`), the MRTR multi-round and capability flows
//! (`input-required-result-*`), `test_missing_capability` and `test_trigger_tool_change` on a
//! `subscriptions/listen` stream (`server-stateless`).

use serde_json::{json, Value};
use tasks_test_support::client::*;
use tasks_test_support::events::wait_status;
use tasks_test_support::fixture::*;
use tasks_test_support::protocol::*;
use tasks_test_support::sse::Sse;
use tasks_test_support::wait::WAIT_LIMIT;

const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";

/// The runner's default client capabilities.
fn runner_caps() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}})
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// A correct POST of `method` whose `_meta` carries `caps` plus the entries of `extra`
/// (e.g. a `progressToken`).
fn post_with_meta(
    client: &Client,
    id: Value,
    method: &str,
    params: Value,
    caps: Value,
    extra: Value,
) -> reqwest::RequestBuilder {
    let mut meta = json!({PROTOCOL_VERSION_KEY: VERSION, CAPABILITIES_KEY: caps.clone()});
    let meta_object = meta.as_object_mut().unwrap();
    for (key, value) in extra.as_object().unwrap() {
        meta_object.insert(key.clone(), value.clone());
    }
    let mut full = params.as_object().cloned().unwrap_or_default();
    full.insert("_meta".into(), meta);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": full});
    // `post` sets the routing headers; the body is replaced by the one with our `_meta`.
    client
        .post(id, method, params, caps)
        .body(serde_json::to_vec(&body).unwrap())
}

/// Reads a whole `text/event-stream` response (it must end) and returns its `data:` messages,
/// checking that every other line is blank.
async fn sse_messages(response: reqwest::Response) -> Vec<Value> {
    assert_eq!(response.status(), 200);
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let text = tokio::time::timeout(WAIT_LIMIT, response.text())
        .await
        .expect("the SSE response ends within the wait limit")
        .expect("a complete body");
    let mut messages = Vec::new();
    for line in text.lines() {
        match line.strip_prefix("data: ") {
            Some(data) => messages.push(serde_json::from_str(data).expect("one JSON message")),
            None => assert!(line.is_empty(), "unexpected SSE line {line:?} in {text}"),
        }
    }
    messages
}

/// `tools/call` of `tool` with `{}` arguments and `caps`.
async fn call(client: &Client, tool: &str, params: Value, caps: Value) -> Reply {
    let mut params = params;
    let object = params.as_object_mut().unwrap();
    object.insert("name".into(), json!(tool));
    object.entry("arguments").or_insert_with(|| json!({}));
    client.request("tools/call", params, caps).await
}

// ---------------------------------------------------------------------------------------------
// The fixture's tool list.
// ---------------------------------------------------------------------------------------------

/// The fixture's `tools/list` names, in listing order: the harmless probe first, then the
/// Tasks tools, the base-wire tools and the MRTR tools. (`tasks-tests` has no `insta`
/// dependency, so the listing is compared with this inline copy.)
const FIXTURE_TOOLS: &[&str] = &[
    "a_header_probe",
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
    "resumable_job",
    "write_haiku",
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "test_tool_with_progress",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_trigger_tool_change",
    "json_schema_2020_12_tool",
    "test_custom_header",
    "word_stats",
    "test_tool_slow",
    "test_tool_fast",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
    "test_tool_with_logging",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_legacy_extension_capabilities",
    "test_trigger_prompt_change",
    "test_update_watched_resource",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_tools_are_listed_in_a_fixed_order_with_the_probe_first() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let mut listings = Vec::new();
    for _ in 0..3 {
        let result = client
            .request("tools/list", json!({}), json!({}))
            .await
            .result();
        let names: Vec<String> = result["tools"]
            .as_array()
            .expect("a tools array")
            .iter()
            .map(|tool| {
                assert!(tool["description"].is_string(), "{tool}");
                assert!(tool["inputSchema"].is_object(), "{tool}");
                tool["name"].as_str().unwrap().to_owned()
            })
            .collect();
        listings.push(names);
    }
    assert_eq!(listings[0], FIXTURE_TOOLS);
    assert_eq!(listings[0][0], "a_header_probe");
    assert!(listings.iter().all(|names| *names == listings[0]));
    server.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// Structured output: `outputSchema` and `structuredContent` (MCP 2026-07-28 tools, "Output
// Schema").
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_content_conforms_to_the_listed_output_schema_at_once_and_as_a_task() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let tools = client
        .request("tools/list", json!({}), json!({}))
        .await
        .result();
    let listed = tools["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .find(|tool| tool["name"] == "word_stats")
        .expect("word_stats is listed")
        .clone();
    assert_eq!(listed["title"], "Word statistics");
    let schema = &listed["outputSchema"];
    assert_eq!(schema["type"], "object", "{schema}");
    assert_eq!(schema["description"], "The counts of a text.", "{schema}");
    assert_eq!(
        schema["required"],
        json!(["words", "characters", "lines"]),
        "{schema}"
    );
    let validator = jsonschema::validator_for(schema).expect("a valid JSON Schema");
    let text = "two lines\nof text";
    let expected = json!({"words": 4, "characters": 17, "lines": 2});

    // At once (no Tasks declared).
    let now = client
        .request(
            "tools/call",
            json!({"name": "word_stats", "arguments": {"text": text}}),
            json!({}),
        )
        .await
        .result();
    assert_eq!(now["resultType"], "complete", "{now}");
    assert_eq!(now["structuredContent"], expected);
    assert!(validator.is_valid(&now["structuredContent"]), "{now}");
    // The text copy for clients that read only `content`.
    let copy: Value = serde_json::from_str(text_of(&now)).expect("JSON text");
    assert_eq!(copy, expected);

    // As a task: the stored result has the same shape.
    let created = client
        .create_task("word_stats", json!({"text": text}))
        .await;
    let task_id = created["taskId"].as_str().expect("a taskId");
    let done = client.poll_until_terminal(task_id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"], expected);
    assert!(validator.is_valid(&done["result"]["structuredContent"]));
    assert_eq!(done["result"]["content"], now["content"]);
    server.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// tools-call-with-progress.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_progress_tool_streams_three_notifications_then_the_result() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let response = post_with_meta(
        &client,
        json!(21),
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {}}),
        runner_caps(),
        json!({"progressToken": "progress-test-1"}),
    )
    .send()
    .await
    .unwrap();
    let messages = sse_messages(response).await;
    let progress = |value: u64, step: u64| {
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": "progress-test-1", "progress": value, "total": 100,
            "message": format!("Step {step} of 3")}})
    };
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(
        messages[..3],
        [progress(0, 1), progress(50, 2), progress(100, 3)]
    );
    let last = &messages[3];
    assert_eq!(last["id"], 21, "{last}");
    assert_eq!(last["result"]["resultType"], "complete", "{last}");
    assert_eq!(text_of(&last["result"]), "Progress test completed");
    assert_eq!(
        last["result"]["_meta"][SERVER_INFO]["name"],
        "tasks-fixture"
    );

    // Without a token: one JSON answer.
    let reply = call(&client, "test_tool_with_progress", json!({}), runner_caps()).await;
    assert_eq!(reply.content_type(), Some("application/json"));
    assert_eq!(text_of(&reply.result()), "Progress test completed");
    server.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// http-custom-header-server-validation.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_custom_header_validation() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let post = |id: i64, region: &str| {
        client.post(
            json!(id),
            "tools/call",
            json!({"name": "test_custom_header", "arguments": {"region": region}}),
            runner_caps(),
        )
    };
    // Accepted: the runner's table, plus surrounding whitespace and base64 of non-ASCII.
    for (id, (region, header)) in [
        ("Hello", "=?base64?SGVsbG8=?="),
        ("SGVsbG8=", "SGVsbG8="),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),
        ("test-value", "test-value"),
        ("eu-west-1", "  eu-west-1 "),
        ("\u{e9}t\u{e9}", "=?base64?w6l0w6k=?="),
    ]
    .into_iter()
    .enumerate()
    {
        let id = i64::try_from(id).unwrap();
        let reply = Client::send(post(id, region).header("Mcp-Param-Region", header)).await;
        assert_eq!(reply.body["id"], id);
        assert_eq!(
            text_of(&reply.result()),
            format!("Region: {region}"),
            "{region} {header}"
        );
    }

    let missing = "Missing Mcp-Param header for an x-mcp-header argument";
    let invalid = "Invalid Mcp-Param header value";
    let mismatch = "Mcp-Param header does not match the tool arguments";
    let repeated = "Mcp-Param header is repeated";
    let rejected: Vec<(&str, reqwest::RequestBuilder, &str)> = vec![
        (
            "Hello",
            post(100, "Hello").header("Mcp-Param-Region", "=?base64?SGVsbG8?="),
            invalid,
        ),
        (
            "Hello",
            post(101, "Hello").header("Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="),
            invalid,
        ),
        ("test-value", post(102, "test-value"), missing),
        (
            "eu-west-1",
            post(103, "eu-west-1").header("Mcp-Param-Region", "us-east-1"),
            mismatch,
        ),
        (
            "eu-west-1",
            post(104, "eu-west-1")
                .header("Mcp-Param-Region", "eu-west-1")
                .header("Mcp-Param-Region", "eu-west-1"),
            repeated,
        ),
        (
            "\u{e9}",
            post(105, "\u{e9}").header(
                "Mcp-Param-Region",
                reqwest::header::HeaderValue::from_bytes("\u{e9}".as_bytes()).unwrap(),
            ),
            invalid,
        ),
    ];
    for (region, request, message) in rejected {
        let reply = Client::send(request).await;
        let error = reply.error(400, -32020, message);
        assert!(
            reply.body["id"].is_i64(),
            "the id is echoed: {}",
            reply.body
        );
        assert!(error.get("data").is_none(), "{error}");
        let text = reply.body.to_string();
        for secret in [region, "us-east-1", "SGVs"] {
            assert!(!text.contains(secret), "{secret} echoed in {text}");
        }
    }
    server.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// input-required-result-* (MRTR) and the missing-capability diagnostic.
// ---------------------------------------------------------------------------------------------

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_multi_round_mrtr_flow() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let tool = "test_input_required_result_multi_round";

    let round1 = call(&client, tool, json!({}), runner_caps()).await.result();
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    assert_eq!(keys(&round1["inputRequests"]), ["name"], "{round1}");
    assert_eq!(
        round1["inputRequests"]["name"],
        json!({"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                                "required": ["name"]}}})
    );
    let state1 = round1["requestState"].as_str().expect("a requestState");

    let round2 = call(
        &client,
        tool,
        json!({"inputResponses": {"name": {"action": "accept", "content": {"name": "Alice"}}},
               "requestState": state1}),
        runner_caps(),
    )
    .await
    .result();
    assert_eq!(round2["resultType"], "input_required", "{round2}");
    assert_eq!(keys(&round2["inputRequests"]), ["color"], "{round2}");
    assert_eq!(
        round2["inputRequests"]["color"]["params"]["message"],
        "What is your favourite color?"
    );
    let state2 = round2["requestState"].as_str().expect("a requestState");
    assert_ne!(state1, state2);

    // Round 3 answers only `color`: `name` travels in the signed state.
    let round3 = call(
        &client,
        tool,
        json!({"inputResponses": {"color": {"action": "accept", "content": {"color": "blue"}}},
               "requestState": state2}),
        runner_caps(),
    )
    .await
    .result();
    assert_eq!(round3["resultType"], "complete", "{round3}");
    assert_eq!(text_of(&round3), "Alice likes blue");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_capabilities_tool_asks_only_with_declared_capabilities() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let tool = "test_input_required_result_capabilities";

    let first = call(&client, tool, json!({}), json!({"sampling": {}}))
        .await
        .result();
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert_eq!(keys(&first["inputRequests"]), ["model_reply"], "{first}");
    assert_eq!(
        first["inputRequests"]["model_reply"]["method"],
        "sampling/createMessage"
    );
    assert!(!first.to_string().contains("elicitation/create"), "{first}");

    let done = call(
        &client,
        tool,
        json!({"inputResponses": {"model_reply": {"role": "assistant",
                   "content": {"type": "text", "text": "hi"},
                   "model": "test-model", "stopReason": "endTurn"}},
               "requestState": first["requestState"]}),
        json!({"sampling": {}}),
    )
    .await
    .result();
    assert_eq!(text_of(&done), "Sampled: hi", "{done}");

    // With elicitation declared, it elicits instead.
    let elicit = call(&client, tool, json!({}), runner_caps()).await.result();
    assert_eq!(keys(&elicit["inputRequests"]), ["user_name"], "{elicit}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_missing_capability_is_32021_with_http_400() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let reply = call(&client, "test_missing_capability", json!({}), json!({})).await;
    let error = reply.error(400, -32021, "Missing required client capability");
    assert_eq!(
        error["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );

    // Declared: it asks the model instead.
    let result = call(
        &client,
        "test_missing_capability",
        json!({}),
        json!({"sampling": {}}),
    )
    .await
    .result();
    assert_eq!(result["resultType"], "input_required", "{result}");
    assert_eq!(keys(&result["inputRequests"]), ["model_reply"]);
    server.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// test_trigger_tool_change on subscriptions/listen.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_tool_change_reaches_only_listen_streams_that_asked() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let discover = client
        .request("server/discover", json!({}), json!({}))
        .await
        .result();
    assert_eq!(
        discover["capabilities"]["tools"],
        json!({"listChanged": true})
    );

    // A prompts-only listen that also follows a task parked in input_required, to observe
    // what reaches it.
    let mut events = server.dispatcher().runtime().subscribe();
    let task = client
        .create_task("confirm_delete", json!({"filename": "a.txt"}))
        .await;
    let task_id = task["taskId"].as_str().unwrap().to_owned();
    wait_status(&mut events, &task_id, tasks_core::TaskStatus::InputRequired).await;
    let prompts = client
        .post(
            json!("prompts-only"),
            "subscriptions/listen",
            json!({"notifications": {"promptsListChanged": true, "taskIds": [task_id]}}),
            tasks_caps(),
        )
        .send()
        .await
        .unwrap();
    let mut prompts = Sse::of(prompts);
    assert_eq!(
        prompts.next().await["params"]["notifications"],
        json!({"promptsListChanged": true, "taskIds": [task_id]})
    );

    let tools = client
        .post(
            json!(1_234_567),
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
            json!({}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(tools.status(), 200);
    let mut tools = Sse::of(tools);
    assert_eq!(
        tools.next().await,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"_meta": {SUBSCRIPTION_ID: 1_234_567},
                          "notifications": {"toolsListChanged": true}}})
    );

    // Both listen streams follow announcements (each takes only its own lists).
    let result = call(&client, "test_trigger_tool_change", json!({}), json!({}))
        .await
        .result();
    assert_eq!(text_of(&result), "Announced to 2 open streams");
    assert_eq!(
        tools.next().await,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
               "params": {"_meta": {SUBSCRIPTION_ID: 1_234_567}}})
    );

    // The prompts-only stream's next message is its task's change, not the tool-list change.
    client
        .update_task(
            &task_id,
            json!({"confirm-delete": {"action": "accept", "content": {"confirm": false}}}),
        )
        .await;
    let next = prompts.next().await;
    assert_eq!(next["method"], "notifications/tasks", "{next}");
    assert_eq!(next["params"]["_meta"][SUBSCRIPTION_ID], "prompts-only");

    // A prompt-list change reaches the prompts stream only (both streams stay open).
    let result = call(&client, "test_trigger_prompt_change", json!({}), json!({}))
        .await
        .result();
    assert_eq!(text_of(&result), "Announced to 2 open streams");
    // Past the task's later states (it completes once answered).
    let mut next = prompts.next().await;
    while next["method"] == "notifications/tasks" {
        next = prompts.next().await;
    }
    assert_eq!(
        next,
        json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed",
               "params": {"_meta": {SUBSCRIPTION_ID: "prompts-only"}}})
    );
    call(&client, "test_trigger_tool_change", json!({}), json!({}))
        .await
        .result();
    assert_eq!(
        tools.next().await["method"],
        "notifications/tools/list_changed"
    );
    drop(prompts);
    drop(tools);
    server.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// Resources over HTTP: a subscription on a listen stream, and an unknown URI.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_resources_update_subscribed_listen_streams_and_refuse_unknown_uris() {
    let server = start(settings()).await;
    let client = Client::of(&server);
    let watched = client
        .post(
            json!("watch"),
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": ["test://watched-resource"]}}),
            json!({}),
        )
        .send()
        .await
        .unwrap();
    let mut watched = Sse::of(watched);
    assert_eq!(
        watched.next().await["params"]["notifications"],
        json!({"resourceSubscriptions": ["test://watched-resource"]})
    );
    let result = call(
        &client,
        "test_update_watched_resource",
        json!({}),
        json!({}),
    )
    .await
    .result();
    assert_eq!(text_of(&result), "Announced to 1 open streams");
    assert_eq!(
        watched.next().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": "test://watched-resource", "_meta": {SUBSCRIPTION_ID: "watch"}}})
    );
    let read = client
        .request(
            "resources/read",
            json!({"uri": "test://template/42/data"}),
            json!({}),
        )
        .await
        .result();
    assert_eq!(
        serde_json::from_str::<Value>(read["contents"][0]["text"].as_str().unwrap()).unwrap(),
        json!({"id": "42", "templateTest": true, "data": "Data for ID: 42"})
    );
    drop(watched);
    server.shutdown().await;
}
