//! A `subscriptions/listen` stream with the Tasks filter `notifications.taskIds`, carried out
//! the same way for every host: the driver of the core's [`ListenExchange`], which decides
//! every frame (the acknowledgement, which states and announcements become notifications,
//! re-reads, the graceful closure; its docs cite the spec). A host only writes the frames
//! [`ListenRun::next_frame`] hands it, in its framing (an SSE response, rmcp's peer).
//!
//! * [`ListenRun::open`] follows the named tasks with [`follow_tasks`] (subscribed to the
//!   runtime's changes before the tasks are read, so that no change in between is lost; an id
//!   the caller cannot see is left out, and a store that cannot answer refuses the request,
//!   rather than leave out a task that exists).
//! * It feeds the exchange its [`Feed`]: the committed states, removals and re-read signals of
//!   [`Changes`](crate::Changes) (re-reading what the exchange asks for), the server's list
//!   announcements and resource updates the exchange honours, and, when the host gives one,
//!   its shutdown ([`ListenRun::with_shutdown`]: the graceful closure).
//!
//! SEP-2663 "Task Status Notifications"
//! (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>);
//! MCP 2026-07-28 subscriptions
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>).

use serde_json::Value;
use tasks_core::exchange::{Announces, ListenExchange, ListenFrame};
use tasks_core::{JsonObject, McpError, TaskId};
use tokio_util::sync::CancellationToken;

use crate::feed::{follow_tasks, Feed, FeedEvent};
use crate::list_changes::ListChanges;
use crate::runtime::TaskRuntime;
use crate::scope::Scope;
use crate::wait::Wake;

/// One open listen stream: see the module docs.
#[derive(Debug)]
pub struct ListenRun {
    exchange: ListenExchange,
    feed: Feed,
    runtime: TaskRuntime,
    scope: Scope,
    shutdown: Option<CancellationToken>,
    skipped: u64,
}

impl ListenRun {
    /// Opens the stream of listen request `id` for a caller of `scope`: follows `task_ids`,
    /// and from `announcer` (when the server announces changes) the lists and resources
    /// `announces` honours; `server_meta` goes on every result.
    ///
    /// # Errors
    /// -32603 `Task store unavailable: nothing was stored or changed` (HTTP 503) when the
    /// store cannot read the named tasks.
    pub async fn open<'a>(
        runtime: &TaskRuntime,
        scope: &Scope,
        id: Value,
        task_ids: impl IntoIterator<Item = &'a TaskId>,
        announces: Announces,
        announcer: Option<&ListChanges>,
        server_meta: &JsonObject,
    ) -> Result<Self, McpError> {
        let (changes, accepted) = follow_tasks(runtime, scope, task_ids).await?;
        let feed = Feed::new(
            Some(changes),
            announcer,
            announces.any_list(),
            !announces.resource_subscriptions.is_empty(),
        );
        let exchange = ListenExchange::open(
            id,
            scope.as_str(),
            accepted.iter().map(|task| &**task),
            announces,
            server_meta,
        );
        Ok(ListenRun {
            exchange,
            feed,
            runtime: runtime.clone(),
            scope: scope.clone(),
            shutdown: None,
            skipped: 0,
        })
    }

    /// Ends the stream gracefully (its closing result) once `shutdown` fires.
    pub fn with_shutdown(mut self, shutdown: CancellationToken) -> Self {
        self.shutdown = Some(shutdown);
        self
    }

    /// The next frame to write, waiting for the feed as long as needed; `None` once the
    /// stream is finished (after its closing result, if it has one).
    pub async fn next_frame(&mut self) -> Option<ListenFrame> {
        loop {
            if self.shutdown.as_ref().is_some_and(|s| s.is_cancelled()) {
                self.exchange.on_shutdown();
            }
            if let Some(frame) = self.exchange.poll_frame() {
                return Some(frame);
            }
            if self.exchange.is_finished() {
                return None;
            }
            self.next_event().await;
        }
    }

    /// The status events skipped because the stream fell behind (it re-read the tasks
    /// instead), since last asked.
    pub fn take_skipped(&mut self) -> u64 {
        std::mem::take(&mut self.skipped)
    }

    /// Waits for the next event of the feed, or for shutdown, and feeds it to the exchange.
    async fn next_event(&mut self) {
        let shutdown = async {
            match &self.shutdown {
                Some(shutdown) => shutdown.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let event = tokio::select! {
            biased;
            () = shutdown => return self.exchange.on_shutdown(),
            event = self.feed.next() => event,
        };
        let exchange = &mut self.exchange;
        match event {
            FeedEvent::Task(Wake::Status(event)) => {
                exchange.on_status(event.scope.as_str(), &event.task);
            }
            FeedEvent::Task(Wake::Removed(id)) => exchange.on_removed(&id),
            FeedEvent::Task(Wake::Reread { skipped }) => {
                if skipped > 0 {
                    tracing::warn!(skipped, "listen stream lagged; status events skipped");
                    self.skipped += skipped;
                }
                self.reread().await;
            }
            FeedEvent::TasksEnded => exchange.on_feed_end(),
            FeedEvent::ListChanged(kind) => exchange.on_list_changed(kind),
            FeedEvent::ListsLagged => exchange.on_list_lagged(),
            FeedEvent::ResourceUpdated(uri) => exchange.on_resource_updated(&uri),
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
