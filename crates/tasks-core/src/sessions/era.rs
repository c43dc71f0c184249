//! Era routing: does a message belong to the stateless 2026-07-28 path or to a 2025 session?
//!
//! Decided from the message and its headers alone, before any session lookup, in this order
//! (MCP 2026-07-28 versioning, "Backward Compatibility with Initialization-Based Versions";
//! streamable-http "Earlier Streamable HTTP Revisions"):
//!
//! | message | era |
//! |---|---|
//! | a request or notification whose `params._meta` names a protocol version | 2026 (a stale `Mcp-Session-Id` is ignored) |
//! | `initialize` without it | 2025 |
//! | anything carrying `Mcp-Session-Id` | 2025 (an unknown session is then HTTP 404) |
//! | no `_meta` version, `MCP-Protocol-Version` a 2025 revision served ([`LEGACY_VERSIONS`]) | 2025 (without a session id: HTTP 400) |
//! | a response (only sessions are sent requests) without a session id | 2026 (-32600 there) |
//! | anything else | 2026 (admission answers it: -32020, -32022, …) |

use serde_json::Value;

use crate::admission::{HeaderSource, Message};
use crate::headers::{self, MirroredHeader};
use crate::protocol::{META_PROTOCOL_VERSION, METHOD_INITIALIZE};

use crate::protocol::LEGACY_VERSIONS;

/// The header carrying a 2025 session's id.
pub const SESSION_HEADER: &str = "Mcp-Session-Id";

/// The era a message belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// Stateless 2026-07-28: admission and [`crate::plan`].
    Modern,
    /// A 2025 session: [`super::plan_session`].
    Session,
}

/// The era of a POSTed `message`: see the module table.
pub fn route<H: HeaderSource + ?Sized>(headers: &H, message: &Message) -> Era {
    let has_session = headers.values(SESSION_HEADER).next().is_some();
    let envelope = match message {
        Message::Response(_) if has_session => return Era::Session,
        Message::Response(_) => return Era::Modern,
        Message::Envelope(envelope) => envelope,
    };
    if has_modern_meta(envelope.params.as_ref()) {
        return Era::Modern;
    }
    if envelope.method == METHOD_INITIALIZE || has_session {
        return Era::Session;
    }
    let legacy_header = headers
        .values(MirroredHeader::ProtocolVersion.name())
        .next()
        .and_then(|raw| headers::decode_value(MirroredHeader::ProtocolVersion, raw).ok())
        .is_some_and(|v| LEGACY_VERSIONS.contains(&&*v));
    if legacy_header {
        Era::Session
    } else {
        Era::Modern
    }
}

/// Whether `params` carries the 2026 `_meta` protocol version.
fn has_modern_meta(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .is_some_and(|v| !v.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::parse_message;

    fn era(headers: &[(&str, &[u8])], body: &str) -> Era {
        route(headers, &parse_message(body.as_bytes()).unwrap())
    }

    const MODERN_CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

    #[test]
    fn the_routing_table() {
        let session: (&str, &[u8]) = ("mcp-session-id", b"abc");
        let v2025: (&str, &[u8]) = ("MCP-Protocol-Version", b"2025-11-25");
        let v2026: (&str, &[u8]) = ("MCP-Protocol-Version", b"2026-07-28");
        let v2024: (&str, &[u8]) = ("MCP-Protocol-Version", b"2024-11-05");
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
        let init_modern = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let answer = r#"{"jsonrpc":"2.0","id":0,"result":{"action":"decline"}}"#;
        // A 2026 request is stateless, a stale session id included.
        assert_eq!(era(&[v2026, session], MODERN_CALL), Era::Modern);
        assert_eq!(era(&[v2026], init_modern), Era::Modern);
        assert_eq!(era(&[], init), Era::Session);
        assert_eq!(era(&[v2026], init), Era::Session);
        assert_eq!(era(&[session], ping), Era::Session);
        assert_eq!(era(&[v2025], ping), Era::Session);
        assert_eq!(era(&[v2025, session], note), Era::Session);
        // Unserved or modern header versions without `_meta` stay on the modern path, which
        // answers them (-32022, -32020).
        assert_eq!(era(&[v2024], ping), Era::Modern);
        assert_eq!(era(&[v2026], ping), Era::Modern);
        assert_eq!(era(&[], ping), Era::Modern);
        assert_eq!(era(&[v2026], note), Era::Modern);
        assert_eq!(era(&[session], answer), Era::Session);
        assert_eq!(era(&[v2025], answer), Era::Modern);
    }
}
