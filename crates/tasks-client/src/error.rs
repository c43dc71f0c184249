//! [`ClientError`]: every way a client call can fail, with the JSON-RPC code kept and the
//! retryable ones marked.

use serde_json::Value;
use tasks_core::JsonRpcError;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server could not be reached, or the connection broke (retryable).
    #[error("cannot reach the server: {}", chain(.0))]
    Transport(#[source] reqwest::Error),
    /// An HTTP error status without a JSON-RPC error body, e.g. 401, 404 or 502.
    #[error("the server answered HTTP {status}{}", quote(body))]
    Http {
        /// The HTTP status.
        status: u16,
        /// What the body said, when it was text: its first line, at most
        /// [`MAX_BODY_CHARS`] characters (empty otherwise).
        body: String,
    },
    /// [`crate::Client::discover`] (so also `connect`) found no MCP endpoint at the URL: the
    /// server answered HTTP 404 or 405 without a JSON-RPC body, as a web server does for a
    /// path it does not serve, or serves only to GET (a health check). The message quotes
    /// the body, or names the status (`HTTP 405 (Method Not Allowed)`) when it is empty.
    /// [`ClientError::endpoint_hint`] names the endpoint when the server said where it is.
    #[error(
        "no MCP endpoint at this URL: the server answered HTTP {status}{}",
        quote_or_reason(*status, body)
    )]
    NoEndpoint {
        /// The HTTP status (404 or 405).
        status: u16,
        /// What the body said, as in [`ClientError::Http`].
        body: String,
    },
    /// A JSON-RPC error from the server: `error.code` is the JSON-RPC code (e.g. -32602
    /// invalid params, -32021 missing client capability), `http_status` the HTTP status it
    /// came with.
    #[error("the server refused the request: {} ({})", error.message, error.code)]
    Rpc {
        /// The JSON-RPC error object.
        error: JsonRpcError,
        /// The HTTP status of the response (200 inside an SSE stream).
        http_status: u16,
    },
    /// The server does not offer `method`: it answered -32601 (Method not found), as a server
    /// without prompts answers `prompts/list`. [`ClientError::code`] is -32601.
    #[error(
        "the server does not offer {method}: {} ({})",
        error.message,
        error.code
    )]
    MethodNotFound {
        /// The method asked for, e.g. `prompts/list`.
        method: String,
        /// The JSON-RPC error object.
        error: JsonRpcError,
    },
    /// The server does not serve MCP 2026-07-28: it answered `server/discover` with -32022,
    /// with a `supportedVersions` list without it, or like a server of the session-based
    /// revisions (which have no `server/discover`). `supported` lists what it said it serves,
    /// when it said so.
    #[error(
        "unsupported server era: the server does not serve MCP 2026-07-28{}",
        describe(supported)
    )]
    UnsupportedServerEra {
        /// The revisions the server named, if any.
        supported: Vec<String>,
    },
    /// A reply this client cannot read as MCP 2026-07-28 (not JSON-RPC, a wrong shape).
    #[error("malformed reply from the server: {0}")]
    Malformed(String),
    /// The deadline of [`crate::SettleOptions::deadline`] passed before the task ended.
    #[error("the task did not finish before the deadline")]
    Deadline,
    /// The server asked for input this client has no handler for (e.g. sampling without a
    /// sampling handler); the task stays parked on the server.
    #[error("the server asks for {method}, which this client does not handle")]
    NoHandler {
        /// The input request's method, e.g. `sampling/createMessage`.
        method: String,
    },
    /// A caller mistake found before anything was sent: a URL that is not `http(s)://`, a
    /// bearer token that cannot be a header, tool arguments that are not a JSON object, a task
    /// handle of another endpoint.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The task waited for no longer exists: its TTL ran out and the server deleted it, or it
    /// was never visible to this caller. `tasks/get` answered -32602 (`Unknown or
    /// inaccessible taskId`, SEP-2663 "Error Handling") while [`crate::TaskCall::settle`] or
    /// [`crate::TaskCall::updates`] watched it; not retryable.
    #[error("task {task_id} is unknown or expired")]
    UnknownTask {
        /// The task's id.
        task_id: String,
    },
    /// The input handler gave up (e.g. the user interrupted the prompt), or its answer does not
    /// fit the request.
    #[error("input was not given: {0}")]
    Input(String),
    /// A file of a skill ([`crate::Client::read_skill_file`]) does not match the skill's
    /// entry, or is not one of its files: its content must not be used (Skills extension,
    /// SEP-2640, "Integrity and Verification":
    /// <https://github.com/modelcontextprotocol/ext-skills/blob/main/specification/stable/skills.mdx>).
    /// The message names the URI and what did not match ([`VerificationFailure`]), never the
    /// content.
    #[error("the skill file {uri} failed verification: {failure}")]
    Verification {
        /// The file's URI, as asked for.
        uri: String,
        /// What did not match.
        failure: VerificationFailure,
    },
}

