//! Typed tools (`Tool::typed`, `Tool::with_arguments`, `ToolContext::arguments_as`): the
//! `inputSchema` generated from the arguments type, argument checks before the tool runs, and
//! `?` in a tool body turning a failure into an `isError: true` result, in a synchronous call
//! and in a task.

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tasks_core::{JsonRpcError, TaskState};
use tasks_runtime::{
    error_result, run_sync, text_result, RuntimeConfig, Scope, SyncCall, SyncOutcome, Tool,
    ToolError,
};

use tasks_test_support::{runtime::*, task_wait::*};

/// What to report on.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Report {
    /// The table to report on.
    table: String,
    /// At most this many rows.
    limit: Option<u32>,
    /// Where the report runs.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
    /// The report's layout.
    #[serde(default)]
    format: Format,
    /// The host to send it to.
    host: Option<Ipv4Addr>,
    /// Columns to keep, in order.
    #[serde(default)]
    columns: Vec<Column>,
}

/// A report layout.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Format {
    /// One line per row.
    #[default]
    Plain,
    /// A table.
    Table,
}

/// A column of the report.
#[derive(Debug, Deserialize, JsonSchema)]
struct Column {
    /// The column's name.
    name: String,
    /// Its width in characters.
    width: u8,
}

/// The `report` tool, counting its runs.
fn report_tool(runs: Arc<AtomicUsize>) -> Tool {
    Tool::typed("report", "Builds a report", move |_ctx, args: Report| {
        runs.fetch_add(1, Ordering::SeqCst);
        async move {
            let columns: Vec<_> = args
                .columns
                .iter()
                .map(|c| format!("{}:{}", c.name, c.width))
                .collect();
            Ok(text_result(format!(
                "{} in {} (limit {:?}, {:?}, host {:?}, columns [{}])",
                args.table,
                args.region,
                args.limit,
                args.format,
                args.host,
                columns.join(",")
            )))
        }
    })
}

fn report() -> (Tool, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    (report_tool(runs.clone()), runs)
}

/// The arguments of a tool that reads a file.
#[derive(Deserialize, JsonSchema)]
struct ReadFile {
    /// The file to read.
    path: String,
}

/// Reads `path`; a missing file is the tool's own failure through `?`.
fn read_file_tool() -> Tool {
    Tool::typed(
        "read_file",
        "Reads a file",
        |_ctx, args: ReadFile| async move {
            let text = std::fs::read_to_string(&args.path)?;
            Ok(text_result(text))
        },
    )
}

fn sync_call(arguments: Value) -> SyncCall {
    SyncCall::new(obj(arguments))
}

fn complete(result: Value) -> SyncOutcome {
    let mut result = obj(result);
    result.insert("resultType".into(), json!("complete"));
    SyncOutcome::Complete(result)
}

const MISSING: &str = "/nonexistent/typed-tool-test/missing.txt";

#[test]
fn the_input_schema_is_generated_from_the_arguments_type() {
    let (tool, _) = report();
    assert_eq!(
        Value::Object(tool.input_schema().clone()),
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "description": "What to report on.",
            "type": "object",
            "properties": {
                "columns": {
                    "description": "Columns to keep, in order.",
                    "type": "array",
                    "items": {"$ref": "#/$defs/Column"}
                },
                "format": {
                    "description": "The report's layout.",
                    "$ref": "#/$defs/Format"
                },
                "host": {
                    "description": "The host to send it to.",
                    "type": ["string", "null"],
                    "format": "ipv4"
                },
                "limit": {
                    "description": "At most this many rows.",
                    "type": ["integer", "null"],
                    "minimum": 0
                },
                "region": {
                    "description": "Where the report runs.",
                    "type": "string",
                    "x-mcp-header": "Region"
                },
                "table": {"description": "The table to report on.", "type": "string"}
            },
            "additionalProperties": false,
            "required": ["table", "region"],
            "$defs": {
                "Column": {
                    "description": "A column of the report.",
                    "type": "object",
                    "properties": {
                        "name": {"description": "The column's name.", "type": "string"},
                        "width": {
                            "description": "Its width in characters.",
                            "type": "integer",
                            "minimum": 0,
                            "maximum": 255
                        }
                    },
                    "required": ["name", "width"]
                },
                "Format": {
                    "description": "A report layout.",
                    "oneOf": [
                        {"description": "One line per row.", "type": "string", "const": "plain"},
                        {"description": "A table.", "type": "string", "const": "table"}
                    ]
                }
            }
        })
    );
    // `x-mcp-header` from the schemars attribute is a mirrored argument like a hand-written one.
    let headers: Vec<_> = tool
        .param_headers()
        .iter()
        .map(|h| (h.property.as_str(), h.header.as_str()))
        .collect();
    assert_eq!(headers, [("region", "Mcp-Param-Region")]);
}

