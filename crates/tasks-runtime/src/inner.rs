//! The runtime's shared state and the operations on it that workers and requests both use:
//! compare-and-set commits, status events, input waiters, reaping.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;
use tasks_core::input::{InputRequest, InputResponse};
use tasks_core::{apply, Event, McpError, ReduceError, Task, TaskId};
use tokio::sync::{broadcast, oneshot, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::config::RuntimeConfig;
use crate::error::ToolError;
use crate::events::{StatusEvent, TaskEvent};
use crate::port::TaskPort;
use crate::registry::ToolRegistry;
use crate::scope::Scope;
use crate::store::task_map::TaskMap;
use crate::store::{Authority, CasOutcome, Lease, NodeId, Store, StoreError};

/// The live part of a running worker: its lease, its cancellation and its parked input
/// waiters.
pub(crate) struct WorkerHandle {
    pub(crate) lease: Lease,
    pub(crate) cancel: CancellationToken,
    waiters: Mutex<HashMap<String, oneshot::Sender<InputResponse>>>,
}

impl WorkerHandle {
    pub(crate) fn new(lease: Lease) -> Self {
        WorkerHandle {
            lease,
            cancel: CancellationToken::new(),
            waiters: Mutex::new(HashMap::new()),
        }
    }
}

pub(crate) struct Inner {
    pub(crate) store: Arc<dyn Store>,
    /// The registered tools: a snapshot per use, replaced whole when a tool is added or
    /// removed at run time.
    pub(crate) tools: arc_swap::ArcSwap<ToolRegistry>,
    pub(crate) config: RuntimeConfig,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) workers: TaskMap<Arc<WorkerHandle>>,
    pub(crate) events: broadcast::Sender<StatusEvent>,
    /// What waiters follow ([`crate::TaskRuntime::changes`]): the same states as `events`,
    /// removals and resyncs, in one order.
    pub(crate) waits: broadcast::Sender<TaskEvent>,
    /// The last state published per task (entries leave when the task expires).
    pub(crate) published: TaskMap<Published>,
    /// When the next entry of `published` expires: [`Inner::reap`] scans it only then.
    pub(crate) published_expiry: crate::expiry::NextExpiry,
    /// This process's current node id (a new one after the lease was lost).
    pub(crate) node: RwLock<NodeId>,
    /// The task-lifecycle metrics.
    pub(crate) metrics: crate::metrics::RuntimeMetrics,
    /// Whether the store accepted the node's last lease renewal (a write): what
    /// [`crate::TaskRuntime::store_writable`] reports.
    pub(crate) store_writable: std::sync::atomic::AtomicBool,
    /// Whether this node runs leases (set by [`crate::recovery`] once it starts): then every
    /// create requires the owner's lease to be live ([`crate::store::CreateLimits`]).
    pub(crate) leased: std::sync::atomic::AtomicBool,
    /// The key of the callers sealed into work ([`crate::seal`]).
    pub(crate) principal_key: crate::seal::PrincipalKey,
    /// When the store's tasks were last counted for the metrics.
    pub(crate) last_count: tokio::sync::Mutex<Option<tokio::time::Instant>>,
    /// Held by every claim pass and adoption, one at a time ([`crate::recovery`]); `true`
    /// while a claim's outcome is unknown and its tasks may be held with nothing running them.
    pub(crate) claims: tokio::sync::Mutex<bool>,
}

/// What [`Inner::publish`] last sent for a task: enough to drop stale or repeated states,
/// to know which tasks may still change (for a resync), and when to forget the entry.
///
/// One is kept per stored task until it expires, so it is packed into 16 bytes: the revision
/// with the terminal flag in its top bit (revisions count changes and never get near 2^63),
/// and the expiry in milliseconds with `u64::MAX` for never.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Published {
    revision: u64,
    expires_at_ms: u64,
}

impl Published {
    const TERMINAL: u64 = 1 << 63;

    /// Nothing published yet for `task`: revision 0, not terminal.
    pub(crate) fn unpublished(task: &Task) -> Self {
        Published {
            revision: 0,
            expires_at_ms: Self::expiry(task),
        }
    }

