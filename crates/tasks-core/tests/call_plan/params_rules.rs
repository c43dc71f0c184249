//! The params rules of the task methods (`tasks_core::plan::plan_task_method`), `tools/call`
//! (`parse_call`, the tool lookup, `Mcp-Param-*` headers: MCP 2026-07-28 streamable-http "Custom
//! Headers from Tool Parameters") and `subscriptions/listen` (`ListenFilter::parse`) as tables,
//! through the planner as the HTTP adapter calls it, each refusal as the wire answer. The
//! adapter's tests (`crates/tasks-http/tests/dispatcher/main.rs`, `core_wire.rs`) keep one case
//! of each table, and what needs a store or a running tool (the task lookup, the listen
//! acknowledgement, the tool's result and its schema validator's message).

use serde_json::{json, Value};
use tasks_core::exchange::ListenFilter;
use tasks_core::plan::{Action, CallPlan, TaskAction, TaskRef};
use tasks_core::{TaskId, TaskOrigin};

use crate::request::{b64, Req, TASKS};

#[test]
fn tasks_params_validation_table() {
    let empty = "A non-empty taskId is required";
    let long = "taskId is longer than 256 bytes";
    let responses = "tasks/update requires an inputResponses object";
    let invalid = "inputResponses is invalid";
    let with_id = |method: &str, id: Value, name: &str| {
        Req::new(method)
            .tasks()
            .param("taskId", id)
            .header("mcp-name", name)
    };
    let long_id = "a".repeat(257);
    let long_utf8 = "\u{e9}".repeat(129); // 258 bytes, 129 characters
    let mut cases = Vec::new();
    for method in ["tasks/get", "tasks/cancel", "tasks/update"] {
        let update = |req: Req| {
            if method == "tasks/update" {
                req.param("inputResponses", json!({}))
            } else {
                req
            }
        };
        cases.push((update(with_id(method, json!(42), "42")), empty));
        cases.push((update(with_id(method, json!(null), "x")), empty));
        cases.push((update(with_id(method, json!(["a"]), "x")), empty));
        cases.push((update(with_id(method, json!(""), "")), empty));
        cases.push((
            update(Req::new(method).tasks().header("mcp-name", "x")),
            empty,
        ));
        cases.push((update(with_id(method, json!(long_id), &long_id)), long));
        cases.push((
            update(with_id(method, json!(long_utf8), &b64(&long_utf8))),
            long,
        ));
    }
    let update = |responses: Value| Req::update("t-1", responses).tasks();
    cases.push((Req::task_method("tasks/update", "t-1").tasks(), responses));
    for bad in [json!([]), json!("string"), json!(null), json!(1)] {
        cases.push((update(bad), responses));
    }
    for bad in [
        json!({"": {}}),
        json!({"k": 1}),
        json!({"k": "s"}),
        json!({"k": []}),
        json!({"k": null}),
        json!({"ok": {}, "bad": true}),
    ] {
        cases.push((update(bad), invalid));
    }
    // taskId is checked before inputResponses.
    cases.push((
        with_id("tasks/update", json!(42), "42").param("inputResponses", json!([])),
        empty,
    ));
    for (i, (req, message)) in cases.into_iter().enumerate() {
        let error = req.id(json!(i)).error(400, -32602, message);
        assert!(error.get("data").is_none(), "case {i}: {error}");
    }
    // 256 bytes (128 two-byte characters) is a valid id: the plan goes on to the lookup.
    let at_limit = "\u{e9}".repeat(128);
    assert_eq!(
        with_id("tasks/get", json!(at_limit), &b64(&at_limit))
            .planned()
            .action,
        Action::Task(TaskAction::Get(TaskRef::new(
            TaskId::parse(&at_limit).unwrap()
        )))
    );
}

