//! Creating a task (phase 2 of the capacity counters): a reservation of both counters in a
//! short transaction that commits without waiting for the WAL flush, then the insert in a
//! transaction of its own that commits with one, both sent at once (one round trip). A refused
//! create's insert statement gives its reservation back; a create whose insert statement
//! failed settles it (see [Capacity counters](crate#capacity-counters)).

use std::sync::Arc;

use deadpool_postgres::ClientWrapper;
use tasks_core::{CapacityLimit, NewTask};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::{Created, Lease, NodeId, Snapshot, StoreError, Work};
use tokio_postgres::types::{Json, ToSql};
use tokio_postgres::Row;

use crate::backend;
use crate::counters;
use crate::sql::{big, ms};
use crate::store::Db;
use crate::text::storable;

/// [`tasks_runtime::Store::create`]. Refusals are decided in the order of the in-memory
/// store: `max_tasks`, then `max_active_per_scope`, then a taken id.
pub(crate) async fn create(
    db: &Db,
    task: NewTask,
    work: Work,
    limits: CreateLimits,
    owner: &NodeId,
) -> Result<Created, StoreError> {
    let task = task.into_task();
    if !storable(task.id().as_str()) || !storable(work.scope.as_str()) {
        return Err(StoreError::Backend(
            "postgres: a task id or scope containing U+0000 cannot be stored".into(),
        ));
    }
    let token = counters::token()?;
    let client = db.client().await?;
    let reserve = client
        .prepare_cached(&db.sql.reserve)
        .await
        .map_err(backend::sql)?;
    let insert = client
        .prepare_cached(&db.sql.insert)
        .await
        .map_err(backend::sql)?;
    let scope = work.scope.as_str();
    let (max_tasks, max_active) = (big(limits.max_tasks), big(limits.max_active_per_scope));
    let reserve_params: [&(dyn ToSql + Sync); 4] = [&token, &scope, &max_tasks, &max_active];
    let (id, revision, status) = (task.id().as_str(), big(task.revision()), task.status());
    let (created_at, expires_at) = (ms(task.created_at()), task.expires_at().map(ms));
    let (stored, described, node) = (Json(&task), Json(&work), owner.as_bytes().as_slice());
    let insert_params: [&(dyn ToSql + Sync); 10] = [
        &token,
        &id,
        &scope,
        &revision,
        &status.as_str(),
        &created_at,
        &expires_at,
        &stored,
        &described,
        &node,
    ];
    // Pipelined: `join!` polls the reservation first, so it is sent first, and the server runs
    // the two in order, each in its own transaction. The insert inserts nothing unless the
    // reservation holds both counters.
    let (reserved, inserted) = futures_util::join!(
        client.query_one(&reserve, &reserve_params),
        client.query_one(&insert, &insert_params),
    );
    match decide(reserved, inserted) {
        Outcome::Stored => {}
        Outcome::Refused { refusal, settle } => {
            if settle {
                release(db, &client, token).await;
            }
            return Err(refusal);
        }
        Outcome::Failed(error) => {
            release(db, &client, token).await;
            return Err(error);
        }
    }
    db.hint(task.id(), task.revision());
    let lease = Lease {
        node: *owner,
        generation: 1,
        attempt: 1,
    };
    Ok(Created {
        snapshot: Snapshot {
            task: Arc::new(task),
            scope: work.scope,
        },
        lease,
    })
}

/// What became of a create.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// The task and its counts are committed.
    Stored,
    /// Refused; `settle`: a reservation is still committed and must be released (the insert
    /// statement, which gives it back otherwise, failed).
    Refused { refusal: StoreError, settle: bool },
    /// A statement failed, or its answer did not decode; whatever reservation is left must be
    /// released (settling is a no-op when the insert committed, or when nothing was reserved).
    Failed(StoreError),
}

