//! Counter changes not yet settled (`pending_counts`, phase 2 of the capacity counters): the
//! random token that names one, settling one, and settling the stale ones.

use deadpool_postgres::ClientWrapper as Client;

use crate::backend;
use crate::sql::Sql;

/// How many stale rows one statement settles.
const CHUNK: i64 = 500;

/// A fresh token for a `pending_counts` row: 64 random bits, so tokens of concurrent creates
/// and transitions, on any node, never meet (a collision would only fail that one call: its
/// row's insert breaks the primary key and its transaction rolls back).
pub(crate) fn token() -> Result<i64, tasks_runtime::store::StoreError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| {
        tasks_runtime::store::StoreError::Backend(format!("postgres: no random token: {e}"))
    })?;
    Ok(i64::from_ne_bytes(bytes))
}

/// Settles those of rows `tokens` (releases of scope `scope`) that are still there, in one
/// statement that locks that scope's counter row alone; answers how many.
pub(crate) async fn settle_many(
    client: &Client,
    sql: &Sql,
    scope: &str,
    tokens: &[i64],
) -> Result<i64, tokio_postgres::Error> {
    let statement = client.prepare_cached(&sql.settle_scope).await?;
    client
        .query_one(&statement, &[&tokens, &scope])
        .await?
        .try_get(1)
}

/// Settles every `pending_counts` row older than [`crate::sql::STALE`] that no one holds, in
/// batches; answers how many.
pub(crate) async fn settle_stale(
    client: &Client,
    sql: &Sql,
) -> Result<u64, tasks_runtime::store::StoreError> {
    let statement = client
        .prepare_cached(&sql.settle_stale)
        .await
        .map_err(backend::sql)?;
    let mut settled = 0;
    loop {
        let count: i64 = client
            .query_one(&statement, &[&CHUNK])
            .await
            .map_err(backend::sql)?
            .try_get(0)
            .map_err(backend::sql)?;
        settled += u64::try_from(count).unwrap_or(0);
        if count < CHUNK {
            return Ok(settled);
        }
    }
}
