//! [`Execution`]: what a `tools/call` returned, a result at once or a task.

use crate::error::ClientError;
use crate::outcome::{Outcome, ToolResult};
use crate::settle::SettleOptions;
use crate::task::TaskCall;

/// What a `tools/call` returned: a final result at once (after any MRTR input rounds), or a
/// task to settle.
#[derive(Debug)]
#[non_exhaustive]
pub enum Execution {
    /// The server answered synchronously.
    Complete(ToolResult),
    /// The server created a task (`resultType: "task"`).
    Task(TaskCall),
}

impl Execution {
    /// The call's outcome: the synchronous result, or the task settled with `options`
    /// ([`TaskCall::settle`]).
    ///
    /// # Errors
    /// As [`TaskCall::settle`].
    pub async fn settle(self, options: &SettleOptions) -> Result<Outcome, ClientError> {
        match self {
            Execution::Complete(result) => Ok(Outcome::of_result(result.into_object())),
            Execution::Task(task) => task.settle(options).await,
        }
    }

    /// The task, if the server created one.
    pub fn task(&self) -> Option<&TaskCall> {
        match self {
            Execution::Task(task) => Some(task),
            Execution::Complete(_) => None,
        }
    }
}
