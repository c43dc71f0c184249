//! The corpus: phases (a pair of fixtures started with the same flags) and their scenarios,
//! each a script of requests run on both sides.

use futures_util::future::BoxFuture;
use reqwest::Method;
use serde_json::{json, Value};

use crate::wire::*;

pub(crate) type Scenario = for<'a> fn(&'a mut Run) -> BoxFuture<'a, Step>;

/// A pair of fixtures started with `args`, and the scenarios run on them in order.
pub(crate) struct Phase {
    pub(crate) name: &'static str,
    pub(crate) args: &'static [&'static str],
    pub(crate) scenarios: &'static [(&'static str, Scenario)],
}

pub(crate) const PHASES: &[Phase] = &[
    Phase {
        name: "default",
        args: &[],
        scenarios: &[
            // First: the tool-change announcement counts the open listen streams.
            ("listen_tool_changes", |r| Box::pin(listen_tool_changes(r))),
            ("discover", |r| Box::pin(discover(r))),
            ("tools_list", |r| Box::pin(tools_list(r))),
            ("sync_calls", |r| Box::pin(sync_calls(r))),
            ("sync_streams", |r| Box::pin(sync_streams(r))),
            ("custom_header", |r| Box::pin(custom_header(r))),
            ("task_lifecycle", |r| Box::pin(task_lifecycle(r))),
            ("task_input", |r| Box::pin(task_input(r))),
            ("task_cancel", |r| Box::pin(task_cancel(r))),
            ("listen_tasks", |r| Box::pin(listen_tasks(r))),
            ("mrtr", |r| Box::pin(mrtr(r))),
            ("mrtr_then_task", |r| Box::pin(mrtr_then_task(r))),
            ("malformed_bodies", |r| Box::pin(malformed_bodies(r))),
            ("malformed_heads", |r| Box::pin(malformed_heads(r))),
            ("session_2025_11_25", |r| Box::pin(session_2025_11_25(r))),
            ("session_2025_tasks", |r| Box::pin(session_2025_tasks(r))),
            ("session_2025_task_input", |r| {
                Box::pin(session_2025_task_input(r))
            }),
            ("session_2025_06_18", |r| Box::pin(session_2025_06_18(r))),
            ("session_errors", |r| Box::pin(session_errors(r))),
            ("other_routes", |r| Box::pin(other_routes(r))),
        ],
    },
    Phase {
        name: "bearer-scope,cors",
        args: &["--bearer-scope", "--cors-origin", "http://app.example"],
        scenarios: &[
            ("bearer_refusals", |r| Box::pin(bearer_refusals(r))),
            ("bearer_scopes", |r| Box::pin(bearer_scopes(r))),
            ("bearer_session_tasks_list", |r| {
                Box::pin(bearer_session_tasks_list(r))
            }),
            ("cors", |r| Box::pin(cors(r))),
        ],
    },
    Phase {
        name: "max-workers=1",
        args: &["--max-workers", "1"],
        scenarios: &[("capacity", |r| Box::pin(capacity(r)))],
    },
];

