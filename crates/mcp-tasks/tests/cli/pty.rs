//! The terminal client in a real pseudo-terminal: answering `confirm_delete` at the prompt
//! (yes, Esc to decline, Ctrl-C to cancel the task), two forms of `multi_input` (a yes/no and
//! an optional text field each), Ctrl-C on a running `slow_compute` ending the task
//! `cancelled` on the server, the progress bar of `slow_compute` (with its rate and time
//! left), a form the client cannot show (from a stand-in server), and Ctrl-C before anything
//! is sent.
//!
//! Each test drives `mcp-tasks` with rexpect; every expectation waits up to [`EXPECT_MS`].
//! The tests spawn processes, so nextest runs them one at a time (`.config/nextest.toml`).

use tasks_test_support::fixture::{quick_settings, start};

use std::process::Command;
use std::time::Duration;

use rexpect::process::WaitStatus;
use rexpect::session::PtySession;
use tasks_client::Client;
use tasks_core::{TaskId, TaskStatus};
use tasks_http::RunningServer;

/// How long each expectation may wait.
const EXPECT_MS: u64 = 60_000;

/// `mcp-tasks ARGS…` in a pseudo-terminal.
fn spawn(args: &[&str]) -> PtySession {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"));
    command
        .args(args)
        .env("TERM", "xterm")
        .env("COLUMNS", "100");
    rexpect::session::spawn_command(command, Some(EXPECT_MS)).expect("mcp-tasks starts in a pty")
}

/// Types `keys` (raw: `\r` is Enter, `\x1b` Escape).
fn type_keys(session: &mut PtySession, keys: &str) {
    session.send(keys).expect("keys sent");
    session.flush().expect("keys flushed");
}

/// Waits for the process to end; its exit code.
fn exit_code(mut session: PtySession) -> i32 {
    session.exp_eof().expect("the output ends");
    match session.process().wait().expect("exit status") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("mcp-tasks did not exit normally: {other:?}"),
    }
}

/// The task id printed in "Task <id> created".
fn created(session: &mut PtySession) -> String {
    let (_, matched) = session
        .exp_regex(r"Task [A-Za-z0-9_-]+ created")
        .expect("a task is created");
    matched
        .trim_start_matches("Task ")
        .trim_end_matches(" created")
        .to_owned()
}

async fn server_status(server: &RunningServer, id: &str) -> TaskStatus {
    let client = Client::builder(server.url()).build();
    let task = client.task(TaskId::parse(id).expect("a task id"));
    task.get().await.expect("tasks/get").state.status()
}

/// Runs `script` (blocking pty work) beside the fixture.
async fn drive<T: Send + 'static>(script: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(script)
        .await
        .expect("the script runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirm_delete_asks_and_completes_on_yes() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let (code, id) = drive(move || {
        let mut session = spawn(&["call", &url, "confirm_delete", "filename=a.txt"]);
        let id = created(&mut session);
        session.exp_string("Delete a.txt?").expect("the question");
        type_keys(&mut session, "y\r");
        session
            .exp_string("Delete confirmed: true")
            .expect("the result");
        (exit_code(session), id)
    })
    .await;
    assert_eq!(code, 0);
    assert_eq!(server_status(&server, &id).await, TaskStatus::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_at_the_prompt_declines() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let code = drive(move || {
        let mut session = spawn(&["call", &url, "confirm_delete", "filename=b.txt"]);
        session.exp_string("Delete b.txt?").expect("the question");
        type_keys(&mut session, "\x1b");
        session
            .exp_string("<declined>")
            .expect("the prompt says what Esc did");
        session
            .exp_string("Delete declined: nothing deleted")
            .expect("the result");
        exit_code(session)
    })
    .await;
    assert_eq!(code, 0);
}

