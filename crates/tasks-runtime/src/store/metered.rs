//! A [`Store`] decorator that times every call and bounds it by a deadline: the runtime wraps
//! its store in one, so each store reports `store_operation_duration_seconds{operation}`,
//! `store_failures_total{operation}` (backend failures only: a capacity refusal or a duplicate
//! id is an answer, not a failure) and `store_deadline_exceeded_total{operation}` without
//! instrumenting itself, and no call waits on a stalled store for longer than its deadline
//! ([`crate::Limits::store_deadline`]; a lease renewal gets
//! [`crate::RuntimeConfig::renewal_deadline`]). A call past its deadline is dropped and
//! answers [`StoreError::Interrupted`]: a write it carried may still take effect.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tasks_core::{NewTask, TaskId, TaskUpdate, Timestamp};

use super::inventory::{InventoryCounts, InventoryPage, InventoryQuery, NodeRow, StuckRules};
use super::{
    Authority, CasOutcome, Change, Claimed, CreateLimits, Created, Lease, Liveness, NodeId,
    Snapshot, StatusCounts, Store, StoreError,
};
use crate::clock::Clock;
use crate::metrics::RuntimeMetrics;
use crate::scope::Scope;
use crate::work::Work;

/// `inner`, timed into `metrics`, each call bounded by `deadline` (a heartbeat by
/// `renewal_deadline`).
pub(crate) struct Metered {
    inner: Arc<dyn Store>,
    metrics: RuntimeMetrics,
    deadline: Duration,
    renewal_deadline: Duration,
}

impl Metered {
    pub(crate) fn new(
        inner: Arc<dyn Store>,
        metrics: RuntimeMetrics,
        config: &crate::RuntimeConfig,
    ) -> Self {
        Metered {
            inner,
            metrics,
            deadline: config.limits.store_deadline,
            renewal_deadline: config.renewal_deadline(),
        }
    }

    async fn timed<T>(
        &self,
        operation: &'static str,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        self.bounded(operation, self.deadline, call).await
    }

    async fn bounded<T>(
        &self,
        operation: &'static str,
        deadline: Duration,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let started = Instant::now();
        let outcome = match tokio::time::timeout(deadline, call).await {
            Ok(outcome) => outcome,
            Err(_elapsed) => {
                self.metrics.deadline_exceeded(operation);
                Err(StoreError::Interrupted(format!(
                    "{operation}: no answer within {} ms",
                    deadline.as_millis()
                )))
            }
        };
        let failed = matches!(
            outcome,
            Err(StoreError::Backend(_) | StoreError::Unavailable(_) | StoreError::Interrupted(_))
        );
        self.metrics
            .store_call(operation, started.elapsed(), failed);
        outcome
    }
}

#[async_trait]
impl Store for Metered {
    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError> {
        self.timed("create", self.inner.create(task, work, limits, owner))
            .await
    }

    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError> {
        self.timed("get", self.inner.get(scope, id, now)).await
    }

    async fn list(
        &self,
        scope: &Scope,
        after: Option<&TaskId>,
        limit: usize,
        now: Timestamp,
    ) -> Result<Option<Vec<Snapshot>>, StoreError> {
        self.timed("list", self.inner.list(scope, after, limit, now))
            .await
    }

    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        self.timed("work", self.inner.work(scope, id)).await
    }

    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        self.timed("transition", self.inner.transition(who, update, now))
            .await
    }

    async fn load(&self, ids: &[TaskId], now: Timestamp) -> Result<Vec<Snapshot>, StoreError> {
        self.timed("load", self.inner.load(ids, now)).await
    }

    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
        self.timed("reap", self.inner.reap(now)).await
    }

    async fn task_count(&self) -> Result<usize, StoreError> {
        self.timed("task_count", self.inner.task_count()).await
    }

    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        self.timed(
            "register_node",
            self.inner.register_node(node, now, lease_ms),
        )
        .await
    }

    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError> {
        let call = self.inner.heartbeat(node, now, lease_ms);
        self.bounded("heartbeat", self.renewal_deadline, call).await
    }

    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError> {
        self.timed("retire_node", self.inner.retire_node(node))
            .await
    }

    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        self.timed("claim_orphans", self.inner.claim_orphans(node, now, max))
            .await
    }

    async fn held(
        &self,
        node: &NodeId,
        now: Timestamp,
        after: Option<&TaskId>,
        max: usize,
    ) -> Result<Option<Vec<Claimed>>, StoreError> {
        self.timed("held", self.inner.held(node, now, after, max))
            .await
    }

    async fn charge_attempt(
        &self,
        id: &TaskId,
        lease: &Lease,
        now: Timestamp,
    ) -> Result<Option<Lease>, StoreError> {
        self.timed("charge_attempt", self.inner.charge_attempt(id, lease, now))
            .await
    }

    async fn status_counts(&self, now: Timestamp) -> Result<Option<StatusCounts>, StoreError> {
        self.timed("status_counts", self.inner.status_counts(now))
            .await
    }

    async fn inventory(
        &self,
        query: &InventoryQuery,
        rules: StuckRules,
        now: Timestamp,
    ) -> Result<Option<InventoryPage>, StoreError> {
        self.timed("inventory", self.inner.inventory(query, rules, now))
            .await
    }

    async fn inventory_counts(
        &self,
        rules: StuckRules,
        now: Timestamp,
    ) -> Result<Option<InventoryCounts>, StoreError> {
        self.timed("inventory_counts", self.inner.inventory_counts(rules, now))
            .await
    }

    async fn nodes(&self, now: Timestamp) -> Result<Option<Vec<NodeRow>>, StoreError> {
        self.timed("nodes", self.inner.nodes(now)).await
    }

    fn changes(&self) -> Option<tokio::sync::broadcast::Receiver<Change>> {
        self.inner.changes()
    }

    fn clock(&self) -> Option<Arc<dyn Clock>> {
        self.inner.clock()
    }

    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn quarantined(&self) -> u64 {
        self.inner.quarantined()
    }

    fn time_floor(&self) -> Timestamp {
        self.inner.time_floor()
    }
}