async fn listen_tool_changes(r: &mut Run) -> Step {
    let listen = modern(
        json!("tools-listen"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
        &json!({}),
    );
    let mut stream = r
        .open("subscriptions/listen toolsListChanged", listen)
        .await?;
    r.next_event(&mut stream).await?;
    r.call(
        "tools/call test_trigger_tool_change",
        "test_trigger_tool_change",
        json!({}),
        &json!({}),
    )
    .await?;
    r.next_event(&mut stream).await?;
    Ok(())
}

async fn discover(r: &mut Run) -> Step {
    r.rpc(
        "server/discover, Tasks declared",
        "server/discover",
        json!({}),
        &tasks_caps(),
    )
    .await?;
    r.rpc(
        "server/discover, no capabilities",
        "server/discover",
        json!({}),
        &json!({}),
    )
    .await?;
    r.rpc(
        "server/discover, every capability",
        "server/discover",
        json!({}),
        &all_caps(),
    )
    .await?;
    Ok(())
}

async fn tools_list(r: &mut Run) -> Step {
    r.rpc("tools/list", "tools/list", json!({}), &json!({}))
        .await?;
    r.rpc(
        "tools/list, Tasks declared",
        "tools/list",
        json!({}),
        &tasks_caps(),
    )
    .await?;
    r.rpc(
        "tools/list with an unknown cursor",
        "tools/list",
        json!({"cursor": "nope"}),
        &json!({}),
    )
    .await?;
    Ok(())
}

async fn sync_calls(r: &mut Run) -> Step {
    let none = json!({});
    let runner = runner_caps();
    let tasks = tasks_caps();
    let cases: Vec<(&str, Value, &Value)> = vec![
        ("a_header_probe", json!({}), &none),
        ("a_header_probe", json!({"extra": 1}), &none),
        ("greet", json!({"name": "Ada"}), &none),
        ("greet", json!({}), &none),
        ("greet", json!({"name": 5}), &none),
        ("no_such_tool", json!({}), &none),
        ("test_simple_text", json!({}), &runner),
        ("test_image_content", json!({}), &runner),
        ("test_audio_content", json!({}), &runner),
        ("test_embedded_resource", json!({}), &runner),
        ("test_multiple_content_types", json!({}), &runner),
        ("test_error_handling", json!({}), &runner),
        ("test_missing_capability", json!({}), &none),
        ("test_streaming_elicitation", json!({}), &runner),
        (
            "json_schema_2020_12_tool",
            json!({"name": "Ada", "email": "a@example.com"}),
            &none,
        ),
        ("json_schema_2020_12_tool", json!({"name": "Ada"}), &none),
        (
            "slow_compute",
            json!({"seconds": 0, "label": "sync"}),
            &none,
        ),
        ("slow_compute", json!({"seconds": -1}), &none),
        ("confirm_delete", json!({"filename": "a.txt"}), &none),
        ("failing_job", json!({}), &none),
        ("write_haiku", json!({}), &tasks),
        ("test_tool_with_task", json!({}), &none),
    ];
    for (tool, arguments, caps) in cases {
        let label = format!("tools/call {tool} {arguments}");
        r.call(&label, tool, arguments, caps).await?;
    }
    // tools/call without arguments, and with arguments that are not an object.
    r.rpc(
        "tools/call greet without arguments",
        "tools/call",
        json!({"name": "greet"}),
        &none,
    )
    .await?;
    r.rpc(
        "tools/call greet with string arguments",
        "tools/call",
        json!({"name": "greet", "arguments": "Ada"}),
        &none,
    )
    .await?;
    Ok(())
}

async fn sync_streams(r: &mut Run) -> Step {
    let progress = |token: Value| json!({"progressToken": token});
    let log_level = |level: &str| json!({"io.modelcontextprotocol/logLevel": level});
    let cases: Vec<(&str, &str, Value)> = vec![
        (
            "progress, string token",
            "test_tool_with_progress",
            progress(json!("p-1")),
        ),
        (
            "progress, integer token",
            "test_tool_with_progress",
            progress(json!(7)),
        ),
        (
            "progress token, no progress sent",
            "greet",
            progress(json!("p-2")),
        ),
        ("logLevel info", "test_logging_tool", log_level("info")),
        (
            "logLevel error (nothing sent)",
            "test_logging_tool",
            log_level("error"),
        ),
        (
            "logLevel debug, timed logs",
            "test_tool_with_logging",
            log_level("debug"),
        ),
        (
            "logLevel not a level",
            "test_logging_tool",
            log_level("loud"),
        ),
    ];
    for (label, tool, extra_meta) in cases {
        let id = r.id();
        let req = modern(
            id,
            "tools/call",
            json!({"name": tool, "arguments": {}, "_meta": extra_meta}),
            &runner_caps(),
        );
        r.send(&format!("tools/call {tool}: {label}"), req).await?;
    }
    // Without a token: one JSON answer.
    r.call(
        "tools/call test_tool_with_progress without a token",
        "test_tool_with_progress",
        json!({}),
        &runner_caps(),
    )
    .await?;
    Ok(())
}

async fn custom_header(r: &mut Run) -> Step {
    let post = |r: &mut Run, region: &str| {
        let id = r.id();
        modern(
            id,
            "tools/call",
            json!({"name": "test_custom_header", "arguments": {"region": region}}),
            &runner_caps(),
        )
    };
    let cases: Vec<(&str, &str, Vec<&[u8]>)> = vec![
        ("plain", "eu-west-1", vec![b"eu-west-1"]),
        ("base64", "Hello", vec![b"=?base64?SGVsbG8=?="]),
        ("padded", "eu-west-1", vec![b"  eu-west-1 "]),
        ("missing", "eu-west-1", vec![]),
        ("mismatched", "eu-west-1", vec![b"us-east-1"]),
        ("repeated", "eu-west-1", vec![b"eu-west-1", b"eu-west-1"]),
        ("bad base64", "Hello", vec![b"=?base64?SGVs!!!bG8=?="]),
        ("non-ASCII", "\u{e9}", vec!["\u{e9}".as_bytes()]),
    ];
    for (label, region, headers) in cases {
        let mut req = post(r, region);
        for value in headers {
            req = req.add_header("mcp-param-region", value);
        }
        r.send(
            &format!("tools/call test_custom_header, header {label}"),
            req,
        )
        .await?;
    }
    Ok(())
}

async fn task_lifecycle(r: &mut Run) -> Step {
    let caps = tasks_caps();
    let slow = r
        .create(
            "create slow_compute 1 s",
            "slow_compute",
            json!({"seconds": 1, "label": "lifecycle"}),
            &caps,
        )
        .await?;
    r.get("tasks/get while working", &slow).await?;
    r.get_when_terminal("tasks/get when completed", &slow)
        .await?;
    let failing = r
        .create("create failing_job", "failing_job", json!({}), &caps)
        .await?;
    r.get_when_terminal("tasks/get failing_job", &failing)
        .await?;
    let protocol = r
        .create(
            "create protocol_error_job",
            "protocol_error_job",
            json!({}),
            &caps,
        )
        .await?;
    r.get_when_terminal("tasks/get protocol_error_job", &protocol)
        .await?;
    let resumable = r
        .create(
            "create resumable_job",
            "resumable_job",
            json!({"steps": 2, "stepMs": 20}),
            &caps,
        )
        .await?;
    r.get_when_terminal("tasks/get resumable_job", &resumable)
        .await?;
    r.call(
        "tools/call resumable_job with a bad step count",
        "resumable_job",
        json!({"steps": -1}),
        &caps,
    )
    .await?;
    // Tasks not declared for a required-task tool, and a task-capable call without elicitation.
    r.call(
        "failing_job without Tasks",
        "failing_job",
        json!({}),
        &runner_caps(),
    )
    .await?;
    r.call(
        "confirm_delete declaring Tasks only",
        "confirm_delete",
        json!({"filename": "x"}),
        &json!({"extensions": {TASKS: {}}}),
    )
    .await?;
    r.get("tasks/get of an unknown id", "no-such-task")
        .await
        .ok();
    r.rpc(
        "tasks/get without Tasks declared",
        "tasks/get",
        json!({"taskId": slow}),
        &json!({}),
    )
    .await?;
    Ok(())
}

async fn task_input(r: &mut Run) -> Step {
    let caps = tasks_caps();
    let confirm = r
        .create(
            "create confirm_delete",
            "confirm_delete",
            json!({"filename": "a.txt"}),
            &caps,
        )
        .await?;
    r.get_when_parked("tasks/get parked", &confirm).await?;
    let update = |r: &mut Run, task: &str, responses: Value| {
        let id = r.id();
        modern(
            id,
            "tasks/update",
            json!({"taskId": task, "inputResponses": responses}),
            &caps,
        )
    };
    let req = update(r, &confirm, json!({"confirm-delete": {"action": "accept"}}));
    r.send("tasks/update with a malformed answer", req).await?;
    let req = update(r, &confirm, json!({"confirm-delete": {"action": "maybe"}}));
    r.send("tasks/update with an unknown action", req).await?;
    let req = update(
        r,
        &confirm,
        json!({"other-key": {"action": "accept", "content": {}}}),
    );
    r.send("tasks/update of a key not asked", req).await?;
    r.get("tasks/get still parked", &confirm).await?;
    let req = update(
        r,
        &confirm,
        json!({"confirm-delete": {"action": "accept", "content": {"confirm": true}}}),
    );
    r.send("tasks/update accepting", req).await?;
    r.get_when_terminal("tasks/get after the answer", &confirm)
        .await?;
    let req = update(
        r,
        &confirm,
        json!({"confirm-delete": {"action": "accept", "content": {"confirm": true}}}),
    );
    r.send("tasks/update of a finished task", req).await?;
    let req = update(r, "no-such-task", json!({}));
    r.send("tasks/update of an unknown task", req).await?;

    let declined = r
        .create(
            "create confirm_delete to decline",
            "confirm_delete",
            json!({"filename": "b.txt"}),
            &caps,
        )
        .await?;
    r.wait_task(&declined, |t| t["status"] == "input_required")
        .await?;
    let req = update(
        r,
        &declined,
        json!({"confirm-delete": {"action": "decline"}}),
    );
    r.send("tasks/update declining", req).await?;
    r.get_when_terminal("tasks/get declined", &declined).await?;

    let multi = r
        .create("create multi_input", "multi_input", json!({}), &caps)
        .await?;
    r.wait_task(&multi, |t| {
        t["status"] == "input_required"
            && t["inputRequests"].as_object().is_some_and(|m| m.len() == 2)
    })
    .await?;
    r.get("tasks/get multi_input parked on two keys", &multi)
        .await?;
    let req = update(
        r,
        &multi,
        json!({"first-input": {"action": "accept", "content": {"name": "one"}}}),
    );
    r.send("tasks/update answering the first key", req).await?;
    r.wait_task(&multi, |t| {
        t["status"] == "input_required"
            && t["inputRequests"].as_object().is_some_and(|m| m.len() == 1)
    })
    .await?;
    r.get("tasks/get multi_input waiting for the second key", &multi)
        .await?;
    let req = update(
        r,
        &multi,
        json!({"second-input": {"action": "accept", "content": {"name": "two"}}}),
    );
    r.send("tasks/update answering the second key", req).await?;
    r.get_when_terminal("tasks/get multi_input done", &multi)
        .await?;

    let haiku = r
        .create(
            "create write_haiku",
            "write_haiku",
            json!({"topic": "rust"}),
            &all_caps(),
        )
        .await?;
    r.get_when_parked("tasks/get write_haiku parked", &haiku)
        .await?;
    let req = update(
        r,
        &haiku,
        json!({"haiku": {"role": "assistant", "content": {"type": "text", "text": "an old pond"},
                         "model": "m", "stopReason": "endTurn"}}),
    );
    r.send("tasks/update with a sampling answer", req).await?;
    r.get_when_terminal("tasks/get write_haiku done", &haiku)
        .await?;
    Ok(())
}

async fn task_cancel(r: &mut Run) -> Step {
    let caps = tasks_caps();
    let slow = r
        .create(
            "create slow_compute 30 s",
            "slow_compute",
            json!({"seconds": 30}),
            &caps,
        )
        .await?;
    r.rpc(
        "tasks/cancel working",
        "tasks/cancel",
        json!({"taskId": slow}),
        &caps,
    )
    .await?;
    r.get_when_terminal("tasks/get cancelled", &slow).await?;
    r.rpc(
        "tasks/cancel again",
        "tasks/cancel",
        json!({"taskId": slow}),
        &caps,
    )
    .await?;
    let parked = r
        .create(
            "create confirm_delete to cancel",
            "confirm_delete",
            json!({"filename": "c.txt"}),
            &caps,
        )
        .await?;
    r.wait_task(&parked, |t| t["status"] == "input_required")
        .await?;
    r.rpc(
        "tasks/cancel parked",
        "tasks/cancel",
        json!({"taskId": parked}),
        &caps,
    )
    .await?;
    r.get_when_terminal("tasks/get cancelled while parked", &parked)
        .await?;
    r.rpc(
        "tasks/cancel unknown",
        "tasks/cancel",
        json!({"taskId": "no-such-task"}),
        &caps,
    )
    .await?;
    r.rpc(
        "tasks/cancel without Tasks declared",
        "tasks/cancel",
        json!({"taskId": parked}),
        &json!({}),
    )
    .await?;
    Ok(())
}

async fn listen_tasks(r: &mut Run) -> Step {
    let caps = tasks_caps();
    let parked = r
        .create(
            "create confirm_delete to follow",
            "confirm_delete",
            json!({"filename": "l.txt"}),
            &caps,
        )
        .await?;
    r.wait_task(&parked, |t| t["status"] == "input_required")
        .await?;
    let listen = modern(
        json!("listen-1"),
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [parked, "no-such-task", parked]}}),
        &caps,
    );
    let mut stream = r.open("subscriptions/listen taskIds", listen).await?;
    r.next_event(&mut stream).await?;
    let id = r.id();
    let update = modern(
        id,
        "tasks/update",
        json!({"taskId": parked,
               "inputResponses": {"confirm-delete": {"action": "accept", "content": {"confirm": false}}}}),
        &caps,
    );
    r.send("tasks/update while listening", update).await?;
    r.read_until(&mut stream, |e| {
        e["method"] == "notifications/tasks" && is_terminal(&e["params"])
    })
    .await?;
    drop(stream);

    // A listen on a working task, closed by the client after its acknowledgement and the
    // cancellation's notification.
    let working = r
        .create(
            "create slow_compute to follow",
            "slow_compute",
            json!({"seconds": 30}),
            &caps,
        )
        .await?;
    let listen = modern(
        json!(99),
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [working], "toolsListChanged": true}}),
        &caps,
    );
    let mut stream = r.open("subscriptions/listen, integer id", listen).await?;
    r.next_event(&mut stream).await?;
    r.rpc(
        "tasks/cancel while listening",
        "tasks/cancel",
        json!({"taskId": working}),
        &caps,
    )
    .await?;
    r.read_until(&mut stream, |e| is_terminal(&e["params"]))
        .await?;
    drop(stream);

    r.rpc(
        "subscriptions/listen without Tasks",
        "subscriptions/listen",
        json!({"notifications": {"taskIds": ["a"]}}),
        &json!({"elicitation": {}}),
    )
    .await?;
    let ids: Vec<String> = (0..101).map(|i| format!("t-{i}")).collect();
    r.rpc(
        "subscriptions/listen with 101 ids",
        "subscriptions/listen",
        json!({"notifications": {"taskIds": ids}}),
        &caps,
    )
    .await?;
    r.rpc(
        "subscriptions/listen without notifications",
        "subscriptions/listen",
        json!({}),
        &caps,
    )
    .await?;
    let listen = modern(
        json!("empty"),
        "subscriptions/listen",
        json!({"notifications": {}}),
        &caps,
    );
    let mut stream = r
        .open("subscriptions/listen asking for nothing", listen)
        .await?;
    r.next_event(&mut stream).await.ok();
    Ok(())
}

