//! `subscriptions/listen` with the Tasks filter `notifications.taskIds`
//! (MCP 2026-07-28 subscriptions:
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>;
//! SEP-2663 "Task Status Notifications":
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).
//!
//! * The filter was checked when the request was planned ([`tasks_core::listen::ListenFilter`]).
//! * Unknown, expired and other-scope ids are dropped silently.
//! * When the server shuts down ([`crate::Dispatcher::close_streams`]) the stream ends gracefully with
//!   the listen response `{"resultType": "complete", "_meta": {subscriptionId, serverInfo}}`
//!   (subscriptions, "Graceful Closure"). The HTTP adapter adds keep-alive comments while a
//!   stream is idle.
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
use serde_json::Value;
use tasks_core::jsonrpc::with_server_meta;
use tasks_core::listen::{self, ListenFilter};
use tasks_core::{projection, McpError, TaskId};
use tasks_runtime::{ListKind, Scope, StatusEvent};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio_util::sync::CancellationToken;

use crate::response::{notification_bytes, result_bytes, McpResponse};
use crate::shared::Shared;

struct Listen {
    ack: Option<Bytes>,
    /// Fires when the server shuts down; the stream then ends with `closing`.
    shutdown: CancellationToken,
    /// The graceful-closure response, sent once when the server ends the subscription.
    closing: Option<Bytes>,
    events: broadcast::Receiver<StatusEvent>,
    /// Tool-list announcements, when the client asked for them and the server makes them.
    list_changes: Option<broadcast::Receiver<ListKind>>,
    scope: Scope,
    ids: HashSet<TaskId>,
    subscription_id: Value,
    /// Counts the stream as open (`mcp_listen_streams`) until it is dropped.
    _open: crate::metrics::ListenStreamGuard,
    metrics: std::sync::Arc<crate::metrics::Metrics>,
}

pub(crate) async fn handle(
    d: &Shared,
    id: &Value,
    filter: ListenFilter,
    scope: &Scope,
) -> Result<McpResponse, McpError> {
    // Subscribe before checking the ids, so no change between the check and the stream is lost.
    let events = d.runtime.subscribe();
    let mut accepted: Vec<TaskId> = Vec::new();
    for id in filter.task_ids.into_iter().flatten() {
        if let Ok(task) = d.runtime.get(scope, &id).await {
            d.runtime.watch(&task);
            accepted.push(id);
        }
    }
    let list_changes = match &d.config.list_changes {
        Some(changes) if filter.tools_list_changed => Some(changes.subscribe()),
        _ => None,
    };
    let subscription_id = id.clone();
    let ack = notification_bytes(
        "notifications/subscriptions/acknowledged",
        &listen::acknowledgement(&subscription_id, &accepted, list_changes.is_some()),
    );
    let closing = with_server_meta(&d.server_meta, listen::closing(&subscription_id));
    let state = Listen {
        ack: Some(ack),
        shutdown: d.shutdown.clone(),
        closing: Some(result_bytes(id, &closing)),
        events,
        list_changes,
        scope: scope.clone(),
        ids: accepted.into_iter().collect(),
        subscription_id,
        _open: d.metrics.listen_stream(),
        metrics: d.metrics.clone(),
    };
    let messages = stream::unfold(state, |mut state| async move {
        if let Some(ack) = state.ack.take() {
            return Some((ack, state));
        }
        loop {
            match state.next_step().await {
                Step::Send(bytes) => return Some((bytes, state)),
                Step::Skip => {}
                Step::End => return None,
            }
        }
    });
    Ok(McpResponse::stream(Box::pin(messages)))
}

/// What a listen stream does next.
enum Step {
    /// Send this message.
    Send(Bytes),
    /// An event this stream does not carry.
    Skip,
    /// The stream is over.
    End,
}

impl Listen {
    /// Waits for the next event of either source, or for shutdown (which sends the closing
    /// response once, then ends the stream).
    async fn next_step(&mut self) -> Step {
        let Some(closing) = self.closing.take() else {
            return Step::End;
        };
        if self.shutdown.is_cancelled() {
            return Step::Send(closing);
        }
        self.closing = Some(closing);
        let list_change = async {
            match &mut self.list_changes {
                Some(receiver) => receiver.recv().await,
                None => std::future::pending().await,
            }
        };
        let step = |message: Option<Bytes>| message.map_or(Step::Skip, Step::Send);
        tokio::select! {
            biased;
            _ = self.shutdown.cancelled() => Step::Skip,
            event = self.events.recv() => match event {
                Ok(event) => step(self.task_notification(&event)),
                Err(RecvError::Lagged(skipped)) => {
                    tracing::warn!(skipped, "listen stream lagged; status events skipped");
                    self.metrics.events_skipped(skipped);
                    Step::Skip
                }
                Err(RecvError::Closed) => Step::End,
            },
            kind = list_change => match kind {
                Ok(kind) => step((kind == ListKind::Tools).then(|| self.list_notification(kind))),
                Err(RecvError::Lagged(_)) => Step::Send(self.list_notification(ListKind::Tools)),
                Err(RecvError::Closed) => {
                    self.list_changes = None;
                    Step::Skip
                }
            },
        }
    }

    fn task_notification(&self, event: &StatusEvent) -> Option<Bytes> {
        (event.scope == self.scope && self.ids.contains(event.task.id())).then(|| {
            self.metrics.notification_sent("notifications/tasks");
            let params = projection::notification(&event.task, &self.subscription_id);
            notification_bytes("notifications/tasks", &params)
        })
    }

    fn list_notification(&self, kind: ListKind) -> Bytes {
        self.metrics.notification_sent(kind.method());
        notification_bytes(
            kind.method(),
            &listen::list_changed_params(&self.subscription_id),
        )
    }
}