/// SEP-2663 "Backward Compatibility" (its version table): a 2026-07-28 request that declares
/// only the 2025-11-25 `tasks` capability may `tasks/get` and `tasks/cancel`, reaching only the
/// tasks of the 2025 flow; `tasks/update` and a request declaring nothing stay -32021; a
/// request declaring the extension as well reaches every task.
#[test]
fn a_legacy_tasks_declaration_reaches_only_2025_tasks() {
    let legacy = json!({"requests": {"tools": {"call": {}}}});
    let only_2025 = |method: &str| {
        let mut target = TaskRef::new(TaskId::parse("t1").unwrap());
        target.only = Some(TaskOrigin::Experimental2025);
        match method {
            "tasks/get" => TaskAction::Get(target),
            _ => TaskAction::Cancel(target),
        }
    };
    for method in ["tasks/get", "tasks/cancel"] {
        let req = Req::new(method)
            .cap("tasks", legacy.clone())
            .param("taskId", json!("t1"))
            .header("mcp-name", "t1");
        assert_eq!(
            req.planned().action,
            Action::Task(only_2025(method)),
            "{method}"
        );
        let both = req.clone().tasks().planned().action;
        let Action::Task(TaskAction::Get(target) | TaskAction::Cancel(target)) = both else {
            panic!("{method}: {both:?}");
        };
        assert_eq!(target.only, None, "{method} declaring both");
        // `tasks: false` or `null` declares nothing.
        for nothing in [json!(false), Value::Null] {
            Req::new(method)
                .cap("tasks", nothing)
                .param("taskId", json!("t1"))
                .header("mcp-name", "t1")
                .error(400, -32021, "Missing required client capability");
        }
    }
    Req::new("tasks/update")
        .cap("tasks", legacy.clone())
        .param("taskId", json!("t1"))
        .param("inputResponses", json!({}))
        .header("mcp-name", "t1")
        .error(400, -32021, "Missing required client capability");
    // The params rules hold on this path too.
    Req::new("tasks/get")
        .cap("tasks", legacy)
        .param("taskId", json!(""))
        .header("mcp-name", "")
        .error(400, -32602, "A non-empty taskId is required");
}

#[test]
fn tools_call_params_are_checked() {
    let cases = [
        (
            Req::new("tools/call").header("mcp-name", "x"),
            "tools/call requires a string name",
        ),
        (
            Req::call("sync_echo", json!([1])),
            "arguments must be an object",
        ),
        (Req::call("no_such_tool", json!({})), "Unknown tool"),
        (
            Req::call("interview", json!({})).param("inputResponses", json!([])),
            "inputResponses must be an object",
        ),
        (
            Req::call("interview", json!({})).param("inputResponses", json!({"": {}})),
            "inputResponses is invalid",
        ),
        (
            Req::call("interview", json!({})).param("inputResponses", json!({"first": 1})),
            "inputResponses is invalid",
        ),
    ];
    for (req, message) in cases {
        req.elicitation().tasks().error(400, -32602, message);
    }
}

#[test]
fn listen_filter_rules() {
    // taskIds needs the Tasks declaration.
    let error = Req::listen(json!({"taskIds": ["a"]})).id(json!("l")).error(
        400,
        -32021,
        "Missing required client capability",
    );
    assert_eq!(
        error["data"],
        json!({"requiredCapabilities": {"extensions": {TASKS: {}}}})
    );
    let ids = |n: usize| (0..n).map(|i| format!("id-{i}")).collect::<Vec<_>>();
    Req::listen(json!({"taskIds": ids(101)})).tasks().error(
        400,
        -32602,
        "taskIds lists more than 100 ids",
    );
    for bad in [
        json!("a"),
        json!([42]),
        json!([""]),
        json!(["a".repeat(257)]),
    ] {
        Req::listen(json!({"taskIds": bad})).tasks().error(
            400,
            -32602,
            "taskIds must be an array of task ids",
        );
    }
    for bad in [None, Some(json!([])), Some(json!("all"))] {
        let mut req = Req::new("subscriptions/listen").tasks();
        if let Some(bad) = bad {
            req = req.param("notifications", bad);
        }
        req.error(
            400,
            -32602,
            "subscriptions/listen requires a notifications object",
        );
    }
    // 100 ids is fine, with any other filter; which ids and filters the acknowledgement names
    // is the server's (the store's ids, the list changes it announces).
    let planned = Req::listen(json!({"taskIds": ids(100), "toolsListChanged": true}))
        .tasks()
        .id(json!(77))
        .planned();
    let want = ListenFilter {
        task_ids: Some(
            ids(100)
                .iter()
                .map(|id| TaskId::parse(id).unwrap())
                .collect(),
        ),
        tools_list_changed: true,
        ..ListenFilter::default()
    };
    assert_eq!(
        (planned.id, planned.action),
        (json!(77), Action::Listen(want))
    );
    // Without taskIds no declaration is needed.
    assert_eq!(
        Req::listen(json!({})).planned().action,
        Action::Listen(ListenFilter::default())
    );
}