async fn mrtr(r: &mut Run) -> Step {
    let caps = runner_caps();
    let retry = |r: &mut Run, tool: &str, responses: Value, state: Value| {
        let id = r.id();
        let mut params = json!({"name": tool, "arguments": {}, "inputResponses": responses});
        if !state.is_null() {
            params["requestState"] = state;
        }
        modern(id, "tools/call", params, &runner_caps())
    };
    let name_answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let sampled = json!({"role": "assistant", "content": {"type": "text", "text": "hi"},
                         "model": "test-model", "stopReason": "endTurn"});
    let roots = json!({"roots": [{"uri": "file:///tmp/a", "name": "a"}]});

    let tool = "test_input_required_result_elicitation";
    let first = r
        .call("elicitation round 1", tool, json!({}), &caps)
        .await?
        .result()?;
    let req = retry(
        r,
        tool,
        json!({"user_name": name_answer}),
        first["requestState"].clone(),
    );
    r.send("elicitation round 2", req).await?;
    let req = retry(r, tool, json!({"user_name": name_answer}), Value::Null);
    r.send("elicitation retried without requestState", req)
        .await?;

    let tool = "test_input_required_result_sampling";
    let first = r
        .call("sampling round 1", tool, json!({}), &caps)
        .await?
        .result()?;
    let req = retry(
        r,
        tool,
        json!({"model_reply": sampled}),
        first["requestState"].clone(),
    );
    r.send("sampling round 2", req).await?;

    let tool = "test_input_required_result_list_roots";
    let first = r
        .call("list_roots round 1", tool, json!({}), &caps)
        .await?
        .result()?;
    let req = retry(
        r,
        tool,
        json!({"client_roots": roots}),
        first["requestState"].clone(),
    );
    r.send("list_roots round 2", req).await?;

    let tool = "test_input_required_result_request_state";
    let first = r
        .call("request_state round 1", tool, json!({}), &caps)
        .await?
        .result()?;
    let answer = json!({"confirmation": {"action": "decline"}});
    let req = retry(r, tool, answer.clone(), first["requestState"].clone());
    r.send("request_state round 2 (declined)", req).await?;

    let tool = "test_input_required_result_tampered_state";
    let first = r
        .call("tampered_state round 1", tool, json!({}), &caps)
        .await?
        .result()?;
    let state = first["requestState"].as_str().unwrap_or_default();
    let tampered = format!("{}A", &state[..state.len().saturating_sub(1)]);
    let tampered = if tampered == state {
        format!("{state}x")
    } else {
        tampered
    };
    let req = retry(r, tool, answer.clone(), json!(tampered));
    r.send("tampered_state with a modified state", req).await?;
    let req = retry(r, tool, answer.clone(), json!("not-a-state"));
    r.send("tampered_state with a foreign state", req).await?;
    // A state issued for one tool, presented to another.
    let req = retry(
        r,
        "test_input_required_result_request_state",
        answer.clone(),
        first["requestState"].clone(),
    );
    r.send("a state presented to another tool", req).await?;

    let tool = "test_input_required_result_multiple_inputs";
    r.call(
        "multiple_inputs without sampling",
        tool,
        json!({}),
        &json!({"elicitation": {}}),
    )
    .await?;
    let first = r
        .call("multiple_inputs round 1", tool, json!({}), &caps)
        .await?
        .result()?;
    let req = retry(
        r,
        tool,
        json!({"user_name": name_answer, "model_reply": sampled, "client_roots": roots}),
        first["requestState"].clone(),
    );
    r.send("multiple_inputs round 2", req).await?;
    let req = retry(
        r,
        tool,
        json!({"user_name": name_answer}),
        first["requestState"].clone(),
    );
    r.send("multiple_inputs with one answer of three", req)
        .await?;

    let tool = "test_input_required_result_multi_round";
    let first = r
        .call("multi_round round 1", tool, json!({}), &caps)
        .await?
        .result()?;
    let req = retry(
        r,
        tool,
        json!({"name": {"action": "accept", "content": {"name": "Alice"}}}),
        first["requestState"].clone(),
    );
    let second = r.send("multi_round round 2", req).await?.result()?;
    let req = retry(
        r,
        tool,
        json!({"color": {"action": "accept", "content": {"color": "blue"}}}),
        second["requestState"].clone(),
    );
    r.send("multi_round round 3", req).await?;
    let req = retry(
        r,
        tool,
        json!({"color": {"action": "accept", "content": {"color": "red"}}}),
        first["requestState"].clone(),
    );
    r.send("multi_round: round 1's state with round 2's answer", req)
        .await?;

    let tool = "test_input_required_result_capabilities";
    for (label, caps) in [
        ("capabilities: none", json!({})),
        ("capabilities: sampling", json!({"sampling": {}})),
        ("capabilities: roots", json!({"roots": {}})),
        ("capabilities: elicitation", json!({"elicitation": {}})),
    ] {
        r.call(label, tool, json!({}), &caps).await?;
    }
    // An answer that does not fit the request it answers.
    let tool = "test_input_required_result_elicitation";
    let first = r
        .call("elicitation round 1 again", tool, json!({}), &caps)
        .await?
        .result()?;
    let req = retry(
        r,
        tool,
        json!({"user_name": sampled}),
        first["requestState"].clone(),
    );
    r.send("elicitation answered with a sampling result", req)
        .await?;
    let req = retry(
        r,
        tool,
        json!("not an object"),
        first["requestState"].clone(),
    );
    r.send("inputResponses not an object", req).await?;
    Ok(())
}

