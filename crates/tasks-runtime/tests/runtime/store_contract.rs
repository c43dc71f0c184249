//! The store contract suite (the `tasks-store-contract` crate) against [`MemoryStore`], and
//! against deliberately flawed stores to show the suite catches each flaw.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tasks_core::{NewTask, TaskId, TaskUpdate, Timestamp};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{
    Authority, CasOutcome, Claimed, Created, Lease, Liveness, MemoryStore, NodeId, Snapshot, Store,
    StoreError,
};
use tasks_runtime::{Scope, Work};
use tasks_store_contract as contract;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_passes_the_whole_contract() {
    contract::run_all(|| async { MemoryStore::new() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_on_a_memory_store_end() {
    contract::waits::run_all(|| async { MemoryStore::new() }).await;
}

#[tokio::test]
async fn memory_store_passes_the_inventory_contract() {
    contract::inventory::run_all(|| async { MemoryStore::new() }).await;
}

#[tokio::test]
async fn memory_store_passes_the_contract_on_a_current_thread_runtime() {
    contract::run_all(|| async { MemoryStore::new() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_respects_max_tasks_under_repeated_concurrent_creates() {
    for _ in 0..50 {
        contract::concurrent_creates_respect_max_tasks(Arc::new(MemoryStore::new())).await;
    }
}

// ---- the suite catches broken stores -----------------------------------------------------------

#[derive(Clone, Copy)]
enum Flaw {
    /// Reads and writes ignore expiry.
    NoExpiry,
    /// A stale revision answers NotFound instead of Conflict.
    ConflictAsNotFound,
    /// max_tasks is checked, then the insert happens later (check-then-act).
    RacyCapacity,
    /// A claim charges an attempt (as this store did before attempts were charged at the
    /// start of a run).
    ChargeAtClaim,
}

struct Flawed {
    inner: MemoryStore,
    flaw: Flaw,
}

fn flawed(flaw: Flaw) -> impl Fn() -> std::future::Ready<Flawed> {
    move || {
        std::future::ready(Flawed {
            inner: MemoryStore::new(),
            flaw,
        })
    }
}

#[async_trait]
impl Store for Flawed {
    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError> {
        if let Flaw::RacyCapacity = self.flaw {
            if self.inner.task_count().await? >= limits.max_tasks {
                return Err(StoreError::Capacity(tasks_core::CapacityLimit::MaxTasks));
            }
            // Hold the window between check and insert open for a while: with a bare
            // `yield_now` the 200 concurrent creates sometimes ran one after another (about one
            // run in 20 under cargo-nextest, one in 60 under cargo test), the flaw went unseen
            // and this test failed. 10 ms is far longer than spawning all 200 creates takes.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            let unchecked = CreateLimits {
                max_tasks: usize::MAX,
                ..limits
            };
            return self.inner.create(task, work, unchecked, owner).await;
        }
        self.inner.create(task, work, limits, owner).await
    }

    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError> {
        let now = match self.flaw {
            Flaw::NoExpiry => Timestamp::from_unix_millis(0),
            _ => now,
        };
        self.inner.get(scope, id, now).await
    }

    async fn load(
        &self,
        ids: &[tasks_core::TaskId],
        now: Timestamp,
    ) -> Result<Vec<Snapshot>, StoreError> {
        self.inner.load(ids, now).await
    }
    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        self.inner.work(scope, id).await
    }

    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        let now = match self.flaw {
            Flaw::NoExpiry => Timestamp::from_unix_millis(0),
            _ => now,
        };
        match self.inner.transition(who, update, now).await? {
            CasOutcome::Conflict(_) if matches!(self.flaw, Flaw::ConflictAsNotFound) => {
                Ok(CasOutcome::NotFound)
            }
            outcome => Ok(outcome),
        }
    }

    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
        self.inner.reap(now).await
    }

    async fn task_count(&self) -> Result<usize, StoreError> {
        self.inner.task_count().await
    }

    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        self.inner.register_node(node, now, lease_ms).await
    }

    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError> {
        self.inner.heartbeat(node, now, lease_ms).await
    }

    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError> {
        self.inner.retire_node(node).await
    }

    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        let mut claimed = self.inner.claim_orphans(node, now, max).await?;
        if let Flaw::ChargeAtClaim = self.flaw {
            for task in &mut claimed {
                if let Some(lease) = self
                    .inner
                    .charge_attempt(task.snapshot.task.id(), &task.lease, now)
                    .await?
                {
                    task.lease = lease;
                }
            }
        }
        Ok(claimed)
    }

    async fn charge_attempt(
        &self,
        id: &TaskId,
        lease: &Lease,
        now: Timestamp,
    ) -> Result<Option<Lease>, StoreError> {
        self.inner.charge_attempt(id, lease, now).await
    }

    async fn held(
        &self,
        node: &NodeId,
        now: Timestamp,
        after: Option<&TaskId>,
        max: usize,
    ) -> Result<Option<Vec<Claimed>>, StoreError> {
        self.inner.held(node, now, after, max).await
    }
}

