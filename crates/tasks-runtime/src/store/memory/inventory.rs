//! The memory store's operator inventory: a scan of every entry (the store keeps no index
//! but the task id; a console page over a million tasks in memory costs one pass).

use std::collections::HashMap;

use tasks_core::Timestamp;

use super::{Entry, MemoryStore, NodeLease};
use crate::store::inventory::{
    InventoryCounts, InventoryPage, InventoryQuery, InventoryRow, NodeRow, StuckRules,
};
use crate::store::NodeId;

impl MemoryStore {
    /// The inventory row of `entry` at `now`, given the live nodes.
    fn row(
        &self,
        entry: &Entry,
        lapsed: &HashMap<NodeId, NodeLease>,
        rules: StuckRules,
        now: Timestamp,
    ) -> InventoryRow {
        let task = &entry.task;
        let running = entry.running.as_deref();
        let node = running.map(|running| running.lease.node);
        let lost_holder = node.filter(|node| lapsed.contains_key(node));
        let tool = match running {
            Some(running) => Some(running.work.tool.clone()),
            None => self.tools.name(entry.tool).map(|name| name.to_string()),
        };
        InventoryRow {
            id: task.id().clone(),
            scope: entry.scope.clone(),
            tool,
            status: task.status(),
            status_message: task.status_message().map(str::to_owned),
            progress: task.progress(),
            created_at: task.created_at(),
            last_updated_at: task.last_updated_at(),
            expires_at: task.expires_at(),
            attempt: running.map(|running| running.lease.attempt),
            node,
            generation: running.map(|running| running.lease.generation),
            stuck: rules.judge(task.status(), task.last_updated_at(), lost_holder, now),
        }
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
        if let Some(id) = &query.id {
            let row = self
                .tasks
                .get(id)
                .filter(|entry| !entry.task.is_expired(now))
                .map(|entry| self.row(&entry, &lapsed, rules, now));
            return query.page(row.into_iter());
        }
        let rows = self
            .tasks
            .iter()
            .filter(|entry| !entry.task.is_expired(now))
            .map(|entry| self.row(&entry, &lapsed, rules, now))
            .collect::<Vec<_>>();
        query.page(rows.into_iter())
    }

    pub(super) fn counts(&self, rules: StuckRules, now: Timestamp) -> InventoryCounts {
        let lapsed = self.lapsed_nodes(now);
        let mut counts = InventoryCounts::default();
        for entry in &self.tasks {
            if entry.task.is_expired(now) {
                continue;
            }
            let row = self.row(&entry, &lapsed, rules, now);
            counts.add(row.tool.as_deref(), row.status, row.stuck.as_ref());
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
