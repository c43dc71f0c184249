//! Compare-and-set: one statement that locks the row, writes it when the expected revision,
//! expiry and authority hold (recording the release of the active slot of a task that became
//! terminal, settled by a second statement sent with it), and otherwise answers the current
//! columns, from which the refusal is classified as the in-memory store does.

use std::sync::Arc;

use tasks_core::{Task, TaskUpdate, Timestamp};
use tasks_runtime::{Authority, CasOutcome, Scope, Snapshot, StoreError};
use tokio_postgres::types::{Json, ToSql};
use tokio_postgres::Row;

use crate::backend;
use crate::counters;
use crate::sql::{big, ms};
use crate::store::Db;
use crate::text::storable;

/// [`tasks_runtime::Store::transition`].
pub(crate) async fn transition(
    db: &Db,
    who: Authority<'_>,
    update: TaskUpdate,
    now: Timestamp,
) -> Result<CasOutcome, StoreError> {
    let expected = big(update.expected_revision());
    let task = update.into_task();
    let (owner, scope, generation) = match who {
        Authority::Request(scope) => {
            if !storable(scope.as_str()) {
                return Ok(CasOutcome::NotFound);
            }
            (None, Some(scope.as_str()), None)
        }
        Authority::Worker(lease) => (
            Some(lease.node.as_bytes().as_slice()),
            None,
            Some(big(lease.generation)),
        ),
    };
    if !storable(task.id().as_str()) {
        return Ok(CasOutcome::NotFound);
    }
    let terminal = task.is_terminal();
    let token = counters::token()?;
    let client = db.client().await?;
    let statement = client
        .prepare_cached(&db.sql.cas)
        .await
        .map_err(backend::sql)?;
    let (id, revision, status) = (task.id().as_str(), big(task.revision()), task.status());
    let (created_at, expires_at, stored, now_ms) = (
        ms(task.created_at()),
        task.expires_at().map(ms),
        Json(&task),
        ms(now),
    );
    let params: [&(dyn ToSql + Sync); 13] = [
        &id,
        &expected,
        &revision,
        &status.as_str(),
        &created_at,
        &expires_at,
        &stored,
        &terminal,
        &now_ms,
        &owner,
        &scope,
        &generation,
        &token,
    ];
    let write = client.query_opt(&statement, &params);
    let row = if terminal {
        // A terminal write records the release of its scope's active slot as row `token`;
        // settling it is sent with the write (one round trip) and runs right after its
        // commit, without waiting for the WAL flush. It is a no-op when nothing was released.
        let (row, settled) = futures_util::join!(write, counters::settle(&client, &db.sql, token));
        if let Err(error) = settled {
            tracing::warn!(
                error = %backend::describe(&error),
                "settling a terminal transition's release; the reaper will"
            );
        }
        row
    } else {
        write.await
    }
    .map_err(backend::sql)?;
    let Some(row) = row else {
        return Ok(CasOutcome::NotFound);
    };
    let current = Current::read(&row).map_err(backend::sql)?;
    if current.committed {
        db.hint(task.id(), task.revision());
        let scope = match who {
            Authority::Request(scope) => scope.clone(),
            Authority::Worker(_) => Scope::new(current.scope),
        };
        return Ok(CasOutcome::Committed(Snapshot {
            task: Arc::new(task),
            scope,
        }));
    }
    classify(who, current, expected, now, &task)
}

/// The columns the statement answers.
struct Current {
    committed: bool,
    scope: String,
    revision: i64,
    expires_at_ms: Option<i64>,
    owner: Option<Vec<u8>>,
    generation: i64,
    /// The stored task; only when nothing was written.
    task: Option<Json<Task>>,
}

impl Current {
    fn read(row: &Row) -> Result<Self, tokio_postgres::Error> {
        Ok(Current {
            committed: row.try_get(0)?,
            scope: row.try_get(1)?,
            revision: row.try_get(2)?,
            expires_at_ms: row.try_get(3)?,
            owner: row.try_get(4)?,
            generation: row.try_get(5)?,
            task: row.try_get(6)?,
        })
    }
}

/// Why the write was refused, in the in-memory store's order: expired or another scope's is
/// `NotFound`, a stale lease `Fenced` (before any revision check), a stale revision `Conflict`.
fn classify(
    who: Authority<'_>,
    current: Current,
    expected: i64,
    now: Timestamp,
    task: &Task,
) -> Result<CasOutcome, StoreError> {
    if current.expires_at_ms.is_some_and(|at| at <= ms(now)) {
        return Ok(CasOutcome::NotFound);
    }
    match who {
        Authority::Request(scope) if current.scope != scope.as_str() => {
            return Ok(CasOutcome::NotFound)
        }
        Authority::Worker(lease)
            if current.owner.as_deref() != Some(lease.node.as_bytes().as_slice())
                || current.generation != big(lease.generation) =>
        {
            return Ok(CasOutcome::Fenced)
        }
        _ => {}
    }
    if current.revision != expected {
        let Some(Json(stored)) = current.task else {
            return Err(backend::corrupt(
                "a refused write came back without the task",
            ));
        };
        return Ok(CasOutcome::Conflict(Snapshot {
            task: Arc::new(stored),
            scope: Scope::new(current.scope),
        }));
    }
    Err(StoreError::Backend(format!(
        "postgres: compare-and-set of task {:?} changed nothing although its conditions hold",
        task.id().as_str()
    )))
}
