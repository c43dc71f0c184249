//! One write against the open transaction: the SQL of each [`Op`], and what it changes in the
//! counters and (once committed) the read model. Runs on the writer thread only.

use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension};
use tasks_core::{Task, TaskId, Timestamp};
use tasks_runtime::store::{
    CasOutcome, Claimed, Created, Lease, Liveness, NodeId, Snapshot, StoreError,
};
use tasks_runtime::{Scope, Work};

use crate::command::{Answer, Cas, NewTask, Op, Who};
use crate::counters::Counters;
use crate::inventory;
use crate::model::{Effect, Entry, Model};
use crate::sql;

/// What one write did.
pub(crate) struct Outcome {
    /// The caller's answer (sent once the batch commits).
    pub(crate) answer: Result<Answer, StoreError>,
    /// The change for the read model, if any.
    pub(crate) effect: Option<Effect>,
    /// Whether the write's SQL changes are kept; a refused write rolls back its savepoint.
    pub(crate) keep: bool,
    /// Tasks deleted (for the vacuum policy).
    pub(crate) deleted: usize,
}

impl Outcome {
    fn kept(answer: Answer, effect: Option<Effect>) -> Self {
        Outcome {
            answer: Ok(answer),
            effect,
            keep: true,
            deleted: 0,
        }
    }

    fn refused(answer: Result<Answer, StoreError>) -> Self {
        Outcome {
            answer,
            effect: None,
            keep: false,
            deleted: 0,
        }
    }
}

/// Why a write failed: the text is for logs only.
#[derive(Debug)]
pub(crate) struct Failure(pub(crate) String);

impl From<rusqlite::Error> for Failure {
    fn from(error: rusqlite::Error) -> Self {
        Failure(format!("sqlite: {error}"))
    }
}

impl From<serde_json::Error> for Failure {
    fn from(error: serde_json::Error) -> Self {
        Failure(format!("stored JSON does not decode: {error}"))
    }
}

/// Runs `op`. Counters change only once every statement of the write has succeeded.
pub(crate) fn execute(
    conn: &Connection,
    counters: &mut Counters,
    model: &Model,
    op: Op,
) -> Result<Outcome, Failure> {
    match op {
        Op::Create(new) => create(conn, counters, new),
        Op::Transition(cas) => transition(conn, counters, model, cas),
        Op::Reap { now } => reap(conn, counters, now),
        Op::Register { node, now, expires } => {
            conn.prepare_cached(sql::REGISTER_NODE)?.execute(params![
                sql::node(&node),
                sql::ms(expires),
                sql::ms(now)
            ])?;
            Ok(Outcome::kept(Answer::Done, None))
        }
        Op::Heartbeat { node, now, expires } => {
            let renewed = conn.prepare_cached(sql::RENEW_NODE)?.execute(params![
                sql::node(&node),
                sql::ms(expires),
                sql::ms(now)
            ])?;
            if renewed == 1 {
                return Ok(Outcome::kept(Answer::Liveness(Liveness::Alive), None));
            }
            // Expired (or unknown): forget it, so it is never revived.
            conn.prepare_cached(sql::DELETE_NODE)?
                .execute(params![sql::node(&node)])?;
            Ok(Outcome::kept(Answer::Liveness(Liveness::Lost), None))
        }
        Op::Retire { node } => {
            conn.prepare_cached(sql::DELETE_NODE)?
                .execute(params![sql::node(&node)])?;
            Ok(Outcome::kept(Answer::Done, None))
        }
        Op::Claim { node, now, max } => claim(conn, &node, now, max),
        Op::Held {
            node,
            now,
            after,
            max,
        } => held(conn, &node, now, after.as_ref(), max),
        Op::ChargeAttempt { id, lease, now } => {
            let attempt: Option<i64> = conn
                .prepare_cached(sql::CHARGE_ATTEMPT)?
                .query_row(
                    params![
                        id.as_str(),
                        sql::node(&lease.node),
                        sql_u64(lease.generation),
                        sql::ms(now),
                        i64::from(lease.attempt)
                    ],
                    |row| row.get(0),
                )
                .optional()?;
            let charged = attempt
                .map(|attempt| {
                    u32::try_from(attempt)
                        .map(|attempt| Lease { attempt, ..lease })
                        .map_err(|_| Failure(format!("stored attempt {attempt} is out of range")))
                })
                .transpose()?;
            Ok(Outcome::kept(Answer::Charged(charged), None))
        }
        Op::Inventory { query, rules, now } => Ok(Outcome::kept(
            Answer::Inventory(inventory::list(conn, &query, rules, now)?),
            None,
        )),
        Op::InventoryCounts { rules, now } => Ok(Outcome::kept(
            Answer::InventoryCounts(inventory::counts(conn, rules, now)?),
            None,
        )),
        Op::Nodes { now } => Ok(Outcome::kept(
            Answer::Nodes(inventory::nodes(conn, now)?),
            None,
        )),
        Op::MaxPageCount { pages } => {
            let pages = i64::try_from(pages).unwrap_or(i64::MAX);
            let set: i64 =
                conn.pragma_update_and_check(None, "max_page_count", pages, |row| row.get(0))?;
            Ok(Outcome::kept(
                Answer::Pages(u64::try_from(set).unwrap_or(0)),
                None,
            ))
        }
    }
}

