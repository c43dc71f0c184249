//! The terminal client without a terminal (stdin closed) against the fixture: every
//! documented exit code, `--answer`, `--json`, and `get`, `watch` and `cancel` of a task
//! created elsewhere. Each run is bounded by the client's own `--timeout` and by nextest.

// Modules rather than binaries of their own (each integration-test binary links the
// whole stack, and linking is slow): their tests are named `<module>::<test>`.
mod pty;

use std::io::BufRead as _;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use tasks_test_support::fixture::{quick_settings, start};

use serde_json::{json, Value};
use tasks_client::{Client, Execution, SettleOptions};

/// `mcp-tasks ARGS…` with stdin closed and, for a command that follows a task, `--timeout 30`
/// unless given: (exit code, stdout, stderr).
async fn run(args: &[&str]) -> (i32, String, String) {
    run_in(args, &[]).await
}

/// `mcp-tasks` with stdin closed and extra options as [`run`] adds them.
fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"));
    command.args(args).stdin(Stdio::null());
    let follows = matches!(args.first(), Some(&("call" | "watch" | "cancel")));
    if follows && !args.contains(&"--timeout") {
        command.args(["--timeout", "30"]);
    }
    command
}

/// [`run`] with `env` set (`Some`) or removed (`None`).
async fn run_in(args: &[&str], env: &[(&str, Option<&str>)]) -> (i32, String, String) {
    let mut command = command(args);
    for (key, value) in env {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
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
    let server = start(quick_settings()).await;
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
    // A path that takes GET only (the health check): its 405 is reported, not as another era.
    let settings = tasks_fixture::Settings::default();
    let (mcp, _handle) = tasks_fixture::server(&settings)
        .into_service()
        .await
        .expect("the fixture starts");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let root = format!("http://{}", listener.local_addr().expect("an address"));
    let app = tasks_fixture::app::router(mcp, &settings);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let (code, _, err) = run(&["tools", &format!("{root}/healthz")]).await;
    assert_eq!(code, 7, "{err}");
    assert!(
        err.contains("the server answered HTTP 405: Method not allowed")
            && err.contains(&format!("hint: the server's MCP endpoint is {root}/mcp"))
            && !err.contains("era"),
        "{err}"
    );
    // A URL without its scheme: a usage error suggesting it with http://.
    let bare = url.trim_start_matches("http://");
    let (code, _, err) = run(&["tools", bare]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("hint: did you mean {url}?")), "{err}");
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
    let server = start(quick_settings()).await;
    let url = server.url();
    let url = url.as_str();
    let (code, _, err) = run(&["call", url, "confirm_delete", "filename=a.txt"]).await;
    assert_eq!(code, 5);
    assert!(
        err.contains(r#"--answer 'confirm-delete={"confirm":true}'"#)
            && err.contains("is still on the server"),
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
    let server = start(quick_settings()).await;
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
    let server = start(quick_settings()).await;
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
    assert!(
        err.contains(&format!("Task {} cancelled.", running.id())),
        "{err}"
    );
    // Again: it was already cancelled, and this run says so.
    let (code, _, err) = run(&["cancel", &url, running.id().as_str()]).await;
    assert_eq!(code, 4);
    assert_eq!(
        err,
        format!(
            "The task {} was already cancelled; nothing was sent.\n",
            running.id()
        )
    );
    // cancel of a task that already finished: said so, and exit as completed.
    let done = start("slow_compute", json!({"seconds": 0.1, "label": "early"})).await;
    done.settle(&SettleOptions::default())
        .await
        .expect("settles");
    let (code, out, err) = run(&["cancel", &url, done.id().as_str()]).await;
    assert_eq!((code, out.as_str()), (0, "Completed early\n"));
    assert!(
        err.contains("had already finished; nothing was sent"),
        "{err}"
    );
    let (code, _, err) = run(&["get", &url, "no such id"]).await;
    assert_eq!(code, 6, "{err}");
}

/// Without a terminal, `slow_compute`'s moving status message (`Computing: 0.3 of 2 s`) prints
/// a line per tenth of its progress, not one per report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_progress_lines_are_throttled() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let (code, out, err) = run(&["call", &url, "slow_compute", "seconds=2", "label=t"]).await;
    assert_eq!((code, out.as_str()), (0, "Completed t\n"), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains(": working")).collect();
    assert!(
        lines.iter().any(|l| l.contains("working: Computing: ")),
        "the status message moves: {err}"
    );
    // About 20 reports (one per 100 ms): at most one line per tenth, and the first.
    assert!(lines.len() <= 12, "{} lines: {err}", lines.len());
}

/// A hint names the program as it was run: `cargo run --bin mcp-tasks --` under cargo (which
/// sets `CARGO`), else the path it was started by.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hints_name_the_program_as_it_was_run() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let args = ["call", &url, "confirm_delete", "filename=a.txt"];
    let (code, _, err) = run_in(&args, &[("CARGO", Some("cargo"))]).await;
    assert_eq!(code, 5, "{err}");
    assert!(
        err.contains(&format!("`cargo run --bin mcp-tasks -- watch {url} ")),
        "{err}"
    );
    let (code, _, err) = run_in(&args, &[("CARGO", None)]).await;
    assert_eq!(code, 5, "{err}");
    let path = env!("CARGO_BIN_EXE_mcp-tasks");
    assert!(err.contains(&format!("`{path} cancel {url} ")), "{err}");
}

