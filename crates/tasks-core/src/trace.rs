//! W3C trace context (<https://www.w3.org/TR/trace-context/#traceparent-header>, section 3.2)
//! carried in a request's `params._meta["traceparent"]`, the key OpenTelemetry's MCP
//! instrumentation uses. A server records the trace id with the request and with the task it
//! creates, so a task's logs, including a re-run or a takeover on another node, join the
//! client's trace. An invalid value is ignored, as the W3C text asks of a malformed header.

use serde_json::Value;

/// The `_meta` key of the trace context.
pub const META_TRACEPARENT: &str = "traceparent";

/// A valid `traceparent`: `version-traceid-parentid-flags`, lowercase hex, version `00` (55
/// characters) or a later version (at least those 55 characters, then `-` and more), never
/// version `ff`, and neither id all zeros.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent(String);

impl TraceParent {
    /// Parses `text`; `None` when it is not a valid `traceparent`.
    pub fn parse(text: &str) -> Option<TraceParent> {
        let bytes = text.as_bytes();
        let hex = |range: std::ops::Range<usize>| {
            bytes
                .get(range)
                .is_some_and(|part| part.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        };
        let dash = |at: usize| bytes.get(at) == Some(&b'-');
        let shape = hex(0..2)
            && dash(2)
            && hex(3..35)
            && dash(35)
            && hex(36..52)
            && dash(52)
            && hex(53..55);
        if !shape || &text[0..2] == "ff" {
            return None;
        }
        let version_ok = match &text[0..2] {
            "00" => bytes.len() == 55,
            _ => bytes.len() == 55 || dash(55),
        };
        let zero = |range: std::ops::Range<usize>| text[range].bytes().all(|b| b == b'0');
        (version_ok && !zero(3..35) && !zero(36..52)).then(|| TraceParent(text[..55].to_owned()))
    }

    /// The trace context of `_meta`, when it has a valid one.
    pub fn from_meta(meta: &serde_json::Map<String, Value>) -> Option<TraceParent> {
        meta.get(META_TRACEPARENT)
            .and_then(Value::as_str)
            .and_then(TraceParent::parse)
    }

    /// The whole value (the version-00 fields of a later version).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The trace id: 32 lowercase hex characters.
    pub fn trace_id(&self) -> &str {
        &self.0[3..35]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_w3c_example_parses() {
        let parsed = TraceParent::parse(VALID).unwrap();
        assert_eq!(parsed.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(parsed.as_str(), VALID);
    }

    #[test]
    fn malformed_values_are_ignored() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
        // A later version may carry more fields; the version-00 part is kept.
        let later = format!("01{}-more", &VALID[2..]);
        assert_eq!(
            TraceParent::parse(&later).unwrap().as_str(),
            format!("01{}", &VALID[2..])
        );
    }

    proptest! {
        #[test]
        fn never_panics_and_keeps_only_hex_ids(text in "\\PC{0,80}") {
            if let Some(parsed) = TraceParent::parse(&text) {
                prop_assert_eq!(parsed.as_str().len(), 55);
                prop_assert!(parsed.trace_id().bytes().all(|b| b.is_ascii_hexdigit()));
            }
        }
    }
}
