//! Status events: one per committed change, for `notifications/tasks`.

use std::sync::Arc;

use tasks_core::Task;

use crate::scope::Scope;

/// A committed task state, published on the runtime's broadcast stream
/// ([`crate::TaskRuntime::subscribe`]) after creation and after every real change. A transport
/// filters by scope and task id and renders `notifications/tasks` from `task`.
#[derive(Debug, Clone)]
pub struct StatusEvent {
    /// The scope that owns the task.
    pub scope: Scope,
    /// The task as committed.
    pub task: Arc<Task>,
}
