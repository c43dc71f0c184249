//! The `subscriptions/listen` exchange: [`ListenExchange`] (its docs state the rules).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::Value;

use crate::id::TaskId;
use crate::jsonrpc;
use crate::listen::{
    acknowledgement, closing, list_changed_params, resource_updated_params, Announces, ListKind,
};
use crate::projection;
use crate::task::Task;
use crate::JsonObject;

/// The method of the acknowledgement.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// The method of a task status notification.
const TASK_STATUS: &str = "notifications/tasks";

/// The method of a resource update.
const RESOURCE_UPDATED: &str = "notifications/resources/updated";

/// What a listen frame is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenFrameKind {
    /// `notifications/subscriptions/acknowledged`: the first frame.
    Acknowledgement,
    /// `notifications/tasks` for task `task_id` at `revision` ([`Task::revision`]).
    TaskStatus {
        /// The task.
        task_id: TaskId,
        /// The revision the notification shows.
        revision: u64,
    },
    /// `notifications/<list>/list_changed`.
    ListChanged(ListKind),
    /// `notifications/resources/updated` for this URI.
    ResourceUpdated(String),
    /// The graceful-closure response to the listen request: the last frame.
    Closing,
}

impl ListenFrameKind {
    /// The notification method of a frame that carries an event (a task state or a list
    /// change), e.g. `"notifications/tasks"`; `None` for the acknowledgement and the closing
    /// response.
    pub fn event_method(&self) -> Option<&'static str> {
        match self {
            ListenFrameKind::TaskStatus { .. } => Some(TASK_STATUS),
            ListenFrameKind::ListChanged(kind) => Some(kind.method()),
            ListenFrameKind::ResourceUpdated(_) => Some(RESOURCE_UPDATED),
            ListenFrameKind::Acknowledgement | ListenFrameKind::Closing => None,
        }
    }
}

/// One message of a listen stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenFrame {
    /// What it is.
    pub kind: ListenFrameKind,
    /// The serialized JSON-RPC message: a notification, or for [`ListenFrameKind::Closing`]
    /// the response to the listen request.
    pub message: Vec<u8>,
}

/// What the stream last saw of a named task.
#[derive(Debug, Clone, Copy)]
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

/// Where the exchange is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// Events become frames.
    Open,
    /// Ended: the frames still queued (the acknowledgement if not taken yet, the closing
    /// response) go out, then nothing.
    Ended,
}

/// The state machine of one `subscriptions/listen` stream, from the acknowledgement to the end
/// of the stream.
///
/// Rules (MCP 2026-07-28 "Subscriptions",
/// <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>;
/// SEP-2663 "Task Status Notifications",
/// <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>;
/// where neither decides, the choice is this server's):
///
/// * The first frame is always `notifications/subscriptions/acknowledged`, echoing only what is
///   honoured ([`crate::listen::acknowledgement`]): the requested tasks the caller may see when
///   the stream opened (unknown, expired and other-scope ids are left out by whoever read them),
///   each `*ListChanged` announced and the `resourceSubscriptions` honoured ([`Announces`]).
/// * A committed state of a named task becomes one `notifications/tasks` when it is newer than
///   the last state the stream saw of it (sent, or read when the stream opened): each revision at
///   most once, never an older one after a newer one, whatever order the states arrive in or
///   how often. States of other scopes and of tasks not named are dropped.
/// * A task that is gone (its TTL ran out; a re-read no longer finds it) is no longer named:
///   nothing is sent for it, and the stream stays open for the others.
/// * A stream that may have missed states (a feed resync, a receiver that fell behind, the
///   guard interval) asks for its unfinished named tasks to be re-read
///   ([`ListenExchange::to_reread`]) and treats what the read finds as committed states.
/// * Each list announcement becomes `notifications/<list>/list_changed` when that list is
///   honoured; lost announcements (a receiver that fell behind) become one of each honoured
///   list. An update of a subscribed resource becomes `notifications/resources/updated`
///   `{uri}`; other URIs are dropped.
/// * On shutdown the stream ends gracefully: notifications not yet taken are dropped and the
///   last frame is the listen response `{"resultType": "complete", "_meta": {subscriptionId,
///   serverInfo}}` (subscriptions, "Graceful Closure"). When the change feed itself ends (the
///   runtime is gone) the stream ends without it. Nothing follows either end.
///
/// Every notification carries `_meta["io.modelcontextprotocol/subscriptionId"]`, the listen
/// request's id with its JSON type.
///
/// Feed it with the `on_*` methods and take its frames with [`ListenExchange::poll_frame`]
/// until [`ListenExchange::is_finished`]. Take the frames before waiting for the next event:
/// the acknowledgement is queued when the exchange opens.
#[derive(Debug)]
pub struct ListenExchange {
    subscription_id: Value,
    scope: Box<str>,
    /// The named tasks still there, with what the stream last saw of each.
    named: BTreeMap<TaskId, Seen>,
    announces: Announces,
    /// Frames ready to go out, in order.
    frames: VecDeque<ListenFrame>,
    /// The graceful-closure response, prepared when the exchange opens.
    closing: Vec<u8>,
    phase: Phase,
}

