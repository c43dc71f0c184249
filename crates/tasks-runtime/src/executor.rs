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
//! | `CallPlan::CreateTask` of a `tools/call` | [`Executor::call`] | [`Answer::Created`]: the `CreateTaskResult` |
//! | `CallPlan::InvalidArguments` | [`Executor::call`] | [`Answer::Result`]: the tool error result |
//! | `CallPlan::RunSync` | [`Executor::call`], then [`Executor::run_now`] | [`CallStep::RunNow`], then a [`SyncStart`]: one response, or notifications and the response, which the host writes in its own framing (an SSE stream, rmcp's peer); a host may add its cancellation token in between |
//!
//! SEP-2663 "Task Creation", "Task Polling", "Task Update Requests", "Task Cancellation"
//! (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).

use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::Value;
use tasks_core::exchange::{StateIssuer, SyncExchange, SyncRequest};
use tasks_core::jsonrpc::with_server_meta;
use tasks_core::plan::{CallPlan, StateKey, TaskAction};
use tasks_core::wire::{self, ResultMeta};
use tasks_core::{JsonObject, McpError, RequestMeta, Task, Timestamp};

use crate::creation::Creation;
use crate::drive::{drive_sync, SyncStart};
use crate::registry::Tool;
use crate::runtime::{reached, TaskRuntime};
use crate::scope::{Caller, Scope};
use crate::sync::{run_sync, SyncCall};
use crate::work::Work;

/// Carries out planned requests on a [`TaskRuntime`]; see the module table. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Executor {
    runtime: TaskRuntime,
    server_meta: Arc<ResultMeta>,
    state_key: StateKey,
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
    /// A result object as it is, the server's `_meta` already added: the tool error result of
    /// a call whose arguments do not match the tool's `inputSchema`.
    Result(JsonObject),
}

/// What carrying out a `tools/call` plan leaves to the host.
#[derive(Debug)]
pub enum CallStep {
    /// Encode this answer.
    Answer(Answer),
    /// Run the tool now, within the request: drive [`SyncRun::call`] through
    /// [`SyncRun::exchange`], which decides every frame (notifications, the response, the next
    /// MRTR round).
    RunNow(Box<SyncRun>),
}

/// A tool to run now for one request (boxed in [`CallStep::RunNow`]).
#[derive(Debug)]
pub struct SyncRun {
    /// The tool the plan found.
    pub tool: Arc<Tool>,
    /// Its run: arguments, answers so far, the caller's principal and declared capabilities.
    /// A host adds what only it knows (a cancellation token, a notifier).
    pub call: SyncCall,
    /// The exchange that turns the run's outcome and notifications into wire messages.
    pub exchange: SyncExchange,
}

/// A planned `tools/call`: what carrying out its [`CallPlan`] needs of the request.
#[derive(Debug)]
pub struct PlannedCall {
    /// The request id (what the exchange's response echoes; `Null` for a host that sets it
    /// itself).
    pub id: Value,
    /// The tool the plan found (in the tools as registered when the request arrived).
    pub tool: Arc<Tool>,
    /// The call's arguments (`{}` when it had none).
    pub arguments: JsonObject,
    /// The request's validated `_meta` (its client capabilities, trace context, `logLevel` and
    /// `progressToken`).
    pub meta: RequestMeta,
    /// When the request was planned (what an MRTR `requestState` is issued against).
    pub now: Timestamp,
}

