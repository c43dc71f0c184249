//! The store trait: compare-and-set persistence of tasks, their work descriptors, and the
//! leases that say which process runs which task.
//!
//! Every request-side call carries a [`Scope`]; a task of another scope answers exactly like a
//! missing one. Expiry is part of the contract: once `createdAt + ttlMs` has passed at `now`, a
//! task is absent on every path, even before [`Store::reap`] deletes it.
//!
//! # Leases and fencing
//!
//! A running server process is a *node* ([`NodeId`], drawn at random at start-up). It registers
//! with the store and renews a short lease ([`Store::heartbeat`]). Each non-terminal task
//! records the node that runs it, a *generation* (the fencing token) and an *attempt* number
//! (how many runs of its tool have started): [`Store::create`] hands the creating node a
//! [`Lease`] with generation 1 and attempt 1 (the creator starts the tool at once). When a
//! node's lease expires, its non-terminal tasks are *orphans*: [`Store::claim_orphans`] gives each
//! to exactly one claimer, with the generation raised by one, in one atomic step per task (never
//! read-then-write: a completion racing a claim is never overwritten). A claim charges no
//! attempt: the claimer charges one with [`Store::charge_attempt`] when the re-run actually
//! starts, so a task claimed by a node that died before it had a free worker slot has not used
//! up a run.
//!
//! Writes come with an [`Authority`]. A request (`tasks/update`, `tasks/cancel`) is checked
//! against the scope and ignores leases. A worker's write must carry the task's current lease;
//! a stale lease (another node, or an older generation) answers [`CasOutcome::Fenced`] and
//! changes nothing, so a worker that lost its task (a paused process, a partition) can never
//! overwrite what its successor wrote.
//!
//! Times are passed in (`now`, milliseconds since the Unix epoch) so the contract is testable
//! without a clock; the runtime never passes a `now` below an earlier one, nor below the
//! store's [`Store::time_floor`]. A store shared by several processes offers its own [`Store::clock`] (for
//! example the database server's time), which the runtime then uses for every `now`, so that
//! task timestamps, TTL and leases agree across nodes.
//!
//! # Change feed
//!
//! A store shared by several processes offers [`Store::changes`]: hints that a task was
//! committed by *another* process (another node's worker answered, a request on another node
//! cancelled). A hint only says "re-read this task": the state always comes from
//! [`Store::load`]. Hints may be coalesced or lost; [`Change::Resync`] says that some may have
//! been, and the runtime then re-reads every task it cares about.

pub mod inventory;
mod memory;
pub(crate) mod metered;
mod node;
pub mod task_map;

use std::sync::Arc;

use async_trait::async_trait;
use tasks_core::{CapacityLimit, NewTask, Task, TaskId, TaskStatus, TaskUpdate, Timestamp};

pub use memory::MemoryStore;
pub use node::{Lease, NodeId};

use crate::clock::Clock;
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

/// A task as [`Store::create`] stored it, with the creating node's lease.
#[derive(Debug, Clone)]
pub struct Created {
    /// The stored task (revision 1, `working`).
    pub snapshot: Snapshot,
    /// The creator's lease: generation 1, attempt 1.
    pub lease: Lease,
}

/// An orphaned task taken over by [`Store::claim_orphans`].
#[derive(Debug, Clone)]
pub struct Claimed {
    /// The task as stored at the claim (still non-terminal; its `answered` inputs are the ones
    /// to replay).
    pub snapshot: Snapshot,
    /// What the task runs.
    pub work: Arc<Work>,
    /// The claimer's lease: the generation one above the previous holder's; the attempt as
    /// stored (the runs started so far; [`Store::charge_attempt`] raises it when a re-run
    /// starts).
    pub lease: Lease,
}

