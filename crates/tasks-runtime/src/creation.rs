//! What to create: the one value [`TaskRuntime::create`](crate::TaskRuntime::create), the
//! runtime's only entry for a new task, takes.
//!
//! A [`Work`] says what the task runs (the tool's name, its arguments, the answers gathered
//! before, the declared client capabilities, the scope and the trace context). The rest are
//! the choices of the request that creates it, each with a default:
//!
//! | choice | default | set by |
//! |---|---|---|
//! | the caller, sealed into the work ([`Work::sealed_principal`]) | the work as given | [`Creation::caller`] |
//! | the tool, already found by the request's plan | looked up by `work.tool` | [`Creation::tool`] |
//! | the task id | fresh and random | [`Creation::retry_id`] (idempotent), [`Creation::minted_id`] |
//! | the TTL in milliseconds | the configured one | [`Creation::ttl_ms`] |
//! | the task design that creates it | this extension | [`Creation::origin`] |

use std::sync::Arc;

use tasks_core::{TaskId, TaskOrigin};

use crate::registry::Tool;
use crate::scope::Principal;
use crate::work::Work;

/// One task to create: see the module table.
#[derive(Debug, Clone)]
pub struct Creation {
    pub(crate) work: Work,
    pub(crate) principal: Option<Option<Principal>>,
    pub(crate) tool: Option<Arc<Tool>>,
    pub(crate) id: IdChoice,
    pub(crate) ttl_ms: Option<Option<u64>>,
    pub(crate) origin: TaskOrigin,
}

/// How the new task's id is chosen.
#[derive(Debug, Clone)]
pub(crate) enum IdChoice {
    /// Drawn now from the runtime's entropy.
    Fresh,
    /// Derived by the caller so that only the same request maps to it: a task already stored
    /// under it (a replayed request) is answered as it is now, and nothing new is created.
    Retry(TaskId),
    /// Drawn before by [`TaskRuntime::mint_task_id`](crate::TaskRuntime::mint_task_id): new.
    Minted(TaskId),
}

impl Creation {
    /// A task running `work`, every choice at its default (the module table).
    pub fn new(work: Work) -> Self {
        Creation {
            work,
            principal: None,
            tool: None,
            id: IdChoice::Fresh,
            ttl_ms: None,
            origin: TaskOrigin::Extension,
        }
    }

    /// The creating request's caller: its principal is sealed into the work, bound to the
    /// work's scope, so the task's tool reads it as
    /// [`ToolContext::principal`](crate::ToolContext::principal) on every run while the store
    /// keeps only the sealed text. `None`, or the empty principal (the shared scope), stores
    /// no principal.
    pub fn caller(mut self, principal: Option<Principal>) -> Self {
        self.principal = Some(principal);
        self
    }

    /// The tool the request's plan already found ([`tasks_core::plan::Action::Call`]), so it
    /// is not looked up again by name; `work.tool` must name it.
    pub fn tool(mut self, tool: Arc<Tool>) -> Self {
        self.tool = Some(tool);
        self
    }

    /// A caller-derived id, idempotently: when a task with this id already exists in the
    /// work's scope (a replayed request), it is returned as it is now and nothing new is
    /// stored or run. Derive it so that only the same request maps to it (a keyed hash of data
    /// the client cannot forge, e.g. a signed MRTR `requestState` with the answers); it holds
    /// across processes sharing the store.
    pub fn retry_id(mut self, id: TaskId) -> Self {
        self.id = IdChoice::Retry(id);
        self
    }

    /// An id from [`TaskRuntime::mint_task_id`](crate::TaskRuntime::mint_task_id), known to
    /// the caller before the task exists; not looked for first (a minted id is new).
    pub fn minted_id(mut self, id: TaskId) -> Self {
        self.id = IdChoice::Minted(id);
        self
    }

    /// Keeps the task `ttl_ms` milliseconds from creation (`None`: until deleted otherwise)
    /// instead of the configured TTL: a 2025-11-25 client asks for a retention in its task
    /// hint, and the caller clamps it to the server's bounds first
    /// ([`tasks_core::sessions::tasks::TaskHint::ttl`]).
    pub fn ttl_ms(mut self, ttl_ms: Option<u64>) -> Self {
        self.ttl_ms = Some(ttl_ms);
        self
    }

    /// The task design that creates the task ([`tasks_core::Task::origin`]): a 2025-11-25
    /// session passes [`TaskOrigin::Experimental2025`].
    pub fn origin(mut self, origin: TaskOrigin) -> Self {
        self.origin = origin;
        self
    }
}

impl From<Work> for Creation {
    fn from(work: Work) -> Self {
        Creation::new(work)
    }
}
