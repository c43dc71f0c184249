//! The task runtime: creation, lookup, input delivery, cancellation, reaping and events.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, Weak};

use futures_util::FutureExt as _;
use serde_json::Value;
use tasks_core::plan::TaskRef;
use tasks_core::TASK_ID_RANDOM_BYTES;
use tasks_core::{Event, McpError, NewTask, Task, TaskId, TaskOrigin};
use tokio::sync::{broadcast, Semaphore};
use tokio::task::JoinHandle;

use crate::clock::{Clock, Monotonic, TokioClock};
use crate::config::RuntimeConfig;
use crate::creation::{Creation, IdChoice};
use crate::events::StatusEvent;
use crate::inner::{store_error, write_error, Inner, WorkerHandle};
use crate::registry::{Tool, ToolRegistry};
use crate::scope::Scope;
use crate::store::task_map::task_map;
use crate::store::{CreateLimits, NodeId, Store, StoreError};
use crate::wait::{Changes, TaskWait};
use crate::work::{Work, MAX_ANSWER_DEPTH};
use crate::worker;

/// Capacity of the status-event broadcast channel; a slower receiver skips older events.
const EVENT_CHANNEL_CAPACITY: usize = 4096;

/// Runs tasks: the transport-independent heart of a Tasks server.
///
/// Cheap to clone (an `Arc`). Every method that takes a [`Scope`] is request-side: a task of
/// another scope answers -32602 `Unknown or inaccessible taskId`, like an unknown or expired one.
#[derive(Clone)]
pub struct TaskRuntime {
    pub(crate) inner: Arc<Inner>,
    /// The prompts and resources ([`crate::hosted`]): a snapshot per use, replaced whole on
    /// each change. Beside `inner`, which the tools' side of the runtime sees, since nothing
    /// there needs it.
    pub(crate) catalog: Arc<arc_swap::ArcSwap<crate::catalog::Catalog>>,
}

