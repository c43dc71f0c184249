//! Typed tools through the dispatcher (no network): the generated `inputSchema` in
//! `tools/list`, arguments that do not fit refused with an `isError: true` result before the
//! tool runs or a task exists, and `?` on an I/O error in a tool body answering an `isError`
//! result in a synchronous call and completing a task with one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tasks_core::TaskStatus;
use tasks_http::prelude::*;
use tasks_http::Dispatcher;
use tasks_test_support::dispatcher::*;
use tasks_test_support::events::wait_status;
use tasks_test_support::request::*;

/// Which rows to read.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Lookup {
    /// The file to read, on the server.
    file: String,
    /// The 0-based line to return.
    line: u16,
    // schemars says `"format": "ipv4"`, which the schema check does not enforce;
    // deserializing does.
    /// Only when the caller is this address.
    caller: Option<std::net::Ipv4Addr>,
}

const MISSING: &str = "/nonexistent/typed-http-test/rows.txt";

/// A dispatcher with the typed `lookup` tool (a task when the client declares Tasks), and its
/// run counter.
fn typed_dispatcher() -> (Dispatcher, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let lookup = Tool::typed(
        "lookup",
        "Returns one line of a file",
        move |_ctx, args: Lookup| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move {
                if args.caller.is_some_and(|caller| !caller.is_loopback()) {
                    return Err(ToolError::tool("Only local callers may look up lines"));
                }
                let text = tokio::fs::read_to_string(&args.file).await?;
                let line = text.lines().nth(usize::from(args.line));
                Ok(text_result(line.unwrap_or_default()))
            }
        },
    )
    .with_policy(TaskPolicy::Optional);
    let d = ServerBuilder::new(SERVER_NAME, SERVER_VERSION)
        .poll_interval_ms(100)
        .tool(lookup)
        .build();
    (d, runs)
}

fn is_error(text: &str) -> Value {
    json!({"resultType": "complete", "isError": true,
           "content": [{"type": "text", "text": text}], "_meta": server_meta()})
}

#[tokio::test]
async fn tools_list_shows_the_generated_schema() {
    let (d, _) = typed_dispatcher();
    let result = Req::new("tools/list").send(&d).await.result();
    assert_eq!(
        result["tools"][0]["inputSchema"],
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "description": "Which rows to read.",
            "type": "object",
            "properties": {
                "file": {"description": "The file to read, on the server.", "type": "string"},
                "line": {"description": "The 0-based line to return.", "type": "integer",
                         "minimum": 0, "maximum": 65535},
                "caller": {
                    "description": "Only when the caller is this address.",
                    "type": ["string", "null"],
                    "format": "ipv4"
                }
            },
            "additionalProperties": false,
            "required": ["file", "line"]
        })
    );
}

#[tokio::test]
async fn a_typed_call_runs_with_its_arguments() {
    let (d, runs) = typed_dispatcher();
    let file = std::env::temp_dir().join(format!("typed-http-{}.txt", std::process::id()));
    std::fs::write(&file, "first\nsecond\n").unwrap();
    let result = Req::call(
        "lookup",
        json!({"file": file, "line": 1, "caller": "127.0.0.1"}),
    )
    .send(&d)
    .await
    .result();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(
        result,
        json!({"resultType": "complete", "isError": false,
               "content": [{"type": "text", "text": "second"}], "_meta": server_meta()})
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn arguments_that_do_not_fit_are_refused_before_the_tool_runs_or_a_task_exists() {
    let (d, runs) = typed_dispatcher();
    let before = d.runtime().stored_tasks().await.unwrap();
    for (arguments, text) in [
        (
            json!({"file": "SECRET-1", "line": -1}),
            "Invalid arguments at /line: violates inputSchema rule /properties/line/minimum (at least 0)",
        ),
        (
            json!({"file": "SECRET-2"}),
            "Invalid arguments at /: violates inputSchema rule /required (`line` is required)",
        ),
        (
            // A misspelled argument: its name (a key, never a value) and the ones the tool
            // takes, so the caller can fix the typo.
            json!({"file": "f", "line": 1, "lien": "SECRET-3"}),
            "Invalid arguments at /: unknown argument `lien` (the tool takes `caller`, `file`, `line`)",
        ),
        (
            json!({"file": "f", "line": 1, "caller": "SECRET-4"}),
            "Invalid arguments at /caller: not accepted by the tool's arguments type",
        ),
    ] {
        for declared in [false, true] {
            let mut req = Req::call("lookup", arguments.clone());
            if declared {
                req = req.tasks();
            }
            let result = req.send(&d).await.result();
            // MCP counts argument validation as a tool error: a result, not -32602.
            assert_eq!(result, is_error(text), "{arguments}");
            assert!(!result.to_string().contains("SECRET"), "{result}");
        }
    }
    assert_eq!(d.runtime().stored_tasks().await.unwrap(), before);
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the tool never ran");
}

#[tokio::test]
async fn question_mark_on_an_io_error_is_an_is_error_result() {
    let (d, _) = typed_dispatcher();
    let result = Req::call("lookup", json!({"file": MISSING, "line": 0}))
        .send(&d)
        .await
        .result();
    assert_eq!(result, is_error("No such file or directory (os error 2)"));
    // `ToolError::tool` answers the same way, in the tool's own words.
    let result = Req::call(
        "lookup",
        json!({"file": MISSING, "line": 0, "caller": "10.0.0.1"}),
    )
    .send(&d)
    .await
    .result();
    assert_eq!(result, is_error("Only local callers may look up lines"));
}

#[tokio::test]
async fn question_mark_on_an_io_error_completes_the_task_with_an_is_error_result() {
    let (d, _) = typed_dispatcher();
    let mut events = d.runtime().subscribe();
    let id = create(
        &d,
        Req::call("lookup", json!({"file": MISSING, "line": 0})).tasks(),
    )
    .await;
    wait_status(&mut events, &id, TaskStatus::Completed).await;
    let task = Req::get(&id).tasks().send(&d).await.result();
    // A tool error is `completed` with `isError: true`, never `failed` (SEP-2663).
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(
        task["result"],
        json!({"resultType": "complete", "isError": true,
               "content": [{"type": "text", "text": "No such file or directory (os error 2)"}]})
    );
    assert!(task.get("error").is_none(), "{task}");
}
