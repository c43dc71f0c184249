//! The in-memory store: the embedded default.
//!
//! A sharded concurrent map ([`dashmap`]) keyed by task id, so concurrent `tasks/get` calls on
//! different tasks take different shard locks and a read clones one `Arc`. Counters for the
//! capacity bounds are kept beside the map; per-scope active counts live in a second sharded map.
//!
//! Memory: a task's work descriptor (tool, arguments, the creating request's capabilities and
//! `inputResponses`) and its lease are dropped once the task is terminal, since nothing runs a
//! finished task again; a stored completed task then costs its [`Task`] (with its result as
//! text), its id (shared by the key and the task) and a 48-byte map slot.

mod inventory;
mod tools;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use dashmap::mapref::entry::Entry as MapEntry;
use dashmap::DashMap;
use tasks_core::{CapacityLimit, NewTask, Task, TaskId, TaskUpdate, Timestamp};

use self::tools::{ToolIndex, Tools};
use super::inventory::{InventoryCounts, InventoryPage, InventoryQuery, NodeRow, StuckRules};
use super::task_map::{task_map, TaskMap};
use super::{
    Authority, CasOutcome, Claimed, CreateLimits, Created, Lease, Liveness, NodeId, Snapshot,
    StatusCounts, Store, StoreError,
};
use crate::expiry::NextExpiry;
use crate::scope::Scope;
use crate::work::Work;

struct Entry {
    task: Arc<Task>,
    scope: Scope,
    /// `None` once the task is terminal.
    running: Option<Box<Running>>,
    /// The tool, interned once the task is terminal (the running task's is in its work).
    tool: ToolIndex,
}

/// What only a task that can still run needs.
struct Running {
    work: Arc<Work>,
    /// The node running the task and its fencing token.
    lease: Lease,
}

impl Entry {
    /// Whether a worker holding `lease` may no longer write this task. A terminal task keeps
    /// no lease and fences nobody: it absorbs every event, so the write changes nothing.
    fn fences(&self, lease: &Lease) -> bool {
        self.running.as_ref().is_some_and(|running| {
            running.lease.node != lease.node || running.lease.generation != lease.generation
        })
    }
}

/// An in-memory [`Store`]. Nothing survives the process.
///
/// Leases are modelled faithfully (nodes, owners, generations, claims), so recovery and
/// fencing can be tested without a database: several runtimes sharing one `MemoryStore` behave
/// like several nodes sharing a database.
pub struct MemoryStore {
    tasks: TaskMap<Entry>,
    /// When the next stored task expires: [`Store::reap`] scans only once one may have.
    next_expiry: NextExpiry,
    total: AtomicUsize,
    active: DashMap<Scope, usize>,
    /// Live nodes and when their lease expires. Claims hold this lock throughout, which
    /// serializes them against each other and against heartbeats.
    nodes: Mutex<HashMap<NodeId, NodeLease>>,
    /// The tool names of terminal tasks.
    tools: Tools,
}

/// A registered node's lease.
#[derive(Debug, Clone, Copy)]
struct NodeLease {
    expires: Timestamp,
    started: Timestamp,
    renewed: Timestamp,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore")
            .field("tasks", &self.tasks.len())
            .finish_non_exhaustive()
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore {
            tasks: task_map(),
            next_expiry: NextExpiry::default(),
            total: AtomicUsize::new(0),
            active: DashMap::new(),
            nodes: Mutex::default(),
            tools: Tools::default(),
        }
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn reserve_total(&self, max: usize) -> bool {
        self.total
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok()
    }

    fn reserve_active(&self, scope: &Scope, max: usize) -> bool {
        let mut count = self.active.entry(scope.clone()).or_insert(0);
        if *count >= max {
            return false;
        }
        *count += 1;
        true
    }

    fn release_active(&self, scope: &Scope) {
        if let MapEntry::Occupied(mut entry) = self.active.entry(scope.clone()) {
            *entry.get_mut() = entry.get().saturating_sub(1);
            if *entry.get() == 0 {
                entry.remove();
            }
        }
    }

