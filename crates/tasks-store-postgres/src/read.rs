//! Reads: each one primary-key (or single-row) `SELECT` through a cached prepared statement,
//! except `list`, one range scan of the `(scope, id)` index. The one cache is of tasks read in
//! a terminal state, which never change again ([`crate::settled`]), so every read sees every
//! committed write of every node. A read whose connection dies under it
//! (the server terminated it, a reset) runs once more on a fresh connection ([`Db::rows`]).
//! Each row read is decoded through [`crate::quarantine`], so one that does not decode fails
//! its own task and no other read.

use std::sync::Arc;

use tasks_core::{TaskId, Timestamp};
use tasks_runtime::store::{Snapshot, StoreError};
use tasks_runtime::{Scope, Work};

use crate::backend;
use crate::db::Db;
use crate::quarantine::{self, Opened, Stored};
use crate::sql::ms;
use crate::text::storable;

/// [`tasks_runtime::store::Store::get`]. A row that does not decode is quarantined and answered as
/// the `failed` task standing in its place ([`crate::quarantine`]).
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
    let rows = db
        .rows(&db.sql.get, &[&id.as_str(), &scope.as_str(), &ms(now)])
        .await?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let snapshot = snapshot(db, Stored::read(row, 0)?, now).await?;
    if let Some(snapshot) = &snapshot {
        db.settled.keep(snapshot);
    }
    Ok(snapshot)
}

/// The task of a row read with its task ([`quarantine::open`]).
async fn snapshot(db: &Db, stored: Stored, now: Timestamp) -> Result<Option<Snapshot>, StoreError> {
    Ok(quarantine::open(db, stored, false, now).await?.snapshot())
}

/// The tasks of `rows`, in order, each read or quarantined ([`quarantine::open`]).
async fn snapshots(
    db: &Db,
    rows: &[tokio_postgres::Row],
    now: Timestamp,
) -> Result<Vec<Snapshot>, StoreError> {
    let mut snapshots = Vec::with_capacity(rows.len());
    for row in rows {
        snapshots.extend(snapshot(db, Stored::read(row, 0)?, now).await?);
    }
    Ok(snapshots)
}

/// [`tasks_runtime::store::Store::list`]: one `SELECT … ORDER BY id LIMIT` on the scope's index. A
/// row that does not decode is quarantined and listed as the `failed` task in its place.
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
    let rows = db
        .rows(&db.sql.list, &[&scope.as_str(), &after, &ms(now), &limit])
        .await?;
    snapshots(db, &rows, now).await
}

/// [`tasks_runtime::store::Store::load`]: one `SELECT … WHERE id = ANY($1)`; a row that does not
/// decode as [`list`] answers it.
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
    let rows = db.rows(&db.sql.load, &[&ids, &ms(now)]).await?;
    snapshots(db, &rows, now).await
}

/// [`tasks_runtime::store::Store::work`]: `None` once the task is terminal (its work was cleared),
/// and for a row whose work does not decode (it is quarantined: its task fails).
pub(crate) async fn work(
    db: &Db,
    scope: &Scope,
    id: &TaskId,
) -> Result<Option<Arc<Work>>, StoreError> {
    if !storable(id.as_str()) || !storable(scope.as_str()) {
        return Ok(None);
    }
    let rows = db
        .rows(&db.sql.work, &[&id.as_str(), &scope.as_str()])
        .await?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let now = tasks_runtime::Clock::now(&*db.clock);
    Ok(
        match quarantine::open(db, Stored::read(row, 0)?, false, now).await? {
            Opened::Read { work, .. } => work,
            Opened::Quarantined(_) => None,
        },
    )
}

/// [`tasks_runtime::store::Store::task_count`]: the `counts` row, exact (expired but unreaped tasks
/// included).
/// How many tasks unexpired at `now` are in each status.
pub(crate) async fn status_counts(
    db: &Db,
    now: Timestamp,
) -> Result<tasks_runtime::store::StatusCounts, StoreError> {
    let now = ms(now);
    let mut counts = tasks_runtime::store::StatusCounts::default();
    for row in db.rows(&db.sql.status_counts, &[&now]).await? {
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
    let rows = db.rows(&db.sql.count, &[]).await?;
    let row = rows
        .first()
        .ok_or_else(|| backend::corrupt("the counts row is missing"))?;
    let total: i64 = row.try_get(0).map_err(backend::sql)?;
    usize::try_from(total).map_err(|_| backend::corrupt(format!("task count {total}")))
}
