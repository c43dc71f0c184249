//! 2025-11-25 tasks on a session: `tasks/list`, and the blocking `tasks/result` with its input
//! side channel (creation, `tasks/get` and `tasks/cancel` are [`tasks_runtime::sessions::tasks`]),
//! all on the runtime and store the 2026-07-28 path uses (a task is one task in both eras).
//!
//! MCP 2025-11-25 tasks
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks>):
//!
//! * "Creating Tasks": a hinted call answers `{"task": {…}}` at once; the hint's `ttl` is
//!   clamped to the server's bounds ([`TaskHint::ttl`]).
//! * "Getting Tasks": the task, flat (`ttl`, `pollInterval`, the 2025 status).
//! * "Task Cancellation": a terminal task is -32602; otherwise the task is `cancelled` before
//!   the answer, which shows it so (the runtime commits the cancellation first, then stops the
//!   worker; a result arriving later is discarded).
//! * "Result Retrieval" and "Input Required Status": `tasks/result` answers the payload of a
//!   terminal task ([`payload`](tasks_core::sessions::tasks::payload)); for a task still
//!   running it streams (SSE) and, while the task waits for input, sends each outstanding input
//!   request as a JSON-RPC request of the session with `related-task` `_meta`
//!   ([`tasks_runtime::sessions::deliver`]), unless the session's GET stream is already delivering them. Closing
//!   the stream stops only the wait: the task goes on, and a later `tasks/result` sends what is
//!   still outstanding. A task that is gone while waited for (its TTL ran out) ends the wait
//!   with -32602 `Unknown or inaccessible taskId`, as `tasks/get` answers, and its input
//!   requests still outstanding are withdrawn (`notifications/cancelled`; a late answer is
//!   refused). The wait never depends on one notification ([`tasks_runtime::TaskWait`]). The wait's
//!   decisions are the core's [`ResultWait`]; [`ResultDriver`] drives it.
//! * "Task Progress Notifications": a hinted call's `progressToken` stays valid for the whole
//!   task; the session records it ([`Creating::progress_token`](tasks_runtime::sessions::tasks::Creating::progress_token)), and its GET stream sends
//!   the task's progress with it as `notifications/progress`.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;
use tasks_core::sessions::session::{ResultWait, WaitStep};
use tasks_core::sessions::tasks::{list_result, LIST_PAGE};
use tasks_core::{McpError, TaskId};
use tasks_runtime::sessions::{InFlight, ResultDriver, Session};
use tasks_runtime::Scope;

use super::frames::{respond, Start};
use crate::response::McpResponse;
use crate::shared::Shared;

/// `tasks/list`: one page of the caller's tasks (scope, not session: a client finds its
/// tasks again from a new session), in id order.
///
/// # Errors
/// -32601 when the store cannot list (a custom store without `Store::list`).
pub(crate) async fn list(
    d: &Shared,
    scope: &Scope,
    id: &Value,
    after: Option<&TaskId>,
) -> Result<McpResponse, McpError> {
    match d.runtime.list(scope, after, LIST_PAGE).await? {
        Some(page) => Ok(McpResponse::result(id, &list_result(&page))),
        None => Err(McpError::MethodNotFound),
    }
}

/// `tasks/result`: see the module docs. The decisions are the core's [`ResultWait`]; an
/// answer at the first read is one JSON body, else a [`ResultDriver`] streams.
pub(crate) async fn result(
    d: &Shared,
    session: Arc<Session>,
    id: Value,
    task: TaskId,
    in_flight: InFlight,
) -> Result<McpResponse, McpError> {
    session.book(|book| book.named(&task));
    // Subscribed before the first read, so no change between the two is missed.
    let mut wait = d.runtime.wait_task(&session.scope, &task);
    let mut machine = ResultWait::new(id);
    let first = machine.seen(Ok(wait.current().await?));
    if let WaitStep::Answer { frame, .. } = first {
        return Ok(McpResponse::message(Bytes::from(frame)));
    }
    let runtime = d.runtime.clone();
    let metrics = d.metrics.clone();
    let cancel = in_flight.token.clone();
    Ok(
        respond(cancel.clone(), Start::Stream, move |tx| async move {
            let _in_flight = in_flight;
            let waiting = ResultDriver {
                runtime,
                metrics,
                session,
                tx,
                cancel,
            };
            waiting.run(machine, first, wait).await;
        })
        .await,
    )
}
