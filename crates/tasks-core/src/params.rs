//! Params parsing and validation for `tasks/get`, `tasks/update` and `tasks/cancel`.
//!
//! Runs after the capability check and before the task lookup (this server's order; the runner
//! check `tasks-capability-negotiation/sep-2663-tasks-methods-non-declaring` expects -32021, not
//! -32602, for an unknown id). Every failure is -32602, as SEP-2663 "Error Handling" gives for an
//! invalid `taskId`
//! (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>),
//! with one of these fixed messages (the messages and the 256-byte limit are this server's):
//!
//! | condition | message |
//! |---|---|
//! | `taskId` missing, not a string, or empty | `A non-empty taskId is required` |
//! | `taskId` over 256 bytes | `taskId is longer than 256 bytes` |
//! | `tasks/update` without an object `inputResponses` | `tasks/update requires an inputResponses object` |
//! | an empty key, or a value that is not an object | `inputResponses is invalid` |
//!
//! `params` that is not an object gets `params must be an object`. Unknown members (a legacy
//! `task` hint, `_meta`) are ignored.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::McpError;
use crate::id::TaskId;
use crate::method::Method;
use crate::negotiation::RequestMeta;
use crate::origin::TaskOrigin;

/// Validated `tasks/get` and `tasks/cancel` params.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRef {
    /// The addressed task.
    pub task_id: TaskId,
    /// When set, the request may reach only a task of this origin: any other task of the
    /// caller, like an unknown one, is answered -32021 as for a request that declared nothing
    /// ([`plan_legacy_task_method`]). `None`: any task of the caller.
    pub only: Option<TaskOrigin>,
}

impl TaskRef {
    /// `task_id`, of any origin.
    pub fn new(task_id: TaskId) -> Self {
        TaskRef {
            task_id,
            only: None,
        }
    }
}

/// Validated `tasks/update` params.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateParams {
    /// The addressed task.
    pub task_id: TaskId,
    /// key → response object (bare results such as an ElicitResult).
    pub input_responses: BTreeMap<String, Value>,
}

fn object(params: &Value) -> Result<&crate::JsonObject, McpError> {
    params
        .as_object()
        .ok_or_else(|| McpError::invalid_params("params must be an object"))
}

fn task_id(params: &crate::JsonObject) -> Result<TaskId, McpError> {
    task_id_of(params.get("taskId").and_then(Value::as_str).unwrap_or(""))
}

/// A `taskId` given as a string (`""` when missing or not a string).
pub(crate) fn task_id_of(raw: &str) -> Result<TaskId, McpError> {
    TaskId::parse(raw).map_err(|e| McpError::invalid_params(e.to_string()))
}

/// Parses `tasks/get` or `tasks/cancel` params.
///
/// # Errors
/// -32602 as in the module table.
pub fn parse_task_ref(params: &Value) -> Result<TaskRef, McpError> {
    Ok(TaskRef::new(task_id(object(params)?)?))
}

/// Parses `tasks/update` params.
///
/// # Errors
/// -32602 as in the module table.
pub fn parse_update(params: &Value) -> Result<UpdateParams, McpError> {
    let params = object(params)?;
    let task_id = task_id(params)?;
    let responses = params
        .get("inputResponses")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            McpError::invalid_params("tasks/update requires an inputResponses object")
        })?;
    let mut input_responses = BTreeMap::new();
    for (key, value) in responses {
        if key.is_empty() || !value.is_object() {
            return Err(McpError::invalid_params("inputResponses is invalid"));
        }
        input_responses.insert(key.clone(), value.clone());
    }
    Ok(UpdateParams {
        task_id,
        input_responses,
    })
}

/// What a task method asks for, validated.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskAction {
    /// `tasks/get`.
    Get(TaskRef),
    /// `tasks/update`.
    Update(UpdateParams),
    /// `tasks/cancel`.
    Cancel(TaskRef),
}

/// Plans `tasks/get`, `tasks/update` or `tasks/cancel` after admission: the Tasks declaration
/// (-32021), then the params (-32602, the module table). The lookup in the caller's scope
/// (-32602 `Unknown or inaccessible taskId`) follows, by whoever holds the tasks.
///
/// # Errors
/// -32021 naming the Tasks extension; -32602 as in the module table; -32601 for a method
/// that is not a task method.
pub fn plan_task_method(
    method: Method,
    params: &Value,
    tasks_declared: bool,
) -> Result<TaskAction, McpError> {
    check_task_method(method, tasks_declared)?;
    Ok(match method {
        Method::TasksUpdate => TaskAction::Update(parse_update(params)?),
        Method::TasksCancel => TaskAction::Cancel(parse_task_ref(params)?),
        _ => TaskAction::Get(parse_task_ref(params)?),
    })
}

/// Plans `tasks/get`, `tasks/update` or `tasks/cancel` for a request with the validated
/// `_meta` `meta`: [`plan_task_method`] when it declared the Tasks extension or declared
/// nothing, [`plan_legacy_task_method`] when it declared only the 2025-11-25 tasks capability.
///
/// # Errors
/// As those two; -32602 `The Tasks extension defines no settings` for a declaration with
/// settings ([`RequestMeta::declares_tasks`]).
pub fn plan_task_request(
    method: Method,
    params: &Value,
    meta: &RequestMeta,
) -> Result<TaskAction, McpError> {
    let declared = meta.declares_tasks()?;
    if !declared && meta.declares_legacy_tasks() {
        plan_legacy_task_method(method, params)
    } else {
        plan_task_method(method, params, declared)
    }
}

/// Plans a task method of a request that did not declare the Tasks extension but declared the
/// legacy 2025-11-25 `tasks` client capability. Such a client is non-declaring for this
/// extension, but a server that also serves the 2025-11-25 design SHOULD let it `tasks/get`
/// and `tasks/cancel` the tasks created under that flow (SEP-2663 "Backward Compatibility",
/// its version table): those two reach only [`TaskOrigin::Experimental2025`] tasks
/// ([`TaskRef::only`]); `tasks/update` stays refused.
///
/// # Errors
/// -32021 naming the Tasks extension for `tasks/update`; -32602 as in the module table;
/// -32601 for a method that is not a task method.
pub fn plan_legacy_task_method(method: Method, params: &Value) -> Result<TaskAction, McpError> {
    let reach = |params| {
        let mut target = parse_task_ref(params)?;
        target.only = Some(TaskOrigin::Experimental2025);
        Ok(target)
    };
    match method {
        Method::TasksGet => reach(params).map(TaskAction::Get),
        Method::TasksCancel => reach(params).map(TaskAction::Cancel),
        _ => plan_task_method(method, params, false),
    }
}

/// [`plan_task_method`] for `tasks/get` or `tasks/cancel` whose `taskId` is `task_id`.
///
/// # Errors
/// As [`plan_task_method`].
pub(crate) fn plan_task_ref(
    method: Method,
    task_id: &str,
    tasks_declared: bool,
) -> Result<TaskAction, McpError> {
    check_task_method(method, tasks_declared)?;
    let task = TaskRef::new(task_id_of(task_id)?);
    Ok(match method {
        Method::TasksCancel => TaskAction::Cancel(task),
        Method::TasksGet => TaskAction::Get(task),
        _ => return Err(McpError::MethodNotFound),
    })
}

/// A task method, on a request that declared the Tasks extension.
fn check_task_method(method: Method, tasks_declared: bool) -> Result<(), McpError> {
    if !method.is_task_method() {
        return Err(McpError::MethodNotFound);
    }
    if !tasks_declared {
        return Err(McpError::missing_tasks_capability());
    }
    Ok(())
}
