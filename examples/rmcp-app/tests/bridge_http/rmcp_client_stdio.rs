//! rmcp's own client (the official Rust SDK, 3.11.0) driving tasks on the `rmcp-app --stdio`
//! binary, a child process speaking MCP 2026-07-28 on its stdin and stdout: a task polled with
//! `tasks/get` to its result, a task parked on input answered with `tasks/update`, a task
//! cancelled, and tasks scoped to the fixed `--principal` across restarts on one SQLite store.
//!
//! Stdio rather than HTTP: rmcp's HTTP client needs reqwest 0.13 beside the workspace's 0.12,
//! a second copy deny.toml refuses. The client only polls: it declares the Tasks extension in
//! every request's `_meta` and never listens (rmcp 3.11.0 drops listen streams carrying
//! notifications outside what it acknowledged).

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    CreateTaskResult, ElicitRequestParams, ElicitationCapability, FormElicitationCapability,
    GetTaskParams, GetTaskResult, Implementation, InputRequest, JsonObject, ProtocolVersion,
    TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::ClientServiceExt as _;
use serde_json::{json, Value};
use tasks_test_support::wait::{within, WAIT_LIMIT};

/// A client of one `rmcp-app --stdio` process.
type Client = RunningService<RoleClient, ClientConfig>;

/// Starts `rmcp-app --stdio` with `args` and connects rmcp's client to it: `server/discover`
/// for MCP 2026-07-28, then every request declares the Tasks extension and form elicitation.
async fn connect(args: &[&str]) -> Client {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rmcp-app"));
    command
        .arg("--stdio")
        .args(args)
        .env("RUST_LOG", "warn")
        .kill_on_drop(true);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("rmcp-app starts");
    let capabilities = ClientCapabilities::builder()
        .enable_tasks()
        .enable_elicitation_with(
            ElicitationCapability::new().with_form(FormElicitationCapability::new()),
        )
        .build();
    let config = ClientConfig::new(
        capabilities,
        Implementation::new("rmcp-app-tests", env!("CARGO_PKG_VERSION")),
    );
    let discover = config.serve_with_lifecycle(
        transport,
        rmcp::service::ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    );
    let client = within("server/discover", discover)
        .await
        .expect("rmcp's client discovers rmcp-app over stdio");
    let server = client.peer_info().expect("the server answered discover");
    assert_eq!(server.protocol_version, ProtocolVersion::V_2026_07_28);
    assert!(
        server.capabilities.supports_tasks(),
        "rmcp-app advertises the Tasks extension"
    );
    client
}

/// Closes the client's stdin, which ends the server; waits for it.
async fn close(client: Client) {
    within("closing", client.cancel())
        .await
        .expect("the client closes cleanly");
}

/// The arguments `value` (an object) as rmcp's map.
fn arguments(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, not {other}"),
    }
}

/// Calls `tool` with `args` and expects the server to answer with a task.
async fn create_task(client: &Client, tool: &str, args: Value) -> CreateTaskResult {
    let request = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments(args));
    match within("tools/call", client.call_tool_once(request))
        .await
        .expect("tools/call")
    {
        CallToolResponse::Task(created) => created,
        other => panic!("{tool}: expected a CreateTaskResult, got {other:?}"),
    }
}

/// `tasks/get` of `task_id`.
async fn get(client: &Client, task_id: &str) -> Result<GetTaskResult, ServiceError> {
    within("tasks/get", client.get_task(GetTaskParams::new(task_id))).await
}

/// `tasks/update` of `task_id` with `responses` (`[(key, answer)]`).
async fn update(
    client: &Client,
    task_id: &str,
    responses: &[(&str, Value)],
) -> Result<(), ServiceError> {
    let responses = responses
        .iter()
        .map(|(key, answer)| ((*key).to_owned(), answer.clone()))
        .collect();
    let request = client.update_task(UpdateTaskParams::new(task_id, responses));
    within("tasks/update", request).await
}

/// `tasks/cancel` of `task_id`.
async fn cancel(client: &Client, task_id: &str) -> Result<(), ServiceError> {
    within(
        "tasks/cancel",
        client.cancel_task(CancelTaskParams::new(task_id)),
    )
    .await
}

