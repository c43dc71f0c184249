//! Compare-and-set, in batches: each transition is queued and run with those queued beside it,
//! one statement per batch (see [`crate::batch`]). For each transition the statement locks the
//! row, writes it when the expected revision, expiry and
//! authority hold (recording the release of the active slot of a task that became terminal as
//! a `pending_counts` row), and otherwise answers the current columns, from which the refusal
//! is classified as the in-memory store does. After the commit, one statement per scope
//! settles the batch's releases.

use std::collections::BTreeMap;
use std::sync::Arc;

use deadpool_postgres::{ClientWrapper, Pool};
use tasks_core::{Task, TaskId, TaskUpdate, Timestamp};
use tasks_runtime::store::{Authority, CasOutcome, Snapshot, StoreError};
use tasks_runtime::Scope;
use tokio::sync::oneshot;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use crate::backend;
use crate::batch::{self, Batcher, Queued, Writer};
use crate::counters;
use crate::db::Db;
use crate::quarantine::{self, Stored};
use crate::sql::{big, ms, to_json, Sql};
use crate::text::storable;

/// One transition waiting for its batch.
pub(crate) struct Item {
    task: Arc<Task>,
    /// The new task's JSON.
    json: String,
    expected: i64,
    now: i64,
    /// A worker's node and generation, or a request's scope.
    owner: Option<[u8; 16]>,
    generation: Option<i64>,
    scope: Option<Scope>,
    /// The `pending_counts` token of the release when the new task is terminal (else 0,
    /// unused).
    token: i64,
    reply: oneshot::Sender<Result<Option<Current>, StoreError>>,
}

/// [`tasks_runtime::store::Store::transition`].
pub(crate) async fn transition(
    db: &Db,
    queue: &Batcher<Item>,
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
            (None, Some(scope.clone()), None)
        }
        Authority::Worker(lease) => (
            Some(*lease.node.as_bytes()),
            None,
            Some(big(lease.generation)),
        ),
    };
    if !storable(task.id().as_str()) {
        return Ok(CasOutcome::NotFound);
    }
    let task = Arc::new(task);
    let json = to_json(&*task)?;
    let (reply, answer) = oneshot::channel();
    let item = Item {
        task: task.clone(),
        json,
        expected,
        now: ms(now),
        owner,
        generation,
        scope,
        // Only a terminal write records a release: the others need no random token.
        token: if task.is_terminal() {
            counters::token()?
        } else {
            0
        },
        reply,
    };
    if let Err(item) = queue.submit(item) {
        batch::run::<Transitions>(&db.writer, vec![item]).await;
    }
    let Some(current) = answer.await.map_err(|_| batch::lost())?? else {
        return Ok(CasOutcome::NotFound);
    };
    if current.committed {
        let scope = match who {
            Authority::Request(scope) => scope.clone(),
            Authority::Worker(_) => Scope::new(current.scope),
        };
        return Ok(CasOutcome::Committed(Snapshot { task, scope }));
    }
    classify(db, who, current, expected, now, &task).await
}

/// Transitions, as a kind of batched call: a batch holds at most one transition of each
/// task, so those of one task run one after the other, in the order queued.
pub(crate) struct Transitions;

impl batch::Kind for Transitions {
    type Item = Item;
    type Answer = Option<Current>;

    fn store(
        writer: &Writer,
        batch: &[Item],
    ) -> impl std::future::Future<Output = Result<Vec<Option<Current>>, (bool, StoreError)>> + Send
    {
        store(&writer.pool, &writer.sql, batch)
    }

    fn answer(writer: &Writer, item: Item, answer: Option<Current>) {
        if answer.as_ref().is_some_and(|current| current.committed) {
            writer.hinter.hint(item.task.id(), item.task.revision());
        }
        let _ = item.reply.send(Ok(answer));
    }

    fn fail(item: Item, error: StoreError) {
        let _ = item.reply.send(Err(error));
    }
}

impl Queued for Item {
    fn id(&self) -> &TaskId {
        self.task.id()
    }
    fn bytes(&self) -> usize {
        self.json.len()
    }
    fn abandoned(&self) -> bool {
        self.reply.is_closed()
    }
}

