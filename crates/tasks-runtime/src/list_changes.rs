//! List-change and resource-update announcements:
//!
//! The design notes are on [`ListChanges`](crate::ListChanges).

use std::sync::Arc;

pub use tasks_core::exchange::ListKind;
use tokio::sync::broadcast;

/// A cloneable handle announcing list changes to every open listen stream.
///
/// # Announcements
///
/// List-change and resource-update announcements:
/// `notifications/{tools,prompts,resources}/list_changed` and `notifications/resources/updated`
/// delivered to the `subscriptions/listen` streams (and 2025 sessions) that asked for them
/// (MCP 2026-07-28 subscriptions:
/// <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>;
/// tools, "List Changed Notification"; resources, "Subscriptions").
///
/// A server whose lists can change at run time creates one [`ListChanges`] handle, gives a clone
/// to the transport (which then advertises `listChanged` and honours the matching listen filter
/// keys) and calls [`ListChanges::announce`] after each change, and
/// [`ListChanges::resource_updated`] when a resource's contents change.
#[derive(Debug, Clone)]
pub struct ListChanges {
    sender: broadcast::Sender<ListKind>,
    resources: broadcast::Sender<Arc<str>>,
}

/// Two handles are equal when they are clones of one handle (they announce to the same
/// streams).
impl PartialEq for ListChanges {
    fn eq(&self, other: &Self) -> bool {
        self.sender.same_channel(&other.sender)
    }
}

impl Eq for ListChanges {}

impl Default for ListChanges {
    fn default() -> Self {
        ListChanges::new()
    }
}

impl ListChanges {
    /// A new handle with nobody listening yet.
    pub fn new() -> Self {
        let (sender, _) = broadcast::channel(64);
        let (resources, _) = broadcast::channel(256);
        ListChanges { sender, resources }
    }

    /// Tells every listen stream subscribed to `kind` that the list changed. Returns how many
    /// streams were open (whether or not they asked for `kind`).
    pub fn announce(&self, kind: ListKind) -> usize {
        self.sender.send(kind).unwrap_or(0)
    }

    /// A receiver of every later announcement.
    pub fn subscribe(&self) -> broadcast::Receiver<ListKind> {
        self.sender.subscribe()
    }

    /// Tells every stream subscribed to `uri` that the resource changed (a client then reads
    /// it again). Returns how many streams were open.
    pub fn resource_updated(&self, uri: &str) -> usize {
        self.resources.send(Arc::from(uri)).unwrap_or(0)
    }

    /// A receiver of every later resource update (its URI).
    pub fn subscribe_resources(&self) -> broadcast::Receiver<Arc<str>> {
        self.resources.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn announcements_reach_every_subscriber() {
        let changes = ListChanges::new();
        assert_eq!(changes.announce(ListKind::Tools), 0);
        let mut a = changes.subscribe();
        let mut b = changes.clone().subscribe();
        assert_eq!(changes.announce(ListKind::Prompts), 2);
        assert_eq!(a.recv().await.unwrap(), ListKind::Prompts);
        assert_eq!(b.recv().await.unwrap(), ListKind::Prompts);
        assert_eq!(ListKind::Tools.filter_key(), "toolsListChanged");
        assert_eq!(changes, changes.clone());
        assert_ne!(changes, ListChanges::new());
        let mut updates = changes.subscribe_resources();
        assert_eq!(changes.resource_updated("test://w"), 1);
        assert_eq!(&*updates.recv().await.unwrap(), "test://w");
    }
}
