//! The operator's inventory: every stored task across every scope, metadata only, with the
//! stuck ones marked, and the registered nodes.
//!
//! This is an optional store capability for an operator's console (never for an MCP request:
//! it checks no scope). A store that lacks it answers `Ok(None)` from
//! [`Store::inventory`](super::Store::inventory), [`Store::inventory_counts`](super::Store::inventory_counts)
//! and [`Store::nodes`](super::Store::nodes), and a console shows "not supported by this store".
//!
//! # Stuck
//! A non-terminal task is *stuck* ([`StuckReason`]) when the node holding it is registered with
//! a lease that has run out (it died or was partitioned, and no claim pass has taken the task
//! yet), or otherwise
//! when it has not changed for longer than [`StuckRules`] allows: `working` past
//! [`StuckRules::working_ms`], `input_required` past [`StuckRules::input_required_ms`]
//! (nobody answered). A lost holder wins over idleness.
//!
//! # Paging
//! Pages are in creation order ([`InventoryOrder`]), ties broken by task id, and a cursor
//! ([`InventoryCursor`]) is the last row's `(createdAt, taskId)`: neither ever changes, so a
//! cursor stays right while tasks change, finish or are reaped (a task never shows twice, and
//! every task stored before the first page and still stored at the last shows once).

use tasks_core::{Progress, TaskId, TaskStatus, Timestamp};

use super::{NodeId, StatusCounts};
use crate::scope::Scope;

/// How long a task may go without a change before it counts as stuck, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StuckRules {
    /// A `working` task whose `lastUpdatedAt` is older than this is stuck.
    pub working_ms: u64,
    /// An `input_required` task whose `lastUpdatedAt` is older than this is stuck.
    pub input_required_ms: u64,
}

impl Default for StuckRules {
    /// 15 minutes working without a change, 1 hour waiting for input.
    fn default() -> Self {
        StuckRules {
            working_ms: 15 * 60 * 1000,
            input_required_ms: 60 * 60 * 1000,
        }
    }
}

impl StuckRules {
    /// Why a task is stuck at `now`, or `None`. `lost_holder` is the node holding it when that
    /// node is registered with a lease that has run out at `now` (`None` when the holder's
    /// lease is live, or the holder is not registered at all: a runtime that runs no leases, or
    /// a node a claim pass already removed, whose tasks that pass claims). Ignored for a
    /// terminal task, which nothing holds.
    pub fn judge(
        &self,
        status: TaskStatus,
        last_updated_at: Timestamp,
        lost_holder: Option<NodeId>,
        now: Timestamp,
    ) -> Option<StuckReason> {
        if status.is_terminal() {
            return None;
        }
        if let Some(node) = lost_holder {
            return Some(StuckReason::HolderLost { node });
        }
        let idle_ms = now
            .unix_millis()
            .saturating_sub(last_updated_at.unix_millis());
        match status {
            TaskStatus::Working if idle_ms > self.working_ms => {
                Some(StuckReason::Working { idle_ms })
            }
            TaskStatus::InputRequired if idle_ms > self.input_required_ms => {
                Some(StuckReason::InputUnanswered { idle_ms })
            }
            _ => None,
        }
    }

    /// The newest `lastUpdatedAt` at which a task in `status` is stuck by idleness at `now`
    /// (a store's index bound): stuck when `lastUpdatedAt` is strictly below the answer.
    pub fn idle_bound(&self, status: TaskStatus, now: Timestamp) -> Option<Timestamp> {
        let limit = match status {
            TaskStatus::Working => self.working_ms,
            TaskStatus::InputRequired => self.input_required_ms,
            _ => return None,
        };
        Some(Timestamp::from_unix_millis(
            now.unix_millis().saturating_sub(limit),
        ))
    }
}

/// Why a task is stuck ([`StuckRules::judge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StuckReason {
    /// The node holding the task is registered with a lease that has run out, and no claim
    /// pass has taken the task yet.
    HolderLost {
        /// The holder.
        node: NodeId,
    },
    /// `working` with no change for `idle_ms` milliseconds.
    Working {
        /// Milliseconds since `lastUpdatedAt`.
        idle_ms: u64,
    },
    /// `input_required` with no answer for `idle_ms` milliseconds.
    InputUnanswered {
        /// Milliseconds since `lastUpdatedAt`.
        idle_ms: u64,
    },
}