#[test]
fn listen_filter_values_must_have_their_schema_types() {
    for filter in [
        json!({"toolsListChanged": "true"}),
        json!({"toolsListChanged": 1}),
        json!({"promptsListChanged": null}),
        json!({"resourcesListChanged": {}}),
    ] {
        Req::listen(filter).error(
            400,
            -32602,
            "notifications list-changed flags must be booleans",
        );
    }
    for filter in [
        json!({"resourceSubscriptions": "test://a"}),
        json!({"resourceSubscriptions": [1]}),
    ] {
        Req::listen(filter).error(
            400,
            -32602,
            "resourceSubscriptions must be an array of strings",
        );
    }
    // Well-typed keys and unknown keys are accepted; what the acknowledgement names is the
    // server's.
    let planned = Req::listen(json!({"toolsListChanged": false,
                                     "resourceSubscriptions": ["test://a"], "futureKey": 7}))
    .id(json!(9))
    .planned();
    let want = ListenFilter {
        resource_subscriptions: vec!["test://a".into()],
        ..ListenFilter::default()
    };
    assert_eq!(
        (planned.id, planned.action),
        (json!(9), Action::Listen(want))
    );
}

const PARAM_MISSING: &str = "Missing Mcp-Param header for an x-mcp-header argument";
const PARAM_INVALID: &str = "Invalid Mcp-Param header value";
const PARAM_MISMATCH: &str = "Mcp-Param header does not match the tool arguments";
const PARAM_REPEATED: &str = "Mcp-Param header is repeated";

/// `Mcp-Param-*` headers of a call, appended in order.
type Headers = Vec<(&'static str, &'static str)>;

/// A `regional` call with `arguments` and the given `Mcp-Param-*` headers (appended in order).
fn regional(arguments: Value, headers: &[(&'static str, &'static str)]) -> Req {
    let mut req = Req::call("regional", arguments);
    for (name, value) in headers {
        req = req.append(name, value);
    }
    req
}

/// The tool and plan of a planned `tools/call`, and its arguments.
fn call_plan(req: &Req) -> (&'static str, Value, CallPlan) {
    match req.planned().action {
        Action::Call {
            tool,
            arguments,
            plan,
        } => (tool.name, Value::Object(arguments), plan),
        other => panic!("expected a call, got {other:?}"),
    }
}