#[test]
fn an_author_title_stays_and_a_non_object_type_is_refused_at_registration() {
    /// Arguments with a title of their own.
    #[derive(Deserialize, JsonSchema)]
    #[schemars(title = "Search request")]
    struct Titled {
        #[allow(dead_code)]
        query: String,
    }
    let tool = Tool::typed("titled", "t", |_ctx, _args: Titled| async move {
        Ok(text_result("ok"))
    });
    assert_eq!(tool.input_schema()["title"], "Search request");

    let refused = std::panic::catch_unwind(|| {
        Tool::typed("numbers", "n", |_ctx, _args: Vec<u32>| async move {
            Ok(text_result("ok"))
        })
    });
    let message = refused
        .err()
        .and_then(|panic| panic.downcast_ref::<String>().cloned())
        .expect("a panic with a message");
    assert_eq!(
        message,
        "the arguments type of tool numbers must be a struct: MCP needs an inputSchema with \
         \"type\": \"object\" at the top level"
    );
}

#[tokio::test]
async fn a_valid_call_deserializes_and_runs() {
    let (tool, runs) = report();
    let arguments = json!({
        "table": "orders", "region": "eu", "limit": 10, "format": "table", "host": "10.0.0.1",
        "columns": [{"name": "id", "width": 8}, {"name": "total", "width": 12}]
    });
    assert_eq!(tool.validate_arguments(&obj(arguments.clone())), Ok(()));
    let outcome = run_sync(&tool, sync_call(arguments)).await;
    assert_eq!(
        outcome,
        complete(text_result(
            "orders in eu (limit Some(10), Table, host Some(10.0.0.1), columns [id:8,total:12])"
        ))
    );
    // Defaults and absent options.
    let outcome = run_sync(&tool, sync_call(json!({"table": "t", "region": "us"}))).await;
    assert_eq!(
        outcome,
        complete(text_result(
            "t in us (limit None, Plain, host None, columns [])"
        ))
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn invalid_arguments_are_refused_before_the_tool_runs_without_echoing_values() {
    let (tool, runs) = report();
    let cases = [
        // Broken schema rules: the planner answers with these before running or creating.
        (
            json!({"table": "SECRET-1", "region": 7}),
            "Invalid arguments at /region: violates inputSchema rule /properties/region/type (expected string)",
        ),
        (
            json!({"region": "eu"}),
            "Invalid arguments at /: violates inputSchema rule /required (`table` is required)",
        ),
        // A misspelled argument is named (a key, never its value), with the ones the tool takes.
        (
            json!({"table": "t", "region": "eu", "limt": "SECRET-2"}),
            "Invalid arguments at /: unknown argument `limt` (the tool takes `columns`, `format`, \
             `host`, `limit`, `region`, `table`)",
        ),
        (
            json!({"table": "t", "region": "eu", "columns": [{"name": "a", "width": 999}]}),
            "Invalid arguments at /columns/0/width: violates inputSchema rule \
             /$defs/Column/properties/width/maximum (at most 255)",
        ),
        // The schema lets `format` through unchecked; the type does not.
        (
            json!({"table": "t", "region": "eu", "host": "SECRET-3"}),
            "Invalid arguments at /host: not accepted by the tool's arguments type",
        ),
    ];
    for (arguments, message) in cases {
        let checked = tool.validate_arguments(&obj(arguments.clone()));
        assert_eq!(checked, Err(message.to_owned()), "{arguments}");
    }
    // A handler reached anyway (a call that skipped the planner's check) does not run either:
    // deserializing fails first, with the same kind of message, as an `isError` result.
    let outcome = run_sync(
        &tool,
        sync_call(json!({"table": "t", "region": "eu", "host": "SECRET-3"})),
    )
    .await;
    assert_eq!(
        outcome,
        complete(error_result(
            "Invalid arguments at /host: not accepted by the tool's arguments type"
        ))
    );
    let outcome = run_sync(&tool, sync_call(json!({"table": 5, "region": "eu"}))).await;
    assert_eq!(
        outcome,
        complete(error_result(
            "Invalid arguments at /table: not accepted by the tool's arguments type"
        ))
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the tool never ran");
}

#[tokio::test]
async fn a_handler_of_its_own_type_reads_typed_arguments() {
    /// Adds two numbers.
    #[derive(Deserialize, JsonSchema)]
    struct Sum {
        a: i64,
        b: i64,
    }
    struct Adder;
    #[async_trait::async_trait]
    impl tasks_runtime::ToolHandler for Adder {
        async fn call(&self, ctx: tasks_runtime::ToolContext) -> Result<Value, ToolError> {
            let Sum { a, b } = ctx.arguments_as()?;
            let sum = a
                .checked_add(b)
                .ok_or_else(|| ToolError::tool("overflow"))?;
            Ok(text_result(sum.to_string()))
        }
    }
    let tool = Tool::with_handler("sum", "Adds", Adder).with_arguments::<Sum>();
    assert_eq!(tool.input_schema()["required"], json!(["a", "b"]));
    let outcome = run_sync(&tool, sync_call(json!({"a": 2, "b": 40}))).await;
    assert_eq!(outcome, complete(text_result("42")));
    let outcome = run_sync(&tool, sync_call(json!({"a": i64::MAX, "b": 1}))).await;
    assert_eq!(outcome, complete(error_result("overflow")));
}

#[tokio::test]
async fn question_mark_on_an_io_error_is_an_is_error_result_in_a_synchronous_call() {
    let outcome = run_sync(&read_file_tool(), sync_call(json!({"path": MISSING}))).await;
    assert_eq!(
        outcome,
        complete(json!({
            "content": [{"type": "text", "text": "No such file or directory (os error 2)"}],
            "isError": true
        }))
    );
}

#[tokio::test(start_paused = true)]
async fn question_mark_on_an_io_error_completes_a_task_with_an_is_error_result() {
    let rt = runtime(vec![read_file_tool()], RuntimeConfig::default());
    let created = rt
        .create(work_in(
            &Scope::shared(),
            "read_file",
            json!({"path": MISSING}),
        ))
        .await
        .expect("create_task");
    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    // A tool error is `completed` with `isError: true`, never `failed` (SEP-2663).
    assert_eq!(
        *done.state(),
        TaskState::Completed {
            result: obj(json!({
                "content": [{"type": "text", "text": "No such file or directory (os error 2)"}],
                "isError": true,
                "resultType": "complete"
            }))
            .into()
        }
    );
}

#[tokio::test(start_paused = true)]
async fn a_panic_in_a_spawned_job_is_a_protocol_error_without_its_text() {
    let tool = Tool::new("spawn", "Panics in spawn_blocking", |_ctx| async move {
        let answer: u32 =
            tokio::task::spawn_blocking(|| -> u32 { panic!("secret-db-password-hunter2") }).await?;
        Ok(text_result(answer.to_string()))
    });
    let internal = JsonRpcError::internal("Tool raised an exception");
    let outcome = run_sync(&tool, sync_call(json!({}))).await;
    assert_eq!(outcome, SyncOutcome::Error(internal.clone()));

    let rt = runtime(vec![tool], RuntimeConfig::default());
    let created = rt
        .create(work_in(&Scope::shared(), "spawn", json!({})))
        .await
        .expect("create_task");
    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    assert_eq!(
        *done.state(),
        TaskState::Failed {
            error: Box::new(internal)
        }
    );
}

#[test]
fn common_errors_convert_with_question_mark() {
    fn parse(text: &str) -> Result<u32, ToolError> {
        Ok(text.parse::<u32>()?)
    }
    fn float(text: &str) -> Result<f64, ToolError> {
        Ok(text.parse::<f64>()?)
    }
    fn utf8(bytes: Vec<u8>) -> Result<String, ToolError> {
        Ok(String::from_utf8(bytes)?)
    }
    fn json_text(text: &str) -> Result<Value, ToolError> {
        Ok(serde_json::from_str(text)?)
    }
    fn boxed() -> Result<(), ToolError> {
        let error: Box<dyn std::error::Error + Send + Sync> = "upstream said no".into();
        Err(error)?
    }
    assert_eq!(parse("12"), Ok(12));
    assert_eq!(
        parse("x"),
        Err(ToolError::tool("invalid digit found in string"))
    );
    assert_eq!(float("x"), Err(ToolError::tool("invalid float literal")));
    assert_eq!(
        utf8(vec![0xff]),
        Err(ToolError::tool(
            "invalid utf-8 sequence of 1 bytes from index 0"
        ))
    );
    assert_eq!(
        json_text("{"),
        Err(ToolError::tool(
            "EOF while parsing an object at line 1 column 1"
        ))
    );
    assert_eq!(boxed(), Err(ToolError::Tool("upstream said no".into())));
    assert_eq!(ToolError::tool("gone").to_string(), "gone");
}

/// Arguments without `deny_unknown_fields`: serde alone would drop a misspelled key.
#[derive(Debug, Deserialize, JsonSchema)]
struct Sleep {
    /// How long to sleep.
    #[allow(dead_code)]
    seconds: Option<u64>,
    /// What to answer.
    #[allow(dead_code)]
    label: Option<String>,
}

fn sleep_tool() -> Tool {
    Tool::typed("sleep", "Sleeps", |_ctx, _args: Sleep| async {
        Ok(text_result("ok"))
    })
}

#[test]
fn typed_tools_refuse_unknown_arguments_by_name_unless_allowed() {
    let strict = sleep_tool();
    assert_eq!(strict.input_schema()["additionalProperties"], json!(false));
    assert_eq!(
        strict.validate_arguments(&obj(json!({"secnds": 5}))),
        Err(
            "Invalid arguments at /: unknown argument `secnds` (the tool takes `label`, `seconds`)"
                .to_owned()
        )
    );
    assert_eq!(
        strict.validate_arguments(&obj(json!({"secnds": 5, "lable": "x"}))),
        Err("Invalid arguments at /: unknown arguments `lable`, `secnds` (the tool takes `label`, `seconds`)".to_owned())
    );
    assert_eq!(
        strict.validate_arguments(&obj(json!({"seconds": 5}))),
        Ok(())
    );

    let lenient = sleep_tool().allow_unknown_arguments();
    assert_eq!(lenient.input_schema().get("additionalProperties"), None);
    assert_eq!(
        lenient.validate_arguments(&obj(json!({"secnds": 5}))),
        Ok(())
    );
    // The schema's other rules stay.
    let refused = lenient
        .validate_arguments(&obj(json!({"seconds": "five"})))
        .unwrap_err();
    assert!(
        refused.starts_with(
            "Invalid arguments at /seconds: violates inputSchema rule /properties/seconds/type"
        ),
        "{refused}"
    );
}

/// A counter shared by every run of the tools given it.
#[derive(Default)]
struct Visits(AtomicUsize);

fn visit_tool(name: &str) -> Tool {
    Tool::typed(name, "Counts a visit", |ctx, _args: Sleep| async move {
        let visits = ctx.state::<Arc<Visits>>()?;
        let seen = visits.0.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(format!("visit {seen}"))
    })
}

#[tokio::test(start_paused = true)]
async fn tools_share_the_state_they_were_given_at_once_and_in_tasks() {
    let visits = Arc::new(Visits::default());
    let first = visit_tool("first").with_state(visits.clone());
    assert_eq!(
        run_sync(&first, sync_call(json!({}))).await,
        complete(text_result("visit 1"))
    );
    let rt = runtime(
        vec![first, visit_tool("second").with_state(visits.clone())],
        RuntimeConfig::default(),
    );
    let created = rt
        .create(work_in(&Scope::shared(), "second", json!({})))
        .await
        .expect("create_task");
    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    let mut expected = obj(text_result("visit 2"));
    expected.insert("resultType".into(), json!("complete"));
    assert_eq!(
        *done.state(),
        TaskState::Completed {
            result: expected.into()
        }
    );
    assert_eq!(visits.0.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_tool_without_its_state_is_an_internal_error() {
    // Built without `.with_state(...)`, or with state of another type.
    for tool in [
        visit_tool("none"),
        visit_tool("other").with_state(String::from("not visits")),
    ] {
        assert_eq!(
            run_sync(&tool, sync_call(json!({}))).await,
            SyncOutcome::Error(JsonRpcError {
                code: -32603,
                message: "Tool state missing".into(),
                data: None,
            })
        );
    }
}
