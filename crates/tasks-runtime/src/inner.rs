//! The runtime's shared state and the operations on it that workers and requests both use:
//! compare-and-set commits, status events, input waiters, reaping.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use dashmap::DashMap;
use tasks_core::{apply, Event, InputRequest, InputResponse, McpError, ReduceError, Task, TaskId};
use tokio::sync::{broadcast, oneshot, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::config::RuntimeConfig;
use crate::error::ToolError;
use crate::events::StatusEvent;
use crate::port::TaskPort;
use crate::registry::ToolRegistry;
use crate::scope::Scope;
use crate::store::{CasOutcome, Store, StoreError};

/// The live part of a running worker: its cancellation and its parked input waiters.
#[derive(Default)]
pub(crate) struct WorkerHandle {
    pub(crate) cancel: CancellationToken,
    waiters: Mutex<HashMap<String, oneshot::Sender<InputResponse>>>,
}

pub(crate) struct Inner {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) tools: ToolRegistry,
    pub(crate) config: RuntimeConfig,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) workers: DashMap<TaskId, Arc<WorkerHandle>>,
    pub(crate) events: broadcast::Sender<StatusEvent>,
    /// The last revision published per task (entries leave when the task is reaped).
    pub(crate) published: DashMap<TaskId, u64>,
}

/// The outcome of [`Inner::commit`].
pub(crate) struct Committed {
    pub(crate) task: Arc<Task>,
    pub(crate) fulfilled: BTreeMap<String, InputResponse>,
}

pub(crate) fn store_error(error: StoreError) -> McpError {
    match error {
        StoreError::Capacity(limit) => McpError::CapacityExhausted(limit),
        StoreError::Duplicate | StoreError::Backend(_) => {
            tracing::error!(%error, "task store failure");
            McpError::Internal("Task store failure")
        }
    }
}

impl Inner {
    pub(crate) fn publish(&self, scope: &Scope, task: &Arc<Task>) {
        // Commits of one task can race and publish after the store call returns, so order the
        // sends under the task's entry: never an older revision after a newer one.
        let mut last = self.published.entry(task.id().clone()).or_insert(0);
        if task.revision() <= *last {
            return;
        }
        *last = task.revision();
        // No receiver is not an error.
        let _ = self.events.send(StatusEvent {
            scope: scope.clone(),
            task: task.clone(),
        });
    }

    /// Applies `event` to task `id` with compare-and-set, retrying on conflicts.
    pub(crate) async fn commit(
        &self,
        scope: &Scope,
        id: &TaskId,
        event: Event,
    ) -> Result<Committed, McpError> {
        loop {
            let now = self.clock.now();
            let snapshot = self
                .store
                .get(scope, id, now)
                .await
                .map_err(store_error)?
                .ok_or(McpError::UnknownTask)?;
            let transition = apply(&snapshot.task, event.clone(), now).map_err(|e| match e {
                ReduceError::EmptyKey | ReduceError::KeyReused(_) => {
                    McpError::Internal("Input request key reused")
                }
                ReduceError::InvalidResponse { key, reason } => reason.to_error(&key),
            })?;
            let (update, fulfilled) = transition.split();
            let Some(update) = update else {
                return Ok(Committed {
                    task: snapshot.task,
                    fulfilled,
                });
            };
            match self
                .store
                .transition(scope, update, now)
                .await
                .map_err(store_error)?
            {
                CasOutcome::Committed(committed) => {
                    self.publish(scope, &committed.task);
                    return Ok(Committed {
                        task: committed.task,
                        fulfilled,
                    });
                }
                CasOutcome::Conflict(_) => continue,
                CasOutcome::NotFound => return Err(McpError::UnknownTask),
            }
        }
    }

    fn forget_waiter(&self, handle: &WorkerHandle, key: &str) {
        if let Ok(mut waiters) = handle.waiters.lock() {
            waiters.remove(key);
        }
    }

    /// Hands fulfilled responses to exactly the waiters of those keys.
    pub(crate) fn wake(&self, id: &TaskId, fulfilled: BTreeMap<String, InputResponse>) {
        if fulfilled.is_empty() {
            return;
        }
        let Some(handle) = self.workers.get(id).map(|h| h.clone()) else {
            return;
        };
        let Ok(mut waiters) = handle.waiters.lock() else {
            return;
        };
        for (key, response) in fulfilled {
            if let Some(sender) = waiters.remove(&key) {
                let _ = sender.send(response);
            }
        }
    }

    pub(crate) async fn reap(&self) -> Result<usize, McpError> {
        let reaped = self
            .store
            .reap(self.clock.now())
            .await
            .map_err(store_error)?;
        for id in &reaped {
            self.published.remove(id);
            if let Some((_, handle)) = self.workers.remove(id) {
                handle.cancel.cancel();
            }
        }
        Ok(reaped.len())
    }
}

#[async_trait]
impl TaskPort for Inner {
    async fn request_input(
        &self,
        scope: &Scope,
        id: &TaskId,
        key: String,
        request: InputRequest,
        sender: oneshot::Sender<InputResponse>,
    ) -> Result<(), ToolError> {
        let handle = self
            .workers
            .get(id)
            .map(|h| h.clone())
            .ok_or(ToolError::Cancelled)?;
        if let Ok(mut waiters) = handle.waiters.lock() {
            waiters.insert(key.clone(), sender);
        }
        let result = self
            .commit(
                scope,
                id,
                Event::InputRequested {
                    key: key.clone(),
                    request,
                },
            )
            .await;
        match result {
            Ok(committed) if !committed.task.is_terminal() => Ok(()),
            Ok(_) | Err(McpError::UnknownTask) => {
                self.forget_waiter(&handle, &key);
                Err(ToolError::Cancelled)
            }
            Err(error) => {
                self.forget_waiter(&handle, &key);
                Err(ToolError::Rpc(error.to_error_object()))
            }
        }
    }

    async fn set_status_message(&self, scope: &Scope, id: &TaskId, message: String) -> bool {
        let committed = self
            .commit(scope, id, Event::StatusMessage { message })
            .await;
        committed.is_ok_and(|c| !c.task.is_terminal())
    }
}
