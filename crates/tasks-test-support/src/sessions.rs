//! The 2025 session path of an in-process dispatcher: 2025-era requests, opening a session,
//! answering the server's requests, and 2025 result assertions.

use serde_json::{json, Value};
use tasks_http::Dispatcher;

use crate::dispatcher::Reply;
use crate::request::Req;

/// The 2025 revision the session tests speak.
pub const V2025: &str = "2025-11-25";

/// A 2025 request: no `_meta`, no `Mcp-Method`, the 2025 version header.
pub fn legacy(method: &str) -> Req {
    Req::new(method)
        .no_meta()
        .without("mcp-method")
        .header("mcp-protocol-version", V2025)
}

/// An `initialize` of [`V2025`].
pub fn initialize() -> Req {
    initialize_at(V2025)
}

/// An `initialize` of `version`, declaring elicitation and sampling.
pub fn initialize_at(version: &str) -> Req {
    legacy("initialize")
        .without("mcp-protocol-version")
        .param("protocolVersion", json!(version))
        .param("capabilities", json!({"elicitation": {}, "sampling": {}}))
        .param("clientInfo", json!({"name": "test", "version": "1"}))
        .id(json!(0))
}

/// Opens a 2025-11-25 session (initialize, then initialized) and returns its id.
pub async fn open(d: &Dispatcher) -> String {
    open_at(d, V2025).await
}

/// Opens a session of `version`.
pub async fn open_at(d: &Dispatcher, version: &str) -> String {
    let reply = initialize_at(version).send(d).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let id = reply.session_id.clone().expect("a session id");
    let note = in_session(&id, "notifications/initialized")
        .notification()
        .send(d)
        .await;
    assert_eq!((note.status, note.is_empty()), (202, true));
    id
}

/// A 2025 request `method` in session `session`.
pub fn in_session(session: &str, method: &str) -> Req {
    legacy(method).header("mcp-session-id", session)
}

/// The client's answer to the server's request `id`.
pub fn answer(session: &str, body: Value) -> Req {
    legacy("answer")
        .header("mcp-session-id", session)
        .body_json(body)
}

/// A 2025 result: HTTP 200, the id echoed, no 2026 fields.
pub fn legacy_result(reply: &Reply) -> Value {
    let body = reply.json();
    assert_eq!(reply.status, 200, "{body}");
    assert_eq!(Some(&body["id"]), reply.sent_id.as_ref(), "{body}");
    let result = body["result"].clone();
    assert!(result.get("resultType").is_none(), "{result}");
    assert!(result.get("_meta").is_none(), "{result}");
    result
}
