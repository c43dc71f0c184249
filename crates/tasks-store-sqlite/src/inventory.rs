//! The operator's inventory ([`Store::inventory`](tasks_runtime::store::Store::inventory),
//! `inventory_counts`, `nodes`) in SQL, on the writer's connection (an operator's page is
//! rare, and the read model holds neither leases nor the tools of terminal tasks).
//!
//! A page is one `SELECT` in creation order on `tasks_created` (`(created_at_ms, id)`), from
//! the cursor on (a row-value comparison, so a page costs its own rows, not the ones before
//! it), `LIMIT` one more than the page to know whether another follows. The writer thread
//! runs only the SQL ([`list`]); the caller decodes the rows ([`page`]). A row whose `task`
//! does not decode is shown from its columns (no message, no progress, `lastUpdatedAt` from
//! `updated_at_ms`) and never fails the page; one whose id is not a task id is left out
//! (it is quarantined at the next open).

use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, Row, ToSql};
use tasks_core::{TaskId, TaskStatus, Timestamp};
use tasks_runtime::store::inventory::{
    InventoryCounts, InventoryCursor, InventoryOrder, InventoryPage, InventoryQuery, InventoryRow,
    NodeRow, StoredColumns, StuckRules,
};
use tasks_runtime::store::{NodeId, StatusCounts};
use tasks_runtime::Scope;

use crate::sql;

/// The rows of one page as SQL read them, before decoding; `more` when rows follow.
#[derive(Debug)]
pub(crate) struct Listed {
    rows: Vec<Raw>,
    more: bool,
}

/// One task row's inventory columns.
#[derive(Debug)]
struct Raw {
    /// `None` when not UTF-8.
    id: Option<String>,
    scope: Option<String>,
    status: Option<String>,
    created_at_ms: i64,
    updated_at_ms: i64,
    expires_at_ms: Option<i64>,
    task: Option<String>,
    tool: Option<String>,
    owner: Option<Vec<u8>>,
    generation: i64,
    attempt: i64,
    /// Whether the owner is registered with a lease that has run out at the page's `now`.
    holder_lost: bool,
}

/// The condition of a task stuck at `:now` (a holder registered with a lease run out, or idle past
/// `:working_bound` / `:input_bound`, [`StuckRules::idle_bound`]), for a row of `tasks t`.
const STUCK: &str = "t.status IN ('working', 'input_required') AND ( \
     (t.owner_node IS NOT NULL AND t.owner_node IN \
        (SELECT node_id FROM nodes WHERE lease_expires_at_ms <= :now)) \
     OR (t.status = 'working' AND t.updated_at_ms < :working_bound) \
     OR (t.status = 'input_required' AND t.updated_at_ms < :input_bound))";

/// The idle bounds of `rules` at `now`, in ms.
fn bounds(rules: StuckRules, now: Timestamp) -> (i64, i64) {
    let bound = |status| rules.idle_bound(status, now).map_or(0, sql::ms);
    (bound(TaskStatus::Working), bound(TaskStatus::InputRequired))
}