async fn mrtr_then_task(r: &mut Run) -> Step {
    let caps = tasks_caps();
    let tool = "test_tool_with_task";
    let first = r
        .call("test_tool_with_task round 1", tool, json!({}), &caps)
        .await?
        .result()?;
    let id = r.id();
    let req = modern(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {},
               "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}},
               "requestState": first["requestState"]}),
        &caps,
    );
    let created = r
        .send("test_tool_with_task round 2 creates a task", req)
        .await?
        .result()?;
    let task = task_id(&created)?;
    r.get_when_terminal("tasks/get test_tool_with_task", &task)
        .await?;
    // The second round without Tasks declared: the tool requires a task then.
    let first = r
        .call(
            "test_tool_with_task round 1, no Tasks",
            tool,
            json!({}),
            &runner_caps(),
        )
        .await?
        .result()?;
    let id = r.id();
    let req = modern(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {},
               "inputResponses": {"user_name": {"action": "decline"}},
               "requestState": first["requestState"]}),
        &runner_caps(),
    );
    r.send("test_tool_with_task round 2 without Tasks", req)
        .await?;
    Ok(())
}

async fn malformed_bodies(r: &mut Run) -> Step {
    let caps = tasks_caps();
    // A task to aim the malformed requests at.
    let task = r
        .create(
            "create slow_compute 30 s as a target",
            "slow_compute",
            json!({"seconds": 30}),
            &caps,
        )
        .await?;
    let good = modern(json!(1), "tasks/cancel", json!({"taskId": task}), &caps);
    let message = serde_json::from_slice::<Value>(&good.body).expect("JSON");
    let with = |pointer: &str, value: Value| {
        let mut m = message.clone();
        *m.pointer_mut(pointer).expect("a member") = value;
        good.clone().json(&m)
    };
    let without = |pointer: &str, member: &str| {
        let mut m = message.clone();
        m.pointer_mut(pointer)
            .and_then(Value::as_object_mut)
            .expect("an object")
            .remove(member);
        good.clone().json(&m)
    };
    let mut invalid_utf8 = good.body.clone();
    let at = invalid_utf8
        .windows(6)
        .position(|w| w == b"taskId")
        .expect("taskId in the body");
    invalid_utf8.splice(at..at + 6, *b"\xff\xfeskId");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let cases: Vec<(&str, Req)> = vec![
        (
            "truncated JSON",
            good.clone().body(b"{\"jsonrpc\":".to_vec()),
        ),
        ("empty body", good.clone().body(Vec::new())),
        ("invalid UTF-8", good.clone().body(invalid_utf8)),
        ("nesting 100 000 deep", good.clone().body(deep.into_bytes())),
        ("a batch", good.clone().json(&json!([message]))),
        ("a JSON string", good.clone().json(&json!("tasks/cancel"))),
        ("jsonrpc 1.0", with("/jsonrpc", json!("1.0"))),
        ("no jsonrpc member", without("", "jsonrpc")),
        ("params a string", with("/params", json!("x"))),
        ("no params", without("", "params")),
        ("no _meta", without("/params", "_meta")),
        (
            "_meta without protocolVersion",
            without("/params/_meta", "io.modelcontextprotocol/protocolVersion"),
        ),
        (
            "_meta without clientCapabilities",
            without(
                "/params/_meta",
                "io.modelcontextprotocol/clientCapabilities",
            ),
        ),
        ("taskId a number", with("/params/taskId", json!(42))),
        ("taskId empty", with("/params/taskId", json!(""))),
        ("id an object", with("/id", json!({"a": 1}))),
        ("id null", with("/id", Value::Null)),
        ("id a float", with("/id", json!(1.5))),
        (
            "unknown method",
            with("/method", json!("tasks/delete")).header("mcp-method", "tasks/delete"),
        ),
        (
            "removed method tasks/result",
            with("/method", json!("tasks/result")).header("mcp-method", "tasks/result"),
        ),
        (
            "ping",
            with("/method", json!("ping")).header("mcp-method", "ping"),
        ),
        (
            "a response message",
            good.clone()
                .json(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
        ),
        ("a notification", without("", "id")),
        (
            "notifications/cancelled",
            good.clone()
                .header("mcp-method", "notifications/cancelled")
                .without("mcp-name")
                .json(
                    &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": 1, "_meta": meta(&caps)}}),
                ),
        ),
        (
            "oversized body (1 MiB + 1)",
            good.clone().body(vec![b' '; 1_048_577]),
        ),
    ];
    for (label, req) in cases {
        r.send(&format!("tasks/cancel: {label}"), req).await?;
    }
    let update = |responses: Value| {
        let m = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/update",
                       "params": {"taskId": task, "inputResponses": responses, "_meta": meta(&caps)}});
        good.clone().header("mcp-method", "tasks/update").json(&m)
    };
    r.send("tasks/update: inputResponses an array", update(json!([])))
        .await?;
    r.send("tasks/update: inputResponses a string", update(json!("x")))
        .await?;
    r.send(
        "tasks/update: an empty key",
        update(json!({"": {"action": "accept", "content": {}}})),
    )
    .await?;
    let big = "x".repeat(300_000);
    r.call(
        "tools/call with arguments over the input limit",
        "slow_compute",
        json!({"seconds": 0, "label": big}),
        &caps,
    )
    .await?;
    r.call(
        "tools/call with a bad params type",
        "slow_compute",
        json!({"seconds": "ten"}),
        &caps,
    )
    .await?;
    let id = r.id();
    let mut req = modern(id, "tools/call", json!({"name": "greet"}), &caps);
    let mut m: Value = serde_json::from_slice(&req.body).expect("JSON");
    m["params"]["name"] = json!(7);
    req = req.json(&m);
    r.send("tools/call with a numeric name", req).await?;
    r.rpc(
        "tasks/cancel of the target",
        "tasks/cancel",
        json!({"taskId": task}),
        &caps,
    )
    .await?;
    Ok(())
}