#[tokio::test]
#[should_panic(expected = "charges no attempt")]
async fn the_suite_catches_a_store_that_charges_attempts_at_claims() {
    contract::run_all(flawed(Flaw::ChargeAtClaim)).await;
}

#[tokio::test]
#[should_panic(expected = "get at createdAt + ttlMs must be None")]
async fn the_suite_catches_a_store_that_ignores_expiry() {
    contract::run_all(flawed(Flaw::NoExpiry)).await;
}

#[tokio::test]
#[should_panic(expected = "stale revision must conflict")]
async fn the_suite_catches_a_store_that_loses_conflicts() {
    contract::run_all(flawed(Flaw::ConflictAsNotFound)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[should_panic(expected = "exactly max_tasks creates succeed")]
async fn the_suite_catches_a_store_with_check_then_act_capacity() {
    contract::run_all(flawed(Flaw::RacyCapacity)).await;
}

// ---- the suite catches broken leases -----------------------------------------------------------

/// How a [`LeaseModel`] breaks the lease rules.
#[derive(Clone, Copy, PartialEq)]
enum LeaseFlaw {
    /// Worker writes are not checked against the task's lease.
    NoFencing,
    /// A claim decides on a snapshot read earlier and does not look at the task again before
    /// taking it (the river#1302 rescuer): a task completed in between is claimed anyway.
    StaleRescue,
    /// A claim reads the owners, then takes the tasks without checking that nobody else took
    /// them in between: two claimers take the same task.
    NonAtomicClaim,
}

#[derive(Default)]
struct Leases {
    nodes: HashMap<NodeId, Timestamp>,
    tasks: HashMap<TaskId, (Scope, Lease, Arc<Work>)>,
}

/// Task data in a [`MemoryStore`]; leases kept beside it by a small model with one flaw.
struct LeaseModel {
    inner: MemoryStore,
    flaw: LeaseFlaw,
    leases: Mutex<Leases>,
}

fn lease_model(flaw: LeaseFlaw) -> impl Fn() -> std::future::Ready<LeaseModel> {
    move || {
        std::future::ready(LeaseModel {
            inner: MemoryStore::new(),
            flaw,
            leases: Mutex::new(Leases::default()),
        })
    }
}

impl LeaseModel {
    fn leases(&self) -> std::sync::MutexGuard<'_, Leases> {
        self.leases.lock().expect("lease model lock")
    }
}

#[async_trait]
impl Store for LeaseModel {
    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError> {
        // The owner's lease is the model's to check (the inner store knows no nodes).
        let created_at = task.task().created_at();
        if limits.lease_required
            && self
                .leases()
                .nodes
                .get(owner)
                .is_none_or(|expires| *expires <= created_at)
        {
            return Err(StoreError::LeaseLost);
        }
        let unchecked = CreateLimits {
            lease_required: false,
            ..limits
        };
        let created = self
            .inner
            .create(task, work.clone(), unchecked, owner)
            .await?;
        self.leases().tasks.insert(
            created.snapshot.task.id().clone(),
            (work.scope.clone(), created.lease, work),
        );
        Ok(created)
    }

    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError> {
        self.inner.get(scope, id, now).await
    }

    async fn load(
        &self,
        ids: &[tasks_core::TaskId],
        now: Timestamp,
    ) -> Result<Vec<Snapshot>, StoreError> {
        self.inner.load(ids, now).await
    }
    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        self.inner.work(scope, id).await
    }

    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        let Authority::Worker(lease) = who else {
            return self.inner.transition(who, update, now).await;
        };
        // The check and the write happen under the model's lock (the inner call completes
        // without yielding), so only the flaw can let a stale lease through.
        let leases = self.leases();
        let Some((scope, current, _)) = leases.tasks.get(update.task().id()) else {
            return Ok(CasOutcome::NotFound);
        };
        if self.flaw != LeaseFlaw::NoFencing && current != lease {
            return Ok(CasOutcome::Fenced);
        }
        let scope = scope.clone();
        let write = self
            .inner
            .transition(Authority::Request(&scope), update, now);
        futures_now(write)
    }

    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
        self.inner.reap(now).await
    }

    async fn task_count(&self) -> Result<usize, StoreError> {
        self.inner.task_count().await
    }

    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        self.leases().nodes.insert(*node, now.plus_millis(lease_ms));
        Ok(())
    }

    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError> {
        let mut leases = self.leases();
        match leases.nodes.get_mut(node) {
            Some(expires) if *expires > now => {
                *expires = now.plus_millis(lease_ms);
                Ok(Liveness::Alive)
            }
            _ => {
                leases.nodes.remove(node);
                Ok(Liveness::Lost)
            }
        }
    }

    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError> {
        self.leases().nodes.remove(node);
        Ok(())
    }

    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        // Read: the orphans and their snapshots as of now.
        let candidates: Vec<(TaskId, Scope, Lease, Arc<Work>)> = {
            let mut leases = self.leases();
            leases.nodes.retain(|_, expires| *expires > now);
            let live = leases.nodes.clone();
            leases
                .tasks
                .iter()
                .filter(|(_, (_, lease, _))| lease.node != *node && !live.contains_key(&lease.node))
                .map(|(id, (scope, lease, work))| (id.clone(), scope.clone(), *lease, work.clone()))
                .collect()
        };
        let mut read = Vec::new();
        for (id, scope, lease, work) in candidates {
            if let Some(snapshot) = self.inner.get(&scope, &id, now).await? {
                if !snapshot.task.is_terminal() {
                    read.push((snapshot, lease, work));
                }
            }
            if read.len() == max {
                break;
            }
        }
        // The window a correct store never has between reading and taking.
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        let mut claimed = Vec::new();
        for (snapshot, seen, work) in read {
            let current = self
                .inner
                .get(&snapshot.scope, snapshot.task.id(), now)
                .await?
                .filter(|s| !s.task.is_terminal());
            if current.is_none() && self.flaw != LeaseFlaw::StaleRescue {
                continue;
            }
            let mut leases = self.leases();
            let Some((_, lease, _)) = leases.tasks.get_mut(snapshot.task.id()) else {
                continue;
            };
            if *lease != seen && self.flaw != LeaseFlaw::NonAtomicClaim {
                continue;
            }
            *lease = Lease {
                node: *node,
                generation: seen.generation + 1,
                attempt: seen.attempt,
            };
            claimed.push(Claimed {
                snapshot: current.unwrap_or(snapshot),
                work,
                lease: *lease,
            });
        }
        Ok(claimed)
    }

    async fn charge_attempt(
        &self,
        id: &TaskId,
        lease: &Lease,
        now: Timestamp,
    ) -> Result<Option<Lease>, StoreError> {
        let mut leases = self.leases();
        let Some((scope, current, _)) = leases.tasks.get_mut(id) else {
            return Ok(None);
        };
        if current.node != lease.node || current.generation != lease.generation {
            return Ok(None);
        }
        let read = futures_now(self.inner.get(scope, id, now))?;
        if read.is_none_or(|snapshot| snapshot.task.is_terminal()) {
            return Ok(None);
        }
        let charged = lease.attempt + 1;
        if current.attempt != lease.attempt && current.attempt != charged {
            return Ok(None);
        }
        current.attempt = charged;
        Ok(Some(*current))
    }

    async fn held(
        &self,
        node: &NodeId,
        now: Timestamp,
        after: Option<&TaskId>,
        max: usize,
    ) -> Result<Option<Vec<Claimed>>, StoreError> {
        let mut mine: Vec<(TaskId, Scope, Lease, Arc<Work>)> = self
            .leases()
            .tasks
            .iter()
            .filter(|(id, (_, lease, _))| lease.node == *node && after.is_none_or(|a| *id > a))
            .map(|(id, (scope, lease, work))| (id.clone(), scope.clone(), *lease, work.clone()))
            .collect();
        mine.sort_by(|a, b| a.0.cmp(&b.0));
        let mut held = Vec::new();
        for (id, scope, lease, work) in mine {
            if held.len() == max {
                break;
            }
            if let Some(snapshot) = self.inner.get(&scope, &id, now).await? {
                if !snapshot.task.is_terminal() {
                    held.push(Claimed {
                        snapshot,
                        work,
                        lease,
                    });
                }
            }
        }
        Ok(Some(held))
    }
}

