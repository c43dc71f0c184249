//! 2025-11-25 tasks on a session, on the runtime and store the 2026-07-28 path uses (a task is
//! one task in both eras): creation from a hinted `tools/call`, `tasks/get` and `tasks/cancel`
//! (MCP 2025-11-25 tasks:
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks>). The wire
//! forms of their answers are the core's ([`tasks_core::sessions::tasks`]).

use std::sync::Arc;

use tasks_core::input::missing_capabilities;
use tasks_core::plan::ToolRules as _;
use tasks_core::sessions::tasks::TaskHint;
use tasks_core::sessions::SessionCall;
use tasks_core::{McpError, Task, TaskId, TaskOrigin, TaskState};

use super::live::Session;
use crate::creation::Creation;
use crate::registry::Tool;
use crate::runtime::TaskRuntime;
use crate::scope::Scope;
use crate::work::Work;

/// Creates the task of a `tools/call` of `session` hinted with `hint` (its `ttl`, clamped to
/// the server's bounds: [`TaskHint::ttl`]). A capability the tool always needs is checked
/// before any task exists. The call's `progressToken` stays valid for the whole task
/// ("Task Progress Notifications"): the session's GET stream sends the task's progress with it.
///
/// # Errors
/// -32021 for a capability the client did not declare; the runtime's: minting the id, or
/// creating the task ([`TaskRuntime::create`]).
pub async fn create(
    runtime: &TaskRuntime,
    session: &Session,
    call: SessionCall<Arc<Tool>>,
    hint: TaskHint,
) -> Result<Arc<Task>, McpError> {
    let needs = call.tool.client_needs().iter().copied();
    if let Some(error) = missing_capabilities(&session.client_capabilities, needs) {
        return Err(error);
    }
    let work = Work {
        tool: call.name,
        arguments: call.arguments,
        input_responses: None,
        client_capabilities: session.client_capabilities.clone(),
        scope: session.scope.clone(),
        trace_parent: None,
        sealed_principal: None,
    };
    let ttl = hint.ttl(runtime.config().ttl_ms);
    // The session learns the task before it exists: its worker may ask for input in its first
    // step, and the GET stream announces and delivers only what the session has recorded as
    // its own, so recording it after creation left a window in which that request was lost.
    let task_id = runtime.mint_task_id()?;
    session.book(|book| {
        book.created(&task_id);
        if let Some(token) = call.progress_token {
            book.follow_progress(&task_id, token);
        }
    });
    let creation = Creation::new(work)
        .caller(session.principal.clone())
        .tool(call.tool)
        .minted_id(task_id.clone())
        .ttl_ms(ttl)
        .origin(TaskOrigin::Experimental2025);
    let created = runtime.create(creation).await;
    if created.is_err() {
        session.book(|book| book.forget_created(&task_id));
    }
    created
}

/// `tasks/get`. The client has named the task, so the session's GET stream may ask its
/// questions; when it waits for input, the stream is asked to deliver them now.
///
/// # Errors
/// -32602 for an unknown task; the store's errors.
pub async fn get(
    runtime: &TaskRuntime,
    session: &Session,
    task: &TaskId,
) -> Result<Arc<Task>, McpError> {
    session.book(|book| book.named(task));
    let task = runtime.get(&session.scope, task).await?;
    if matches!(task.state(), TaskState::InputRequired { .. }) {
        session.nudge(task.clone());
    }
    Ok(task)
}

/// `tasks/cancel`: a terminal task is refused; otherwise the task is `cancelled` before the
/// answer, which shows it so (the runtime commits the cancellation first, then stops the
/// worker; a result arriving later is discarded).
///
/// # Errors
/// -32602 for an unknown task, and `Task is already terminal` for a task that ended before
/// the cancellation could be committed.
pub async fn cancel(
    runtime: &TaskRuntime,
    scope: &Scope,
    task: &TaskId,
) -> Result<Arc<Task>, McpError> {
    let terminal = || McpError::invalid_params("Task is already terminal");
    if runtime.get(scope, task).await?.is_terminal() {
        return Err(terminal());
    }
    runtime.cancel(scope, task).await?;
    let now = runtime.get(scope, task).await?;
    match now.state() {
        TaskState::Cancelled => Ok(now),
        _ => Err(terminal()),
    }
}
