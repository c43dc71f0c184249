//! How a tool run ends other than with a result.

use tasks_core::{JsonRpcError, McpError};

/// How a tool run ended other than with a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
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
}