impl std::fmt::Debug for TaskRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskRuntime")
            .field("node", &self.node())
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl TaskRuntime {
    /// A runtime over `store` serving `tools`, reading [`RuntimeConfig::clock`] when set, else
    /// the store's clock when it has one ([`Store::clock`], a store shared by several
    /// processes), else the wall clock.
    ///
    /// Unless the store brings its own clock ([`Store::clock`], whose readings it answers
    /// for), the clock is made [`Monotonic`] from the store's [`Store::time_floor`]: the
    /// runtime's time never goes back, across restarts of a durable store included.
    ///
    /// # Panics
    /// When [`RuntimeConfig::entropy`] cannot give the node its id (an operating system
    /// without a random source).
    pub fn new(store: Arc<dyn Store>, tools: ToolRegistry, config: RuntimeConfig) -> Self {
        let clock = match &config.clock {
            Some(clock) => clock.0.clone(),
            None => store.clock().unwrap_or_else(|| Arc::new(TokioClock::new())),
        };
        let clock: Arc<dyn Clock> = if store.clock().is_some() {
            clock
        } else {
            Arc::new(Monotonic::new(clock, store.time_floor()))
        };
        let node = NodeId::from_bytes(
            config
                .entropy
                .bytes()
                .expect("the runtime's entropy source gives a node id"),
        );
        let principal_key = config.principal_key.clone().unwrap_or_else(|| {
            crate::seal::PrincipalKey::from_bytes(
                config
                    .entropy
                    .bytes()
                    .expect("the runtime's entropy source gives a key"),
            )
        });
        let (events, _) = broadcast::channel(EVENT_CHANNEL_CAPACITY);
        let (waits, _) = broadcast::channel(EVENT_CHANNEL_CAPACITY);
        let slots = Arc::new(Semaphore::new(config.limits.max_workers));
        let metrics = crate::metrics::RuntimeMetrics::default();
        let store: Arc<dyn Store> = Arc::new(crate::store::metered::Metered::new(
            store,
            metrics.clone(),
            &config,
        ));
        TaskRuntime {
            catalog: Arc::new(arc_swap::ArcSwap::from_pointee(
                crate::catalog::Catalog::new(),
            )),
            inner: Arc::new(Inner {
                store,
                tools: arc_swap::ArcSwap::from_pointee(tools),
                config,
                clock,
                slots,
                workers: task_map(),
                events,
                waits,
                published: task_map(),
                published_expiry: Default::default(),
                node: RwLock::new(node),
                metrics,
                store_writable: std::sync::atomic::AtomicBool::new(true),
                leased: std::sync::atomic::AtomicBool::new(false),
                principal_key,
                last_count: tokio::sync::Mutex::new(None),
                claims: tokio::sync::Mutex::new(false),
            }),
        }
    }

    /// [`TaskRuntime::new`] with `clock` as [`RuntimeConfig::clock`] (tests drive a
    /// [`TokioClock`] with tokio's paused time).
    pub fn with_clock(
        store: Arc<dyn Store>,
        tools: ToolRegistry,
        config: RuntimeConfig,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self::new(store, tools, config.with_clock(clock))
    }

    /// The runtime's source of randomness ([`RuntimeConfig::entropy`]): a transport draws its
    /// keys, nonces and session ids from it too.
    pub fn entropy(&self) -> &crate::entropy::Randomness {
        &self.inner.config.entropy
    }

    /// What kind of store the runtime keeps its tasks in ([`Store::kind`]): `memory`, `sqlite`,
    /// `postgresql` or `custom`.
    pub fn store_kind(&self) -> &'static str {
        self.inner.store.kind()
    }

    /// Whether the store accepted this node's last lease renewal, a write made every
    /// [`LeaseConfig::tick`](crate::LeaseConfig::tick) by the liveness loop
    /// ([`TaskRuntime::spawn_liveness`]): `false` while the store cannot be written (a durable
    /// store whose database is down or read-only) or does not answer a renewal within
    /// [`RuntimeConfig::renewal_deadline`] (a stalled connection or writer), and from the
    /// moment the node fences itself until a renewal succeeds again. `true` before the first
    /// renewal, and always without a liveness loop. For a health check (the fixture's `GET /healthz`).
    pub fn store_writable(&self) -> bool {
        self.inner
            .store_writable
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Reads how many tasks the store holds in each status (across every node sharing it) into
    /// the `tasks_stored{status}` gauges of [`TaskRuntime::metrics`], how many are stuck
    /// ([`Store::inventory_counts`], judged by [`RuntimeConfig::stuck`]) into
    /// `tasks_stuck{reason}` where the store has an inventory, and how many it
    /// quarantined ([`Store::quarantined`]) into `tasks_quarantined`; called before a scrape.
    /// A store that does not count, fails, or takes over 2 s leaves the gauges as they were.
    /// The store is asked at most once per 5 s (later calls keep the last counts) and never by
    /// two calls at once.
    pub async fn refresh_status_counts(&self) {
        // At most one count at a time and one per 5 s: scrapes, which anyone may send, never
        // scan the store more often than that.
        let Ok(mut last) = self.inner.last_count.try_lock() else {
            return;
        };
        if last.is_some_and(|at| at.elapsed() < std::time::Duration::from_secs(5)) {
            return;
        }
        *last = Some(tokio::time::Instant::now());
        self.inner
            .metrics
            .set_quarantined(self.inner.store.quarantined());
        let now = self.inner.clock.now();
        // The inventory's counts, where the store has them, give the status counts too.
        let inventory = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            self.inner
                .store
                .inventory_counts(self.inner.config.stuck, now),
        )
        .await;
        match inventory {
            Ok(Ok(Some(counts))) => {
                self.inner.metrics.set_stuck(&counts.stuck);
                self.inner.metrics.set_status_counts(&counts.by_status);
                return;
            }
            Ok(Ok(None)) => {}
            Ok(Err(error)) => tracing::warn!(%error, "counting stored tasks failed"),
            Err(_elapsed) => tracing::warn!("counting stored tasks took over 2 s"),
        }
        let counted = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            self.inner.store.status_counts(now),
        )
        .await;
        match counted {
            Ok(Ok(Some(counts))) => self.inner.metrics.set_status_counts(&counts),
            Ok(Ok(None)) => {}
            Ok(Err(error)) => tracing::warn!(%error, "counting stored tasks failed"),
            Err(_elapsed) => tracing::warn!("counting stored tasks took over 2 s"),
        }
    }

    /// The task-lifecycle metrics of this runtime: register them into the server's registry
    /// with [`RuntimeMetrics::register`](crate::metrics::RuntimeMetrics::register).
    pub fn metrics(&self) -> &crate::metrics::RuntimeMetrics {
        &self.inner.metrics
    }

    /// This process's node id in the store (a new one after the node lost its lease).
    pub fn node(&self) -> NodeId {
        self.inner.node()
    }

    /// Registers this node with the store and takes over every orphaned task (of a process
    /// that died): each is failed or re-run by its tool's [`Recovery`](crate::Recovery)
    /// policy. Call it once at start-up, before serving; returns how many tasks were taken
    /// over. [`TaskRuntime::spawn_liveness`] keeps doing it.
    ///
    /// # Errors
    /// -32603 when the store fails.
    pub async fn recover(&self) -> Result<usize, McpError> {
        crate::recovery::start(&self.inner).await
    }

    /// Starts the liveness loop: every `leases.tick` it renews this node's lease and takes
    /// over orphaned tasks; when the lease is lost, or when by this node's own clock no
    /// renewal has succeeded for the lease minus one tick (a store that is down or stalled),
    /// it stops every local worker and registers again under a new node id. With a store shared by several processes
    /// ([`Store::changes`]) it also follows their commits: an answer given on another node
    /// reaches the worker parked here, a cancellation stops it, and the states reach this
    /// node's [`TaskRuntime::subscribe`] receivers (each revision at most once, in order).
    /// It stops when every [`TaskRuntime`] clone is dropped, or when the returned handle is
    /// aborted.
    pub fn spawn_liveness(&self) -> JoinHandle<()> {
        crate::recovery::spawn(Arc::downgrade(&self.inner))
    }

    /// Ends this node's lease (a graceful shutdown): its unfinished tasks become claimable at
    /// once by another node, or by the next start of this one.
    ///
    /// # Errors
    /// -32603 when the store fails.
    pub async fn retire(&self) -> Result<(), McpError> {
        self.inner
            .store
            .retire_node(&self.inner.node())
            .await
            .map_err(store_error)
    }

    /// A snapshot of the registered tools: a request that uses one sees the same tools from
    /// its start to its end, whatever is registered or removed meanwhile.
    pub fn tools(&self) -> Arc<ToolRegistry> {
        self.inner.tools.load_full()
    }

    /// Registers `tool` at run time, or replaces the tool of the same name in place: requests
    /// that start afterwards list and call it. Announces the change
    /// (`notifications/tools/list_changed` to the `subscriptions/listen` streams that asked
    /// for it) when [`RuntimeConfig::list_changes`] is set. Tasks already running keep the
    /// tool they started with.
    pub fn register_tool(&self, tool: crate::Tool) {
        let tool = Arc::new(tool);
        self.inner.tools.rcu(|tools| {
            let mut tools = ToolRegistry::clone(tools);
            tools.register_shared(tool.clone());
            tools
        });
        self.announce_tools();
    }

    /// Removes the tool `name` at run time; answers whether it was registered (and then
    /// announces the change as [`TaskRuntime::register_tool`] does). Later calls of it are
    /// -32602 `Unknown tool`; its tasks already running finish, and one taken over from a
    /// crashed node later is interrupted, as for any tool this node does not have (see
    /// [`Recovery`](crate::Recovery)).
    pub fn remove_tool(&self, name: &str) -> bool {
        let mut removed = false;
        self.inner.tools.rcu(|tools| {
            let mut tools = ToolRegistry::clone(tools);
            removed = tools.remove(name);
            tools
        });
        if removed {
            self.announce_tools();
        }
        removed
    }

    fn announce_tools(&self) {
        if let Some(changes) = &self.inner.config.list_changes {
            changes.announce(crate::ListKind::Tools);
        }
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

    /// Stops every local worker (running or parked) without committing anything for its task:
    /// the task stays as stored, for the next holder of its lease to take over.
    pub(crate) fn stop_workers(&self) {
        self.inner.stop_workers();
    }

    /// Waits until no worker is running (tasks parked for input do not count) or `timeout`
    /// has passed; returns whether every worker finished. A graceful shutdown calls it before
    /// [`TaskRuntime::retire`], so short work finishes instead of being interrupted.
    pub async fn drain(&self, timeout: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.busy_workers() == 0 {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Number of stored tasks.
    ///
    /// # Errors
    /// -32603 when the store fails.
    pub async fn stored_tasks(&self) -> Result<usize, McpError> {
        self.inner.store.task_count().await.map_err(store_error)
    }

    /// Creates the task `creation` describes ([`Creation`]: the work, and the caller, tool, id,
    /// TTL and origin the request chose) and starts its worker; returns the task as created (or,
    /// for a [`Creation::retry_id`] already stored, that task as it is now). The runtime's one
    /// entry for a new task: a [`Work`] converts into the creation with every default.
    ///
    /// The task and its work descriptor are committed before this returns, so a `tasks/get`
    /// sent right after the `CreateTaskResult` finds it (runner check
    /// `sep-2663-durable-create-strong-consistency`).
    ///
    /// # Errors
    /// * -32603 `Tool does not match the work` when [`Creation::tool`] is not `work.tool`;
    /// * -32603 `No randomness available` when the entropy source fails (the id, or the
    ///   nonce of the sealed principal);
    /// * -32602 `Unknown tool` when `work.tool` is not registered;
    /// * -32602 `Task input is larger than 262144 bytes` (the configured limit);
    /// * -32602 `Task input cannot be stored: the value nests N levels deep, more than the 126
    ///   allowed` or `…: a member name is reserved: $serde_json::private::RawValue` when the
    ///   work would not read back once stored ([`Work::check_storable`]; only work built by
    ///   another host than this project's HTTP adapter can be refused so);
    /// * -32603 `Task capacity exhausted` with `data.limit` `max_jobs`, `max_tasks` or
    ///   `max_active_tasks_per_scope`. Nothing is stored on any refusal.
    /// * -32603 `Task store unavailable: nothing was stored or changed` (HTTP 503,
    ///   [`McpError::StoreUnavailable`]) when the store could not be reached, or when this
    ///   node runs leases and holds none live (it lost its lease while its store stalled or
    ///   its process was paused, and has not registered again yet): another node would take
    ///   such a task over at once and fail it as interrupted;
    /// * -32603 `Task store unavailable: whether the request took effect is unknown` (HTTP 503,
    ///   [`McpError::StoreOutcomeUnknown`]) when the store did not answer the creation within
    ///   [`Limits::store_deadline`](crate::Limits::store_deadline) or lost its connection
    ///   meanwhile: the task may exist (and run). A server counts those it answers in
    ///   `mcp_store_unavailable_refusals_total` (`tasks_http::metrics`), where an error
    ///   becomes a client's answer.
    pub async fn create(&self, creation: impl Into<Creation>) -> Result<Arc<Task>, McpError> {
        let Creation {
            mut work,
            principal,
            tool,
            id,
            ttl_ms,
            origin,
        } = creation.into();
        let tool = match tool {
            Some(tool) if tool.name() != work.tool => {
                return Err(McpError::Internal("Tool does not match the work"))
            }
            Some(tool) => tool,
            None => self.tool(&work.tool)?,
        };
        if let Some(principal) = principal {
            self.seal_principal(&mut work, principal.as_ref())?;
        }
        let id = match id {
            IdChoice::Fresh => None,
            IdChoice::Minted(id) => Some(id),
            IdChoice::Retry(id) => match existing(&self.inner, &work.scope, &id).await? {
                Some(existing) => return Ok(existing),
                None => Some(id),
            },
        };
        let ttl_ms = ttl_ms.unwrap_or(self.inner.config.ttl_ms);
        self.create_with(tool, work, id, ttl_ms, origin).await
    }

    /// Seals `principal` into `work` ([`Work::sealed_principal`], bound to `work.scope`).
    /// `None`, or the empty principal (the shared scope), leaves the work without one: there
    /// is no caller to name.
    ///
    /// # Errors
    /// -32603 `No randomness available` when the entropy source fails (the nonce).
    pub(crate) fn seal_principal(
        &self,
        work: &mut Work,
        principal: Option<&crate::scope::Principal>,
    ) -> Result<(), McpError> {
        let Some(principal) = principal.filter(|p| !p.as_str().is_empty()) else {
            work.sealed_principal = None;
            return Ok(());
        };
        let nonce = self
            .inner
            .config
            .entropy
            .bytes()
            .map_err(|_| McpError::Internal("No randomness available"))?;
        work.sealed_principal = Some(self.inner.principal_key.seal(principal, &work.scope, nonce));
        Ok(())
    }

    /// A fresh task id, drawn as [`TaskRuntime::create`] draws one, for a caller that must
    /// know the id before the task exists ([`Creation::minted_id`]): a 2025-11-25 session
    /// records the task as its own before the worker can publish anything, so no status change
    /// or input request of the task is ever unattributed.
    ///
    /// # Errors
    /// -32603 `No randomness available` when the system's random source fails.
    pub fn mint_task_id(&self) -> Result<TaskId, McpError> {
        let random: [u8; TASK_ID_RANDOM_BYTES] = self
            .inner
            .config
            .entropy
            .bytes()
            .map_err(|_| McpError::Internal("No randomness available"))?;
        Ok(TaskId::from_random_bytes(random))
    }

    /// The registered tool `name`.
    fn tool(&self, name: &str) -> Result<Arc<Tool>, McpError> {
        self.inner.tools.load().find(name)
    }

    async fn create_with(
        &self,
        tool: Arc<Tool>,
        work: Work,
        id: Option<TaskId>,
        ttl_ms: Option<u64>,
        origin: TaskOrigin,
    ) -> Result<Arc<Task>, McpError> {
        let inner = &self.inner;
        let limits = &inner.config.limits;
        if work.encoded_len() > limits.max_input_bytes {
            return Err(McpError::TaskInputTooLarge {
                limit: limits.max_input_bytes,
            });
        }
        if let Err(unstorable) = work.check_storable() {
            return Err(McpError::InvalidParams(format!(
                "Task input cannot be stored: {unstorable}"
            )));
        }
        let permit = inner.slots.clone().try_acquire_owned().map_err(|_| {
            inner.metrics.refused(tasks_core::CapacityLimit::MaxJobs);
            McpError::CapacityExhausted(tasks_core::CapacityLimit::MaxJobs)
        })?;
        let id = match id {
            Some(id) => id,
            None => self.mint_task_id()?,
        };
        let task = NewTask::new(
            id.clone(),
            inner.clock.now(),
            ttl_ms,
            inner.config.poll_interval_ms,
        )
        .with_origin(origin);
        let create_limits = CreateLimits {
            max_tasks: limits.max_tasks,
            max_active_per_scope: limits.max_active_per_scope,
            lease_required: inner.leased.load(std::sync::atomic::Ordering::SeqCst),
        };
        // Storing the task and starting its worker must not be split by the caller going away
        // (a client that disconnects drops the request's future): a task stored but never
        // started would stay `working` and hold its scope's active slot until it expires. So
        // the two run as one future, first polled here (with the memory store it finishes at
        // once); what is left runs spawned, and the request only waits for it.
        let mut creation = Box::pin(store_and_start(
            inner.clone(),
            tool,
            task,
            Arc::new(work),
            create_limits,
            permit,
        ));
        match (&mut creation).now_or_never() {
            Some(created) => created,
            None => tokio::spawn(creation)
                .await
                .unwrap_or(Err(McpError::Internal("Task store failure"))),
        }
    }

    /// The task `id` of `scope`.
    ///
    /// # Errors
    /// -32602 `Unknown or inaccessible taskId` when unknown, expired or of another scope;
    /// -32603 `Task store unavailable: nothing was stored or changed` (HTTP 503) when the
    /// store could not be read in time.
    pub async fn get(&self, scope: &Scope, id: &TaskId) -> Result<Arc<Task>, McpError> {
        let now = self.inner.clock.now();
        match self.inner.store.get(scope, id, now).await {
            Ok(Some(snapshot)) => Ok(snapshot.task),
            Ok(None) => Err(McpError::UnknownTask),
            Err(e) => Err(store_error(e)),
        }
    }

    /// The task `target` names in `scope`, when the request may reach it: any task of the
    /// scope, or, for a target limited to one origin ([`TaskRef::only`]: a 2026-07-28 request
    /// that declared only the 2025-11-25 tasks capability), a task of that origin only.
    ///
    /// # Errors
    /// As [`TaskRuntime::get`]; for a limited target, -32021 `Missing required client
    /// capability` naming the Tasks extension both for a task of another origin and for an
    /// unknown one (what a request that declared nothing is told, so neither is revealed).
    pub async fn reach(&self, scope: &Scope, target: &TaskRef) -> Result<Arc<Task>, McpError> {
        reached(target, self.get(scope, &target.task_id).await)
    }

    /// Up to `limit` tasks of `scope`, in ascending id order, after task id `after` when given
    /// (one page of a 2025-11-25 `tasks/list`); `None` when the store cannot list.
    ///
    /// # Errors
    /// -32603 when the store fails.
    pub async fn list(
        &self,
        scope: &Scope,
        after: Option<&TaskId>,
        limit: usize,
    ) -> Result<Option<Vec<Arc<Task>>>, McpError> {
        let now = self.inner.clock.now();
        let page = self
            .inner
            .store
            .list(scope, after, limit, now)
            .await
            .map_err(store_error)?;
        Ok(page.map(|page| page.into_iter().map(|s| s.task).collect()))
    }

    /// Delivers `tasks/update` responses. Only keys currently outstanding are taken, each by
    /// exactly one update even under concurrency; other keys are ignored; a terminal task is
    /// left unchanged. The caller acknowledges with an empty result either way.
    ///
    /// # Errors
    /// * -32602 `Unknown or inaccessible taskId`;
    /// * -32602 `Invalid input response for <key>: <reason>` when a response to an outstanding
    ///   key does not fit its request ([`tasks_core::input::InputRequest::check_response`]); then
    ///   nothing of the update is applied and the task is unchanged;
    /// * -32602 `Invalid input response for <key>: the value nests N levels deep, more than the
    ///   123 allowed` (or `…: a member name is reserved: …`) when a response would not read back
    ///   once stored in the task ([`MAX_ANSWER_DEPTH`]); nothing of the update is applied;
    /// * -32603 `Task store unavailable: …` (HTTP 503) as for [`TaskRuntime::create`]:
    ///   `nothing was stored or changed`, or `whether the request took effect is unknown`
    ///   (sending the same update again is safe: only keys still outstanding are taken).
    pub async fn update(
        &self,
        scope: &Scope,
        id: &TaskId,
        responses: BTreeMap<String, Value>,
    ) -> Result<(), McpError> {
        for (key, response) in &responses {
            if let Err(unstorable) = tasks_core::json::check_value(response, MAX_ANSWER_DEPTH) {
                return Err(McpError::InvalidParams(format!(
                    "Invalid input response for {key}: {unstorable}"
                )));
            }
        }
        let committed = self
            .inner
            .commit(scope, id, Event::InputResponsesAccepted { responses }, None)
            .await?;
        self.inner.wake(id, committed.fulfilled);
        Ok(())
    }

    /// Cancels a task: commits `cancelled` first, then stops the worker, so a worker that
    /// finishes later cannot change the status. A terminal task is left unchanged.
    ///
    /// # Errors
    /// -32602 `Unknown or inaccessible taskId`; -32603 `Task store unavailable: …` (HTTP 503)
    /// as for [`TaskRuntime::update`] (cancelling again is safe).
    pub async fn cancel(&self, scope: &Scope, id: &TaskId) -> Result<(), McpError> {
        self.cancel_with(scope, id, Event::Cancelled)
            .await
            .map(drop)
    }

    /// Commits a cancelling `event` to task `id` of `scope`, then stops its local worker; the
    /// task as committed (or as found, when it had already ended).
    pub(crate) async fn cancel_with(
        &self,
        scope: &Scope,
        id: &TaskId,
        event: Event,
    ) -> Result<Arc<Task>, McpError> {
        let committed = self.inner.commit(scope, id, event, None).await?;
        if let Some((_, handle)) = self.inner.workers.remove(id) {
            handle.cancel.cancel();
        }
        Ok(committed.task)
    }

    /// A receiver of every committed status change (creation included). It carries no
    /// removals and no re-read signals: a waiter that must end follows
    /// [`TaskRuntime::changes`] or [`TaskRuntime::wait_task`] instead.
    ///
    /// Per task, events arrive in strictly increasing revision order and nothing follows a
    /// terminal state. When commits of one task race (a worker and a request), a state that was
    /// superseded before it could be published is skipped rather than sent late.
    pub fn subscribe(&self) -> broadcast::Receiver<StatusEvent> {
        self.inner.events.subscribe()
    }

    /// The stream a waiter follows: every committed state, every removal, and a re-read signal
    /// after a feed resync, after falling behind, and every
    /// [`RuntimeConfig::wait_recheck`] without either (see [`TaskWait`](crate::TaskWait)). Take it before the
    /// first read of what you wait on.
    pub fn changes(&self) -> Changes {
        Changes::new(self.inner.waits.subscribe(), self.inner.config.wait_recheck)
    }

    /// A wait for task `id` of `scope` (subscribed now): [`TaskWait::current`] reads it,
    /// [`TaskWait::next`] waits for each newer state and ends with -32602
    /// `Unknown or inaccessible taskId` once the task is gone.
    pub fn wait_task(&self, scope: &Scope, id: &TaskId) -> TaskWait {
        TaskWait::new(
            self.inner.clone(),
            self.changes(),
            scope.clone(),
            id.clone(),
        )
    }

    /// The tasks among `ids` that exist in `scope` now (unknown, expired and other-scope ids
    /// are left out), in no particular order: one store read per 256 ids, for a waiter that
    /// re-reads many tasks at once.
    ///
    /// # Errors
    /// -32603 when the store fails.
    pub async fn read_many(
        &self,
        scope: &Scope,
        ids: &[TaskId],
    ) -> Result<Vec<Arc<Task>>, McpError> {
        let mut found = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(256) {
            let now = self.inner.clock.now();
            let snapshots = self
                .inner
                .store
                .load(chunk, now)
                .await
                .map_err(store_error)?;
            found.extend(
                snapshots
                    .into_iter()
                    .filter(|snapshot| snapshot.scope == *scope)
                    .map(|snapshot| snapshot.task),
            );
        }
        Ok(found)
    }

    /// Marks `task` as followed by a subscriber (a `subscriptions/listen` stream naming it):
    /// with a store shared by several processes, a resync of the change feed then re-reads it
    /// and publishes what changed, even if this node has never published it, so a hint lost
    /// while the feed reconnected cannot keep its terminal state from the subscriber. Without
    /// a change feed it has no effect beyond a small entry kept until the task expires.
    pub fn watch(&self, task: &Task) {
        self.inner.watch(task);
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

/// The task `id` of `scope` as stored now, if any.
async fn existing(
    inner: &Inner,
    scope: &Scope,
    id: &TaskId,
) -> Result<Option<Arc<Task>>, McpError> {
    let now = inner.clock.now();
    let snapshot = inner.store.get(scope, id, now).await.map_err(store_error)?;
    Ok(snapshot.map(|s| s.task))
}

/// Stores `task` and starts its worker (see [`TaskRuntime::create`]): the created task, or, for
/// an id already stored (a concurrent replay), that task.
async fn store_and_start(
    inner: Arc<Inner>,
    tool: Arc<crate::registry::Tool>,
    task: NewTask,
    work: Arc<Work>,
    limits: CreateLimits,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> Result<Arc<Task>, McpError> {
    let id = task.task().id().clone();
    let scope = work.scope.clone();
    let created = match inner
        .store
        .create(task, work.clone(), limits, &inner.node())
        .await
    {
        Ok(created) => created,
        // A concurrent replay stored it first: answer with that task.
        Err(StoreError::Duplicate) => {
            return existing(&inner, &scope, &id)
                .await?
                .ok_or(McpError::Internal("Task store failure"));
        }
        Err(StoreError::Capacity(limit)) => {
            inner.metrics.refused(limit);
            return Err(McpError::CapacityExhausted(limit));
        }
        // A creation interrupted after it reached the store may have been committed: the
        // client hears that the outcome is unknown, and the task, if it was stored, still runs.
        Err(StoreError::Interrupted(reason)) => {
            tokio::spawn(adopt_if_stored(inner.clone(), tool, id, work, permit));
            return Err(write_error(StoreError::Interrupted(reason)));
        }
        Err(error) => return Err(write_error(error)),
    };
    Ok(start(
        inner,
        tool,
        created.snapshot,
        work,
        created.lease,
        permit,
    ))
}

/// After a creation whose outcome is unknown (its store call was interrupted after it was
/// sent): reads the task until the store answers, and starts its worker if it was stored and
/// nothing has happened to it since (revision 1, `working`), so a task the client was told
/// might exist does not stay `working` with nothing running it. Releases the worker slot
/// otherwise.
async fn adopt_if_stored(
    inner: Arc<Inner>,
    tool: Arc<crate::registry::Tool>,
    id: TaskId,
    work: Arc<Work>,
    permit: tokio::sync::OwnedSemaphorePermit,
) {
    let forever = tokio_util::sync::CancellationToken::new();
    let read = crate::inner::patiently(&forever, || async {
        inner
            .store
            .get(&work.scope, &id, inner.clock.now())
            .await
            .map_err(store_error)
    })
    .await;
    let Some(Ok(Some(snapshot))) = read else {
        return;
    };
    if snapshot.task.revision() != 1 || snapshot.task.is_terminal() {
        return;
    }
    tracing::info!(
        task_id = id.as_str(),
        "a creation whose outcome was unknown was stored: its worker starts"
    );
    let lease = crate::store::Lease {
        node: inner.node(),
        generation: 1,
        attempt: 1,
    };
    start(inner, tool, snapshot, work, lease, permit);
}

/// Starts the worker of `snapshot`, a task this node just stored under `lease`, and answers
/// the task as stored.
fn start(
    inner: Arc<Inner>,
    tool: Arc<crate::registry::Tool>,
    snapshot: crate::store::Snapshot,
    work: Arc<Work>,
    lease: crate::store::Lease,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> Arc<Task> {
    let scope = work.scope.clone();
    inner
        .metrics
        .created(tool.name(), tool.policy_label(), &snapshot.task);
    tracing::debug!(
        task_id = snapshot.task.id().as_str(),
        tool = tool.name(),
        "task created"
    );
    let handle = Arc::new(WorkerHandle::new(lease));
    inner
        .workers
        .insert(snapshot.task.id().clone(), handle.clone());
    inner.publish(&scope, &snapshot.task);
    let mut worker = Box::pin(worker::run(
        inner.clone(),
        tool,
        snapshot.task.id().clone(),
        work,
        handle,
        lease,
        permit,
    ));
    // The worker's first step runs here, before the answer: work that finishes at once (and
    // is committed at once, as the memory store does) needs no task of its own. What is left
    // runs spawned, detached from the request; its first poll there registers the runtime's
    // waker in place of the no-op one used here.
    if (&mut worker).now_or_never().is_none() {
        tokio::spawn(worker);
    }
    snapshot.task
}

/// What [`TaskRuntime::reach`] answers for `target` once the lookup answered `found`.
pub(crate) fn reached(
    target: &TaskRef,
    found: Result<Arc<Task>, McpError>,
) -> Result<Arc<Task>, McpError> {
    let Some(origin) = target.only else {
        return found;
    };
    match found {
        Ok(task) if task.origin() == origin => Ok(task),
        Ok(_) | Err(McpError::UnknownTask) => Err(McpError::missing_tasks_capability()),
        Err(error) => Err(error),
    }
}
