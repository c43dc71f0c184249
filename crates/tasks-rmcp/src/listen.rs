//! `subscriptions/listen` with `taskIds` on rmcp 3.11.0, carried out by [`ListenRun`] (the
//! driver of the core's `ListenExchange`, which decides which task states become
//! `notifications/tasks`, and which tool-list announcements become
//! `notifications/tools/list_changed`; its docs cite the spec): this module writes task states
//! through the request's raw `Peer`, and list changes through rmcp's sink.
//!
//! The ids come from the HTTP request's extensions, where [`ListenPrefilter`] put them
//! ([`ListenTaskIds`]): rmcp's typed filter drops `taskIds`. What rmcp decides before the
//! handler runs, and what that costs, is in the repository's `docs/guides/rmcp-limits.md`.
//!
//! [`ListenPrefilter`]: crate::ListenPrefilter

use rmcp::model::{GetMeta as _, ServerNotification, SubscriptionFilter, TaskStatusNotification};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use rmcp::ErrorData;
use serde_json::Value;
use tasks_core::exchange::{Announces, ListenFrameKind};
use tasks_core::TaskId;
use tasks_runtime::ListenRun;

use crate::bridge::TasksBridge;
use crate::convert;
use crate::layer::ListenTaskIds;

impl TasksBridge {
    /// The handler's `accepted_subscription_filter`: accepts every listen, so that rmcp
    /// acknowledges one that names only `taskIds` (its typed filter then looks empty) instead
    /// of answering -32601. Of rmcp's typed categories it honours `toolsListChanged` when
    /// asked and the runtime announces tool-list changes (`RuntimeConfig::list_changes`);
    /// rmcp then keeps it only if `get_info()` advertises `tools.listChanged`. A handler that
    /// serves other notifications returns its own filter instead: any `Some` lets the bridge
    /// follow the tasks.
    pub fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let announces = self.inner.runtime.config().list_changes.is_some();
        Some(if announces && requested.tools_list_changed == Some(true) {
            SubscriptionFilter::builder().tools_list_changed().build()
        } else {
            SubscriptionFilter::default()
        })
    }

    /// The handler's `listen`: [`TasksBridge::follow_tasks`], for a handler whose listen
    /// streams carry nothing else.
    ///
    /// # Errors
    /// As [`TasksBridge::follow_tasks`].
    pub async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        self.follow_tasks(&subscription).await
    }

    /// Sends `notifications/tasks` on the listen stream of `subscription` for the tasks it
    /// asked for, and `notifications/tools/list_changed` when it accepted `toolsListChanged`
    /// and the runtime announces tool-list changes, until the subscription is cancelled (the
    /// client went away, the server shuts down); then `Ok(())`, and rmcp sends the closing
    /// result (`{"resultType": "complete"}` with `_meta` subscriptionId and serverInfo) if the
    /// stream is still open.
    ///
    /// * The requested ids are the [`ListenTaskIds`] that [`ListenPrefilter`] put into the HTTP
    ///   request's extensions; without them (no `taskIds`, no layer, stdio) no task is
    ///   followed.
    /// * Each id is read in the caller's scope ([`TasksBridge::scope`]) after subscribing to the
    ///   runtime's changes: an unknown, expired or another caller's id is silently not followed,
    ///   as this project's own server does.
    /// * Each newer committed state of a followed task is one `notifications/tasks`: the whole
    ///   `DetailedTask` (`result`, `error` or `inputRequests` inline) with
    ///   `_meta["io.modelcontextprotocol/subscriptionId"]` set to the listen request's id, as
    ///   rmcp's own subscription sink stamps it (SEP-2663 "Task Status Notifications",
    ///   <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).
    ///   It is sent through the request's raw `Peer`: rmcp 3.11.0's `SubscriptionSink` refuses
    ///   `notifications/tasks`. Tool-list changes go through that sink.
    /// * The stream stays open once every followed task is terminal, as on this project's
    ///   own server (the client decides when it has heard enough); a followed task that
    ///   expires is dropped from the stream.
    ///
    /// rmcp has sent its acknowledgement before this runs, echoing only its typed filter
    /// (`"notifications": {}`, or `{"toolsListChanged": true}`), never the followed ids: the
    /// acknowledgement this project's own server sends (with `taskIds`) cannot be sent.
    ///
    /// Takes the subscription by reference so that a handler with notifications of its own
    /// can run this beside them (e.g. in `tokio::join!` with its own use of
    /// `subscription.sink()`).
    ///
    /// # Errors
    /// -32603 `Task store unavailable: nothing was stored or changed` when the store cannot
    /// read the requested tasks: after the acknowledgement, so it ends the stream as the
    /// listen request's error response.
    ///
    /// [`ListenPrefilter`]: crate::ListenPrefilter
    pub async fn follow_tasks(&self, subscription: &SubscriptionContext) -> Result<(), ErrorData> {
        let cx = subscription.request_context();
        let ids = requested_ids(cx).unwrap_or_default();
        let runtime = &self.inner.runtime;
        let announcer = runtime
            .config()
            .list_changes
            .as_ref()
            .filter(|_| subscription.accepted().tools_list_changed == Some(true));
        if ids.is_empty() && announcer.is_none() {
            subscription.cancelled().await;
            return Ok(());
        }
        let scope = self.scope(cx);
        let subscription_id = serde_json::to_value(&cx.id).unwrap_or(Value::Null);
        let mut run = ListenRun::open(
            runtime,
            &scope,
            subscription_id,
            ids,
            Announces::tools(announcer.is_some()),
            announcer,
            self.inner.server_meta.object(),
        )
        .await
        .map_err(|error| convert::error(&error))?;
        loop {
            let frame = tokio::select! {
                biased;
                () = subscription.cancelled() => return Ok(()),
                frame = run.next_frame() => frame,
            };
            let Some(frame) = frame else {
                return Ok(());
            };
            // rmcp sent its own acknowledgement, and writes the closing result when this
            // returns; the run is never shut down, so it writes none.
            let open = match frame.kind {
                ListenFrameKind::TaskStatus { .. } => send_task_status(cx, &frame.message).await,
                ListenFrameKind::ListChanged(_) => {
                    subscription.sink().notify_tool_list_changed().await.is_ok()
                }
                // The bridge announces tool-list changes only (rmcp carries the catalog's
                // own): no resource is ever subscribed here.
                ListenFrameKind::ResourceUpdated(_)
                | ListenFrameKind::Acknowledgement
                | ListenFrameKind::Closing => true,
            };
            if !open {
                tracing::debug!("the listen stream closed before a notification");
                return Ok(());
            }
        }
    }
}

/// The ids [`ListenPrefilter`](crate::ListenPrefilter) found in the listen request, if it ran.
fn requested_ids(cx: &RequestContext<RoleServer>) -> Option<&[TaskId]> {
    cx.extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<ListenTaskIds>())
        .map(|ids| ids.0.as_slice())
}

/// Sends one `notifications/tasks` of the exchange (`{"jsonrpc","method","params"}`) through
/// the request's peer, the subscription id stamped with rmcp's own meta helper; `false` once
/// the stream is gone.
async fn send_task_status(cx: &RequestContext<RoleServer>, message: &[u8]) -> bool {
    let notification = match serde_json::from_slice::<TaskStatusNotification>(message) {
        Ok(notification) => notification,
        Err(detail) => {
            tracing::error!(%detail, "a task status notification does not fit rmcp's model; dropped");
            return true;
        }
    };
    let mut notification = ServerNotification::TaskStatusNotification(notification);
    notification
        .get_meta_mut()
        .set_subscription_id(cx.id.clone());
    cx.peer.send_notification(notification).await.is_ok()
}
