//! `subscriptions/listen` with the Tasks filter `notifications.taskIds`: the driver of
//! [`ListenExchange`], which decides every frame (the acknowledgement, which states and
//! announcements become notifications, re-reads, the graceful closure; its docs cite the
//! spec).
//!
//! * The filter was checked when the request was planned ([`tasks_core::exchange::ListenFilter`]).
//! * The driver opens with [`follow_tasks`] (subscribed to the runtime's changes before the
//!   requested tasks are read, so that no change in between is lost; an id the caller cannot
//!   see is left out, and a store that cannot answer refuses the request: HTTP 503, retryable,
//!   rather than leave out a task that exists).
//! * It feeds the exchange its [`Feed`]: the committed states, removals and re-read signals of
//!   [`Changes`](tasks_runtime::Changes)
//!   (re-reading what the exchange asks for, with
//!   [`RuntimeConfig::wait_recheck`](tasks_runtime::RuntimeConfig::wait_recheck) as the guard
//!   interval), the server's list announcements and resource updates
//!   ([`crate::ServerBuilder::list_changes`]; a list is announced only when the server has it,
//!   resource updates only when it offers resources),
//!   and the server's shutdown ([`crate::Dispatcher::close_streams`]). The HTTP adapter adds
//!   keep-alive comments while a stream is idle.

use bytes::Bytes;
use futures_util::stream;
use serde_json::Value;
use tasks_core::exchange::ListenExchange;
use tasks_core::exchange::{Announces, ListenFilter};
use tasks_core::{Feature, McpError};
use tasks_runtime::{follow_tasks, Feed, FeedEvent, Scope, TaskRuntime, Wake};
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use crate::response::McpResponse;
use crate::shared::Shared;
use tasks_runtime::server_metrics::ListenStreamGuard;

struct Listen {
    exchange: ListenExchange,
    /// Fires when the server shuts down.
    shutdown: CancellationToken,
    /// Task changes, and the list announcements and resource updates the client asked for.
    feed: Feed,
    runtime: TaskRuntime,
    scope: Scope,
    /// Counts the stream as open (`mcp_listen_streams`) until it is dropped.
    _open: ListenStreamGuard,
    metrics: std::sync::Arc<Metrics>,
}

pub(crate) async fn handle(
    d: &Shared,
    id: &Value,
    filter: ListenFilter,
    scope: &Scope,
) -> Result<McpResponse, McpError> {
    let (changes, accepted) =
        follow_tasks(&d.runtime, scope, filter.task_ids.iter().flatten()).await?;
    // What the server announces: list changes of the lists it has (when it announces any),
    // and updates of its resources.
    let catalog = d.runtime.catalog();
    let announcing = d.config.list_changes.is_some();
    let announces = Announces::honour(
        &filter,
        |kind| announcing && catalog.has_list(kind),
        announcing && catalog.offers(Feature::Resources),
    );
    let feed = Feed::new(
        Some(changes),
        d.config.list_changes.as_ref(),
        announces.any_list(),
        !announces.resource_subscriptions.is_empty(),
    );
    let exchange = ListenExchange::open(
        id.clone(),
        scope.as_str(),
        accepted.iter().map(|task| &**task),
        announces,
        &d.server_meta,
    );
    let state = Listen {
        exchange,
        shutdown: d.shutdown.clone(),
        feed,
        runtime: d.runtime.clone(),
        scope: scope.clone(),
        _open: d.metrics.listen_stream(),
        metrics: d.metrics.clone(),
    };
    let messages = stream::unfold(state, |mut state| async move {
        loop {
            if state.shutdown.is_cancelled() {
                state.exchange.on_shutdown();
            }
            if let Some(frame) = state.exchange.poll_frame() {
                if let Some(method) = frame.kind.event_method() {
                    state.metrics.notification_sent(method);
                }
                return Some((Bytes::from(frame.message), state));
            }
            if state.exchange.is_finished() {
                return None;
            }
            state.next_event().await;
        }
    });
    Ok(McpResponse::stream(Box::pin(messages)))
}

impl Listen {
    /// Waits for the next event of the feed, or for shutdown, and feeds it to the exchange.
    async fn next_event(&mut self) {
        let event = tokio::select! {
            biased;
            _ = self.shutdown.cancelled() => return self.exchange.on_shutdown(),
            event = self.feed.next() => event,
        };
        match event {
            FeedEvent::Task(Wake::Status(event)) => {
                self.exchange.on_status(event.scope.as_str(), &event.task);
            }
            FeedEvent::Task(Wake::Removed(id)) => self.exchange.on_removed(&id),
            FeedEvent::Task(Wake::Reread { skipped }) => {
                if skipped > 0 {
                    tracing::warn!(skipped, "listen stream lagged; status events skipped");
                    self.metrics.events_skipped(skipped);
                }
                self.reread().await;
            }
            FeedEvent::Task(_) => {}
            FeedEvent::TasksEnded => self.exchange.on_feed_end(),
            FeedEvent::ListChanged(kind) => self.exchange.on_list_changed(kind),
            FeedEvent::ListsLagged => self.exchange.on_list_lagged(),
            FeedEvent::ResourceUpdated(uri) => self.exchange.on_resource_updated(&uri),
        }
    }

    /// Re-reads what the exchange asks for; a store failure leaves it for the next re-read.
    async fn reread(&mut self) {
        let ids = self.exchange.to_reread();
        if ids.is_empty() {
            return;
        }
        match self.runtime.read_many(&self.scope, &ids).await {
            Ok(tasks) => self
                .exchange
                .on_reread(&ids, tasks.iter().map(|task| &**task)),
            Err(error) => tracing::warn!(%error, "re-reading a listen stream's tasks failed"),
        }
    }
}
