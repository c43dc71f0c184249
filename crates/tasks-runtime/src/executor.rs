//! The executor: carries out the core's plans on the runtime, the same way for every host.
//!
//! The core plans a request ([`tasks_core::plan`]); a host (this project's HTTP adapter, the
//! rmcp bridge, a stdio server, a queue consumer) admits the caller and hands the plan here,
//! then encodes the [`Answer`] in its own framing. Whatever a host must not forget happens
//! only here: looking the task up in the caller's scope (and, for a request that declared only
//! the 2025-11-25 tasks capability, in that flow's tasks only: [`TaskRuntime::reach`]),
//! sealing the caller into a new task's work, and creating it with the tool the plan found.
//!
//! | plan | carried out by | answer |
//! |---|---|---|
//! | [`TaskAction::Get`] | [`Executor::task_method`] | [`Answer::Task`]: the `DetailedTask` |
//! | [`TaskAction::Update`], [`TaskAction::Cancel`] | [`Executor::task_method`] | [`Answer::Ack`] |
//! | `CallPlan::CreateTask` of a `tools/call` | [`Executor::create_task`] | [`Answer::Created`]: the `CreateTaskResult` |
//!
//! SEP-2663 "Task Creation", "Task Polling", "Task Update Requests", "Task Cancellation"
//! (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).

use std::sync::Arc;

use serde::{Serialize, Serializer};
use tasks_core::plan::TaskAction;
use tasks_core::wire::{self, ResultMeta};
use tasks_core::{JsonObject, McpError, RequestMeta, Task, TaskId};

use crate::creation::Creation;
use crate::registry::Tool;
use crate::runtime::TaskRuntime;
use crate::scope::{Caller, Scope};
use crate::work::Work;

/// Carries out planned requests on a [`TaskRuntime`]; see the module table. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Executor {
    runtime: TaskRuntime,
    server_meta: Arc<ResultMeta>,
}

/// What carrying out a plan answers, for the host to encode ([`Executor::view`]).
#[derive(Debug, Clone)]
pub enum Answer {
    /// The task as `tasks/get` shows it: a `DetailedTask`.
    Task(Arc<Task>),
    /// The task just created, as a `CreateTaskResult`.
    Created(Arc<Task>),
    /// The empty acknowledgement `{"resultType":"complete"}` of `tasks/update` and
    /// `tasks/cancel`.
    Ack,
}

/// A `tools/call` the planner decided to run as a task (`CallPlan::CreateTask`), with what
/// the request carried.
#[derive(Debug)]
pub struct TaskCall {
    /// The tool the plan found.
    pub tool: Arc<Tool>,
    /// The call's arguments (`{}` when it had none).
    pub arguments: JsonObject,
    /// The request's validated `_meta` (its client capabilities and trace context go with
    /// the task).
    pub meta: RequestMeta,
    /// The answers of earlier MRTR rounds the plan passed on.
    pub answers: Option<JsonObject>,
    /// The id of a retry's task, derived by the plan; `None` for a fresh one.
    pub task_id: Option<TaskId>,
}

impl Executor {
    /// An executor of `runtime`'s tasks, answering with the server's `_meta` `server_meta`
    /// (`{"io.modelcontextprotocol/serverInfo": {name, version}}`) on every result.
    pub fn new(runtime: TaskRuntime, server_meta: Arc<ResultMeta>) -> Self {
        Executor {
            runtime,
            server_meta,
        }
    }

    /// The runtime it carries plans out on.
    pub fn runtime(&self) -> &TaskRuntime {
        &self.runtime
    }

    /// The `_meta` every result carries.
    pub fn server_meta(&self) -> &Arc<ResultMeta> {
        &self.server_meta
    }

    /// `tasks/get`, `tasks/update` or `tasks/cancel`, planned by
    /// [`tasks_core::plan::plan_task_method`] (or its legacy form), for a caller of `scope`.
    ///
    /// # Errors
    /// -32602 `Unknown or inaccessible taskId` for a task not in `scope`; -32021 for a task a
    /// legacy-only request may not reach ([`TaskRuntime::reach`]); the runtime's errors of
    /// [`TaskRuntime::update`] and [`TaskRuntime::cancel`].
    pub async fn task_method(&self, action: TaskAction, scope: &Scope) -> Result<Answer, McpError> {
        let runtime = &self.runtime;
        match action {
            TaskAction::Get(target) => runtime.reach(scope, &target).await.map(Answer::Task),
            TaskAction::Update(update) => {
                let responses = update.input_responses;
                runtime.update(scope, &update.task_id, responses).await?;
                Ok(Answer::Ack)
            }
            TaskAction::Cancel(target) => {
                if target.only.is_some() {
                    runtime.reach(scope, &target).await?;
                }
                runtime.cancel(scope, &target.task_id).await?;
                Ok(Answer::Ack)
            }
        }
    }

    /// Creates the task of `call` for `caller` (sealed into its work) with the tool its plan
    /// found; a retry's derived id answers the task it already created.
    ///
    /// # Errors
    /// As [`TaskRuntime::create`].
    pub async fn create_task(&self, call: TaskCall, caller: &Caller) -> Result<Answer, McpError> {
        let TaskCall {
            tool,
            arguments,
            meta,
            answers,
            task_id,
        } = call;
        let work = Work::for_call(caller.scope.clone(), tool.name(), arguments, answers, meta);
        let mut creation = Creation::new(work)
            .caller(caller.principal.clone())
            .tool(tool);
        if let Some(id) = task_id {
            creation = creation.retry_id(id);
        }
        self.runtime.create(creation).await.map(Answer::Created)
    }

    /// `answer`'s wire form, with the server's `_meta`: serialize it into the host's
    /// response.
    pub fn view<'a>(&'a self, answer: &'a Answer) -> AnswerView<'a> {
        AnswerView {
            answer,
            meta: &self.server_meta,
        }
    }
}

/// The wire form of an [`Answer`] ([`Executor::view`]): a `DetailedTask`, a
/// `CreateTaskResult` or the ack, each with the server's `_meta`.
#[derive(Debug, Clone, Copy)]
pub struct AnswerView<'a> {
    answer: &'a Answer,
    meta: &'a ResultMeta,
}

impl Serialize for AnswerView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.answer {
            Answer::Task(task) => wire::detailed(task)
                .with_result_meta(self.meta)
                .serialize(serializer),
            Answer::Created(task) => wire::creation(task)
                .with_result_meta(self.meta)
                .serialize(serializer),
            Answer::Ack => wire::ack(Some(self.meta.object())).serialize(serializer),
        }
    }
}