fn create(conn: &Connection, counters: &mut Counters, new: NewTask) -> Result<Outcome, Failure> {
    let scope = &new.work.scope;
    if new.limits.lease_required {
        let live: bool = conn.prepare_cached(sql::NODE_LIVE)?.query_row(
            params![sql::node(&new.owner), sql::ms(new.task.created_at())],
            |row| row.get(0),
        )?;
        if !live {
            return Ok(Outcome::refused(Err(StoreError::LeaseLost)));
        }
    }
    if let Err(limit) = counters.check(scope.as_str(), new.limits) {
        return Ok(Outcome::refused(Err(StoreError::Capacity(limit))));
    }
    let task = &new.task;
    let inserted = conn.prepare_cached(sql::INSERT_TASK)?.execute(params![
        task.id().as_str(),
        scope.as_str(),
        revision(task),
        sql::status(task.status()),
        sql::ms(task.created_at()),
        task.expires_at().map(sql::ms),
        new.task_json,
        new.work_json,
        sql::node(&new.owner),
        new.work.tool,
    ])?;
    if inserted == 0 {
        return Ok(Outcome::refused(Err(StoreError::Duplicate)));
    }
    counters.created(scope.as_str());
    let lease = Lease {
        node: new.owner,
        generation: 1,
        attempt: 1,
    };
    let snapshot = Snapshot {
        task: new.task.clone(),
        scope: scope.clone(),
    };
    let entry = Entry {
        task: new.task.clone(),
        scope: scope.clone(),
        work: Some(new.work),
    };
    Ok(Outcome::kept(
        Answer::Created(Created { snapshot, lease }),
        Some(Effect::Insert(task.id().clone(), entry)),
    ))
}

