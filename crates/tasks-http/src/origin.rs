//! DNS-rebinding protection: `Host` and `Origin` checks (MCP 2026-07-28 streamable-http,
//! "Security & Endpoint":
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>;
//! the runner scenario `dns-rebinding-protection` also tests `Host`: checks
//! `localhost-host-rebinding-rejected` and `localhost-host-valid-accepted`).
//!
//! Loopback names (`localhost`, `127.0.0.1`, `[::1]`) are allowed on any port; other hosts only
//! when listed in the allow-list (compared case-insensitively, with or without a port). A
//! present `Origin` must name an allowed host too, or be one of the allowed origins (a browser
//! app served from elsewhere, allowed by CORS as well); a missing `Origin` (non-browser
//! clients) is fine. A request failing either check is HTTP 403.

use http::HeaderMap;

/// Which `Host`/`Origin` values are accepted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostPolicy {
    /// Extra allowed host names or `host:port` values, beyond the loopback names.
    pub allowed_hosts: Vec<String>,
    /// Allowed `Origin` values besides those naming an allowed host: whole origins such as
    /// `https://inspector.example.com` (scheme, host and port; compared case-insensitively,
    /// a trailing `/` ignored). They do not widen the `Host` check.
    pub allowed_origins: Vec<String>,
}

/// Splits `host[:port]` / `[v6][:port]`; `None` when the port is not all digits or anything
/// follows the bracketed address.
fn split_host(authority: &str) -> Option<&str> {
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        let rest = &authority[end + 1..];
        let port = if rest.is_empty() {
            None
        } else {
            Some(rest.strip_prefix(':')?)
        };
        (&authority[..=end], port)
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    (port_ok && !host.is_empty()).then_some(host)
}

/// The single value of `name`, or `Err` when it is repeated or not visible ASCII.
fn single(headers: &HeaderMap, name: http::header::HeaderName) -> Result<Option<&str>, ()> {
    let mut values = headers.get_all(name).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(());
    }
    first.map(|v| v.to_str().map_err(|_| ())).transpose()
}

impl HostPolicy {
    fn allows_authority(&self, authority: &str) -> bool {
        let authority = authority.trim();
        let Some(host) = split_host(authority) else {
            return false;
        };
        let host = host.to_ascii_lowercase();
        if matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]") {
            return true;
        }
        self.allowed_hosts.iter().any(|allowed| {
            allowed.eq_ignore_ascii_case(authority) || allowed.eq_ignore_ascii_case(&host)
        })
    }

    /// Whether the request's host and `Origin` are allowed. The host is the single `Host`
    /// header, or the URI authority (HTTP/2 `:authority`) when there is none; a missing host,
    /// or a repeated `Host` or `Origin`, is refused. A missing `Origin` (non-browser clients)
    /// is fine.
    pub fn allows(&self, headers: &HeaderMap, uri: &http::Uri) -> bool {
        let host = match single(headers, http::header::HOST) {
            Ok(Some(host)) => host,
            Ok(None) => match uri.authority() {
                Some(authority) => authority.as_str(),
                None => return false,
            },
            Err(()) => return false,
        };
        if !self.allows_authority(host) {
            return false;
        }
        match single(headers, http::header::ORIGIN) {
            Err(()) => false,
            Ok(None) => true,
            Ok(Some(origin)) => {
                let bare = origin.strip_suffix('/').unwrap_or(origin);
                if self.allowed_origins.iter().any(|allowed| {
                    let allowed = allowed.strip_suffix('/').unwrap_or(allowed);
                    allowed.eq_ignore_ascii_case(bare)
                }) {
                    return true;
                }
                let authority = origin
                    .split_once("://")
                    .map(|(_, rest)| rest.strip_suffix('/').unwrap_or(rest))
                    .unwrap_or("");
                !authority.is_empty() && self.allows_authority(authority)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(p: &HostPolicy, h: &HeaderMap) -> bool {
        p.allows(h, &http::Uri::from_static("/mcp"))
    }

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
        assert!(check(&p, &headers("127.0.0.1:3000", None)));
        assert!(check(
            &p,
            &headers("localhost:1", Some("http://localhost:1"))
        ));
        assert!(check(&p, &headers("[::1]:8080", Some("http://[::1]:8080"))));
    }

    #[test]
    fn rebinding_is_rejected() {
        let p = HostPolicy::default();
        assert!(!check(
            &p,
            &headers("evil.example.com", Some("http://evil.example.com"))
        ));
        assert!(!check(
            &p,
            &headers("127.0.0.1:3000", Some("http://evil.example.com"))
        ));
        assert!(!check(&p, &headers("127.0.0.1:3000", Some("null"))));
        assert!(!check(&p, &HeaderMap::new()));
        assert!(!check(&p, &headers("[::1]evil.com", None)));
        assert!(!check(&p, &headers("127.0.0.1:abc", None)));
        assert!(!check(
            &p,
            &headers("127.0.0.1:1", Some("http://localhost:1/x@evil"))
        ));
        let mut twice = headers("127.0.0.1", None);
        twice.append(http::header::HOST, "evil.example.com".parse().unwrap());
        assert!(!check(&p, &twice));
    }

    #[test]
    fn http2_authority_stands_in_for_host() {
        let p = HostPolicy::default();
        let uri: http::Uri = "http://127.0.0.1:3000/mcp".parse().unwrap();
        assert!(p.allows(&HeaderMap::new(), &uri));
        let evil: http::Uri = "http://evil.example.com/mcp".parse().unwrap();
        assert!(!p.allows(&HeaderMap::new(), &evil));
    }

    #[test]
    fn allow_list() {
        let p = HostPolicy {
            allowed_hosts: vec!["mcp.example.com".into()],
            ..HostPolicy::default()
        };
        assert!(check(
            &p,
            &headers("MCP.example.com:443", Some("https://mcp.example.com"))
        ));
        assert!(!check(&p, &headers("other.example.com", None)));
    }

    #[test]
    fn allowed_origins_admit_that_origin_only() {
        let p = HostPolicy {
            allowed_origins: vec!["https://Inspector.example.com/".into()],
            ..HostPolicy::default()
        };
        assert!(check(
            &p,
            &headers("127.0.0.1:3000", Some("https://inspector.example.com"))
        ));
        // Another scheme or port is another origin.
        assert!(!check(
            &p,
            &headers("127.0.0.1:3000", Some("http://inspector.example.com"))
        ));
        assert!(!check(
            &p,
            &headers("127.0.0.1:3000", Some("https://inspector.example.com:8443"))
        ));
        // The Host check is not widened.
        assert!(!check(&p, &headers("inspector.example.com", None)));
    }
}