    /// `task` as published.
    pub(crate) fn of(task: &Task) -> Self {
        let terminal = if task.is_terminal() {
            Self::TERMINAL
        } else {
            0
        };
        Published {
            revision: task.revision().min(Self::TERMINAL - 1) | terminal,
            expires_at_ms: Self::expiry(task),
        }
    }

    fn expiry(task: &Task) -> u64 {
        task.expires_at().map_or(u64::MAX, |at| at.unix_millis())
    }

    /// The last revision published.
    pub(crate) fn revision(&self) -> u64 {
        self.revision & !Self::TERMINAL
    }

    /// Whether the last state published was terminal.
    pub(crate) fn terminal(&self) -> bool {
        self.revision & Self::TERMINAL != 0
    }

    /// When the task expires (`None`: never).
    pub(crate) fn expires_at(&self) -> Option<tasks_core::Timestamp> {
        (self.expires_at_ms != u64::MAX)
            .then(|| tasks_core::Timestamp::from_unix_millis(self.expires_at_ms))
    }

    /// Whether the task has expired at `now`.
    pub(crate) fn expired(&self, now: tasks_core::Timestamp) -> bool {
        self.expires_at().is_some_and(|at| now >= at)
    }
}

/// The outcome of [`Inner::commit`].
pub(crate) struct Committed {
    pub(crate) task: Arc<Task>,
    pub(crate) fulfilled: BTreeMap<String, InputResponse>,
}

/// `error.message` of a request that failed because the store did.
pub(crate) const STORE_FAILURE: &str = "Task store failure";

pub(crate) fn store_error(error: StoreError) -> McpError {
    match error {
        StoreError::Capacity(limit) => McpError::CapacityExhausted(limit),
        StoreError::Unavailable(_) | StoreError::Interrupted(_) | StoreError::LeaseLost => {
            tracing::warn!(%error, "task store unavailable");
            McpError::StoreUnavailable
        }
        StoreError::Duplicate | StoreError::Backend(_) => {
            tracing::error!(%error, "task store failure");
            McpError::Internal(STORE_FAILURE)
        }
    }
}

/// [`store_error`] for a write a request made: one interrupted after it reached the store may
/// have taken effect, and the answer says so.
pub(crate) fn write_error(error: StoreError) -> McpError {
    match error {
        StoreError::Interrupted(_) => {
            tracing::warn!(%error, "task store unavailable during a write");
            McpError::StoreOutcomeUnknown
        }
        other => store_error(other),
    }
}

/// Whether `error` is the store failing (for good or briefly) rather than an answer.
pub(crate) fn store_fault(error: &McpError) -> bool {
    matches!(
        error,
        McpError::Internal(STORE_FAILURE)
            | McpError::StoreUnavailable
            | McpError::StoreOutcomeUnknown
    )
}

/// Runs `step` until it succeeds or fails otherwise than by a store failure, backing off from
/// 100 ms to 5 s between tries, or until `cancel` fires (then `None`). A worker asking for
/// input uses it (a store that is briefly unreachable, a database failover or a terminated
/// connection, must not fail a task that was only waiting for its user), and so does a re-run
/// charging its attempt.
pub(crate) async fn patiently<T, F, Fut>(
    cancel: &CancellationToken,
    mut step: F,
) -> Option<Result<T, McpError>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, McpError>>,
{
    let mut backoff = std::time::Duration::from_millis(100);
    loop {
        match step().await {
            Err(error) if store_fault(&error) => {
                tracing::warn!(%error, "the store failed while a task's worker wrote; retrying");
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = cancel.cancelled() => return None,
                }
                backoff = (backoff * 2).min(std::time::Duration::from_secs(5));
            }
            done => return Some(done),
        }
    }
}

impl Inner {
    pub(crate) fn node(&self) -> NodeId {
        *crate::lock::read(&self.node)
    }

