//! The 2025 revisions served on the session path, and `initialize` version negotiation.
//!
//! MCP 2025-11-25 lifecycle, "Version Negotiation": the server answers the requested version
//! when it supports it. For a version it never serves, this server keeps the refusal the
//! modern path gives (-32022 with `data.supported` naming every revision it serves) rather
//! than proposing another version the client did not ask for; the client can retry with one
//! of them.

use crate::error::McpError;

use crate::protocol::LEGACY_VERSIONS;

/// Whether sessions of `version` are offered tasks: only 2025-11-25 has them.
pub fn serves_tasks(version: &str) -> bool {
    version == "2025-11-25"
}

/// The revision an `initialize` asking for `requested` runs under.
///
/// # Errors
/// -32022 `Unsupported protocol version` (HTTP 400) with `data.supported` (every revision
/// served, 2026-07-28 first) and `data.requested`.
pub fn negotiate(requested: &str) -> Result<&'static str, McpError> {
    LEGACY_VERSIONS
        .iter()
        .copied()
        .find(|v| *v == requested)
        .ok_or_else(|| McpError::UnsupportedLegacyVersion {
            requested: requested.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_versions_are_answered_as_asked_and_others_refused() {
        assert_eq!(negotiate("2025-11-25"), Ok("2025-11-25"));
        assert_eq!(negotiate("2025-06-18"), Ok("2025-06-18"));
        for other in ["2025-03-26", "2024-11-05", "2026-07-28", "", "2025-11-25 "] {
            let error = negotiate(other).unwrap_err();
            assert_eq!(error.code(), -32022);
            assert_eq!(error.http_status(), 400);
            let data = error.data().unwrap();
            assert_eq!(
                data["supported"],
                serde_json::json!(["2026-07-28", "2025-11-25", "2025-06-18"])
            );
            assert_eq!(data["requested"], other);
        }
    }
}
