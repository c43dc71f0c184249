//! Routing-header rules for Streamable HTTP, as pure functions over raw header bytes.
//!
//! Sources: MCP 2026-07-28 streamable-http "Standard Request Headers", "Case Sensitivity",
//! "Server Validation" and "Value Encoding"
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>);
//! SEP-2663 "Streamable HTTP: Routing Headers" (`Mcp-Name` = `params.taskId`,
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>);
//! runner scenarios `http-header-validation` (trimming: check
//! `sep-2243-server-accepts-whitespace-header-value`), `http-custom-header-server-validation`
//! (strict base64: check `sep-2243-server-reject-invalid-param-chars`) and
//! `tasks-request-headers`. Refusing a repeated header is this server's choice.
//!
//! * Names are matched case-insensitively by the caller (the `http` crate does that).
//! * A value is trimmed of surrounding spaces and tabs, then must consist of visible ASCII,
//!   space and tab; anything else is -32020.
//! * In `Mcp-Name`, `=?base64?<standard base64 with padding>?=` is decoded strictly; the decoded
//!   bytes must be non-empty UTF-8. Other spellings (`=?BASE64?…`, a missing `?=`) are literals,
//!   and so is every value of `Mcp-Method` and `MCP-Protocol-Version`.
//! * Values compare case-sensitively.
//! * A header given more than once is -32020.
//!
//! Every failure is [`McpError::HeaderMismatch`] (-32020, HTTP 400) with a fixed message that
//! never echoes the client's value.

use std::borrow::Cow;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;

use crate::error::McpError;
use crate::method::Method;

/// The standard headers that mirror body fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirroredHeader {
    /// `MCP-Protocol-Version`, mirroring `_meta["io.modelcontextprotocol/protocolVersion"]`.
    ProtocolVersion,
    /// `Mcp-Method`, mirroring the JSON-RPC `method`.
    Method,
    /// `Mcp-Name`, mirroring `params.name`, `params.uri` or `params.taskId`.
    Name,
    /// An `Mcp-Param-<Name>` header, mirroring a tool argument annotated with `x-mcp-header`
    /// (see [`crate::plan::ParamHeader`]). Its [`name`](MirroredHeader::name) is the prefix only.
    Param,
}

impl MirroredHeader {
    /// The canonical header name.
    pub const fn name(self) -> &'static str {
        match self {
            MirroredHeader::ProtocolVersion => "MCP-Protocol-Version",
            MirroredHeader::Method => "Mcp-Method",
            MirroredHeader::Name => "Mcp-Name",
            MirroredHeader::Param => "Mcp-Param-",
        }
    }

    /// Whether values may use the `=?base64?…?=` form: only `Mcp-Name` and `Mcp-Param-*`
    /// mirror arbitrary body strings; method names and versions are literals (streamable-http
    /// "Server Validation" names only these two as permitting the base64 form).
    pub fn allows_base64(self) -> bool {
        matches!(self, MirroredHeader::Name | MirroredHeader::Param)
    }

    pub(crate) fn missing(self) -> McpError {
        McpError::HeaderMismatch(match self {
            MirroredHeader::ProtocolVersion => "Missing MCP-Protocol-Version header",
            MirroredHeader::Method => "Missing Mcp-Method header",
            MirroredHeader::Name => "Missing Mcp-Name header",
            MirroredHeader::Param => "Missing Mcp-Param header for an x-mcp-header argument",
        })
    }

    fn invalid(self) -> McpError {
        McpError::HeaderMismatch(match self {
            MirroredHeader::ProtocolVersion => "Invalid MCP-Protocol-Version header value",
            MirroredHeader::Method => "Invalid Mcp-Method header value",
            MirroredHeader::Name => "Invalid Mcp-Name header value",
            MirroredHeader::Param => "Invalid Mcp-Param header value",
        })
    }

    fn repeated(self) -> McpError {
        McpError::HeaderMismatch(match self {
            MirroredHeader::ProtocolVersion => "MCP-Protocol-Version header is repeated",
            MirroredHeader::Method => "Mcp-Method header is repeated",
            MirroredHeader::Name => "Mcp-Name header is repeated",
            MirroredHeader::Param => "Mcp-Param header is repeated",
        })
    }

    pub(crate) fn mismatch(self) -> McpError {
        McpError::HeaderMismatch(match self {
            MirroredHeader::ProtocolVersion => {
                "MCP-Protocol-Version header does not match the request _meta protocolVersion"
            }
            MirroredHeader::Method => "Mcp-Method header does not match the request method",
            MirroredHeader::Name => "Mcp-Name header does not match the request params",
            MirroredHeader::Param => "Mcp-Param header does not match the tool arguments",
        })
    }
}

