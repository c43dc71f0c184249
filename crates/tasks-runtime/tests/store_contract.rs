//! The store contract suite (`tasks_runtime::store::contract`) against [`MemoryStore`], and
//! against deliberately flawed stores to show the suite catches each flaw.

use std::sync::Arc;

use async_trait::async_trait;
use tasks_core::{NewTask, TaskId, TaskUpdate, Timestamp};
use tasks_runtime::store::{contract, CreateLimits};
use tasks_runtime::{CasOutcome, MemoryStore, Scope, Snapshot, Store, StoreError, Work};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_passes_the_whole_contract() {
    contract::run_all(MemoryStore::new).await;
}

#[tokio::test]
async fn memory_store_passes_the_contract_on_a_current_thread_runtime() {
    contract::run_all(MemoryStore::new).await;
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
}

struct Flawed {
    inner: MemoryStore,
    flaw: Flaw,
}

fn flawed(flaw: Flaw) -> impl Fn() -> Flawed {
    move || Flawed {
        inner: MemoryStore::new(),
        flaw,
    }
}

#[async_trait]
impl Store for Flawed {
    async fn create(
        &self,
        task: NewTask,
        work: Work,
        limits: CreateLimits,
    ) -> Result<Snapshot, StoreError> {
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
            return self.inner.create(task, work, unchecked).await;
        }
        self.inner.create(task, work, limits).await
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

    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        self.inner.work(scope, id).await
    }

    async fn transition(
        &self,
        scope: &Scope,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        let now = match self.flaw {
            Flaw::NoExpiry => Timestamp::from_unix_millis(0),
            _ => now,
        };
        match self.inner.transition(scope, update, now).await? {
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
