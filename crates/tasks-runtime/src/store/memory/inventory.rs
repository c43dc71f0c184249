//! The memory store's operator inventory: a scan of every entry (the store keeps no index
//! but the task id). A page filters the entries in place, keeps the keys of those that match,
//! selects the page's keys among them, and builds rows for those alone: over a million tasks
//! it allocates a key per matching task, not a row.

use std::collections::HashMap;
use std::sync::Arc;

use tasks_core::{TaskId, Timestamp};

use super::{Entry, MemoryStore, NodeLease};
use crate::store::inventory::{
    InventoryCounts, InventoryPage, InventoryQuery, InventoryRow, NodeRow, StuckReason, StuckRules,
};
use crate::store::NodeId;

/// A tool name read from an entry, without a copy for a running task.
enum ToolName<'a> {
    Running(&'a str),
    Interned(Arc<str>),
}

impl ToolName<'_> {
    fn as_str(&self) -> &str {
        match self {
            ToolName::Running(name) => name,
            ToolName::Interned(name) => name,
        }
    }
}

/// What the filters need of an entry, without a copy of its strings.
struct Parts {
    node: Option<NodeId>,
    stuck: Option<StuckReason>,
}

impl MemoryStore {
    fn parts(
        entry: &Entry,
        lapsed: &HashMap<NodeId, NodeLease>,
        rules: StuckRules,
        now: Timestamp,
    ) -> Parts {
        let task = &entry.task;
        let node = entry.running.as_deref().map(|running| running.lease.node);
        let lost_holder = node.filter(|node| lapsed.contains_key(node));
        Parts {
            node,
            stuck: rules.judge(task.status(), task.last_updated_at(), lost_holder, now),
        }
    }

    /// The tool of `entry`: its work's while it runs, the interned name once it is terminal.
    fn tool_of<'a>(&self, entry: &'a Entry) -> Option<ToolName<'a>> {
        match entry.running.as_deref() {
            Some(running) => Some(ToolName::Running(&running.work.tool)),
            None => self.tools.name(entry.tool).map(ToolName::Interned),
        }
    }

    /// The inventory row of `entry` at `now`, given the nodes whose lease ran out.
    fn row(
        &self,
        entry: &Entry,
        lapsed: &HashMap<NodeId, NodeLease>,
        rules: StuckRules,
        now: Timestamp,
    ) -> InventoryRow {
        let task = &entry.task;
        let running = entry.running.as_deref();
        let parts = Self::parts(entry, lapsed, rules, now);
        InventoryRow {
            id: task.id().clone(),
            scope: entry.scope.clone(),
            tool: self.tool_of(entry).map(|name| name.as_str().to_owned()),
            status: task.status(),
            status_message: task.status_message().map(str::to_owned),
            progress: task.progress(),
            created_at: task.created_at(),
            last_updated_at: task.last_updated_at(),
            expires_at: task.expires_at(),
            attempt: running.map(|running| running.lease.attempt),
            node: parts.node,
            generation: running.map(|running| running.lease.generation),
            stuck: parts.stuck,
        }
    }

    /// Whether `entry` passes every filter of `query` and comes after its cursor.
    fn admits(
        &self,
        entry: &Entry,
        query: &InventoryQuery,
        lapsed: &HashMap<NodeId, NodeLease>,
        rules: StuckRules,
        now: Timestamp,
    ) -> bool {
        let task = &entry.task;
        if task.is_expired(now) || !query.is_after_cursor(task.created_at(), task.id()) {
            return false;
        }
        let parts = Self::parts(entry, lapsed, rules, now);
        // The tool's name is looked up only when the query filters by it.
        let tool = query.tool.as_ref().and_then(|_| self.tool_of(entry));
        query.admits_parts(
            task.id(),
            task.status(),
            tool.as_ref().map(ToolName::as_str),
            parts.node,
            task.created_at(),
            parts.stuck.is_some(),
        )
    }

    /// The registered nodes whose lease has run out at `now`.
    fn lapsed_nodes(&self, now: Timestamp) -> HashMap<NodeId, NodeLease> {
        let mut nodes = self.leases().clone();
        nodes.retain(|_, lease| lease.expires <= now);
        nodes
    }

    pub(super) fn inventory_page(
        &self,
        query: &InventoryQuery,
        rules: StuckRules,
        now: Timestamp,
    ) -> InventoryPage {
        let lapsed = self.lapsed_nodes(now);
        let mut keys: Vec<(Timestamp, TaskId)> = match &query.id {
            Some(id) => self
                .tasks
                .get(id)
                .filter(|entry| self.admits(entry, query, &lapsed, rules, now))
                .map(|entry| (entry.task.created_at(), id.clone()))
                .into_iter()
                .collect(),
            None => self
                .tasks
                .iter()
                .filter(|entry| self.admits(entry, query, &lapsed, rules, now))
                .map(|entry| (entry.task.created_at(), entry.key().clone()))
                .collect(),
        };
        let size = query.page_size();
        let order = |a: &(Timestamp, TaskId), b: &(Timestamp, TaskId)| {
            query.compare((a.0, &a.1), (b.0, &b.1))
        };
        if keys.len() > size + 1 {
            keys.select_nth_unstable_by(size, order);
            keys.truncate(size + 1);
        }
        keys.sort_unstable_by(order);
        let more = keys.len() > size;
        keys.truncate(size);
        // A task reaped since the scan is left out.
        let rows = keys
            .iter()
            .filter_map(|(_, id)| self.tasks.get(id))
            .filter(|entry| !entry.task.is_expired(now))
            .map(|entry| self.row(&entry, &lapsed, rules, now))
            .collect();
        InventoryPage::new(rows, more)
    }

    pub(super) fn counts(&self, rules: StuckRules, now: Timestamp) -> InventoryCounts {
        let lapsed = self.lapsed_nodes(now);
        let mut counts = InventoryCounts::default();
        for entry in &self.tasks {
            if entry.task.is_expired(now) {
                continue;
            }
            let parts = Self::parts(&entry, &lapsed, rules, now);
            let tool = self.tool_of(&entry);
            let tool = tool.as_ref().map(ToolName::as_str);
            counts.add(tool, entry.task.status(), parts.stuck.as_ref());
        }
        counts.finish()
    }

    pub(super) fn node_rows(&self, now: Timestamp) -> Vec<NodeRow> {
        let nodes = self.leases().clone();
        let mut held: HashMap<NodeId, u64> = HashMap::new();
        for entry in &self.tasks {
            if let Some(running) = entry.running.as_deref() {
                if !entry.task.is_terminal() && !entry.task.is_expired(now) {
                    *held.entry(running.lease.node).or_default() += 1;
                }
            }
        }
        let mut rows: Vec<NodeRow> = nodes
            .into_iter()
            .map(|(id, lease)| NodeRow {
                id,
                started_at: Some(lease.started),
                renewed_at: Some(lease.renewed),
                lease_expires_at: lease.expires,
                live: lease.expires > now,
                held: held.get(&id).copied().unwrap_or(0),
            })
            .collect();
        rows.sort_by_key(|row| row.id);
        rows
    }
}
