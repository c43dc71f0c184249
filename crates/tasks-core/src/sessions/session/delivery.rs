//! Which stream of a 2025-11-25 session delivers a task's input requests, and when the GET
//! stream asks them again.
//!
//! MCP 2025-11-25 tasks, "Input Required Status"
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks>): while a
//! task waits for input, its input requests are sent to the client as requests of the session
//! with `related-task` `_meta`, and clients should expect them on any stream. This server sends
//! them on the stream of an open `tasks/result`, or on the session's standalone GET stream
//! (transports, "Listening for Messages from the Server":
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>). The rules,
//! this server's choices:
//!
//! * **One stream at a time.** A delivery claims the task ([`TaskBook::claim`]); a second
//!   delivery of the same task finds it busy until the first ends ([`TaskBook::release`]), so no
//!   question goes out on two streams at once.
//! * **Only once the client named the task.** A task's questions go out on the GET stream only
//!   after the client named the task in a request (`tasks/get`, `tasks/result`:
//!   [`TaskBook::named`]): sent earlier, a question could reach the client before the
//!   `CreateTaskResult` that tells it the task exists, and it could not match it to anything.
//! * **Re-delivery.** A GET stream follows each task's state by revision ([`GetStream`]): a
//!   newer state waiting for input is delivered; one no longer waiting withdraws the delivery;
//!   a terminal or gone task is settled and never asked again. A new stream (a reconnect)
//!   starts knowing nothing, so what is still unanswered is asked again there; on one stream a
//!   revision is handled once. A delivery asks only what the task asks when it holds the claim
//!   (the driver reads the task again then), so an answered question is not asked again.
//! * **Progress.** When the call that created a task carried a `progressToken`, the task's
//!   progress ([`crate::Progress`]) goes out on the GET stream as `notifications/progress` with
//!   that token (tasks, "Task Progress Notifications": the token stays valid for the task's
//!   lifetime), each ahead of the last one the session sent ([`TaskBook::progress_update`]:
//!   progress, <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress>,
//!   requires every value to increase), a new GET stream included.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::progress::Progress;
use crate::{Task, TaskId};

/// At most this many tasks per session are announced with `notifications/tasks/status` and
/// followed by the GET stream (later ones are not: the notifications are optional).
pub const MAX_SESSION_TASKS: usize = 10_000;

/// At most this many of a session's unfinished tasks are re-read at once (when a GET stream
/// opens, after a resync, on the guard interval).
pub const RESCAN_LIMIT: usize = 1_000;

/// What a session knows of the tasks it created.
#[derive(Debug, Default)]
pub struct TaskBook {
    /// Tasks this session created, whose status changes go out on its GET stream.
    created: HashSet<TaskId>,
    /// Tasks of `created` the client has named in a request.
    named: HashSet<TaskId>,
    /// Tasks whose input requests a stream of this session is delivering.
    delivering: HashSet<TaskId>,
    /// Tasks of `created` whose creating call carried a `progressToken`: the token, and the
    /// last progress sent with it.
    progress: HashMap<TaskId, FollowedProgress>,
}

/// A task whose progress a session's client asked for.
#[derive(Debug)]
struct FollowedProgress {
    token: Value,
    sent: Option<Progress>,
}

impl TaskBook {
    /// An empty book.
    pub fn new() -> Self {
        TaskBook::default()
    }

    /// The session is creating `task` (recorded before the task exists: its worker may ask
    /// for input in its first step).
    pub fn created(&mut self, task: &TaskId) {
        if self.created.len() < MAX_SESSION_TASKS {
            self.created.insert(task.clone());
        }
    }

    /// The creation of `task` was refused: it is forgotten.
    pub fn forget_created(&mut self, task: &TaskId) {
        self.created.remove(task);
        self.named.remove(task);
        self.progress.remove(task);
    }

    /// The call creating `task` (one this session created) carried `progress_token`: the
    /// task's progress goes out as `notifications/progress` with it
    /// ([`TaskBook::progress_update`]).
    pub fn follow_progress(&mut self, task: &TaskId, progress_token: Value) {
        if self.created.contains(task) {
            let followed = FollowedProgress {
                token: progress_token,
                sent: None,
            };
            self.progress.insert(task.clone(), followed);
        }
    }

    /// The `notifications/progress` params to send for this state of `task`
    /// ([`crate::sessions::tasks::progress_notification`]), when the session follows the task's
    /// progress and it is ahead of the last one sent; it then counts as sent. `None` otherwise.
    pub fn progress_update(&mut self, task: &Task) -> Option<Value> {
        let followed = self.progress.get_mut(task.id())?;
        let progress = task.progress()?;
        if !progress.advances(followed.sent.as_ref()) {
            return None;
        }
        followed.sent = Some(progress);
        crate::sessions::tasks::progress_notification(task, &followed.token)
    }

