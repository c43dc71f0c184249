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

/// One event of the stream that waiters follow ([`crate::TaskRuntime::changes`]): every
/// committed state, every removal, and every moment when some may have been missed, in the
/// order the runtime saw them.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TaskEvent {
    /// A committed state (the same as [`crate::TaskRuntime::subscribe`] sends).
    Status(StatusEvent),
    /// Task `id` no longer exists: its TTL ran out and it was reaped (by this node, or by
    /// another node sharing the store and found gone here). It carries no scope: a waiter
    /// re-reads the task under its own scope (the answer is -32602
    /// `Unknown or inaccessible taskId`) before acting on it.
    Removed(tasks_core::TaskId),
    /// Changes may have been missed: the store's change feed reconnected or lost hints, or this
    /// node fell behind its feed. A waiter re-reads whatever it waits on.
    Resync,
}