impl StuckReason {
    /// A stable label: `holder_lost`, `working_idle`, `input_unanswered` (the
    /// `mcp_tasks_stuck{reason}` gauge's values).
    pub fn label(&self) -> &'static str {
        match self {
            StuckReason::HolderLost { .. } => "holder_lost",
            StuckReason::Working { .. } => "working_idle",
            StuckReason::InputUnanswered { .. } => "input_unanswered",
        }
    }
}

/// The order of an inventory page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InventoryOrder {
    /// Newest `createdAt` first (ties: descending task id).
    #[default]
    NewestFirst,
    /// Oldest `createdAt` first (ties: ascending task id).
    OldestFirst,
}

/// Where the next page starts: the last row of the previous one (exclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryCursor {
    /// The last row's `createdAt`.
    pub created_at: Timestamp,
    /// The last row's task id.
    pub id: TaskId,
}

/// What [`Store::inventory`](super::Store::inventory) lists: tasks unexpired at `now`,
/// across every scope, matching every filter given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryQuery {
    /// Only this task (a detail view).
    pub id: Option<TaskId>,
    /// Only tasks in one of these statuses (every status when empty).
    pub statuses: Vec<TaskStatus>,
    /// Only tasks of this tool.
    pub tool: Option<String>,
    /// Only tasks this node holds.
    pub node: Option<NodeId>,
    /// Only tasks created at or after this instant.
    pub created_from: Option<Timestamp>,
    /// Only tasks created before this instant.
    pub created_before: Option<Timestamp>,
    /// Only stuck tasks, judged by the rules passed beside the query.
    pub stuck_only: bool,
    /// The page's order.
    pub order: InventoryOrder,
    /// Start after this row (from the start when `None`).
    pub after: Option<InventoryCursor>,
    /// At most this many rows (at least one is asked for; a store may cap it at 1000).
    pub limit: usize,
}

impl Default for InventoryQuery {
    /// Every task, newest first, 50 a page.
    fn default() -> Self {
        InventoryQuery {
            id: None,
            statuses: Vec::new(),
            tool: None,
            node: None,
            created_from: None,
            created_before: None,
            stuck_only: false,
            order: InventoryOrder::NewestFirst,
            after: None,
            limit: 50,
        }
    }
}

/// The most rows a page holds, whatever [`InventoryQuery::limit`] asks.
pub const MAX_INVENTORY_PAGE: usize = 1000;

impl InventoryQuery {
    /// The limit a store applies: [`InventoryQuery::limit`] within 1..=[`MAX_INVENTORY_PAGE`].
    pub fn page_size(&self) -> usize {
        self.limit.clamp(1, MAX_INVENTORY_PAGE)
    }

    /// Whether a row passes every filter except the cursor (for stores that scan memory).
    pub fn admits(&self, row: &InventoryRow) -> bool {
        self.admits_parts(
            &row.id,
            row.status,
            row.tool.as_deref(),
            row.node,
            row.created_at,
            row.stuck.is_some(),
        )
    }

    /// [`InventoryQuery::admits`] from a row's parts, so that a scan builds rows only for the
    /// page.
    pub fn admits_parts(
        &self,
        id: &TaskId,
        status: TaskStatus,
        tool: Option<&str>,
        node: Option<NodeId>,
        created_at: Timestamp,
        stuck: bool,
    ) -> bool {
        self.id.as_ref().is_none_or(|wanted| wanted == id)
            && (self.statuses.is_empty() || self.statuses.contains(&status))
            && self
                .tool
                .as_deref()
                .is_none_or(|wanted| tool == Some(wanted))
            && self.node.is_none_or(|wanted| node == Some(wanted))
            && self.created_from.is_none_or(|t| created_at >= t)
            && self.created_before.is_none_or(|t| created_at < t)
            && (!self.stuck_only || stuck)
    }

    /// The page's order of two rows' keys `(createdAt, taskId)`.
    pub fn compare(&self, a: (Timestamp, &TaskId), b: (Timestamp, &TaskId)) -> std::cmp::Ordering {
        match self.order {
            InventoryOrder::NewestFirst => b.cmp(&a),
            InventoryOrder::OldestFirst => a.cmp(&b),
        }
    }