/// Who writes a task in [`Store::transition`].
#[derive(Debug, Clone, Copy)]
pub enum Authority<'a> {
    /// A client request (`tasks/update`, `tasks/cancel`): the task must belong to the scope;
    /// leases are not checked.
    Request(&'a Scope),
    /// The task's worker: the task's current owner and generation must be the lease's, else
    /// the outcome is [`CasOutcome::Fenced`].
    Worker(&'a Lease),
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
    /// A worker write whose lease is no longer the task's (another node claimed it, or a newer
    /// generation of this node did). Nothing changed; the worker must stop.
    Fenced,
}

/// What [`Store::heartbeat`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// The lease was renewed.
    Alive,
    /// The lease had expired (or the node retired): its tasks are orphans and may already be
    /// claimed. The node must stop its workers and register again under a new id.
    Lost,
}

/// A hint from [`Store::changes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Task `id` was committed at `revision` by another process. Re-read it with
    /// [`Store::load`]; the row may be newer still.
    Task {
        /// The task.
        id: TaskId,
        /// The revision that process committed.
        revision: u64,
    },
    /// Hints may have been lost (the feed reconnected, or a receiver fell behind): every task
    /// of interest must be re-read. A feed sends it after (re)establishing itself, so anything
    /// committed before is read and anything after is hinted.
    Resync,
}

/// Capacity bounds, and the owner's lease, checked atomically by [`Store::create`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateLimits {
    /// Tasks stored at once.
    pub max_tasks: usize,
    /// Non-terminal tasks per scope.
    pub max_active_per_scope: usize,
    /// Whether the owner must hold a lease ([`Store::register_node`]) live at the task's
    /// creation time (`createdAt`), checked when the task is stored (the durable stores in the
    /// insert's transaction). An owner whose lease runs out right after that loses the task to
    /// a claim like any other task it runs. A runtime
    /// that runs leases ([`crate::TaskRuntime::recover`], [`crate::TaskRuntime::spawn_liveness`])
    /// sets it: a node whose lease ran out (a stalled store, a paused process) must not store
    /// tasks under it, since other nodes take over such tasks at once and fail or re-run them.
    /// Without leases (one process, nothing registered) it is `false`.
    pub lease_required: bool,
}

/// Why a store call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
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
    /// The store could not be reached (no connection could be had): nothing was read or
    /// written, and the same call may succeed shortly. A client is answered -32603 `Task store
    /// unavailable: nothing was stored or changed` (HTTP 503). The text is for logs only.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The call did not finish: it ran out of its deadline
    /// ([`Limits::store_deadline`](crate::Limits::store_deadline)), or its connection broke
    /// while it ran. A read read nothing; a write may or may not have taken effect, so a
    /// request that wrote is answered -32603 `Task store unavailable: whether the request took
    /// effect is unknown` (HTTP 503). The text is for logs only.
    #[error("store call interrupted: {0}")]
    Interrupted(String),
    /// A create with [`CreateLimits::lease_required`] named an owner that holds no lease live
    /// at the task's creation time: its lease ran out (or it never registered), and other
    /// nodes may be taking over its tasks. Nothing was stored. A client is answered -32603
    /// `Task store unavailable: nothing was stored or changed` (HTTP 503); the same request
    /// succeeds once the node has registered again.
    #[error("the owner holds no live lease")]
    LeaseLost,
}

impl StoreError {
    /// Whether the store is briefly unavailable ([`StoreError::Unavailable`],
    /// [`StoreError::Interrupted`]), or the node briefly without a lease
    /// ([`StoreError::LeaseLost`]), rather than failing or answering.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            StoreError::Unavailable(_) | StoreError::Interrupted(_) | StoreError::LeaseLost
        )
    }
}

/// How many stored tasks are in each status, counting only tasks unexpired at the time asked
/// ([`Store::status_counts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusCounts {
    /// `working` tasks.
    pub working: u64,
    /// `input_required` tasks.
    pub input_required: u64,
    /// `completed` tasks.
    pub completed: u64,
    /// `failed` tasks.
    pub failed: u64,
    /// `cancelled` tasks.
    pub cancelled: u64,
}

impl StatusCounts {
    /// Counts `count` more tasks in `status`.
    pub fn add(&mut self, status: TaskStatus, count: u64) {
        *self.slot(status) += count;
    }

    /// The count of `status`.
    pub fn get(&self, status: TaskStatus) -> u64 {
        let mut copy = *self;
        *copy.slot(status)
    }

