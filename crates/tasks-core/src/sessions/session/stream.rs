//! A session's standalone GET stream as a machine: events in (task states and removals, reads,
//! nudges, list announcements, resource updates), frames and delivery effects out. The
//! transport reads the tasks it is asked to ([`SessionStream::to_reread`]), runs and stops the
//! deliveries of [`Effect`]s, and writes the frames.
//!
//! What goes out (MCP 2025-11-25 transports, "Listening for Messages from the Server"; tasks,
//! "Task Status Notifications", "Input Required Status", "Task Progress Notifications"):
//! `notifications/tasks/status` (the task, flat) when a task the session created changes,
//! preceded by its `notifications/progress` when the creating call carried a progress token
//! (so a client stopping at `completed` has seen the last progress); a list's
//! `notifications/…/list_changed` when the server has that list (after missed announcements,
//! one of every list the server has); `notifications/resources/updated` for a resource the
//! session subscribed to. The re-delivery decisions are [`GetStream`]'s.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use serde_json::{json, Map};

use super::delivery::{GetStream, Seen, Step, TaskBook, MAX_SESSION_TASKS};
use crate::jsonrpc::notification;
use crate::listen::ListKind;
use crate::sessions::tasks::SessionTaskView;
use crate::{Task, TaskId};

/// What the transport does about a task's input requests on this stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Deliver the task's outstanding input requests (a delivery of it already running keeps
    /// its place).
    Deliver(Arc<Task>),
    /// Stop this stream's delivery of the task (withdraw its requests).
    Withdraw(TaskId),
}

/// One GET stream of a session.
#[derive(Debug, Default)]
pub struct SessionStream {
    known: GetStream,
    frames: VecDeque<Vec<u8>>,
    effects: VecDeque<Effect>,
}

impl SessionStream {
    /// A stream that knows nothing yet.
    pub fn new() -> Self {
        SessionStream::default()
    }

    /// The next frame to send.
    pub fn poll_frame(&mut self) -> Option<Vec<u8>> {
        self.frames.pop_front()
    }