/// Collapses the values of one header to at most one.
///
/// # Errors
/// -32020 when the header appears more than once.
pub fn single<'a, I>(header: MirroredHeader, values: I) -> Result<Option<&'a [u8]>, McpError>
where
    I: IntoIterator<Item = &'a [u8]>,
{
    let mut values = values.into_iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(header.repeated());
    }
    Ok(first)
}

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

fn trim(raw: &[u8]) -> &[u8] {
    let is_ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = raw.iter().position(|b| !is_ows(b)).unwrap_or(raw.len());
    let end = raw
        .iter()
        .rposition(|b| !is_ows(b))
        .map_or(start, |i| i + 1);
    &raw[start..end]
}

/// Trims, checks and decodes one header value.
///
/// # Errors
/// -32020 for characters outside visible ASCII, space and tab; for a malformed or empty
/// `=?base64?…?=` payload; or for decoded bytes that are not UTF-8.
pub fn decode_value(header: MirroredHeader, raw: &[u8]) -> Result<Cow<'_, str>, McpError> {
    let trimmed = trim(raw);
    if !trimmed
        .iter()
        .all(|b| (0x20..=0x7e).contains(b) || *b == b'\t')
    {
        return Err(header.invalid());
    }
    // Checked above: every byte is ASCII.
    let text = std::str::from_utf8(trimmed).map_err(|_| header.invalid())?;
    let wrapped = header
        .allows_base64()
        .then(|| text.strip_prefix(SENTINEL_START))
        .flatten()
        .and_then(|rest| rest.strip_suffix(SENTINEL_END));
    match wrapped {
        None => Ok(Cow::Borrowed(text)),
        Some(payload) => {
            let bytes = STANDARD.decode(payload).map_err(|_| header.invalid())?;
            if bytes.is_empty() {
                return Err(header.invalid());
            }
            String::from_utf8(bytes)
                .map(Cow::Owned)
                .map_err(|_| header.invalid())
        }
    }
}

/// Encodes `value` for a mirrored header, as a client sends it (streamable-http "Value
/// Encoding"): as is when it is visible ASCII, space and tab with no surrounding
/// whitespace and cannot be read as the base64 form; otherwise `=?base64?<standard base64>?=`
/// (only for headers that allow it, [`MirroredHeader::allows_base64`]; for the others `None`).
///
/// [`decode_value`] reads every encoded value back to `value`.
pub fn encode_value(header: MirroredHeader, value: &str) -> Option<Cow<'_, str>> {
    let bytes = value.as_bytes();
    let plain = bytes
        .iter()
        .all(|b| (0x20..=0x7e).contains(b) || *b == b'\t')
        && trim(bytes).len() == bytes.len()
        && !(header.allows_base64() && value.starts_with(SENTINEL_START));
    if plain {
        Some(Cow::Borrowed(value))
    } else if header.allows_base64() {
        Some(Cow::Owned(format!(
            "{SENTINEL_START}{}{SENTINEL_END}",
            STANDARD.encode(bytes)
        )))
    } else {
        None
    }
}

/// Requires `header` and compares its decoded value with `expected`.
///
/// `expected: None` means the body field is missing or not a string: the header is still
/// required and must be well-formed, but is not compared (params validation answers -32602).
///
/// # Errors
/// -32020 when missing, malformed or different.
pub fn check_mirrored(
    header: MirroredHeader,
    raw: Option<&[u8]>,
    expected: Option<&str>,
) -> Result<(), McpError> {
    let raw = raw.ok_or_else(|| header.missing())?;
    let value = decode_value(header, raw)?;
    match expected {
        Some(expected) if expected != value => Err(header.mismatch()),
        _ => Ok(()),
    }
}

