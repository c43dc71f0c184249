//! `tools/list` and `tools/call` (MCP 2026-07-28 tools, "Listing Tools" and "Calling Tools":
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/tools>; SEP-2663 "Task
//! Creation":
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).
//!
//! `tools/call` is planned by [`tasks_core::plan::plan_call`] (the normative step order, from params to
//! "run now" or "create a task"); this module carries the plan out: a
//! synchronous run ([`sync_call`]: result, MRTR `input_required`, or error, as JSON or as an
//! SSE stream carrying progress and log notifications first) or task creation
//! (`CreateTaskResult`).

use http::HeaderMap;
use tasks_core::plan::CallPlan;
use tasks_core::McpError;
use tasks_runtime::{CallStep, Caller, PlannedCall};

use crate::methods::sync_call;
use crate::response::McpResponse;
use crate::shared::Shared;

pub(crate) async fn call(
    d: &Shared,
    call: PlannedCall,
    plan: CallPlan,
    headers: &HeaderMap,
    caller: &Caller,
) -> Result<McpResponse, McpError> {
    let id = call.id.clone();
    match d.executor.call(call, plan, caller).await? {
        CallStep::Answer(answer) => Ok(McpResponse::result(&id, &d.executor.view(&answer))),
        CallStep::RunNow(run) => {
            let streaming = sync_call::accepts_event_stream(headers);
            Ok(sync_call::respond(
                d.executor.run_now(*run, streaming).await,
            ))
        }
    }
}
