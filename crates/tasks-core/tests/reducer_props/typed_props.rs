//! The typed, borrowed read of the hot requests (`tasks_core::plan::plan_typed`, which
//! `tasks_core::plan::plan` and the HTTP dispatcher try first) against the `Value` path it
//! bypasses (`parse_envelope`, then `plan_envelope`), kept in the library for every other
//! request and here the oracle: over bodies of `tasks/get`, `tasks/cancel` and `tools/call`
//! (well-formed ones; members missing, extra, repeated, of the wrong type, or with escaped
//! names; unusual numbers and strings; wrong `_meta` shapes; invalid UTF-8; cut or corrupted
//! text) and headers that match them or not, the typed path plans exactly what the oracle
//! plans, or declines; and the planner answers every body as the oracle does (the same plan,
//! or the same error and echoed id).

use crate::common;

use common::stub::{StubTool, StubView};
use proptest::prelude::*;
use serde_json::Value;
use tasks_core::plan::{parse_envelope, plan, plan_envelope, plan_typed, Plan};
use tasks_core::{Method, TaskPolicy, Timestamp};

const NOW: u64 = 1_000;
const SCOPE: &str = "scope";

/// The `Value` path: the whole body parsed into `Value`s, then admitted and planned.
fn oracle(headers: &[(&str, &[u8])], body: &[u8], view: &StubView) -> Plan<StubTool> {
    let now = Timestamp::from_unix_millis(NOW);
    match parse_envelope(body) {
        Ok(envelope) => plan_envelope(headers, envelope, view, SCOPE, now),
        Err(failure) => Plan::Reject {
            id: failure.id,
            error: failure.error,
        },
    }
}

/// A member as written: its name (first letter escaped with `\u` when `.2`) and value text.
type Member = (String, String, bool);

/// An object's text from its members, in order, repeats included.
fn object(members: &[Member]) -> String {
    let members: Vec<String> = members
        .iter()
        .map(|(name, value, escaped)| {
            let name = if *escaped && !name.is_empty() {
                let mut chars = name.chars();
                let first = chars.next().unwrap() as u32;
                format!("\"\\u{first:04x}{}\"", chars.as_str())
            } else {
                serde_json::to_string(name).unwrap()
            };
            format!("{name}:{value}")
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

/// Value texts a check looks twice at: odd numbers and strings, nesting, serde_json's marker.
fn odd_value() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "null",
        "true",
        "0",
        "-0",
        "1.5",
        "1e400",
        "-1e400",
        "1e-400",
        "123456789012345678901234567890",
        "18446744073709551616",
        "-9223372036854775809",
        "\"\\ud800\"",
        "\"\\udc00x\"",
        "\"\\ud83d\\ude00\"",
        "\"a\\u0000b\"",
        "[]",
        "{}",
        "[1,{\"a\":[null]}]",
        "{\"$serde_json::private::RawValue\":\"{}\"}",
        "{\"$serde_json::private::RawValue\":5}",
        "{\"x\":1,\"$serde_json::private::RawValue\":\"1\"}",
        "{\"$serde_json::private::Number\":\"1\"}",
    ])
    .prop_map(str::to_owned)
}

/// A member: one of `names` (or another name) with one of its `values` or an odd value.
fn member(names: Vec<&'static str>, values: Vec<String>) -> impl Strategy<Value = Member> {
    (
        prop_oneof![
            8 => prop::sample::select(names).prop_map(str::to_owned),
            1 => "[a-z_]{1,3}",
        ],
        prop_oneof![12 => prop::sample::select(values), 1 => odd_value()],
        prop::bool::weighted(0.1),
    )
}

/// The members of a whole object: each of `required` (most often kept), then up to `count`
/// members of any kind (repeats included), in a random order.
fn members(
    required: Vec<Member>,
    extra: BoxedStrategy<Member>,
    count: usize,
) -> impl Strategy<Value = Vec<Member>> {
    (
        Just(required),
        prop::collection::vec(prop::bool::weighted(0.93), 4),
        prop::collection::vec(extra, 0..count),
    )
        .prop_map(|(required, keep, extra)| {
            let mut all: Vec<Member> = required
                .into_iter()
                .zip(keep)
                .filter_map(|(member, keep)| keep.then_some(member))
                .collect();
            all.extend(extra);
            all
        })
        .prop_shuffle()
}

