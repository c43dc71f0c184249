//! The operator's inventory ([`Store::inventory`](tasks_runtime::store::Store::inventory),
//! `inventory_counts`, `nodes`): reads in SQL, never a write.
//!
//! A page is one `SELECT` in creation order on `tasks_created` (`(created_at_ms, id COLLATE
//! "C")`, the store's id order), from the cursor on (a row-value comparison, so a page costs
//! its own rows, not the ones before it), `LIMIT` one more than the page to know whether
//! another follows; only the filters a query names are in its statement, so each is planned
//! for its own indexes (`tasks_tool`, `tasks_active` for a node, `tasks_idle` for idleness).
//! A row whose `task` does not decode is shown from its columns (no message, no progress,
//! `lastUpdatedAt` from `updated_at_ms`) and never fails the page; it is not quarantined here
//! (an operator's read writes nothing), but by the next read of the task. A row whose id is not
//! a task id is left out.

use tasks_core::{TaskId, TaskStatus, Timestamp};
use tasks_runtime::store::inventory::{
    InventoryCounts, InventoryCursor, InventoryOrder, InventoryPage, InventoryQuery, InventoryRow,
    NodeRow, StoredColumns, StuckRules,
};
use tasks_runtime::store::{NodeId, StatusCounts, StoreError};
use tasks_runtime::Scope;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use crate::backend;
use crate::db::Db;
use crate::sql::{big, ms, ACTIVE};
use crate::text::storable;

/// The idle bounds of `rules` at `now` (ms): `working`, `input_required`.
fn bounds(rules: StuckRules, now: Timestamp) -> (i64, i64) {
    let bound = |status| rules.idle_bound(status, now).map_or(0, ms);
    (bound(TaskStatus::Working), bound(TaskStatus::InputRequired))
}

/// A page's statement and its parameters.
struct Statement {
    text: String,
    params: Vec<Box<dyn ToSql + Sync + Send>>,
}

impl Statement {
    /// Adds `value` and answers its placeholder (`$n`).
    fn param(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.params.push(Box::new(value));
        format!("${}", self.params.len())
    }
}