/// Calls `tool ARGS…`, waits for `shown`, presses Ctrl-C, and checks that the task ends
/// `cancelled` on the server with exit code 4.
async fn cancel_with_ctrl_c(args: &'static [&'static str], shown: &'static str) {
    let server = start(quick_settings()).await;
    let url = server.url();
    let (code, id) = drive(move || {
        let mut command = vec!["call", url.as_str()];
        command.extend_from_slice(args);
        let mut session = spawn(&command);
        let id = created(&mut session);
        session
            .exp_string(shown)
            .expect("shown before the interrupt");
        std::thread::sleep(Duration::from_millis(200));
        session.send_control('c').expect("ctrl-c");
        session
            .exp_string(&format!("Task {id} cancelled."))
            .expect("cancelled");
        (exit_code(session), id)
    })
    .await;
    assert_eq!(code, 4);
    assert_eq!(server_status(&server, &id).await, TaskStatus::Cancelled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_at_the_prompt_cancels_the_task() {
    // At the prompt the terminal is raw: the prompt reads Ctrl-C as a key, not a signal.
    cancel_with_ctrl_c(&["confirm_delete", "filename=c.txt"], "Delete c.txt?").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_a_running_task() {
    // The status line shows the task running before the interrupt.
    cancel_with_ctrl_c(&["slow_compute", "seconds=60"], "working").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_reporting_progress_gets_a_bar_with_rate_and_time_left() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let code = drive(move || {
        let mut session = spawn(&["call", &url, "slow_compute", "seconds=4", "label=bar"]);
        created(&mut session);
        // slow_compute reports the seconds it slept: a bar of 30 cells (█ or ░; rexpect reads
        // the output byte by byte, so each is matched as its three UTF-8 bytes) and how many
        // of the 4 seconds, with the share; the unit `s` comes from its status message
        // (`Computing: 1.2 of 4 s`).
        session
            .exp_regex(r"(?:\x{e2}\x{96}[\x{88}\x{91}]){30} \d+(\.\d+)?/4 s \(\d+%\) ")
            .expect("a progress bar");
        // Once measured: how fast it goes (seconds per second, in that unit) and how long is
        // left.
        session
            .exp_regex(r"/4 s \(\d+%\) \S+ \d+(\.\d+)? s/s \S+ ETA \d+s")
            .expect("its rate and time left");
        session.exp_string("Completed bar").expect("the result");
        exit_code(session)
    })
    .await;
    assert_eq!(code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_forms_are_asked_in_turn() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let code = drive(move || {
        let mut session = spawn(&["call", &url, "multi_input"]);
        for (form, name) in [("First input", "Ada"), ("Second input", "Grace")] {
            session.exp_string(form).expect("the form");
            session.exp_string("confirm").expect("its yes/no field");
            type_keys(&mut session, "y\r");
            session
                .exp_string("name (optional, Enter skips)")
                .expect("its text field");
            type_keys(&mut session, &format!("{name}\r"));
        }
        session
            .exp_string("Inputs received: Ada, Grace")
            .expect("the result");
        exit_code(session)
    })
    .await;
    assert_eq!(code, 0);
}

/// A server that asks, in one MRTR round, for a form this client cannot show (a required
/// field it does not describe), then answers with the action it got.
async fn odd_form_server() -> String {
    use serde_json::{json, Value};
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(|body: String| async move {
            let request: Value = serde_json::from_str(&body).expect("JSON");
            let params = &request["params"];
            let result = match request["method"].as_str() {
                Some("server/discover") => {
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {}})
                }
                Some("tools/list") => {
                    json!({"tools": [{"name": "odd", "inputSchema": {"type": "object"}}]})
                }
                _ => match params["inputResponses"]["k"]["action"].as_str() {
                    None => json!({"resultType": "input_required", "requestState": "s",
                        "inputRequests": {"k": {"method": "elicitation/create", "params": {
                            "message": "Pick \u{1b}[31mred \u{202e}eulb", "requestedSchema": {
                                "type": "object", "properties": {}, "required": ["x"]}}}}}),
                    Some(action) => {
                        json!({"content": [{"type": "text", "text": format!("action: {action}")}]})
                    }
                },
            };
            axum::Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
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
async fn a_form_that_cannot_be_shown_is_cancelled_saying_why() {
    let url = odd_form_server().await;
    let code = drive(move || {
        let mut session = spawn(&["call", &url, "odd"]);
        session
            .exp_string("The server asks: Pick \\u{1b}[31mred \\u{202e}eulb")
            .expect("the message, its escape sequence and its bidirectional override shown");
        session
            .exp_string(
                "This form cannot be asked here (it requires \"x\" but does not describe it)",
            )
            .expect("the reason");
        session.exp_string("action: cancel").expect("the result");
        exit_code(session)
    })
    .await;
    assert_eq!(code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_before_anything_is_sent_ends_at_once() {
    // A server that accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    let (connected, first_connection) = std::sync::mpsc::channel();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
            let _ = connected.send(());
        }
    });
    let code = drive(move || {
        let mut session = spawn(&["tools", &url]);
        // Connected: past start-up, where Ctrl-C is taken over, and waiting for the answer.
        first_connection
            .recv_timeout(Duration::from_millis(EXPECT_MS))
            .expect("the client connects");
        session.send_control('c').expect("ctrl-c");
        session.exp_string("Interrupted.").expect("said");
        exit_code(session)
    })
    .await;
    assert_eq!(code, 130);
}

/// `prompt` answers the question a prompt asks first (an MRTR round) at the terminal, with the
/// same form as a tool's, and prints the rendered message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_asks_its_question_at_the_terminal() {
    let server = start(quick_settings()).await;
    let url = server.url();
    let (code, shown) = drive(move || {
        let mut session = spawn(&["prompt", &url, "test_input_required_result_prompt"]);
        session
            .exp_string("What context should the prompt use?")
            .expect("the question");
        session
            .exp_string("Ctrl-C quits")
            .expect("its text field, with the keys of `prompt`");
        type_keys(&mut session, "release notes\r");
        let shown = session
            .exp_string("user: Answer with this context: release notes")
            .is_ok();
        (exit_code(session), shown)
    })
    .await;
    assert!(shown, "the rendered message is printed");
    assert_eq!(code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_line_names_the_input_a_task_waits_for() {
    // The fixture's ids are 32 characters: with them whole and the server's `Waiting for
    // input: ` the key fell past the end of an 80-column line.
    let server = start(quick_settings()).await;
    let url = server.url();
    let code = drive(move || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"));
        command
            .args(["call", &url, "confirm_delete", "filename=d.txt"])
            .env("TERM", "xterm")
            .env("COLUMNS", "80");
        let mut session =
            rexpect::session::spawn_command(command, Some(EXPECT_MS)).expect("mcp-tasks starts");
        created(&mut session);
        session
            .exp_string("input_required: confirm-delete")
            .expect("the key on the live line");
        session.exp_string("Delete d.txt?").expect("the question");
        type_keys(&mut session, "y\r");
        session
            .exp_string("Delete confirmed: true")
            .expect("the result");
        exit_code(session)
    })
    .await;
    assert_eq!(code, 0);
}