/// An object's text (`required` and up to two `extra` members) most of the time, else one of
/// the `odd` texts in its place.
fn object_or(
    required: impl Strategy<Value = Vec<Member>>,
    extra: BoxedStrategy<Member>,
    odd: &[&str],
) -> impl Strategy<Value = String> {
    let object_text = required
        .prop_flat_map(move |required| members(required, extra.clone(), 2))
        .prop_map(|m| object(&m));
    prop_oneof![
        16 => object_text,
        1 => prop::sample::select(texts(odd)),
    ]
}

fn texts(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

/// One of `good` most of the time, else one of `bad`.
fn pick(good: &[&str], bad: &[&str]) -> BoxedStrategy<String> {
    prop_oneof![
        8 => prop::sample::select(texts(good)),
        1 => prop::sample::select(texts(bad)),
    ]
    .boxed()
}

const TRACE: &str = "\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"";
const VERSIONS: (&[&str], &[&str]) = (&["\"2026-07-28\""], &["\"2025-11-25\"", "7", "null"]);
const CAPABILITIES: (&[&str], &[&str]) = (
    &[
        "{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}",
        "{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}},\"elicitation\":{}}",
    ],
    &[
        "{\"extensions\":{\"io.modelcontextprotocol/tasks\":{\"x\":1}}}",
        "{}",
        "[]",
        "null",
    ],
);
const TASK_IDS: (&[&str], &[&str]) = (
    &["\"t-1\"", "\"t\\u002d1\""],
    &[
        "\"\"",
        "1",
        "null",
        "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"",
    ],
);
const NAMES: (&[&str], &[&str]) = (&["\"t\"", "\"\\u0074\""], &["\"nope\"", "3"]);
const ARGUMENTS: (&[&str], &[&str]) = (
    &["{}", "{\"seconds\":0}", "null"],
    &["{\"bad\":1}", "[]", "{\"n\":1e400}", "{\"s\":\"\\ud800\"}"],
);

/// Every value of a pair of lists.
fn all(lists: &[(&[&str], &[&str])]) -> Vec<String> {
    lists
        .iter()
        .flat_map(|(good, bad)| texts(good).into_iter().chain(texts(bad)))
        .collect()
}

/// A `_meta` object's text (or another value in its place).
fn meta() -> impl Strategy<Value = String> {
    let required = (
        pick(VERSIONS.0, VERSIONS.1),
        pick(CAPABILITIES.0, CAPABILITIES.1),
    )
        .prop_map(|(version, capabilities)| {
            vec![
                (
                    "io.modelcontextprotocol/protocolVersion".to_owned(),
                    version,
                    false,
                ),
                (
                    "io.modelcontextprotocol/clientCapabilities".to_owned(),
                    capabilities,
                    false,
                ),
            ]
        });
    let mut values = all(&[VERSIONS, CAPABILITIES]);
    values.extend(texts(&[
        "\"info\"",
        "\"loud\"",
        "\"p\"",
        "3",
        TRACE,
        "\"00-bad\"",
    ]));
    let extra = member(
        vec![
            "io.modelcontextprotocol/protocolVersion",
            "io.modelcontextprotocol/clientCapabilities",
            "io.modelcontextprotocol/logLevel",
            "progressToken",
            "traceparent",
            "traceparent",
            "other",
        ],
        values,
    )
    .boxed();
    object_or(required, extra, &["null", "[]", "\"m\"", "{}"])
}

/// A params object's text for `method` (or another value in its place).
fn params(method: &'static str) -> impl Strategy<Value = String> {
    let call = method == "tools/call";
    let (key, first) = if call {
        ("name", pick(NAMES.0, NAMES.1))
    } else {
        ("taskId", pick(TASK_IDS.0, TASK_IDS.1))
    };
    let required = (first, meta(), pick(ARGUMENTS.0, ARGUMENTS.1)).prop_map(
        move |(first, meta, arguments)| {
            let mut members = vec![
                (key.to_owned(), first, false),
                ("_meta".to_owned(), meta, false),
            ];
            if call {
                members.push(("arguments".to_owned(), arguments, false));
            }
            members
        },
    );
    let mut values = all(&[TASK_IDS, NAMES, ARGUMENTS]);
    values.extend(texts(&[
        "{\"k\":{\"action\":\"accept\",\"content\":{}}}",
        "\"forged.state\"",
        "{\"taskId\":\"t-1\"}",
    ]));
    let extra = member(
        vec![
            "taskId",
            "name",
            "arguments",
            "inputResponses",
            "requestState",
            "task",
            "cursor",
        ],
        values,
    )
    .boxed();
    object_or(required, extra, &["null", "[]", "\"p\"", "{}"])
}

/// A body of a hot request, mostly well-formed, with a byte cut or changed now and then.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let method = prop::sample::select(vec!["tasks/get", "tasks/cancel", "tools/call"]);
    let top = method.prop_flat_map(|method| {
        let required = (
            params(method),
            pick(&["1", "\"a\"", "-7"], &["1.5", "null", "1e400"]),
        )
            .prop_map(move |(params, id)| {
                vec![
                    ("jsonrpc".to_owned(), "\"2.0\"".to_owned(), false),
                    ("id".to_owned(), id, false),
                    ("method".to_owned(), format!("\"{method}\""), false),
                    ("params".to_owned(), params, false),
                ]
            });
        let extra = member(
            vec![
                "jsonrpc", "id", "method", "params", "result", "error", "extra",
            ],
            texts(&[
                "\"2.0\"",
                "\"1.0\"",
                "2",
                "\"tasks/get\"",
                "\"tools/list\"",
                "\"task\\u0073/get\"",
                "{\"code\":-1,\"message\":\"no\"}",
            ]),
        )
        .boxed();
        required.prop_flat_map(move |required| members(required, extra.clone(), 2))
    });
    let damage = prop_oneof![
        40 => Just(None),
        1 => any::<prop::sample::Index>().prop_map(|at| Some((at, None))),
        1 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(at, b)| Some((at, Some(b)))),
        1 => any::<prop::sample::Index>().prop_map(|at| Some((at, Some(0xff)))),
    ];
    (top, damage).prop_map(|(members, damage)| {
        let mut bytes = object(&members).into_bytes();
        match damage {
            None => {}
            Some((at, None)) => bytes.truncate(at.index(bytes.len())),
            Some((at, Some(byte))) => {
                let at = at.index(bytes.len());
                bytes[at] = byte;
            }
        }
        bytes
    })
}

