//! Between this project's wire values and rmcp's typed model: both follow the same schema
//! (MCP 2026-07-28 and SEP-2663), so a value crosses as JSON.

use std::borrow::Cow;

use rmcp::model::{ErrorCode, Tool as RmcpTool};
use rmcp::ErrorData;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tasks_core::plan::HeaderSource;
use tasks_core::protocol::META_PROTOCOL_VERSION;
use tasks_core::{McpError, RequestMeta};
use tasks_runtime::Tool;

/// The message of the -32603 answered when a value does not fit rmcp's model (logged, never
/// sent with its detail).
const MESSAGE_CONVERT: &str = "Internal error";

/// A request's HTTP headers as the core reads them (none on stdio).
pub(crate) struct Headers<'a>(pub(crate) Option<&'a http::HeaderMap>);

impl HeaderSource for Headers<'_> {
    fn values<'a, 'n>(&'a self, name: &'n str) -> impl Iterator<Item = &'a [u8]> + 'n
    where
        'a: 'n,
    {
        self.0
            .into_iter()
            .flat_map(move |headers| headers.get_all(name).iter().map(|value| value.as_bytes()))
    }
}

/// rmcp's error for one of ours: the same code, message and data.
pub(crate) fn error(error: &McpError) -> ErrorData {
    let object = error.to_error_object();
    // Every code of the error table fits an i32.
    let code = i32::try_from(object.code).unwrap_or(ErrorCode::INTERNAL_ERROR.0);
    ErrorData::new(ErrorCode(code), Cow::Owned(object.message), object.data)
}

/// rmcp's error for a JSON-RPC error object of ours (`{"code","message","data"?}`).
pub(crate) fn error_value(value: &Value) -> ErrorData {
    let code = value
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|code| i32::try_from(code).ok())
        .unwrap_or(ErrorCode::INTERNAL_ERROR.0);
    let message = value
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or(MESSAGE_CONVERT)
        .to_owned();
    ErrorData::new(ErrorCode(code), message, value.get("data").cloned())
}

/// `value` as the rmcp type `T`.
///
/// # Errors
/// -32603 `Internal error` when it does not fit (a bug: the detail is logged).
pub(crate) fn to_rmcp<T: DeserializeOwned>(value: impl Serialize) -> Result<T, ErrorData> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|detail| {
            tracing::error!(%detail, type_name = std::any::type_name::<T>(), "a value does not fit rmcp's model");
            ErrorData::internal_error(MESSAGE_CONVERT, None)
        })
}

/// The `tools/list` entry of `tool` as an rmcp tool.
pub(crate) fn rmcp_tool(tool: &Tool) -> Result<RmcpTool, ErrorData> {
    let mut entry = serde_json::json!({
        "name": tool.name(),
        "description": tool.description(),
        "inputSchema": tool.input_schema(),
    });
    if let Some(annotations) = tool.annotations() {
        entry["annotations"] = Value::Object(annotations.clone());
    }
    if let Some(schema) = tool.output_schema() {
        entry["outputSchema"] = Value::Object(schema.clone());
    }
    if let Some(title) = tool.title() {
        entry["title"] = Value::from(title);
    }
    to_rmcp(entry)
}

/// The request `_meta` rmcp moved into the request context, validated as ours.
///
/// # Errors
/// -32602 as [`RequestMeta::parse`] (rmcp checked the required keys already).
pub(crate) fn request_meta(
    meta: &rmcp::model::RequestMetaObject,
) -> Result<RequestMeta, ErrorData> {
    let meta = serde_json::to_value(meta).unwrap_or(Value::Null);
    if meta.get(META_PROTOCOL_VERSION).is_none() {
        // A request of a 2025 session (rmcp checks 2026-07-28 requests for the key first).
        tracing::warn!(
            "a request without per-request _meta reached the tasks bridge: it serves MCP \
             2026-07-28 only; return only ProtocolVersion::V_2026_07_28 from the handler's \
             supported_protocol_versions"
        );
        return Err(ErrorData::invalid_params(
            "This server's tasks are served on MCP 2026-07-28 requests only",
            None,
        ));
    }
    RequestMeta::parse(Some(&serde_json::json!({ "_meta": meta }))).map_err(|e| error(&e))
}

/// An error on the way to an answer: ours (converted at the end) or already rmcp's.
pub(crate) enum Failure {
    Ours(McpError),
    Rmcp(ErrorData),
}

impl Failure {
    /// rmcp's error.
    pub(crate) fn into_rmcp(self) -> ErrorData {
        match self {
            Failure::Ours(error) => self::error(&error),
            Failure::Rmcp(error) => error,
        }
    }
}

impl From<McpError> for Failure {
    fn from(error: McpError) -> Self {
        Failure::Ours(error)
    }
}

impl From<ErrorData> for Failure {
    fn from(error: ErrorData) -> Self {
        Failure::Rmcp(error)
    }
}
