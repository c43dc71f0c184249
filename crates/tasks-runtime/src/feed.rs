//! What a long-lived stream follows (a 2026-07-28 `subscriptions/listen` stream, a 2025
//! session's GET stream): the runtime's task [`Changes`], the server's list announcements and
//! resource updates ([`ListChanges`]), merged into one [`Feed`] of [`FeedEvent`]s, and the
//! opening read of the tasks a stream follows ([`follow_tasks`]). Any host drives its stream's
//! machine with it.

use std::sync::Arc;

use futures_util::FutureExt as _;
use tasks_core::{McpError, Task, TaskId};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use crate::list_changes::{ListChanges, ListKind};
use crate::runtime::TaskRuntime;
use crate::scope::Scope;
use crate::wait::{Changes, Wake};

/// The next event of a [`Feed`].
#[derive(Debug, Clone)]
pub enum FeedEvent {
    /// A change of the runtime's tasks ([`Changes::next`]).
    Task(Wake),
    /// The task changes ended (the runtime is gone); none follow.
    TasksEnded,
    /// The server announced that a list changed.
    ListChanged(ListKind),
    /// List announcements were missed (the receiver fell behind): any list may have changed.
    ListsLagged,
    /// The server announced an update of the resource with this URI. Updates missed by
    /// falling behind cannot be told apart and are skipped.
    ResourceUpdated(Arc<str>),
}

/// The merged sources of a stream, each optional: a missing or closed source is never heard
/// from.
#[derive(Debug, Default)]
pub struct Feed {
    changes: Option<Changes>,
    lists: Option<broadcast::Receiver<ListKind>>,
    resources: Option<broadcast::Receiver<Arc<str>>>,
}

impl Feed {
    /// A feed of `changes` (when given) and, from `announcer`, list announcements (when `lists`)
    /// and resource updates (when `resources`). Subscribes now.
    pub fn new(
        changes: Option<Changes>,
        announcer: Option<&ListChanges>,
        lists: bool,
        resources: bool,
    ) -> Self {
        Feed {
            changes,
            lists: announcer.filter(|_| lists).map(ListChanges::subscribe),
            resources: announcer
                .filter(|_| resources)
                .map(ListChanges::subscribe_resources),
        }
    }

    /// A task change already queued, without waiting; `None` when there is none now (or no
    /// task changes are followed).
    pub fn queued(&mut self) -> Option<Wake> {
        self.changes.as_mut()?.next().now_or_never().flatten()
    }

    /// The next event: task changes first, then list announcements, then resource updates.
    /// Pending forever once every source is gone. Cancel-safe: dropping the future loses
    /// nothing.
    pub async fn next(&mut self) -> FeedEvent {
        loop {
            tokio::select! {
                biased;
                wake = next_wake(&mut self.changes) => match wake {
                    Some(wake) => return FeedEvent::Task(wake),
                    None => {
                        self.changes = None;
                        return FeedEvent::TasksEnded;
                    }
                },
                kind = next_of(&mut self.lists) => match kind {
                    Ok(kind) => return FeedEvent::ListChanged(kind),
                    Err(RecvError::Lagged(_)) => return FeedEvent::ListsLagged,
                    Err(RecvError::Closed) => self.lists = None,
                },
                uri = next_of(&mut self.resources) => match uri {
                    Ok(uri) => return FeedEvent::ResourceUpdated(uri),
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => self.resources = None,
                },
            }
        }
    }
}

/// The next value of an optional receiver; pending forever without one.
async fn next_of<T: Clone>(receiver: &mut Option<broadcast::Receiver<T>>) -> Result<T, RecvError> {
    match receiver {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

/// The next wake-up of optional changes; pending forever without them.
async fn next_wake(changes: &mut Option<Changes>) -> Option<Wake> {
    match changes {
        Some(changes) => changes.next().await,
        None => std::future::pending().await,
    }
}

/// Opens a stream following tasks `ids` of `scope`: subscribes to the runtime's changes
/// before reading them (so no change in between is lost), and reads each, watching those it
/// finds ([`TaskRuntime::watch`]); an id the caller cannot see is left out.
///
/// # Errors
/// A store that cannot answer (rather than leave out a task that exists).
pub async fn follow_tasks<'a>(
    runtime: &TaskRuntime,
    scope: &Scope,
    ids: impl IntoIterator<Item = &'a TaskId>,
) -> Result<(Changes, Vec<Arc<Task>>), McpError> {
    let changes = runtime.changes();
    let mut found = Vec::new();
    for id in ids {
        match runtime.get(scope, id).await {
            Ok(task) => {
                runtime.watch(&task);
                found.push(task);
            }
            Err(McpError::UnknownTask) => {}
            Err(error) => return Err(error),
        }
    }
    Ok((changes, found))
}