    /// Whether a row comes after the cursor in the page's order.
    pub fn is_after_cursor(&self, created_at: Timestamp, id: &TaskId) -> bool {
        let Some(cursor) = &self.after else {
            return true;
        };
        let key = (created_at, id);
        let at = (cursor.created_at, &cursor.id);
        match self.order {
            InventoryOrder::NewestFirst => key < at,
            InventoryOrder::OldestFirst => key > at,
        }
    }

    /// One page from every matching row in any order (for stores that scan memory): sorted,
    /// cut after the cursor and to the page size, with the cursor of the next page.
    pub fn page(&self, rows: impl Iterator<Item = InventoryRow>) -> InventoryPage {
        let mut rows: Vec<InventoryRow> = rows
            .filter(|row| self.admits(row) && self.is_after_cursor(row.created_at, &row.id))
            .collect();
        rows.sort_by(|a, b| self.compare((a.created_at, &a.id), (b.created_at, &b.id)));
        let size = self.page_size();
        let more = rows.len() > size;
        rows.truncate(size);
        InventoryPage::new(rows, more)
    }
}

/// One stored task as the inventory shows it: metadata only (never arguments, results or
/// input answers).
#[derive(Debug, Clone, PartialEq)]
pub struct InventoryRow {
    /// The task id.
    pub id: TaskId,
    /// The owning scope: an opaque label (a keyed hash of the caller, or empty for the shared
    /// scope); never a credential.
    pub scope: Scope,
    /// The tool it runs; `None` where the store no longer knows (a terminal task whose work
    /// descriptor was dropped before the store recorded tool names).
    pub tool: Option<String>,
    /// The status.
    pub status: TaskStatus,
    /// The status message, as the tool or the runtime wrote it (untrusted text).
    pub status_message: Option<String>,
    /// The last progress reported.
    pub progress: Option<Progress>,
    /// `createdAt`.
    pub created_at: Timestamp,
    /// `lastUpdatedAt`.
    pub last_updated_at: Timestamp,
    /// When the task expires (`createdAt + ttlMs`); `None` for no TTL.
    pub expires_at: Option<Timestamp>,
    /// The runs of its tool started so far; `None` for a terminal task whose lease the store
    /// dropped.
    pub attempt: Option<u32>,
    /// The node holding it (non-terminal tasks).
    pub node: Option<NodeId>,
    /// Its fencing generation (non-terminal tasks).
    pub generation: Option<u64>,
    /// Why it is stuck, if it is.
    pub stuck: Option<StuckReason>,
}

/// A durable store's columns of one task, as its inventory query reads them (times in
/// milliseconds since the Unix epoch; a negative one reads as the epoch).
#[derive(Debug, Clone)]
pub struct StoredColumns<'a> {
    /// The task id (already parsed).
    pub id: TaskId,
    /// The status column (already parsed).
    pub status: TaskStatus,
    /// The scope column.
    pub scope: Scope,
    /// The stored task's JSON text, if any: read for the status message, the progress and
    /// `lastUpdatedAt`; a text that does not decode as this task leaves them to the columns.
    pub task: Option<&'a str>,
    /// The tool column.
    pub tool: Option<String>,
    /// `created_at_ms`.
    pub created_at_ms: i64,
    /// `updated_at_ms` (used when the text does not decode).
    pub updated_at_ms: i64,
    /// `expires_at_ms`.
    pub expires_at_ms: Option<i64>,
    /// The owner node's 16 bytes.
    pub owner: Option<&'a [u8]>,
    /// The fencing generation.
    pub generation: i64,
    /// The runs started.
    pub attempt: i64,
    /// Whether the owner is registered with a lease that has run out at `now`.
    pub holder_lost: bool,
}