/// The outcome from the answers of the reservation (`counted`, `active`) and of the insert
/// (`held`, `inserted`).
fn decide(
    reserved: Result<Row, tokio_postgres::Error>,
    inserted: Result<Row, tokio_postgres::Error>,
) -> Outcome {
    let flags = |row: Result<Row, tokio_postgres::Error>, first: usize| {
        row.and_then(|row| {
            Ok((
                row.try_get::<_, bool>(first)?,
                row.try_get::<_, bool>(first + 1)?,
            ))
        })
        .map_err(backend::sql)
    };
    let (counted, active) = match flags(reserved, 1) {
        Ok(flags) => flags,
        Err(error) => return Outcome::Failed(error),
    };
    classify(counted, active, flags(inserted, 0))
}

/// [`decide`] once the reservation's answer is known.
fn classify(counted: bool, active: bool, inserted: Result<(bool, bool), StoreError>) -> Outcome {
    if !counted {
        // Nothing was raised and no row written: nothing to settle.
        return Outcome::Refused {
            refusal: StoreError::Capacity(CapacityLimit::MaxTasks),
            settle: false,
        };
    }
    let refusal = if active {
        StoreError::Duplicate
    } else {
        StoreError::Capacity(CapacityLimit::MaxActiveTasksPerScope)
    };
    match inserted {
        Ok((_, true)) => Outcome::Stored,
        // The insert statement gave the reservation back.
        Ok((true, false)) => Outcome::Refused {
            refusal,
            settle: false,
        },
        Ok((false, _)) => Outcome::Failed(StoreError::Backend(
            "postgres: the create's reservation was settled before its insert ran".into(),
        )),
        // A partial reservation is a refusal whatever became of the insert statement; it gave
        // nothing back if it failed.
        Err(_) if !active => Outcome::Refused {
            refusal,
            settle: true,
        },
        Err(error) => Outcome::Failed(error),
    }
}

/// Settles the reservation `token` of a create that stored nothing. On a broken connection
/// another pooled one is used. A failure is logged and left to the reaper, which settles the
/// row once it is [stale](crate::sql::STALE); the capacity it holds is unavailable until then.
async fn release(db: &Db, client: &ClientWrapper, token: i64) {
    let settled = if client.is_closed() {
        match db.client().await {
            Ok(other) => counters::settle(&other, &db.sql, token)
                .await
                .map_err(|e| backend::describe(&e)),
            Err(error) => Err(error.to_string()),
        }
    } else {
        counters::settle(client, &db.sql, token)
            .await
            .map_err(|e| backend::describe(&e))
    };
    if let Err(error) = settled {
        tracing::warn!(
            %error,
            "settling the reservation of a create that stored nothing; the reaper will"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(refusal: StoreError, settle: bool) -> Outcome {
        Outcome::Refused { refusal, settle }
    }

    #[test]
    fn refusals_follow_the_in_memory_order_and_say_what_to_settle() {
        let failed = || Err(StoreError::Backend("gone".into()));
        let max_tasks = StoreError::Capacity(CapacityLimit::MaxTasks);
        let max_active = StoreError::Capacity(CapacityLimit::MaxActiveTasksPerScope);
        // The insert statement found a reservation and gave it back, or it failed.
        for (counted, active, inserted, outcome) in [
            (
                false,
                false,
                Ok((false, false)),
                refused(max_tasks.clone(), false),
            ),
            (false, false, failed(), refused(max_tasks, false)),
            (
                true,
                false,
                Ok((true, false)),
                refused(max_active.clone(), false),
            ),
            (true, false, failed(), refused(max_active, true)),
            (
                true,
                true,
                Ok((true, false)),
                refused(StoreError::Duplicate, false),
            ),
            (true, true, Ok((true, true)), Outcome::Stored),
            (
                true,
                true,
                failed(),
                Outcome::Failed(StoreError::Backend("gone".into())),
            ),
        ] {
            assert_eq!(
                classify(counted, active, inserted.clone()),
                outcome,
                "{counted} {active} {inserted:?}"
            );
        }
        assert!(matches!(
            classify(true, true, Ok((false, false))),
            Outcome::Failed(StoreError::Backend(message)) if message.contains("settled")
        ));
    }
}
