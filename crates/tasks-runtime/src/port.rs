//! What a running tool's context needs of the runtime, as a trait: the context sits below the
//! runtime in the module graph and reaches it only through this port.

use async_trait::async_trait;
use tasks_core::{InputRequest, InputResponse, TaskId};
use tokio::sync::oneshot;

use crate::error::ToolError;
use crate::scope::Scope;

/// The runtime as a task's context sees it.
#[async_trait]
pub(crate) trait TaskPort: Send + Sync {
    /// Registers `sender` as the waiter for `key` and moves the task to `input_required` with
    /// `request` outstanding.
    async fn request_input(
        &self,
        scope: &Scope,
        id: &TaskId,
        key: String,
        request: InputRequest,
        sender: oneshot::Sender<InputResponse>,
    ) -> Result<(), ToolError>;

    /// Stores `message` as the task's `statusMessage`; `false` once nothing more can be written
    /// (the task is terminal, expired or the store fails).
    async fn set_status_message(&self, scope: &Scope, id: &TaskId, message: String) -> bool;
}