    /// The client named `task` in a request: its questions may go out on the GET stream.
    pub fn named(&mut self, task: &TaskId) {
        if self.named.len() < MAX_SESSION_TASKS && self.created.contains(task) {
            self.named.insert(task.clone());
        }
    }

    /// Whether the client has named `task`, one this session created.
    pub fn knows(&self, task: &TaskId) -> bool {
        self.named.contains(task)
    }

    /// Whether this session created `task` (and announces its changes).
    pub fn announces(&self, task: &TaskId) -> bool {
        self.created.contains(task)
    }

    /// Up to `limit` of the tasks this session created.
    pub fn created_tasks(&self, limit: usize) -> Vec<TaskId> {
        self.created.iter().take(limit).cloned().collect()
    }

    /// Claims the delivery of `task`'s input requests: `false` when another stream of the
    /// session holds it.
    pub fn claim(&mut self, task: &TaskId) -> bool {
        self.delivering.insert(task.clone())
    }

    /// The delivery of `task` ended (answered, stopped, or failed): another may claim it.
    pub fn release(&mut self, task: &TaskId) {
        self.delivering.remove(task);
    }
}

/// One state of a task, as a stream sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen<'a> {
    /// The task.
    pub id: &'a TaskId,
    /// Its revision (strictly increasing with each change).
    pub revision: u64,
    /// Whether it waits for input (`input_required`).
    pub asks: bool,
    /// Whether it ended.
    pub terminal: bool,
}

impl<'a> Seen<'a> {
    /// The state of `task`.
    pub fn of(task: &'a crate::Task) -> Self {
        Seen {
            id: task.id(),
            revision: task.revision(),
            asks: matches!(task.state(), crate::TaskState::InputRequired { .. }),
            terminal: task.is_terminal(),
        }
    }
}

/// What a GET stream does about a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing.
    None,
    /// Deliver the task's outstanding input requests on this stream (a delivery already
    /// running keeps its place: the claim makes a second one find it busy).
    Deliver,
    /// Stop this stream's delivery of the task: it no longer asks (withdraw its requests).
    Withdraw,
}

#[derive(Debug, Default)]
struct Known {
    revision: u64,
    settled: bool,
    delivering: bool,
}

/// What one GET stream knows of its session's tasks: the re-delivery decisions.
#[derive(Debug, Default)]
pub struct GetStream {
    known: HashMap<TaskId, Known>,
}

impl GetStream {
    /// A stream that knows nothing yet.
    pub fn new() -> Self {
        GetStream::default()
    }

    fn deliver(known: &mut Known) -> Step {
        known.delivering = true;
        Step::Deliver
    }

    fn withdraw(known: &mut Known) -> Step {
        if std::mem::take(&mut known.delivering) {
            Step::Withdraw
        } else {
            Step::None
        }
    }

    /// A state of one of the session's tasks arrived (a status event or a re-read), which the
    /// client has named when `knows`: `None` when it is not newer than what the stream knows
    /// (nothing to announce either), else what to do.
    pub fn saw(&mut self, task: Seen<'_>, knows: bool) -> Option<Step> {
        let known = self.known.entry(task.id.clone()).or_default();
        if task.revision <= known.revision {
            return None;
        }
        known.revision = task.revision;
        known.settled = task.terminal;
        Some(match (task.asks, knows) {
            (true, true) => GetStream::deliver(known),
            (true, false) => Step::None,
            (false, _) => GetStream::withdraw(known),
        })
    }

    /// A request of the client read `task` (having named it) and asks this stream to deliver
    /// its questions now, unless the stream already knows a newer state. The state counts as
    /// seen, so an older event arriving later cannot withdraw the delivery.
    pub fn nudged(&mut self, task: Seen<'_>) -> Step {
        let known = self.known.entry(task.id.clone()).or_default();
        if task.revision < known.revision || known.settled {
            return Step::None;
        }
        known.revision = task.revision;
        if task.asks {
            GetStream::deliver(known)
        } else {
            Step::None
        }
    }

    /// Task `id` is gone (removed, or its TTL ran out): settled, never re-read.
    pub fn gone(&mut self, id: &TaskId) -> Step {
        let known = self.known.entry(id.clone()).or_default();
        known.settled = true;
        GetStream::withdraw(known)
    }

    /// Which of `created` (the session's tasks) to re-read: those not settled, at most
    /// [`RESCAN_LIMIT`].
    pub fn to_reread(&self, created: Vec<TaskId>) -> Vec<TaskId> {
        created
            .into_iter()
            .filter(|id| !self.known.get(id).is_some_and(|k| k.settled))
            .take(RESCAN_LIMIT)
            .collect()
    }