/// Which body value `Mcp-Name` mirrors for `method`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule<'a> {
    /// The method carries no `Mcp-Name`.
    NotRequired,
    /// Required; compare with this body value.
    Compare(&'a str),
    /// Required, but the body field is missing or not a string, so nothing is compared.
    RequiredOnly,
}

/// The `Mcp-Name` rule for a served method: the field of [`Method::name_field`]
/// (`params.name` for `tools/call`, `params.taskId` for the task methods).
pub fn name_rule(method: Method, params: Option<&Value>) -> NameRule<'_> {
    let Some(field) = method.name_field() else {
        return NameRule::NotRequired;
    };
    match params.and_then(|p| p.get(field)).and_then(Value::as_str) {
        Some(value) => NameRule::Compare(value),
        None => NameRule::RequiredOnly,
    }
}

/// Applies [`name_rule`] to the `Mcp-Name` header.
///
/// # Errors
/// -32020 as in [`check_mirrored`].
pub fn check_name(rule: NameRule<'_>, raw: Option<&[u8]>) -> Result<(), McpError> {
    match rule {
        NameRule::NotRequired => Ok(()),
        NameRule::Compare(expected) => check_mirrored(MirroredHeader::Name, raw, Some(expected)),
        NameRule::RequiredOnly => check_mirrored(MirroredHeader::Name, raw, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: MirroredHeader = MirroredHeader::Name;

    #[test]
    fn plain_values_are_trimmed_and_compared_case_sensitively() {
        assert_eq!(decode_value(NAME, b" \tabc \t").unwrap(), "abc");
        assert!(check_mirrored(NAME, Some(b"  greet "), Some("greet")).is_ok());
        assert!(check_mirrored(NAME, Some(b"GREET"), Some("greet")).is_err());
    }

    #[test]
    fn base64_values_are_decoded_strictly() {
        assert_eq!(decode_value(NAME, b"=?base64?SGVsbG8=?=").unwrap(), "Hello");
        for bad in [
            &b"=?base64?SGVsbG8?="[..],
            b"=?base64?SGVs!!!bG8=?=",
            b"=?base64??=",
            b"=?base64?***?=",
            b"=?base64?wyg=?=",
        ] {
            assert_eq!(decode_value(NAME, bad).unwrap_err().code(), -32020);
        }
        // Mcp-Method and MCP-Protocol-Version never take the base64 form.
        assert_eq!(
            decode_value(MirroredHeader::Method, b"=?base64?dG9vbHMvY2FsbA==?=").unwrap(),
            "=?base64?dG9vbHMvY2FsbA==?="
        );
        // Other spellings are literals.
        assert_eq!(
            decode_value(NAME, b"=?BASE64?SGVsbG8=?=").unwrap(),
            "=?BASE64?SGVsbG8=?="
        );
    }

    #[test]
    fn non_visible_ascii_is_rejected() {
        assert!(decode_value(NAME, "tâche".as_bytes()).is_err());
        assert!(decode_value(NAME, b"a\x00b").is_err());
        assert!(decode_value(NAME, b"a\x7fb").is_err());
    }

    #[test]
    fn missing_and_repeated_headers() {
        assert_eq!(check_mirrored(NAME, None, None).unwrap_err().code(), -32020);
        let two: [&[u8]; 2] = [b"a", b"a"];
        assert_eq!(single(NAME, two).unwrap_err().code(), -32020);
        let one: [&[u8]; 1] = [b"a"];
        assert_eq!(single(NAME, one).unwrap(), Some(&b"a"[..]));
    }

    #[test]
    fn name_rules() {
        let p = serde_json::json!({"taskId": "t1", "name": "n"});
        assert_eq!(
            name_rule(Method::TasksGet, Some(&p)),
            NameRule::Compare("t1")
        );
        assert_eq!(
            name_rule(Method::ToolsCall, Some(&p)),
            NameRule::Compare("n")
        );
        let q = serde_json::json!({"taskId": 42});
        assert_eq!(
            name_rule(Method::TasksCancel, Some(&q)),
            NameRule::RequiredOnly
        );
        assert_eq!(
            name_rule(Method::ToolsList, Some(&p)),
            NameRule::NotRequired
        );
        assert!(check_name(NameRule::RequiredOnly, None).is_err());
    }
}
