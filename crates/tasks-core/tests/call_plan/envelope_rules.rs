//! The message rules of admission as tables: a body that is not JSON (-32700), a body that is not
//! one JSON-RPC request (-32600, the id echoed when readable), the required `params._meta`
//! (-32602) and unknown or removed methods (-32601, HTTP 404, before `Mcp-Name`), through the
//! planner as the HTTP adapter calls it, each refusal as the wire answer. The adapter's tests
//! (`crates/tasks-http/tests/dispatcher/main.rs`) keep one case of each table, and the body
//! errors only the transport has (a body too large or cut short).

use serde_json::json;

use crate::request::{wire, Req, META_CAPS, META_VERSION, VERSION};

#[test]
fn unparseable_bodies_are_32700() {
    let deep_arrays = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_objects = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    let bodies: Vec<Vec<u8>> = vec![
        b"not json".to_vec(),
        b"".to_vec(),
        b"{".to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"".to_vec(),
        // Invalid UTF-8 inside a string, and a lone byte.
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}".to_vec(),
        b"\xc3".to_vec(),
        // Trailing garbage after one message.
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"} x".to_vec(),
        // Two messages in one body.
        b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}{\"jsonrpc\":\"2.0\",\"method\":\"b\"}".to_vec(),
        // 100 000 levels of nesting: rejected without overflowing the stack.
        deep_arrays.into_bytes(),
        deep_objects.into_bytes(),
    ];
    for body in bodies {
        let error =
            Req::new("server/discover")
                .body(body)
                .anonymous_error(400, -32700, "Parse error");
        assert!(error.get("data").is_none(), "{error}");
    }
}

#[test]
fn bodies_that_are_not_one_request_are_32600() {
    let message = Req::new("server/discover").body;
    let batch = "Batch requests are not supported: send one message per POST";
    let not_object = "Expected a JSON-RPC request object";
    let jsonrpc = "jsonrpc must be \"2.0\"";
    let id = "id must be a string or an integer";
    let method = "method must be a string";
    let cases = [
        (json!([message]), batch),
        (json!([]), batch),
        (json!(42), not_object),
        (json!("server/discover"), not_object),
        (json!(null), not_object),
        (json!(true), not_object),
        (json!({"id": 1, "method": "server/discover"}), jsonrpc),
        (
            json!({"jsonrpc": "1.0", "id": 1, "method": "server/discover"}),
            jsonrpc,
        ),
        (
            json!({"jsonrpc": 2.0, "id": 1, "method": "server/discover"}),
            jsonrpc,
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "server/discover"}),
            id,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "server/discover"}),
            id,
        ),
        (
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "server/discover"}),
            id,
        ),
        (json!({"jsonrpc": "2.0", "id": 1}), method),
        (json!({"jsonrpc": "2.0", "id": 1, "method": 7}), method),
    ];
    for (body, message) in cases {
        // A readable integer id is echoed even when the rest of the message is invalid.
        let echoed = body.get("id").is_some_and(|id| id.is_i64());
        let req = Req::new("server/discover").body_json(body);
        if echoed {
            req.error(400, -32600, message);
        } else {
            req.anonymous_error(400, -32600, message);
        }
    }
}

#[test]
fn required_meta_is_32602_with_http_400_even_with_valid_headers() {
    let discover = || Req::new("server/discover").id(json!("meta"));
    let required = "params._meta is required";
    let no_version = "params._meta is missing io.modelcontextprotocol/protocolVersion";
    let no_caps = "params._meta is missing io.modelcontextprotocol/clientCapabilities";
    let cases = [
        (discover().no_meta(), required),
        (discover().meta(json!("text")), required),
        (discover().meta(json!(null)), required),
        (discover().meta(json!({META_CAPS: {}})), no_version),
        (
            discover().meta(json!({META_VERSION: 20260728, META_CAPS: {}})),
            no_version,
        ),
        (discover().meta(json!({META_VERSION: VERSION})), no_caps),
        (
            discover().meta(json!({META_VERSION: VERSION, META_CAPS: []})),
            no_caps,
        ),
        // No params at all.
        (
            discover()
                .body_json(json!({"jsonrpc": "2.0", "id": "meta", "method": "server/discover"})),
            required,
        ),
        (
            discover().body_json(
                json!({"jsonrpc": "2.0", "id": "meta", "method": "server/discover", "params": [1]}),
            ),
            "params must be an object",
        ),
        // The same on a task method (before the Mcp-Name, capability and params checks).
        (Req::get("t").id(json!("meta")).no_meta(), required),
    ];
    for (req, message) in cases {
        req.error(400, -32602, message);
    }
}

#[test]
fn unknown_and_removed_methods_are_404_even_without_mcp_name() {
    for method in [
        "bogus/method",
        "tasks/result",
        "tasks/list",
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "notifications/initialized",
        // Methods of features the server does not offer.
        "prompts/get",
        "resources/read",
        "completion/complete",
    ] {
        for req in [
            Req::new(method).param("taskId", json!("tasks-conformance-isolation-probe")),
            Req::new(method).tasks(),
        ] {
            let req = req.id(json!(method));
            assert!(
                !req.headers.iter().any(|(n, _)| *n == "mcp-name"),
                "sent without Mcp-Name"
            );
            let (_, body) = wire(req.plan());
            assert!(!body.to_string().contains("mcp-name"), "{body}");
            req.error(404, -32601, "Method not found");
        }
    }
}
