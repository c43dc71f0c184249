//! Unreadable rows: the poison-message rule, one bad row fails one task, never the store.
//!
//! Every read that decodes a task row reads it through [`open`]. A row whose `task` or `work`
//! does not decode (JSON of the wrong shape, nesting past the parser's limit, a member named
//! after one of `serde_json`'s markers, an invariant `Task` refuses, a task whose id, revision
//! or status disagree with the row's columns; written by a bug, another version or by hand) is
//! *quarantined* there, by one guarded statement (one transaction): its original `task` and
//! `work` are copied as text into `quarantined_tasks` with the reason (`ON CONFLICT (id) DO
//! NOTHING`), and the row, if still at the revision that was read, becomes the `failed` task of
//! [`Task::unreadable`] one revision on, its work cleared, its owner and generation kept (as a
//! terminal transition keeps them). An active row's release of its scope's active slot is
//! recorded and settled as a terminal transition's is ([`crate::counters`]). A row whose id is
//! not a task id is copied and deleted, the counters lowered as a reap does. So two nodes
//! meeting the same row quarantine it once; the other finds the row changed and reads it again.
//!
//! Each quarantine is logged once (`warn`, with the task id and the reason), hinted on the
//! change feed like any commit, and counted ([`Db::quarantined`]). The reason is for operators
//! only: a client sees the failed task's error, -32603 [`tasks_core::MESSAGE_UNREADABLE`].

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tasks_core::{Task, TaskId, Timestamp};
use tasks_runtime::store::{Snapshot, StoreError};
use tasks_runtime::{Scope, Work};
use tokio_postgres::Row;

use crate::backend;
use crate::counters;
use crate::db::Db;
use crate::sql::{self, ms};

/// A task row as a decoding read selects it: the columns [`sql::row`] names, in order.
pub(crate) struct Stored {
    id: String,
    scope: String,
    revision: i64,
    status: String,
    created_at_ms: i64,
    expires_at_ms: Option<i64>,
    /// The `task` column as text, when the read selected it.
    task: Option<String>,
    /// The `work` column as text, when the read selected it and it is not NULL.
    work: Option<String>,
}

impl Stored {
    /// The [`sql::row`] columns of `row`, from column `at` on.
    pub(crate) fn read(row: &Row, at: usize) -> Result<Stored, StoreError> {
        let get = backend::sql;
        Ok(Stored {
            id: row.try_get(at).map_err(get)?,
            scope: row.try_get(at + 1).map_err(get)?,
            revision: row.try_get(at + 2).map_err(get)?,
            status: row.try_get(at + 3).map_err(get)?,
            created_at_ms: row.try_get(at + 4).map_err(get)?,
            expires_at_ms: row.try_get(at + 5).map_err(get)?,
            task: row.try_get(at + 6).map_err(get)?,
            work: row.try_get(at + 7).map_err(get)?,
        })
    }
}

/// What a row reads as.
pub(crate) enum Opened {
    /// It decoded: its scope, and its task and work where the read selected them.
    Read {
        scope: Scope,
        task: Option<Arc<Task>>,
        work: Option<Arc<Work>>,
    },
    /// It did not and was quarantined (by this call or another node's): it now reads as this
    /// `failed` task, or as nothing (its id was invalid, or the row is gone).
    Quarantined(Option<Snapshot>),
}

impl Opened {
    /// The task read, or the one standing in its place.
    pub(crate) fn snapshot(self) -> Option<Snapshot> {
        match self {
            Opened::Read {
                scope,
                task: Some(task),
                ..
            } => Some(Snapshot { task, scope }),
            Opened::Read { .. } => None,
            Opened::Quarantined(snapshot) => snapshot,
        }
    }
}

/// Decodes `stored`, or quarantines it (see the module docs) at `now` and answers what it
/// reads as now. `work_required`: the row must have work (a task being claimed or held).
///
/// # Errors
/// Only the database's, while quarantining; a row that does not decode is never an error.
pub(crate) async fn open(
    db: &Db,
    stored: Stored,
    work_required: bool,
    now: Timestamp,
) -> Result<Opened, StoreError> {
    let mut stored = stored;
    // A row that changed under a quarantine is read again, at most a few times.
    for _ in 0..3 {
        let reason = match decode(&stored, work_required) {
            Ok((task, work)) => {
                return Ok(Opened::Read {
                    scope: Scope::new(std::mem::take(&mut stored.scope)),
                    task: task.map(Arc::new),
                    work: work.map(Arc::new),
                })
            }
            Err(reason) => reason,
        };
        match quarantine(db, &stored, &reason, now).await? {
            Some(done) => return Ok(Opened::Quarantined(done)),
            None => match reread(db, &stored).await? {
                Some(again) => stored = again,
                None => return Ok(Opened::Quarantined(None)),
            },
        }
    }
    Err(StoreError::Unavailable(format!(
        "postgres: task {:?} kept changing while it was being quarantined",
        stored.id
    )))
}