    /// The next effect to carry out.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    fn step(&mut self, step: Step, task: &Arc<Task>) {
        match step {
            Step::Deliver => self.effects.push_back(Effect::Deliver(task.clone())),
            Step::Withdraw => self.effects.push_back(Effect::Withdraw(task.id().clone())),
            Step::None => {}
        }
    }

    fn gone(&mut self, id: &TaskId) {
        if self.known.gone(id) == Step::Withdraw {
            self.effects.push_back(Effect::Withdraw(id.clone()));
        }
    }

    /// A state of one of the session's tasks: announced (when `announce`) if newer than what
    /// the stream knows, with its progress first; its input requests delivered while it asks
    /// (once the client named it), withdrawn once it does not.
    fn saw(&mut self, book: &mut TaskBook, task: &Arc<Task>, announce: bool) {
        let Some(step) = self.known.saw(Seen::of(task), book.knows(task.id())) else {
            return;
        };
        self.step(step, task);
        if let Some(params) = book.progress_update(task) {
            let frame = notification("notifications/progress", &params);
            self.frames.push_back(frame);
        }
        if announce {
            let frame = notification("notifications/tasks/status", &SessionTaskView(task));
            self.frames.push_back(frame);
        }
    }

    /// A committed state of a task of `scope_matches`' scope: handled when it is one the
    /// session announces.
    pub fn on_status(&mut self, book: &mut TaskBook, scope_matches: bool, task: &Arc<Task>) {
        if scope_matches && book.announces(task.id()) {
            self.saw(book, task, true);
        }
    }

    /// Task `id` was removed: a task of the session's is settled, its delivery withdrawn.
    pub fn on_removed(&mut self, book: &TaskBook, id: &TaskId) {
        if book.announces(id) {
            self.gone(id);
        }
    }

    /// A request of the client read `task` (having named it), waiting for input.
    pub fn on_nudge(&mut self, task: &Arc<Task>) {
        let step = self.known.nudged(Seen::of(task));
        self.step(step, task);
    }

    /// Which of the session's tasks to read again: those not known to be settled.
    pub fn to_reread(&self, book: &TaskBook) -> Vec<TaskId> {
        self.known.to_reread(book.created_tasks(MAX_SESSION_TASKS))
    }

    /// A read of `ids` found `tasks` (announced when `announce`: not when the stream opens);
    /// an id not found is gone if it was seen before.
    pub fn on_read(
        &mut self,
        book: &mut TaskBook,
        ids: &[TaskId],
        tasks: &[Arc<Task>],
        announce: bool,
    ) {
        let mut missing: HashSet<&TaskId> = ids.iter().collect();
        for task in tasks {
            missing.remove(task.id());
            self.saw(book, task, announce);
        }
        for id in missing {
            if self.known.missing(id) == Step::Withdraw {
                self.effects.push_back(Effect::Withdraw(id.clone()));
            }
        }
    }

    /// The server announced that list `kind` changed; sent when the server `has` that list.
    pub fn on_list_changed(&mut self, kind: ListKind, has: bool) {
        if has {
            self.frames
                .push_back(notification(kind.method(), &Map::new()));
        }
    }

    /// List announcements were missed: one notification of each list the server has
    /// (`has`) covers them.
    pub fn on_lists_lagged(&mut self, has: impl Fn(ListKind) -> bool) {
        for kind in ListKind::ALL.into_iter().filter(|kind| has(*kind)) {
            self.frames
                .push_back(notification(kind.method(), &Map::new()));
        }
    }

    /// Resource `uri` was updated; sent when the session `subscribed` to it.
    pub fn on_resource_updated(&mut self, uri: &str, subscribed: bool) {
        if subscribed {
            let frame = notification("notifications/resources/updated", &json!({"uri": uri}));
            self.frames.push_back(frame);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::InputRequest;
    use crate::{apply, Event, Timestamp};

    fn id(n: u8) -> TaskId {
        TaskId::parse(&format!("task-{n}")).unwrap()
    }

    fn next(task: &Task, event: Event) -> Arc<Task> {
        let at = Timestamp::from_unix_millis(task.revision() + 1);
        Arc::new(apply(task, event, at).unwrap().task)
    }

    fn frames(stream: &mut SessionStream) -> Vec<serde_json::Value> {
        std::iter::from_fn(|| stream.poll_frame())
            .map(|frame| serde_json::from_slice(&frame).unwrap())
            .collect()
    }

    fn effects(stream: &mut SessionStream) -> Vec<Effect> {
        std::iter::from_fn(|| stream.poll_effect()).collect()
    }

    #[test]
    fn a_session_task_is_announced_delivered_once_named_and_withdrawn() {
        let mut book = TaskBook::new();
        let mut stream = SessionStream::new();
        book.created(&id(1));
        let start = Arc::new(Task::new(id(1), Timestamp::from_unix_millis(0), None, None));
        let working = next(
            &start,
            Event::StatusMessage {
                message: "on it".into(),
            },
        );
        let request = InputRequest::elicit_form("ok?", json!({"type": "object"}));
        let asks = next(
            &working,
            Event::InputRequested {
                key: "q".into(),
                request,
            },
        );
        // Another scope's task, and a task the session did not create, are not announced.
        stream.on_status(&mut book, false, &working);
        let stranger = Arc::new(Task::new(id(2), Timestamp::from_unix_millis(0), None, None));
        stream.on_status(&mut book, true, &stranger);
        assert!(frames(&mut stream).is_empty());
        stream.on_status(&mut book, true, &working);
        let sent = frames(&mut stream);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0]["method"], "notifications/tasks/status");
        assert_eq!(sent[0]["params"]["taskId"], "task-1");
        // Waiting for input, not yet named: announced, not delivered.
        stream.on_status(&mut book, true, &asks);
        assert_eq!(frames(&mut stream).len(), 1);
        assert!(effects(&mut stream).is_empty());
        // Named: a nudge delivers; a stale state changes nothing.
        book.named(&id(1));
        stream.on_nudge(&asks);
        assert_eq!(effects(&mut stream), [Effect::Deliver(asks.clone())]);
        stream.on_status(&mut book, true, &working);
        assert!(frames(&mut stream).is_empty());
        // Removed: the delivery is withdrawn, and a later read does not bring it back.
        stream.on_removed(&book, &id(1));
        assert_eq!(effects(&mut stream), [Effect::Withdraw(id(1))]);
        assert!(stream.to_reread(&book).is_empty());
    }

    #[test]
    fn a_read_missing_a_delivered_task_withdraws_it() {
        let mut book = TaskBook::new();
        let mut stream = SessionStream::new();
        book.created(&id(1));
        book.created(&id(2));
        book.named(&id(1));
        let start = Arc::new(Task::new(id(1), Timestamp::from_unix_millis(0), None, None));
        let request = InputRequest::elicit_form("ok?", json!({"type": "object"}));
        let asks = next(
            &start,
            Event::InputRequested {
                key: "q".into(),
                request,
            },
        );
        let mut reread = stream.to_reread(&book);
        reread.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        assert_eq!(reread, [id(1), id(2)]);
        // Opening: not announced, but delivered; task 2 not stored yet is not gone.
        stream.on_read(
            &mut book,
            &[id(1), id(2)],
            std::slice::from_ref(&asks),
            false,
        );
        assert!(frames(&mut stream).is_empty());
        assert_eq!(effects(&mut stream), [Effect::Deliver(asks)]);
        stream.on_read(&mut book, &[id(1), id(2)], &[], true);
        assert_eq!(effects(&mut stream), [Effect::Withdraw(id(1))]);
    }

    #[test]
    fn lists_and_resources_go_out_when_the_server_has_them() {
        let mut stream = SessionStream::new();
        stream.on_list_changed(ListKind::Prompts, false);
        stream.on_resource_updated("notes://a", false);
        assert!(frames(&mut stream).is_empty());
        stream.on_list_changed(ListKind::Tools, true);
        stream.on_resource_updated("notes://a", true);
        stream.on_lists_lagged(|kind| kind != ListKind::Prompts);
        let methods: Vec<_> = frames(&mut stream)
            .into_iter()
            .map(|frame| (frame["method"].clone(), frame["params"].clone()))
            .collect();
        assert_eq!(
            methods,
            [
                (json!("notifications/tools/list_changed"), json!({})),
                (
                    json!("notifications/resources/updated"),
                    json!({"uri": "notes://a"})
                ),
                (json!("notifications/tools/list_changed"), json!({})),
                (json!("notifications/resources/list_changed"), json!({})),
            ]
        );
    }
}