    /// A re-read did not find `id`. A task never seen may be one whose creation is still
    /// being stored (the session records a task before it exists): only one seen before is
    /// gone.
    pub fn missing(&mut self, id: &TaskId) -> Step {
        if self.known.get(id).is_some_and(|k| k.revision > 0) {
            self.gone(id)
        } else {
            Step::None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn task(n: u8) -> TaskId {
        TaskId::parse(&format!("task-{n}")).unwrap()
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// Task n changes: asks, ends, or neither.
        Change(u8, u8),
        /// A status event (maybe stale, by this many revisions) reaches the stream.
        Event(u8, u64),
        Named(u8),
        Nudge(u8),
        Gone(u8),
        /// The GET stream is replaced by a new one (a reconnect), which re-reads.
        Reconnect,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..3, 0u8..3).prop_map(|(n, s)| Op::Change(n, s)),
            (0u8..3, 0u64..3).prop_map(|(n, l)| Op::Event(n, l)),
            (0u8..3).prop_map(Op::Named),
            (0u8..3).prop_map(Op::Nudge),
            (0u8..3).prop_map(Op::Gone),
            Just(Op::Reconnect),
        ]
    }

    #[derive(Debug, Clone, Default)]
    struct Truth {
        revision: u64,
        asks: bool,
        terminal: bool,
        gone: bool,
        /// The revision whose questions this stream was last told to deliver.
        delivered_on_stream: Option<u64>,
    }

    proptest! {
        /// A GET stream delivers a task's questions only while the task asks and the client
        /// has named it; never for a task that ended or is gone; handles a revision once (a
        /// repeated or older state changes nothing); withdraws only what it delivered; and a
        /// new stream asks again what is still unanswered.
        #[test]
        fn the_redelivery_model(ops in proptest::collection::vec(op(), 1..60)) {
            let mut book = TaskBook::new();
            for n in 0..3 {
                book.created(&task(n));
            }
            let mut truth: Vec<Truth> = vec![Truth::default(); 3];
            let mut stream = GetStream::new();
            let mut delivering: HashSet<u8> = HashSet::new();
            let check = |step: Step, n: u8, seen_rev: u64, t: &mut Truth, knows: bool,
                         delivering: &mut HashSet<u8>| -> Result<(), TestCaseError> {
                match step {
                    Step::Deliver => {
                        prop_assert!(knows, "delivered before the client named the task");
                        prop_assert!(!t.gone, "delivered a gone task");
                        t.delivered_on_stream = Some(seen_rev);
                        delivering.insert(n);
                    }
                    Step::Withdraw => {
                        prop_assert!(delivering.remove(&n), "withdrew what it never delivered");
                    }
                    Step::None => {}
                }
                Ok(())
            };
            for op in ops {
                match op {
                    Op::Change(n, s) => {
                        let t = &mut truth[usize::from(n)];
                        if t.terminal || t.gone { continue; }
                        t.revision += 1;
                        t.asks = s == 0;
                        t.terminal = s == 1;
                    }
                    Op::Event(n, lag) => {
                        let id = task(n);
                        let knows = book.knows(&id);
                        let t = &mut truth[usize::from(n)];
                        if t.gone || t.revision == 0 { continue; }
                        let revision = t.revision.saturating_sub(lag).max(1);
                        // A stale event carries the state of its own revision: approximated
                        // as asking (the worst case for duplicates).
                        let current = revision == t.revision;
                        let seen = Seen { id: &id, revision, asks: !current || t.asks, terminal: current && t.terminal };
                        if let Some(step) = stream.saw(seen, knows) {
                            if step == Step::Deliver && current {
                                prop_assert!(t.asks && !t.terminal);
                            }
                            check(step, n, revision, t, knows, &mut delivering)?;
                            // The same revision again changes nothing.
                            prop_assert_eq!(stream.saw(seen, knows), None);
                        }
                    }
                    Op::Named(n) => book.named(&task(n)),
                    Op::Nudge(n) => {
                        let id = task(n);
                        let t = &mut truth[usize::from(n)];
                        // Only a request that read the task, having named it, nudges.
                        if t.gone || t.revision == 0 || !book.knows(&id) { continue; }
                        let seen = Seen { id: &id, revision: t.revision, asks: t.asks, terminal: t.terminal };
                        let step = stream.nudged(seen);
                        prop_assert!(step != Step::Withdraw);
                        if step == Step::Deliver {
                            prop_assert!(t.asks && !t.terminal);
                        }
                        check(step, n, t.revision, t, true, &mut delivering)?;
                    }
                    Op::Gone(n) => {
                        let id = task(n);
                        let t = &mut truth[usize::from(n)];
                        if t.revision == 0 { continue; }
                        t.gone = true;
                        let step = stream.gone(&id);
                        prop_assert!(step != Step::Deliver);
                        check(step, n, t.revision, t, book.knows(&id), &mut delivering)?;
                        prop_assert!(!delivering.contains(&n), "a gone task still delivered");
                    }
                    Op::Reconnect => {
                        stream = GetStream::new();
                        delivering.clear();
                        for t in &mut truth { t.delivered_on_stream = None; }
                        let reread = stream.to_reread(book.created_tasks(MAX_SESSION_TASKS));
                        for id in reread {
                            let n: u8 = id.as_str()[5..].parse().unwrap();
                            let knows = book.knows(&id);
                            let t = &mut truth[usize::from(n)];
                            if t.gone || t.revision == 0 {
                                prop_assert_eq!(stream.missing(&id), Step::None);
                                continue;
                            }
                            let seen = Seen { id: &id, revision: t.revision, asks: t.asks, terminal: t.terminal };
                            let step = stream.saw(seen, knows);
                            // A question still unanswered is asked again on the new stream.
                            prop_assert_eq!(step == Some(Step::Deliver), t.asks && knows);
                            check(step.unwrap_or(Step::None), n, t.revision, t, knows, &mut delivering)?;
                        }
                    }
                }
                // Settled tasks are never delivered again on this stream.
                for (n, t) in truth.iter().enumerate() {
                    if t.gone {
                        prop_assert!(!delivering.contains(&(n as u8)));
                    }
                }
            }
        }
    }

