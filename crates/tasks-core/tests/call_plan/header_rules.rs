//! The mirrored-header rules of admission (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`:
//! MCP 2026-07-28 streamable-http "Protocol Version Header" and "Standard Request Headers";
//! SEP-2663 "Streamable HTTP: Routing Headers") as tables, through the planner as the HTTP
//! adapter calls it, each refusal as the wire answer (status, code, message, id, `data`). The
//! adapter's tests (`crates/tasks-http/tests/dispatcher/main.rs`) keep one case of each table.

use serde_json::{json, Value};
use tasks_core::plan::{Action, CallPlan, TaskAction};

use crate::request::{b64, Req, META_CAPS, META_VERSION, VERSION};

const MISMATCH_VERSION: &str =
    "MCP-Protocol-Version header does not match the request _meta protocolVersion";
const MISMATCH_METHOD: &str = "Mcp-Method header does not match the request method";
const MISMATCH_NAME: &str = "Mcp-Name header does not match the request params";

#[test]
fn protocol_version_header_rules() {
    let discover = || Req::new("server/discover").id(json!("v"));
    let refused: Vec<(Req, i64, &str)> = vec![
        (
            discover().without("mcp-protocol-version"),
            -32020,
            "Missing MCP-Protocol-Version header",
        ),
        (
            discover().append("mcp-protocol-version", VERSION),
            -32020,
            "MCP-Protocol-Version header is repeated",
        ),
        (
            discover().header("mcp-protocol-version", "2026-07-28\u{e9}"),
            -32020,
            "Invalid MCP-Protocol-Version header value",
        ),
        // Header 2026-07-28 with body v999.0.0 is a mismatch, not an unsupported version.
        (
            discover().meta(json!({META_VERSION: "v999.0.0", META_CAPS: {}})),
            -32020,
            MISMATCH_VERSION,
        ),
        (
            discover().header("mcp-protocol-version", "v999.0.0"),
            -32020,
            MISMATCH_VERSION,
        ),
    ];
    for (req, code, message) in refused {
        let error = req.error(400, code, message);
        assert!(error.get("data").is_none(), "{error}");
    }
    // Surrounding whitespace is trimmed.
    let planned = discover()
        .header("mcp-protocol-version", " 2026-07-28\t")
        .planned();
    assert_eq!(
        (planned.id, planned.action, planned.meta.protocol_version),
        (json!("v"), Action::Discover, VERSION.to_owned())
    );
    for version in ["v999.0.0", "2025-11-25", "2025-06-18"] {
        let error = discover()
            .version(version)
            .error(400, -32022, "Unsupported protocol version");
        assert_eq!(
            error["data"],
            json!({"supported": ["2026-07-28"], "requested": version})
        );
    }
}

#[test]
fn mcp_method_header_rules() {
    let list = || Req::new("tools/list").id(json!("m"));
    let mut refused: Vec<(Req, &str)> =
        vec![(list().without("mcp-method"), "Missing Mcp-Method header")];
    for value in ["TOOLS/LIST", "tools/call", "tools/list/", "tools/ list"] {
        refused.push((list().header("mcp-method", value), MISMATCH_METHOD));
    }
    refused.push((
        list().append("mcp-method", "tools/list"),
        "Mcp-Method header is repeated",
    ));
    // The base64 form is for Mcp-Name only: a wrapped method is a literal that does not match.
    refused.push((
        list().header("mcp-method", b64("tools/list")),
        MISMATCH_METHOD,
    ));
    // A tools/call whose header names another method, as the runner sends it.
    refused.push((
        Req::call("sync_echo", json!({"text": "x"})).header("mcp-method", "tasks/get"),
        MISMATCH_METHOD,
    ));
    for (req, message) in refused {
        req.error(400, -32020, message);
    }
    // Header names are case-insensitive; values are trimmed.
    for req in [
        list().header("mcp-method", "  tools/list\t"),
        list().header("MCP-METHOD", "tools/list"),
    ] {
        assert_eq!(req.planned().action, Action::ListTools, "{req:?}");
    }
}