/// [`tasks_runtime::store::Store::inventory`].
pub(crate) async fn page(
    db: &Db,
    query: &InventoryQuery,
    rules: StuckRules,
    now: Timestamp,
) -> Result<InventoryPage, StoreError> {
    let texts = [
        query.id.as_ref().map(TaskId::as_str),
        query.tool.as_deref(),
        query.after.as_ref().map(|after| after.id.as_str()),
    ];
    if texts.into_iter().flatten().any(|text| !storable(text)) {
        // A U+0000 cannot be stored, so nothing matches it.
        return Ok(InventoryPage::new(Vec::new(), false));
    }
    let mut statement = Statement {
        text: db.sql.inventory_page.clone(),
        params: vec![Box::new(ms(now))],
    };
    if let Some(id) = &query.id {
        let p = statement.param(id.as_str().to_owned());
        statement.text.push_str(&format!(" AND t.id = {p}::text"));
    }
    if !query.statuses.is_empty() {
        let statuses: Vec<String> = query
            .statuses
            .iter()
            .map(|status| status.as_str().to_owned())
            .collect();
        let p = statement.param(statuses);
        statement
            .text
            .push_str(&format!(" AND t.status = ANY({p}::text[])"));
    }
    if let Some(tool) = &query.tool {
        let p = statement.param(tool.clone());
        statement.text.push_str(&format!(" AND t.tool = {p}::text"));
    }
    if let Some(node) = &query.node {
        let p = statement.param(node.as_bytes().to_vec());
        statement.text.push_str(&format!(
            " AND t.owner_node = {p}::bytea AND t.status IN ('{}', '{}')",
            ACTIVE[0], ACTIVE[1]
        ));
    }
    if let Some(from) = query.created_from {
        let p = statement.param(ms(from));
        statement
            .text
            .push_str(&format!(" AND t.created_at_ms >= {p}::bigint"));
    }
    if let Some(before) = query.created_before {
        let p = statement.param(ms(before));
        statement
            .text
            .push_str(&format!(" AND t.created_at_ms < {p}::bigint"));
    }
    if query.stuck_only {
        let (working, input) = bounds(rules, now);
        let w = statement.param(working);
        let i = statement.param(input);
        statement.text.push_str(&format!(
            " AND t.status IN ('{a}', '{b}') AND ( \
               (t.owner_node IS NOT NULL AND {lost}) \
               OR (t.status = 'working' AND t.updated_at_ms < {w}::bigint) \
               OR (t.status = 'input_required' AND t.updated_at_ms < {i}::bigint))",
            a = ACTIVE[0],
            b = ACTIVE[1],
            lost = db.sql.inventory_lost,
        ));
    }
    let (compare, direction) = match query.order {
        InventoryOrder::NewestFirst => ("<", "DESC"),
        InventoryOrder::OldestFirst => (">", "ASC"),
    };
    if let Some(after) = &query.after {
        let at = statement.param(ms(after.created_at));
        let id = statement.param(after.id.as_str().to_owned());
        statement.text.push_str(&format!(
            " AND (t.created_at_ms, t.id COLLATE \"C\") {compare} ({at}::bigint, {id}::text)"
        ));
    }
    let size = query.page_size();
    let limit = statement.param(big(size + 1));
    statement.text.push_str(&format!(
        " ORDER BY t.created_at_ms {direction}, t.id COLLATE \"C\" {direction} \
         LIMIT {limit}::bigint"
    ));
    let params: Vec<&(dyn ToSql + Sync)> = statement
        .params
        .iter()
        .map(|param| &**param as &(dyn ToSql + Sync))
        .collect();
    let rows = db.rows(&statement.text, &params).await?;
    let more = rows.len() > size;
    let mut raws = Vec::with_capacity(rows.len().min(size));
    for row in rows.iter().take(size) {
        raws.push(Raw::read(row)?);
    }
    let last = raws.last().and_then(|raw| {
        Some(InventoryCursor {
            created_at: at(raw.created_at_ms),
            id: TaskId::parse(&raw.id).ok()?,
        })
    });
    let rows = raws
        .into_iter()
        .filter_map(|raw| raw.row(rules, now))
        // A row the SQL judged stuck by an `updated_at_ms` left behind (a transition by a
        // build before version 8) that its task shows is not: left out, and paging goes on
        // past it (the cursor is the last row read).
        .filter(|row| !query.stuck_only || row.stuck.is_some())
        .collect();
    Ok(InventoryPage {
        rows,
        next: last.filter(|_| more),
    })
}

/// The columns of one row of [`crate::sql::Sql::inventory_page`].
struct Raw {
    id: String,
    scope: String,
    status: String,
    created_at_ms: i64,
    updated_at_ms: i64,
    expires_at_ms: Option<i64>,
    task: String,
    tool: Option<String>,
    owner: Option<Vec<u8>>,
    generation: i64,
    attempt: i32,
    /// Whether the holder is registered with a lease that has run out at the page's `now`.
    holder_lost: bool,
}

impl Raw {
    fn read(row: &Row) -> Result<Raw, StoreError> {
        let get = backend::sql;
        Ok(Raw {
            id: row.try_get(0).map_err(get)?,
            scope: row.try_get(1).map_err(get)?,
            status: row.try_get(2).map_err(get)?,
            created_at_ms: row.try_get(3).map_err(get)?,
            updated_at_ms: row.try_get(4).map_err(get)?,
            expires_at_ms: row.try_get(5).map_err(get)?,
            task: row.try_get(6).map_err(get)?,
            tool: row.try_get(7).map_err(get)?,
            owner: row.try_get(8).map_err(get)?,
            generation: row.try_get(9).map_err(get)?,
            attempt: row.try_get(10).map_err(get)?,
            holder_lost: row.try_get(11).map_err(get)?,
        })
    }