/// `mcp-tasks ARGS…` started with stderr read line by line into the receiver.
fn spawn(args: &[&str]) -> (Child, mpsc::Receiver<String>) {
    let mut child = command(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcp-tasks starts");
    let stderr = child.stderr.take().expect("stderr");
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    (child, received)
}

/// The stderr lines up to the first containing `needle` (panics after 30 s or at the end).
async fn lines_until(lines: &mut mpsc::Receiver<String>, needle: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        match lines.try_recv() {
            Ok(line) => {
                let found = line.contains(needle);
                seen.push(line);
                if found {
                    return seen;
                }
            }
            Err(mpsc::TryRecvError::Empty) => {
                assert!(seen.len() < 10_000, "{seen:?}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(mpsc::TryRecvError::Disconnected) => panic!("no {needle:?} in {seen:?}"),
        }
    }
}

/// The rest of stderr and the exit code.
async fn finish(mut child: Child, lines: mpsc::Receiver<String>) -> (i32, String) {
    let code = tokio::task::spawn_blocking(move || child.wait().expect("waits"))
        .await
        .expect("joined")
        .code()
        .expect("an exit code");
    (code, lines.iter().collect::<Vec<_>>().join("\n"))
}

/// While a task is followed, the server goes away: one line says so and how long it is
/// retried; when a server is back on the address, one line says so, and a task it does not
/// know (a memory store forgets on restart) ends the run with a hint saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_is_told_and_a_restart_that_lost_the_task_explained() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let address = server.local_addr();
    let (child, mut lines) = spawn(&["call", &url, "slow_compute", "seconds=60"]);
    lines_until(&mut lines, "created").await;
    server.shutdown().await;
    let seen = lines_until(&mut lines, "server unreachable at").await;
    let note = seen.last().expect("the line");
    assert!(
        note.contains(&format!(
            "server unreachable at {url}, retrying for up to 300 s"
        )),
        "{note}"
    );
    let again = start(tasks_fixture::Settings {
        listen: address,
        ..quick_settings()
    })
    .await;
    let (code, rest) = finish(child, lines).await;
    assert_eq!(code, 6, "{rest}");
    assert!(
        rest.contains(&format!("server back at {url} after ")),
        "{rest}"
    );
    assert!(rest.contains("is unknown or expired"), "{rest}");
    assert!(
        rest.contains("hint: the server was unreachable while the task ran and no longer knows it"),
        "{rest}"
    );
    assert_eq!(
        rest.matches("server unreachable at").count(),
        0,
        "one line per outage: {rest}"
    );
    drop(again);
}

/// A server that stays away longer than `--retry-for`: the run gives up with exit code 7 and
/// says how to reach the task again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn following_gives_up_after_retry_for() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let (child, mut lines) = spawn(&[
        "call",
        &url,
        "slow_compute",
        "seconds=60",
        "--poll",
        "--retry-for",
        "1",
    ]);
    lines_until(&mut lines, "created").await;
    server.shutdown().await;
    let (code, rest) = finish(child, lines).await;
    assert_eq!(code, 7, "{rest}");
    assert!(
        rest.contains(&format!(
            "server unreachable at {url}, retrying for up to 1 s"
        )),
        "{rest}"
    );
    assert!(rest.contains("giving up (--retry-for 1)"), "{rest}");
    assert!(rest.contains("is still on the server"), "{rest}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_listed_and_got_with_their_arguments_and_input() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let url = url.as_str();
    let (code, out, err) = run(&["prompts", url]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "test_simple_prompt — A prompt without arguments",
            "test_prompt_with_arguments arg1=… arg2=… — A prompt with two required arguments",
            "test_prompt_with_embedded_resource resourceUri=… — A prompt embedding a resource",
            "test_prompt_with_image — A prompt with an image",
            "test_input_required_result_prompt — A prompt that asks the user for context first",
        ]
    );
    let (code, out, err) = run(&[
        "prompt",
        url,
        "test_prompt_with_arguments",
        "arg1=paris",
        "arg2=rome",
    ])
    .await;
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "user: Prompt with arguments: arg1='paris', arg2='rome'\n"
        ),
        "{err}"
    );
    let (code, out, _) = run(&["prompt", url, "test_prompt_with_image"]).await;
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("user: [image image/png, "),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], "user: Please analyze the image above.");

    // Mistakes are found before the request: exit 2.
    let (code, _, err) = run(&["prompt", url, "test_prompt_with_arguments", "arg1=x"]).await;
    assert_eq!(code, 2);
    assert!(
        err.contains("error: the prompt needs arg2: write arg2=…"),
        "{err}"
    );
    let (code, _, err) = run(&["prompt", url, "test_simple_prompt", "x=1"]).await;
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown argument x: the prompt takes none"),
        "{err}"
    );
    let (code, _, err) = run(&["prompt", url, "no_such_prompt"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("no prompt named \"no_such_prompt\""), "{err}");

    // The prompt's question: without a terminal it needs --answer (exit 5), which answers it.
    let (code, out, err) = run(&["prompt", url, "test_input_required_result_prompt"]).await;
    assert_eq!((code, out.as_str()), (5, ""));
    assert!(
        err.contains(r#"--answer 'user_context={"context":"…"}'"#)
            && err.contains("the form asks for {context: text, required}"),
        "names the --answer to give, with an answer of the form's shape: {err}"
    );
    // An --answer that is not JSON and one that is JSON but not an object: both usage errors.
    for (answer, says) in [
        (
            "user_context=hello",
            "--answer user_context: not JSON: hello",
        ),
        (
            r#"user_context="hello""#,
            r#"--answer user_context: the answer to a form is a JSON object of its fields, not "hello""#,
        ),
        (r#"user_context={"context":7}"#, "--answer user_context: "),
    ] {
        let (code, out, err) = run(&[
            "prompt",
            url,
            "test_input_required_result_prompt",
            "--answer",
            answer,
        ])
        .await;
        assert_eq!((code, out.as_str()), (2, ""), "{answer}: {err}");
        assert!(
            err.starts_with(&format!("error: {says}")),
            "{answer}: {err}"
        );
        assert!(!err.contains("input was not given"), "{answer}: {err}");
    }
    let (code, out, err) = run(&[
        "prompt",
        url,
        "test_input_required_result_prompt",
        "--answer",
        r#"user_context={"context":"the CI run"}"#,
    ])
    .await;
    assert_eq!(
        (code, out.as_str()),
        (0, "user: Answer with this context: the CI run\n"),
        "{err}"
    );

    // An image's size is its decoded bytes, as `read` shows the same PNG's (70 bytes).
    let (code, out, _) = run(&["prompt", url, "test_prompt_with_image"]).await;
    assert_eq!(code, 0);
    assert!(
        out.starts_with("user: [image image/png, 70 bytes]\n"),
        "{out}"
    );
    let (code, out, _) = run(&["prompts", url, "--json"]).await;
    assert_eq!(code, 0);
    let prompts: Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(prompts[1]["arguments"][0]["name"], "arg1");
    assert_eq!(prompts[1]["arguments"][0]["required"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_are_listed_read_and_completed() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let url = url.as_str();
    let (code, out, err) = run(&["resources", url]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "test://static-text  static-text, text/plain — A static text resource",
            "test://static-binary  static-binary, image/png — A static binary resource: a 1x1 PNG",
            "test://watched-resource  watched-resource, text/plain — A resource whose updates \
             test_update_watched_resource announces",
            // Each skill's SKILL.md is a listed resource too (Skills extension).
            "skill://conformance/report-writing/SKILL.md  report-writing, text/markdown, 378 \
             bytes — Write a short status report from a task's result, in the house style",
            "skill://git-workflow/SKILL.md  git-workflow, text/markdown, 169 bytes — Branch, \
             commit and merge the way this project does",
            "test://template/{id}/data  template-data, application/json, template — Data for \
             one id, read from the URI",
        ]
    );
    let (code, out, _) = run(&["read", url, "test://static-text"]).await;
    assert_eq!(
        (code, out.as_str()),
        (0, "This is the content of the static text resource.\n")
    );
    let (code, out, _) = run(&["read", url, "test://template/42/data"]).await;
    assert_eq!(code, 0);
    let body: Value = serde_json::from_str(&out).expect("the template's JSON");
    assert_eq!(body["data"], "Data for ID: 42");

    // Binary: its type and size, or its bytes in a file.
    let (code, out, _) = run(&["read", url, "test://static-binary"]).await;
    assert_eq!(code, 0);
    assert!(
        out.starts_with("test://static-binary: binary, image/png, ")
            && out.ends_with(" bytes (--output FILE writes it)\n"),
        "{out}"
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("pixel.png");
    let file_arg = file.to_str().expect("a UTF-8 path");
    let (code, out, err) = run(&["read", url, "test://static-binary", "--output", file_arg]).await;
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let bytes = std::fs::read(&file).expect("the file was written");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{bytes:?}");
    assert!(
        err.contains(&format!(
            "Wrote {} bytes (image/png) to {file_arg}",
            bytes.len()
        )),
        "{err}"
    );
    assert!(out.is_empty());
    // --output - is stdout: the bytes as they are, nothing said; --json does not apply to
    // --output (a file is written and said as without it).
    for json in [false, true] {
        let mut args = vec!["read", url, "test://static-binary", "--output", "-"];
        if json {
            args.push("--json");
        }
        let mut command = command(&args);
        command.current_dir(dir.path());
        let output = tokio::task::spawn_blocking(move || command.output().expect("runs"))
            .await
            .expect("joined");
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        assert_eq!(output.stdout, bytes, "{args:?}");
        assert!(output.stderr.is_empty(), "{args:?}");
    }
    let (code, out, err) = run(&[
        "read",
        url,
        "test://static-binary",
        "--output",
        file_arg,
        "--json",
    ])
    .await;
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.starts_with("Wrote "), "{err}");
    assert!(!dir.path().join("-").exists(), "no file named -");
    let (code, _, err) = run(&["read", url, "test://nothing"]).await;
    assert_eq!(code, 6);
    assert!(
        err.contains("Resource not found (-32602): test://nothing"),
        "names the URI: {err}"
    );

    let (code, out, _) = run(&[
        "complete",
        url,
        "--prompt",
        "test_prompt_with_arguments",
        "arg1",
        "par",
    ])
    .await;
    assert_eq!((code, out.as_str()), (0, "paris\npark\nparty\n"));
    let (code, out, _) = run(&[
        "complete",
        url,
        "--resource",
        "test://template/{id}/data",
        "id",
    ])
    .await;
    assert_eq!((code, out.as_str()), (0, "1\n12\n123\n"));
    // An argument the prompt does not take: the ones it takes are named (a usage error).
    let (code, out, err) = run(&[
        "complete",
        url,
        "--prompt",
        "test_prompt_with_arguments",
        "arg3",
        "x",
    ])
    .await;
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains(
            "error: the prompt \"test_prompt_with_arguments\" has no argument \"arg3\": it takes \
             arg1, arg2"
        ),
        "{err}"
    );
    // No suggestions: said on stderr, nothing on stdout.
    let (code, out, err) = run(&[
        "complete",
        url,
        "--prompt",
        "test_prompt_with_arguments",
        "arg1",
        "zzz",
    ])
    .await;
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(
        err.contains("(no suggestions for arg1 starting with \"zzz\")"),
        "{err}"
    );

    let (code, out, _) = run(&["read", url, "test://static-binary", "--json"]).await;
    assert_eq!(code, 0);
    let read: Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert!(read["contents"][0]["blob"]
        .as_str()
        .is_some_and(|b| b.starts_with("iVBOR")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_prompts_or_resources_is_a_refusal() {
    let server = tasks_http::ServerBuilder::new("bare", "0.0.0")
        .bind("127.0.0.1:0")
        .await
        .expect("binds");
    let url = server.url();
    for (args, method) in [
        (vec!["prompts", url.as_str()], "prompts/list"),
        (vec!["resources", url.as_str()], "resources/list"),
        (vec!["read", url.as_str(), "test://x"], "resources/read"),
        (vec!["skills", url.as_str()], "skills/list"),
        (
            vec!["skill", url.as_str(), "skill://x/SKILL.md"],
            "skills/get",
        ),
        (
            vec!["dir", url.as_str(), "skill://x"],
            "resources/directory/read",
        ),
    ] {
        let (code, _, err) = run(&args).await;
        assert_eq!(code, 6, "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "error: the server does not offer {method}: Method not found (-32601)"
            )),
            "{err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_listed_shown_read_verified_and_browsed() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let url = url.as_str();
    let report = "skill://conformance/report-writing/SKILL.md";
    let (code, out, err) = run(&["skills", url]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "skill://conformance/report-writing/SKILL.md  report-writing, 3 files, 585 bytes — \
             Write a short status report from a task's result, in the house style",
            "skill://git-workflow/SKILL.md  git-workflow, 1 file, 169 bytes — Branch, commit \
             and merge the way this project does",
        ]
    );

    let (code, out, err) = run(&["skill", url, report]).await;
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..6],
        [
            report,
            "name: report-writing",
            "description: Write a short status report from a task's result, in the house style",
            "license: MIT OR Apache-2.0",
            "metadata: {\"version\":\"1.0\"}",
            "files: 3, 585 bytes",
        ]
    );
    let style_digest = tasks_core::skill::digest(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tasks-conformance/skills/report-writing/references/style.md"
        ))
        .expect("the fixture's file"),
    );
    assert_eq!(
        lines[6..],
        [
            format!(
                "  SKILL.md  378 bytes  {}",
                tasks_core::skill::digest(
                    &std::fs::read(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/../tasks-conformance/skills/report-writing/SKILL.md"
                    ))
                    .expect("the fixture's file")
                )
            ),
            format!("  references/style.md  122 bytes  {style_digest}"),
            format!(
                "  templates/summary.md  85 bytes  {}",
                tasks_core::skill::digest(
                    &std::fs::read(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/../tasks-conformance/skills/report-writing/templates/summary.md"
                    ))
                    .expect("the fixture's file")
                )
            ),
        ]
    );
    // --json: the skills as an array of their entries (as `prompts --json`), `skill --json`
    // the entry alone (not the skills/get result with its ttlMs).
    let keys = |entry: &Value| {
        entry
            .as_object()
            .map(|o| o.keys().cloned().collect::<std::collections::BTreeSet<_>>())
    };
    let entry_keys = Some(
        ["uri", "frontmatter", "resources"]
            .map(str::to_owned)
            .into_iter()
            .collect(),
    );
    let (code, out, _) = run(&["skills", url, "--json"]).await;
    assert_eq!(code, 0);
    let listed: Value = serde_json::from_str(&out).expect("JSON on stdout");
    let listed = listed.as_array().expect("an array");
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0]["uri"], report);
    assert!(listed.iter().all(|e| keys(e) == entry_keys), "{out}");
    let (code, out, _) = run(&["skill", url, report, "--json"]).await;
    assert_eq!(code, 0);
    let entry: Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(keys(&entry), entry_keys, "{out}");
    assert_eq!(&entry, &listed[0]);
    assert_eq!(entry["resources"][1]["digest"], style_digest.as_str());
    assert_eq!(entry["frontmatter"]["metadata"], json!({"version": "1.0"}));

    // Reads, by path below the skill or by URI: verified, printed as they are.
    let style =
        include_str!("../../../tasks-conformance/skills/report-writing/references/style.md");
    let (code, out, err) = run(&["skill", url, report, "--read", "references/style.md"]).await;
    assert_eq!((code, out.as_str(), err.as_str()), (0, style, ""));
    let (code, out, _) = run(&[
        "skill",
        url,
        report,
        "--read",
        "skill://conformance/report-writing/SKILL.md",
    ])
    .await;
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            include_str!("../../../tasks-conformance/skills/report-writing/SKILL.md")
        )
    );
    let (code, out, _) = run(&[
        "skill",
        url,
        report,
        "--read",
        "references/style.md",
        "--json",
    ])
    .await;
    assert_eq!(code, 0);
    let read: Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(read["verified"], true);
    assert_eq!(read["contents"][0]["text"], style);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("style.md");
    let file_arg = file.to_str().expect("a UTF-8 path");
    let (code, out, err) = run(&[
        "skill",
        url,
        report,
        "--read",
        "references/style.md",
        "--output",
        file_arg,
    ])
    .await;
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert_eq!(std::fs::read_to_string(&file).expect("written"), style);
    assert!(
        err.contains(&format!("Wrote 122 bytes (text/markdown) to {file_arg}")),
        "{err}"
    );
    // --output - is stdout: the bytes as they are, nothing said, --json or not.
    for json in [&[][..], &["--json"][..]] {
        let mut args = vec![
            "skill",
            url,
            report,
            "--read",
            "references/style.md",
            "--output",
            "-",
        ];
        args.extend(json);
        let (code, out, err) = run(&args).await;
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (0, style, ""),
            "{args:?}"
        );
    }
    // A file the skill does not list: a usage error naming the ones it lists.
    let (code, out, err) = run(&["skill", url, report, "--read", "references/other.md"]).await;
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains(
            "error: the skill skill://conformance/report-writing/SKILL.md lists no file \
             skill://conformance/report-writing/references/other.md (it lists SKILL.md, \
             references/style.md, templates/summary.md)"
        ),
        "{err}"
    );
    let (code, _, err) = run(&["skill", url, "skill://nothing/SKILL.md"]).await;
    assert_eq!(code, 6);
    assert!(
        err.contains("Skill not found (-32602): skill://nothing/SKILL.md"),
        "{err}"
    );

    let (code, out, err) = run(&["dir", url, "skill://conformance/report-writing"]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "skill://conformance/report-writing/SKILL.md  SKILL.md, text/markdown, 378 bytes",
            "skill://conformance/report-writing/references  references, directory",
            "skill://conformance/report-writing/templates  templates, directory",
        ]
    );
    let (code, out, _) = run(&[
        "dir",
        url,
        "skill://conformance/report-writing/templates",
        "--json",
    ])
    .await;
    assert_eq!(code, 0);
    let listed: Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(
        listed["resources"][0]["uri"],
        "skill://conformance/report-writing/templates/summary.md"
    );
    let (code, _, err) = run(&["dir", url, report]).await;
    assert_eq!(code, 6);
    assert!(err.contains("Not a directory resource (-32602)"), "{err}");
}