    fn slot(&mut self, status: TaskStatus) -> &mut u64 {
        match status {
            TaskStatus::Working => &mut self.working,
            TaskStatus::InputRequired => &mut self.input_required,
            TaskStatus::Completed => &mut self.completed,
            TaskStatus::Failed => &mut self.failed,
            TaskStatus::Cancelled => &mut self.cancelled,
        }
    }
}

/// One page of [`Store::list`] from a scope's unexpired tasks in any order: those after
/// `after`, in ascending id order, at most `limit` (for stores that scan memory).
pub fn list_page(
    tasks: impl Iterator<Item = Snapshot>,
    after: Option<&TaskId>,
    limit: usize,
) -> Vec<Snapshot> {
    let mut page: Vec<Snapshot> = tasks
        .filter(|s| after.is_none_or(|after| s.task.id() > after))
        .collect();
    page.sort_by(|a, b| a.task.id().cmp(b.task.id()));
    page.truncate(limit);
    page
}

/// `value` (a task, a work descriptor) as the JSON text a durable store writes, checked to read
/// back before it is written ([`tasks_core::json::check_text`]: JSON within the parser's
/// nesting limit, no member named after one of serde_json's markers), so a store never commits
/// what it could not read again. The runtime refuses such input before it reaches a store
/// (`TaskRuntime::create`, `TaskRuntime::update`, the worker's result checks); this is the
/// last guard, for a value a host built another way.
///
/// # Errors
/// [`StoreError::Backend`] `"<kind>: the stored text would not read back: <reason>"` (or
/// `"<kind>: cannot encode JSON: <reason>"`); nothing is written.
pub fn encode_checked(kind: &str, value: &impl serde::Serialize) -> Result<String, StoreError> {
    let text = serde_json::to_string(value)
        .map_err(|e| StoreError::Backend(format!("{kind}: cannot encode JSON: {e}")))?;
    tasks_core::json::check_text(&text).map_err(|e| {
        StoreError::Backend(format!("{kind}: the stored text would not read back: {e}"))
    })?;
    Ok(text)
}

