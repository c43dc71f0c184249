//! [`SqliteStore`]: the handle callers hold, and its [`Store`] implementation.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

use async_trait::async_trait;
use tasks_core::{NewTask, TaskId, TaskUpdate, Timestamp};
use tasks_runtime::store::inventory::{
    InventoryCounts, InventoryPage, InventoryQuery, NodeRow, StuckRules,
};
use tasks_runtime::store::{encode_checked, CreateLimits};
use tasks_runtime::store::{
    Authority, CasOutcome, Claimed, Created, Lease, Liveness, NodeId, Snapshot, Store, StoreError,
};
use tasks_runtime::{Scope, Work};
use tokio::sync::oneshot;

use crate::command::{self, Answer, Cas, Command, Op, Who, Write};
use crate::error::OpenError;
use crate::inventory;
use crate::model::Model;
use crate::open;
use crate::options::SqliteOptions;
use crate::writer::{Database, Shared, Writer};

/// A durable [`Store`] in one SQLite file, for one process at a time.
///
/// Writes go to a dedicated writer thread that commits them in batches; reads (`get`, `work`,
/// `task_count`) are answered from memory. See the [crate documentation](crate) for
/// durability, locking and what is stored.
///
/// Dropping the store lets the writer finish every queued write, closes the database and
/// releases the lock; the drop waits for that.
pub struct SqliteStore {
    path: PathBuf,
    model: Arc<Model>,
    shared: Arc<Shared>,
    /// `None` only while dropping.
    commands: Option<mpsc::Sender<Command>>,
    writer: Option<JoinHandle<()>>,
    /// The clock's high-water mark when the database was opened.
    time_floor: Timestamp,
    /// The rows quarantined when the database was opened (`crate::quarantine`).
    quarantined: u64,
}

impl SqliteStore {
    /// Opens (creating if missing) the task database at `path`, takes the lock
    /// (an `flock` on the database file), migrates the schema, loads every task into memory and starts the
    /// writer thread.
    ///
    /// Blocking (file I/O proportional to the database size); call it once at start-up. It
    /// never enters an async runtime, so calling it from inside one is fine.
    ///
    /// # Errors
    /// [`OpenError`]: the database is in use ([`OpenError::Locked`]), written by a newer
    /// build, not a task database or damaged, or a file cannot be created. A refused file is
    /// left unchanged. A task row that does not decode does not refuse the file: that task
    /// alone is quarantined (the crate docs, "Unreadable rows").
    pub fn open(path: impl AsRef<Path>, options: SqliteOptions) -> Result<SqliteStore, OpenError> {
        let path = path.as_ref().to_path_buf();
        let opened = open::open(&path, &options)?;
        let model = Arc::new(opened.model);
        let time_floor =
            Timestamp::from_unix_millis(u64::try_from(opened.high_water_ms).unwrap_or(0));
        let shared = Arc::new(Shared::default());
        let (commands, receiver) = mpsc::channel();
        let setup = |reason: String| OpenError::Database {
            path: path.clone(),
            reason,
        };
        let db = Database {
            conn: opened.conn,
            lock: opened.lock,
            high_water_ms: opened.high_water_ms,
        };
        let writer = Writer::new(
            db,
            model.clone(),
            opened.counters,
            receiver,
            shared.clone(),
            options.max_batch,
        )
        .map_err(|e| setup(format!("installing the commit hook: {e}")))?;
        let writer = std::thread::Builder::new()
            .name("tasks-sqlite-writer".into())
            .spawn(move || writer.run())
            .map_err(|e| setup(format!("starting the writer thread: {e}")))?;
        Ok(SqliteStore {
            path,
            model,
            shared,
            commands: Some(commands),
            writer: Some(writer),
            time_floor,
            quarantined: opened.quarantined,
        })
    }

    /// The database path, as given to [`SqliteStore::open`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Test support: transactions committed so far.
    #[doc(hidden)]
    pub fn commits(&self) -> u64 {
        self.shared.commits.load(Ordering::Acquire)
    }

