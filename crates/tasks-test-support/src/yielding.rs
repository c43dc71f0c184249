//! [`YieldingStore`]: a [`MemoryStore`] that yields around every call, like a store behind a
//! network round trip.

use std::sync::Arc;

use tasks_core::{NewTask, TaskId, TaskUpdate, Timestamp};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{
    Authority, CasOutcome, Claimed, Created, Lease, Liveness, MemoryStore, NodeId, Snapshot, Store,
    StoreError,
};
use tasks_runtime::{Scope, Work};

/// A [`MemoryStore`] that yields to the scheduler before and after every call, like a store
/// behind a network round trip. It widens the windows between a commit and what the runtime
/// does next, so races show up in far fewer iterations.
#[derive(Debug)]
pub struct YieldingStore(pub MemoryStore);

#[async_trait::async_trait]
impl Store for YieldingStore {
    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError> {
        tokio::task::yield_now().await;
        let out = self.0.create(task, work, limits, owner).await;
        tokio::task::yield_now().await;
        out
    }

    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError> {
        tokio::task::yield_now().await;
        let out = self.0.get(scope, id, now).await;
        tokio::task::yield_now().await;
        out
    }

    async fn load(&self, ids: &[TaskId], now: Timestamp) -> Result<Vec<Snapshot>, StoreError> {
        self.0.load(ids, now).await
    }
    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        tokio::task::yield_now().await;
        self.0.work(scope, id).await
    }

    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        tokio::task::yield_now().await;
        let out = self.0.transition(who, update, now).await;
        tokio::task::yield_now().await;
        out
    }

    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
        tokio::task::yield_now().await;
        self.0.reap(now).await
    }

    async fn task_count(&self) -> Result<usize, StoreError> {
        self.0.task_count().await
    }

    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        self.0.register_node(node, now, lease_ms).await
    }

    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError> {
        self.0.heartbeat(node, now, lease_ms).await
    }

    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError> {
        self.0.retire_node(node).await
    }

    async fn charge_attempt(
        &self,
        id: &TaskId,
        lease: &Lease,
        now: Timestamp,
    ) -> Result<Option<Lease>, StoreError> {
        tokio::task::yield_now().await;
        self.0.charge_attempt(id, lease, now).await
    }

    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        tokio::task::yield_now().await;
        let out = self.0.claim_orphans(node, now, max).await;
        tokio::task::yield_now().await;
        out
    }
}