/// A header as sent: derived from the body (`None`), left out or repeated, or another value.
fn header(others: Vec<&'static str>) -> impl Strategy<Value = Header> {
    prop_oneof![
        30 => Just(None),
        1 => Just(Some(vec![])),
        1 => prop::sample::select(others.clone()).prop_map(|v| Some(vec![v])),
        1 => prop::sample::select(others).prop_map(|v| Some(vec![v, v])),
    ]
}

/// What is sent of `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`: see [`header`].
pub(crate) type Sent = (Header, Header, Header);

/// One header as sent: derived from the body (`None`), or these values.
pub(crate) type Header = Option<Vec<&'static str>>;

/// The headers for `body`: each derived from what the body says, unless replaced.
pub(crate) fn headers(body: &[u8], (version, method, name): Sent) -> Vec<(&'static str, Vec<u8>)> {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let get = |pointer: &str| {
        parsed
            .as_ref()
            .and_then(|p| p.pointer(pointer))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let method_name = get("/method");
    let field = method_name
        .as_deref()
        .and_then(Method::parse)
        .and_then(Method::name_field)
        .unwrap_or("taskId");
    let derived = [
        get("/params/_meta/io.modelcontextprotocol~1protocolVersion"),
        method_name.clone(),
        get(&format!("/params/{field}")),
    ];
    let mut out = Vec::new();
    for ((key, sent), derived) in ["mcp-protocol-version", "mcp-method", "mcp-name"]
        .into_iter()
        .zip([version, method, name])
        .zip(derived)
    {
        match sent {
            None => out.extend(derived.map(|d| (key, d.into_bytes()))),
            Some(values) => out.extend(values.into_iter().map(|v| (key, v.as_bytes().to_vec()))),
        }
    }
    out
}

