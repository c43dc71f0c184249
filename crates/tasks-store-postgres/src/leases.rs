//! Node leases and claims of orphaned tasks.
use tasks_core::{TaskId, Timestamp};
use tasks_runtime::store::{Claimed, Lease, Liveness, NodeId, Snapshot, StoreError};
use tokio_postgres::Row;

use crate::backend;
use crate::db::Db;
use crate::quarantine::{self, Opened, Stored};
use crate::sql::{big, ms};

/// [`tasks_runtime::store::Store::register_node`].
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
            &[
                &node.as_bytes().as_slice(),
                &ms(now.plus_millis(lease_ms)),
                &ms(now),
            ],
        )
        .await
        .map_err(backend::sql)?;
    Ok(())
}

/// [`tasks_runtime::store::Store::heartbeat`]: an expired lease is deleted in the same statement,
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

/// [`tasks_runtime::store::Store::retire_node`].
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

/// [`tasks_runtime::store::Store::claim_orphans`]: first forgets the expired nodes (their later
/// heartbeats answer `Lost`; a heartbeat racing this waits for the row and re-checks it), then
/// claims in one statement with a fresh snapshot, so a node whose renewal committed first is
/// alive to the claim. A claimed row that does not decode is quarantined (its task fails) and
/// left out; the claim runs again for as many more as were left out, so a pass that meets bad
/// rows still answers up to `max` tasks. A quarantine that fails after the claim committed is
/// [`StoreError::Interrupted`], so the runtime adopts what the claim took ([`held`]).
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
    let mut claimed = Vec::new();
    while claimed.len() < max {
        let want = max - claimed.len();
        let rows = client
            .query(&claim, &[&node.as_bytes().as_slice(), &ms(now), &big(want)])
            .await
            .map_err(backend::sql)?;
        for row in &rows {
            let task = read(db, row, node, now).await.map_err(|error| {
                StoreError::Interrupted(format!("{error} (quarantining a claimed task)"))
            })?;
            if let Some(task) = task {
                db.hint(task.snapshot.task.id(), task.snapshot.task.revision());
                claimed.push(task);
            }
        }
        if rows.len() < want {
            break;
        }
    }
    Ok(claimed)
}

/// [`tasks_runtime::store::Store::held`]: one read, or more when rows that do not decode were left
/// out (quarantined, as [`claim`] does).
pub(crate) async fn held(
    db: &Db,
    node: &NodeId,
    now: Timestamp,
    after: Option<&TaskId>,
    max: usize,
) -> Result<Vec<Claimed>, StoreError> {
    let mut after = after.map_or_else(String::new, |id| id.as_str().to_owned());
    let mut held = Vec::new();
    loop {
        let want = max - held.len();
        let rows = db
            .rows(
                &db.sql.held,
                &[&node.as_bytes().as_slice(), &ms(now), &after, &big(want)],
            )
            .await?;
        for row in &rows {
            after = row.try_get(0).map_err(backend::sql)?;
            held.extend(read(db, row, node, now).await?);
        }
        if rows.len() < want || held.len() >= max {
            return Ok(held);
        }
    }
}

/// [`tasks_runtime::store::Store::charge_attempt`]: one statement, so the lease is checked and the
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

/// A claimed or held task of `node` from its row (the [`crate::sql::Sql::claim`] columns), or
/// `None` when the row does not decode (it is quarantined) or is terminal by now.
async fn read(
    db: &Db,
    row: &Row,
    node: &NodeId,
    now: Timestamp,
) -> Result<Option<Claimed>, StoreError> {
    let generation: i64 = row.try_get(8).map_err(backend::sql)?;
    let attempt: i32 = row.try_get(9).map_err(backend::sql)?;
    let Opened::Read {
        scope,
        task: Some(task),
        work: Some(work),
    } = quarantine::open(db, Stored::read(row, 0)?, true, now).await?
    else {
        return Ok(None);
    };
    let lease = Lease {
        node: *node,
        generation: u64::try_from(generation)
            .map_err(|_| backend::corrupt(format!("generation {generation}")))?,
        attempt: u32::try_from(attempt)
            .map_err(|_| backend::corrupt(format!("attempt {attempt}")))?,
    };
    Ok(Some(Claimed {
        snapshot: Snapshot { task, scope },
        work,
        lease,
    }))
}
