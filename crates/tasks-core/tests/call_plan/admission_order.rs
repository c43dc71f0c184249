//! The admission order of `tasks_core::plan::admit`, steps 3–11, without a network: each step
//! broken alone gets its own error, and when two are broken the earlier step's error wins.

use serde_json::json;
use tasks_core::plan::{admit, parse_envelope, Admitted};
use tasks_core::{McpError, Method};

use crate::request::Req;

fn good() -> Req {
    Req::get("t-1").id(json!(7))
}

fn run(req: &Req) -> Result<Admitted, McpError> {
    let envelope = parse_envelope(&req.bytes()).map_err(|e| e.error)?;
    admit(req.head().as_slice(), envelope)
}

type Break = fn(&mut Req);

/// Each step's breakage, with the (code, message) it must produce, in admission order.
fn steps() -> Vec<(&'static str, Break, i64, &'static str)> {
    vec![
        (
            "3 not JSON-RPC 2.0",
            |r| r.body["jsonrpc"] = json!("1.0"),
            -32600,
            "jsonrpc must be \"2.0\"",
        ),
        (
            "5 no MCP-Protocol-Version",
            |r| r.headers.retain(|(n, _)| *n != "mcp-protocol-version"),
            -32020,
            "Missing MCP-Protocol-Version header",
        ),
        (
            "6 Mcp-Method differs",
            |r| r.set_header("mcp-method", "tasks/cancel"),
            -32020,
            "Mcp-Method header does not match the request method",
        ),
        (
            "7 _meta without protocolVersion",
            |r| {
                r.body["params"]["_meta"]
                    .as_object_mut()
                    .unwrap()
                    .remove("io.modelcontextprotocol/protocolVersion");
            },
            -32602,
            "params._meta is missing io.modelcontextprotocol/protocolVersion",
        ),
        (
            "8 header version differs from _meta",
            |r| r.set_header("mcp-protocol-version", "2099-01-01"),
            -32020,
            "MCP-Protocol-Version header does not match the request _meta protocolVersion",
        ),
        (
            "9 unsupported version",
            |r| {
                r.set_header("mcp-protocol-version", "v999.0.0");
                r.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] =
                    json!("v999.0.0");
            },
            -32022,
            "Unsupported protocol version",
        ),
        (
            "10 unknown method",
            |r| {
                r.body["method"] = json!("tasks/list");
                r.set_header("mcp-method", "tasks/list");
            },
            -32601,
            "Method not found",
        ),
        (
            "11 Mcp-Name differs",
            |r| r.set_header("mcp-name", "t-2"),
            -32020,
            "Mcp-Name header does not match the request params",
        ),
    ]
}

fn outcome(result: Result<Admitted, McpError>) -> (i64, String) {
    let error = result.expect_err("a broken request is refused");
    (error.code(), error.to_string())
}

#[test]
fn a_correct_request_is_admitted() {
    let admitted = run(&good()).expect("admitted");
    assert_eq!(admitted.method, Method::TasksGet);
    assert_eq!(admitted.id, json!(7));
    assert_eq!(admitted.meta.protocol_version, "2026-07-28");
}

#[test]
fn each_step_broken_alone_gets_its_own_error() {
    for (name, break_it, code, message) in steps() {
        let mut req = good();
        break_it(&mut req);
        assert_eq!(outcome(run(&req)), (code, message.to_owned()), "{name}");
    }
}

#[test]
fn with_two_steps_broken_the_earlier_one_wins() {
    let steps = steps();
    for (i, (early, break_early, code, message)) in steps.iter().enumerate() {
        for (late, break_late, _, _) in &steps[i + 1..] {
            let mut req = good();
            // The later breakage first, so that where both touch the same header the earlier
            // step's value is what the request carries.
            break_late(&mut req);
            break_early(&mut req);
            assert_eq!(
                outcome(run(&req)),
                (*code, (*message).to_owned()),
                "{early} with {late}"
            );
        }
    }
}