/// Why a skill file failed verification ([`ClientError::Verification`]): each is what the
/// Skills extension's "Integrity and Verification" calls a verification failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerificationFailure {
    /// The URI is not one of the files the skill's entry lists in `resources` (or, for an entry
    /// whose resources are `"dynamic"`, not below the skill's directory). Nothing was read.
    #[error("it is not one of the files the skill's entry lists")]
    NotListed,
    /// `resources/read` did not answer with exactly one item of this URI (`found` items had
    /// it).
    #[error("the server's answer holds {found} contents of this URI, not one")]
    Contents {
        /// How many items of the answer had the URI.
        found: usize,
    },
    /// The content's length in bytes (a text's UTF-8, a blob's decoded bytes) is not the
    /// entry's `size`.
    #[error("its size is {actual} bytes, the skill's entry says {expected}")]
    Size {
        /// The entry's `size`, in bytes.
        expected: u64,
        /// The content's length, in bytes.
        actual: u64,
    },
    /// The entry's `digest` names an algorithm other than `sha256`, or is not `sha256:` and 64
    /// hexadecimal digits: it cannot be checked.
    #[error("the skill's entry gives a digest this client cannot check (not sha256:<64 hex>)")]
    UnsupportedDigest,
    /// The SHA-256 of the content is not the entry's `digest`.
    #[error("its digest is {actual}, the skill's entry says {expected}")]
    Digest {
        /// The entry's `digest`, `sha256:<64 hex>`.
        expected: String,
        /// The content's, `sha256:<64 lowercase hex>`.
        actual: String,
    },
    /// The `SKILL.md` has no frontmatter this client can read (`why` says what is wrong, in the
    /// words of `tasks_core::skill::frontmatter`'s errors, without the file's text).
    #[error("its frontmatter cannot be read: {why}")]
    FrontmatterUnreadable {
        /// What is wrong.
        why: &'static str,
    },
    /// A field of the `SKILL.md` frontmatter differs from the entry's `frontmatter`, or is in
    /// one of them only.
    #[error("its frontmatter field `{field}` does not match the skill's entry ({mismatch})")]
    Frontmatter {
        /// The field's name.
        field: String,
        /// How it differs.
        mismatch: FieldMismatch,
    },
}

/// How a frontmatter field differs ([`VerificationFailure::Frontmatter`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldMismatch {
    /// Both have it, with different values.
    #[error("different values")]
    Value,
    /// The file has it, the entry does not.
    #[error("only in the file")]
    OnlyInFile,
    /// The entry has it, the file does not.
    #[error("only in the entry")]
    OnlyInEntry,
}

/// An error with its causes, `outer: inner: innermost`.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The most characters of an HTTP error body kept in [`ClientError::Http`] and
/// [`ClientError::NoEndpoint`].
pub const MAX_BODY_CHARS: usize = 200;

/// `body` as the end of an error message: `: body`, or nothing when empty.
fn quote(body: &str) -> String {
    if body.is_empty() {
        String::new()
    } else {
        format!(": {body}")
    }
}

/// `: <body>`, or ` (Method Not Allowed)` for an empty body.
fn quote_or_reason(status: u16, body: &str) -> String {
    if body.is_empty() {
        reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|status| status.canonical_reason())
            .map(|reason| format!(" ({reason})"))
            .unwrap_or_default()
    } else {
        quote(body)
    }
}

/// The first non-empty line of a text body, at most [`MAX_BODY_CHARS`] characters; empty for
/// a body that is not UTF-8.
pub(crate) fn body_line(bytes: &[u8]) -> String {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|text| text.lines().map(str::trim).find(|line| !line.is_empty()))
        .map(|line| line.chars().take(MAX_BODY_CHARS).collect())
        .unwrap_or_default()
}

/// The text by which this project's servers name their endpoint in a 404 for another path.
const ENDPOINT_IS: &str = "the MCP endpoint is ";

fn describe(supported: &[String]) -> String {
    if supported.is_empty() {
        String::new()
    } else {
        format!(" (it serves {})", supported.join(", "))
    }
}

impl ClientError {
    /// The JSON-RPC error code, for [`ClientError::Rpc`] and [`ClientError::MethodNotFound`].
    pub fn code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc { error, .. } | ClientError::MethodNotFound { error, .. } => {
                Some(error.code)
            }
            _ => None,
        }
    }

    /// For [`ClientError::NoEndpoint`] from a server that said where its endpoint is (this
    /// project's servers answer a 404 for another path with `Not found: the MCP endpoint is
    /// /mcp`): that path, e.g. `/mcp`.
    pub fn endpoint_hint(&self) -> Option<&str> {
        let ClientError::NoEndpoint { body, .. } = self else {
            return None;
        };
        let (_, path) = body.split_once(ENDPOINT_IS)?;
        let path = path.trim();
        (path.starts_with('/') && !path.contains(char::is_whitespace)).then_some(path)
    }

    /// Whether trying again later may succeed: a transport failure, or HTTP 429, 502, 503
    /// or 504 (with or without a JSON-RPC body, e.g. the server's -32603 "Too many tasks").
    pub fn is_retryable(&self) -> bool {
        match self {
            ClientError::Transport(error) => !error.is_builder() && !error.is_decode(),
            ClientError::Http { status, .. } => retryable_status(*status),
            ClientError::Rpc { http_status, .. } => retryable_status(*http_status),
            _ => false,
        }
    }

    pub(crate) fn rpc(error: JsonRpcError, http_status: u16) -> Self {
        ClientError::Rpc { error, http_status }
    }

    /// `error` of a request of `method`: -32601 as [`ClientError::MethodNotFound`], the rest
    /// unchanged.
    pub(crate) fn method_not_found(method: &str, error: ClientError) -> Self {
        match error {
            ClientError::Rpc { error, .. } if error.code == METHOD_NOT_FOUND => {
                ClientError::MethodNotFound {
                    method: method.to_owned(),
                    error,
                }
            }
            other => other,
        }
    }

    pub(crate) fn malformed(what: impl Into<String>) -> Self {
        ClientError::Malformed(what.into())
    }

    /// The revisions named in a -32022 error's `data.supported`.
    pub(crate) fn supported_versions(data: Option<&Value>) -> Vec<String> {
        data.and_then(|data| data.get("supported"))
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The JSON-RPC code of a method the server does not have.
const METHOD_NOT_FOUND: i64 = -32601;

fn retryable_status(status: u16) -> bool {
    matches!(status, 429 | 502 | 503 | 504)
}