    /// Removes the worker entry of `id` if it is still `handle` (a newer worker of the same
    /// task, after a takeover by this node, keeps its own).
    /// Stops every local worker: each one's cancellation fires, and a worker stopped that way
    /// commits nothing (its task stays as stored, for the next holder of its lease).
    pub(crate) fn stop_workers(&self) {
        let ids: Vec<_> = self.workers.iter().map(|e| e.key().clone()).collect();
        for id in ids {
            if let Some((_, handle)) = self.workers.remove(&id) {
                handle.cancel.cancel();
            }
        }
    }

    pub(crate) fn forget_worker(&self, id: &TaskId, handle: &Arc<WorkerHandle>) {
        self.workers
            .remove_if(id, |_, current| Arc::ptr_eq(current, handle));
    }

    pub(crate) fn publish(&self, scope: &Scope, task: &Arc<Task>) {
        // Commits of one task can race and publish after the store call returns, so order the
        // sends under the task's entry: never an older revision after a newer one.
        let mut last = self
            .published
            .entry(task.id().clone())
            .or_insert(Published::unpublished(task));
        if task.revision() <= last.revision() {
            return;
        }
        *last = Published::of(task);
        self.published_expiry.note(task.expires_at());
        let event = StatusEvent {
            scope: scope.clone(),
            task: task.clone(),
        };
        // No receiver is not an error.
        if self.waits.receiver_count() > 0 {
            let _ = self.waits.send(TaskEvent::Status(event.clone()));
        }
        let _ = self.events.send(event);
    }

    /// Whether anything here follows status changes (a waiter, a subscriber).
    pub(crate) fn followed(&self) -> bool {
        self.events.receiver_count() > 0 || self.waits.receiver_count() > 0
    }

    /// Task `id` is gone (reaped, expired, or found missing): forgets what was published for
    /// it, stops its local worker, and tells the waiters ([`TaskEvent::Removed`]).
    pub(crate) fn removed(&self, id: &TaskId) {
        self.published.remove(id);
        if let Some((_, handle)) = self.workers.remove(id) {
            handle.cancel.cancel();
        }
        let _ = self.waits.send(TaskEvent::Removed(id.clone()));
    }

    /// Tells the waiters that changes may have been missed ([`TaskEvent::Resync`]).
    pub(crate) fn resync(&self) {
        let _ = self.waits.send(TaskEvent::Resync);
    }

    /// Records `task` as followed (see [`crate::TaskRuntime::watch`]): a publication entry
    /// at revision 0 puts a task not yet published into the resync set without holding back
    /// any revision.
    pub(crate) fn watch(&self, task: &Task) {
        self.published
            .entry(task.id().clone())
            .or_insert(Published::unpublished(task));
        self.published_expiry.note(task.expires_at());
    }

