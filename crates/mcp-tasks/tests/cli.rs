//! The terminal client without a terminal (stdin closed) against the fixture: every
//! documented exit code, `--answer`, `--json`, and `get`, `watch` and `cancel` of a task
//! created elsewhere. Each run is bounded by the client's own `--timeout` and by nextest.

mod common;

use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use tasks_client::{Client, Execution, SettleOptions};

/// `mcp-tasks ARGS…` with stdin closed and `--timeout 30` unless given: (exit code, stdout,
/// stderr).
async fn run(args: &[&str]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"));
    command.args(args).stdin(Stdio::null());
    if !args.contains(&"--timeout") {
        command.args(["--timeout", "30"]);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = tokio::task::spawn_blocking(move || command.output().expect("mcp-tasks runs"))
        .await
        .expect("joined");
    (
        status.code().expect("an exit code"),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_follow_the_outcome() {
    let server = common::fixture().await;
    let url = server.url();
    let url = url.as_str();
    let (code, out, _) = run(&["call", url, "greet", "name=Ada"]).await;
    assert_eq!((code, out.as_str()), (0, "Hello, Ada!\n"));
    let (code, out, err) = run(&["call", url, "slow_compute", "seconds=0.2", "label=x"]).await;
    assert_eq!((code, out.as_str()), (0, "Completed x\n"), "{err}");
    assert!(err.contains("created"), "{err}");
    let (code, out, _) = run(&["call", url, "failing_job"]).await;
    assert_eq!((code, out.as_str()), (1, "The task job failed\n"));
    let (code, _, err) = run(&["call", url, "protocol_error_job"]).await;
    assert_eq!(code, 3);
    assert!(err.contains("Tool raised an exception (-32603)"), "{err}");
    let (code, _, err) = run(&["call", url, "slow_compute", "seconds=soon"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("seconds must be a number"), "{err}");
    let (code, _, err) = run(&["call", url, "no_such_tool"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("no tool named \"no_such_tool\""), "{err}");
    let (code, _, err) = run(&["call", "http://127.0.0.1:9/mcp", "greet"]).await;
    assert_eq!(code, 7);
    assert!(err.contains("cannot reach the server"), "{err}");
    // A URL without the endpoint's path: the server's 404 is reported, with the endpoint.
    let root = url.trim_end_matches("/mcp");
    let (code, _, err) = run(&["tools", root]).await;
    assert_eq!(code, 7, "{err}");
    assert!(
        err.contains(
            "no MCP endpoint at this URL: the server answered HTTP 404: Not found: the MCP \
             endpoint is /mcp"
        ),
        "{err}"
    );
    assert!(
        err.contains(&format!("hint: the server's MCP endpoint is {root}/mcp")),
        "{err}"
    );
    let (code, _, _) = run(&["call", url]).await;
    assert_eq!(code, 2, "clap's usage error");
    let (code, out, _) = run(&[
        "call",
        url,
        "slow_compute",
        "seconds=60",
        "--timeout",
        "0.3",
    ])
    .await;
    // The wait ends; the task keeps running.
    assert_eq!((code, out.as_str()), (8, ""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_without_a_terminal_needs_an_answer() {
    let server = common::fixture().await;
    let url = server.url();
    let url = url.as_str();
    let (code, _, err) = run(&["call", url, "confirm_delete", "filename=a.txt"]).await;
    assert_eq!(code, 5);
    assert!(
        err.contains("--answer 'confirm-delete=<json>'") && err.contains("is still on the server"),
        "{err}"
    );
    let (code, out, _) = run(&[
        "call",
        url,
        "confirm_delete",
        "filename=a.txt",
        "--answer",
        r#"confirm-delete={"confirm":true}"#,
    ])
    .await;
    assert_eq!((code, out.as_str()), (0, "Delete confirmed: true\n"));
    let (code, out, _) = run(&[
        "call",
        url,
        "confirm_delete",
        "filename=a.txt",
        "--answer",
        r#"confirm-delete={"action":"decline"}"#,
    ])
    .await;
    assert_eq!(
        (code, out.as_str()),
        (0, "Delete declined: nothing deleted\n")
    );
    let (code, _, err) = run(&["call", url, "greet", "--answer", "oops"]).await;
    assert_eq!(code, 2, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_output_is_the_raw_result() {
    let server = common::fixture().await;
    let url = server.url();
    let (code, out, _) = run(&[
        "call",
        &url,
        "greet",
        "--args",
        r#"{"name":"Ada"}"#,
        "--json",
    ])
    .await;
    assert_eq!(code, 0);
    let result: Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(result["content"][0]["text"], "Hello, Ada!");
    assert_eq!(result["resultType"], "complete");
    let (code, out, _) = run(&["tools", &url, "--json"]).await;
    assert_eq!(code, 0);
    let tools: Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert!(tools
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == "greet")));
}

/// Declares form elicitation (so `confirm_delete` may start) and answers nothing: the
/// terminal client does the answering.
struct DeclaresForms;

impl tasks_client::InputHandler for DeclaresForms {
    fn capabilities(&self) -> Vec<tasks_core::input::ClientCapability> {
        vec![tasks_core::input::ClientCapability::ElicitationForm]
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_watch_and_cancel_a_task_created_elsewhere() {
    let server = common::fixture().await;
    let url = server.url();
    let client = Client::builder(&url)
        .input_handler(DeclaresForms)
        .connect()
        .await
        .expect("connects");
    let start = |tool: &'static str, arguments: Value| {
        let client = client.clone();
        async move {
            let arguments = arguments.as_object().cloned().expect("object");
            match client.call_tool(tool, arguments).await.expect("call") {
                Execution::Task(task) => task,
                other => panic!("{tool} is a task: {other:?}"),
            }
        }
    };
    // watch answers the parked task from --answer and prints the result.
    let parked = start("confirm_delete", json!({"filename": "w.txt"})).await;
    let id = parked.id().to_string();
    let (code, out, _) = run(&[
        "watch",
        &url,
        &id,
        "--answer",
        r#"confirm-delete={"confirm":false}"#,
    ])
    .await;
    assert_eq!((code, out.as_str()), (0, "Delete confirmed: false\n"));
    let (code, out, _) = run(&["get", &url, &id]).await;
    assert_eq!(code, 0);
    assert!(out.starts_with(&format!("task {id}: completed")), "{out}");

    // cancel of a running task: cancelled, exit 4.
    let running = start("slow_compute", json!({"seconds": 60})).await;
    let (code, _, err) = run(&["cancel", &url, running.id().as_str()]).await;
    assert_eq!(code, 4);
    assert!(err.contains("cancelled"), "{err}");
    // cancel of a task that already finished: said so, and exit as completed.
    let done = start("slow_compute", json!({"seconds": 0.1, "label": "early"})).await;
    done.settle(&SettleOptions::default())
        .await
        .expect("settles");
    let (code, out, err) = run(&["cancel", &url, done.id().as_str()]).await;
    assert_eq!((code, out.as_str()), (0, "Completed early\n"));
    assert!(err.contains("had already finished"), "{err}");
    let (code, _, err) = run(&["get", &url, "no such id"]).await;
    assert_eq!(code, 6, "{err}");
}
