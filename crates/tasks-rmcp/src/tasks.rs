//! `tasks/get`, `tasks/update`, `tasks/cancel` (SEP-2663 "Task Polling", "Task Update
//! Requests", "Task Cancellation":
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>),
//! well-formed (rmcp's typed handler methods) and malformed (rmcp's custom-request fallback).

use rmcp::model::{
    CancelTaskParams, CustomRequest, CustomResult, ErrorCode, GetTaskParams, GetTaskResult,
    UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{json, Value};
use tasks_core::headers::{check_name, name_rule, single, MirroredHeader};
use tasks_core::plan::plan_task_request;
use tasks_core::Method;

use crate::bridge::TasksBridge;
use crate::convert::{self, to_rmcp, Failure};

impl TasksBridge {
    /// `tasks/get`: the task's `DetailedTask` (its result, error or input requests inline).
    ///
    /// # Errors
    /// -32602 `Unknown or inaccessible taskId` for a task that does not exist, expired, or
    /// belongs to another caller; -32602 for a malformed `taskId`.
    pub async fn get_task(
        &self,
        request: GetTaskParams,
        cx: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let params = json!({"taskId": request.task_id});
        to_rmcp(self.task_method(Method::TasksGet, &params, cx).await?)
    }

    /// `tasks/update`: hands `inputResponses` to a task waiting for input. Unknown keys and a
    /// task that no longer waits are acknowledged too (SEP-2663).
    ///
    /// # Errors
    /// -32602 `Unknown or inaccessible taskId`; -32602 `inputResponses is invalid` for an
    /// empty key or a value that is not an object.
    pub async fn update_task(
        &self,
        request: UpdateTaskParams,
        cx: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let params = json!({"taskId": request.task_id, "inputResponses": request.input_responses});
        self.task_method(Method::TasksUpdate, &params, cx)
            .await
            .map(drop)
    }

    /// `tasks/cancel`: asks the task to stop; acknowledged also for a task already finished.
    ///
    /// # Errors
    /// -32602 `Unknown or inaccessible taskId`.
    pub async fn cancel_task(
        &self,
        request: CancelTaskParams,
        cx: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let params = json!({"taskId": request.task_id});
        self.task_method(Method::TasksCancel, &params, cx)
            .await
            .map(drop)
    }

    /// Answers a `tasks/get`, `tasks/update` or `tasks/cancel` whose params rmcp could not
    /// parse (no `taskId`, or one that is not a string: rmcp then hands it to
    /// `on_custom_request` instead of the typed methods), with what a well-formed request
    /// would have met first: -32601 when `handler` does not advertise the Tasks extension,
    /// -32020 for a missing or malformed `Mcp-Name` header (HTTP), -32021 when the request did
    /// not declare the extension, else -32602 naming the bad param. `None` for any other
    /// method (`tasks/result` and `tasks/list` included: they stay -32601, runner check
    /// `sep-2663-tasks-result-removed-method-not-found`).
    pub async fn task_request<H: ServerHandler>(
        &self,
        handler: &H,
        request: &CustomRequest,
        cx: &RequestContext<RoleServer>,
    ) -> Option<Result<CustomResult, ErrorData>> {
        let method = Method::parse(&request.method).filter(|m| m.is_task_method())?;
        if !handler.get_info().capabilities.supports_tasks() {
            return Some(Err(method_not_found(&request.method)));
        }
        let params = request.params.clone().unwrap_or(Value::Null);
        if let Some(parts) = cx.extensions.get::<http::request::Parts>() {
            let header = single(
                MirroredHeader::Name,
                parts
                    .headers
                    .get_all(MirroredHeader::Name.name())
                    .iter()
                    .map(|value| value.as_bytes()),
            )
            .and_then(|raw| check_name(name_rule(method, Some(&params)), raw));
            if let Err(error) = header {
                return Some(Err(convert::error(&error)));
            }
        }
        Some(
            self.task_method(method, &params, cx)
                .await
                .map(CustomResult::new),
        )
    }

    /// [`TasksBridge::task_request`], else rmcp's own answer to an unknown method (-32601
    /// naming it): the whole `on_custom_request` of a server without custom methods of its
    /// own.
    ///
    /// # Errors
    /// As [`TasksBridge::task_request`]; -32601 for any other method.
    pub async fn custom_request<H: ServerHandler>(
        &self,
        handler: &H,
        request: CustomRequest,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        match self.task_request(handler, &request, cx).await {
            Some(answer) => answer,
            None => Err(method_not_found(&request.method)),
        }
    }

    /// Plans one task method and has the executor carry it out in the caller's scope; the
    /// answer's wire form (a `DetailedTask` or the ack).
    async fn task_method(
        &self,
        method: Method,
        params: &Value,
        cx: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let run = async {
            let meta = convert::request_meta(&cx.meta).map_err(Failure::Rmcp)?;
            let action = plan_task_request(method, params, &meta)?;
            let executor = &self.inner.executor;
            let answer = executor.task_method(action, &self.scope(cx)).await?;
            Ok::<_, Failure>(serde_json::to_value(executor.view(&answer)).unwrap_or(Value::Null))
        };
        run.await.map_err(Failure::into_rmcp)
    }
}

/// rmcp's answer to a method nobody serves.
fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method.to_owned(), None)
}