async fn malformed_heads(r: &mut Run) -> Step {
    let caps = tasks_caps();
    let id = r.id();
    let good = modern(
        id,
        "tools/call",
        json!({"name": "greet", "arguments": {"name": "H"}}),
        &caps,
    );
    let v2099 = {
        let mut m: Value = serde_json::from_slice(&good.body).expect("JSON");
        m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
        good.clone()
            .header("mcp-protocol-version", "2099-01-01")
            .json(&m)
    };
    let cases: Vec<(&str, Req)> = vec![
        ("the correct request", good.clone()),
        ("no Mcp-Method", good.clone().without("mcp-method")),
        (
            "Mcp-Method differs",
            good.clone().header("mcp-method", "tools/list"),
        ),
        (
            "Mcp-Method repeated",
            good.clone().add_header("mcp-method", "tools/call"),
        ),
        (
            "Mcp-Method in other case",
            good.clone().header("mcp-method", "TOOLS/CALL"),
        ),
        ("no Mcp-Name", good.clone().without("mcp-name")),
        (
            "Mcp-Name differs",
            good.clone().header("mcp-name", "greet2"),
        ),
        (
            "Mcp-Name repeated",
            good.clone().add_header("mcp-name", "greet"),
        ),
        (
            "Mcp-Name not ASCII",
            good.clone().header("mcp-name", "gr\u{e9}et".as_bytes()),
        ),
        (
            "no MCP-Protocol-Version",
            good.clone().without("mcp-protocol-version"),
        ),
        (
            "MCP-Protocol-Version differs from _meta",
            good.clone().header("mcp-protocol-version", V2025),
        ),
        ("unsupported version 2099-01-01", v2099),
        (
            "Content-Type text/plain",
            good.clone().header("content-type", "text/plain"),
        ),
        ("no Content-Type", good.clone().without("content-type")),
        (
            "Content-Type with charset",
            good.clone()
                .header("content-type", "application/json; charset=utf-8"),
        ),
        (
            "Accept application/json only",
            good.clone().header("accept", "application/json"),
        ),
        (
            "Accept text/event-stream only",
            good.clone().header("accept", "text/event-stream"),
        ),
        ("no Accept", good.clone().without("accept")),
        (
            "foreign Origin",
            good.clone().header("origin", "http://evil.example"),
        ),
        (
            "loopback Origin",
            good.clone().header("origin", "http://localhost:1234"),
        ),
        ("foreign Host", good.clone().header("host", "evil.example")),
        ("Host localhost", good.clone().header("host", "localhost")),
    ];
    for (label, req) in cases {
        r.send(&format!("tools/call greet: {label}"), req).await?;
    }
    // The other HTTP methods on the endpoint, without a session.
    for method in [Method::GET, Method::DELETE, Method::PUT, Method::PATCH] {
        let label = format!("{method} without a session");
        let req = Req::new(method).header("accept", "text/event-stream");
        r.send(&label, req).await?;
    }
    let req = Req::new(Method::OPTIONS)
        .header("origin", "http://app.example")
        .header("access-control-request-method", "POST");
    r.send("OPTIONS preflight, CORS off", req).await?;
    // initialize from a 2026 client, and of unknown revisions.
    r.rpc(
        "initialize with 2026 headers and _meta",
        "initialize",
        json!({"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "d", "version": "1"}}),
        &json!({}),
    )
    .await?;
    let init = |version: &str| {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "d", "version": "1"}}})
    };
    for version in ["2024-11-05", "1999-01-01", VERSION] {
        r.send(
            &format!("2025-style initialize asking for {version}"),
            legacy(None, V2025, &init(version)),
        )
        .await?;
    }
    Ok(())
}

