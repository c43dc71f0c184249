//! [`PostgresStore`]: the handle callers hold, and its [`Store`] implementation, which hands
//! each call to the module of its concept.

use std::sync::Arc;

use async_trait::async_trait;
use tasks_core::{NewTask, TaskId, TaskUpdate, Timestamp};
use tasks_runtime::store::inventory::{
    InventoryCounts, InventoryPage, InventoryQuery, NodeRow, StuckRules,
};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{
    Authority, CasOutcome, Change, Claimed, Created, Lease, Liveness, NodeId, Snapshot, Store,
    StoreError,
};
use tasks_runtime::{Clock, Scope, Work};
use tokio::sync::broadcast;

use crate::batch::{self, Batcher};
use crate::db::Db;
use crate::error::ConnectError;
use crate::options::PostgresOptions;
use crate::{cas, connect, create, inventory, leases, read, reap};

/// A [`Store`] in a PostgreSQL database, shared by any number of nodes (processes).
///
/// Every call runs its statements on a pooled connection, with no cache in between: a write
/// acknowledged by one node is read by every node at once. Cloning is cheap and shares the
/// pool. See the [crate documentation](crate) for the model, durability and what is stored.
#[derive(Clone)]
pub struct PostgresStore {
    db: Arc<Db>,
    batchers: Arc<Batchers>,
}

/// The group-commit queues of the store's writes; dropping them (with the last clone of the
/// store) stops their collectors once their queues are empty.
struct Batchers {
    creates: Batcher<create::Item>,
    transitions: Batcher<cas::Item>,
}

impl PostgresStore {
    /// Connects to the database at `url` (a `postgres://` URL or a libpq `key=value` string),
    /// creates `options.schema` if missing and runs the migrations it lacks: one transaction
    /// under a `pg_advisory_xact_lock` keyed on the schema name, so nodes starting together
    /// migrate once. Opens one connection now (and measures the server's clock on it, see
    /// [Clock](crate#clock)); the pool opens more on demand, up to `options.pool_size`. Also
    /// starts the [change feed](crate#change-feed)'s two dedicated connections and waits up to
    /// 5 s for it to listen; they retry in the background and never make this fail.
    ///
    /// # Errors
    /// [`ConnectError`]: an unparsable URL or invalid schema name, an unreachable server, a
    /// refusal by the server (authentication, privileges, foreign tables in the schema), or a
    /// schema of a newer build (left unchanged). No message contains the password.
    pub async fn connect(
        url: &str,
        options: PostgresOptions,
    ) -> Result<PostgresStore, ConnectError> {
        connect::connect(url, options).await.map(PostgresStore::new)
    }

    /// The store on `db`, with its group-commit queues started.
    fn new(db: Db) -> PostgresStore {
        let creates = batch::batcher::<create::Creates>(db.writer.clone(), db.stop.clone());
        let transitions = batch::batcher::<cas::Transitions>(db.writer.clone(), db.stop.clone());
        PostgresStore {
            db: Arc::new(db),
            batchers: Arc::new(Batchers {
                creates,
                transitions,
            }),
        }
    }

    /// The server process id (`pg_stat_activity.pid`) of the change feed's listening
    /// connection while it listens, `None` while it (re)connects. For monitoring, and for
    /// tests that break the connection on purpose.
    pub fn listener_pid(&self) -> Option<i32> {
        self.db.feed.listener_pid()
    }

    /// The server process id of the change feed's notifying connection while it is open,
    /// `None` while it (re)connects. For monitoring, and for tests.
    pub fn notifier_pid(&self) -> Option<i32> {
        self.db.feed.notifier_pid()
    }
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("target", &self.db.target)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Store for PostgresStore {
    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError> {
        create::create(&self.db, &self.batchers.creates, task, work, limits, owner).await
    }

    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError> {
        read::get(&self.db, scope, id, now).await
    }

    async fn load(&self, ids: &[TaskId], now: Timestamp) -> Result<Vec<Snapshot>, StoreError> {
        read::load(&self.db, ids, now).await
    }

    async fn list(
        &self,
        scope: &Scope,
        after: Option<&TaskId>,
        limit: usize,
        now: Timestamp,
    ) -> Result<Option<Vec<Snapshot>>, StoreError> {
        read::list(&self.db, scope, after, limit, now)
            .await
            .map(Some)
    }

    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        read::work(&self.db, scope, id).await
    }

    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        cas::transition(&self.db, &self.batchers.transitions, who, update, now).await
    }

    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
        reap::reap(&self.db, now).await
    }

    async fn task_count(&self) -> Result<usize, StoreError> {
        read::count(&self.db).await
    }

    async fn status_counts(
        &self,
        now: Timestamp,
    ) -> Result<Option<tasks_runtime::store::StatusCounts>, StoreError> {
        read::status_counts(&self.db, now).await.map(Some)
    }

    /// One `SELECT` in creation order, only the filters asked for in it (`crate::inventory`).
    async fn inventory(
        &self,
        query: &InventoryQuery,
        rules: StuckRules,
        now: Timestamp,
    ) -> Result<Option<InventoryPage>, StoreError> {
        inventory::page(&self.db, query, rules, now).await.map(Some)
    }

    async fn inventory_counts(
        &self,
        rules: StuckRules,
        now: Timestamp,
    ) -> Result<Option<InventoryCounts>, StoreError> {
        inventory::counts(&self.db, rules, now).await.map(Some)
    }

    async fn nodes(&self, now: Timestamp) -> Result<Option<Vec<NodeRow>>, StoreError> {
        inventory::nodes(&self.db, now).await.map(Some)
    }

    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        leases::register(&self.db, node, now, lease_ms).await
    }

    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError> {
        leases::heartbeat(&self.db, node, now, lease_ms).await
    }

    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError> {
        leases::retire(&self.db, node).await
    }

    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        leases::claim(&self.db, node, now, max).await
    }

    async fn held(
        &self,
        node: &NodeId,
        now: Timestamp,
        after: Option<&TaskId>,
        max: usize,
    ) -> Result<Option<Vec<Claimed>>, StoreError> {
        leases::held(&self.db, node, now, after, max)
            .await
            .map(Some)
    }

    async fn charge_attempt(
        &self,
        id: &TaskId,
        lease: &Lease,
        now: Timestamp,
    ) -> Result<Option<Lease>, StoreError> {
        leases::charge_attempt(&self.db, id, lease, now).await
    }

    /// Hints about the tasks other store instances (other processes, or other
    /// [`PostgresStore::connect`]s) on this schema commit, received through `LISTEN`: see
    /// [Change feed](crate#change-feed). A receiver that falls more than 4096 changes behind
    /// gets `RecvError::Lagged`, which means the same as [`Change::Resync`].
    fn changes(&self) -> Option<broadcast::Receiver<Change>> {
        Some(self.db.feed.subscribe())
    }

    /// The database server's clock, read locally: see [Clock](crate#clock).
    fn clock(&self) -> Option<Arc<dyn Clock>> {
        Some(self.db.clock.clone())
    }

    /// Rows this instance quarantined since it connected: see
    /// [Unreadable rows](crate#unreadable-rows).
    fn quarantined(&self) -> u64 {
        self.db
            .quarantined
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    fn kind(&self) -> &'static str {
        "postgresql"
    }
}
