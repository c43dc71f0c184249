//! [`Db`]: what every call of the store works with, the pool and the statements of one
//! schema, the writer of group commits, the change feed, the database server's clock and the
//! settled tasks read.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use deadpool_postgres::{Object, Pool};
use tasks_core::TaskId;
use tasks_runtime::store::StoreError;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::backend;
use crate::batch::Writer;
use crate::clock::DbClock;
use crate::feed::Feed;
use crate::settled::SettledTasks;
use crate::sql::Sql;

/// The pool and the statements of one schema, the change feed and the clock; dropping it (with
/// the last clone of the store) stops the background tasks.
pub(crate) struct Db {
    pool: Pool,
    pub(crate) sql: Arc<Sql>,
    pub(crate) writer: Writer,
    pub(crate) target: String,
    pub(crate) feed: Feed,
    pub(crate) clock: Arc<DbClock>,
    /// Terminal tasks this instance has read (they never change again).
    pub(crate) settled: SettledTasks,
    /// How many rows this instance has quarantined since it connected
    /// ([`tasks_runtime::store::Store::quarantined`]).
    pub(crate) quarantined: AtomicU64,
    /// Stops the background tasks (the feed, the clock's refresh, the batch collectors).
    pub(crate) stop: CancellationToken,
    _stop: DropGuard,
}

impl Db {
    /// The store's connections to `target` (its description, without the password), stopped
    /// by `stop` and when dropped.
    pub(crate) fn new(
        pool: Pool,
        sql: Arc<Sql>,
        target: String,
        feed: Feed,
        clock: Arc<DbClock>,
        stop: CancellationToken,
    ) -> Db {
        let writer = Writer {
            pool: pool.clone(),
            sql: sql.clone(),
            hinter: feed.hinter(),
        };
        Db {
            pool,
            sql,
            writer,
            target,
            feed,
            clock,
            settled: SettledTasks::default(),
            quarantined: AtomicU64::new(0),
            stop: stop.clone(),
            _stop: stop.drop_guard(),
        }
    }

    /// A pooled connection.
    pub(crate) async fn client(&self) -> Result<Object, StoreError> {
        self.pool.get().await.map_err(backend::pool)
    }

    /// The rows of `statement` (one of [`crate::sql::Sql`]'s) with `params`, on a pooled
    /// connection. When that connection dies under it ([`backend::connection_lost`]), the
    /// connection leaves the pool and the read runs once more on a fresh one: a read changes
    /// nothing, so running it again is safe, and one dead connection does not fail a request.
    pub(crate) async fn rows(
        &self,
        statement: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        let mut retried = false;
        loop {
            let client = self.client().await?;
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

    /// Announces that this store instance committed task `id` at `revision` (never waits).
    pub(crate) fn hint(&self, id: &TaskId, revision: u64) {
        self.writer.hinter.hint(id, revision);
    }
}