impl ListenExchange {
    /// Opens the exchange of listen request `subscription_id` (its JSON-RPC id) for the caller of
    /// `scope` (its opaque scope string), and queues the acknowledgement.
    ///
    /// `accepted`: the requested tasks the caller may see, in request order, as read after
    /// the feed of changes was subscribed to (so that no change in between is lost); ids
    /// unknown, expired or of another scope are simply not among them. `announces`: the list
    /// changes and resource updates the client asked for that the server offers. `server_meta`:
    /// the `_meta` every result carries (serverInfo), for the closing response.
    pub fn open<'a>(
        subscription_id: Value,
        scope: &str,
        accepted: impl IntoIterator<Item = &'a Task>,
        announces: Announces,
        server_meta: &JsonObject,
    ) -> Self {
        let mut named = BTreeMap::new();
        let mut ids = Vec::new();
        for task in accepted {
            if named.insert(task.id().clone(), Seen::of(task)).is_none() {
                ids.push(task.id().clone());
            }
        }
        let ack = acknowledgement(&subscription_id, &ids, &announces);
        let closing_message = jsonrpc::result(
            &subscription_id,
            &jsonrpc::with_server_meta(server_meta, closing(&subscription_id)),
        );
        let first = ListenFrame {
            kind: ListenFrameKind::Acknowledgement,
            message: jsonrpc::notification(ACKNOWLEDGED, &ack),
        };
        ListenExchange {
            subscription_id,
            scope: scope.into(),
            named,
            announces,
            frames: VecDeque::from([first]),
            closing: closing_message,
            phase: Phase::Open,
        }
    }

    /// Whether list changes or resource updates are announced on this stream (the driver then
    /// feeds [`ListenExchange::on_list_changed`] and [`ListenExchange::on_resource_updated`]).
    pub fn announces_list_changes(&self) -> bool {
        self.announces.any_list() || !self.announces.resource_subscriptions.is_empty()
    }

    /// The next frame to send, if any.
    pub fn poll_frame(&mut self) -> Option<ListenFrame> {
        self.frames.pop_front()
    }

    /// Whether the exchange is over and every frame was taken: the stream ends.
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Ended && self.frames.is_empty()
    }

    /// A committed state of some task, of the caller's scope or another (its opaque scope
    /// string): a notification when the task is named and the state newer than the last one
    /// seen.
    pub fn on_status(&mut self, scope: &str, task: &Task) {
        if *self.scope == *scope {
            self.observe(task);
        }
    }

    /// Task `id` is gone: it is no longer named.
    pub fn on_removed(&mut self, id: &TaskId) {
        self.named.remove(id);
    }

    /// The stream may have missed states: the named tasks to re-read, those that can still
    /// change (not terminal), in id order; empty when there is nothing to read (or the
    /// exchange is over). Answer with [`ListenExchange::on_reread`]; a failed read needs no
    /// answer (the next re-read asks again).
    pub fn to_reread(&self) -> Vec<TaskId> {
        if self.phase != Phase::Open {
            return Vec::new();
        }
        self.named
            .iter()
            .filter(|(_, seen)| !seen.terminal)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// What a re-read of `asked` (from [`ListenExchange::to_reread`]) under the caller's scope
    /// found: each state is treated as committed; a task asked for and not found is gone.
    pub fn on_reread<'a>(&mut self, asked: &[TaskId], found: impl IntoIterator<Item = &'a Task>) {
        if self.phase != Phase::Open {
            return;
        }
        let mut missing: BTreeSet<&TaskId> = asked.iter().collect();
        for task in found {
            missing.remove(task.id());
            self.observe(task);
        }
        for id in missing {
            self.named.remove(id);
        }
    }

    /// The server announced that list `kind` changed.
    pub fn on_list_changed(&mut self, kind: ListKind) {
        self.list_changed(kind);
    }

    /// The server announced that the resource `uri` changed: a notification when it is
    /// subscribed to.
    pub fn on_resource_updated(&mut self, uri: &str) {
        if self.phase != Phase::Open
            || !self
                .announces
                .resource_subscriptions
                .iter()
                .any(|u| u == uri)
        {
            return;
        }
        self.frames.push_back(ListenFrame {
            kind: ListenFrameKind::ResourceUpdated(uri.to_owned()),
            message: jsonrpc::notification(
                RESOURCE_UPDATED,
                &resource_updated_params(&self.subscription_id, uri),
            ),
        });
    }

    /// Some list-change announcements were lost (the receiver fell behind): announce each
    /// honoured list once, since it may have changed.
    pub fn on_list_lagged(&mut self) {
        for kind in ListKind::ALL {
            self.list_changed(kind);
        }
    }

    /// The server shuts down: notifications not yet taken are dropped, the closing response
    /// is queued (after the acknowledgement when that was not taken yet), and the exchange is
    /// over. Nothing happens once it is over.
    pub fn on_shutdown(&mut self) {
        if self.end() {
            self.frames.push_back(ListenFrame {
                kind: ListenFrameKind::Closing,
                message: std::mem::take(&mut self.closing),
            });
        }
    }

    /// The feed of changes ended (the runtime is gone): the exchange is over without a
    /// closing response (an acknowledgement not taken yet still goes out).
    pub fn on_feed_end(&mut self) {
        self.end();
    }

    /// Ends the exchange, keeping only an acknowledgement not taken yet; `false` when it was
    /// over already.
    fn end(&mut self) -> bool {
        if self.phase != Phase::Open {
            return false;
        }
        self.phase = Phase::Ended;
        self.frames
            .retain(|frame| frame.kind == ListenFrameKind::Acknowledgement);
        true
    }

    /// Queues the notification of `task` when it is named and this state is newer than the
    /// last one seen.
    fn observe(&mut self, task: &Task) {
        if self.phase != Phase::Open {
            return;
        }
        let Some(seen) = self.named.get_mut(task.id()) else {
            return;
        };
        if task.revision() <= seen.revision {
            return;
        }
        *seen = Seen::of(task);
        let params = projection::notification(task, &self.subscription_id);
        self.frames.push_back(ListenFrame {
            kind: ListenFrameKind::TaskStatus {
                task_id: task.id().clone(),
                revision: task.revision(),
            },
            message: jsonrpc::notification(TASK_STATUS, &params),
        });
    }

    fn list_changed(&mut self, kind: ListKind) {
        if self.phase != Phase::Open || !self.announces.list(kind) {
            return;
        }
        self.frames.push_back(ListenFrame {
            kind: ListenFrameKind::ListChanged(kind),
            message: jsonrpc::notification(
                kind.method(),
                &list_changed_params(&self.subscription_id),
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;
    use serde_json::json;

    fn task(id: &str) -> Task {
        Task::new(
            TaskId::parse(id).unwrap(),
            Timestamp::from_unix_millis(1_000),
            None,
            None,
        )
    }

    fn frames(exchange: &mut ListenExchange) -> Vec<ListenFrame> {
        std::iter::from_fn(|| exchange.poll_frame()).collect()
    }

    #[test]
    fn the_acknowledgement_echoes_what_is_honoured_and_the_closing_carries_server_info() {
        let meta = json!({"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}});
        let a = task("a");
        let mut exchange = ListenExchange::open(
            json!(7),
            "",
            [&a, &a],
            Announces::default(),
            meta.as_object().unwrap(),
        );
        exchange.on_list_lagged();
        exchange.on_shutdown();
        exchange.on_shutdown();
        let sent = frames(&mut exchange);
        assert!(exchange.is_finished());
        let values: Vec<Value> = sent
            .iter()
            .map(|f| serde_json::from_slice(&f.message).unwrap())
            .collect();
        assert_eq!(
            values,
            [
                json!({"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {
                    "_meta": {"io.modelcontextprotocol/subscriptionId": 7},
                    "notifications": {"taskIds": ["a"]}}}),
                json!({"jsonrpc": "2.0", "id": 7, "result": {"resultType": "complete",
                    "_meta": {"io.modelcontextprotocol/subscriptionId": 7,
                        "io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}}),
            ]
        );
        assert_eq!(sent[1].kind, ListenFrameKind::Closing);
        assert_eq!(sent[1].kind.event_method(), None);
    }

    #[test]
    fn honoured_lists_and_subscribed_resources_are_announced_and_nothing_else() {
        let announces = Announces {
            prompts_list_changed: true,
            resource_subscriptions: vec!["test://watched".into()],
            ..Announces::default()
        };
        let mut exchange = ListenExchange::open(json!("s"), "", [], announces, &JsonObject::new());
        assert!(exchange.announces_list_changes());
        exchange.on_list_changed(ListKind::Tools);
        exchange.on_list_changed(ListKind::Prompts);
        exchange.on_list_changed(ListKind::Resources);
        exchange.on_resource_updated("test://other");
        exchange.on_resource_updated("test://watched");
        exchange.on_list_lagged();
        let sent: Vec<Value> = frames(&mut exchange)
            .iter()
            .map(|f| serde_json::from_slice(&f.message).unwrap())
            .collect();
        let meta = json!({"io.modelcontextprotocol/subscriptionId": "s"});
        assert_eq!(
            sent,
            [
                json!({"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {"_meta": meta,
                    "notifications": {"promptsListChanged": true,
                        "resourceSubscriptions": ["test://watched"]}}}),
                json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed",
                    "params": {"_meta": meta}}),
                json!({"jsonrpc": "2.0", "method": RESOURCE_UPDATED,
                    "params": {"uri": "test://watched", "_meta": meta}}),
                json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed",
                    "params": {"_meta": meta}}),
            ]
        );
    }
}
