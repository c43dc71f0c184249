//! Unreadable rows: the poison-message rule. A task row whose stored state does not decode
//! (invalid JSON, JSON of the wrong shape, nesting past the parser's limit, a refused invariant,
//! an invalid id; written by a bug, another version or by hand) fails only its own task: when
//! the store opens, the row's columns are copied as they were into `quarantined_tasks` with the
//! reason, and the row becomes the `failed` task of [`Task::unreadable`] (error -32603 "The
//! stored state of this task could not be read"), one revision on, its work dropped. A row
//! whose id is not a task id cannot stand for a task at all: it is copied and deleted. Each is
//! logged once, with its id, and counted ([`crate::SqliteStore`]'s `Store::quarantined`).
//! The columns are copied by SQLite itself (by rowid), so a column whose bytes are not UTF-8
//! (SQLite stores TEXT unchecked) is kept exactly; a row whose id or scope is not UTF-8 cannot
//! stand for any caller's task either, and is copied and deleted.

use rusqlite::{params, Connection};
use tasks_core::{Task, TaskId, Timestamp};

/// A row that did not decode: where it is, and what the quarantine rebuilds it from.
pub(crate) struct Unreadable {
    /// The row's rowid: the quarantine copies and changes it by rowid.
    pub(crate) rowid: i64,
    /// The id, or its lossy form when it is not UTF-8.
    pub(crate) id: Result<String, String>,
    /// The scope, or its lossy form when it is not UTF-8.
    pub(crate) scope: Result<String, String>,
    pub(crate) revision: i64,
    pub(crate) created_at_ms: i64,
    pub(crate) expires_at_ms: Option<i64>,
    /// Why it did not decode (for the operator; never shown to a client).
    pub(crate) reason: String,
}

/// Quarantines `rows` in one transaction (see the module docs) at `now_ms`; returns the
/// `failed` tasks that now stand in their place, with their scopes (a row whose id is invalid
/// has none).
pub(crate) fn quarantine(
    conn: &Connection,
    rows: &[Unreadable],
    now_ms: i64,
) -> rusqlite::Result<Vec<(Task, String)>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let tx = conn.unchecked_transaction()?;
    let mut replaced = Vec::new();
    for row in rows {
        tx.execute(
            "INSERT OR REPLACE INTO quarantined_tasks \
             (id, scope, revision, status, task, work, reason, quarantined_at_ms) \
             SELECT id, scope, revision, status, task, work, ?2, ?3 FROM tasks WHERE rowid = ?1",
            params![row.rowid, row.reason, now_ms],
        )?;
        let shown = row.id.as_ref().unwrap_or_else(|lossy| lossy);
        let valid = match (&row.id, &row.scope) {
            (Ok(id), Ok(scope)) => TaskId::parse(id).ok().map(|id| (id, scope)),
            _ => None,
        };
        let Some((task_id, scope)) = valid else {
            tx.execute("DELETE FROM tasks WHERE rowid = ?1", params![row.rowid])?;
            tracing::warn!(task_id = %shown, reason = %row.reason,
                "a stored task with an invalid id or scope was moved to quarantined_tasks and deleted");
            continue;
        };
        let created_at = Timestamp::from_unix_millis(u64::try_from(row.created_at_ms).unwrap_or(0));
        let ttl_ms = row
            .expires_at_ms
            .map(|at| u64::try_from(at.saturating_sub(row.created_at_ms)).unwrap_or(0));
        let revision = u64::try_from(row.revision).unwrap_or(0).saturating_add(1);
        let now = Timestamp::from_unix_millis(u64::try_from(now_ms).unwrap_or(0));
        let task = Task::unreadable(task_id, created_at, ttl_ms, revision, now);
        let text = serde_json::to_string(&task)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        tx.execute(
            "UPDATE tasks SET task = ?2, status = ?3, revision = ?4, work = NULL, \
             owner_node = NULL, updated_at_ms = ?5 WHERE rowid = ?1",
            params![
                row.rowid,
                text,
                task.status().as_str(),
                i64::try_from(task.revision()).unwrap_or(i64::MAX),
                i64::try_from(task.last_updated_at().unix_millis()).unwrap_or(i64::MAX)
            ],
        )?;
        tracing::warn!(task_id = %shown, reason = %row.reason,
            "a stored task could not be read: it now reads failed, its row is kept in quarantined_tasks");
        replaced.push((task, scope.clone()));
    }
    tx.commit()?;
    Ok(replaced)
}
