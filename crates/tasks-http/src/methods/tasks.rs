//! `tasks/get`, `tasks/update`, `tasks/cancel` (SEP-2663; tasks-wire-reference §4).
//!
//! Order after admission: the Tasks declaration (-32021), params (-32602, messages in
//! [`tasks_core::params`]), lookup in the caller's scope (-32602 `Unknown or inaccessible
//! taskId`), then the action. `tasks/get` answers the `DetailedTask`; update and cancel answer
//! the empty ack `{"resultType":"complete"}`, also for a terminal task and for unknown input
//! keys.

use tasks_core::{params, projection, McpError, Method};
use tasks_runtime::Scope;

use crate::dispatcher::Dispatcher;
use crate::response::McpResponse;
use tasks_core::admission::Admitted;

pub(crate) async fn handle(
    d: &Dispatcher,
    request: &Admitted,
    scope: &Scope,
    tasks_declared: bool,
) -> Result<McpResponse, McpError> {
    if !tasks_declared {
        return Err(McpError::missing_tasks_capability());
    }
    match request.method {
        Method::TasksGet => {
            let target = params::parse_task_ref(&request.params)?;
            let task = d.runtime.get(scope, &target.task_id).await?;
            let view = projection::detailed(&task).with_meta(&d.server_meta);
            Ok(McpResponse::result(&request.id, &view))
        }
        Method::TasksUpdate => {
            let update = params::parse_update(&request.params)?;
            d.runtime
                .update(scope, &update.task_id, update.input_responses)
                .await?;
            Ok(ack(d, request))
        }
        Method::TasksCancel => {
            let target = params::parse_task_ref(&request.params)?;
            d.runtime.cancel(scope, &target.task_id).await?;
            Ok(ack(d, request))
        }
        _ => Err(McpError::MethodNotFound),
    }
}

fn ack(d: &Dispatcher, request: &Admitted) -> McpResponse {
    McpResponse::result(&request.id, &projection::ack(Some(&d.server_meta)))
}
