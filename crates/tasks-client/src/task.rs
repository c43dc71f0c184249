//! [`TaskCall`]: one task on the server (get, update, cancel, watch, settle) and the
//! serializable [`TaskHandle`] to find it again after a restart.
//!
//! Sources: SEP-2663 "Task Polling", "Input Requests", "Task Cancellation"
//! (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use futures_util::{Stream, StreamExt as _};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tasks_core::wire::{CreateTaskResult, DetailedTask};
use tasks_core::{InputRequests, JsonObject, TaskId, TaskState};

use crate::error::ClientError;
use crate::handler::answer_all;
use crate::outcome::Outcome;
use crate::settle::{SettleOptions, Watcher};
use crate::shared::{task_params, Shared};

/// What identifies a task across client restarts: the endpoint and the task id. Serialize it
/// (JSON: `{"url": "...", "taskId": "..."}`), keep it, and hand it to [`crate::Client::resume`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskHandle {
    /// The MCP endpoint URL.
    pub url: String,
    /// The task id.
    pub task_id: TaskId,
}

/// A task on the server.
#[derive(Debug)]
pub struct TaskCall {
    shared: Arc<Shared>,
    task_id: TaskId,
    created: Option<CreateTaskResult>,
    /// Input keys this client has answered: the server never asks under an answered key
    /// again (SEP-2663 "Input Requests"), so a late view still listing one is not re-asked.
    answered: Mutex<BTreeSet<String>>,
}

impl TaskCall {
    pub(crate) fn new(shared: Arc<Shared>, task_id: TaskId) -> Self {
        TaskCall {
            shared,
            task_id,
            created: None,
            answered: Mutex::new(BTreeSet::new()),
        }
    }

    pub(crate) fn created(shared: Arc<Shared>, created: CreateTaskResult) -> Self {
        let mut call = TaskCall::new(shared, created.task.task_id.clone());
        call.created = Some(created);
        call
    }

    /// The task id.
    pub fn id(&self) -> &TaskId {
        &self.task_id
    }

    /// The `CreateTaskResult`, when this call created the task.
    pub fn creation(&self) -> Option<&CreateTaskResult> {
        self.created.as_ref()
    }

    /// The handle to resume this task with later.
    pub fn handle(&self) -> TaskHandle {
        TaskHandle {
            url: self.shared.url().to_owned(),
            task_id: self.task_id.clone(),
        }
    }

    fn params(&self) -> JsonObject {
        task_params(&self.task_id)
    }

    /// `tasks/get`: the task as it is now.
    ///
    /// # Errors
    /// -32602 ([`ClientError::Rpc`]) for a task that does not exist, expired or belongs to
    /// another caller; transport errors; [`ClientError::Malformed`].
    pub async fn get(&self) -> Result<DetailedTask, ClientError> {
        self.shared.get_task(&self.task_id).await
    }

    /// `tasks/cancel`: asks the server to cancel the task. The acknowledgement says nothing
    /// about the effect (a finished task stays finished): read it with [`TaskCall::get`] or
    /// [`TaskCall::settle`].
    ///
    /// # Errors
    /// As [`TaskCall::get`].
    pub async fn cancel(&self) -> Result<(), ClientError> {
        self.shared
            .request("tasks/cancel", self.params(), Vec::new())
            .await
            .map(drop)
    }

    /// `tasks/update`: answers input requests by key (`inputResponses`).
    ///
    /// # Errors
    /// As [`TaskCall::get`]; -32602 for a malformed answer.
    pub async fn update(&self, responses: JsonObject) -> Result<(), ClientError> {
        let mut params = self.params();
        params.insert("inputResponses".into(), Value::Object(responses));
        self.shared
            .request("tasks/update", params, Vec::new())
            .await
            .map(drop)
    }

    /// Answers the requests of `requests` not answered yet, with the client's input handler,
    /// in one `tasks/update`. Returns whether anything was sent.
    ///
    /// # Errors
    /// As [`crate::Client::call_tool`]'s input handling, and as [`TaskCall::update`].
    pub async fn answer(&self, requests: &InputRequests) -> Result<bool, ClientError> {
        let pending = {
            let answered = self.lock_answered();
            requests
                .as_map()
                .iter()
                .filter(|(key, _)| !answered.contains(*key))
                .map(|(key, request)| (key.clone(), request.clone()))
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        if pending.is_empty() {
            return Ok(false);
        }
        let responses = answer_all(self.shared.handler(), &pending).await?;
        self.update(responses).await?;
        self.lock_answered().extend(pending.into_keys());
        Ok(true)
    }

    fn lock_answered(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.answered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Each change of the task (status, status message, progress, `lastUpdatedAt`), ending
    /// after the first terminal one: from `subscriptions/listen` notifications, or by polling,
    /// as `options` says ([`SettleOptions`]). Observation only: nothing is answered.
    ///
    /// A server of this project shows how far the task's work is: read it with
    /// [`DetailedTask::progress`] ([`Progress`](crate::Progress): done of total, from the
    /// experimental `_meta` key `dev.mcp-tasks/progress`; `None` from other servers, or before
    /// the work reported any). Each change of it is an update, and it never moves backwards.
    pub fn updates(
        &self,
        options: &SettleOptions,
    ) -> impl Stream<Item = Result<DetailedTask, ClientError>> + Send + 'static {
        let watcher = Watcher::new(self.shared.clone(), self.task_id.clone(), options.clone());
        futures_util::stream::unfold(watcher, |mut watcher| async move {
            watcher.next().await.map(|item| (item, watcher))
        })
    }

    /// Waits until the task ends, answering its input requests with the client's input
    /// handler on the way; [`TaskCall::settle_with`] without a callback.
    ///
    /// # Errors
    /// As [`TaskCall::settle_with`].
    pub async fn settle(&self, options: &SettleOptions) -> Result<Outcome, ClientError> {
        self.settle_with(options, |_| {}).await
    }

    /// Waits until the task ends, calling `on_update` with every change seen and answering
    /// input requests with the client's input handler.
    ///
    /// # Errors
    /// [`ClientError::Deadline`]; [`ClientError::NoHandler`] when the task needs input this
    /// client has no handler for (the task stays parked); [`ClientError::UnknownTask`] when the
    /// task no longer exists (its TTL ran out); a non-retryable error of a request (retryable
    /// ones are retried with backoff until the deadline).
    pub async fn settle_with(
        &self,
        options: &SettleOptions,
        mut on_update: impl FnMut(&DetailedTask),
    ) -> Result<Outcome, ClientError> {
        let mut updates = std::pin::pin!(self.updates(options));
        while let Some(task) = updates.next().await {
            let task = task?;
            on_update(&task);
            if let Some(outcome) = Outcome::of_state(&task.state) {
                return Ok(outcome);
            }
            if let TaskState::InputRequired { input_requests } = &task.state {
                self.answer(input_requests).await?;
            }
        }
        Err(ClientError::malformed("the task updates ended early"))
    }
}