/// Persistence of tasks, modelled on compare-and-set, with node leases and per-task fencing.
///
/// # Durability
/// A durable store returns from a write only once the write survives a crash of the process
/// (and, where the store says so, of the machine): the runtime answers the client after the
/// store call returns, so an acknowledged creation, update or cancel, and every terminal
/// state a client has seen, is never lost. Reads never return a state the store could still
/// lose.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Stores `task` (a [`NewTask`]: revision 1, `working`) and `work` atomically, in
    /// `work.scope`, owned by `owner` with generation 1 and attempt 1. `work` is shared with
    /// the task's worker (a store that keeps it in memory keeps this `Arc`; nothing copies the
    /// arguments on their way to the store).
    ///
    /// # Errors
    /// In this order: [`StoreError::LeaseLost`] when `limits` requires the owner's lease and
    /// `owner` holds none live at the task's creation time; [`StoreError::Capacity`] when a
    /// bound of `limits` is reached; [`StoreError::Duplicate`] for a taken id. Nothing is
    /// stored in any of these cases.
    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError>;

    /// The task `id` of `scope`, or `None` when unknown, expired at `now` or of another scope.
    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError>;

    /// Up to `limit` tasks of `scope` unexpired at `now`, in ascending task-id order, starting
    /// after task id `after` (exclusive) when given: one page of a 2025-11-25 `tasks/list`.
    /// `None` (the default) when the store cannot list.
    async fn list(
        &self,
        scope: &Scope,
        after: Option<&TaskId>,
        limit: usize,
        now: Timestamp,
    ) -> Result<Option<Vec<Snapshot>>, StoreError> {
        let _ = (scope, after, limit, now);
        Ok(None)
    }

    /// The work descriptor of task `id` of `scope` (for tooling). A store may drop the
    /// descriptor once the task is terminal (nothing runs it again) and answer `None` then.
    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError>;

    /// Commits `update` (a change only the reducer can make, [`tasks_core::apply`]) to task
    /// `update.task().id()` if `who` may write it (see [`Authority`]), its stored revision is
    /// `update.expected_revision()` and it has not expired at `now`. The committed task is
    /// exactly `update.task()`, whose revision is the expected one plus one. A fenced write is
    /// reported as such before a revision conflict.
    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError>;

    /// The tasks among `ids` that exist and are unexpired at `now`, whatever their scope, in
    /// no particular order (unknown ids are left out). For the runtime's change consumer, never
    /// for a request: it checks no scope.
    async fn load(&self, ids: &[TaskId], now: Timestamp) -> Result<Vec<Snapshot>, StoreError>;

    /// Deletes every task expired at `now`; returns their ids.
    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError>;

    /// Number of stored tasks (expired but not yet reaped ones included).
    async fn task_count(&self) -> Result<usize, StoreError>;

    /// Registers `node` as alive until `now + lease_ms`.
    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError>;

    /// Extends `node`'s lease to `now + lease_ms` if it is still alive at `now`; a lease that
    /// has expired is never revived ([`Liveness::Lost`]).
    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError>;

    /// Ends `node`'s lease now (a graceful shutdown): its non-terminal tasks become claimable
    /// at once.
    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError>;

    /// Takes over up to `max` non-terminal, unexpired tasks whose owner is not a live node at
    /// `now`, for `node`: each is claimed by exactly one caller, with the generation raised by
    /// one (the attempt is left as it is), atomically per task. Nodes whose lease expired are
    /// removed first, so their later heartbeats answer [`Liveness::Lost`]. A node never claims the tasks it
    /// owns itself, even once its own lease has expired: it learns that from its next
    /// heartbeat, stops its workers, and claims them under its new id.
    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError>;

    /// Charges one run of task `id` to `lease`'s holder, right before its tool starts again:
    /// raises the stored attempt by one (it stops growing at the store's maximum, at least
    /// 2³¹−1) and answers the lease with the new attempt, if `lease` is still the task's (its
    /// owner and generation) and the task is non-terminal and unexpired at `now`. Otherwise
    /// (another node claimed it since, or it finished, was cancelled, expired or is gone) it
    /// answers `None` and changes nothing. A claim ([`Store::claim_orphans`]) never charges an
    /// attempt; this call is the only thing that does after [`Store::create`]. It is
    /// idempotent: it sets the attempt to `lease.attempt + 1` where the stored attempt is
    /// `lease.attempt` or already that, so a retry after an answer that was lost (the charge
    /// committed, the connection died) charges nothing more.
    async fn charge_attempt(
        &self,
        id: &TaskId,
        lease: &Lease,
        now: Timestamp,
    ) -> Result<Option<Lease>, StoreError>;

    /// The tasks `node` holds: non-terminal, unexpired at `now`, their lease `node`'s, in
    /// task id order after `after` (from the start when `None`), at most `max`, each with its
    /// work and lease as [`Store::claim_orphans`] answers them. Changes nothing.
    ///
    /// The runtime asks this after a claim whose outcome is unknown
    /// ([`StoreError::Interrupted`]: the claim may have committed, and its answer was lost), to
    /// find the tasks that claim gave it and start those nothing runs. `Ok(None)` (the
    /// default): the store cannot tell; the runtime then fences itself instead (stops its local
    /// workers and registers under a new node id), so whatever the claim gave the old id is
    /// claimed again once that id's lease runs out.
    async fn held(
        &self,
        node: &NodeId,
        now: Timestamp,
        after: Option<&TaskId>,
        max: usize,
    ) -> Result<Option<Vec<Claimed>>, StoreError> {
        let _ = (node, now, after, max);
        Ok(None)
    }

    /// How many tasks unexpired at `now` are in each status, across every scope and node
    /// (for the `mcp_tasks_stored{status}` gauge; asked every 15 s by each node). `None` when
    /// the store does not count (the default).
    async fn status_counts(&self, now: Timestamp) -> Result<Option<StatusCounts>, StoreError> {
        let _ = now;
        Ok(None)
    }

    /// One page of the operator's inventory ([`inventory`]): tasks unexpired at `now`, across
    /// every scope, matching `query`, each judged stuck or not by `rules`. Never for an MCP
    /// request (it checks no scope). `None` (the default) when the store cannot list them.
    async fn inventory(
        &self,
        query: &inventory::InventoryQuery,
        rules: inventory::StuckRules,
        now: Timestamp,
    ) -> Result<Option<inventory::InventoryPage>, StoreError> {
        let _ = (query, rules, now);
        Ok(None)
    }

    /// Counts of the tasks unexpired at `now` across every scope, by status, by tool and stuck
    /// by reason (judged by `rules`). `None` (the default) when the store cannot count them.
    async fn inventory_counts(
        &self,
        rules: inventory::StuckRules,
        now: Timestamp,
    ) -> Result<Option<inventory::InventoryCounts>, StoreError> {
        let _ = (rules, now);
        Ok(None)
    }

    /// Every registered node (live or with a lease run out but not yet removed by a claim
    /// pass), in node id order, with the tasks each holds. `None` (the default) when the store
    /// cannot list them.
    async fn nodes(&self, now: Timestamp) -> Result<Option<Vec<inventory::NodeRow>>, StoreError> {
        let _ = now;
        Ok(None)
    }

    /// How many stored tasks this store instance has quarantined since it was opened: rows it
    /// could not read back (invalid JSON, the wrong shape, nesting past the parser's limit,
    /// written by a bug, another version or by hand), each replaced by the `failed` task of
    /// [`tasks_core::Task::unreadable`] with the original kept where an operator can find it
    /// (docs/durability.md, "Unreadable rows"). For the `mcp_tasks_quarantined` gauge. 0 (the
    /// default) for a store that keeps nothing it could fail to read.
    fn quarantined(&self) -> u64 {
        0
    }

    /// A receiver of hints about tasks committed by other processes sharing this store, or
    /// `None` (the default) for a store that one process uses alone. Each call subscribes
    /// anew.
    fn changes(&self) -> Option<tokio::sync::broadcast::Receiver<Change>> {
        None
    }

    /// The clock every process sharing this store must use for `now`, or `None` (the default)
    /// to let the runtime use the local wall clock.
    fn clock(&self) -> Option<Arc<dyn Clock>> {
        None
    }

    /// What kind of store this is, for logs and diagnostics: `memory`, `sqlite`, `postgresql`,
    /// or (the default) `custom`.
    fn kind(&self) -> &'static str {
        "custom"
    }

    /// The highest time (ms since the Unix epoch) this store had acted on when it was opened:
    /// a durable store keeps the highest `now` (and creation time) of the writes it committed.
    /// A runtime over a store without a [`Store::clock`] never reads its clock below it
    /// ([`crate::clock::Monotonic`]), so a host clock set back across a restart neither
    /// brings back a task that had expired nor shortens a TTL or a lease. The Unix epoch (the
    /// default) for a store that remembers nothing.
    fn time_floor(&self) -> Timestamp {
        Timestamp::from_unix_millis(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stores' checked encoder writes what reads back, and refuses what would not: work
    /// nested past the parser's limit, or holding a serde_json marker name.
    #[test]
    fn the_checked_encoder_refuses_what_would_not_read_back() {
        let text = r#"{"tool":"t","arguments":{"x":[1]},"scope":"s"}"#;
        let work: crate::Work = serde_json::from_str(text).unwrap();
        assert_eq!(encode_checked("test", &work).unwrap(), text);
        let mut deep = serde_json::json!(1);
        for _ in 0..crate::MAX_WORK_DEPTH {
            deep = serde_json::json!([deep]);
        }
        let mut too_deep = work.clone();
        too_deep.arguments.insert("x".into(), deep);
        let error = encode_checked("test", &too_deep).unwrap_err().to_string();
        assert!(
            error.contains("the stored text would not read back"),
            "{error}"
        );
        assert!(error.contains("recursion limit"), "{error}");
        let mut marker = work;
        marker.arguments.insert(
            "x".into(),
            serde_json::json!({"$serde_json::private::RawValue": "1"}),
        );
        let error = encode_checked("test", &marker).unwrap_err().to_string();
        assert!(error.contains("A member name is reserved"), "{error}");
    }
}