    /// Applies `event` to task `id` with compare-and-set, retrying on conflicts. `lease` is
    /// the worker's (`None` for a request): a worker whose lease was taken over is refused
    /// with -32602 `Unknown or inaccessible taskId`, as if the task were gone, and must stop.
    pub(crate) async fn commit(
        &self,
        scope: &Scope,
        id: &TaskId,
        event: Event,
        lease: Option<&Lease>,
    ) -> Result<Committed, McpError> {
        let who = match lease {
            Some(lease) => Authority::Worker(lease),
            None => Authority::Request(scope),
        };
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
                // A refusal a later tasks-core adds (ReduceError is non_exhaustive): like the
                // key errors, a fault of the tool's requests, never of the client.
                _ => McpError::Internal("Input request refused"),
            })?;
            let (update, fulfilled) = transition.split();
            let Some(update) = update else {
                // Nothing to write: the stored state already has what the event would bring
                // (a terminal task, answers already stored). It may have been committed by an
                // earlier call that ran out of its deadline after writing, which neither
                // published it nor woke the worker: both happen here, idempotently.
                self.publish(scope, &snapshot.task);
                self.follow(&snapshot.task);
                return Ok(Committed {
                    task: snapshot.task,
                    fulfilled,
                });
            };
            match self
                .store
                .transition(who, update, now)
                .await
                .map_err(write_error)?
            {
                CasOutcome::Committed(committed) => {
                    tracing::debug!(
                        task_id = id.as_str(),
                        status = committed.task.status().as_str(),
                        revision = committed.task.revision(),
                        "task status committed"
                    );
                    self.metrics.entered(&committed.task);
                    self.metrics.left_input(&snapshot.task, &committed.task);
                    self.publish(scope, &committed.task);
                    return Ok(Committed {
                        task: committed.task,
                        fulfilled,
                    });
                }
                CasOutcome::Conflict(_) => continue,
                CasOutcome::NotFound => return Err(McpError::UnknownTask),
                CasOutcome::Fenced => {
                    self.metrics.fenced();
                    tracing::info!(task = %id.as_str(), "worker fenced: its task was taken over");
                    return Err(McpError::UnknownTask);
                }
            }
        }
    }

    /// Commits a worker's last event (the task's outcome), retrying while the store fails
    /// (backing off from 100 ms to 5 s), until it is stored or cannot be any more (the task is
    /// gone, expired, already terminal, or taken over): an outcome lost to a transient store
    /// error would leave the task `working` with nothing running it. Stops retrying once
    /// `cancel` has fired (the task was cancelled or reaped, or the node fenced itself: another
    /// node may run the task by now, and will settle it).
    pub(crate) async fn commit_final(
        &self,
        scope: &Scope,
        id: &TaskId,
        event: Event,
        lease: &Lease,
        cancel: &CancellationToken,
    ) {
        let mut backoff = std::time::Duration::from_millis(100);
        loop {
            // A commit under way is never dropped (a write the store made would go
            // unpublished); each attempt ends by the store deadline. The first attempt is made
            // even after `cancel`: with the lease still current (no other node has claimed the
            // task) the outcome is kept, else the store fences it.
            match self.commit(scope, id, event.clone(), Some(lease)).await {
                Ok(_) => return,
                Err(McpError::UnknownTask) => {
                    tracing::debug!(task = %id.as_str(), "task outcome not committed (gone or taken over)");
                    return;
                }
                Err(error) => {
                    tracing::warn!(%error, task = %id.as_str(), "committing a task outcome failed; retrying");
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        () = cancel.cancelled() => return,
                    }
                    backoff = (backoff * 2).min(std::time::Duration::from_secs(5));
                }
            }
        }
    }

    fn forget_waiter(&self, handle: &WorkerHandle, key: &str) {
        crate::lock::lock(&handle.waiters).remove(key);
    }

    /// Hands fulfilled responses to exactly the waiters of those keys.
    pub(crate) fn wake(&self, id: &TaskId, fulfilled: BTreeMap<String, InputResponse>) {
        if fulfilled.is_empty() {
            return;
        }
        let Some(handle) = self.workers.get(id).map(|h| h.clone()) else {
            return;
        };
        let mut waiters = crate::lock::lock(&handle.waiters);
        for (key, response) in fulfilled {
            if let Some(sender) = waiters.remove(&key) {
                let _ = sender.send(response);
            }
        }
    }

    /// Brings the local worker of `task` (if any) in line with a state committed elsewhere:
    /// a terminal task stops its worker (cancelled on another node); answers stored for keys
    /// the worker waits on are handed to it (answered on another node).
    pub(crate) fn follow(&self, task: &Task) {
        let Some(handle) = self.workers.get(task.id()).map(|h| h.clone()) else {
            return;
        };
        if task.is_terminal() {
            self.forget_worker(task.id(), &handle);
            handle.cancel.cancel();
            return;
        }
        let mut waiters = crate::lock::lock(&handle.waiters);
        let answered: Vec<String> = waiters
            .keys()
            .filter(|key| task.answered(key).is_some())
            .cloned()
            .collect();
        for key in answered {
            if let (Some(sender), Some(answer)) = (waiters.remove(&key), task.answer(&key)) {
                let _ = sender.send(answer);
            }
        }
    }

    /// Deletes the tasks expired now, stops their local workers, forgets what was published
    /// for expired tasks (including those another node reaped), and tells the waiters of each
    /// ([`TaskEvent::Removed`]).
    pub(crate) async fn reap(&self) -> Result<usize, McpError> {
        let now = self.clock.now();
        let reaped = self.store.reap(now).await.map_err(store_error)?;
        self.metrics.reaped(reaped.len());
        for id in &reaped {
            self.removed(id);
        }
        let mut expired = Vec::new();
        if self.published_expiry.sweep_due(now) {
            for entry in &self.published {
                if entry.expired(now) {
                    expired.push(entry.key().clone());
                } else {
                    self.published_expiry.note(entry.expires_at());
                }
            }
        }
        // Expired tasks another node reaped (or that no reaper has deleted yet): gone too.
        for id in expired {
            self.removed(&id);
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
        lease: &Lease,
        key: String,
        request: InputRequest,
        sender: oneshot::Sender<InputResponse>,
    ) -> Result<Option<InputResponse>, ToolError> {
        // An answer already stored (a re-run after recovery, or an answer that arrived
        // before this run asked again) is replayed instead of asking the client twice.
        let handle = self
            .workers
            .get(id)
            .map(|h| h.clone())
            .ok_or(ToolError::Cancelled)?;
        let cancel = handle.cancel.clone();
        let stored = || async {
            patiently(&cancel, || self.stored_answer(scope, id, &key, &request))
                .await
                .unwrap_or(Err(McpError::UnknownTask))
        };
        if let Some(answer) = stored().await.map_err(asking_failed)? {
            return Ok(Some(answer));
        }
        crate::lock::lock(&handle.waiters).insert(key.clone(), sender);
        let event = Event::InputRequested {
            key: key.clone(),
            request: request.clone(),
        };
        let result = patiently(&cancel, || {
            self.commit(scope, id, event.clone(), Some(lease))
        })
        .await
        .unwrap_or(Err(McpError::UnknownTask));
        match result {
            Ok(committed) if !committed.task.is_terminal() => Ok(None),
            Ok(_) | Err(McpError::UnknownTask) => {
                self.forget_waiter(&handle, &key);
                Err(ToolError::Cancelled)
            }
            Err(error) => {
                self.forget_waiter(&handle, &key);
                // The key was answered between the read above and the commit.
                if let Some(answer) = stored().await.map_err(asking_failed)? {
                    return Ok(Some(answer));
                }
                Err(ToolError::Rpc(error.to_error_object()))
            }
        }
    }

    async fn report(&self, scope: &Scope, id: &TaskId, lease: &Lease, event: Event) -> bool {
        let committed = self.commit(scope, id, event, Some(lease)).await;
        committed.is_ok_and(|c| !c.task.is_terminal())
    }
}

impl Inner {
    /// The stored answer to `key`, if the task has one: checked against `request`, which must
    /// be the request it answered (-32603 `Input request key reused` otherwise, -32602 for an
    /// answer that does not fit). `UnknownTask` when the task is gone.
    async fn stored_answer(
        &self,
        scope: &Scope,
        id: &TaskId,
        key: &str,
        request: &InputRequest,
    ) -> Result<Option<InputResponse>, McpError> {
        let now = self.clock.now();
        let snapshot = self
            .store
            .get(scope, id, now)
            .await
            .map_err(store_error)?
            .ok_or(McpError::UnknownTask)?;
        let Some(answered) = snapshot.task.answered(key) else {
            return Ok(None);
        };
        if answered.request != *request {
            return Err(McpError::Internal("Input request key reused"));
        }
        answered
            .request
            .check_response(&answered.response)
            .map(Some)
            .map_err(|reason| reason.to_error(key))
    }
}

/// How a failure to read or record a question reaches the tool: a task that is gone (or
/// whose worker was stopped) is cancelled; anything else is the error.
fn asking_failed(error: McpError) -> ToolError {
    match error {
        McpError::UnknownTask => ToolError::Cancelled,
        error => ToolError::Rpc(error.to_error_object()),
    }
}
