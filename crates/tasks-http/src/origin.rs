//! DNS-rebinding protection: `Host` and `Origin` checks (`wire-2026-07-28.md` §13.8).
//!
//! Loopback names (`localhost`, `127.0.0.1`, `[::1]`) are allowed on any port; other hosts only
//! when listed in the allow-list (compared case-insensitively, with or without a port). A
//! present `Origin` must name an allowed host too; a missing `Origin` (non-browser clients) is
//! fine. A request failing either check is HTTP 403.

use http::HeaderMap;

/// Which `Host`/`Origin` values are accepted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostPolicy {
    /// Extra allowed host names or `host:port` values, beyond the loopback names.
    pub allowed_hosts: Vec<String>,
}

fn split_host(authority: &str) -> (&str, Option<&str>) {
    if let Some(rest) = authority.strip_prefix('[') {
        // [v6]:port
        if let Some(end) = rest.find(']') {
            let host = &authority[..end + 2];
            let port = authority[end + 2..].strip_prefix(':');
            return (host, port);
        }
        return (authority, None);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => (host, Some(port)),
        _ => (authority, None),
    }
}

impl HostPolicy {
    fn allows_authority(&self, authority: &str) -> bool {
        let authority = authority.trim();
        let (host, _port) = split_host(authority);
        let host = host.to_ascii_lowercase();
        if matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]") {
            return true;
        }
        self.allowed_hosts.iter().any(|allowed| {
            allowed.eq_ignore_ascii_case(authority) || allowed.eq_ignore_ascii_case(&host)
        })
    }

    /// Whether the request's `Host` (required) and `Origin` (optional) are allowed.
    pub fn allows(&self, headers: &HeaderMap) -> bool {
        let Some(host) = headers
            .get(http::header::HOST)
            .and_then(|h| h.to_str().ok())
        else {
            return false;
        };
        if !self.allows_authority(host) {
            return false;
        }
        match headers.get(http::header::ORIGIN) {
            None => true,
            Some(origin) => {
                let Ok(origin) = origin.to_str() else {
                    return false;
                };
                let authority = origin
                    .split_once("://")
                    .map(|(_, rest)| rest.trim_end_matches('/'))
                    .unwrap_or("");
                !authority.is_empty() && self.allows_authority(authority)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(http::header::HOST, host.parse().unwrap());
        if let Some(o) = origin {
            h.insert(http::header::ORIGIN, o.parse().unwrap());
        }
        h
    }

    #[test]
    fn loopback_on_any_port_is_allowed() {
        let p = HostPolicy::default();
        assert!(p.allows(&headers("127.0.0.1:3000", None)));
        assert!(p.allows(&headers("localhost:1", Some("http://localhost:1"))));
        assert!(p.allows(&headers("[::1]:8080", Some("http://[::1]:8080"))));
    }

    #[test]
    fn rebinding_is_rejected() {
        let p = HostPolicy::default();
        assert!(!p.allows(&headers(
            "evil.example.com",
            Some("http://evil.example.com")
        )));
        assert!(!p.allows(&headers("127.0.0.1:3000", Some("http://evil.example.com"))));
        assert!(!p.allows(&headers("127.0.0.1:3000", Some("null"))));
        assert!(!p.allows(&HeaderMap::new()));
    }

    #[test]
    fn allow_list() {
        let p = HostPolicy {
            allowed_hosts: vec!["mcp.example.com".into()],
        };
        assert!(p.allows(&headers(
            "MCP.example.com:443",
            Some("https://mcp.example.com")
        )));
        assert!(!p.allows(&headers("other.example.com", None)));
    }
}