    /// The inventory's row, or `None` when the id or status cannot stand for a task.
    fn row(self, rules: StuckRules, now: Timestamp) -> Option<InventoryRow> {
        let Ok(id) = TaskId::parse(&self.id) else {
            tracing::warn!(task_id = %self.id, "an inventory row with an invalid id is left out");
            return None;
        };
        let Some(status) = status_of(&self.status) else {
            tracing::warn!(task_id = %self.id, "an inventory row with an unknown status is left out");
            return None;
        };
        let columns = StoredColumns {
            id,
            status,
            scope: Scope::new(self.scope),
            task: Some(&self.task),
            tool: self.tool,
            created_at_ms: self.created_at_ms,
            updated_at_ms: self.updated_at_ms,
            expires_at_ms: self.expires_at_ms,
            owner: self.owner.as_deref(),
            generation: self.generation,
            attempt: i64::from(self.attempt),
            holder_lost: self.holder_lost,
        };
        Some(InventoryRow::from_columns(columns, rules, now))
    }
}

fn at(ms: i64) -> Timestamp {
    Timestamp::from_unix_millis(u64::try_from(ms).unwrap_or(0))
}

fn status_of(text: &str) -> Option<TaskStatus> {
    TaskStatus::ALL
        .into_iter()
        .find(|status| status.as_str() == text)
}

/// [`tasks_runtime::store::Store::inventory_counts`]: two grouped scans of the unexpired rows.
pub(crate) async fn counts(
    db: &Db,
    rules: StuckRules,
    now: Timestamp,
) -> Result<InventoryCounts, StoreError> {
    let get = backend::sql;
    let mut counts = InventoryCounts::default();
    for row in db.rows(&db.sql.inventory_counts, &[&ms(now)]).await? {
        let status: String = row.try_get(0).map_err(get)?;
        let Some(status) = status_of(&status) else {
            continue;
        };
        let tool: Option<String> = row.try_get(1).map_err(get)?;
        let n = u64::try_from(row.try_get::<_, i64>(2).map_err(get)?).unwrap_or(0);
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
    let stuck = db
        .rows(&db.sql.inventory_stuck, &[&ms(now), &working, &input])
        .await?;
    for row in stuck {
        let n = u64::try_from(row.try_get::<_, i64>(1).map_err(get)?).unwrap_or(0);
        match row.try_get::<_, Option<i32>>(0).map_err(get)? {
            Some(0) => counts.stuck.holder_lost += n,
            Some(1) => counts.stuck.working_idle += n,
            Some(2) => counts.stuck.input_unanswered += n,
            _ => {}
        }
    }
    Ok(counts.finish())
}

/// [`tasks_runtime::store::Store::nodes`]: every `nodes` row, in id order, with the active,
/// unexpired tasks it holds.
pub(crate) async fn nodes(db: &Db, now: Timestamp) -> Result<Vec<NodeRow>, StoreError> {
    let get = backend::sql;
    let mut nodes = Vec::new();
    for row in db.rows(&db.sql.inventory_nodes, &[&ms(now)]).await? {
        let id: Vec<u8> = row.try_get(0).map_err(get)?;
        let Ok(id) = <[u8; 16]>::try_from(id.as_slice()) else {
            continue;
        };
        let expires: i64 = row.try_get(3).map_err(get)?;
        nodes.push(NodeRow {
            id: NodeId::from_bytes(id),
            started_at: row.try_get::<_, Option<i64>>(1).map_err(get)?.map(at),
            renewed_at: row.try_get::<_, Option<i64>>(2).map_err(get)?.map(at),
            lease_expires_at: at(expires),
            live: expires > ms(now),
            held: u64::try_from(row.try_get::<_, i64>(4).map_err(get)?).unwrap_or(0),
        });
    }
    nodes.sort_by_key(|node| node.id);
    Ok(nodes)
}
