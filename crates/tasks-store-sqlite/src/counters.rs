//! The capacity counters, owned by the writer thread: the stored task count and the active
//! (non-terminal) tasks per scope, counted from the database at open and kept exact by every
//! command, including the ones earlier in the same uncommitted batch.

use std::collections::HashMap;

use rusqlite::Connection;
use tasks_core::CapacityLimit;
use tasks_runtime::store::CreateLimits;

use crate::sql;

/// Stored and active task counts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Counters {
    total: usize,
    active: HashMap<String, usize>,
}

impl Counters {
    /// The counts as the database has them.
    pub(crate) fn load(conn: &Connection) -> rusqlite::Result<Self> {
        let total: i64 = conn.query_row(sql::COUNT, [], |row| row.get(0))?;
        let mut statement = conn.prepare(sql::ACTIVE_BY_SCOPE)?;
        let active = statement
            .query_map([], |row| {
                let count: i64 = row.get(1)?;
                Ok((row.get::<_, String>(0)?, to_usize(count)))
            })?
            .collect::<rusqlite::Result<HashMap<_, _>>>()?;
        Ok(Counters {
            total: to_usize(total),
            active,
        })
    }

    /// Counts one task as loaded at start-up.
    pub(crate) fn count_loaded(&mut self, scope: &str, active: bool) {
        self.total += 1;
        if active {
            *self.active.entry(scope.to_owned()).or_insert(0) += 1;
        }
    }

    /// The stored task count.
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    /// Whether one more active task of `scope` fits `limits`; the bound that refuses if not.
    pub(crate) fn check(&self, scope: &str, limits: CreateLimits) -> Result<(), CapacityLimit> {
        if self.total >= limits.max_tasks {
            return Err(CapacityLimit::MaxTasks);
        }
        if self.active.get(scope).copied().unwrap_or(0) >= limits.max_active_per_scope {
            return Err(CapacityLimit::MaxActiveTasksPerScope);
        }
        Ok(())
    }

    /// Counts a created (active) task.
    pub(crate) fn created(&mut self, scope: &str) {
        self.total += 1;
        *self.active.entry(scope.to_owned()).or_insert(0) += 1;
    }

    /// A task of `scope` is no longer active.
    pub(crate) fn deactivated(&mut self, scope: &str) {
        if let Some(count) = self.active.get_mut(scope) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.active.remove(scope);
            }
        }
    }

    /// A task was deleted.
    pub(crate) fn deleted(&mut self, scope: &str, was_active: bool) {
        self.total = self.total.saturating_sub(1);
        if was_active {
            self.deactivated(scope);
        }
    }
}

fn to_usize(count: i64) -> usize {
    usize::try_from(count).unwrap_or(0)
}
