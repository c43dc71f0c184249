//! The task runtime: creation, lookup, input delivery, cancellation, reaping and events.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, Weak};

use dashmap::DashMap;
use serde_json::Value;
use tasks_core::id::TASK_ID_RANDOM_BYTES;
use tasks_core::{apply, Event, InputRequest, InputResponse, McpError, ReduceError, Task, TaskId};
use tokio::sync::{broadcast, oneshot, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::clock::{Clock, TokioClock};
use crate::config::RuntimeConfig;
use crate::context::ToolError;
use crate::events::StatusEvent;
use crate::registry::ToolRegistry;
use crate::scope::Scope;
use crate::store::{CasOutcome, CreateLimits, Store, StoreError};
use crate::work::Work;
use crate::worker;

/// Capacity of the status-event broadcast channel; a slower receiver skips older events.
const EVENT_CHANNEL_CAPACITY: usize = 4096;

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
    events: broadcast::Sender<StatusEvent>,
    /// The last revision published per task (entries leave when the task is reaped).
    published: DashMap<TaskId, u64>,
}

/// The outcome of [`Inner::commit`].
pub(crate) struct Committed {
    pub(crate) task: Arc<Task>,
    pub(crate) fulfilled: BTreeMap<String, InputResponse>,
}

/// Runs tasks: the transport-independent heart of a Tasks server.
///
/// Cheap to clone (an `Arc`). Every method that takes a [`Scope`] is request-side: a task of
/// another scope answers -32602 `Unknown or inaccessible taskId`, like an unknown or expired one.
#[derive(Clone)]
pub struct TaskRuntime {
    inner: Arc<Inner>,
}

fn store_error(error: StoreError) -> McpError {
    match error {
        StoreError::Capacity(limit) => McpError::CapacityExhausted(limit),
        StoreError::Duplicate | StoreError::Backend(_) => {
            tracing::error!(%error, "task store failure");
            McpError::Internal("Task store failure")
        }
    }
}

impl TaskRuntime {
    /// A runtime over `store` serving `tools`, with the wall clock.
    pub fn new(store: Arc<dyn Store>, tools: ToolRegistry, config: RuntimeConfig) -> Self {
        Self::with_clock(store, tools, config, Arc::new(TokioClock::new()))
    }

    /// A runtime with an explicit clock (tests drive [`TokioClock`] with tokio's paused time).
    pub fn with_clock(
        store: Arc<dyn Store>,
        tools: ToolRegistry,
        config: RuntimeConfig,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let (events, _) = broadcast::channel(EVENT_CHANNEL_CAPACITY);
        let slots = Arc::new(Semaphore::new(config.limits.max_workers));
        TaskRuntime {
            inner: Arc::new(Inner {
                store,
                tools,
                config,
                clock,
                slots,
                workers: DashMap::new(),
                events,
                published: DashMap::new(),
            }),
        }
    }

    /// The registered tools.
    pub fn tools(&self) -> &ToolRegistry {
        &self.inner.tools
    }

    /// The configuration.
    pub fn config(&self) -> &RuntimeConfig {
        &self.inner.config
    }

    /// The current time of the runtime's clock.
    pub fn now(&self) -> tasks_core::Timestamp {
        self.inner.clock.now()
    }

    /// Number of workers holding a slot right now (parked tasks hold none).
    pub fn busy_workers(&self) -> usize {
        self.inner.config.limits.max_workers - self.inner.slots.available_permits()
    }

    /// Number of stored tasks.
    ///
    /// # Errors
    /// -32603 when the store fails.
    pub async fn stored_tasks(&self) -> Result<usize, McpError> {
        self.inner.store.task_count().await.map_err(store_error)
    }

    /// Creates a task for `work` and starts its worker; returns the task as created.
    ///
    /// The task and its work descriptor are committed before this returns, so a `tasks/get`
    /// sent right after the `CreateTaskResult` finds it (runner check
    /// `sep-2663-durable-create-strong-consistency`).
    ///
    /// # Errors
    /// * -32602 `Unknown tool` when `work.tool` is not registered;
    /// * -32602 `Task input is larger than 262144 bytes` (the configured limit);
    /// * -32603 `Task capacity exhausted` with `data.limit` `max_jobs`, `max_tasks` or
    ///   `max_active_tasks_per_scope`. Nothing is stored on any refusal.
    pub async fn create_task(&self, work: Work) -> Result<Arc<Task>, McpError> {
        self.create(work, None).await
    }

    /// Creates a task under a caller-derived `id`, idempotently: when a task with this id
    /// already exists in `work.scope` (a replayed request), it is returned as it is now and
    /// nothing new is stored or run. Derive `id` so that only the same request maps to it (a
    /// keyed hash of data the client cannot forge, e.g. a signed MRTR `requestState` with the
    /// answers); it holds across processes sharing the store.
    ///
    /// # Errors
    /// As [`TaskRuntime::create_task`].
    pub async fn create_task_with_id(&self, work: Work, id: TaskId) -> Result<Arc<Task>, McpError> {
        if let Some(existing) = self.existing(&work.scope, &id).await? {
            return Ok(existing);
        }
        self.create(work, Some(id)).await
    }