/// The task a `tasks/*` plan addresses.
fn addressed(req: &Req) -> String {
    match req.planned().action {
        Action::Task(TaskAction::Get(r) | TaskAction::Cancel(r)) => r.task_id.to_string(),
        Action::Task(TaskAction::Update(u)) => u.task_id.to_string(),
        other => panic!("expected a task method, got {other:?}"),
    }
}

#[test]
fn mcp_name_rules_on_tasks_get() {
    let task = "2f6c1d0a9b8e4f7a";
    let get = || Req::get(task).tasks().id(json!("name"));
    let mut refused: Vec<(Req, i64, &str)> =
        vec![(get().without("mcp-name"), -32020, "Missing Mcp-Name header")];
    for wrong in [
        "sep-2663-wrong-task-id-for-routing-header-mismatch".to_owned(),
        task.to_ascii_uppercase(),
        format!("{task}x"),
        b64("other"),
        // Other spellings of the sentinel are literals.
        b64(task).replacen("base64", "BASE64", 1),
    ] {
        refused.push((get().header("mcp-name", wrong), -32020, MISMATCH_NAME));
    }
    for invalid in [
        "=?base64?SGVsbG8?=".as_bytes(),
        b"=?base64?SGVs!!!bG8=?=",
        b"=?base64??=",
        "t\u{e2}che".as_bytes(),
    ] {
        refused.push((
            get().header("mcp-name", invalid),
            -32020,
            "Invalid Mcp-Name header value",
        ));
    }
    refused.push((
        get().append("mcp-name", task),
        -32020,
        "Mcp-Name header is repeated",
    ));
    // Without a string taskId the header is still required, but not compared.
    let no_id = || Req::new("tasks/get").tasks().id(json!("name"));
    refused.push((no_id(), -32020, "Missing Mcp-Name header"));
    refused.push((
        no_id().header("mcp-name", "anything"),
        -32602,
        "A non-empty taskId is required",
    ));
    // Also on update and cancel.
    refused.push((
        Req::update(task, json!({}))
            .tasks()
            .header("mcp-name", "other"),
        -32020,
        MISMATCH_NAME,
    ));
    refused.push((
        Req::cancel(task).tasks().without("mcp-name"),
        -32020,
        "Missing Mcp-Name header",
    ));
    for (req, code, message) in refused {
        req.error(400, code, message);
    }
    for good in [format!("  {task}\t"), b64(task), task.to_owned()] {
        assert_eq!(addressed(&get().header("mcp-name", good)), task);
    }
    assert_eq!(addressed(&get().header("MCP-NAME", task)), task);
}

#[test]
fn mcp_name_rules_on_tools_call() {
    let call = || Req::call("sync_echo", json!({"text": "n"})).id(json!(3));
    let mut refused: Vec<(Req, &str)> =
        vec![(call().without("mcp-name"), "Missing Mcp-Name header")];
    for wrong in ["SYNC_ECHO", "other", "sync_echo2"] {
        refused.push((call().header("mcp-name", wrong), MISMATCH_NAME));
    }
    refused.push((
        call().append("mcp-name", "sync_echo"),
        "Mcp-Name header is repeated",
    ));
    for (req, message) in refused {
        req.error(400, -32020, message);
    }
    for good in [
        "  sync_echo  ".to_owned(),
        b64("sync_echo"),
        "sync_echo".into(),
    ] {
        let planned = call().header("mcp-name", good).planned();
        let Action::Call {
            tool,
            arguments,
            plan,
        } = planned.action
        else {
            panic!("expected a call");
        };
        assert_eq!(
            (tool.name, Value::Object(arguments), plan),
            (
                "sync_echo",
                json!({"text": "n"}),
                CallPlan::RunSync {
                    answers: None,
                    previous: None
                }
            )
        );
    }
    // Methods without a name rule ignore the header.
    assert_eq!(
        Req::new("tools/list")
            .header("mcp-name", "whatever")
            .planned()
            .action,
        Action::ListTools
    );
}