fn transition(
    conn: &Connection,
    counters: &mut Counters,
    model: &Model,
    cas: Cas,
) -> Result<Outcome, Failure> {
    let terminal = cas.task.is_terminal();
    // First with the guard that the stored task is still active, so a commit here means the
    // task became terminal (the reducer never changes a terminal task, so this is the path
    // every write takes; the unguarded retry below only keeps the semantics exact).
    if let Some(scope) = write_cas(conn, model, &cas, terminal)? {
        if terminal {
            counters.deactivated(scope.as_str());
        }
        return Ok(committed(cas, scope, terminal));
    }
    let expected = cas.task.revision().saturating_sub(1);
    let row = conn
        .prepare_cached(sql::CLASSIFY)?
        .query_row(params![cas.task.id().as_str()], |row| {
            Ok(Stored {
                scope: row.get(0)?,
                revision: row.get(1)?,
                status: row.get(2)?,
                expires_at_ms: row.get(3)?,
                owner: row.get(4)?,
                generation: row.get(5)?,
                task: row.get(6)?,
            })
        })
        .optional()?;
    let Some(stored) = row else {
        return Ok(Outcome::refused(Ok(Answer::Cas(CasOutcome::NotFound))));
    };
    if stored
        .expires_at_ms
        .is_some_and(|at| at <= sql::ms(cas.now))
    {
        return Ok(Outcome::refused(Ok(Answer::Cas(CasOutcome::NotFound))));
    }
    match &cas.who {
        Who::Request(scope) if stored.scope != scope.as_str() => {
            return Ok(Outcome::refused(Ok(Answer::Cas(CasOutcome::NotFound))));
        }
        Who::Worker(lease)
            if stored.owner.as_deref() != Some(sql::node(&lease.node))
                || stored.generation != sql_u64(lease.generation) =>
        {
            return Ok(Outcome::refused(Ok(Answer::Cas(CasOutcome::Fenced))));
        }
        _ => {}
    }
    if stored.revision != sql_u64(expected) {
        let task: Task = serde_json::from_str(&stored.task)?;
        let snapshot = Snapshot {
            task: Arc::new(task),
            scope: Scope::new(&stored.scope),
        };
        return Ok(Outcome::refused(Ok(Answer::Cas(CasOutcome::Conflict(
            snapshot,
        )))));
    }
    if terminal && !sql::is_active(&stored.status) {
        // A terminal task replaced by another terminal one: no longer active either way.
        if let Some(scope) = write_cas(conn, model, &cas, false)? {
            return Ok(committed(cas, scope, false));
        }
    }
    Err(Failure(format!(
        "compare-and-set of task {} matched no row although its conditions hold",
        cas.task.id().as_str()
    )))
}

/// The classified columns of a stored task.
struct Stored {
    scope: String,
    revision: i64,
    status: String,
    expires_at_ms: Option<i64>,
    owner: Option<Vec<u8>>,
    generation: i64,
    task: String,
}

/// The compare-and-set statement; the stored scope when it committed (a worker's write reads
/// it from the read model, which holds every committed task: a task is written by a worker
/// only after its creation committed).
fn write_cas(
    conn: &Connection,
    model: &Model,
    cas: &Cas,
    guard: bool,
) -> rusqlite::Result<Option<Scope>> {
    let task = &cas.task;
    let terminal = task.is_terminal();
    let base = params![
        task.id().as_str(),
        sql_u64(task.revision().saturating_sub(1)),
        revision(task),
        sql::status(task.status()),
        sql::ms(task.last_updated_at()),
        task.expires_at().map(sql::ms),
        cas.task_json,
        terminal,
        guard,
        sql::ms(cas.now),
    ];
    match &cas.who {
        Who::Request(scope) => {
            let mut all = base.to_vec();
            let scope_param = scope.as_str();
            all.push(&scope_param);
            let changed = conn
                .prepare_cached(sql::CAS_REQUEST)?
                .execute(all.as_slice())?;
            Ok((changed == 1).then(|| scope.clone()))
        }
        Who::Worker(lease) => {
            // The scope is read before the change, so nothing that can fail follows it (the
            // write runs without a savepoint of its own: `Op::one_change`).
            let scope = match model.scope_of(task.id()) {
                Some(scope) => Some(scope),
                None => conn
                    .prepare_cached(sql::SCOPE_OF)?
                    .query_row(params![task.id().as_str()], |row| row.get::<_, String>(0))
                    .optional()?
                    .map(Scope::new),
            };
            let mut all = base.to_vec();
            let node = sql::node(&lease.node);
            let generation = sql_u64(lease.generation);
            all.push(&node);
            all.push(&generation);
            let changed = conn
                .prepare_cached(sql::CAS_WORKER)?
                .execute(all.as_slice())?;
            Ok(scope.filter(|_| changed == 1))
        }
    }
}

fn committed(cas: Cas, scope: Scope, became_terminal: bool) -> Outcome {
    let snapshot = Snapshot {
        task: cas.task.clone(),
        scope,
    };
    Outcome::kept(
        Answer::Cas(CasOutcome::Committed(snapshot)),
        Some(Effect::Update {
            id: cas.task.id().clone(),
            task: cas.task,
            drop_work: became_terminal,
        }),
    )
}