/// Polls a future that completes without waiting (a [`MemoryStore`] call) to its end.
fn futures_now<T>(future: impl std::future::Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(value) => value,
        std::task::Poll::Pending => panic!("a MemoryStore call waited"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_correct_lease_model_passes_the_lease_checks() {
    // The model itself, without a flaw switched on where it matters, must pass: otherwise the
    // flaw tests below would prove nothing. StaleRescue and NonAtomicClaim each skip only
    // one of the two re-checks, so each passes what the other breaks.
    let model = lease_model(LeaseFlaw::StaleRescue);
    contract::concurrent_claimers_take_each_orphan_once(Arc::new(model().await)).await;
    let model = lease_model(LeaseFlaw::NonAtomicClaim);
    contract::a_completion_racing_a_claim_is_never_overwritten(Arc::new(model().await)).await;
    let model = lease_model(LeaseFlaw::NoFencing);
    contract::claim_takes_exactly_the_orphans(&model().await).await;
}

#[tokio::test]
#[should_panic(expected = "a write under a stale lease must be Fenced")]
async fn the_suite_catches_a_store_without_fencing() {
    contract::run_all(lease_model(LeaseFlaw::NoFencing)).await;
}

/// The race checks catch these flaws only when the race happens, which a loaded machine can
/// prevent in one run (the completions may all finish before the claimer reads): the suite
/// runs up to this many times, and must catch the flaw in one of them.
const RACE_RUNS: usize = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[should_panic(expected = "a completed task must not be claimed")]
async fn the_suite_catches_a_stale_rescue() {
    for _ in 0..RACE_RUNS {
        contract::run_all(lease_model(LeaseFlaw::StaleRescue)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[should_panic(expected = "an orphan was claimed twice by concurrent claimers")]
async fn the_suite_catches_a_non_atomic_claim() {
    for _ in 0..RACE_RUNS {
        contract::run_all(lease_model(LeaseFlaw::NonAtomicClaim)).await;
    }
}
