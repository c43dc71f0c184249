//! Creating a task: checked here, then stored with the creates queued beside it, one
//! `create_tasks` call per batch (see [`crate::batch`]). The refusal is answered in the
//! in-memory store's order (the owner's lease first, then `max_tasks`, then the per-scope
//! bound, then a taken id).

use std::sync::Arc;

use deadpool_postgres::Pool;
use tasks_core::{CapacityLimit, NewTask, Task, TaskId};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{Created, Lease, NodeId, Snapshot, StoreError};
use tasks_runtime::{Scope, Work};
use tokio::sync::oneshot;
use tokio_postgres::types::ToSql;

use crate::backend;
use crate::batch::{self, Batcher, Queued, Writer};
use crate::db::Db;
use crate::sql::{big, ms, to_json, Sql};
use crate::text::storable;

/// One create waiting for its batch.
pub(crate) struct Item {
    task: Arc<Task>,
    scope: Scope,
    /// The task's and the work descriptor's JSON.
    task_json: String,
    work_json: String,
    /// The work's tool, `None` when the column cannot hold it (a U+0000).
    tool: Option<String>,
    owner: NodeId,
    max_tasks: i64,
    max_active: i64,
    lease_required: bool,
    reply: oneshot::Sender<Result<Verdict, StoreError>>,
}

/// What became of one create whose batch committed: `create_tasks`'s code (migrations 0003
/// and 0005).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Stored,
    MaxTasks,
    MaxActive,
    Taken,
    NoLease,
}

impl Verdict {
    fn from_code(code: i16) -> Option<Verdict> {
        Some(match code {
            0 => Verdict::Stored,
            1 => Verdict::MaxTasks,
            2 => Verdict::MaxActive,
            3 => Verdict::Taken,
            4 => Verdict::NoLease,
            _ => return None,
        })
    }
}

/// [`tasks_runtime::store::Store::create`].
pub(crate) async fn create(
    db: &Db,
    queue: &Batcher<Item>,
    task: NewTask,
    work: Arc<Work>,
    limits: CreateLimits,
    owner: &NodeId,
) -> Result<Created, StoreError> {
    let task = task.into_task();
    if !storable(task.id().as_str()) || !storable(work.scope.as_str()) {
        return Err(StoreError::Backend(
            "postgres: a task id or scope containing U+0000 cannot be stored".into(),
        ));
    }
    let task = Arc::new(task);
    let (task_json, work_json) = (to_json(&*task)?, to_json(&*work)?);
    let scope = work.scope.clone();
    let (reply, verdict) = oneshot::channel();
    let item = Item {
        task: task.clone(),
        scope: scope.clone(),
        task_json,
        work_json,
        tool: storable(&work.tool).then(|| work.tool.clone()),
        owner: *owner,
        max_tasks: big(limits.max_tasks),
        max_active: big(limits.max_active_per_scope),
        lease_required: limits.lease_required,
        reply,
    };
    if let Err(item) = queue.submit(item) {
        batch::run::<Creates>(&db.writer, vec![item]).await;
    }
    match verdict.await.map_err(|_| batch::lost())?? {
        Verdict::Stored => {}
        Verdict::MaxTasks => return Err(StoreError::Capacity(CapacityLimit::MaxTasks)),
        Verdict::MaxActive => {
            return Err(StoreError::Capacity(CapacityLimit::MaxActiveTasksPerScope))
        }
        Verdict::Taken => return Err(StoreError::Duplicate),
        Verdict::NoLease => return Err(StoreError::LeaseLost),
    }
    Ok(Created {
        snapshot: Snapshot { task, scope },
        lease: Lease {
            node: *owner,
            generation: 1,
            attempt: 1,
        },
    })
}

/// Creates, as a kind of batched call.
pub(crate) struct Creates;

impl batch::Kind for Creates {
    type Item = Item;
    type Answer = Verdict;

