//! Node leases and claims of orphaned tasks.

use std::sync::Arc;

use tasks_core::{Task, TaskId, Timestamp};
use tasks_runtime::{Claimed, Lease, Liveness, NodeId, Scope, Snapshot, StoreError, Work};
use tokio_postgres::types::Json;
use tokio_postgres::Row;

use crate::backend;
use crate::db::Db;
use crate::sql::{big, ms};

/// [`tasks_runtime::Store::register_node`].
pub(crate) async fn register(
    db: &Db,
    node: &NodeId,
    now: Timestamp,
    lease_ms: u64,
) -> Result<(), StoreError> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(&db.sql.register)
        .await
        .map_err(backend::sql)?;
    client
        .execute(
            &statement,
            &[&node.as_bytes().as_slice(), &ms(now.plus_millis(lease_ms))],
        )
        .await
        .map_err(backend::sql)?;
    Ok(())
}

/// [`tasks_runtime::Store::heartbeat`]: an expired lease is deleted in the same statement,
/// so it is never revived, and a missing node is [`Liveness::Lost`].
pub(crate) async fn heartbeat(
    db: &Db,
    node: &NodeId,
    now: Timestamp,
    lease_ms: u64,
) -> Result<Liveness, StoreError> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(&db.sql.heartbeat)
        .await
        .map_err(backend::sql)?;
    let renewed: bool = client
        .query_one(
            &statement,
            &[
                &node.as_bytes().as_slice(),
                &ms(now.plus_millis(lease_ms)),
                &ms(now),
            ],
        )
        .await
        .map_err(backend::sql)?
        .try_get(0)
        .map_err(backend::sql)?;
    Ok(if renewed {
        Liveness::Alive
    } else {
        Liveness::Lost
    })
}

/// [`tasks_runtime::Store::retire_node`].
pub(crate) async fn retire(db: &Db, node: &NodeId) -> Result<(), StoreError> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(&db.sql.retire)
        .await
        .map_err(backend::sql)?;
    client
        .execute(&statement, &[&node.as_bytes().as_slice()])
        .await
        .map_err(backend::sql)?;
    Ok(())
}

/// [`tasks_runtime::Store::claim_orphans`]: first forgets the expired nodes (their later
/// heartbeats answer `Lost`; a heartbeat racing this waits for the row and re-checks it), then
/// claims in one statement with a fresh snapshot, so a node whose renewal committed first is
/// alive to the claim.
pub(crate) async fn claim(
    db: &Db,
    node: &NodeId,
    now: Timestamp,
    max: usize,
) -> Result<Vec<Claimed>, StoreError> {
    let client = db.client().await?;
    let expire = client
        .prepare_cached(&db.sql.expire_nodes)
        .await
        .map_err(backend::sql)?;
    let claim = client
        .prepare_cached(&db.sql.claim)
        .await
        .map_err(backend::sql)?;
    client
        .execute(&expire, &[&ms(now)])
        .await
        .map_err(backend::sql)?;
    if max == 0 {
        return Ok(Vec::new());
    }
    let rows = client
        .query(&claim, &[&node.as_bytes().as_slice(), &ms(now), &big(max)])
        .await
        .map_err(backend::sql)?;
    let claimed = decodable(&rows, node);
    for task in &claimed {
        db.hint(task.snapshot.task.id(), task.snapshot.task.revision());
    }
    Ok(claimed)
}

/// [`tasks_runtime::Store::held`]: one read.
pub(crate) async fn held(
    db: &Db,
    node: &NodeId,
    now: Timestamp,
    after: Option<&TaskId>,
    max: usize,
) -> Result<Vec<Claimed>, StoreError> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(&db.sql.held)
        .await
        .map_err(backend::sql)?;
    let after = after.map_or("", TaskId::as_str);
    let rows = client
        .query(
            &statement,
            &[&node.as_bytes().as_slice(), &ms(now), &after, &big(max)],
        )
        .await
        .map_err(backend::sql)?;
    Ok(decodable(&rows, node))
}

/// The rows of a claim or of `held` that decode: one that does not (written by hand, a bug or
/// another version) is left out with a warning naming its id, so it fails only its own task
/// and every other row is still claimed and run (the poison-message rule).
fn decodable(rows: &[Row], node: &NodeId) -> Vec<Claimed> {
    rows.iter()
        .filter_map(|row| match claimed(row, node) {
            Ok(claimed) => Some(claimed),
            Err(error) => {
                let id: Option<String> = row.try_get(5).ok();
                tracing::warn!(task_id = id.as_deref().unwrap_or(""), %error,
                    "a claimed task does not decode: left out of the claim");
                None
            }
        })
        .collect()
}

/// [`tasks_runtime::Store::charge_attempt`]: one statement, so the lease is checked and the
/// attempt raised under the row's lock. Durable on return (the pool's connections commit with
/// `synchronous_commit` on).
pub(crate) async fn charge_attempt(
    db: &Db,
    id: &TaskId,
    lease: &Lease,
    now: Timestamp,
) -> Result<Option<Lease>, StoreError> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(&db.sql.charge_attempt)
        .await
        .map_err(backend::sql)?;
    let row = client
        .query_opt(
            &statement,
            &[
                &id.as_str(),
                &lease.node.as_bytes().as_slice(),
                &big(lease.generation),
                &ms(now),
                &i64::from(lease.attempt),
            ],
        )
        .await
        .map_err(backend::sql)?;
    let Some(row) = row else {
        return Ok(None);
    };
    let attempt: i32 = row.try_get(0).map_err(backend::sql)?;
    let attempt =
        u32::try_from(attempt).map_err(|_| backend::corrupt(format!("attempt {attempt}")))?;
    Ok(Some(Lease { attempt, ..*lease }))
}

fn claimed(row: &Row, node: &NodeId) -> Result<Claimed, StoreError> {
    let scope: String = row.try_get(0).map_err(backend::sql)?;
    let Json(task): Json<Task> = row.try_get(1).map_err(backend::corrupt)?;
    let work: Option<Json<Work>> = row.try_get(2).map_err(backend::corrupt)?;
    let Some(Json(work)) = work else {
        return Err(backend::corrupt("a claimed task has no work"));
    };
    let generation: i64 = row.try_get(3).map_err(backend::sql)?;
    let attempt: i32 = row.try_get(4).map_err(backend::sql)?;
    let lease = Lease {
        node: *node,
        generation: u64::try_from(generation)
            .map_err(|_| backend::corrupt(format!("generation {generation}")))?,
        attempt: u32::try_from(attempt)
            .map_err(|_| backend::corrupt(format!("attempt {attempt}")))?,
    };
    Ok(Claimed {
        snapshot: Snapshot {
            task: Arc::new(task),
            scope: Scope::new(scope),
        },
        work: Arc::new(work),
        lease,
    })
}
