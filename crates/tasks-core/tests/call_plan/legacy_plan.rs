//! The session path's planner (`tasks_core::sessions`): era routing and `plan_session` as tables,
//! and properties on any message: no panic, the session check before anything but
//! `initialize`, and errors inside a live session never refusing at the HTTP level.

use crate::common;

use common::stub::{StubTool, StubView};
use proptest::prelude::*;
use serde_json::{json, Value};
use tasks_core::plan::{parse_message, Message};
use tasks_core::sessions::session::Phase;
use tasks_core::sessions::tasks::TaskHint;
use tasks_core::sessions::{plan_session, route, Era, SessionAction, SessionPlan, SessionView};
use tasks_core::{LogLevel, McpError, TaskId, TaskPolicy};

const LIVE: SessionView = SessionView::Live {
    phase: Phase::Ready,
    tasks: false,
    list: false,
};
const TASKS: SessionView = SessionView::Live {
    phase: Phase::Ready,
    tasks: true,
    list: false,
};
const LISTING: SessionView = SessionView::Live {
    phase: Phase::Ready,
    tasks: true,
    list: true,
};

fn planned(body: Value, session: SessionView) -> SessionPlan<StubTool> {
    planned_with(&[], body, session)
}

/// [`planned`] on a server offering prompts, resources and completion.
fn planned_offering(body: Value, session: SessionView) -> SessionPlan<StubTool> {
    let message = parse_message(body.to_string().as_bytes()).expect("a message");
    let view = StubView::new(TaskPolicy::Required, 7).with_all_features();
    plan_session(&[] as &[(&str, &[u8])], message, session, &view)
}

fn planned_with(
    headers: &[(&str, &[u8])],
    body: Value,
    session: SessionView,
) -> SessionPlan<StubTool> {
    let message = parse_message(body.to_string().as_bytes()).expect("a message");
    plan_session(
        headers,
        message,
        session,
        &StubView::new(TaskPolicy::Required, 7),
    )
}

fn rejected(plan: SessionPlan<StubTool>) -> (Option<Value>, McpError) {
    match plan {
        SessionPlan::Reject { id, error } => (id, error),
        other => panic!("expected a rejection, got {other:?}"),
    }
}

fn session_error(plan: SessionPlan<StubTool>) -> (Value, i64, String) {
    match plan {
        SessionPlan::Error { id, error } => (id, error.code(), error.to_string()),
        other => panic!("expected an error in the session, got {other:?}"),
    }
}