/// `initialize` of `version` with `caps` (as `bearer` when given), then `initialized`; both
/// recorded.
async fn open_session(
    r: &mut Run,
    version: &'static str,
    caps: Value,
    bearer: Option<&'static str>,
) -> Step<Session> {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": caps,
        "clientInfo": {"name": "differential", "version": "1"}}});
    let mut req = legacy(None, version, &body);
    if let Some(token) = bearer {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    let reply = r.send(&format!("initialize {version}"), req).await?;
    let id = reply
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| format!("no Mcp-Session-Id (HTTP {})", reply.status))?;
    let session = Session {
        id,
        version,
        bearer,
    };
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    r.send("notifications/initialized", session.post(&note))
        .await?;
    Ok(session)
}

/// The client's answer `result` to the server's request `request` (its `id`).
fn answer(request: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": request["id"], "result": result})
}

/// An accepted elicitation with `content`.
fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// A sampling result with `text`.
fn sampled(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text},
           "model": "test-model", "stopReason": "endTurn"})
}

/// Polls a 2025 task of `s` without recording until its status satisfies `done`.
async fn wait_legacy(r: &Run, s: &Session, task: &str, done: fn(&str) -> bool) -> Step {
    let poll = s.request("poll", "tasks/get", json!({"taskId": task}));
    r.wait_until(&poll, |t| done(t["status"].as_str().unwrap_or("")))
        .await
        .map(drop)
}

fn is_terminal_status(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

async fn session_2025_11_25(r: &mut Run) -> Step {
    let s = open_session(r, V2025, json!({"elicitation": {}, "sampling": {}}), None).await?;
    let call = |id: i64, name: &str, arguments: Value| {
        s.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
    };
    r.send("tools/list", s.request(1, "tools/list", json!({})))
        .await?;
    r.send("ping", s.request(2, "ping", json!({}))).await?;
    let level = |id: i64, level: &str| s.request(id, "logging/setLevel", json!({"level": level}));
    r.send("logging/setLevel info", level(3, "info")).await?;
    r.send("logging/setLevel bad", level(4, "loud")).await?;
    r.send("tools/call greet", call(5, "greet", json!({"name": "S"})))
        .await?;
    r.send(
        "tools/call test_tool_with_logging (session level info)",
        call(6, "test_tool_with_logging", json!({})),
    )
    .await?;
    let progress = json!({"name": "test_tool_with_progress", "arguments": {},
                          "_meta": {"progressToken": "t"}});
    r.send(
        "tools/call test_tool_with_progress with a token",
        s.request(7, "tools/call", progress),
    )
    .await?;
    // Calls asking for input on their SSE response, answered by a POST: accepted, sampled,
    // refused with an error.
    let confirm = answer(&Value::Null, accept(json!({"confirm": true})));
    for (label, id, name, arguments, reply) in [
        (
            "confirm_delete (elicitation)",
            8,
            "confirm_delete",
            json!({"filename": "s.txt"}),
            confirm,
        ),
        (
            "test_sampling",
            9,
            "test_sampling",
            json!({"prompt": "Hi"}),
            answer(&Value::Null, sampled("yo")),
        ),
        (
            "test_elicitation, refused",
            10,
            "test_elicitation",
            json!({"message": "Who?"}),
            json!({"jsonrpc": "2.0", "error": {"code": -1, "message": "no"}}),
        ),
    ] {
        let mut stream = r
            .open(&format!("tools/call {label}"), call(id, name, arguments))
            .await?;
        let request = r.next_event(&mut stream).await?;
        let mut reply = reply;
        reply["id"] = request["id"].clone();
        r.send(&format!("{label}: the answer"), s.post(&reply))
            .await?;
        r.read_to_end(&mut stream).await?;
        if id == 8 {
            r.send("the same answer again", s.post(&reply)).await?;
        }
    }
    let stray = json!({"jsonrpc": "2.0", "id": 12345, "result": {}});
    r.send("an answer to no request", s.post(&stray)).await?;
    let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": 77}});
    r.send("notifications/cancelled of nothing", s.post(&cancelled))
        .await?;
    r.send(
        "tools/call without a version header",
        call(11, "greet", json!({})).without("mcp-protocol-version"),
    )
    .await?;
    r.send(
        "tools/call with the 2026 version header",
        call(12, "greet", json!({})).header("mcp-protocol-version", VERSION),
    )
    .await?;
    r.send(
        "server/discover in a session",
        s.request(13, "server/discover", json!({})),
    )
    .await?;
    r.send("an unknown method", s.request(14, "nope/nope", json!({})))
        .await?;
    let init = json!({"protocolVersion": V2025, "capabilities": {},
                      "clientInfo": {"name": "d", "version": "1"}});
    r.send("initialize again", s.request(15, "initialize", init))
        .await?;
    r.send("DELETE", s.http(Method::DELETE)).await?;
    r.send("ping after DELETE", s.request(16, "ping", json!({})))
        .await?;
    r.send("GET after DELETE", s.http(Method::GET)).await?;
    r.send("DELETE again", s.http(Method::DELETE)).await?;
    Ok(())
}

async fn session_2025_tasks(r: &mut Run) -> Step {
    let s = open_session(r, V2025, json!({"elicitation": {}, "sampling": {}}), None).await?;
    let task_call = |id: &str, name: &str, arguments: Value, hint: Value| {
        let params = json!({"name": name, "arguments": arguments, "task": hint});
        s.request(id, "tools/call", params)
    };
    let on_task =
        |id: &str, method: &str, task: &str| s.request(id, method, json!({"taskId": task}));
    let mut get_stream = r.open("GET stream", s.http(Method::GET)).await?;
    let req = task_call(
        "c1",
        "slow_compute",
        json!({"seconds": 0.3, "label": "legacy"}),
        json!({"ttl": 60000}),
    );
    let created = r
        .send("tools/call slow_compute with a task hint", req)
        .await?
        .result()?;
    let task = task_id(&created)?;
    r.send("tasks/get while working", on_task("g1", "tasks/get", &task))
        .await?;
    r.read_until(&mut get_stream, |e| {
        e["method"] == "notifications/tasks/status" && e["params"]["status"] == "completed"
    })
    .await?;
    r.send("tasks/get completed", on_task("g2", "tasks/get", &task))
        .await?;
    r.send("tasks/result", on_task("r1", "tasks/result", &task))
        .await?;
    // A task asking for input: with the GET stream open, a poll that finds the task waiting
    // has the GET stream ask; a POST answers. No poll before the GET stream announces
    // input_required: a poll's nudge counts that state as seen on the stream, which then never
    // announces it (whether it does would depend on which comes first).
    let req = task_call(
        "c2",
        "confirm_delete",
        json!({"filename": "t.txt"}),
        json!({}),
    );
    let created = r
        .send("tools/call confirm_delete with a task hint", req)
        .await?
        .result()?;
    let parked = task_id(&created)?;
    r.read_until(&mut get_stream, |e| {
        e["params"]["status"] == "input_required"
    })
    .await?;
    r.send(
        "tasks/get input_required",
        on_task("g3", "tasks/get", &parked),
    )
    .await?;
    let request = r
        .read_until(&mut get_stream, |e| e["method"] == "elicitation/create")
        .await?;
    r.send(
        "the task's elicitation answered (asked on the GET stream)",
        s.post(&answer(&request, accept(json!({"confirm": true})))),
    )
    .await?;
    r.read_until(&mut get_stream, |e| e["params"]["status"] == "completed")
        .await?;
    r.send(
        "tasks/result of the answered task",
        on_task("r2", "tasks/result", &parked),
    )
    .await?;
    // Cancel a working task; a blocking tasks/result of it ends with the cancellation.
    let req = task_call(
        "c3",
        "slow_compute",
        json!({"seconds": 30}),
        json!({"ttl": 5}),
    );
    let created = r
        .send("tools/call slow_compute 30 s with a task hint", req)
        .await?
        .result()?;
    let slow = task_id(&created)?;
    let mut waiting = r
        .open(
            "tasks/result of a working task",
            on_task("r3", "tasks/result", &slow),
        )
        .await?;
    r.send("tasks/cancel", on_task("x1", "tasks/cancel", &slow))
        .await?;
    r.read_until(&mut waiting, |e| e["id"] == "r3").await?;
    r.send("tasks/cancel again", on_task("x2", "tasks/cancel", &slow))
        .await?;
    r.read_until(&mut get_stream, |e| e["params"]["status"] == "cancelled")
        .await?;
    // Hints that do not fit the tool, failures, unknown ids.
    for (label, params) in [
        (
            "a required-task tool without a hint",
            json!({"name": "failing_job", "arguments": {}}),
        ),
        (
            "a sync tool with a hint",
            json!({"name": "greet", "arguments": {}, "task": {}}),
        ),
        (
            "failing_job with a hint",
            json!({"name": "failing_job", "arguments": {}, "task": {}}),
        ),
        (
            "a hint that is not an object",
            json!({"name": "slow_compute", "arguments": {}, "task": 5}),
        ),
    ] {
        r.send(
            &format!("tools/call: {label}"),
            s.request("h", "tools/call", params),
        )
        .await?;
    }
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        r.send(
            &format!("{method} of an unknown id"),
            on_task("u", method, "no-such-task"),
        )
        .await?;
    }
    r.send(
        "tasks/list (not offered without a caller identity)",
        s.request("l", "tasks/list", json!({})),
    )
    .await?;
    r.send("DELETE", s.http(Method::DELETE)).await?;
    r.read_to_end(&mut get_stream).await?;
    Ok(())
}