    fn snapshot(entry: &Entry) -> Snapshot {
        Snapshot {
            task: entry.task.clone(),
            scope: entry.scope.clone(),
        }
    }

    fn leases(&self) -> MutexGuard<'_, HashMap<NodeId, NodeLease>> {
        crate::lock::lock(&self.nodes)
    }
}

#[async_trait]
impl Store for MemoryStore {
    fn kind(&self) -> &'static str {
        "memory"
    }

    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError> {
        let task = task.into_task();
        if limits.lease_required
            && self
                .leases()
                .get(owner)
                .is_none_or(|lease| lease.expires <= task.created_at())
        {
            return Err(StoreError::LeaseLost);
        }
        if !self.reserve_total(limits.max_tasks) {
            return Err(StoreError::Capacity(CapacityLimit::MaxTasks));
        }
        if !self.reserve_active(&work.scope, limits.max_active_per_scope) {
            self.total.fetch_sub(1, Ordering::AcqRel);
            return Err(StoreError::Capacity(CapacityLimit::MaxActiveTasksPerScope));
        }
        let scope = work.scope.clone();
        match self.tasks.entry(task.id().clone()) {
            MapEntry::Occupied(_) => {
                self.total.fetch_sub(1, Ordering::AcqRel);
                self.release_active(&scope);
                Err(StoreError::Duplicate)
            }
            MapEntry::Vacant(slot) => {
                let lease = Lease {
                    node: *owner,
                    generation: 1,
                    attempt: 1,
                };
                let entry = Entry {
                    task: Arc::new(task),
                    scope,
                    running: Some(Box::new(Running { work, lease })),
                    tool: ToolIndex::UNKNOWN,
                };
                let snapshot = Self::snapshot(&entry);
                slot.insert(entry);
                self.next_expiry.note(snapshot.task.expires_at());
                Ok(Created { snapshot, lease })
            }
        }
    }

    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError> {
        Ok(self.tasks.get(id).and_then(|entry| {
            (entry.scope == *scope && !entry.task.is_expired(now)).then(|| Self::snapshot(&entry))
        }))
    }

    async fn list(
        &self,
        scope: &Scope,
        after: Option<&TaskId>,
        limit: usize,
        now: Timestamp,
    ) -> Result<Option<Vec<Snapshot>>, StoreError> {
        // A scan: the memory store keeps no index by scope.
        let tasks = self
            .tasks
            .iter()
            .filter(|entry| entry.scope == *scope && !entry.task.is_expired(now))
            .map(|entry| Self::snapshot(&entry));
        Ok(Some(super::list_page(tasks, after, limit)))
    }

    async fn load(&self, ids: &[TaskId], now: Timestamp) -> Result<Vec<Snapshot>, StoreError> {
        Ok(ids
            .iter()
            .filter_map(|id| self.tasks.get(id))
            .filter(|entry| !entry.task.is_expired(now))
            .map(|entry| Self::snapshot(&entry))
            .collect())
    }

    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        Ok(self.tasks.get(id).and_then(|entry| {
            (entry.scope == *scope)
                .then(|| entry.running.as_ref().map(|running| running.work.clone()))
                .flatten()
        }))
    }

    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        let expected_revision = update.expected_revision();
        let next = update.into_task();
        let Some(mut entry) = self.tasks.get_mut(next.id()) else {
            return Ok(CasOutcome::NotFound);
        };
        if entry.task.is_expired(now) {
            return Ok(CasOutcome::NotFound);
        }
        match who {
            Authority::Request(scope) if entry.scope != *scope => return Ok(CasOutcome::NotFound),
            Authority::Worker(lease) if entry.fences(lease) => return Ok(CasOutcome::Fenced),
            _ => {}
        }
        if entry.task.revision() != expected_revision {
            return Ok(CasOutcome::Conflict(Self::snapshot(&entry)));
        }
        let became_terminal = !entry.task.is_terminal() && next.is_terminal();
        entry.task = Arc::new(next);
        if became_terminal {
            if let Some(running) = entry.running.take() {
                entry.tool = self.tools.intern(&running.work.tool);
            }
        }
        let snapshot = Self::snapshot(&entry);
        drop(entry);
        if became_terminal {
            self.release_active(&snapshot.scope);
        }
        Ok(CasOutcome::Committed(snapshot))
    }

    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
        if !self.next_expiry.sweep_due(now) {
            return Ok(Vec::new());
        }
        let mut expired = Vec::new();
        for entry in &self.tasks {
            if entry.task.is_expired(now) {
                expired.push(entry.key().clone());
            } else {
                self.next_expiry.note(entry.task.expires_at());
            }
        }
        let mut reaped = Vec::with_capacity(expired.len());
        for id in expired {
            if let Some((id, entry)) = self
                .tasks
                .remove_if(&id, |_, entry| entry.task.is_expired(now))
            {
                self.total.fetch_sub(1, Ordering::AcqRel);
                if !entry.task.is_terminal() {
                    self.release_active(&entry.scope);
                }
                reaped.push(id);
            }
        }
        Ok(reaped)
    }

    async fn task_count(&self) -> Result<usize, StoreError> {
        Ok(self.total.load(Ordering::Acquire))
    }

    async fn status_counts(&self, now: Timestamp) -> Result<Option<StatusCounts>, StoreError> {
        let mut counts = StatusCounts::default();
        for entry in &self.tasks {
            if !entry.task.is_expired(now) {
                counts.add(entry.task.status(), 1);
            }
        }
        Ok(Some(counts))
    }

    async fn inventory(
        &self,
        query: &InventoryQuery,
        rules: StuckRules,
        now: Timestamp,
    ) -> Result<Option<InventoryPage>, StoreError> {
        Ok(Some(self.inventory_page(query, rules, now)))
    }

    async fn inventory_counts(
        &self,
        rules: StuckRules,
        now: Timestamp,
    ) -> Result<Option<InventoryCounts>, StoreError> {
        Ok(Some(self.counts(rules, now)))
    }

    async fn nodes(&self, now: Timestamp) -> Result<Option<Vec<NodeRow>>, StoreError> {
        Ok(Some(self.node_rows(now)))
    }

    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        let lease = NodeLease {
            expires: now.plus_millis(lease_ms),
            started: now,
            renewed: now,
        };
        self.leases().insert(*node, lease);
        Ok(())
    }

    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError> {
        let mut nodes = self.leases();
        match nodes.get_mut(node) {
            Some(lease) if lease.expires > now => {
                lease.expires = now.plus_millis(lease_ms);
                lease.renewed = now;
                Ok(Liveness::Alive)
            }
            Some(_) => {
                nodes.remove(node);
                Ok(Liveness::Lost)
            }
            None => Ok(Liveness::Lost),
        }
    }

    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError> {
        self.leases().remove(node);
        Ok(())
    }

    async fn charge_attempt(
        &self,
        id: &TaskId,
        lease: &Lease,
        now: Timestamp,
    ) -> Result<Option<Lease>, StoreError> {
        let Some(mut entry) = self.tasks.get_mut(id) else {
            return Ok(None);
        };
        if entry.task.is_terminal() || entry.task.is_expired(now) || entry.fences(lease) {
            return Ok(None);
        }
        let charged = lease.attempt.saturating_add(1);
        Ok(entry.running.as_mut().and_then(|running| {
            // Idempotent: a retry of a charge already stored answers the same lease.
            (running.lease.attempt == lease.attempt || running.lease.attempt == charged).then(
                || {
                    running.lease.attempt = charged;
                    running.lease
                },
            )
        }))
    }

    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        let mut nodes = self.leases();
        nodes.retain(|_, lease| lease.expires > now);
        let orphaned = |entry: &Entry| {
            entry.running.as_ref().is_some_and(|running| {
                !entry.task.is_terminal()
                    && !entry.task.is_expired(now)
                    && running.lease.node != *node
                    && !nodes.contains_key(&running.lease.node)
            })
        };
        let candidates: Vec<TaskId> = self
            .tasks
            .iter()
            .filter(|entry| orphaned(entry))
            .map(|entry| entry.key().clone())
            .take(max)
            .collect();
        let mut claimed = Vec::with_capacity(candidates.len());
        for id in candidates {
            // Re-checked under the entry's lock: the task may have finished since the scan.
            let Some(mut entry) = self.tasks.get_mut(&id) else {
                continue;
            };
            if !orphaned(&entry) {
                continue;
            }
            let Some(running) = entry.running.as_mut() else {
                continue;
            };
            let lease = Lease {
                node: *node,
                generation: running.lease.generation + 1,
                attempt: running.lease.attempt,
            };
            running.lease = lease;
            let work = running.work.clone();
            claimed.push(Claimed {
                snapshot: Self::snapshot(&entry),
                work,
                lease,
            });
        }
        Ok(claimed)
    }

    async fn held(
        &self,
        node: &NodeId,
        now: Timestamp,
        after: Option<&TaskId>,
        max: usize,
    ) -> Result<Option<Vec<Claimed>>, StoreError> {
        let mut held: Vec<Claimed> = self
            .tasks
            .iter()
            .filter(|entry| {
                !entry.task.is_terminal()
                    && !entry.task.is_expired(now)
                    && after.is_none_or(|after| entry.key() > after)
            })
            .filter_map(|entry| {
                let running = entry.running.as_ref()?;
                (running.lease.node == *node).then(|| Claimed {
                    snapshot: Self::snapshot(&entry),
                    work: running.work.clone(),
                    lease: running.lease,
                })
            })
            .collect();
        held.sort_by(|a, b| a.snapshot.task.id().cmp(b.snapshot.task.id()));
        held.truncate(max);
        Ok(Some(held))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};
    use tasks_core::{apply, Event, JsonObject, TaskId};

    use super::*;

    const LIMITS: CreateLimits = CreateLimits {
        max_tasks: 10,
        max_active_per_scope: 10,
        lease_required: false,
    };

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    #[tokio::test]
    async fn a_terminal_task_keeps_its_scope_but_drops_its_work() {
        let store = MemoryStore::new();
        let scope = Scope::new("alice");
        let now = Timestamp::from_unix_millis(1_000);
        let id = TaskId::parse("task-a").expect("id");
        let work = Work {
            tool: "echo".into(),
            arguments: object(json!({"text": "hi"})),
            input_responses: None,
            client_capabilities: object(json!({"extensions": {}})),
            scope: scope.clone(),
            trace_parent: None,
            sealed_principal: None,
        };
        let created = store
            .create(
                NewTask::new(id.clone(), now, None, None),
                work.clone().into(),
                LIMITS,
                &NodeId::from_bytes([1; 16]),
            )
            .await
            .expect("create")
            .snapshot;
        let stored = store.work(&scope, &id).await.expect("work");
        assert_eq!(
            stored.as_deref(),
            Some(&work),
            "a running task keeps its work"
        );

        let result = object(json!({"content": [], "isError": false}));
        let done = apply(
            &created.task,
            Event::Completed {
                result: result.into(),
            },
            now,
        )
        .expect("completes")
        .into_update()
        .expect("a change");
        let outcome = store
            .transition(Authority::Request(&scope), done, now)
            .await
            .expect("cas");
        assert!(matches!(outcome, CasOutcome::Committed(_)));

        assert!(store.work(&scope, &id).await.expect("work").is_none());
        let read = store.get(&scope, &id, now).await.expect("get");
        assert!(read.is_some_and(|s| s.task.is_terminal() && s.scope == scope));
        let other = store.get(&Scope::new("bob"), &id, now).await.expect("get");
        assert!(other.is_none(), "the scope still guards a terminal task");
    }
}