/// Runs the page's `SELECT` (writer thread).
pub(crate) fn list(
    conn: &Connection,
    query: &InventoryQuery,
    rules: StuckRules,
    now: Timestamp,
) -> rusqlite::Result<Listed> {
    let mut text = String::from(
        "SELECT t.id, t.scope, t.status, t.created_at_ms, t.updated_at_ms, t.expires_at_ms, \
                t.task, t.tool, t.owner_node, t.generation, t.attempt, \
                coalesce(t.owner_node IN \
                  (SELECT node_id FROM nodes WHERE lease_expires_at_ms <= :now), 0) \
         FROM tasks t WHERE (t.expires_at_ms IS NULL OR t.expires_at_ms > :now)",
    );
    let mut values: Vec<(&'static str, Value)> = vec![(":now", Value::Integer(sql::ms(now)))];
    if let Some(id) = &query.id {
        text.push_str(" AND t.id = :id");
        values.push((":id", Value::Text(id.as_str().to_owned())));
    }
    if !query.statuses.is_empty() {
        let list: Vec<String> = query
            .statuses
            .iter()
            .map(|status| format!("'{}'", status.as_str()))
            .collect();
        text.push_str(&format!(" AND t.status IN ({})", list.join(", ")));
    }
    if let Some(tool) = &query.tool {
        text.push_str(" AND t.tool = :tool");
        values.push((":tool", Value::Text(tool.clone())));
    }
    if let Some(node) = &query.node {
        text.push_str(" AND t.owner_node = :node AND t.status IN ('working', 'input_required')");
        values.push((":node", Value::Blob(sql::node(node).to_vec())));
    }
    if let Some(from) = query.created_from {
        text.push_str(" AND t.created_at_ms >= :from");
        values.push((":from", Value::Integer(sql::ms(from))));
    }
    if let Some(before) = query.created_before {
        text.push_str(" AND t.created_at_ms < :before");
        values.push((":before", Value::Integer(sql::ms(before))));
    }
    if query.stuck_only {
        let (working, input) = bounds(rules, now);
        text.push_str(" AND ");
        text.push_str(STUCK);
        values.push((":working_bound", Value::Integer(working)));
        values.push((":input_bound", Value::Integer(input)));
    }
    let (compare, direction) = match query.order {
        InventoryOrder::NewestFirst => ("<", "DESC"),
        InventoryOrder::OldestFirst => (">", "ASC"),
    };
    if let Some(after) = &query.after {
        text.push_str(&format!(
            " AND (t.created_at_ms, t.id) {compare} (:after_ms, :after_id)"
        ));
        values.push((":after_ms", Value::Integer(sql::ms(after.created_at))));
        values.push((":after_id", Value::Text(after.id.as_str().to_owned())));
    }
    text.push_str(&format!(
        " ORDER BY t.created_at_ms {direction}, t.id {direction} LIMIT :limit"
    ));
    let size = query.page_size();
    values.push((":limit", Value::Integer(sql::int(size + 1))));
    let params: Vec<(&str, &dyn ToSql)> = values
        .iter()
        .map(|(name, value)| (*name, value as &dyn ToSql))
        .collect();
    let mut statement = conn.prepare_cached(&text)?;
    let mut rows = statement.query(params.as_slice())?;
    let mut raws = Vec::new();
    while let Some(row) = rows.next()? {
        raws.push(Raw {
            id: text_of(row, 0)?,
            scope: text_of(row, 1)?,
            status: text_of(row, 2)?,
            created_at_ms: row.get(3)?,
            updated_at_ms: row.get(4)?,
            expires_at_ms: row.get(5)?,
            task: text_of(row, 6)?,
            tool: text_of(row, 7)?,
            owner: match row.get_ref(8)? {
                ValueRef::Blob(bytes) => Some(bytes.to_vec()),
                _ => None,
            },
            generation: row.get(9)?,
            attempt: row.get(10)?,
            holder_lost: row.get::<_, Option<bool>>(11)?.unwrap_or(false),
        });
    }
    let more = raws.len() > size;
    raws.truncate(size);
    Ok(Listed { rows: raws, more })
}

/// Column `i` as text; `None` for NULL or bytes that are not UTF-8 (SQLite stores TEXT
/// unchecked).
fn text_of(row: &Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    Ok(match row.get_ref(i)? {
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => {
            std::str::from_utf8(bytes).ok().map(str::to_owned)
        }
        _ => None,
    })
}

fn at(ms: i64) -> Timestamp {
    Timestamp::from_unix_millis(u64::try_from(ms).unwrap_or(0))
}

fn status_of(text: &str) -> Option<TaskStatus> {
    TaskStatus::ALL
        .into_iter()
        .find(|status| status.as_str() == text)
}

/// The page of `listed` (decoded off the writer thread). With `stuck_only`, a row the SQL
/// judged stuck that its decoded task shows is not (its `updated_at_ms` lagging, which only a
/// write by an older build leaves) is left out; the cursor is still the last row read, so
/// paging goes on past it.
pub(crate) fn page(
    listed: Listed,
    query: &InventoryQuery,
    rules: StuckRules,
    now: Timestamp,
) -> InventoryPage {
    let last = listed.rows.last().and_then(|raw| {
        let id = TaskId::parse(raw.id.as_deref()?).ok()?;
        Some(InventoryCursor {
            created_at: at(raw.created_at_ms),
            id,
        })
    });
    let rows = listed
        .rows
        .into_iter()
        .filter_map(|raw| row(raw, rules, now))
        .filter(|row| !query.stuck_only || row.stuck.is_some())
        .collect();
    InventoryPage {
        rows,
        next: last.filter(|_| listed.more),
    }
}

/// One row, or `None` when its id or status cannot stand for a task.
fn row(raw: Raw, rules: StuckRules, now: Timestamp) -> Option<InventoryRow> {
    let Some(id) = raw.id.as_deref().and_then(|id| TaskId::parse(id).ok()) else {
        tracing::warn!(task_id = ?raw.id, "an inventory row with an invalid id is left out");
        return None;
    };
    let Some(status) = raw.status.as_deref().and_then(status_of) else {
        tracing::warn!(task_id = %id.as_str(), "an inventory row with an unknown status is left out");
        return None;
    };
    let columns = StoredColumns {
        id,
        status,
        scope: Scope::new(raw.scope.unwrap_or_default()),
        task: raw.task.as_deref(),
        tool: raw.tool,
        created_at_ms: raw.created_at_ms,
        updated_at_ms: raw.updated_at_ms,
        expires_at_ms: raw.expires_at_ms,
        owner: raw.owner.as_deref(),
        generation: raw.generation,
        attempt: raw.attempt,
        holder_lost: raw.holder_lost,
    };
    Some(InventoryRow::from_columns(columns, rules, now))
}

/// [`tasks_runtime::store::Store::inventory_counts`]: two grouped scans of the unexpired rows.
pub(crate) fn counts(
    conn: &Connection,
    rules: StuckRules,
    now: Timestamp,
) -> rusqlite::Result<InventoryCounts> {
    let mut counts = InventoryCounts::default();
    let mut statement = conn.prepare_cached(
        "SELECT status, tool, count(*) FROM tasks \
         WHERE expires_at_ms IS NULL OR expires_at_ms > ?1 GROUP BY status, tool",
    )?;
    let mut rows = statement.query([sql::ms(now)])?;
    while let Some(row) = rows.next()? {
        let Some(status) = text_of(row, 0)?.as_deref().and_then(status_of) else {
            continue;
        };
        let tool = text_of(row, 1)?;
        let n = u64::try_from(row.get::<_, i64>(2)?).unwrap_or(0);
        counts.by_status.add(status, n);
        match counts.by_tool.iter_mut().find(|(t, _)| *t == tool) {
            Some((_, by_tool)) => by_tool.add(status, n),
            None => {
                let mut by_tool = StatusCounts::default();
                by_tool.add(status, n);
                counts.by_tool.push((tool, by_tool));
            }
        }
    }
    let (working, input) = bounds(rules, now);
    let mut statement = conn.prepare_cached(
        "SELECT CASE \
           WHEN t.owner_node IS NOT NULL AND t.owner_node IN \
             (SELECT node_id FROM nodes WHERE lease_expires_at_ms <= :now) THEN 0 \
           WHEN t.status = 'working' AND t.updated_at_ms < :working_bound THEN 1 \
           WHEN t.status = 'input_required' AND t.updated_at_ms < :input_bound THEN 2 \
         END AS reason, count(*) FROM tasks t \
         WHERE t.status IN ('working', 'input_required') \
           AND (t.expires_at_ms IS NULL OR t.expires_at_ms > :now) \
         GROUP BY reason",
    )?;
    let mut rows = statement.query(rusqlite::named_params! {
        ":now": sql::ms(now),
        ":working_bound": working,
        ":input_bound": input,
    })?;
    while let Some(row) = rows.next()? {
        let n = u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0);
        match row.get::<_, Option<i64>>(0)? {
            Some(0) => counts.stuck.holder_lost += n,
            Some(1) => counts.stuck.working_idle += n,
            Some(2) => counts.stuck.input_unanswered += n,
            _ => {}
        }
    }
    Ok(counts.finish())
}

