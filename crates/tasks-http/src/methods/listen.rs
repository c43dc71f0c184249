//! `subscriptions/listen` with the Tasks filter `notifications.taskIds`
//! (MCP 2026-07-28 subscriptions:
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>;
//! SEP-2663 "Task Status Notifications":
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).
//!
//! * The filter was checked when the request was planned ([`tasks_core::listen::ListenFilter`]).
//! * Unknown, expired and other-scope ids are dropped silently; a task that expires while the
//!   stream is open is no longer named (nothing is sent for it; the stream stays open for the
//!   others).
//! * The stream never depends on one notification: it follows the runtime's
//!   [`Changes`](tasks_runtime::Changes) and re-reads its unfinished tasks after a feed
//!   resync, after falling behind, and on the guard interval
//!   ([`RuntimeConfig::wait_recheck`](tasks_runtime::RuntimeConfig::wait_recheck)), sending
//!   each state newer than the last one sent, once.
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

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream;
use serde_json::Value;
use tasks_core::jsonrpc::with_server_meta;
use tasks_core::listen::{self, ListenFilter};
use tasks_core::{projection, McpError, Task, TaskId};
use tasks_runtime::{Changes, ListKind, Scope, TaskRuntime, Wake};
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
    changes: Changes,
    runtime: TaskRuntime,
    /// Tool-list announcements, when the client asked for them and the server makes them.
    list_changes: Option<broadcast::Receiver<ListKind>>,
    scope: Scope,
    /// The accepted tasks still there, with what the stream last saw of each.
    ids: HashMap<TaskId, Seen>,
    /// Notifications found by a re-read, ready to go out.
    queue: VecDeque<Bytes>,
    subscription_id: Value,
    /// Counts the stream as open (`mcp_listen_streams`) until it is dropped.
    _open: crate::metrics::ListenStreamGuard,
    metrics: std::sync::Arc<crate::metrics::Metrics>,
}

/// What a listen stream last saw of a task.
#[derive(Clone, Copy)]
struct Seen {
    revision: u64,
    terminal: bool,
}

impl Seen {
    fn of(task: &Task) -> Self {
        Seen {
            revision: task.revision(),
            terminal: task.is_terminal(),
        }
    }
}

pub(crate) async fn handle(
    d: &Shared,
    id: &Value,
    filter: ListenFilter,
    scope: &Scope,
) -> Result<McpResponse, McpError> {
    // Subscribe before checking the ids, so no change between the check and the stream is lost.
    let changes = d.runtime.changes();
    let mut accepted: Vec<TaskId> = Vec::new();
    let mut ids = HashMap::new();
    for id in filter.task_ids.into_iter().flatten() {
        // An unknown (or inaccessible) id is left out of the acknowledgement; a store that
        // cannot answer refuses the request (HTTP 503, retryable) rather than leave out a
        // task that exists.
        match d.runtime.get(scope, &id).await {
            Ok(task) => {
                d.runtime.watch(&task);
                ids.insert(id.clone(), Seen::of(&task));
                accepted.push(id);
            }
            Err(McpError::UnknownTask) => {}
            Err(error) => return Err(error),
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
        changes,
        runtime: d.runtime.clone(),
        list_changes,
        scope: scope.clone(),
        ids,
        queue: VecDeque::new(),
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
        if let Some(bytes) = self.queue.pop_front() {
            return Step::Send(bytes);
        }
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
            wake = self.changes.next() => match wake {
                Some(Wake::Status(event)) if event.scope == self.scope => {
                    step(self.task_notification(&event.task))
                }
                // A task that is gone (its TTL ran out) is simply no longer named.
                Some(Wake::Removed(id)) => {
                    self.ids.remove(&id);
                    Step::Skip
                }
                Some(Wake::Reread { skipped }) => {
                    if skipped > 0 {
                        tracing::warn!(skipped, "listen stream lagged; status events skipped");
                        self.metrics.events_skipped(skipped);
                    }
                    self.reread().await;
                    Step::Skip
                }
                Some(_) => Step::Skip,
                None => Step::End,
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

    /// Re-reads the accepted tasks that may still change: a state newer than the last one
    /// sent is queued as a notification; a task gone is no longer named. A store failure
    /// leaves everything for the next re-read.
    async fn reread(&mut self) {
        let open: Vec<TaskId> = self
            .ids
            .iter()
            .filter(|(_, seen)| !seen.terminal)
            .map(|(id, _)| id.clone())
            .collect();
        if open.is_empty() {
            return;
        }
        let tasks = match self.runtime.read_many(&self.scope, &open).await {
            Ok(tasks) => tasks,
            Err(error) => {
                tracing::warn!(%error, "re-reading a listen stream's tasks failed");
                return;
            }
        };
        let mut missing: std::collections::HashSet<&TaskId> = open.iter().collect();
        for task in tasks {
            missing.remove(task.id());
            if let Some(bytes) = self.task_notification(&task) {
                self.queue.push_back(bytes);
            }
        }
        for id in missing {
            self.ids.remove(id);
        }
    }

    /// The notification of `task` when the stream names it and has not sent this state (or a
    /// newer one) yet.
    fn task_notification(&mut self, task: &Arc<Task>) -> Option<Bytes> {
        let seen = self.ids.get_mut(task.id())?;
        if task.revision() <= seen.revision {
            return None;
        }
        *seen = Seen::of(task);
        self.metrics.notification_sent("notifications/tasks");
        let params = projection::notification(task, &self.subscription_id);
        Some(notification_bytes("notifications/tasks", &params))
    }

    fn list_notification(&self, kind: ListKind) -> Bytes {
        self.metrics.notification_sent(kind.method());
        notification_bytes(
            kind.method(),
            &listen::list_changed_params(&self.subscription_id),
        )
    }
}
