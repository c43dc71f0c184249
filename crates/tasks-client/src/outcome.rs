//! What a call comes to: a [`ToolResult`], and the [`Outcome`] of a call or task.

use serde_json::Value;
use tasks_core::{JsonObject, JsonRpcError, TaskState};

/// A `CallToolResult`: `content` blocks, optional `structuredContent`, and `isError` for a
/// tool that ran and failed (MCP 2026-07-28 tools, "Tool Result").
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult(JsonObject);

impl ToolResult {
    /// Wraps a result object as received.
    pub fn new(result: JsonObject) -> Self {
        ToolResult(result)
    }

    /// Whether the tool reported an error (`isError: true`).
    pub fn is_error(&self) -> bool {
        self.0.get("isError").and_then(Value::as_bool) == Some(true)
    }

    /// The text of every `text` content block, joined with newlines.
    pub fn text(&self) -> String {
        self.content()
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The `content` blocks.
    pub fn content(&self) -> &[Value] {
        self.0
            .get("content")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// `structuredContent`, if any.
    pub fn structured(&self) -> Option<&Value> {
        self.0.get("structuredContent")
    }

    /// The whole result object, as received (with `resultType` and `_meta`).
    pub fn as_object(&self) -> &JsonObject {
        &self.0
    }

    /// The whole result object.
    pub fn into_object(self) -> JsonObject {
        self.0
    }
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// The tool finished and returned a result.
    Completed(ToolResult),
    /// The tool ran and reported an error (`isError: true`).
    ToolError(ToolResult),
    /// The task failed with a JSON-RPC error (SEP-2663 `failed`).
    Failed(JsonRpcError),
    /// The task was cancelled.
    Cancelled,
}

impl Outcome {
    /// The outcome of a tool result.
    pub fn of_result(result: JsonObject) -> Self {
        let result = ToolResult::new(result);
        if result.is_error() {
            Outcome::ToolError(result)
        } else {
            Outcome::Completed(result)
        }
    }

    /// The outcome of a terminal task state, or `None` while it is still running.
    pub fn of_state(state: &TaskState) -> Option<Self> {
        match state {
            TaskState::Working | TaskState::InputRequired { .. } => None,
            TaskState::Completed { result } => Some(Outcome::of_result(result.to_object())),
            TaskState::Failed { error } => Some(Outcome::Failed((**error).clone())),
            TaskState::Cancelled => Some(Outcome::Cancelled),
        }
    }
}
