//! The store trait: compare-and-set persistence of tasks and their work descriptors.
//!
//! Every request-side call carries a [`Scope`]; a task of another scope answers exactly like a
//! missing one. Expiry is part of the contract: once `createdAt + ttlMs` has passed at `now`, a
//! task is absent on every path, even before [`Store::reap`] deletes it.

pub mod contract;
pub mod memory;

use std::sync::Arc;

use async_trait::async_trait;
use tasks_core::{CapacityLimit, NewTask, Task, TaskId, TaskUpdate, Timestamp};

use crate::scope::Scope;
use crate::work::Work;

/// A committed task and the scope that owns it.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The task as committed; compare [`Task::revision`] for compare-and-set.
    pub task: Arc<Task>,
    /// The owning scope.
    pub scope: Scope,
}

/// The result of [`Store::transition`].
#[derive(Debug, Clone)]
pub enum CasOutcome {
    /// The new task was stored.
    Committed(Snapshot),
    /// The stored revision differs from the expected one; here is the current snapshot.
    Conflict(Snapshot),
    /// No such task in this scope (unknown, expired or another scope's).
    NotFound,
}

/// Capacity bounds checked atomically by [`Store::create`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateLimits {
    /// Tasks stored at once.
    pub max_tasks: usize,
    /// Non-terminal tasks per scope.
    pub max_active_per_scope: usize,
}

/// Why a store call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// A capacity bound refused the creation; nothing was stored.
    #[error("capacity exhausted: {}", .0.as_str())]
    Capacity(CapacityLimit),
    /// The id is already taken; nothing was stored.
    #[error("task id already exists")]
    Duplicate,
    /// The backend failed. The text is for logs only and never reaches a client.
    #[error("store backend failure: {0}")]
    Backend(String),
}

/// Persistence of tasks, modelled on compare-and-set.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Stores `task` (a [`NewTask`]: revision 1, `working`) and `work` atomically, in
    /// `work.scope`.
    ///
    /// # Errors
    /// [`StoreError::Capacity`] when a bound of `limits` is reached, [`StoreError::Duplicate`]
    /// for a taken id; nothing is stored in either case.
    async fn create(
        &self,
        task: NewTask,
        work: Work,
        limits: CreateLimits,
    ) -> Result<Snapshot, StoreError>;

    /// The task `id` of `scope`, or `None` when unknown, expired at `now` or of another scope.
    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError>;

    /// The work descriptor of task `id` of `scope` (for workers and recovery). A store may
    /// drop the descriptor once the task is terminal (nothing runs it again) and answer `None`
    /// then; the in-memory store does, to keep stored finished tasks small.
    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError>;

    /// Commits `update` (a change only the reducer can make, [`tasks_core::apply`]) to task
    /// `update.task().id()` of `scope` if its stored revision is `update.expected_revision()`
    /// and it has not expired at `now`. The committed task is exactly `update.task()`, whose
    /// revision is the expected one plus one.
    async fn transition(
        &self,
        scope: &Scope,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError>;

    /// Deletes every task expired at `now`; returns their ids.
    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError>;

    /// Number of stored tasks (expired but not yet reaped ones included).
    async fn task_count(&self) -> Result<usize, StoreError>;
}
