//! What a running tool's context needs of the runtime, as a trait: the context sits below the
//! runtime in the module graph and reaches it only through this port.

use async_trait::async_trait;
use tasks_core::input::{InputRequest, InputResponse};
use tasks_core::{Event, TaskId};
use tokio::sync::oneshot;

use crate::error::ToolError;
use crate::scope::Scope;
use crate::store::Lease;

/// The runtime as a task's context sees it. Every write carries the worker's lease.
#[async_trait]
pub(crate) trait TaskPort: Send + Sync {
    /// The stored answer to `key` when the task already has one for this same `request` (a
    /// re-run replays it); otherwise registers `sender` as the waiter for `key`, moves the
    /// task to `input_required` with `request` outstanding, and answers `None`.
    async fn request_input(
        &self,
        scope: &Scope,
        id: &TaskId,
        lease: &Lease,
        key: String,
        request: InputRequest,
        sender: oneshot::Sender<InputResponse>,
    ) -> Result<Option<InputResponse>, ToolError>;

    /// Commits what the work reports about itself (`event`: [`Event::StatusMessage`] or
    /// [`Event::Progress`]); `false` once nothing more can be written (the task is terminal,
    /// expired, taken over, or the store fails).
    async fn report(&self, scope: &Scope, id: &TaskId, lease: &Lease, event: Event) -> bool;
}