#[test]
fn initialize_opens_a_session_for_served_versions_only() {
    let init = |version: Value, caps: Value| {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": version, "capabilities": caps,
                          "clientInfo": {"name": "c", "version": "1"}}})
    };
    for session in [SessionView::Absent, SessionView::Unknown] {
        assert_eq!(
            planned(init(json!("2025-11-25"), json!({"sampling": {}})), session),
            SessionPlan::Initialize {
                id: json!(0),
                version: "2025-11-25",
                client_capabilities: json!({"sampling": {}}).as_object().unwrap().clone(),
            }
        );
    }
    let SessionPlan::Initialize { version, .. } =
        planned(init(json!("2025-06-18"), Value::Null), SessionView::Absent)
    else {
        panic!("2025-06-18 is served");
    };
    assert_eq!(version, "2025-06-18");
    let (id, error) = rejected(planned(
        init(json!("2024-11-05"), json!({})),
        SessionView::Absent,
    ));
    assert_eq!(
        (id, error.code(), error.http_status()),
        (Some(json!(0)), -32022, 400)
    );
    assert_eq!(
        error.data().unwrap(),
        json!({"supported": ["2026-07-28", "2025-11-25", "2025-06-18"], "requested": "2024-11-05"})
    );
    for (version, caps, message) in [
        (
            json!(2025),
            json!({}),
            "initialize requires a string protocolVersion",
        ),
        (
            json!("2025-11-25"),
            json!([]),
            "capabilities must be an object",
        ),
    ] {
        let (_, error) = rejected(planned(init(version, caps), SessionView::Absent));
        assert_eq!(
            (error.code(), error.to_string()),
            (-32602, message.to_owned())
        );
    }
    // A second initialize on a live session.
    let (_, error) = rejected(planned(init(json!("2025-11-25"), json!({})), LIVE));
    assert_eq!(
        (error.code(), error.http_status(), error.to_string()),
        (
            -32600,
            400,
            "Invalid Request: Server already initialized".to_owned()
        )
    );
    // As a notification it is no handshake.
    let (id, error) = rejected(planned(
        json!({"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
        SessionView::Absent,
    ));
    assert_eq!((id, error.code()), (None, -32600));
}

#[test]
fn every_other_message_needs_a_live_session() {
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    let (id, error) = rejected(planned(ping.clone(), SessionView::Absent));
    assert_eq!(
        (id, error.code(), error.http_status()),
        (Some(json!(3)), -32600, 400)
    );
    let (_, error) = rejected(planned(ping.clone(), SessionView::Unknown));
    assert_eq!((error.code(), error.http_status()), (-32001, 404));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        rejected(planned(note.clone(), SessionView::Unknown))
            .1
            .code(),
        -32001
    );
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {}});
    assert_eq!(
        rejected(planned(answer, SessionView::Absent)).1.code(),
        -32600
    );
    assert_eq!(
        planned(
            ping,
            SessionView::Live {
                phase: Phase::Initializing,
                tasks: false,
                list: false
            }
        ),
        SessionPlan::Run {
            id: json!(3),
            action: SessionAction::Ping
        }
    );
    assert_eq!(planned(note, LIVE), SessionPlan::Initialized);
}

#[test]
fn notifications_and_answers() {
    let cancel = |request_id: Value| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": request_id, "reason": "user"}})
    };
    assert_eq!(
        planned(cancel(json!(4)), LIVE),
        SessionPlan::Cancelled {
            request_id: json!(4)
        }
    );
    assert_eq!(
        planned(cancel(json!("a")), LIVE),
        SessionPlan::Cancelled {
            request_id: json!("a")
        }
    );
    assert_eq!(planned(cancel(json!(1.5)), LIVE), SessionPlan::Accepted);
    assert_eq!(
        planned(
            json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
            LIVE
        ),
        SessionPlan::Accepted
    );
    let SessionPlan::Answer(answer) = planned(
        json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "decline"}}),
        LIVE,
    ) else {
        panic!("a response is an answer");
    };
    assert_eq!(
        (answer.id, answer.outcome),
        (json!(0), Ok(json!({"action": "decline"})))
    );
    let SessionPlan::Answer(answer) = planned(
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}),
        LIVE,
    ) else {
        panic!("an error response is an answer");
    };
    assert_eq!(
        answer.outcome,
        Err(json!({"code": -32601, "message": "no"}))
    );
}