    proptest! {
        /// A session sends a task's progress only when the creating call carried a token, with
        /// that token, the related-task `_meta` and the task's own progress, each value above
        /// the last one sent (states arriving late, twice or out of order change nothing), and
        /// forgets the token of a task whose creation was refused.
        #[test]
        fn progress_goes_out_with_its_token_and_only_increases(
            ops in proptest::collection::vec((0u8..3, 0u8..8, 0usize..4), 1..80),
        ) {
            use crate::{apply, Event, Timestamp};
            let mut book = TaskBook::new();
            // Task 0 and 1 are followed, task 2 is not.
            let mut history: Vec<Vec<crate::Task>> = (0..3)
                .map(|n| {
                    book.created(&task(n));
                    vec![crate::Task::new(task(n), Timestamp::from_unix_millis(0), None, None)]
                })
                .collect();
            book.follow_progress(&task(0), serde_json::json!("tok-0"));
            book.follow_progress(&task(1), serde_json::json!(1));
            let mut sent: Vec<Option<f64>> = vec![None; 3];
            for (n, step, lag) in ops {
                let states = &mut history[usize::from(n)];
                let latest = states.last().unwrap().clone();
                let progress = Progress::new(f64::from(step), Some(8.0)).unwrap();
                let event = Event::Progress { progress, message: None };
                let now = Timestamp::from_unix_millis(states.len() as u64);
                if let Ok(t) = apply(&latest, event, now) {
                    if t.changed {
                        states.push(t.task);
                    }
                }
                // A state as a stream sees it: the latest, or one `lag` changes older.
                let seen = &states[states.len().saturating_sub(1 + lag)];
                let Some(params) = book.progress_update(seen) else {
                    continue;
                };
                prop_assert!(n < 2, "progress of a task nobody asked for");
                let token = if n == 0 { serde_json::json!("tok-0") } else { serde_json::json!(1) };
                prop_assert_eq!(&params["progressToken"], &token);
                prop_assert_eq!(
                    &params["_meta"][crate::protocol::META_RELATED_TASK]["taskId"],
                    &serde_json::json!(task(n).as_str())
                );
                let value = params["progress"].as_f64().unwrap();
                prop_assert_eq!(Some(value), seen.progress().map(|p| p.done()));
                let last = &mut sent[usize::from(n)];
                prop_assert!(last.is_none_or(|last| value > last), "{} after {:?}", value, last);
                *last = Some(value);
            }
            book.forget_created(&task(0));
            let latest = history[0].last().unwrap();
            let ahead = apply(
                latest,
                Event::Progress { progress: Progress::new(100.0, None).unwrap(), message: None },
                Timestamp::from_unix_millis(1_000),
            ).unwrap().task;
            prop_assert_eq!(book.progress_update(&ahead), None);
        }
    }

    #[test]
    fn one_delivery_of_a_task_at_a_time() {
        let mut book = TaskBook::new();
        let id = task(1);
        assert!(book.claim(&id));
        assert!(!book.claim(&id));
        book.release(&id);
        assert!(book.claim(&id));
    }

    #[test]
    fn a_task_is_named_only_once_created() {
        let mut book = TaskBook::new();
        let id = task(1);
        book.named(&id);
        assert!(!book.knows(&id));
        book.created(&id);
        book.named(&id);
        assert!(book.knows(&id) && book.announces(&id));
        book.forget_created(&id);
        assert!(!book.knows(&id) && !book.announces(&id));
    }
}