fn reap(conn: &Connection, counters: &mut Counters, now: Timestamp) -> Result<Outcome, Failure> {
    let mut deleted: Vec<(String, String, String)> = Vec::new();
    let mut statement = conn.prepare_cached(sql::REAP)?;
    loop {
        let before = deleted.len();
        let rows = statement.query_map(params![sql::ms(now), sql::REAP_CHUNK], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?;
        for row in rows {
            deleted.push(row?);
        }
        if deleted.len() - before < usize::try_from(sql::REAP_CHUNK).unwrap_or(usize::MAX) {
            break;
        }
    }
    let ids = deleted
        .iter()
        .map(|(id, _, _)| {
            TaskId::parse(id).map_err(|e| Failure(format!("stored task id does not parse: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for (_, scope, status) in &deleted {
        counters.deleted(scope, sql::is_active(status));
    }
    let count = ids.len();
    Ok(Outcome {
        answer: Ok(Answer::Reaped(ids.clone())),
        effect: (count > 0).then_some(Effect::Delete(ids)),
        keep: true,
        deleted: count,
    })
}

fn claim(conn: &Connection, node: &NodeId, now: Timestamp, max: usize) -> Result<Outcome, Failure> {
    conn.prepare_cached(sql::DELETE_EXPIRED_NODES)?
        .execute(params![sql::ms(now)])?;
    let mut statement = conn.prepare_cached(sql::CLAIM)?;
    let rows = statement.query_map(
        params![sql::node(node), sql::ms(now), sql::int(max)],
        claimed_row,
    )?;
    let claimed = decode_claimed(rows, node)?;
    Ok(Outcome::kept(Answer::Claimed(claimed), None))
}

/// [`tasks_runtime::store::Store::held`]: a read, answered like a claim.
fn held(
    conn: &Connection,
    node: &NodeId,
    now: Timestamp,
    after: Option<&TaskId>,
    max: usize,
) -> Result<Outcome, Failure> {
    let mut statement = conn.prepare_cached(sql::HELD)?;
    let after = after.map_or("", TaskId::as_str);
    let rows = statement.query_map(
        params![sql::node(node), sql::ms(now), after, sql::int(max)],
        claimed_row,
    )?;
    let held = decode_claimed(rows, node)?;
    Ok(Outcome::kept(Answer::Claimed(held), None))
}

/// The columns `scope, task, work, generation, attempt` of a row of [`sql::CLAIM`] or
/// [`sql::HELD`] (after the id).
type ClaimedRow = (String, String, String, i64, i64);

fn claimed_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ClaimedRow> {
    Ok((
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
    ))
}

fn decode_claimed(
    rows: impl Iterator<Item = rusqlite::Result<ClaimedRow>>,
    node: &NodeId,
) -> Result<Vec<Claimed>, Failure> {
    let mut claimed = Vec::new();
    for row in rows {
        let (scope, task, work, generation, attempt) = row?;
        // Every row was read (and any unreadable one quarantined) when the store opened; one
        // written since by another program that does not decode is left out of the pass, so
        // the others are still claimed, and is quarantined at the next open.
        let (task, work) = match (
            serde_json::from_str::<Task>(&task),
            serde_json::from_str::<Work>(&work),
        ) {
            (Ok(task), Ok(work)) => (task, work),
            (task, work) => {
                let reason = task.err().or(work.err()).map(|e| e.to_string());
                tracing::warn!(
                    reason,
                    "a claimed task does not decode; left out of the claim"
                );
                continue;
            }
        };
        let lease = Lease {
            node: *node,
            generation: u64::try_from(generation)
                .map_err(|_| Failure(format!("stored generation {generation} is negative")))?,
            attempt: u32::try_from(attempt)
                .map_err(|_| Failure(format!("stored attempt {attempt} is out of range")))?,
        };
        claimed.push(Claimed {
            snapshot: Snapshot {
                task: Arc::new(task),
                scope: Scope::new(scope),
            },
            work: Arc::new(work),
            lease,
        });
    }
    Ok(claimed)
}

fn revision(task: &Task) -> i64 {
    sql_u64(task.revision())
}

/// A revision or generation as a column value (they start at 1 and grow by one per write).
fn sql_u64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