#[test]
fn requests_in_a_session() {
    let request = |method: &str, params: Value| {
        planned(
            json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}),
            LIVE,
        )
    };
    assert_eq!(
        request("tools/list", json!({})),
        SessionPlan::Run {
            id: json!(9),
            action: SessionAction::ListTools
        }
    );
    assert_eq!(
        request("logging/setLevel", json!({"level": "debug"})),
        SessionPlan::Run {
            id: json!(9),
            action: SessionAction::SetLevel(LogLevel::Debug)
        }
    );
    let cases = [
        (
            "tools/list",
            json!({"cursor": "x"}),
            -32602,
            "Invalid cursor",
        ),
        (
            "logging/setLevel",
            json!({"level": "loud"}),
            -32602,
            "level must be a log level",
        ),
        (
            "tools/call",
            json!({"name": "nope"}),
            -32602,
            "Unknown tool",
        ),
        (
            "tools/call",
            json!({}),
            -32602,
            "tools/call requires a string name",
        ),
        ("tools/call", json!([]), -32602, "params must be an object"),
        (
            "tools/call",
            json!({"name": "t", "_meta": {"progressToken": 1.5}}),
            -32602,
            "params._meta progressToken must be a string or an integer",
        ),
        ("server/discover", json!({}), -32601, "Method not found"),
        ("tasks/update", json!({}), -32601, "Method not found"),
        ("resources/list", json!({}), -32601, "Method not found"),
    ];
    for (method, params, code, message) in cases {
        assert_eq!(
            session_error(request(method, params)),
            (json!(9), code, message.to_owned()),
            "{method}"
        );
    }
    let SessionPlan::Run {
        action: SessionAction::Call(call),
        ..
    } = request(
        "tools/call",
        json!({"name": "t", "arguments": {"a": 1}, "task": {"ttl": 1000},
               "_meta": {"progressToken": "p"}}),
    )
    else {
        panic!("a call");
    };
    assert_eq!(call.name, "t");
    assert_eq!(call.progress_token, Some(json!("p")));
    assert_eq!(call.invalid_arguments, None);
    let SessionPlan::Run {
        action: SessionAction::Call(call),
        ..
    } = request("tools/call", json!({"name": "t", "arguments": {"bad": 1}}))
    else {
        panic!("a call");
    };
    assert_eq!(
        call.invalid_arguments.map(Value::Object),
        Some(
            json!({"content": [{"type": "text", "text": "Invalid arguments at /bad"}],
                    "isError": true})
        )
    );
}

fn arb_message() -> impl Strategy<Value = Value> {
    let method = prop::sample::select(vec![
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "logging/setLevel",
        "notifications/initialized",
        "notifications/cancelled",
        "tasks/get",
        "",
    ]);
    let params = prop_oneof![
        Just(Value::Null),
        Just(json!({})),
        Just(json!({"protocolVersion": "2025-11-25"})),
        Just(json!({"name": "t", "arguments": {"bad": true}})),
        Just(json!({"level": "info"})),
        Just(json!({"requestId": 1})),
        Just(json!({"name": "t", "task": {"ttl": 5}})),
        Just(json!({"taskId": "abc"})),
        Just(json!([1])),
    ];
    let id = prop_oneof![Just(None), Just(Some(json!(1))), Just(Some(json!("x")))];
    prop_oneof![
        4 => (method, params, id).prop_map(|(m, p, id)| {
            let mut message = json!({"jsonrpc": "2.0", "method": m, "params": p});
            if let Some(id) = id {
                message["id"] = id;
            }
            message
        }),
        1 => Just(json!({"jsonrpc": "2.0", "id": 5, "result": {}})),
    ]
}

fn arb_session() -> impl Strategy<Value = SessionView> {
    prop_oneof![
        Just(SessionView::Absent),
        Just(SessionView::Unknown),
        Just(TASKS),
        Just(LISTING),
        Just(SessionView::Live {
            phase: Phase::Initializing,
            tasks: false,
            list: false
        }),
        Just(LIVE),
    ]
}

proptest! {
    #[test]
    fn the_session_check_comes_first_and_session_errors_stay_in_the_session(
        body in arb_message(),
        session in arb_session(),
    ) {
        let is_initialize = body["method"] == "initialize";
        let plan = planned(body.clone(), session);
        match (&plan, session) {
            (SessionPlan::Reject { error, .. }, SessionView::Absent) if !is_initialize => {
                prop_assert_eq!(error, &McpError::SessionRequired);
            }
            (SessionPlan::Reject { error, .. }, SessionView::Unknown) if !is_initialize => {
                prop_assert_eq!(error, &McpError::SessionNotFound);
            }
            (SessionPlan::Reject { .. }, SessionView::Live { .. }) => {
                prop_assert!(is_initialize, "only initialize is refused outright in a session");
            }
            (SessionPlan::Reject { .. }, _) => prop_assert!(is_initialize),
            (SessionPlan::Initialize { .. }, session) => {
                prop_assert!(is_initialize);
                let live = matches!(session, SessionView::Live { .. });
                prop_assert!(!live, "initialize on a live session");
            }
            (_, SessionView::Live { .. }) => {}
            (other, session) => prop_assert!(false, "{other:?} without a live session ({session:?})"),
        }
        if let SessionPlan::Error { id, .. } | SessionPlan::Run { id, .. } = &plan {
            prop_assert_eq!(Some(id), body.get("id"));
        }
    }

    #[test]
    fn a_modern_meta_is_never_routed_to_a_session(body in arb_message(), session in any::<bool>()) {
        let mut body = body;
        if body.get("method").is_some() {
            body["params"] = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
            let headers: Vec<(&str, &[u8])> = if session {
                vec![("Mcp-Session-Id", b"0123456789abcdef0123456789abcdef")]
            } else {
                vec![]
            };
            let message: Message = parse_message(body.to_string().as_bytes()).unwrap();
            prop_assert_eq!(route(headers.as_slice(), &message), Era::Modern);
        }
    }
}