async fn session_2025_task_input(r: &mut Run) -> Step {
    // No GET stream: the blocking tasks/result carries the task's input requests.
    let s = open_session(r, V2025, json!({"elicitation": {}, "sampling": {}}), None).await?;
    let params = json!({"name": "multi_input", "arguments": {}, "task": {}});
    let created = r
        .send(
            "tools/call multi_input with a task hint",
            s.request("c", "tools/call", params),
        )
        .await?
        .result()?;
    let task = task_id(&created)?;
    wait_legacy(r, &s, &task, |status| status == "input_required").await?;
    let mut stream = r
        .open(
            "tasks/result asking for input",
            s.request("r", "tasks/result", json!({"taskId": task})),
        )
        .await?;
    let mut requests = [
        r.next_event(&mut stream).await?,
        r.next_event(&mut stream).await?,
    ];
    // Answer in message order, so both sides answer alike whatever order the requests came in.
    requests.sort_by_key(|q| q["params"]["message"].as_str().unwrap_or("").to_owned());
    for (i, request) in requests.iter().enumerate() {
        let reply = answer(request, accept(json!({"name": format!("n{i}")})));
        r.send(&format!("answer {i}"), s.post(&reply)).await?;
    }
    r.read_until(&mut stream, |e| e["id"] == "r").await?;
    r.send("DELETE", s.http(Method::DELETE)).await?;
    Ok(())
}

async fn session_2025_06_18(r: &mut Run) -> Step {
    let s = open_session(r, "2025-06-18", json!({"elicitation": {}}), None).await?;
    r.send("tools/list", s.request(1, "tools/list", json!({})))
        .await?;
    let params = json!({"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}});
    r.send(
        "tools/call with a task hint",
        s.request(2, "tools/call", params),
    )
    .await?;
    r.send(
        "tasks/get",
        s.request(3, "tasks/get", json!({"taskId": "x"})),
    )
    .await?;
    r.send(
        "a 2025-11-25 header in a 2025-06-18 session",
        s.request(4, "ping", json!({}))
            .header("mcp-protocol-version", V2025),
    )
    .await?;
    r.send("DELETE", s.http(Method::DELETE)).await?;
    Ok(())
}

async fn session_errors(r: &mut Run) -> Step {
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    r.send("2025 ping without a session", legacy(None, V2025, &ping))
        .await?;
    r.send(
        "2025 ping without a session, with the version header",
        legacy(None, V2025, &ping).header("mcp-protocol-version", V2025),
    )
    .await?;
    let unknown = Session {
        id: "no-such-session".into(),
        version: V2025,
        bearer: None,
    };
    r.send("ping in an unknown session", unknown.post(&ping))
        .await?;
    r.send("GET of an unknown session", unknown.http(Method::GET))
        .await?;
    r.send("DELETE of an unknown session", unknown.http(Method::DELETE))
        .await?;
    let s = open_session(r, V2025, json!({}), None).await?;
    let req = modern(json!(5), "tools/list", json!({}), &json!({})).header("mcp-session-id", &s.id);
    r.send("a 2026 request carrying a session id", req).await?;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": V2025}});
    r.send(
        "initialize without capabilities",
        legacy(None, V2025, &init),
    )
    .await?;
    r.send("DELETE", s.http(Method::DELETE)).await?;
    Ok(())
}

async fn other_routes(r: &mut Run) -> Step {
    r.send("GET /healthz", Req::new(Method::GET).path("/healthz"))
        .await?;
    r.send("GET /elsewhere", Req::new(Method::GET).path("/elsewhere"))
        .await?;
    r.send(
        "POST /mcp/ (trailing slash)",
        modern(json!(1), "tools/list", json!({}), &json!({})).path("/mcp/"),
    )
    .await?;
    r.send_as(
        "GET /metrics (series names and labels)",
        Req::new(Method::GET).path("/metrics"),
        metric_series,
    )
    .await?;
    Ok(())
}

async fn bearer_refusals(r: &mut Run) -> Step {
    let caps = tasks_caps();
    let id = r.id();
    let call = modern(
        id,
        "tools/call",
        json!({"name": "greet", "arguments": {}}),
        &caps,
    );
    r.send("no Authorization", call.clone()).await?;
    r.send(
        "an empty bearer token",
        call.clone().header("authorization", "Bearer "),
    )
    .await?;
    r.send(
        "Basic credentials",
        call.clone().header("authorization", "Basic YWxpY2U6eA=="),
    )
    .await?;
    r.send(
        "a bearer token",
        call.header("authorization", "Bearer alice"),
    )
    .await?;
    r.send(
        "initialize without a token",
        legacy(
            None,
            V2025,
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": V2025, "capabilities": {},
                "clientInfo": {"name": "d", "version": "1"}}}),
        ),
    )
    .await?;
    r.send(
        "GET /healthz without a token",
        Req::new(Method::GET).path("/healthz"),
    )
    .await?;
    Ok(())
}

