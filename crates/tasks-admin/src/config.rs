//! [`AdminConfig`]: where the console is mounted, its credential, who it cancels as, its rate
//! limit.

use std::fmt;

use subtle::ConstantTimeEq as _;

/// The admin credential: a bearer token, compared in constant time.
///
/// It is a credential of its own, never the MCP callers' (a host gives the console a token no
/// MCP client holds). Its `Debug` form hides the token.
#[derive(Clone)]
pub struct AdminCredential {
    token: Box<[u8]>,
}

impl AdminCredential {
    /// The credential `token` (its bytes exactly, no trimming), or `None` for an empty one
    /// (an empty token would let anyone in).
    pub fn new(token: impl AsRef<[u8]>) -> Option<Self> {
        let token = token.as_ref();
        (!token.is_empty()).then(|| AdminCredential {
            token: token.into(),
        })
    }

    /// Whether `offered` is the token. The time taken depends on the lengths only, never on
    /// where the bytes first differ.
    pub fn matches(&self, offered: &[u8]) -> bool {
        bool::from(self.token.as_ref().ct_eq(offered))
    }
}

impl fmt::Debug for AdminCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AdminCredential(..)")
    }
}

/// The admin surface's own request budget: a token bucket refilled at `per_second` tokens a
/// second up to `burst`; every request takes one, and a request finding none is answered
/// `429 Too Many Requests` with `Retry-After: 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Tokens added each second (at least 1 is used).
    pub per_second: u32,
    /// The bucket's size: how many requests may come at once (at least 1 is used).
    pub burst: u32,
}

impl Default for RateLimit {
    /// 50 requests a second, bursts of 100.
    fn default() -> Self {
        RateLimit {
            per_second: 50,
            burst: 100,
        }
    }
}

/// How [`router`](crate::router) serves the console.
#[derive(Debug, Clone)]
pub struct AdminConfig {
    /// Where the host nests the router (`"/admin"`; `""` at the root), without a trailing
    /// slash: every link, form action and the session cookie's `Path` start with it.
    pub prefix: String,
    /// The admin credential ([`AdminCredential`]).
    pub credential: AdminCredential,
    /// The identity an operator's cancel is logged under
    /// ([`TaskRuntime::cancel_as_operator`](tasks_runtime::TaskRuntime::cancel_as_operator));
    /// default `"admin"`.
    pub operator_name: String,
    /// The request budget of the whole admin surface, login included.
    pub rate_limit: RateLimit,
    /// Whether the session cookie carries `Secure` (set it when the console is served over
    /// HTTPS); default `false`.
    pub secure_cookie: bool,
    /// How long a browser session lasts after its login, in seconds; default 12 hours.
    pub session_secs: u64,
}

impl AdminConfig {
    /// A console at `prefix` behind `credential`, every other choice at its default.
    pub fn new(prefix: impl Into<String>, credential: AdminCredential) -> Self {
        let prefix = prefix.into().trim_end_matches('/').to_owned();
        AdminConfig {
            prefix,
            credential,
            operator_name: "admin".to_owned(),
            rate_limit: RateLimit::default(),
            secure_cookie: false,
            session_secs: 12 * 3600,
        }
    }

    /// The path `path` (starting with `/`) under the prefix.
    pub(crate) fn path(&self, path: &str) -> String {
        format!("{}{path}", self.prefix)
    }

    /// The task list's path: the prefix itself (axum's nest serves the nested `/` there), or
    /// `/` at the root.
    pub(crate) fn home(&self) -> &str {
        self.cookie_path()
    }

    /// The session cookie's `Path` attribute: the prefix, or `/` at the root.
    pub(crate) fn cookie_path(&self) -> &str {
        if self.prefix.is_empty() {
            "/"
        } else {
            &self.prefix
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_token_is_refused_and_others_match_exactly() {
        assert!(AdminCredential::new("").is_none());
        let credential = AdminCredential::new("s3cret").expect("non-empty");
        assert!(credential.matches(b"s3cret"));
        assert!(!credential.matches(b"s3cre"));
        assert!(!credential.matches(b"s3cret "));
        assert_eq!(format!("{credential:?}"), "AdminCredential(..)");
    }

    #[test]
    fn the_prefix_loses_its_trailing_slash() {
        let config = AdminConfig::new("/admin/", AdminCredential::new("t").expect("non-empty"));
        assert_eq!(config.prefix, "/admin");
        assert_eq!(config.path("/tasks"), "/admin/tasks");
        assert_eq!(config.cookie_path(), "/admin");
        let root = AdminConfig::new("", AdminCredential::new("t").expect("non-empty"));
        assert_eq!(root.cookie_path(), "/");
    }
}