#[test]
fn tasks_exist_only_in_sessions_offered_them() {
    let request = |session: SessionView, method: &str, params: Value| {
        planned(
            json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}),
            session,
        )
    };
    // The test tool's policy is `required`.
    let SessionPlan::Run {
        action: SessionAction::Call(call),
        ..
    } = request(
        TASKS,
        "tools/call",
        json!({"name": "t", "task": {"ttl": 60000, "pollInterval": 5}}),
    )
    else {
        panic!("a call");
    };
    assert_eq!(
        call.task,
        Some(TaskHint {
            ttl_ms: Some(60_000)
        })
    );
    assert_eq!(
        session_error(request(TASKS, "tools/call", json!({"name": "t"}))),
        (
            json!(2),
            -32601,
            "This tool must be called with a task (params.task)".to_owned()
        )
    );
    assert_eq!(
        session_error(request(
            TASKS,
            "tools/call",
            json!({"name": "t", "task": 5})
        )),
        (json!(2), -32602, "task must be an object".to_owned())
    );
    // Without tasks offered, the hint is ignored and the tool runs now.
    let SessionPlan::Run {
        action: SessionAction::Call(call),
        ..
    } = request(LIVE, "tools/call", json!({"name": "t", "task": {}}))
    else {
        panic!("a call");
    };
    assert_eq!(call.task, None);
    let id = TaskId::parse("abc").unwrap();
    for (method, action) in [
        ("tasks/get", SessionAction::GetTask(id.clone())),
        ("tasks/result", SessionAction::TaskResult(id.clone())),
        ("tasks/cancel", SessionAction::CancelTask(id.clone())),
    ] {
        // The related-task `_meta` of a request is ignored: `params.taskId` wins.
        let params = json!({"taskId": "abc",
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "zzz"}}});
        assert_eq!(
            request(TASKS, method, params.clone()),
            SessionPlan::Run {
                id: json!(2),
                action
            }
        );
        assert_eq!(
            session_error(request(LIVE, method, params)).1,
            -32601,
            "{method}"
        );
        assert_eq!(
            session_error(request(TASKS, method, json!({"taskId": 1}))),
            (
                json!(2),
                -32602,
                "A non-empty taskId is required".to_owned()
            )
        );
    }
    // `tasks/list` is not advertised, so not served.
    assert_eq!(
        session_error(request(TASKS, "tasks/list", json!({}))).1,
        -32601
    );
}

#[test]
fn session_headers_must_fit_the_message() {
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    for version in ["2025-11-25", "2025-06-18"] {
        assert!(matches!(
            planned_with(
                &[("MCP-Protocol-Version", version.as_bytes())],
                ping.clone(),
                LIVE
            ),
            SessionPlan::Run { .. }
        ));
    }
    for (header, requested) in [
        ("2026-07-28", "2026-07-28"),
        ("2024-11-05", "2024-11-05"),
        ("x y\u{1}", "unknown"),
    ] {
        let (_, error) = rejected(planned_with(
            &[("MCP-Protocol-Version", header.as_bytes())],
            ping.clone(),
            LIVE,
        ));
        assert_eq!(
            (error.code(), error.http_status()),
            (-32022, 400),
            "{header}"
        );
        assert_eq!(error.data().unwrap()["requested"], requested);
    }
    let (_, error) = rejected(planned_with(
        &[("Mcp-Method", b"tools/list")],
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}),
        LIVE,
    ));
    assert_eq!((error.code(), error.http_status()), (-32020, 400));
    assert!(matches!(
        planned_with(&[("Mcp-Method", b"ping")], ping, LIVE),
        SessionPlan::Run { .. }
    ));
}

