//! The request head as the core reads it.

use http::{HeaderMap, HeaderName};
use tasks_core::headers::MirroredHeader;
use tasks_core::plan::HeaderSource;
use tasks_core::sessions::SESSION_HEADER;

/// The headers the core asks for on every request, by the name it asks with and as a parsed
/// [`HeaderName`]: a lookup by one of these names skips parsing and lowercasing the name (a
/// lookup by `&str` does both each time, about 5 % of a `tasks/get` served in process).
static KNOWN: [(&str, HeaderName); 4] = [
    (
        MirroredHeader::ProtocolVersion.name(),
        HeaderName::from_static("mcp-protocol-version"),
    ),
    (
        MirroredHeader::Method.name(),
        HeaderName::from_static("mcp-method"),
    ),
    (
        MirroredHeader::Name.name(),
        HeaderName::from_static("mcp-name"),
    ),
    (SESSION_HEADER, HeaderName::from_static("mcp-session-id")),
];

/// The parsed `Mcp-Method` header name.
pub(crate) fn mcp_method() -> &'static HeaderName {
    &KNOWN[1].1
}

/// An HTTP header map seen as a [`HeaderSource`] (every value of a header, in order).
#[derive(Debug, Clone, Copy)]
pub struct Head<'a>(pub &'a HeaderMap);

impl HeaderSource for Head<'_> {
    fn values<'a, 'n>(&'a self, name: &'n str) -> impl Iterator<Item = &'a [u8]> + 'n
    where
        'a: 'n,
    {
        let values = match KNOWN
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(name))
        {
            Some((_, parsed)) => self.0.get_all(parsed),
            None => self.0.get_all(name),
        };
        values.iter().map(|v| v.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn known_and_other_names_find_every_value_in_order() {
        let mut headers = HeaderMap::new();
        headers.append("mcp-method", HeaderValue::from_static("tasks/get"));
        headers.append("mcp-method", HeaderValue::from_static("tools/call"));
        headers.append("mcp-param-region", HeaderValue::from_static("eu"));
        headers.append("mcp-session-id", HeaderValue::from_static("s-1"));
        let head = Head(&headers);
        let all = |name: &str| head.values(name).collect::<Vec<_>>();
        assert_eq!(all("Mcp-Method"), [b"tasks/get".as_slice(), b"tools/call"]);
        assert_eq!(all("MCP-METHOD"), [b"tasks/get".as_slice(), b"tools/call"]);
        assert_eq!(all("Mcp-Param-Region"), [b"eu".as_slice()]);
        assert_eq!(all(SESSION_HEADER), [b"s-1".as_slice()]);
        assert!(all("MCP-Protocol-Version").is_empty());
        assert!(all("Mcp-Name").is_empty());
    }
}
