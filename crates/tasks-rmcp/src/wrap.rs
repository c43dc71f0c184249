//! Runtime tools from functions written in rmcp's style.

use std::future::Future;

use rmcp::model::CallToolResult;
use rmcp::ErrorData;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use tasks_core::JsonRpcError;
use tasks_runtime::{Tool, ToolError};

/// A runtime [`Tool`] around a function in rmcp's style: typed arguments `A` (its JSON Schema
/// from `schemars` is the tool's `inputSchema`, and arguments that do not match it are a tool
/// error result before anything runs), answering rmcp's `CallToolResult` or `ErrorData`.
/// Hand it the function an rmcp `#[tool]` method calls (or a closure calling the method on a
/// clone of the server) to run that tool as a durable task:
///
/// ```
/// use rmcp::model::{CallToolResult, ContentBlock};
/// use rmcp::ErrorData;
/// use tasks_core::TaskPolicy;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct ReportArgs {
///     month: String,
/// }
///
/// async fn report(args: ReportArgs) -> Result<CallToolResult, ErrorData> {
///     let text = format!("report for {}", args.month);
///     Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
/// }
///
/// let tool = tasks_rmcp::rmcp_tool("report", "Builds the monthly report", report)
///     .with_policy(TaskPolicy::Required);
/// assert_eq!(tool.input_schema()["required"], serde_json::json!(["month"]));
/// ```
///
/// The function runs without rmcp's request context: a task may run after a restart or on
/// another node, where there is no request or peer. A `CallToolResult` (`isError` ones
/// included) is the task's result; an `ErrorData` fails the task with its code, message and
/// data. Its [`Recovery`](tasks_runtime::Recovery) is the default, `Fail`: a task the server
/// stopped in is failed, not run again, unless the tool says otherwise with
/// [`Tool::with_recovery`].
///
/// # Panics
/// As [`Tool::typed`]: when the schema of `A` is not an object schema.
pub fn rmcp_tool<A, F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    function: F,
) -> Tool
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CallToolResult, ErrorData>> + Send + 'static,
{
    Tool::typed(name, description, move |_ctx, arguments: A| {
        let run = function(arguments);
        async move {
            match run.await {
                Ok(result) => serde_json::to_value(result)
                    .map_err(|_| ToolError::rpc(-32603, "Internal error")),
                Err(error) => Err(ToolError::Rpc(JsonRpcError {
                    code: i64::from(error.code.0),
                    message: error.message.into_owned(),
                    data: error.data,
                })),
            }
        }
    })
}