    fn store(
        writer: &Writer,
        batch: &[Item],
    ) -> impl std::future::Future<Output = Result<Vec<Verdict>, (bool, StoreError)>> + Send {
        store(&writer.pool, &writer.sql, batch)
    }

    fn answer(writer: &Writer, item: Item, verdict: Verdict) {
        if verdict == Verdict::Stored {
            writer.hinter.hint(item.task.id(), item.task.revision());
        }
        let _ = item.reply.send(Ok(verdict));
    }

    fn fail(item: Item, error: StoreError) {
        let _ = item.reply.send(Err(error));
    }
}

impl Queued for Item {
    fn id(&self) -> &TaskId {
        self.task.id()
    }
    fn bytes(&self) -> usize {
        self.task_json.len() + self.work_json.len()
    }
    fn abandoned(&self) -> bool {
        self.reply.is_closed()
    }
}

/// One `create_tasks` call for `batch`: a verdict per create, in order; or the error, and
/// whether the database refused a value.
async fn store(pool: &Pool, sql: &Sql, batch: &[Item]) -> Result<Vec<Verdict>, (bool, StoreError)> {
    let other = |error: StoreError| (false, error);
    let client = pool.get().await.map_err(|e| other(backend::pool(e)))?;
    let statement = client
        .prepare_cached(&sql.create)
        .await
        .map_err(|e| other(backend::sql(e)))?;
    let flush = client
        .prepare_cached(&sql.flush)
        .await
        .map_err(|e| other(backend::sql(e)))?;
    let ids: Vec<&str> = batch.iter().map(|i| i.task.id().as_str()).collect();
    let scopes: Vec<&str> = batch.iter().map(|i| i.scope.as_str()).collect();
    let revisions: Vec<i64> = batch.iter().map(|i| big(i.task.revision())).collect();
    let statuses: Vec<&str> = batch.iter().map(|i| i.task.status().as_str()).collect();
    let created: Vec<i64> = batch.iter().map(|i| ms(i.task.created_at())).collect();
    let expires: Vec<Option<i64>> = batch.iter().map(|i| i.task.expires_at().map(ms)).collect();
    let tasks: Vec<&str> = batch.iter().map(|i| i.task_json.as_str()).collect();
    let works: Vec<&str> = batch.iter().map(|i| i.work_json.as_str()).collect();
    let owners: Vec<&[u8]> = batch
        .iter()
        .map(|i| i.owner.as_bytes().as_slice())
        .collect();
    let max_tasks: Vec<i64> = batch.iter().map(|i| i.max_tasks).collect();
    let max_active: Vec<i64> = batch.iter().map(|i| i.max_active).collect();
    let leased: Vec<bool> = batch.iter().map(|i| i.lease_required).collect();
    let tools: Vec<Option<&str>> = batch.iter().map(|i| i.tool.as_deref()).collect();
    let params: [&(dyn ToSql + Sync); 13] = [
        &ids,
        &scopes,
        &revisions,
        &statuses,
        &created,
        &expires,
        &tasks,
        &works,
        &owners,
        &max_tasks,
        &max_active,
        &leased,
        &tools,
    ];
    // Pipelined: the batch commits without waiting for the WAL flush (its counter rows are
    // free at once), and the flush statement, run right after it, returns once that commit is
    // flushed too. Only then is any create answered.
    let (stored, flushed) = futures_util::join!(
        client.query_one(&statement, &params),
        client.query_one(&flush, &[]),
    );
    let codes: Vec<i16> = match stored {
        Ok(row) => row.try_get(0).map_err(|e| other(backend::sql(e)))?,
        Err(error) => return Err((batch::refused_value(&error), backend::sql(error))),
    };
    flushed.map_err(|e| other(backend::sql(e)))?;
    let verdicts: Option<Vec<Verdict>> = codes.into_iter().map(Verdict::from_code).collect();
    match verdicts {
        Some(verdicts) if verdicts.len() == batch.len() => Ok(verdicts),
        _ => Err(other(StoreError::Backend(
            "postgres: create_tasks answered an unexpected outcome".into(),
        ))),
    }
}
