//! List-change announcements: `notifications/{tools,prompts,resources}/list_changed` delivered
//! to `subscriptions/listen` streams that asked for them (MCP 2026-07-28 subscriptions:
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>;
//! tools, "List Changed Notification").
//!
//! A server whose lists can change at run time creates one [`ListChanges`] handle, gives a clone
//! to the transport (which then advertises `listChanged` and honours the matching listen filter
//! keys) and calls [`ListChanges::announce`] after each change.

pub use tasks_core::listen::ListKind;
use tokio::sync::broadcast;

/// A cloneable handle announcing list changes to every open listen stream.
#[derive(Debug, Clone)]
pub struct ListChanges {
    sender: broadcast::Sender<ListKind>,
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
        ListChanges { sender }
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
    }
}
