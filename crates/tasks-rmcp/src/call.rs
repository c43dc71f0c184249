//! `tools/call` of a runtime tool: planned by [`tasks_core::call`] (the same steps, errors and
//! order as this project's own server: params, `Mcp-Param-*` headers, `requestState`, client
//! capabilities, answers, arguments), then run now (a synchronous result or an MRTR
//! `input_required` round, [`SyncExchange`]) or created as a task (`CreateTaskResult`, the
//! task durable before the answer: SEP-2663 "Task Creation",
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).

use rmcp::model::{CallToolRequestParams, CallToolResponse, ServerNotification};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use tasks_core::exchange::SyncResponse;
use tasks_core::plan::{into_arguments, parse_call, plan_call, CallContext};
use tasks_core::McpError;
use tasks_core::TaskPolicy;
use tasks_runtime::{Answer, CallStep, PlannedCall, SyncFrame, SyncStart};

use crate::bridge::TasksBridge;
use crate::convert::{self, error_value, to_rmcp, Failure, Headers};

impl TasksBridge {
    /// Answers a `tools/call` of one of the runtime's tools ([`TasksBridge::serves`]): a
    /// `CreateTaskResult` when the tool runs as a task for this request (its [`TaskPolicy`]
    /// and whether the request declared the Tasks extension), else the tool's result, or an
    /// MRTR `input_required` round when it asks for input. `handler` is the calling handler:
    /// its `get_info()` must advertise the Tasks extension for a task to be created.
    ///
    /// Progress and log notifications the tool sends while it runs synchronously go to the
    /// request's stream (when the request asked for them with `_meta.progressToken` or
    /// `logLevel`).
    ///
    /// # Errors
    /// -32602 `Unknown tool` for a tool the runtime does not have; -32602, -32020 and -32021
    /// in the planner's order (see [`tasks_core::plan::plan_call`]); -32603 `Internal error` when the
    /// tool runs only as a task ([`TaskPolicy::Required`]) but `handler` does not advertise the
    /// Tasks extension (a task-capable tool then runs at once, whatever the request
    /// declared); a store failure's -32603 (nothing is stored then).
    pub async fn call_tool<H: ServerHandler>(
        &self,
        handler: &H,
        request: CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.try_call(handler, request, cx)
            .await
            .map_err(Failure::into_rmcp)
    }

    async fn try_call<H: ServerHandler>(
        &self,
        handler: &H,
        request: CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, Failure> {
        let inner = &self.inner;
        let meta = convert::request_meta(&cx.meta)?;
        // A server that does not advertise the extension serves no tasks: a declaring client
        // is answered as one that did not declare it (a task-capable tool runs at once).
        let advertised = handler.get_info().capabilities.supports_tasks();
        let tasks_declared = meta.declares_tasks()? && advertised;
        let mut params = serde_json::to_value(&request).unwrap_or(Value::Null);
        if let Value::Object(params) = &mut params {
            params.remove("_meta");
        }
        let caller = self.caller(cx);
        let now = inner.runtime.now();
        let tools = inner.runtime.tools();
        let parts = cx.extensions.get::<http::request::Parts>();
        let headers = Headers(parts.map(|parts| &parts.headers));
        let no_params = tasks_core::JsonObject::new();
        let (tool, plan) = {
            let call = parse_call(&params)?;
            let tool = tools.find(call.name)?;
            if !advertised
                && tool.policy_for(params.as_object().unwrap_or(&no_params)) == TaskPolicy::Required
            {
                tracing::error!(
                    tool = tool.name(),
                    "the tool runs only as a task but get_info() does not advertise the Tasks extension"
                );
                return Err(McpError::Internal("Internal error").into());
            }
            let cx = CallContext {
                params: params.as_object().unwrap_or(&no_params),
                meta: &meta,
                tasks_declared,
                scope: caller.scope.as_str(),
                state_key: &inner.state_key,
                now,
            };
            let plan = plan_call(&call, &tool, &headers, cx)?;
            (tool, plan)
        };
        let call = PlannedCall {
            id: Value::Null,
            tool,
            arguments: into_arguments(params),
            meta,
            now,
        };
        let executor = &inner.executor;
        match executor.call(call, plan, &caller).await? {
            CallStep::Answer(answer) => {
                let view = serde_json::to_value(executor.view(&answer))
                    .map_err(|_| McpError::Internal("Internal error"))?;
                Ok(match answer {
                    Answer::Created(_) => CallToolResponse::Task(to_rmcp(view)?),
                    _ => CallToolResponse::Complete(to_rmcp(view)?),
                })
            }
            CallStep::RunNow(mut run) => {
                run.call = run.call.with_cancel(cx.ct.child_token());
                // Notifications go to the request's peer as they come.
                let mut frames = match executor.run_now(*run, true).await {
                    SyncStart::Done(response) => return sync_response(&response),
                    SyncStart::Streaming(frames) => frames,
                };
                while let Some(frame) = frames.next().await {
                    match frame {
                        SyncFrame::Notification(message) => forward(cx, &message).await,
                        SyncFrame::Response(response) => return sync_response(&response),
                    }
                }
                Err(McpError::Internal("Internal error").into())
            }
        }
    }
}

/// Sends one notification message of ours (`{"jsonrpc","method","params"}`) through the
/// request's peer: on rmcp's stateless HTTP server it goes out on the request's own stream.
async fn forward(cx: &RequestContext<RoleServer>, message: &[u8]) {
    let Ok(notification) = serde_json::from_slice::<ServerNotification>(message) else {
        tracing::warn!("a tool notification does not fit rmcp's model; dropped");
        return;
    };
    if cx.peer.send_notification(notification).await.is_err() {
        tracing::debug!("the client went away before a tool notification");
    }
}

/// rmcp's answer for the JSON-RPC response our exchange wrote.
fn sync_response(response: &SyncResponse) -> Result<CallToolResponse, Failure> {
    let message: Value = serde_json::from_slice(&response.message)
        .map_err(|_| Failure::Ours(McpError::Internal("Internal error")))?;
    if let Some(error) = message.get("error") {
        return Err(Failure::Rmcp(error_value(error)));
    }
    let result = message.get("result").cloned().unwrap_or(Value::Null);
    let input_required = result.get("resultType").and_then(Value::as_str) == Some("input_required");
    Ok(if input_required {
        CallToolResponse::InputRequired(to_rmcp(result)?)
    } else {
        CallToolResponse::Complete(to_rmcp(result)?)
    })
}