impl InventoryRow {
    /// The row of a durable store's `columns`, judged stuck or not by `rules` at `now`: the
    /// status message, progress and `lastUpdatedAt` from the task's text where it decodes (as
    /// this task, in this status), else from the columns; a terminal task shows no holder.
    pub fn from_columns(columns: StoredColumns<'_>, rules: StuckRules, now: Timestamp) -> Self {
        let at = |ms: i64| Timestamp::from_unix_millis(u64::try_from(ms).unwrap_or(0));
        let status = columns.status;
        let task = columns
            .task
            .and_then(|text| serde_json::from_str::<tasks_core::Task>(text).ok())
            .filter(|task| *task.id() == columns.id && task.status() == status);
        let node = columns
            .owner
            .and_then(|bytes| <[u8; 16]>::try_from(bytes).ok())
            .map(NodeId::from_bytes)
            .filter(|_| !status.is_terminal());
        let last_updated_at = task
            .as_ref()
            .map_or(at(columns.updated_at_ms), tasks_core::Task::last_updated_at);
        InventoryRow {
            scope: columns.scope,
            tool: columns.tool,
            status,
            status_message: task
                .as_ref()
                .and_then(|task| task.status_message().map(str::to_owned)),
            progress: task.as_ref().and_then(tasks_core::Task::progress),
            created_at: at(columns.created_at_ms),
            last_updated_at,
            expires_at: columns.expires_at_ms.map(at),
            attempt: u32::try_from(columns.attempt).ok(),
            generation: node.and_then(|_| u64::try_from(columns.generation).ok()),
            stuck: rules.judge(
                status,
                last_updated_at,
                node.filter(|_| columns.holder_lost),
                now,
            ),
            node,
            id: columns.id,
        }
    }
}

/// One page of [`Store::inventory`](super::Store::inventory).
#[derive(Debug, Clone, PartialEq)]
pub struct InventoryPage {
    /// The rows, in the query's order.
    pub rows: Vec<InventoryRow>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<InventoryCursor>,
}

impl InventoryPage {
    /// A page of `rows`, with a next cursor (the last row's) when `more` rows follow.
    pub fn new(rows: Vec<InventoryRow>, more: bool) -> Self {
        let next = more
            .then(|| rows.last())
            .flatten()
            .map(|row| InventoryCursor {
                created_at: row.created_at,
                id: row.id.clone(),
            });
        InventoryPage { rows, next }
    }
}

/// Stuck tasks by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StuckCounts {
    /// Held by a registered node whose lease ran out.
    pub holder_lost: u64,
    /// `working` with no change past the rule.
    pub working_idle: u64,
    /// `input_required` unanswered past the rule.
    pub input_unanswered: u64,
}

impl StuckCounts {
    /// Counts one more task stuck for `reason`.
    pub fn add(&mut self, reason: &StuckReason) {
        match reason {
            StuckReason::HolderLost { .. } => self.holder_lost += 1,
            StuckReason::Working { .. } => self.working_idle += 1,
            StuckReason::InputUnanswered { .. } => self.input_unanswered += 1,
        }
    }

    /// Every stuck task.
    pub fn total(&self) -> u64 {
        self.holder_lost + self.working_idle + self.input_unanswered
    }
}

/// What [`Store::inventory_counts`](super::Store::inventory_counts) answers: tasks unexpired
/// at `now` across every scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InventoryCounts {
    /// By status.
    pub by_status: StatusCounts,
    /// By tool, in ascending tool-name order; tasks whose tool is unknown are counted under
    /// `None`, first.
    pub by_tool: Vec<(Option<String>, StatusCounts)>,
    /// Stuck tasks by reason.
    pub stuck: StuckCounts,
}

impl InventoryCounts {
    /// Counts one task (for stores that scan memory; sort with [`InventoryCounts::finish`]).
    pub fn add(&mut self, tool: Option<&str>, status: TaskStatus, stuck: Option<&StuckReason>) {
        self.by_status.add(status, 1);
        match self.by_tool.iter_mut().find(|(t, _)| t.as_deref() == tool) {
            Some((_, counts)) => counts.add(status, 1),
            None => {
                let mut counts = StatusCounts::default();
                counts.add(status, 1);
                self.by_tool.push((tool.map(str::to_owned), counts));
            }
        }
        if let Some(reason) = stuck {
            self.stuck.add(reason);
        }
    }

    /// Puts `by_tool` in its documented order.
    pub fn finish(mut self) -> Self {
        self.by_tool.sort_by(|a, b| a.0.cmp(&b.0));
        self
    }
}

/// A registered node as [`Store::nodes`](super::Store::nodes) lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRow {
    /// The node.
    pub id: NodeId,
    /// When it registered; `None` where the store did not record it (rows of an older schema).
    pub started_at: Option<Timestamp>,
    /// Its last registration or renewal; `None` where not recorded.
    pub renewed_at: Option<Timestamp>,
    /// When its lease runs out.
    pub lease_expires_at: Timestamp,
    /// Whether the lease is live at `now`. A node whose lease ran out is fenced: its writes
    /// are refused, and its tasks go to the next claim.
    pub live: bool,
    /// The non-terminal, unexpired tasks it holds.
    pub held: u64,
}
