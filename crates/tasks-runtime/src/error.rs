//! How a tool run ends other than with a result.

use std::fmt;

use tasks_core::{JsonRpcError, McpError};

/// `error.message` of a run whose tool panicked (a task ends `failed` with it, code -32603).
pub(crate) const MESSAGE_PANIC: &str = "Tool raised an exception";

/// How a tool run ended other than with a result.
///
/// MCP tells two kinds of failure apart
/// (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, "Error
/// Handling"): the tool's own failure, which the model should see and may work around, is a
/// `CallToolResult` with `isError: true` ([`ToolError::Tool`]; a task ends `completed` with that
/// result); a protocol or server fault is a JSON-RPC error ([`ToolError::Rpc`]; a task ends
/// `failed` with it).
///
/// `?` converts the common errors of a tool body into [`ToolError::Tool`] with the error's
/// `Display` text as the result's text: [`std::io::Error`], [`serde_json::Error`],
/// [`std::num::ParseIntError`], [`std::num::ParseFloatError`], [`std::str::Utf8Error`],
/// [`std::string::FromUtf8Error`] and `Box<dyn Error + Send + Sync>`. That text is the tool's
/// own output and goes to the client as it is: `?` on a failed `File::open` answers
/// `No such file or directory (os error 2)`, and a [`serde_json::Error`] may quote the data
/// it failed on. Where that says too much, choose the words with
/// `.map_err(|_| ToolError::tool("…"))`. Any other error type converts with
/// `.map_err(ToolError::tool)`. A [`tokio::task::JoinError`] (a `spawn_blocking` that
/// panicked or was aborted) converts into -32603, as a panic of the tool itself does.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool failed and says why: the call answers with the `CallToolResult`
    /// `{"content":[{"type":"text","text":<message>}],"isError":true}` (see
    /// [`error_result`](crate::error_result)), and a task ends `completed` with that result,
    /// not `failed` (SEP-2663: `failed` is for protocol errors). Make one with
    /// [`ToolError::tool`] or `?` on the errors listed above.
    #[error("{0}")]
    Tool(String),
    /// A JSON-RPC error: a synchronous call answers with it, a task ends `failed` with it
    /// (code, message and data as given).
    #[error("{}", .0.message)]
    Rpc(JsonRpcError),
    /// A synchronous call needs input it does not have yet: the call ends with an MRTR
    /// `input_required` result listing every request asked so far. Returned by
    /// [`ToolContext::input`](crate::ToolContext::input); propagate it with `?`.
    #[error("input required")]
    InputRequired,
    /// The run was cancelled (the tool observed [`ToolContext::cancellation`](crate::ToolContext::cancellation)).
    #[error("cancelled")]
    Cancelled,
}

impl From<McpError> for ToolError {
    fn from(error: McpError) -> Self {
        ToolError::Rpc(error.to_error_object())
    }
}

impl ToolError {
    /// A JSON-RPC error with `code` and `message`.
    pub fn rpc(code: i64, message: impl Into<String>) -> Self {
        ToolError::Rpc(JsonRpcError {
            code,
            message: message.into(),
            data: None,
        })
    }

    /// The tool's own failure, answered with an `isError: true` result whose text is
    /// `message` ([`ToolError::Tool`]). Takes anything `Display`, so
    /// `.map_err(ToolError::tool)?` turns any error into one.
    ///
    /// ```
    /// use tasks_runtime::ToolError;
    ///
    /// let error = ToolError::tool("no table named orders");
    /// assert_eq!(error, ToolError::Tool("no table named orders".into()));
    /// let parsed: Result<u8, ToolError> = "300".parse::<u8>().map_err(ToolError::tool);
    /// assert_eq!(parsed, Err(ToolError::tool("number too large to fit in target type")));
    /// ```
    pub fn tool(message: impl fmt::Display) -> Self {
        ToolError::Tool(message.to_string())
    }
}

/// `From` impls turning an error into [`ToolError::Tool`] with its `Display` text.
macro_rules! tool_failures {
    ($($error:ty),* $(,)?) => {$(
        impl From<$error> for ToolError {
            /// [`ToolError::Tool`] with the error's `Display` text as the result's text.
            fn from(error: $error) -> Self {
                ToolError::tool(error)
            }
        }
    )*};
}

tool_failures!(
    std::io::Error,
    serde_json::Error,
    std::num::ParseIntError,
    std::num::ParseFloatError,
    std::str::Utf8Error,
    std::string::FromUtf8Error,
    Box<dyn std::error::Error + Send + Sync>,
);

impl From<tokio::task::JoinError> for ToolError {
    /// -32603: a spawned job that panicked is answered like a panic of the tool itself
    /// (`Tool raised an exception`, the panic text is never returned); one that was aborted
    /// with `Tool's spawned job was cancelled`.
    fn from(error: tokio::task::JoinError) -> Self {
        let message = if error.is_panic() {
            MESSAGE_PANIC
        } else {
            "Tool's spawned job was cancelled"
        };
        ToolError::Rpc(JsonRpcError::internal(message))
    }
}
