//! What an operator's console asks of a runtime: the inventory of every task across every
//! scope, the counts, the nodes, and a cancel that needs no caller's scope.
//!
//! None of this is reachable from an MCP request: a host mounts it behind its own admin
//! credential (tasks-http's `admin` module does). Stuck tasks are judged by
//! [`RuntimeConfig::stuck`](crate::RuntimeConfig::stuck).

use tasks_core::{Event, TaskId, TaskStatus};

use crate::runtime::TaskRuntime;
use crate::store::inventory::{InventoryCounts, InventoryPage, InventoryQuery, NodeRow};
use crate::store::StoreError;
use tasks_core::McpError;

/// Why an operator's request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OperatorError {
    /// The store offers no inventory ([`Store::inventory`](crate::store::Store::inventory)
    /// answered `None`): a console shows "not supported by this store".
    #[error("not supported by this store")]
    NotSupported,
    /// No such task (unknown, expired or reaped).
    #[error("no such task")]
    NotFound,
    /// The store failed; the text is for logs only.
    #[error("{0}")]
    Store(StoreError),
    /// The cancel could not be committed; the text is for logs only.
    #[error("cancel failed: {0}")]
    Cancel(String),
}

impl From<StoreError> for OperatorError {
    fn from(error: StoreError) -> Self {
        OperatorError::Store(error)
    }
}

/// What [`TaskRuntime::cancel_as_operator`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperatorCancel {
    /// The task is now `cancelled` (statusMessage
    /// [`MESSAGE_CANCELLED_BY_OPERATOR`](tasks_core::MESSAGE_CANCELLED_BY_OPERATOR)).
    Cancelled,
    /// The task had already ended in this status; nothing changed.
    AlreadyEnded(TaskStatus),
}

impl TaskRuntime {
    /// One page of every task the store holds, across every scope, filtered and ordered by
    /// `query`, each marked stuck or not by [`RuntimeConfig::stuck`](crate::RuntimeConfig::stuck).
    ///
    /// # Errors
    /// [`OperatorError::NotSupported`] for a store without an inventory;
    /// [`OperatorError::Store`] when it fails.
    pub async fn inventory(&self, query: &InventoryQuery) -> Result<InventoryPage, OperatorError> {
        let now = self.now();
        self.inner
            .store
            .inventory(query, self.config().stuck, now)
            .await?
            .ok_or(OperatorError::NotSupported)
    }

    /// The inventory's counts: by status, by tool, stuck by reason.
    ///
    /// # Errors
    /// As [`TaskRuntime::inventory`].
    pub async fn inventory_counts(&self) -> Result<InventoryCounts, OperatorError> {
        let now = self.now();
        self.inner
            .store
            .inventory_counts(self.config().stuck, now)
            .await?
            .ok_or(OperatorError::NotSupported)
    }

    /// Every node registered in the store, with the tasks each holds.
    ///
    /// # Errors
    /// As [`TaskRuntime::inventory`].
    pub async fn nodes(&self) -> Result<Vec<NodeRow>, OperatorError> {
        let now = self.now();
        self.inner
            .store
            .nodes(now)
            .await?
            .ok_or(OperatorError::NotSupported)
    }

    /// Cancels task `id` whatever its scope, as the operator `operator` (an identity for the
    /// audit log: the log line `operator cancelled a task` carries it with the task id, the
    /// tool is not told who). The task becomes `cancelled` with statusMessage
    /// [`MESSAGE_CANCELLED_BY_OPERATOR`](tasks_core::MESSAGE_CANCELLED_BY_OPERATOR); its worker is
    /// stopped here, or by its own node when another node holds it (through the store's change
    /// feed, as for a client's `tasks/cancel` there).
    ///
    /// # Errors
    /// [`OperatorError::NotFound`] for an unknown or expired task; [`OperatorError::Store`] or
    /// [`OperatorError::Cancel`] when the store fails.
    pub async fn cancel_as_operator(
        &self,
        id: &TaskId,
        operator: &str,
    ) -> Result<OperatorCancel, OperatorError> {
        let now = self.now();
        let found = self.inner.store.load(std::slice::from_ref(id), now).await?;
        let snapshot = found.into_iter().next().ok_or(OperatorError::NotFound)?;
        if snapshot.task.is_terminal() {
            return Ok(OperatorCancel::AlreadyEnded(snapshot.task.status()));
        }
        let task = match self
            .cancel_with(&snapshot.scope, id, Event::CancelledByOperator)
            .await
        {
            Ok(task) => task,
            Err(McpError::UnknownTask) => return Err(OperatorError::NotFound),
            Err(error) => return Err(OperatorError::Cancel(error.to_string())),
        };
        if task.status_message() != Some(tasks_core::MESSAGE_CANCELLED_BY_OPERATOR) {
            // It ended on its own (or by its caller) between the read and the commit.
            return Ok(OperatorCancel::AlreadyEnded(task.status()));
        }
        tracing::warn!(task = %id.as_str(), operator, "operator cancelled a task");
        Ok(OperatorCancel::Cancelled)
    }
}