/// Polls `tasks/get` every `pollIntervalMs` until the task's status is `wanted` (failing on any
/// other terminal status), within [`WAIT_LIMIT`]; the task's payload then.
async fn poll_until(
    client: &Client,
    created: &CreateTaskResult,
    wanted: TaskStatus,
) -> TaskPayload {
    let interval = Duration::from_millis(created.task.poll_interval_ms.unwrap_or(50));
    let started = Instant::now();
    loop {
        let got = get(client, &created.task.task_id).await.expect("tasks/get");
        assert_eq!(got.task.task.task_id, created.task.task_id);
        let status = got.task.status();
        if status == wanted {
            return got.task.payload;
        }
        assert!(
            !status.is_terminal(),
            "the task ended {status:?} while waiting for {wanted:?}: {:?}",
            got.task.payload
        );
        assert!(
            started.elapsed() < WAIT_LIMIT,
            "the task is still {status:?} after {WAIT_LIMIT:?}, waiting for {wanted:?}"
        );
        tokio::time::sleep(interval).await;
    }
}

/// The `CallToolResult` a completed task carries, as JSON.
fn completed_result(payload: TaskPayload) -> Value {
    match payload {
        TaskPayload::Completed { result } => Value::Object(result),
        other => panic!("expected a completed task, got {other:?}"),
    }
}

/// The one text content of a tool result.
fn text_of(result: &Value) -> &str {
    assert_eq!(
        result["content"].as_array().map(Vec::len),
        Some(1),
        "{result}"
    );
    assert_eq!(result["content"][0]["type"], "text", "{result}");
    assert_ne!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().expect("text content")
}