/// A skill asked for by its directory, its name or one of its files, and a directory asked for
/// with a trailing `/`, as a file, or as `skill://`: the server's refusal (exit 6) with a hint
/// from the skill list; a trailing `/` on a directory is dropped before sending.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_or_directory_asked_for_wrongly_gets_a_hint() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let url = url.as_str();
    let program = env!("CARGO_BIN_EXE_mcp-tasks");
    let report = "skill://conformance/report-writing/SKILL.md";
    let run = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_in(&args, &[("CARGO", None)]).await
        }
    };
    for asked in [
        "skill://conformance/report-writing",
        "skill://conformance/report-writing/",
        "report-writing",
    ] {
        let (code, out, err) = run(&["skill", url, asked]).await;
        assert_eq!((code, out.as_str()), (6, ""), "{asked}: {err}");
        assert_eq!(
            err,
            format!(
                "error: the server refused the request: Skill not found (-32602): {asked}\n\
                 hint: did you mean {report}?\n"
            )
        );
    }
    let style = "skill://conformance/report-writing/references/style.md";
    let (code, _, err) = run(&["skill", url, style]).await;
    assert_eq!(code, 6, "{err}");
    assert_eq!(
        err,
        format!(
            "error: the server refused the request: Skill not found (-32602): {style}\n\
             hint: that is a file of skill {report}; read it with `{program} skill {url} {report} \
             --read references/style.md`\n"
        )
    );
    let (code, _, err) = run(&["skill", url, "skill://nothing/SKILL.md"]).await;
    assert_eq!(code, 6, "{err}");
    assert!(
        err.ends_with(&format!(
            "hint: `{program} skills {url}` lists the server's skills\n"
        )),
        "{err}"
    );

    // dir: one trailing slash is dropped.
    let (code, out, err) = run(&["dir", url, "skill://conformance/report-writing/"]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().next(),
        Some("skill://conformance/report-writing/SKILL.md  SKILL.md, text/markdown, 378 bytes")
    );
    let (code, out, err) = run(&["dir", url, style]).await;
    assert_eq!((code, out.as_str()), (6, ""), "{err}");
    assert_eq!(
        err,
        format!(
            "error: the server refused the request: Not a directory resource (-32602): {style}\n\
             hint: it is a file: `{program} read {url} {style}` reads it; `{program} skill {url} \
             {report} --read references/style.md` reads it verified against its skill's entry\n"
        )
    );
    let (code, _, err) = run(&["dir", url, "skill://"]).await;
    assert_eq!(code, 6, "{err}");
    assert_eq!(
        err,
        format!(
            "error: the server refused the request: Not a directory resource (-32602): skill://\n\
             hint: skill:// is no directory: `{program} skills {url}` lists the skills, and `dir` \
             takes the directory of one (its URI without /SKILL.md)\n"
        )
    );
    // A directory the server does not have: the refusal alone.
    let (code, _, err) = run(&["dir", url, "skill://nothing"]).await;
    assert_eq!(code, 6, "{err}");
    assert!(!err.contains("hint"), "{err}");
}

