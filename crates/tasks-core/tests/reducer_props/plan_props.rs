//! Property tests of the planner (`tasks_core::plan`) without a network or a runtime: on any
//! message it answers, never panics, and every answer is consistent with the message.

use crate::common;

use common::stub::StubView;
use proptest::prelude::*;
use serde_json::{json, Value};
use tasks_core::plan::parse_message;
use tasks_core::plan::{plan, plan_message, Action, Plan};
use tasks_core::{Method, TaskPolicy, Timestamp};

const METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "subscriptions/listen",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "completion/complete",
    "skills/list",
    "skills/get",
    "resources/directory/read",
    "initialize",
    "tasks/list",
    "ping",
    "",
];

fn arb_meta() -> impl Strategy<Value = Option<Value>> {
    let caps = prop_oneof![
        3 => Just(json!({})),
        4 => Just(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})),
        1 => Just(json!({"extensions": {"io.modelcontextprotocol/tasks": {"x": 1}}})),
        1 => Just(json!({"elicitation": {}})),
        1 => Just(json!([])),
    ];
    let version = prop_oneof![8 => Just(json!("2026-07-28")), 1 => Just(json!("2025-11-25")), 1 => Just(json!(7))];
    proptest::option::weighted(
        0.85,
        (version, caps, prop::bool::weighted(0.85)).prop_map(|(v, c, full)| {
            if full {
                json!({"io.modelcontextprotocol/protocolVersion": v,
                   "io.modelcontextprotocol/clientCapabilities": c})
            } else {
                json!({"io.modelcontextprotocol/protocolVersion": v})
            }
        }),
    )
}

fn arb_params() -> impl Strategy<Value = Option<Value>> {
    let task_id = prop_oneof![5 => Just(json!("t-1")), 1 => Just(json!("")), 1 => Just(json!(1)), 1 => Just(Value::Null)];
    let name = prop_oneof![5 => Just(json!("t")), 1 => Just(json!("nope")), 1 => Just(json!(3))];
    let extra = prop_oneof![
        8 => Just(json!({"notifications": {}})),
        1 => Just(json!({"arguments": {"bad": 1}})),
        1 => Just(json!({"arguments": []})),
        1 => Just(json!({"inputResponses": {"k": {"action": "accept", "content": {}}}})),
        1 => Just(json!({"inputResponses": {"k": 1}})),
        1 => Just(json!({"requestState": "forged.state"})),
        1 => Just(json!({"cursor": "c"})),
        1 => Just(json!({"notifications": {"taskIds": ["t-1", "t-1"]}})),
        1 => Just(json!({"notifications": {"toolsListChanged": "yes"}})),
    ];
    proptest::option::weighted(
        0.9,
        (arb_meta(), task_id, name, extra, prop::bool::weighted(0.9)).prop_map(
            |(meta, task_id, name, extra, object)| {
                if !object {
                    return json!("not an object");
                }
                let mut params = extra.as_object().cloned().unwrap_or_default();
                params.insert("taskId".into(), task_id);
                params.insert("name".into(), name);
                if let Some(meta) = meta {
                    params.insert("_meta".into(), meta);
                }
                Value::Object(params)
            },
        ),
    )
}

