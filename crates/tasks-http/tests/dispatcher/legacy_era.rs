//! What a 2025-era (session-based) client is told by a server with the session path turned off
//! (`ServerBuilder::sessions(None)`): it speaks only 2026-07-28, and names it in every error to
//! `initialize` (MCP 2026-07-28 versioning, "Backward Compatibility with Initialization-Based
//! Versions"; streamable-http "Backward Compatibility"). With the path on (the default), the
//! session path serves 2025-11-25 and 2025-06-18: `sessions.rs`. Over HTTP:
//! `tests/tests/http_e2e/input_trust_http.rs`, `a_2025_initialize_is_told_the_supported_versions`.

use std::sync::Arc;

use serde_json::json;
use tasks_http::Dispatcher;
use tasks_test_support::dispatcher::*;
use tasks_test_support::request::*;
use tasks_test_support::tools::*;

/// A dispatcher serving 2026-07-28 only.
fn modern_only() -> (Dispatcher, Arc<Runs>) {
    let runs = Arc::new(Runs::default());
    (builder(&runs).sessions(None).build(), runs)
}

fn legacy_initialize() -> Req {
    Req::new("initialize")
        .no_meta()
        .param("protocolVersion", json!("2025-11-25"))
        .param("capabilities", json!({}))
        .param(
            "clientInfo",
            json!({"name": "inspector-cli", "version": "0.17.0"}),
        )
        .without("mcp-protocol-version")
        .id(json!(0))
}

#[tokio::test]
async fn a_2025_initialize_gets_32022_naming_the_supported_versions() {
    let (d, _) = modern_only();
    for header in [
        None,
        Some("2025-11-25"),
        Some("2025-03-26"),
        Some("2026-07-28"),
    ] {
        let mut req = legacy_initialize();
        if let Some(version) = header {
            req = req.header("mcp-protocol-version", version);
        }
        let error = req
            .send(&d)
            .await
            .error(400, -32022, "Unsupported protocol version");
        assert_eq!(
            error["data"],
            json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}),
            "header {header:?}"
        );
    }
    // A repeated or differing version header does not hide the answer.
    let error = legacy_initialize()
        .header("mcp-protocol-version", "2025-06-18")
        .append("mcp-protocol-version", "2025-03-26")
        .send(&d)
        .await
        .error(400, -32022, "Unsupported protocol version");
    assert_eq!(error["data"]["requested"], "2025-11-25");
    // Without a protocolVersion in the body, the header (or "unknown") is what was asked for.
    let error = legacy_initialize()
        .remove_param("protocolVersion")
        .header("mcp-protocol-version", "2025-06-18")
        .send(&d)
        .await
        .error(400, -32022, "Unsupported protocol version");
    assert_eq!(error["data"]["requested"], "2025-06-18");
    let error = legacy_initialize()
        .remove_param("protocolVersion")
        .send(&d)
        .await
        .error(400, -32022, "Unsupported protocol version");
    assert_eq!(error["data"]["requested"], "unknown");
}

#[tokio::test]
async fn a_session_era_request_gets_32022_too() {
    let (d, _) = modern_only();
    let error = Req::new("tools/list")
        .no_meta()
        .header("mcp-protocol-version", "2025-11-25")
        .id(json!(2))
        .send(&d)
        .await
        .error(400, -32022, "Unsupported protocol version");
    assert_eq!(
        error["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
    );
    // A 2026-07-28 request that forgot its _meta is still malformed, not legacy.
    Req::new("tools/list")
        .no_meta()
        .id(json!(3))
        .send(&d)
        .await
        .error(400, -32602, "params._meta is required");
}

#[tokio::test]
async fn a_2026_initialize_is_404_and_still_names_the_versions() {
    // Runner check server-stateless: `initialize` with 2026-07-28 headers and `_meta` is
    // 404 with -32601.
    let (d, _) = modern_only();
    let error =
        Req::new("initialize")
            .id(json!(1))
            .send(&d)
            .await
            .error(404, -32601, "Method not found");
    assert_eq!(error["data"], json!({"supported": ["2026-07-28"]}));
    let other = Req::new("ping")
        .id(json!(2))
        .send(&d)
        .await
        .error(404, -32601, "Method not found");
    assert!(
        other.get("data").is_none(),
        "only initialize names versions"
    );
}
