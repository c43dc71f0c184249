//! Reads: each one primary-key (or single-row) `SELECT` through a cached prepared statement,
//! except `list`, one range scan of the `(scope, id)` index. The one cache is of tasks read in
//! a terminal state, which never change again ([`crate::settled`]), so every read sees every
//! committed write of every node. A read whose connection dies under it
//! (the server terminated it, a reset) runs once more on a fresh connection ([`rows`]).

use std::sync::Arc;

use deadpool_postgres::Object;
use tasks_core::{Task, TaskId, Timestamp};
use tasks_runtime::{Scope, Snapshot, StoreError, Work};
use tokio_postgres::types::{Json, ToSql};
use tokio_postgres::Row;

/// The rows of `statement` (one of [`crate::sql::Sql`]'s) with `params`, on a pooled
/// connection. When that connection dies under it ([`backend::connection_lost`]), the
/// connection leaves the pool and the read runs once more on a fresh one: a read changes
/// nothing, so running it again is safe, and one dead connection does not fail a request.
pub(crate) async fn rows(
    db: &Db,
    statement: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>, StoreError> {
    let mut retried = false;
    loop {
        let client = db.client().await?;
        let read = async {
            let prepared = client.prepare_cached(statement).await?;
            client.query(&prepared, params).await
        };
        match read.await {
            Ok(rows) => return Ok(rows),
            Err(error) if !retried && backend::connection_lost(&error) => {
                tracing::debug!(
                    error = %backend::describe(&error),
                    "a read lost its connection; reading again on a fresh one"
                );
                drop(Object::take(client));
                retried = true;
            }
            Err(error) => return Err(backend::sql(error)),
        }
    }
}

use crate::backend;
use crate::db::Db;
use crate::sql::ms;
use crate::text::storable;

/// [`tasks_runtime::Store::get`].
pub(crate) async fn get(
    db: &Db,
    scope: &Scope,
    id: &TaskId,
    now: Timestamp,
) -> Result<Option<Snapshot>, StoreError> {
    if !storable(id.as_str()) || !storable(scope.as_str()) {
        return Ok(None);
    }
    if let Some(settled) = db.settled.get(scope, id, now) {
        return Ok(Some(settled));
    }
    let rows = rows(db, &db.sql.get, &[&id.as_str(), &scope.as_str(), &ms(now)]).await?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let Json(task): Json<Task> = row.try_get(0).map_err(backend::corrupt)?;
    let snapshot = Snapshot {
        task: Arc::new(task),
        scope: scope.clone(),
    };
    db.settled.keep(&snapshot);
    Ok(Some(snapshot))
}

/// [`tasks_runtime::Store::list`]: one `SELECT … ORDER BY id LIMIT` on the scope's index.
pub(crate) async fn list(
    db: &Db,
    scope: &Scope,
    after: Option<&TaskId>,
    limit: usize,
    now: Timestamp,
) -> Result<Vec<Snapshot>, StoreError> {
    if !storable(scope.as_str()) || after.is_some_and(|id| !storable(id.as_str())) {
        return Ok(Vec::new());
    }
    let after = after.map_or("", TaskId::as_str);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = rows(
        db,
        &db.sql.list,
        &[&scope.as_str(), &after, &ms(now), &limit],
    )
    .await?;
    rows.iter()
        .map(|row| {
            let Json(task): Json<Task> = row.try_get(0).map_err(backend::corrupt)?;
            Ok(Snapshot {
                task: Arc::new(task),
                scope: scope.clone(),
            })
        })
        .collect()
}

/// [`tasks_runtime::Store::load`]: one `SELECT … WHERE id = ANY($1)`.
pub(crate) async fn load(
    db: &Db,
    ids: &[TaskId],
    now: Timestamp,
) -> Result<Vec<Snapshot>, StoreError> {
    let ids: Vec<&str> = ids
        .iter()
        .map(TaskId::as_str)
        .filter(|id| storable(id))
        .collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = rows(db, &db.sql.load, &[&ids, &ms(now)]).await?;
    rows.iter()
        .map(|row| {
            let Json(task): Json<Task> = row.try_get(0).map_err(backend::corrupt)?;
            let scope: String = row.try_get(1).map_err(backend::corrupt)?;
            Ok(Snapshot {
                task: Arc::new(task),
                scope: Scope::new(scope),
            })
        })
        .collect()
}

/// [`tasks_runtime::Store::work`]: `None` once the task is terminal (its work was cleared).
pub(crate) async fn work(
    db: &Db,
    scope: &Scope,
    id: &TaskId,
) -> Result<Option<Arc<Work>>, StoreError> {
    if !storable(id.as_str()) || !storable(scope.as_str()) {
        return Ok(None);
    }
    let rows = rows(db, &db.sql.work, &[&id.as_str(), &scope.as_str()]).await?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let work: Option<Json<Work>> = row.try_get(0).map_err(backend::corrupt)?;
    Ok(work.map(|Json(work)| Arc::new(work)))
}

/// [`tasks_runtime::Store::task_count`]: the `counts` row, exact (expired but unreaped tasks
/// included).
/// How many tasks unexpired at `now` are in each status.
pub(crate) async fn status_counts(
    db: &Db,
    now: Timestamp,
) -> Result<tasks_runtime::StatusCounts, StoreError> {
    let now = ms(now);
    let mut counts = tasks_runtime::StatusCounts::default();
    for row in rows(db, &db.sql.status_counts, &[&now]).await? {
        let status: String = row.try_get(0).map_err(backend::sql)?;
        let count: i64 = row.try_get(1).map_err(backend::sql)?;
        let status = tasks_core::TaskStatus::ALL
            .into_iter()
            .find(|known| known.as_str() == status)
            .ok_or_else(|| backend::corrupt(format!("unknown task status {status:?}")))?;
        counts.add(status, u64::try_from(count).unwrap_or(0));
    }
    Ok(counts)
}

pub(crate) async fn count(db: &Db) -> Result<usize, StoreError> {
    let rows = rows(db, &db.sql.count, &[]).await?;
    let row = rows
        .first()
        .ok_or_else(|| backend::corrupt("the counts row is missing"))?;
    let total: i64 = row.try_get(0).map_err(backend::sql)?;
    usize::try_from(total).map_err(|_| backend::corrupt(format!("task count {total}")))
}