/// A header as sent: the right value (derived from the body), or replaced, or left out.
fn arb_header(others: Vec<&'static str>) -> impl Strategy<Value = Option<Option<&'static str>>> {
    prop_oneof![
        6 => Just(None),
        1 => Just(Some(None)),
        1 => prop::sample::select(others).prop_map(|v| Some(Some(v))),
    ]
}

/// A message: body bytes and headers, mostly consistent with each other.
fn arb_message() -> impl Strategy<Value = (Vec<u8>, Vec<(&'static str, Vec<u8>)>)> {
    let id = prop_oneof![
        Just(Some(json!(1))),
        Just(Some(json!("a"))),
        Just(None),
        Just(Some(json!(1.5)))
    ];
    let body = (
        id,
        prop::sample::select(METHODS),
        arb_params(),
        prop::bool::weighted(0.95),
    );
    let headers = (
        arb_header(vec!["2025-11-25", "", "=?base64?MjAyNi0wNy0yOA==?="]),
        arb_header(vec!["tools/call", "tasks/get", "server/discover"]),
        arb_header(vec!["t", "t-1", "nope"]),
    );
    let raw = prop::collection::vec(any::<u8>(), 0..40);
    (body, headers, prop::option::weighted(0.05, raw)).prop_map(
        |((id, method, params, good_jsonrpc), (version, method_header, name), raw)| {
            let mut body =
                json!({"jsonrpc": if good_jsonrpc { "2.0" } else { "1.0" }, "method": method});
            if let Some(id) = id {
                body["id"] = id;
            }
            let derived_version = params
                .as_ref()
                .and_then(|p| p.pointer("/_meta/io.modelcontextprotocol~1protocolVersion"))
                .and_then(Value::as_str)
                .unwrap_or("2026-07-28")
                .to_owned();
            let field = Method::parse(method).and_then(Method::name_field);
            let derived_name = field
                .and_then(|f| params.as_ref().and_then(|p| p.get(f)))
                .and_then(Value::as_str)
                .map(str::to_owned);
            if let Some(params) = params {
                body["params"] = params;
            }
            let mut headers = Vec::new();
            let mut put =
                |key: &'static str, sent: Option<Option<&str>>, derived: Option<String>| {
                    let value = match sent {
                        None => derived,
                        Some(replaced) => replaced.map(str::to_owned),
                    };
                    if let Some(value) = value {
                        headers.push((key, value.into_bytes()));
                    }
                };
            put("mcp-protocol-version", version, Some(derived_version));
            put("mcp-method", method_header, Some(method.to_owned()));
            put("mcp-name", name, derived_name);
            let bytes = raw.unwrap_or_else(|| serde_json::to_vec(&body).unwrap());
            (bytes, headers)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Planning a message parsed first (as the era router does) plans it as the body would be:
    /// a JSON-RPC response on the stateless path is the same -32600.
    #[test]
    fn a_parsed_message_plans_as_its_body((body, headers) in arb_message(), response in any::<bool>()) {
        let body = if response { br#"{"jsonrpc":"2.0","id":7,"result":{}}"#.to_vec() } else { body };
        let view = StubView::new(TaskPolicy::Optional, 3).with_prompts_and_resources();
        let pairs: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (*n, v.as_slice())).collect();
        let now = Timestamp::from_unix_millis(1_000);
        let direct = plan(pairs.as_slice(), &body, &view, "scope", now);
        let Ok(message) = parse_message(&body) else {
            prop_assert_eq!(kind(&direct), "reject");
            return Ok(());
        };
        let parsed = plan_message(pairs.as_slice(), message, &view, "scope", now);
        match (direct, parsed) {
            (Plan::Accepted, Plan::Accepted) => {}
            (Plan::Reject { id, error }, Plan::Reject { id: id2, error: error2 }) => {
                prop_assert_eq!(id, id2);
                prop_assert_eq!(error.code(), error2.code());
                prop_assert_eq!(error.to_string(), error2.to_string());
            }
            (Plan::Run(a), Plan::Run(b)) => prop_assert_eq!(a.id, b.id),
            (a, b) => prop_assert!(false, "{:?} / {:?}", kind(&a), kind(&b)),
        }
    }

    #[test]
    fn every_message_gets_a_consistent_plan((body, headers) in arb_message()) {
        let view = StubView::new(TaskPolicy::Optional, 3).with_prompts_and_resources();
        let pairs: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (*n, v.as_slice())).collect();
        let planned = plan(pairs.as_slice(), &body, &view, "scope", Timestamp::from_unix_millis(1_000));
        let message: Option<Value> = serde_json::from_slice(&body).ok();
        let readable_id = message
            .as_ref()
            .and_then(|m| m.get("id"))
            .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
            .cloned();
        match planned {
            Plan::Accepted => {
                let m = message.expect("a notification is JSON");
                prop_assert!(m.get("id").is_none());
                prop_assert_eq!(&m["jsonrpc"], &json!("2.0"));
                prop_assert!(m["method"].is_string());
            }
            Plan::Reject { id, error } => {
                let status = error.http_status();
                prop_assert!([400, 404, 500].contains(&status), "{:?}", error);
                prop_assert_eq!(error.code() == -32601, status == 404, "{:?}", error);
                if error.code() != -32700 {
                    prop_assert_eq!(&id, &readable_id, "the id is echoed when readable");
                }
            }
            Plan::Run(run) => {
                let m = message.expect("a planned request is JSON");
                let method = Method::parse(m["method"].as_str().unwrap());
                prop_assert!(method.is_some(), "only served methods run");
                prop_assert_eq!(Some(&run.id), readable_id.as_ref());
                prop_assert_eq!(run.meta.protocol_version.as_str(), "2026-07-28");
                let header = headers.iter().find(|(n, _)| *n == "mcp-method").map(|(_, v)| v.clone());
                prop_assert_eq!(header, Some(m["method"].as_str().unwrap().as_bytes().to_vec()));
                let expected = match method.unwrap() {
                    Method::ServerDiscover => matches!(run.action, Action::Discover),
                    Method::ToolsList => matches!(run.action, Action::ListTools),
                    // The view has the one tool `t`: a planned call carries it.
                    Method::ToolsCall => matches!(run.action, Action::Call { .. }),
                    Method::SubscriptionsListen => matches!(run.action, Action::Listen(_)),
                    // The view offers neither completion nor skills: their methods never run.
                    Method::CompletionComplete
                    | Method::SkillsList
                    | Method::SkillsGet
                    | Method::ResourcesDirectoryRead => false,
                    m if m.feature().is_some() => matches!(run.action, Action::Catalog(_)),
                    _ => matches!(run.action, Action::Task(_)) && run.tasks_declared,
                };
                prop_assert!(expected, "{:?}", run.action);
            }
        }
    }
}

/// The generator is not vacuous: over a fixed sample it plans runs of every action, accepted
/// notifications, and rejections of every admission code.
#[test]
fn the_generator_reaches_every_outcome() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let view = StubView::new(TaskPolicy::Optional, 3).with_prompts_and_resources();
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..1500 {
        let (body, headers) = arb_message().new_tree(&mut runner).unwrap().current();
        let pairs: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (*n, v.as_slice())).collect();
        let outcome = match plan(
            pairs.as_slice(),
            &body,
            &view,
            "s",
            Timestamp::from_unix_millis(1),
        ) {
            Plan::Accepted => "accepted".to_owned(),
            Plan::Reject { error, .. } => error.code().to_string(),
            Plan::Run(run) => match run.action {
                Action::Discover => "discover",
                Action::ListTools => "list",
                Action::Call { .. } => "call",
                Action::Task(_) => "task",
                Action::Listen(_) => "listen",
                Action::Catalog(_) => "catalog",
            }
            .to_owned(),
        };
        seen.insert(outcome);
    }
    for want in [
        "accepted", "discover", "list", "call", "task", "listen", "catalog", "-32700", "-32600",
        "-32601", "-32602", "-32020", "-32021", "-32022",
    ] {
        assert!(seen.contains(want), "never produced {want}: {seen:?}");
    }
}

/// The variant of a plan, for a failure message.
fn kind<T>(plan: &Plan<T>) -> &'static str {
    match plan {
        Plan::Accepted => "accepted",
        Plan::Reject { .. } => "reject",
        Plan::Run(_) => "run",
    }
}
