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
//! * Other filter keys (`toolsListChanged`, …) are not honoured: this server advertises no
//!   `listChanged` and no resource subscriptions, so they are left out of the acknowledgement.

use std::collections::HashSet;

use bytes::Bytes;
use futures_util::stream;
use serde_json::{json, Value};
use tasks_core::{projection, McpError, TaskId};
use tasks_runtime::{Scope, StatusEvent};
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
        scope: scope.clone(),
        ids: accepted.into_iter().collect(),
        subscription_id,
    };
    let messages = stream::unfold(state, |mut state| async move {
        if let Some(ack) = state.ack.take() {
            return Some((ack, state));
        }
        loop {
            match state.events.recv().await {
                Ok(event) => {
                    if event.scope == state.scope && state.ids.contains(event.task.id()) {
                        let params = projection::notification(&event.task, &state.subscription_id);
                        let bytes = notification_bytes("notifications/tasks", &params);
                        return Some((bytes, state));
                    }
                }
                Err(RecvError::Lagged(skipped)) => {
                    tracing::warn!(skipped, "listen stream lagged; status events skipped");
                }
                Err(RecvError::Closed) => return None,
            }
        }
    });
    Ok(McpResponse {
        status: 200,
        body: ResponseBody::Stream(Box::pin(messages)),
    })
}