/// The row's task and work, decoded and checked against its columns; why not, otherwise.
fn decode(stored: &Stored, work_required: bool) -> Result<(Option<Task>, Option<Work>), String> {
    let id = TaskId::parse(&stored.id).map_err(|e| format!("invalid id: {e}"))?;
    let task = match &stored.task {
        Some(text) => {
            let task: Task = decode_text(text).map_err(|e| format!("task does not decode: {e}"))?;
            if *task.id() != id
                || i64::try_from(task.revision()).ok() != Some(stored.revision)
                || task.status().as_str() != stored.status
            {
                return Err(format!(
                    "the stored task (id {:?}, revision {}, status {}) disagrees with its row",
                    task.id().as_str(),
                    task.revision(),
                    task.status().as_str()
                ));
            }
            Some(task)
        }
        None => None,
    };
    let work = match &stored.work {
        Some(text) => {
            Some(decode_text::<Work>(text).map_err(|e| format!("work does not decode: {e}"))?)
        }
        None if work_required && sql::ACTIVE.contains(&stored.status.as_str()) => {
            return Err("an active task has no work".into())
        }
        None => None,
    };
    Ok((task, work))
}

/// `text` as a `T`, with plain member names: a text with a member named after a marker, at
/// any depth, is refused rather than read by `serde_json`'s rules
/// ([`tasks_core::json::check_text`]).
fn decode_text<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    tasks_core::json::check_text(text)?;
    serde_json::from_str(text)
}

/// Quarantines `stored` if the row is still at the revision read: `Some` with what it reads as
/// now, or `None` when the row changed (or went) meanwhile.
async fn quarantine(
    db: &Db,
    stored: &Stored,
    reason: &str,
    now: Timestamp,
) -> Result<Option<Option<Snapshot>>, StoreError> {
    let client = db.client().await?;
    let Ok(id) = TaskId::parse(&stored.id) else {
        let statement = client
            .prepare_cached(&db.sql.quarantine_gone)
            .await
            .map_err(backend::sql)?;
        let gone: i64 = client
            .query_one(
                &statement,
                &[&stored.id, &stored.revision, &reason, &ms(now)],
            )
            .await
            .map_err(backend::sql)?
            .try_get(0)
            .map_err(backend::sql)?;
        if gone == 0 {
            return Ok(None);
        }
        counted(
            db,
            &stored.id,
            reason,
            "moved to quarantined_tasks and deleted",
        );
        return Ok(Some(None));
    };
    let created_at = Timestamp::from_unix_millis(u64::try_from(stored.created_at_ms).unwrap_or(0));
    let ttl_ms = stored
        .expires_at_ms
        .map(|at| u64::try_from(at.saturating_sub(stored.created_at_ms)).unwrap_or(0));
    let revision = u64::try_from(stored.revision)
        .unwrap_or(0)
        .saturating_add(1);
    let task = Task::unreadable(id, created_at, ttl_ms, revision, now);
    let json = sql::to_json(&task)?;
    let token = counters::token()?;
    let statement = client
        .prepare_cached(&db.sql.quarantine)
        .await
        .map_err(backend::sql)?;
    let Some(row) = client
        .query_opt(
            &statement,
            &[
                &stored.id,
                &stored.revision,
                &reason,
                &ms(now),
                &json,
                &token,
            ],
        )
        .await
        .map_err(backend::sql)?
    else {
        return Ok(None);
    };
    let was_active: bool = row.try_get(0).map_err(backend::sql)?;
    if was_active {
        if let Err(error) = counters::settle_many(&client, &db.sql, &stored.scope, &[token]).await {
            tracing::warn!(
                error = %backend::describe(&error),
                "settling a quarantined task's release; the reaper will"
            );
        }
    }
    db.hint(task.id(), task.revision());
    counted(
        db,
        &stored.id,
        reason,
        "a stored task could not be read: it now reads failed, the original is kept in \
         quarantined_tasks",
    );
    Ok(Some(Some(Snapshot {
        task: Arc::new(task),
        scope: Scope::new(stored.scope.clone()),
    })))
}

/// Logs one quarantine and counts it.
fn counted(db: &Db, id: &str, reason: &str, what: &str) {
    db.quarantined.fetch_add(1, Ordering::Relaxed);
    tracing::warn!(task_id = %id, reason, "{what}; quarantined");
}

/// The row of `stored` as it is now (its task and work when those were read), or `None` when
/// it is gone.
async fn reread(db: &Db, stored: &Stored) -> Result<Option<Stored>, StoreError> {
    let rows = db.rows(&db.sql.reread, &[&stored.id]).await?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let mut again = Stored::read(row, 0)?;
    if stored.task.is_none() {
        again.task = None;
    }
    if stored.work.is_none() {
        again.work = None;
    }
    Ok(Some(again))
}
