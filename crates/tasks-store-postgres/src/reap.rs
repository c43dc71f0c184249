//! Reaping: expired tasks deleted in batches, each batch one statement that also lowers the
//! counters, so any number of nodes may reap at once and each task is reaped once. A reap also
//! settles stale counter changes (`pending_counts`) left by a node that died or lost its
//! connection between a create's two transactions, or a terminal transition and its
//! settlement.

use tasks_core::{TaskId, Timestamp};
use tasks_runtime::store::StoreError;

use crate::backend;
use crate::counters;
use crate::db::Db;
use crate::sql::ms;

/// How many expired tasks one statement deletes.
const CHUNK: i64 = 500;

/// [`tasks_runtime::store::Store::reap`]. A row that another transaction holds at that moment (a
/// concurrent reaper, or a write about to be refused as expired) is left for that reaper or
/// for the next reap.
pub(crate) async fn reap(db: &Db, now: Timestamp) -> Result<Vec<TaskId>, StoreError> {
    let client = db.client().await?;
    let settled = counters::settle_stale(&client, &db.sql).await?;
    if settled > 0 {
        tracing::info!(
            settled,
            "settled stale capacity reservations or releases (a create or a completion was \
             interrupted between its two steps)"
        );
    }
    let statement = client
        .prepare_cached(&db.sql.reap)
        .await
        .map_err(backend::sql)?;
    let mut reaped = Vec::new();
    loop {
        let rows = client
            .query(&statement, &[&ms(now), &CHUNK])
            .await
            .map_err(backend::sql)?;
        for row in &rows {
            let id: &str = row.try_get(0).map_err(backend::sql)?;
            // A row with an invalid id (written by hand) is reaped all the same; it names no
            // task the runtime could know.
            match TaskId::parse(id) {
                Ok(id) => reaped.push(id),
                Err(error) => {
                    tracing::warn!(task_id = %id, %error, "reaped a row whose id is invalid")
                }
            }
        }
        if i64::try_from(rows.len()).unwrap_or(i64::MAX) < CHUNK {
            return Ok(reaped);
        }
    }
}