/// The transition statement for `batch`, then the settlement of its releases: the current
/// columns per transition, in order (`None`: no such task); or the error, and whether the
/// database refused a value.
async fn store(
    pool: &Pool,
    sql: &Sql,
    batch: &[Item],
) -> Result<Vec<Option<Current>>, (bool, StoreError)> {
    let other = |error: StoreError| (false, error);
    let client = pool.get().await.map_err(|e| other(backend::pool(e)))?;
    let statement = client
        .prepare_cached(&sql.transition)
        .await
        .map_err(|e| other(backend::sql(e)))?;
    let ids: Vec<&str> = batch.iter().map(|i| i.task.id().as_str()).collect();
    let expected: Vec<i64> = batch.iter().map(|i| i.expected).collect();
    let revisions: Vec<i64> = batch.iter().map(|i| big(i.task.revision())).collect();
    let statuses: Vec<&str> = batch.iter().map(|i| i.task.status().as_str()).collect();
    let created: Vec<i64> = batch.iter().map(|i| ms(i.task.created_at())).collect();
    let expires: Vec<Option<i64>> = batch.iter().map(|i| i.task.expires_at().map(ms)).collect();
    let tasks: Vec<&str> = batch.iter().map(|i| i.json.as_str()).collect();
    let terminal: Vec<bool> = batch.iter().map(|i| i.task.is_terminal()).collect();
    let now: Vec<i64> = batch.iter().map(|i| i.now).collect();
    let owners: Vec<Option<&[u8]>> = batch
        .iter()
        .map(|i| i.owner.as_ref().map(|o| &o[..]))
        .collect();
    let scopes: Vec<Option<&str>> = batch
        .iter()
        .map(|i| i.scope.as_ref().map(Scope::as_str))
        .collect();
    let generations: Vec<Option<i64>> = batch.iter().map(|i| i.generation).collect();
    let tokens: Vec<i64> = batch.iter().map(|i| i.token).collect();
    let updated: Vec<i64> = batch.iter().map(|i| ms(i.task.last_updated_at())).collect();
    let params: [&(dyn ToSql + Sync); 14] = [
        &ids,
        &expected,
        &revisions,
        &statuses,
        &created,
        &expires,
        &tasks,
        &terminal,
        &now,
        &owners,
        &scopes,
        &generations,
        &tokens,
        &updated,
    ];
    let rows = match client.query(&statement, &params).await {
        Ok(rows) => rows,
        Err(error) => return Err((batch::refused_value(&error), backend::sql(error))),
    };
    let mut answers: Vec<Option<Current>> = batch.iter().map(|_| None).collect();
    for row in &rows {
        let (at, current) = Current::read(row).map_err(other)?;
        match usize::try_from(at)
            .ok()
            .and_then(|at| answers.get_mut(at.wrapping_sub(1)))
        {
            Some(slot) => *slot = Some(current),
            None => {
                return Err(other(StoreError::Backend(
                    "postgres: the transition statement answered an unexpected row".into(),
                )))
            }
        }
    }
    settle(&client, sql, batch, &answers).await;
    Ok(answers)
}

/// Settles the releases of the batch's committed terminal transitions, one statement per
/// scope (each locks that scope's counter row alone), sent together. A failure is logged and
/// left to the reaper, which settles the rows once they are [stale](crate::sql::STALE).
async fn settle(client: &ClientWrapper, sql: &Sql, batch: &[Item], answers: &[Option<Current>]) {
    let mut released: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for (item, answer) in batch.iter().zip(answers) {
        if let Some(current) = answer
            .as_ref()
            .filter(|c| c.committed && item.task.is_terminal())
        {
            released
                .entry(current.scope.as_str())
                .or_default()
                .push(item.token);
        }
    }
    if released.is_empty() {
        return;
    }
    let settled = futures_util::future::join_all(
        released
            .iter()
            .map(|(scope, tokens)| counters::settle_many(client, sql, scope, tokens)),
    )
    .await;
    for error in settled.into_iter().filter_map(Result::err) {
        tracing::warn!(
            error = %backend::describe(&error),
            "settling terminal transitions' releases; the reaper will"
        );
    }
}

/// The columns the transition statement answers for one transition.
pub(crate) struct Current {
    committed: bool,
    scope: String,
    revision: i64,
    expires_at_ms: Option<i64>,
    owner: Option<Vec<u8>>,
    generation: i64,
    /// The row as stored, its task only when nothing was written (decoded, or quarantined,
    /// only for a revision conflict).
    stored: Stored,
}

impl Current {
    /// The transition's position in its batch (from 1) and its columns.
    fn read(row: &Row) -> Result<(i32, Self), StoreError> {
        let stored = Stored::read(row, 4)?;
        Ok((
            row.try_get(0).map_err(backend::sql)?,
            Current {
                committed: row.try_get(1).map_err(backend::sql)?,
                owner: row.try_get(2).map_err(backend::sql)?,
                generation: row.try_get(3).map_err(backend::sql)?,
                scope: row.try_get(5).map_err(backend::sql)?,
                revision: row.try_get(6).map_err(backend::sql)?,
                expires_at_ms: row.try_get(9).map_err(backend::sql)?,
                stored,
            },
        ))
    }
}

/// Why the write was refused, in the in-memory store's order: expired or another scope's is
/// `NotFound`, a stale lease `Fenced` (before any revision check), a stale revision `Conflict`
/// (with the stored task, or the failed one standing in its place when it does not decode).
async fn classify(
    db: &Db,
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
        return Ok(
            match quarantine::open(db, current.stored, false, now)
                .await?
                .snapshot()
            {
                Some(stored) => CasOutcome::Conflict(stored),
                None => CasOutcome::NotFound,
            },
        );
    }
    Err(StoreError::Backend(format!(
        "postgres: compare-and-set of task {:?} changed nothing although its conditions hold",
        task.id().as_str()
    )))
}
