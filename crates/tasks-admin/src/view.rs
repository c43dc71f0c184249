//! The JSON shapes of the API (camelCase, times as RFC 3339 text, node ids as 32 hex digits).

use serde::Serialize;
use tasks_runtime::store::inventory::{InventoryCounts, InventoryRow, NodeRow, StuckReason};
use tasks_runtime::store::StatusCounts;

/// A task's progress.
#[derive(Debug, Serialize)]
pub(crate) struct ProgressView {
    done: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<f64>,
}

/// Why a task is stuck.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StuckView {
    reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    idle_ms: Option<u64>,
}

impl From<&StuckReason> for StuckView {
    fn from(reason: &StuckReason) -> Self {
        let (node, idle_ms) = match reason {
            StuckReason::HolderLost { node } => (Some(node.to_string()), None),
            StuckReason::Working { idle_ms } | StuckReason::InputUnanswered { idle_ms } => {
                (None, Some(*idle_ms))
            }
        };
        StuckView {
            reason: reason.label(),
            node,
            idle_ms,
        }
    }
}

/// One task of the inventory.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskView {
    task_id: String,
    scope: String,
    tool: Option<String>,
    status: &'static str,
    status_message: Option<String>,
    progress: Option<ProgressView>,
    created_at: String,
    last_updated_at: String,
    expires_at: Option<String>,
    attempt: Option<u32>,
    node: Option<String>,
    generation: Option<u64>,
    stuck: Option<StuckView>,
}

impl From<&InventoryRow> for TaskView {
    fn from(row: &InventoryRow) -> Self {
        TaskView {
            task_id: row.id.as_str().to_owned(),
            scope: row.scope.as_str().to_owned(),
            tool: row.tool.clone(),
            status: row.status.as_str(),
            status_message: row.status_message.clone(),
            progress: row.progress.map(|p| ProgressView {
                done: p.done(),
                total: p.total(),
            }),
            created_at: row.created_at.to_string(),
            last_updated_at: row.last_updated_at.to_string(),
            expires_at: row.expires_at.map(|t| t.to_string()),
            attempt: row.attempt,
            node: row.node.map(|n| n.to_string()),
            generation: row.generation,
            stuck: row.stuck.as_ref().map(StuckView::from),
        }
    }
}

/// Counts by status.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StatusCountsView {
    working: u64,
    input_required: u64,
    completed: u64,
    failed: u64,
    cancelled: u64,
}

impl From<&StatusCounts> for StatusCountsView {
    fn from(c: &StatusCounts) -> Self {
        StatusCountsView {
            working: c.working,
            input_required: c.input_required,
            completed: c.completed,
            failed: c.failed,
            cancelled: c.cancelled,
        }
    }
}

/// One tool's counts.
#[derive(Debug, Serialize)]
pub(crate) struct ToolCountsView {
    tool: Option<String>,
    counts: StatusCountsView,
}

/// Stuck tasks by reason.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StuckCountsView {
    holder_lost: u64,
    working_idle: u64,
    input_unanswered: u64,
    total: u64,
}

/// `GET api/counts`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CountsView {
    by_status: StatusCountsView,
    by_tool: Vec<ToolCountsView>,
    stuck: StuckCountsView,
}

impl From<&InventoryCounts> for CountsView {
    fn from(c: &InventoryCounts) -> Self {
        CountsView {
            by_status: (&c.by_status).into(),
            by_tool: c
                .by_tool
                .iter()
                .map(|(tool, counts)| ToolCountsView {
                    tool: tool.clone(),
                    counts: counts.into(),
                })
                .collect(),
            stuck: StuckCountsView {
                holder_lost: c.stuck.holder_lost,
                working_idle: c.stuck.working_idle,
                input_unanswered: c.stuck.input_unanswered,
                total: c.stuck.total(),
            },
        }
    }
}

/// One node.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeView {
    id: String,
    started_at: Option<String>,
    renewed_at: Option<String>,
    lease_expires_at: String,
    live: bool,
    held: u64,
}

impl From<&NodeRow> for NodeView {
    fn from(n: &NodeRow) -> Self {
        NodeView {
            id: n.id.to_string(),
            started_at: n.started_at.map(|t| t.to_string()),
            renewed_at: n.renewed_at.map(|t| t.to_string()),
            lease_expires_at: n.lease_expires_at.to_string(),
            live: n.live,
            held: n.held,
        }
    }
}