/// A server whose skill entries do not match its files: `skill://lying/SKILL.md` lists
/// `a.md` with the digest and size of `hello` but serves `hallo`, and lists `b.md` as 3
/// bytes but serves 5; `skill://moving/SKILL.md` has `"dynamic"` files.
async fn lying_skill_server() -> String {
    let hello = tasks_core::skill::digest(b"hello");
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |body: String| {
            let hello = hello.clone();
            async move {
                let request: Value = serde_json::from_str(&body).expect("JSON");
                let uri = request["params"]["uri"].as_str().unwrap_or_default();
                let frontmatter = json!({"name": "lying", "description": "Lies"});
                let result = match request["method"].as_str() {
                    Some("server/discover") => json!({"supportedVersions": ["2026-07-28"],
                        "capabilities": {"extensions": {"io.modelcontextprotocol/skills": {}}}}),
                    Some("skills/get") if uri == "skill://moving/SKILL.md" => json!({"skill": {
                        "uri": uri, "frontmatter": frontmatter, "resources": "dynamic"}}),
                    Some("skills/get") => json!({"skill": {"uri": uri, "frontmatter": frontmatter,
                    "resources": [
                        {"uri": "skill://lying/a.md", "digest": hello, "size": 5},
                        {"uri": "skill://lying/b.md", "digest": hello, "size": 3},
                    ]}, "ttlMs": 60_000}),
                    _ => json!({"contents": [{"uri": uri, "mimeType": "text/markdown",
                        "text": "hallo"}]}),
                };
                axum::Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_file_that_does_not_match_its_entry_is_exit_9_and_never_shown() {
    let url = lying_skill_server().await;
    let lying = "skill://lying/SKILL.md";
    let (code, out, err) = run_in(
        &["skill", &url, lying, "--read", "a.md"],
        &[("CARGO", None)],
    )
    .await;
    assert_eq!((code, out.as_str()), (9, ""), "{err}");
    // What did not match, and that the skill may have changed since its entry was fetched.
    assert_eq!(
        err,
        format!(
            "error: the skill file skill://lying/a.md failed verification: its digest is {}, \
             the skill's entry says {}\n\
             hint: the skill may have changed on the server since its entry was fetched (a \
             server may cache an entry for its ttlMs, 60 s for this one); running `{} skill {url} \
             {lying}` again fetches the current entry\n",
            tasks_core::skill::digest(b"hallo"),
            tasks_core::skill::digest(b"hello"),
            env!("CARGO_BIN_EXE_mcp-tasks")
        )
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("b.md");
    let file_arg = file.to_str().expect("a UTF-8 path");
    let (code, out, err) = run(&["skill", &url, lying, "--read", "b.md", "-o", file_arg]).await;
    assert_eq!((code, out.as_str()), (9, ""), "{err}");
    assert!(
        err.contains(
            "error: the skill file skill://lying/b.md failed verification: its size is 5 bytes, \
             the skill's entry says 3\nhint: the skill may have changed on the server"
        ),
        "{err}"
    );
    assert!(!file.exists(), "nothing is written");
    assert!(!err.contains("hallo"), "{err}");
    // Dynamic files are read, with a warning.
    let (code, out, err) = run(&["skill", &url, "skill://moving/SKILL.md", "--read", "a.md"]).await;
    assert_eq!((code, out.as_str()), (0, "hallo\n"), "{err}");
    assert!(
        err.contains(
            "warning: the skill skill://moving/SKILL.md lists its files as dynamic: \
             skill://moving/a.md is not verified"
        ),
        "{err}"
    );
    let (code, out, _) = run(&[
        "skill",
        &url,
        "skill://moving/SKILL.md",
        "--read",
        "a.md",
        "--json",
    ])
    .await;
    assert_eq!(code, 0);
    let read: Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(read["verified"], false);
}