impl Executor {
    /// An executor of `runtime`'s tasks, answering with the server's `_meta` `server_meta`
    /// (`{"io.modelcontextprotocol/serverInfo": {name, version}}`) on every result and signing
    /// MRTR `requestState` with `state_key`.
    pub fn new(runtime: TaskRuntime, server_meta: Arc<ResultMeta>, state_key: StateKey) -> Self {
        Executor {
            runtime,
            server_meta,
            state_key,
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

    /// The key MRTR `requestState` is signed with: what the host's planner checks a retry's
    /// state against ([`tasks_core::plan::CallContext::state_key`]).
    pub fn state_key(&self) -> &StateKey {
        &self.state_key
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
            // `get`, then the limit, not `reach`: one future fewer on the hottest request.
            TaskAction::Get(target) => {
                let found = runtime.get(scope, &target.task_id).await;
                reached(&target, found).map(Answer::Task)
            }
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

    /// Carries out the plan of a `tools/call` for `caller`: a task created (the caller sealed
    /// into its work, the plan's tool, a retry's derived id answering the task it already
    /// created), the tool error result of invalid arguments, or the tool's run now with its
    /// exchange ([`CallStep::RunNow`]).
    ///
    /// # Errors
    /// As [`TaskRuntime::create`], for a task.
    pub async fn call(
        &self,
        call: PlannedCall,
        plan: CallPlan,
        caller: &Caller,
    ) -> Result<CallStep, McpError> {
        let PlannedCall {
            id,
            tool,
            arguments,
            meta,
            now,
        } = call;
        let (answers, previous) = match plan {
            CallPlan::InvalidArguments(result) => {
                let result = with_server_meta(&self.server_meta, result);
                return Ok(CallStep::Answer(Answer::Result(result)));
            }
            CallPlan::CreateTask { answers, task_id } => {
                let scope = caller.scope.clone();
                let work = Work::for_call(scope, tool.name(), arguments, answers, meta);
                let mut creation = Creation::new(work)
                    .caller(caller.principal.clone())
                    .tool(tool);
                if let Some(id) = task_id {
                    creation = creation.retry_id(id);
                }
                let task = self.runtime.create(creation).await?;
                return Ok(CallStep::Answer(Answer::Created(task)));
            }
            CallPlan::RunSync { answers, previous } => (answers, previous),
        };
        let sync = SyncCall::new(arguments.clone())
            .with_input_responses(answers.clone())
            .with_principal(caller.principal.clone());
        let request = SyncRequest::tools_call(
            id,
            tool.name(),
            arguments,
            caller.scope.as_str(),
            &meta,
            previous.as_ref(),
            answers,
        );
        let sync = sync.with_client_capabilities(meta.client_capabilities);
        let issuer = StateIssuer::new(self.state_key.clone(), self.runtime.config().ttl_ms, now);
        let exchange = SyncExchange::new(request, issuer, self.server_meta.clone());
        Ok(CallStep::RunNow(Box::new(SyncRun {
            tool,
            call: sync,
            exchange,
        })))
    }

    /// Carries out [`CallStep::RunNow`]: runs the tool through its exchange
    /// ([`drive_sync`]); `streaming` says whether the host can send notifications before the
    /// response. A host adds its cancellation token to [`SyncRun::call`] first.
    pub async fn run_now(&self, run: SyncRun, streaming: bool) -> SyncStart {
        let SyncRun {
            tool,
            call,
            exchange,
        } = run;
        let handler = move |call| async move { run_sync(&tool, call).await };
        let entropy = self.runtime.entropy().clone();
        drive_sync(handler, call, exchange, streaming, entropy).await
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
/// `CreateTaskResult`, the ack or a result, each with the server's `_meta`.
#[derive(Debug, Clone, Copy)]
pub struct AnswerView<'a> {
    answer: &'a Answer,
    meta: &'a ResultMeta,
}

impl Serialize for AnswerView<'_> {
    // Inlined into the host's encoder, as the projection was before the executor: the hot
    // `tasks/get` answer then serializes without a call per layer.
    #[inline]
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.answer {
            Answer::Task(task) => wire::detailed(task)
                .with_result_meta(self.meta)
                .serialize(serializer),
            Answer::Created(task) => wire::creation(task)
                .with_result_meta(self.meta)
                .serialize(serializer),
            Answer::Ack => wire::ack(Some(self.meta.object())).serialize(serializer),
            Answer::Result(result) => result.serialize(serializer),
        }
    }
}
