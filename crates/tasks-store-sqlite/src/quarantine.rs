//! Unreadable rows: the poison-message rule. A task row whose stored state does not decode
//! (invalid JSON, JSON of the wrong shape, nesting past the parser's limit, a refused invariant,
//! an invalid id; written by a bug, another version or by hand) fails only its own task: when
//! the store opens, the row's columns are copied as they were into `quarantined_tasks` with the
//! reason, and the row becomes the `failed` task of [`Task::unreadable`] (error -32603 "The
//! stored state of this task could not be read"), one revision on, its work dropped. A row
//! whose id is not a task id cannot stand for a task at all: it is copied and deleted. Each is
//! logged once, with its id, and counted ([`crate::SqliteStore`]'s `Store::quarantined`).

use rusqlite::{params, Connection};
use tasks_core::{Task, TaskId, Timestamp};

/// A row that did not decode, with the columns the quarantine keeps and rebuilds from.
pub(crate) struct Unreadable {
    pub(crate) id: String,
    pub(crate) scope: String,
    pub(crate) revision: i64,
    pub(crate) status: String,
    pub(crate) created_at_ms: i64,
    pub(crate) expires_at_ms: Option<i64>,
    pub(crate) task: String,
    pub(crate) work: Option<String>,
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
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                row.id,
                row.scope,
                row.revision,
                row.status,
                row.task,
                row.work,
                row.reason,
                now_ms
            ],
        )?;
        let Ok(task_id) = TaskId::parse(&row.id) else {
            tx.execute("DELETE FROM tasks WHERE id = ?1", params![row.id])?;
            tracing::warn!(task_id = %row.id, reason = %row.reason,
                "a stored task with an invalid id was moved to quarantined_tasks and deleted");
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
             owner_node = NULL WHERE id = ?1",
            params![
                row.id,
                text,
                task.status().as_str(),
                i64::try_from(task.revision()).unwrap_or(i64::MAX)
            ],
        )?;
        tracing::warn!(task_id = %row.id, reason = %row.reason,
            "a stored task could not be read: it now reads failed, its row is kept in quarantined_tasks");
        replaced.push((task, row.scope.clone()));
    }
    tx.commit()?;
    Ok(replaced)
}
