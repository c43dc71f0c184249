//! Cross-site request checks for state-changing browser requests: the `Origin` (and
//! `Sec-Fetch-Site`) headers, and the session's CSRF token from the form.

use http::HeaderMap;
use subtle::ConstantTimeEq as _;

use crate::error::AdminError;
use crate::state::Auth;

/// The form field carrying the CSRF token.
pub(crate) const FIELD: &str = "csrf";

/// The fields of a form that carries only the CSRF token (cancel, logout).
#[derive(Debug, serde::Deserialize)]
pub(crate) struct CsrfForm {
    /// The CSRF token.
    #[serde(default)]
    pub(crate) csrf: Option<String>,
}

/// Whether a request comes from the console's own pages: `Sec-Fetch-Site`, when present, is
/// `same-origin` or `none`, and `Origin`, when present, names `host` (the request's own
/// `Host`, scheme `http` or `https`). A browser sends `Origin` on every cross-origin POST.
///
/// Under the console's `Referrer-Policy: no-referrer` a browser sends `Origin: null` even on
/// its own forms: that passes only with `Sec-Fetch-Site: same-origin` (a header pages cannot
/// set), never alone.
pub(crate) fn same_origin(headers: &HeaderMap, host: Option<&str>) -> bool {
    let site = headers.get("sec-fetch-site").map(|v| v.as_bytes());
    if site.is_some_and(|site| !matches!(site, b"same-origin" | b"none")) {
        return false;
    }
    let Some(origin) = headers.get(http::header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    if origin == "null" {
        return site == Some(b"same-origin".as_slice());
    }
    let authority = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    match (authority, host) {
        (Some(authority), Some(host)) => authority.eq_ignore_ascii_case(host),
        _ => false,
    }
}

/// Whether a form's `offered` CSRF token is the session's (compared in constant time); a
/// bearer request needs none.
pub(crate) fn check(auth: &Auth, offered: Option<&str>) -> Result<(), AdminError> {
    let Some(expected) = auth.csrf() else {
        return Ok(());
    };
    let offered = offered.unwrap_or_default();
    if bool::from(expected.as_bytes().ct_eq(offered.as_bytes())) {
        Ok(())
    } else {
        Err(AdminError::Forbidden("missing or wrong CSRF token"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn only_the_own_origin_passes() {
        let host = Some("127.0.0.1:8080");
        assert!(same_origin(&headers(&[]), host));
        assert!(same_origin(
            &headers(&[("origin", "http://127.0.0.1:8080")]),
            host
        ));
        assert!(!same_origin(
            &headers(&[("origin", "https://evil.example")]),
            host
        ));
        assert!(!same_origin(&headers(&[("origin", "null")]), host));
        assert!(same_origin(
            &headers(&[("origin", "null"), ("sec-fetch-site", "same-origin")]),
            host
        ));
        assert!(!same_origin(
            &headers(&[("origin", "null"), ("sec-fetch-site", "none")]),
            host
        ));
        assert!(!same_origin(
            &headers(&[("sec-fetch-site", "cross-site")]),
            host
        ));
        assert!(!same_origin(
            &headers(&[("origin", "http://127.0.0.1:8080")]),
            None
        ));
    }

    #[test]
    fn the_session_token_must_match() {
        let auth = Auth::Session {
            id: "s".into(),
            csrf: "abc".into(),
        };
        assert!(check(&auth, Some("abc")).is_ok());
        assert!(check(&auth, Some("abd")).is_err());
        assert!(check(&auth, None).is_err());
        assert!(check(&Auth::Bearer, None).is_ok());
    }
}