/// The JSON-RPC error a request failed with.
fn rpc_error(error: ServiceError) -> (i32, String) {
    match error {
        ServiceError::McpError(error) => (error.code.0, error.message.into_owned()),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_polls_a_task_to_its_result() {
    let client = connect(&[]).await;

    // The handler's own rmcp tools and the runtime's tools, in one list.
    let tools = within("tools/list", client.list_all_tools())
        .await
        .expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    for name in [
        "add",
        "word_count",
        "slow_compute",
        "confirm_delete",
        "word_count_task",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    // An ordinary rmcp tool answers at once, even though the request declares Tasks.
    let add = CallToolRequestParams::new("add").with_arguments(arguments(json!({"a": 2, "b": 40})));
    let sum = within("tools/call", client.call_tool_once(add))
        .await
        .expect("tools/call add");
    let CallToolResponse::Complete(sum) = sum else {
        panic!("add: expected a result, got {sum:?}");
    };
    assert_eq!(text_of(&serde_json::to_value(&sum).unwrap()), "42");

    // A task-capable tool runs as a task when the request declares the extension.
    let created = create_task(
        &client,
        "slow_compute",
        json!({"seconds": 0.2, "label": "by rmcp"}),
    )
    .await;
    assert_eq!(created.task.status, TaskStatus::Working);
    assert_eq!(created.task.poll_interval_ms, Some(100));
    assert_eq!(created.task.ttl_ms, Some(3_600_000));
    let result = completed_result(poll_until(&client, &created, TaskStatus::Completed).await);
    assert_eq!(text_of(&result), "Completed by rmcp");

    // rmcp's `word_count` function, run as the task-required tool `word_count_task`.
    let created = create_task(
        &client,
        "word_count_task",
        json!({"text": "one two  three\nfour"}),
    )
    .await;
    let result = completed_result(poll_until(&client, &created, TaskStatus::Completed).await);
    assert_eq!(text_of(&result), "4");
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_answers_a_task_parked_on_input() {
    let client = connect(&[]).await;
    let created = create_task(&client, "confirm_delete", json!({"filename": "notes.txt"})).await;

    let payload = poll_until(&client, &created, TaskStatus::InputRequired).await;
    let TaskPayload::InputRequired { input_requests } = payload else {
        panic!("expected input requests, got {payload:?}");
    };
    assert_eq!(
        input_requests.keys().collect::<Vec<_>>(),
        ["confirm-delete"]
    );
    let InputRequest::Elicitation(elicit) = &input_requests["confirm-delete"] else {
        panic!("expected an elicitation, got {input_requests:?}");
    };
    let ElicitRequestParams::FormElicitationParams {
        message,
        requested_schema,
        ..
    } = &elicit.params
    else {
        panic!("expected a form elicitation, got {elicit:?}");
    };
    assert_eq!(message, "Delete notes.txt?");
    assert_eq!(
        serde_json::to_value(requested_schema).unwrap(),
        json!({"type": "object",
               "properties": {"confirm": {"type": "boolean"}},
               "required": ["confirm"]})
    );

    let answer = json!({"action": "accept", "content": {"confirm": true}});
    update(
        &client,
        &created.task.task_id,
        &[("confirm-delete", answer)],
    )
    .await
    .expect("tasks/update is acknowledged");
    let result = completed_result(poll_until(&client, &created, TaskStatus::Completed).await);
    assert_eq!(text_of(&result), "Delete confirmed: true");
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_cancels_a_task() {
    let client = connect(&[]).await;
    // An hour's sleep: only the cancellation ends it within the deadline.
    let created = create_task(&client, "slow_compute", json!({"seconds": 3600})).await;
    let task_id = &created.task.task_id;
    cancel(&client, task_id)
        .await
        .expect("tasks/cancel is acknowledged");
    let payload = poll_until(&client, &created, TaskStatus::Cancelled).await;
    assert_eq!(payload, TaskPayload::Cancelled);
    // Cancelling a finished task is acknowledged too, and changes nothing.
    cancel(&client, task_id)
        .await
        .expect("a second tasks/cancel is acknowledged");
    let got = get(&client, task_id).await.expect("tasks/get");
    assert_eq!(got.task.status(), TaskStatus::Cancelled);
    // A task id the server never minted.
    let unknown = get(&client, "no-such-task")
        .await
        .expect_err("an unknown task");
    assert_eq!(
        rpc_error(unknown),
        (-32602, "Unknown or inaccessible taskId".to_owned())
    );
    close(client).await;
}

/// `--store sqlite:PATH --principal NAME`: the task store shared by the processes of one test,
/// one after the other.
fn as_principal<'a>(store: &'a str, principal: &'a str) -> [&'a str; 4] {
    ["--store", store, "--principal", principal]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_tasks_belong_to_the_fixed_principal() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("tasks.db").display());
    // The secret the scope keys derive from, created beside the database by the first process.
    let secret = dir.path().join("tasks.db.secret");

    // alice's process creates a task and reads it to its result.
    let alice = connect(&as_principal(&store, "alice")).await;
    let created = create_task(&alice, "word_count_task", json!({"text": "a b c"})).await;
    let result = completed_result(poll_until(&alice, &created, TaskStatus::Completed).await);
    assert_eq!(text_of(&result), "3");
    close(alice).await;
    assert!(secret.exists(), "{} was created", secret.display());

    // bob's process, on the same store and secret: alice's task is not his.
    let bob = connect(&as_principal(&store, "bob")).await;
    let task_id = &created.task.task_id;
    let refused = (-32602, "Unknown or inaccessible taskId".to_owned());
    let got = get(&bob, task_id).await.expect_err("bob's tasks/get");
    assert_eq!(rpc_error(got), refused);
    let answer = json!({"action": "accept", "content": {}});
    let updated = update(&bob, task_id, &[("k", answer)]).await;
    assert_eq!(rpc_error(updated.expect_err("bob's tasks/update")), refused);
    let cancelled = cancel(&bob, task_id).await;
    assert_eq!(
        rpc_error(cancelled.expect_err("bob's tasks/cancel")),
        refused
    );
    close(bob).await;

    // alice again, in a new process: her task, still completed (bob's cancel changed nothing).
    let alice = connect(&as_principal(&store, "alice")).await;
    let got = get(&alice, task_id)
        .await
        .expect("alice's tasks/get after a restart");
    assert_eq!(text_of(&completed_result(got.task.payload)), "3");
    close(alice).await;
}
