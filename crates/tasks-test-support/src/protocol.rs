//! What a correct MCP 2026-07-28 request carries (the protocol constants, the `_meta` of the
//! version and the client capabilities, the `Mcp-Name` a method mirrors, answer values), and
//! what a JSON-RPC error must be.

use serde_json::{json, Value};

/// The protocol revision the tests speak.
pub const VERSION: &str = "2026-07-28";
/// The Tasks extension id.
pub const TASKS: &str = "io.modelcontextprotocol/tasks";
/// The result `_meta` key of the server identity.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The notification `_meta` key naming the listen request.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The request `_meta` key of the protocol version.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The request `_meta` key of the client capabilities.
pub const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

/// Client capabilities declaring elicitation and the Tasks extension.
pub fn tasks_caps() -> Value {
    json!({"elicitation": {}, "extensions": {TASKS: {}}})
}

/// The request `params._meta` of `version` and `caps`.
pub fn meta(version: &str, caps: Value) -> Value {
    json!({META_VERSION: version, META_CAPS: caps})
}

/// The `Mcp-Name` value of request `method` with `params`: the param the method mirrors
/// (`name`, `uri` or `taskId`), when it is a string.
pub fn mcp_name<'a>(method: &str, params: &'a serde_json::Map<String, Value>) -> Option<&'a str> {
    let field = tasks_core::Method::parse(method).and_then(tasks_core::Method::name_field)?;
    params.get(field).and_then(Value::as_str)
}

/// An accepted ElicitResult with `content`.
pub fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// Asserts the JSON-RPC error `body`, answered with HTTP status `got`, is `status`, `code`
/// and `message`, with no `result`; returns the error object.
///
/// # Panics
/// When it differs.
pub fn assert_error(got: u16, body: &Value, status: u16, code: i64, message: &str) -> Value {
    assert!(body.get("result").is_none(), "{body}");
    assert_eq!(
        (
            got,
            body["error"]["code"].as_i64(),
            body["error"]["message"].as_str()
        ),
        (status, Some(code), Some(message)),
        "{body}"
    );
    body["error"].clone()
}