async fn bearer_scopes(r: &mut Run) -> Step {
    let caps = tasks_caps();
    let as_user = |req: Req, user: &str| req.header("authorization", format!("Bearer {user}"));
    let id = r.id();
    let params = json!({"name": "slow_compute", "arguments": {"seconds": 0, "label": "alice"}});
    let req = as_user(modern(id, "tools/call", params, &caps), "alice");
    let created = r.send("alice creates a task", req).await?.result()?;
    let task = task_id(&created)?;
    let on_task = |id: Value, method: &str, user: &str| {
        as_user(modern(id, method, json!({"taskId": task}), &caps), user)
    };
    r.wait_until(&on_task(json!("poll"), "tasks/get", "alice"), is_terminal)
        .await?;
    for (label, method, user) in [
        ("alice reads it", "tasks/get", "alice"),
        ("bob reads it", "tasks/get", "bob"),
        ("bob cancels it", "tasks/cancel", "bob"),
    ] {
        let id = r.id();
        r.send(label, on_task(id, method, user)).await?;
    }
    let params = json!({"notifications": {"taskIds": [task]}});
    let listen = modern(json!("bob-listen"), "subscriptions/listen", params, &caps);
    let mut stream = r.open("bob listens to it", as_user(listen, "bob")).await?;
    r.next_event(&mut stream).await?;
    Ok(())
}

async fn bearer_session_tasks_list(r: &mut Run) -> Step {
    let s = open_session(r, V2025, json!({"elicitation": {}}), Some("carol")).await?;
    let list = |id: &str, params: Value| s.request(id, "tasks/list", params);
    r.send("tasks/list before any task", list("l0", json!({})))
        .await?;
    let mut tasks = Vec::new();
    for (i, seconds) in [0.0, 30.0, 0.0].into_iter().enumerate() {
        let params = json!({"name": "slow_compute", "arguments": {"seconds": seconds}, "task": {}});
        let req = s.request(format!("c{i}"), "tools/call", params);
        let label = format!("tools/call slow_compute {seconds} s with a hint");
        let created = r.send(&label, req).await?.result()?;
        tasks.push(task_id(&created)?);
    }
    for task in [&tasks[0], &tasks[2]] {
        wait_legacy(r, &s, task, is_terminal_status).await?;
    }
    let listed = r
        .send("tasks/list", list("l1", json!({})))
        .await?
        .result()?;
    if let Some(cursor) = listed.get("nextCursor") {
        let req = list("l2", json!({"cursor": cursor}));
        r.send("tasks/list, next page", req).await?;
    }
    r.send(
        "tasks/list with a bad cursor",
        list("l3", json!({"cursor": "???"})),
    )
    .await?;
    r.send(
        "the session used with another token",
        s.request("p", "ping", json!({}))
            .header("authorization", "Bearer dave"),
    )
    .await?;
    let cancel = s.request("x", "tasks/cancel", json!({"taskId": tasks[1]}));
    r.send("tasks/cancel", cancel).await?;
    r.send("DELETE", s.http(Method::DELETE)).await?;
    Ok(())
}

async fn cors(r: &mut Run) -> Step {
    let preflight = Req::new(Method::OPTIONS)
        .header("origin", "http://app.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,mcp-method,mcp-name,mcp-protocol-version,authorization",
        );
    r.send("preflight from the allowed origin", preflight.clone())
        .await?;
    r.send(
        "preflight from another origin",
        preflight.header("origin", "http://evil.example"),
    )
    .await?;
    let id = r.id();
    let call = modern(
        id,
        "tools/call",
        json!({"name": "greet", "arguments": {}}),
        &tasks_caps(),
    )
    .header("authorization", "Bearer erin");
    r.send(
        "a call from the allowed origin",
        call.clone().header("origin", "http://app.example"),
    )
    .await?;
    r.send(
        "a call from another origin",
        call.header("origin", "http://evil.example"),
    )
    .await?;
    Ok(())
}

async fn capacity(r: &mut Run) -> Step {
    let caps = tasks_caps();
    let first = r
        .create(
            "create slow_compute 30 s (the one worker)",
            "slow_compute",
            json!({"seconds": 30}),
            &caps,
        )
        .await?;
    r.call(
        "a second task while the worker is busy",
        "slow_compute",
        json!({"seconds": 30}),
        &caps,
    )
    .await?;
    r.call(
        "a synchronous call meanwhile",
        "greet",
        json!({}),
        &json!({}),
    )
    .await?;
    let parked = r
        .call(
            "a task that would park",
            "confirm_delete",
            json!({"filename": "p.txt"}),
            &caps,
        )
        .await?;
    r.rpc(
        "tasks/cancel the worker's task",
        "tasks/cancel",
        json!({"taskId": first}),
        &caps,
    )
    .await?;
    r.get_when_terminal("tasks/get cancelled", &first).await?;
    if let Ok(result) = parked.result() {
        if let Ok(task) = task_id(&result) {
            r.rpc(
                "tasks/cancel the parked one",
                "tasks/cancel",
                json!({"taskId": task}),
                &caps,
            )
            .await?;
        }
    }
    Ok(())
}