    async fn existing(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Task>>, McpError> {
        let now = self.inner.clock.now();
        let snapshot = self
            .inner
            .store
            .get(scope, id, now)
            .await
            .map_err(store_error)?;
        Ok(snapshot.map(|s| s.task))
    }

    async fn create(&self, work: Work, id: Option<TaskId>) -> Result<Arc<Task>, McpError> {
        let inner = &self.inner;
        let limits = &inner.config.limits;
        let tool = inner
            .tools
            .get(&work.tool)
            .cloned()
            .ok_or_else(|| McpError::invalid_params("Unknown tool"))?;
        if work.encoded_len() > limits.max_input_bytes {
            return Err(McpError::TaskInputTooLarge {
                limit: limits.max_input_bytes,
            });
        }
        let permit = inner
            .slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| McpError::CapacityExhausted(tasks_core::CapacityLimit::MaxJobs))?;
        let id = match id {
            Some(id) => id,
            None => {
                let mut random = [0u8; TASK_ID_RANDOM_BYTES];
                getrandom::fill(&mut random)
                    .map_err(|_| McpError::Internal("No randomness available"))?;
                TaskId::from_random_bytes(random)
            }
        };
        let task = Task::new(
            id.clone(),
            inner.clock.now(),
            inner.config.ttl_ms,
            inner.config.poll_interval_ms,
        );
        let scope = work.scope.clone();
        let create_limits = CreateLimits {
            max_tasks: limits.max_tasks,
            max_active_per_scope: limits.max_active_per_scope,
        };
        let work = Arc::new(work);
        let snapshot = match inner
            .store
            .create(task, Work::clone(&work), create_limits)
            .await
        {
            Ok(snapshot) => snapshot,
            // A concurrent replay stored it first: answer with that task.
            Err(StoreError::Duplicate) => {
                return self
                    .existing(&scope, &id)
                    .await?
                    .ok_or(McpError::Internal("Task store failure"));
            }
            Err(error) => return Err(store_error(error)),
        };
        let handle = Arc::new(WorkerHandle::default());
        inner
            .workers
            .insert(snapshot.task.id().clone(), handle.clone());
        inner.publish(&scope, &snapshot.task);
        tokio::spawn(worker::run(
            inner.clone(),
            tool,
            snapshot.task.id().clone(),
            work,
            handle,
            permit,
        ));
        Ok(snapshot.task)
    }

    /// The task `id` of `scope`.
    ///
    /// # Errors
    /// -32602 `Unknown or inaccessible taskId` when unknown, expired or of another scope.
    pub async fn get(&self, scope: &Scope, id: &TaskId) -> Result<Arc<Task>, McpError> {
        let now = self.inner.clock.now();
        match self.inner.store.get(scope, id, now).await {
            Ok(Some(snapshot)) => Ok(snapshot.task),
            Ok(None) => Err(McpError::UnknownTask),
            Err(e) => Err(store_error(e)),
        }
    }

    /// Delivers `tasks/update` responses. Only keys currently outstanding are taken, each by
    /// exactly one update even under concurrency; other keys are ignored; a terminal task is
    /// left unchanged. The caller acknowledges with an empty result either way.
    ///
    /// # Errors
    /// * -32602 `Unknown or inaccessible taskId`;
    /// * -32602 `Invalid input response for <key>: <reason>` when a response to an outstanding
    ///   key does not fit its request ([`tasks_core::InputRequest::check_response`]); then
    ///   nothing of the update is applied and the task is unchanged.
    pub async fn update(
        &self,
        scope: &Scope,
        id: &TaskId,
        responses: BTreeMap<String, Value>,
    ) -> Result<(), McpError> {
        let committed = self
            .inner
            .commit(scope, id, Event::InputResponsesAccepted { responses })
            .await?;
        self.inner.wake(id, committed.fulfilled);
        Ok(())
    }

    /// Cancels a task: commits `cancelled` first, then stops the worker, so a worker that
    /// finishes later cannot change the status. A terminal task is left unchanged.
    ///
    /// # Errors
    /// -32602 `Unknown or inaccessible taskId`.
    pub async fn cancel(&self, scope: &Scope, id: &TaskId) -> Result<(), McpError> {
        self.inner.commit(scope, id, Event::Cancelled).await?;
        if let Some((_, handle)) = self.inner.workers.remove(id) {
            handle.cancel.cancel();
        }
        Ok(())
    }

    /// A receiver of every committed status change (creation included).
    ///
    /// Per task, events arrive in strictly increasing revision order and nothing follows a
    /// terminal state. When commits of one task race (a worker and a request), a state that was
    /// superseded before it could be published is skipped rather than sent late.
    pub fn subscribe(&self) -> broadcast::Receiver<StatusEvent> {
        self.inner.events.subscribe()
    }

    /// Deletes expired tasks now and stops their workers; returns how many were deleted.
    ///
    /// # Errors
    /// -32603 when the store fails.
    pub async fn reap_now(&self) -> Result<usize, McpError> {
        self.inner.reap().await
    }

    /// Starts the background reaper (every `limits.reap_interval`). It stops when every
    /// [`TaskRuntime`] clone is dropped, or when the returned handle is aborted.
    pub fn spawn_reaper(&self) -> JoinHandle<()> {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let period = self.inner.config.limits.reap_interval;
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(period);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            interval.tick().await;
            loop {
                interval.tick().await;
                let Some(inner) = weak.upgrade() else { return };
                if let Err(error) = inner.reap().await {
                    tracing::warn!(%error, "reaper pass failed");
                }
            }
        })
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
            if !transition.changed {
                return Ok(Committed {
                    task: snapshot.task,
                    fulfilled: transition.fulfilled,
                });
            }
            match self
                .store
                .transition(scope, snapshot.task.revision(), transition.task, now)
                .await
                .map_err(store_error)?
            {
                CasOutcome::Committed(committed) => {
                    self.publish(scope, &committed.task);
                    return Ok(Committed {
                        task: committed.task,
                        fulfilled: transition.fulfilled,
                    });
                }
                CasOutcome::Conflict(_) => continue,
                CasOutcome::NotFound => return Err(McpError::UnknownTask),
            }
        }
    }

    /// Registers a waiter for `key` and moves the task to `input_required`.
    pub(crate) async fn request_input(
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

    async fn reap(&self) -> Result<usize, McpError> {
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