    /// Test support: writes in the writer thread's channel, not yet taken. Every write counted
    /// here is already in the channel, so a writer resumed from [`SqliteStore::pause`] after
    /// this reached `n` takes at least those `n` writes in its next batch.
    #[doc(hidden)]
    pub fn queued(&self) -> usize {
        let taken = self.shared.taken.load(Ordering::Acquire);
        let sent = self.shared.sent.load(Ordering::Acquire);
        usize::try_from(sent.saturating_sub(taken)).unwrap_or(usize::MAX)
    }

    /// Test support: makes the next `n` commits fail (a SQLite commit hook turns each into a
    /// rollback, so `COMMIT` returns an error).
    #[doc(hidden)]
    pub fn fail_next_commits(&self, n: usize) {
        self.shared.fail_commits.store(n, Ordering::Release);
    }

    /// Test support: sets SQLite's `max_page_count` on the writer's connection and returns
    /// the limit in force (never below the current size), so writes that need new pages fail.
    #[doc(hidden)]
    pub async fn set_max_page_count(&self, pages: u64) -> Result<u64, StoreError> {
        match self.call(Op::MaxPageCount { pages }).await? {
            Answer::Pages(pages) => Ok(pages),
            other => Err(unexpected(other)),
        }
    }

    /// Test support: the writer takes no further command until the returned guard is
    /// dropped (writes sent meanwhile queue up and then form one batch).
    #[doc(hidden)]
    pub fn pause(&self) -> PauseGuard {
        let (gate, wait) = mpsc::channel();
        if let Some(commands) = &self.commands {
            let _ = commands.send(Command::Pause(wait));
        }
        PauseGuard { _gate: gate }
    }

    async fn call(&self, op: Op) -> Result<Answer, StoreError> {
        let stopped = || StoreError::Backend("the task store writer thread has stopped".into());
        let commands = self.commands.as_ref().ok_or_else(stopped)?;
        let (reply, answer) = oneshot::channel();
        if commands.send(Command::Write(Write { op, reply })).is_err() {
            return Err(stopped());
        }
        self.shared.sent.fetch_add(1, Ordering::AcqRel);
        answer.await.map_err(|_| stopped())?
    }
}

/// Test support: see [`SqliteStore::pause`].
#[doc(hidden)]
#[derive(Debug)]
pub struct PauseGuard {
    _gate: mpsc::Sender<()>,
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        drop(self.commands.take());
        if let Some(writer) = self.writer.take() {
            if writer.join().is_err() {
                tracing::error!("the task store writer thread panicked");
            }
        }
    }
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn unexpected(answer: Answer) -> StoreError {
    StoreError::Backend(format!("the writer answered {answer:?} to another request"))
}

