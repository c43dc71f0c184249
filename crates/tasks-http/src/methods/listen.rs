//! `subscriptions/listen` with the Tasks filter `notifications.taskIds`, carried out by
//! [`ListenRun`] (the driver of the core's `ListenExchange`, which decides every frame: the
//! acknowledgement, which states and announcements become notifications, re-reads, the
//! graceful closure); this module writes the frames as an SSE response and counts them.
//!
//! * The filter was checked when the request was planned ([`tasks_core::exchange::ListenFilter`]).
//! * The run opens with [`tasks_runtime::follow_tasks`] (subscribed to the runtime's changes before the
//!   requested tasks are read, so that no change in between is lost; an id the caller cannot
//!   see is left out, and a store that cannot answer refuses the request: HTTP 503, retryable,
//!   rather than leave out a task that exists).
//! * It feeds the exchange its [`tasks_runtime::Feed`]: the committed states, removals and re-read signals of
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
use tasks_core::exchange::{Announces, ListenFilter};
use tasks_core::{Feature, McpError};
use tasks_runtime::server_metrics::ListenStreamGuard;
use tasks_runtime::{ListenRun, Scope};

use crate::metrics::Metrics;
use crate::response::McpResponse;
use crate::shared::Shared;

/// An open stream and what the adapter counts of it.
struct Listen {
    run: ListenRun,
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
    // What the server announces: list changes of the lists it has (when it announces any),
    // and updates of its resources.
    let catalog = d.runtime.catalog();
    let announcer = d.config.list_changes.as_ref();
    let announces = Announces::honour(
        &filter,
        |kind| announcer.is_some() && catalog.has_list(kind),
        announcer.is_some() && catalog.offers(Feature::Resources),
    );
    let task_ids = filter.task_ids.iter().flatten();
    let run = ListenRun::open(
        &d.runtime,
        scope,
        id.clone(),
        task_ids,
        announces,
        announcer,
        &d.server_meta,
    )
    .await?
    .with_shutdown(d.shutdown.clone());
    let state = Listen {
        run,
        _open: d.metrics.listen_stream(),
        metrics: d.metrics.clone(),
    };
    let messages = stream::unfold(state, |mut state| async move {
        let frame = state.run.next_frame().await?;
        let skipped = state.run.take_skipped();
        if skipped > 0 {
            state.metrics.events_skipped(skipped);
        }
        if let Some(method) = frame.kind.event_method() {
            state.metrics.notification_sent(method);
        }
        Some((Bytes::from(frame.message), state))
    });
    Ok(McpResponse::stream(Box::pin(messages)))
}
