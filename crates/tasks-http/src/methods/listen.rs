//! `subscriptions/listen` with the Tasks filter `notifications.taskIds`
//! (`wire-2026-07-28.md` §11; SEP-2663 "Task Status Notifications").
//!
//! * `notifications` must be an object (-32602).
//! * `taskIds` needs the Tasks declaration (-32021) and must be an array of at most 100 task
//!   ids, each a non-empty string of at most 256 bytes (-32602).
//! * Unknown, expired and other-scope ids are dropped silently; duplicates are removed.
//! * The response is an SSE stream: first `notifications/subscriptions/acknowledged` echoing
//!   only what is honoured (`taskIds` omitted when none is left), then one `notifications/tasks`
//!   per committed change of an accepted task, each carrying
//!   `_meta["io.modelcontextprotocol/subscriptionId"]` = the listen request's id.
//! * `toolsListChanged: true` is honoured when the server announces list changes
//!   ([`crate::ServerBuilder::list_changes`]): each announcement then arrives as
//!   `notifications/tools/list_changed` with the same `_meta`. Other keys (`promptsListChanged`,
//!   `resourcesListChanged`, `resourceSubscriptions`) are never honoured: this server serves no
//!   prompts or resources. Keys not honoured are left out of the acknowledgement.

use std::collections::HashSet;

use bytes::Bytes;
use futures_util::stream;
use serde_json::{json, Value};
use tasks_core::{projection, McpError, TaskId};
use tasks_runtime::{ListKind, Scope, StatusEvent};
use tokio::sync::broadcast::{self, error::RecvError};

use crate::admission::Admitted;
use crate::dispatcher::Dispatcher;
use crate::response::{notification_bytes, McpResponse, ResponseBody};

/// The most task ids one listen request may name.
pub const MAX_TASK_IDS: usize = 100;

fn parse_task_ids(value: &Value) -> Result<Vec<TaskId>, McpError> {
    let invalid = || McpError::invalid_params("taskIds must be an array of task ids");
    let ids = value.as_array().ok_or_else(invalid)?;
    if ids.len() > MAX_TASK_IDS {
        return Err(McpError::invalid_params("taskIds lists more than 100 ids"));
    }
    ids.iter()
        .map(|id| {
            id.as_str()
                .and_then(|s| TaskId::parse(s).ok())
                .ok_or_else(invalid)
        })
        .collect()
}

struct Listen {
    ack: Option<Bytes>,
    events: broadcast::Receiver<StatusEvent>,
    /// Tool-list announcements, when the client asked for them and the server makes them.
    list_changes: Option<broadcast::Receiver<ListKind>>,
    scope: Scope,
    ids: HashSet<TaskId>,
    subscription_id: Value,
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: &Admitted,
    scope: &Scope,
    tasks_declared: bool,
) -> Result<McpResponse, McpError> {
    let filter = request
        .params
        .get("notifications")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            McpError::invalid_params("subscriptions/listen requires a notifications object")
        })?;
    // Subscribe before checking the ids, so no change between the check and the stream is lost.
    let events = d.runtime.subscribe();
    let mut accepted: Vec<TaskId> = Vec::new();
    if let Some(task_ids) = filter.get("taskIds") {
        if !tasks_declared {
            return Err(McpError::missing_tasks_capability());
        }
        for id in parse_task_ids(task_ids)? {
            if !accepted.contains(&id) && d.runtime.get(scope, &id).await.is_ok() {
                accepted.push(id);
            }
        }
    }
    let mut honoured = serde_json::Map::new();
    let tools_key = ListKind::Tools.filter_key();
    let list_changes = match (&d.config.list_changes, filter.get(tools_key)) {
        (Some(changes), Some(Value::Bool(true))) => {
            honoured.insert(tools_key.into(), Value::Bool(true));
            Some(changes.subscribe())
        }
        _ => None,
    };
    if !accepted.is_empty() {
        honoured.insert("taskIds".into(), json!(accepted));
    }
    let subscription_id = request.id.clone();
    let ack = notification_bytes(
        "notifications/subscriptions/acknowledged",
        &json!({
            "_meta": { tasks_core::protocol::META_SUBSCRIPTION_ID: subscription_id },
            "notifications": honoured,
        }),
    );
    let state = Listen {
        ack: Some(ack),
        events,
        list_changes,
        scope: scope.clone(),
        ids: accepted.into_iter().collect(),
        subscription_id,
    };
    let messages = stream::unfold(state, |mut state| async move {
        if let Some(ack) = state.ack.take() {
            return Some((ack, state));
        }
        loop {
            if let Some(bytes) = state.next_message().await? {
                return Some((bytes, state));
            }
        }
    });
    Ok(McpResponse {
        status: 200,
        body: ResponseBody::Stream(Box::pin(messages)),
    })
}

impl Listen {
    /// Waits for the next event of either source: `Some(Some(bytes))` to send, `Some(None)` for
    /// an event this stream does not carry, `None` when the server is shutting down.
    async fn next_message(&mut self) -> Option<Option<Bytes>> {
        let list_change = async {
            match &mut self.list_changes {
                Some(receiver) => receiver.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = self.events.recv() => match event {
                Ok(event) => Some(self.task_notification(&event)),
                Err(RecvError::Lagged(skipped)) => {
                    tracing::warn!(skipped, "listen stream lagged; status events skipped");
                    Some(None)
                }
                Err(RecvError::Closed) => None,
            },
            kind = list_change => match kind {
                Ok(kind) => Some((kind == ListKind::Tools).then(|| self.list_notification(kind))),
                Err(RecvError::Lagged(_)) => Some(Some(self.list_notification(ListKind::Tools))),
                Err(RecvError::Closed) => {
                    self.list_changes = None;
                    Some(None)
                }
            },
        }
    }

    fn task_notification(&self, event: &StatusEvent) -> Option<Bytes> {
        (event.scope == self.scope && self.ids.contains(event.task.id())).then(|| {
            let params = projection::notification(&event.task, &self.subscription_id);
            notification_bytes("notifications/tasks", &params)
        })
    }

    fn list_notification(&self, kind: ListKind) -> Bytes {
        notification_bytes(
            kind.method(),
            &json!({"_meta": { tasks_core::protocol::META_SUBSCRIPTION_ID: self.subscription_id }}),
        )
    }
}