#[async_trait]
impl Store for SqliteStore {
    fn kind(&self) -> &'static str {
        "sqlite"
    }

    fn quarantined(&self) -> u64 {
        self.quarantined
    }

    async fn create(
        &self,
        task: NewTask,
        work: Arc<Work>,
        limits: CreateLimits,
        owner: &NodeId,
    ) -> Result<Created, StoreError> {
        let task = task.into_task();
        let new = command::NewTask {
            task_json: encode_checked("sqlite", &task)?,
            work_json: encode_checked("sqlite", &*work)?,
            task: Arc::new(task),
            work,
            limits,
            owner: *owner,
        };
        match self.call(Op::Create(new)).await? {
            Answer::Created(created) => Ok(created),
            other => Err(unexpected(other)),
        }
    }

    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, StoreError> {
        Ok(self.model.get(scope, id, now))
    }

    async fn list(
        &self,
        scope: &Scope,
        after: Option<&TaskId>,
        limit: usize,
        now: Timestamp,
    ) -> Result<Option<Vec<Snapshot>>, StoreError> {
        Ok(Some(self.model.list(scope, after, limit, now)))
    }

    async fn load(&self, ids: &[TaskId], now: Timestamp) -> Result<Vec<Snapshot>, StoreError> {
        Ok(self.model.snapshots(ids, now))
    }

    async fn work(&self, scope: &Scope, id: &TaskId) -> Result<Option<Arc<Work>>, StoreError> {
        Ok(self.model.work(scope, id))
    }

    async fn transition(
        &self,
        who: Authority<'_>,
        update: TaskUpdate,
        now: Timestamp,
    ) -> Result<CasOutcome, StoreError> {
        let who = match who {
            Authority::Request(scope) => Who::Request(scope.clone()),
            Authority::Worker(lease) => Who::Worker(*lease),
        };
        let task = update.into_task();
        let cas = Cas {
            who,
            task_json: encode_checked("sqlite", &task)?,
            task: Arc::new(task),
            now,
        };
        match self.call(Op::Transition(cas)).await? {
            Answer::Cas(outcome) => Ok(outcome),
            other => Err(unexpected(other)),
        }
    }

    async fn reap(&self, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
        match self.call(Op::Reap { now }).await? {
            Answer::Reaped(ids) => Ok(ids),
            other => Err(unexpected(other)),
        }
    }

    async fn task_count(&self) -> Result<usize, StoreError> {
        Ok(self.model.total())
    }

    async fn status_counts(
        &self,
        now: Timestamp,
    ) -> Result<Option<tasks_runtime::store::StatusCounts>, StoreError> {
        Ok(Some(self.model.status_counts(now)))
    }

    async fn register_node(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<(), StoreError> {
        let op = Op::Register {
            node: *node,
            now,
            expires: now.plus_millis(lease_ms),
        };
        match self.call(op).await? {
            Answer::Done => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn heartbeat(
        &self,
        node: &NodeId,
        now: Timestamp,
        lease_ms: u64,
    ) -> Result<Liveness, StoreError> {
        let op = Op::Heartbeat {
            node: *node,
            now,
            expires: now.plus_millis(lease_ms),
        };
        match self.call(op).await? {
            Answer::Liveness(liveness) => Ok(liveness),
            other => Err(unexpected(other)),
        }
    }

    async fn retire_node(&self, node: &NodeId) -> Result<(), StoreError> {
        match self.call(Op::Retire { node: *node }).await? {
            Answer::Done => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn claim_orphans(
        &self,
        node: &NodeId,
        now: Timestamp,
        max: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        let op = Op::Claim {
            node: *node,
            now,
            max,
        };
        match self.call(op).await? {
            Answer::Claimed(claimed) => Ok(claimed),
            other => Err(unexpected(other)),
        }
    }

    async fn held(
        &self,
        node: &NodeId,
        now: Timestamp,
        after: Option<&TaskId>,
        max: usize,
    ) -> Result<Option<Vec<Claimed>>, StoreError> {
        let op = Op::Held {
            node: *node,
            now,
            after: after.cloned(),
            max,
        };
        match self.call(op).await? {
            Answer::Claimed(held) => Ok(Some(held)),
            other => Err(unexpected(other)),
        }
    }

    /// The highest time a batch committed to this file had acted on, as read at open: see
    /// [Clock](crate#clock).
    fn time_floor(&self) -> Timestamp {
        self.time_floor
    }

    /// One page in SQL on the writer's connection, decoded here (the `inventory` module).
    async fn inventory(
        &self,
        query: &InventoryQuery,
        rules: StuckRules,
        now: Timestamp,
    ) -> Result<Option<InventoryPage>, StoreError> {
        let op = Op::Inventory {
            query: Box::new(query.clone()),
            rules,
            now,
        };
        match self.call(op).await? {
            Answer::Inventory(listed) => Ok(Some(inventory::page(listed, query, rules, now))),
            other => Err(unexpected(other)),
        }
    }

    async fn inventory_counts(
        &self,
        rules: StuckRules,
        now: Timestamp,
    ) -> Result<Option<InventoryCounts>, StoreError> {
        match self.call(Op::InventoryCounts { rules, now }).await? {
            Answer::InventoryCounts(counts) => Ok(Some(counts)),
            other => Err(unexpected(other)),
        }
    }

    async fn nodes(&self, now: Timestamp) -> Result<Option<Vec<NodeRow>>, StoreError> {
        match self.call(Op::Nodes { now }).await? {
            Answer::Nodes(nodes) => Ok(Some(nodes)),
            other => Err(unexpected(other)),
        }
    }

    async fn charge_attempt(
        &self,
        id: &TaskId,
        lease: &Lease,
        now: Timestamp,
    ) -> Result<Option<Lease>, StoreError> {
        let op = Op::ChargeAttempt {
            id: id.clone(),
            lease: *lease,
            now,
        };
        match self.call(op).await? {
            Answer::Charged(charged) => Ok(charged),
            other => Err(unexpected(other)),
        }
    }
}