#[test]
fn param_headers_runner_table_and_more() {
    let run = CallPlan::RunSync {
        answers: None,
        previous: None,
    };
    let accepted: Vec<(Value, Headers)> = vec![
        // The runner's table (sep-2243-server-decode-base64, -validate-param-match).
        (
            json!({"region": "Hello"}),
            vec![("Mcp-Param-Region", "=?base64?SGVsbG8=?=")],
        ),
        (
            json!({"region": "SGVsbG8="}),
            vec![("Mcp-Param-Region", "SGVsbG8=")],
        ),
        (
            json!({"region": "=?base64?SGVsbG8="}),
            vec![("Mcp-Param-Region", "=?base64?SGVsbG8=")],
        ),
        // Trimmed whitespace, non-ASCII through base64, case-insensitive header names.
        (
            json!({"region": "eu"}),
            vec![("mcp-param-region", "  eu\t")],
        ),
        (
            json!({"region": "\u{e9}"}),
            vec![("MCP-PARAM-REGION", "=?base64?w6k=?=")],
        ),
        // Integers compare numerically, booleans as true/false.
        (
            json!({"count": 42, "dry": true}),
            vec![("Mcp-Param-Count", "42.0"), ("Mcp-Param-Dry", "true")],
        ),
        (json!({"count": 42}), vec![("Mcp-Param-Count", "42")]),
        // Absent or null arguments need no header; a stray header is ignored.
        (json!({}), vec![]),
        (json!({"note": "n"}), vec![("Mcp-Param-Region", "anything")]),
    ];
    for (arguments, headers) in &accepted {
        assert_eq!(
            call_plan(&regional(arguments.clone(), headers)),
            ("regional", arguments.clone(), run.clone()),
            "{arguments} {headers:?}"
        );
    }

    let rejected: Vec<(Value, Headers, &str)> = vec![
        // The runner's table (sep-2243-server-reject-invalid-param-chars, header omitted).
        (
            json!({"region": "Hello"}),
            vec![("Mcp-Param-Region", "=?base64?SGVsbG8?=")],
            PARAM_INVALID,
        ),
        (
            json!({"region": "Hello"}),
            vec![("Mcp-Param-Region", "=?base64?SGVs!!!bG8=?=")],
            PARAM_INVALID,
        ),
        (json!({"region": "test-value"}), vec![], PARAM_MISSING),
        // A header for another argument does not stand in.
        (
            json!({"region": "eu"}),
            vec![("Mcp-Param-Count", "eu")],
            PARAM_MISSING,
        ),
        (
            json!({"region": "eu"}),
            vec![("Mcp-Param-Region", "us")],
            PARAM_MISMATCH,
        ),
        (
            json!({"region": "eu"}),
            vec![("Mcp-Param-Region", "EU")],
            PARAM_MISMATCH,
        ),
        (
            json!({"region": "eu"}),
            vec![("Mcp-Param-Region", "eu"), ("Mcp-Param-Region", "eu")],
            PARAM_REPEATED,
        ),
        (
            json!({"region": "\u{e9}"}),
            vec![("Mcp-Param-Region", "\u{e9}")],
            PARAM_INVALID,
        ),
        (
            json!({"count": 42}),
            vec![("Mcp-Param-Count", "43")],
            PARAM_MISMATCH,
        ),
        (
            json!({"count": 42}),
            vec![("Mcp-Param-Count", "forty-two")],
            PARAM_MISMATCH,
        ),
        (
            json!({"dry": true}),
            vec![("Mcp-Param-Dry", "True")],
            PARAM_MISMATCH,
        ),
        (json!({"dry": false}), vec![], PARAM_MISSING),
    ];
    for (arguments, headers, message) in &rejected {
        let error = regional(arguments.clone(), headers)
            .id(json!("h"))
            .error(400, -32020, message);
        assert!(error.get("data").is_none(), "{error}");
    }
    // An argument of the wrong type is not mirrored, header or not: argument validation
    // answers with a tool error, the same either way (its text is the tool's schema
    // validator's: the adapter's test checks it).
    for headers in [vec![], vec![("Mcp-Param-Count", "many")]] {
        let (_, _, plan) = call_plan(&regional(json!({"count": "many"}), &headers));
        let CallPlan::InvalidArguments(result) = plan else {
            panic!("expected a tool error, got {plan:?}");
        };
        assert_eq!(result["isError"], true, "{result:?}");
        assert_eq!(result["content"][0]["text"], "Invalid arguments at /count");
    }
}