fn arb_headers() -> impl Strategy<Value = Sent> {
    (
        header(vec![
            "2025-11-25",
            "=?base64?MjAyNi0wNy0yOA==?=",
            "2026-07-28 ",
        ]),
        header(vec!["tasks/get", "tools/call", "Tasks/get"]),
        header(vec!["t", "t-1", "=?base64?dC0x?=", "nope"]),
    )
}

fn arb_policy() -> impl Strategy<Value = TaskPolicy> {
    prop::sample::select(vec![
        TaskPolicy::Sync,
        TaskPolicy::Optional,
        TaskPolicy::Required,
    ])
}

/// The new path's plan and whether the typed read planned it, against the oracle's.
pub(crate) fn check(
    body: &[u8],
    headers: &[(&'static str, Vec<u8>)],
    policy: TaskPolicy,
) -> Result<bool, TestCaseError> {
    let view = StubView::new(policy, 3);
    let pairs: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (*n, v.as_slice())).collect();
    let now = Timestamp::from_unix_millis(NOW);
    let expected = oracle(&pairs, body, &view);
    let typed = plan_typed(pairs.as_slice(), body, &view, SCOPE, now);
    let text = String::from_utf8_lossy(body);
    if let Some(typed) = &typed {
        prop_assert_eq!(typed, &expected, "typed plan of {} {:?}", text, headers);
    }
    let planned = plan(pairs.as_slice(), body, &view, SCOPE, now);
    prop_assert_eq!(planned, expected, "plan of {} {:?}", text, headers);
    Ok(typed.is_some())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4_000))]

    /// Any body of a hot request, with headers that match it or not.
    #[test]
    fn hot_requests_plan_as_the_value_path_does(
        body in body(),
        sent in arb_headers(),
        policy in arb_policy(),
    ) {
        let headers = headers(&body, sent);
        check(&body, &headers, policy)?;
    }
}

/// The typed path is taken for the ordinary requests (so the property above compares it, not
/// just the fallback): a `tasks/get` and a `tasks/cancel` as the benchmark sends them, with
/// their members in any order, escaped names, unknown members and a `traceparent`.
#[test]
fn ordinary_requests_take_the_typed_path() {
    let meta = concat!(
        r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
        r#""io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#
    );
    let traced = concat!(
        r#"{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","x":[1.5,{"y":null}],"#,
        r#""io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"#,
        r#""io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#
    );
    for (method, body) in [
        (
            "tasks/get",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{{"taskId":"t-1","_meta":{meta}}}}}"#
            ),
        ),
        (
            "tasks/cancel",
            format!(
                r#"{{"params":{{"_meta":{traced},"task\u0049d":"t-1","extra":{{}}}},"method":"tasks/cancel","id":"a","jsonrpc":"2.0","more":1e300}}"#
            ),
        ),
    ] {
        let headers = vec![
            ("mcp-protocol-version", b"2026-07-28".to_vec()),
            ("mcp-method", method.as_bytes().to_vec()),
            ("mcp-name", b"t-1".to_vec()),
        ];
        assert!(
            check(body.as_bytes(), &headers, TaskPolicy::Optional).unwrap(),
            "{body}"
        );
    }
}

/// The random bodies above reach the typed path for each method often enough that the
/// property compares it, not only the fallback.
#[test]
fn the_random_bodies_reach_the_typed_path() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (body(), arb_headers(), arb_policy());
    let mut typed = std::collections::BTreeMap::<String, (u32, u32)>::new();
    for _ in 0..2_000 {
        let (body, sent, policy) = strategy.new_tree(&mut runner).unwrap().current();
        let headers = headers(&body, sent);
        let method = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|b| b.get("method").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_default();
        let took = check(&body, &headers, policy).unwrap();
        let entry = typed.entry(method).or_default();
        entry.0 += u32::from(took);
        entry.1 += 1;
    }
    eprintln!("typed / all, by method: {typed:?}");
    for method in ["tasks/get", "tasks/cancel", "tools/call"] {
        let (took, all) = typed[method];
        assert!(took * 10 >= all, "{method}: {took} of {all}");
    }
}