/// [`tasks_runtime::store::Store::nodes`]: every `nodes` row, in id order, with the active,
/// unexpired tasks it holds (`tasks_active`).
pub(crate) fn nodes(conn: &Connection, now: Timestamp) -> rusqlite::Result<Vec<NodeRow>> {
    let mut statement = conn.prepare_cached(
        "SELECT n.node_id, n.started_at_ms, n.renewed_at_ms, n.lease_expires_at_ms, \
           (SELECT count(*) FROM tasks t WHERE t.owner_node = n.node_id \
              AND t.status IN ('working', 'input_required') \
              AND (t.expires_at_ms IS NULL OR t.expires_at_ms > ?1)) \
         FROM nodes n ORDER BY n.node_id",
    )?;
    let mut rows = statement.query([sql::ms(now)])?;
    let mut nodes = Vec::new();
    while let Some(row) = rows.next()? {
        let ValueRef::Blob(bytes) = row.get_ref(0)? else {
            continue;
        };
        let Ok(id) = <[u8; 16]>::try_from(bytes) else {
            continue;
        };
        let expires: i64 = row.get(3)?;
        nodes.push(NodeRow {
            id: NodeId::from_bytes(id),
            started_at: row.get::<_, Option<i64>>(1)?.map(at),
            renewed_at: row.get::<_, Option<i64>>(2)?.map(at),
            lease_expires_at: at(expires),
            live: expires > sql::ms(now),
            held: u64::try_from(row.get::<_, i64>(4)?).unwrap_or(0),
        });
    }
    nodes.sort_by_key(|node| node.id);
    Ok(nodes)
}
