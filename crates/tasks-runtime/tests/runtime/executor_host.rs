//! A third host, outside both adapters: line-delimited JSON-RPC over an in-memory pipe (what a
//! stdio server reads and writes), serving task creation, `tasks/get` and `tasks/cancel` through
//! the core's planner and the [`Executor`] alone. What the host writes is only its framing; the
//! lookup, the caller's sealing, the legacy-only reach and the wire forms are the executor's.

use std::sync::Arc;

use serde_json::{json, Value};
use tasks_core::plan::{parse_call, plan_call, plan_task_request, CallContext, StateKey};
use tasks_core::wire::ResultMeta;
use tasks_core::{JsonObject, McpError, Method, RequestMeta, TaskPolicy};
use tasks_runtime::{CallStep, Caller, Executor, PlannedCall, Tool};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

/// No HTTP here: no routing headers to check.
const NO_HEADERS: &[(&str, &[u8])] = &[];

/// Answers one request line with one response line.
async fn answer(executor: &Executor, line: &str) -> Value {
    let request: Value = serde_json::from_str(line).expect("a JSON-RPC request");
    let (id, params) = (request["id"].clone(), request["params"].clone());
    let method = Method::parse(request["method"].as_str().unwrap_or_default());
    let outcome = async {
        let meta = RequestMeta::parse(Some(&params))?;
        let (scope, caller) = (Caller::shared().scope, Caller::shared());
        let answer = match method {
            Some(method) if method.is_task_method() => {
                let action = plan_task_request(method, &params, &meta)?;
                executor.task_method(action, &scope).await?
            }
            Some(Method::ToolsCall) => {
                let call = parse_call(&params)?;
                let tool = executor.runtime().tools().find(call.name)?;
                let cx = CallContext {
                    params: params.as_object().expect("params"),
                    meta: &meta,
                    tasks_declared: meta.declares_tasks()?,
                    scope: scope.as_str(),
                    state_key: executor.state_key(),
                    now: executor.runtime().now(),
                };
                let plan = plan_call(&call, &tool, NO_HEADERS, cx)?;
                let arguments = params["arguments"].as_object().cloned().unwrap_or_default();
                let now = cx.now;
                let call = PlannedCall {
                    id: id.clone(),
                    tool,
                    arguments,
                    meta,
                    now,
                };
                match executor.call(call, plan, &caller).await? {
                    CallStep::Answer(answer) => answer,
                    CallStep::RunNow(_) => return Err(McpError::MethodNotFound),
                }
            }
            _ => return Err(McpError::MethodNotFound),
        };
        Ok::<_, McpError>(serde_json::to_value(executor.view(&answer)).expect("a result"))
    };
    match outcome.await {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error.to_error_object()}),
    }
}

/// Serves `input` line by line, answering on `output`, until `input` ends.
async fn serve(
    executor: Executor,
    input: impl tokio::io::AsyncRead + Unpin,
    mut output: impl tokio::io::AsyncWrite + Unpin,
) {
    let mut lines = BufReader::new(input).lines();
    while let Some(line) = lines.next_line().await.expect("read") {
        let mut reply = serde_json::to_vec(&answer(&executor, &line).await).expect("encode");
        reply.push(b'\n');
        output.write_all(&reply).await.expect("write");
    }
}

fn request(id: u64, method: &str, mut params: JsonObject, caps: Value) -> String {
    params.insert(
        "_meta".into(),
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": caps}),
    );
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[tokio::test(start_paused = true)]
async fn a_line_delimited_host_serves_tasks_through_the_executor_alone() {
    let block = Tool::new("block", "Runs until cancelled", |ctx| async move {
        ctx.cancellation().cancelled().await;
        Err::<Value, _>(tasks_runtime::ToolError::Cancelled)
    })
    .with_policy(TaskPolicy::Required);
    let runtime = tasks_test_support::runtime::runtime(vec![block], Default::default());
    let meta = Arc::new(ResultMeta::new(JsonObject::new()));
    let executor = Executor::new(runtime, meta, StateKey::from_bytes([7; 32]));
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_in, server_out) = tokio::io::split(server);
    tokio::spawn(serve(executor, server_in, server_out));
    let (client_in, mut client_out) = tokio::io::split(client);
    let mut replies = BufReader::new(client_in).lines();
    let mut ask = async |line: String| {
        client_out
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        let reply = replies.next_line().await.unwrap().expect("a reply");
        serde_json::from_str::<Value>(&reply).unwrap()
    };
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let object = |value: Value| value.as_object().cloned().unwrap();

    let created = ask(request(
        1,
        "tools/call",
        object(json!({"name": "block"})),
        tasks.clone(),
    ))
    .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let get = || object(json!({"taskId": id}));
    let got = ask(request(2, "tasks/get", get(), tasks.clone())).await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    // Declaring nothing, or only the 2025 capability, reaches no task of the extension.
    for caps in [
        json!({}),
        json!({"tasks": {"requests": {"tools": {"call": {}}}}}),
    ] {
        let refused = ask(request(3, "tasks/get", get(), caps)).await;
        assert_eq!(refused["error"]["code"], -32021, "{refused}");
    }
    let ack = ask(request(4, "tasks/cancel", get(), tasks.clone())).await;
    assert_eq!(
        ack["result"],
        json!({"resultType": "complete", "_meta": {}}),
        "{ack}"
    );
    let got = ask(request(5, "tasks/get", get(), tasks.clone())).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    let unknown = ask(request(
        6,
        "tasks/get",
        object(json!({"taskId": "nope"})),
        tasks,
    ))
    .await;
    assert_eq!(
        unknown["error"]["message"],
        "Unknown or inaccessible taskId"
    );
}