#[test]
fn a_session_keeps_only_the_capabilities_it_checks() {
    let init = |caps: Value| {
        planned(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": caps}}),
            SessionView::Absent,
        )
    };
    let SessionPlan::Initialize {
        client_capabilities,
        ..
    } = init(json!({
        "elicitation": {"form": {}}, "sampling": {}, "experimental": {"x": [1, 2, 3]},
        "tasks": {"list": {}}
    }))
    else {
        panic!("a session");
    };
    assert_eq!(
        Value::Object(client_capabilities),
        json!({"elicitation": {"form": {}}, "sampling": {}})
    );
    let huge = json!({"sampling": {"x": "y".repeat(5000)}});
    let (_, error) = rejected(init(huge));
    assert_eq!(error.to_string(), "capabilities are larger than 4096 bytes");
    // What is not kept does not count.
    assert!(matches!(
        init(json!({"experimental": {"x": "y".repeat(100_000)}})),
        SessionPlan::Initialize { .. }
    ));
    // Extensions are kept when they fit beside the rest, else dropped: never a refusal.
    let small = json!({"sampling": {}, "extensions": {"io.modelcontextprotocol/ui": {}}});
    let SessionPlan::Initialize {
        client_capabilities,
        ..
    } = init(small.clone())
    else {
        panic!("a session");
    };
    assert_eq!(Value::Object(client_capabilities), small);
    let large = json!({"sampling": {}, "extensions": {"com.example/big": {"x": "y".repeat(5000)}}});
    let SessionPlan::Initialize {
        client_capabilities,
        ..
    } = init(large)
    else {
        panic!("a session despite large extensions");
    };
    assert_eq!(Value::Object(client_capabilities), json!({"sampling": {}}));
    for odd in [json!("str"), json!([1, 2]), Value::Null] {
        let SessionPlan::Initialize {
            client_capabilities,
            ..
        } = init(json!({"sampling": {}, "extensions": odd}))
        else {
            panic!("a session");
        };
        assert_eq!(Value::Object(client_capabilities), json!({"sampling": {}}));
    }
}

/// The request labels of the session path name exactly the methods its planner serves: each is
/// planned in a session offered tasks and `tasks/list` on a server offering every feature
/// (never -32601), and a method with no label of its own is -32601.
#[test]
fn session_labels_name_the_methods_the_planner_serves() {
    use tasks_core::sessions::{session_label_index, SESSION_LABELS};
    let params = |method: &str| match method {
        "tools/call" => json!({"name": "t"}),
        "logging/setLevel" => json!({"level": "info"}),
        "tasks/get" | "tasks/result" | "tasks/cancel" => json!({"taskId": "abc"}),
        "initialize" => json!({"protocolVersion": "2025-11-25"}),
        "prompts/get" => json!({"name": "p"}),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            json!({"uri": "x://y"})
        }
        "completion/complete" => {
            json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}})
        }
        _ => json!({}),
    };
    let requests = SESSION_LABELS
        .iter()
        .take_while(|label| **label != "session/notification");
    for label in requests.chain([&"session/sampling/createMessage"]) {
        let method = &label["session/".len()..];
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params(method)});
        let message = parse_message(body.to_string().as_bytes()).expect("a message");
        let own_label = SESSION_LABELS[session_label_index(&message)] == *label;
        let session = if method == "initialize" {
            SessionView::Absent
        } else {
            LISTING
        };
        let not_found = matches!(
            planned_offering(body, session),
            SessionPlan::Error {
                error: McpError::MethodNotFound,
                ..
            }
        );
        assert_eq!(own_label, !not_found, "{label}");
    }
}
