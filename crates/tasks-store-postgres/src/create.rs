//! Creating a task: the insert and both capacity counters in one statement inside one
//! transaction, committed only when all three succeed.

use std::sync::Arc;

use tasks_core::{CapacityLimit, NewTask};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::{Created, Lease, NodeId, Snapshot, StoreError, Work};
use tokio_postgres::types::Json;

use crate::backend;
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
    let mut client = db.client().await?;
    let statement = client
        .prepare_cached(&db.sql.create)
        .await
        .map_err(backend::sql)?;
    let tx = client.transaction().await.map_err(backend::sql)?;
    let row = tx
        .query_one(
            &statement,
            &[
                &task.id().as_str(),
                &work.scope.as_str(),
                &big(task.revision()),
                &task.status().as_str(),
                &ms(task.created_at()),
                &task.expires_at().map(ms),
                &Json(&task),
                &Json(&work),
                &owner.as_bytes().as_slice(),
                &big(limits.max_tasks),
                &big(limits.max_active_per_scope),
            ],
        )
        .await
        .map_err(backend::sql)?;
    let inserted: bool = row.try_get(0).map_err(backend::sql)?;
    let counted: bool = row.try_get(1).map_err(backend::sql)?;
    let active: bool = row.try_get(2).map_err(backend::sql)?;
    let refusal = if !counted {
        Some(StoreError::Capacity(CapacityLimit::MaxTasks))
    } else if !active {
        Some(StoreError::Capacity(CapacityLimit::MaxActiveTasksPerScope))
    } else if !inserted {
        Some(StoreError::Duplicate)
    } else {
        None
    };
    if let Some(refusal) = refusal {
        // Nothing is committed whether or not the rollback reaches the server (a broken
        // connection aborts the transaction too), so the refusal stands either way.
        if let Err(error) = tx.rollback().await {
            tracing::warn!(error = %backend::describe(&error), "rolling back a refused create");
        }
        return Err(refusal);
    }
    tx.commit().await.map_err(backend::sql)?;
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
