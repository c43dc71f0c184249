//! What callers send the writer thread, and what it answers.
//!
//! Callers do the CPU work (serializing the task and its work to JSON) before sending, so the
//! writer thread runs SQL only.

use std::sync::Arc;

use tasks_core::{Task, TaskId, Timestamp};
use tasks_runtime::store::inventory::{InventoryCounts, InventoryQuery, NodeRow, StuckRules};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{CasOutcome, Claimed, Created, Lease, Liveness, NodeId, StoreError};
use tasks_runtime::{Scope, Work};
use tokio::sync::oneshot;

/// A message to the writer thread.
pub(crate) enum Command {
    /// A write, answered once its batch has committed (or failed).
    Write(Write),
    /// Test support: the writer stops taking commands until the sender of this channel is
    /// dropped (see `SqliteStore::pause`).
    Pause(std::sync::mpsc::Receiver<()>),
}

/// One write and where its answer goes.
pub(crate) struct Write {
    pub(crate) op: Op,
    pub(crate) reply: oneshot::Sender<Result<Answer, StoreError>>,
}

/// The writes, with their arguments owned and their JSON already encoded.
pub(crate) enum Op {
    Create(NewTask),
    Transition(Cas),
    Reap {
        now: Timestamp,
    },
    Register {
        node: NodeId,
        now: Timestamp,
        expires: Timestamp,
    },
    Heartbeat {
        node: NodeId,
        now: Timestamp,
        expires: Timestamp,
    },
    Retire {
        node: NodeId,
    },
    Claim {
        node: NodeId,
        now: Timestamp,
        max: usize,
    },
    /// A read of the tasks a node holds, made on the writer's connection (it is rare).
    Held {
        node: NodeId,
        now: Timestamp,
        after: Option<TaskId>,
        max: usize,
    },
    ChargeAttempt {
        id: TaskId,
        lease: Lease,
        now: Timestamp,
    },
    /// A read of one inventory page ([`crate::inventory::list`]), on the writer's connection.
    Inventory {
        query: Box<InventoryQuery>,
        rules: StuckRules,
        now: Timestamp,
    },
    /// A read of the inventory's counts ([`crate::inventory::counts`]).
    InventoryCounts {
        rules: StuckRules,
        now: Timestamp,
    },
    /// A read of the registered nodes ([`crate::inventory::nodes`]).
    Nodes {
        now: Timestamp,
    },
    /// Test support: sets `PRAGMA max_page_count` (so a write can fail for want of space).
    MaxPageCount {
        pages: u64,
    },
}

impl Op {
    /// The time the write acts at, if it has one: the batch raises the clock's high-water
    /// mark to the latest.
    pub(crate) fn time(&self) -> Option<Timestamp> {
        match self {
            Op::Create(new) => Some(new.task.created_at()),
            Op::Transition(cas) => Some(cas.now),
            Op::Reap { now }
            | Op::Register { now, .. }
            | Op::Heartbeat { now, .. }
            | Op::Claim { now, .. }
            | Op::ChargeAttempt { now, .. } => Some(*now),
            Op::Retire { .. }
            | Op::Held { .. }
            | Op::Inventory { .. }
            | Op::InventoryCounts { .. }
            | Op::Nodes { .. }
            | Op::MaxPageCount { .. } => None,
        }
    }

    /// Whether the write changes the database with at most one statement and nothing that can
    /// fail follows its change, so it needs no savepoint of its own: SQLite undoes a failed
    /// statement by itself, and a write that is refused has changed nothing (a create refused
    /// before its insert or whose insert conflicted, a compare-and-set that matched no row, a
    /// heartbeat whose renewal matched none before its delete). A reap (several chunks), a
    /// claim (expired nodes, then the claim) and an attempt charge (its stored value is
    /// checked after the update) run in a savepoint, which rolls back a refused or failed
    /// write alone.
    pub(crate) fn one_change(&self) -> bool {
        !matches!(
            self,
            Op::Reap { .. } | Op::Claim { .. } | Op::ChargeAttempt { .. }
        )
    }
}

/// A task to create.
pub(crate) struct NewTask {
    pub(crate) task: Arc<Task>,
    pub(crate) work: Arc<Work>,
    pub(crate) task_json: String,
    pub(crate) work_json: String,
    pub(crate) limits: CreateLimits,
    pub(crate) owner: NodeId,
}

/// A compare-and-set transition.
pub(crate) struct Cas {
    pub(crate) who: Who,
    /// The new task (its revision is the expected one plus one).
    pub(crate) task: Arc<Task>,
    pub(crate) task_json: String,
    pub(crate) now: Timestamp,
}

/// [`tasks_runtime::store::Authority`], owned.
pub(crate) enum Who {
    Request(Scope),
    Worker(Lease),
}

/// What a write answers; the variant matches the [`Op`].
#[derive(Debug)]
pub(crate) enum Answer {
    Created(Created),
    Cas(CasOutcome),
    Reaped(Vec<TaskId>),
    Done,
    Liveness(Liveness),
    Claimed(Vec<Claimed>),
    Charged(Option<Lease>),
    Pages(u64),
    Inventory(crate::inventory::Listed),
    InventoryCounts(InventoryCounts),
    Nodes(Vec<NodeRow>),
}
