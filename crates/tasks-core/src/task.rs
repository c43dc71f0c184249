//! The task model: identity, timing, status and the status-specific payload.
//!
//! Source: SEP-2663 "Tasks", "Task Status" (statuses, transitions and the status-specific
//! payloads) and "Task Polling"
//! (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).
//! The `statusMessage` values are this server's choice.

use std::collections::BTreeMap;
use std::num::NonZeroU64;

use serde::{Deserialize, Serialize};

use crate::error::JsonRpcError;
use crate::id::TaskId;
use crate::input::InputRequest;
use crate::input::InputResponse;
use crate::origin::TaskOrigin;
use crate::progress::Progress;
use crate::raw::RawObject;
use crate::time::Timestamp;

/// `statusMessage` at creation.
pub const MESSAGE_ACCEPTED: &str = "Task accepted";
/// `statusMessage` when every outstanding input was answered and the task works again (until
/// the tool sets its own).
pub const MESSAGE_INPUT_RECEIVED: &str = "Input received";
/// Prefix of the `statusMessage` of an `input_required` task, followed by the outstanding
/// keys, comma-separated in key order: `Waiting for input: confirm-delete`.
pub const MESSAGE_WAITING_PREFIX: &str = "Waiting for input: ";
/// `statusMessage` of a cancelled task.
pub const MESSAGE_CANCELLED: &str = "Cancellation requested";

/// `statusMessage` of a task an operator cancelled ([`crate::Event::CancelledByOperator`]).
pub const MESSAGE_CANCELLED_BY_OPERATOR: &str = "Cancelled by an operator";
/// `error.message` (-32603) and `statusMessage` of a task whose stored state could not be read
/// back: its store quarantined the row and answers this `failed` task in its place
/// ([`Task::unreadable`]).
pub const MESSAGE_UNREADABLE: &str = "The stored state of this task could not be read";

/// The five task statuses. `completed`, `failed` and `cancelled` are terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The server waits for client input (`inputRequests`, answered by `tasks/update`).
    InputRequired,
    /// Finished with a result (tool errors with `isError: true` included).
    Completed,
    /// Finished with a JSON-RPC error.
    Failed,
    /// Cancelled by `tasks/cancel` (or by the server).
    Cancelled,
}

impl TaskStatus {
    /// Every status, in lifecycle order.
    pub const ALL: [TaskStatus; 5] = [
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ];

    /// The wire name (`"working"`, `"input_required"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether no further event can change a task in this status.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// The outstanding input requests of an `input_required` task: key → request, never empty.
///
/// Keys are server-chosen and unique for the lifetime of the task (SEP-2663 "Task Update
/// Requests"). The map is ordered by key so every projection is deterministic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "BTreeMap<String, InputRequest>")]
pub struct InputRequests(BTreeMap<String, InputRequest>);

impl InputRequests {
    /// A map with exactly one entry.
    pub fn single(key: String, request: InputRequest) -> Self {
        InputRequests(BTreeMap::from([(key, request)]))
    }

    /// `Waiting for input: <key>, <key>…`, the `statusMessage` while these are outstanding.
    pub fn waiting_message(&self) -> String {
        let keys: Vec<&str> = self.0.keys().map(String::as_str).collect();
        format!("{MESSAGE_WAITING_PREFIX}{}", keys.join(", "))
    }

    /// The requests, by key.
    pub fn as_map(&self) -> &BTreeMap<String, InputRequest> {
        &self.0
    }

    /// The request under `key`, if outstanding.
    pub fn get(&self, key: &str) -> Option<&InputRequest> {
        self.0.get(key)
    }

    pub(crate) fn insert(&mut self, key: String, request: InputRequest) {
        self.0.insert(key, request);
    }

    /// Removes `key`; returns the remaining map, or `None` when it would become empty.
    pub(crate) fn without(mut self, key: &str) -> (Option<Self>, Option<InputRequest>) {
        let removed = self.0.remove(key);
        if self.0.is_empty() {
            (None, removed)
        } else {
            (Some(self), removed)
        }
    }
}

impl TryFrom<BTreeMap<String, InputRequest>> for InputRequests {
    type Error = &'static str;

    fn try_from(map: BTreeMap<String, InputRequest>) -> Result<Self, Self::Error> {
        if map.is_empty() {
            Err("inputRequests must not be empty")
        } else if map.keys().any(String::is_empty) {
            Err("inputRequests keys must not be empty")
        } else {
            Ok(InputRequests(map))
        }
    }
}

/// The status together with the payload only that status may carry (the derived shapes
/// `WorkingTask` … `CancelledTask` of SEP-2663 "Task Status").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TaskState {
    /// No payload.
    Working,
    /// `inputRequests`, non-empty.
    InputRequired {
        /// Outstanding requests.
        #[serde(rename = "inputRequests")]
        input_requests: InputRequests,
    },
    /// `result`: the JSON result object of the underlying request (a `CallToolResult` today),
    /// kept as its compact text ([`RawObject`]).
    Completed {
        /// The stored result object.
        result: RawObject,
    },
    /// `error`: the JSON-RPC error the work failed with (boxed: the rarer, larger payload
    /// stays out of every task's inline size).
    Failed {
        /// The stored error.
        error: Box<JsonRpcError>,
    },
    /// No payload.
    Cancelled,
}

impl TaskState {
    /// The status of this state.
    pub fn status(&self) -> TaskStatus {
        match self {
            TaskState::Working => TaskStatus::Working,
            TaskState::InputRequired { .. } => TaskStatus::InputRequired,
            TaskState::Completed { .. } => TaskStatus::Completed,
            TaskState::Failed { .. } => TaskStatus::Failed,
            TaskState::Cancelled => TaskStatus::Cancelled,
        }
    }
}

/// A task: the durable state machine behind a `CreateTaskResult`.
///
/// Fields are private: a task changes only through [`crate::apply`], which keeps the invariants:
/// the payload matches the status, terminal tasks never change, the revision increases by one
/// on every real change, `lastUpdatedAt >= createdAt`, and an answered input key never returns.
///
/// The serde form is the *storage* form (for durable stores); the wire forms are in
/// [`crate::wire`] (`creation`, `detailed`). Reading a stored task checks the invariants the reducer keeps
/// ([`InvalidTask`]), so a damaged or hand-edited row is refused instead of trusted (and its
/// store then quarantines it, answering [`Task::unreadable`] in its place).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "StoredTask")]
pub struct Task {
    pub(crate) task_id: TaskId,
    pub(crate) created_at: Timestamp,
    pub(crate) last_updated_at: Timestamp,
    pub(crate) ttl_ms: Ttl,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) poll_interval_ms: Option<NonZeroU64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) status_message: Option<Box<str>>,
    pub(crate) revision: u64,
    #[serde(flatten)]
    pub(crate) state: TaskState,
    /// The answered input keys, the progress the work reported and the task's origin
    /// (serialized as the members `answered`, `progress` and `origin`, each only when present).
    #[serde(flatten)]
    pub(crate) extras: Extras,
}

/// A time to live in milliseconds, or unlimited, in 8 bytes (so that an `Arc<Task>` fits a
/// 128-byte allocation): `u64::MAX` milliseconds, 585 million years, stands for unlimited,
/// and reads back as `None`. Serialized as a number or `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ttl(u64);

impl Ttl {
    const UNLIMITED: u64 = u64::MAX;

    pub(crate) fn new(ttl_ms: Option<u64>) -> Self {
        Ttl(ttl_ms.unwrap_or(Self::UNLIMITED))
    }

    pub(crate) fn get(self) -> Option<u64> {
        (self.0 != Self::UNLIMITED).then_some(self.0)
    }
}

impl Serialize for Ttl {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Ttl {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<u64>::deserialize(deserializer).map(Ttl::new)
    }
}

/// What only some tasks carry, boxed together while any of it is present, so that the many
/// tasks with none of it (every task that never asks for input or reports progress) carry one
/// pointer-sized `None`, and an `Arc<Task>` still fits a 128-byte allocation:
///
/// * the keys whose response was delivered, with the request they answered and the accepted
///   answer. Kept while the task can still ask for input, so a key is never reused and a
///   re-run of the work can be given the answers already accepted instead of asking again;
///   dropped once terminal;
/// * the progress the work reported last ([`Event::Progress`](crate::Event::Progress)), kept
///   once terminal (where the work stopped);
/// * the task design that created the task ([`TaskOrigin`]), when not the default: the few
///   2025-11-25 tasks, kept for the task's life.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Extras(Option<Box<ExtrasInner>>);

#[derive(Debug, Clone, Default, PartialEq)]
struct ExtrasInner {
    answered: BTreeMap<String, Answered>,
    progress: Option<Progress>,
    origin: TaskOrigin,
}

impl Extras {
    fn new(
        answered: BTreeMap<String, Answered>,
        progress: Option<Progress>,
        origin: TaskOrigin,
    ) -> Self {
        let inner = ExtrasInner {
            answered,
            progress,
            origin,
        };
        Extras((inner != ExtrasInner::default()).then(|| Box::new(inner)))
    }
    pub(crate) fn get(&self, key: &str) -> Option<&Answered> {
        self.0.as_ref()?.answered.get(key)
    }
    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .flat_map(|inner| inner.answered.keys().map(String::as_str))
    }
    pub(crate) fn insert(&mut self, key: String, answered: Answered) {
        self.0
            .get_or_insert_with(Default::default)
            .answered
            .insert(key, answered);
    }
    /// Drops the answered keys (the progress and the origin stay).
    pub(crate) fn clear_answers(&mut self) {
        if let Some(inner) = self.0.take() {
            *self = Extras::new(BTreeMap::new(), inner.progress, inner.origin);
        }
    }
    pub(crate) fn origin(&self) -> TaskOrigin {
        self.0
            .as_ref()
            .map_or(TaskOrigin::Extension, |inner| inner.origin)
    }
    fn set_origin(&mut self, origin: TaskOrigin) {
        if let Some(inner) = self.0.take() {
            *self = Extras::new(inner.answered, inner.progress, origin);
        } else {
            *self = Extras::new(BTreeMap::new(), None, origin);
        }
    }
    pub(crate) fn progress(&self) -> Option<&Progress> {
        self.0.as_ref()?.progress.as_ref()
    }
    pub(crate) fn set_progress(&mut self, progress: Progress) {
        self.0.get_or_insert_with(Default::default).progress = Some(progress);
    }
}

impl Serialize for Extras {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(None)?;
        if let Some(inner) = &self.0 {
            if !inner.answered.is_empty() {
                map.serialize_entry("answered", &inner.answered)?;
            }
            if let Some(progress) = &inner.progress {
                map.serialize_entry("progress", progress)?;
            }
            if !inner.origin.is_extension() {
                map.serialize_entry("origin", &inner.origin)?;
            }
        }
        map.end()
    }
}

impl Task {
    /// A new `working` task with `statusMessage` `"Task accepted"` and revision 1.
    ///
    /// `ttl_ms`: time to live from `created_at` in milliseconds, `None` for unlimited (wire
    /// `null`; `Some(u64::MAX)` is unlimited as well and reads back as `None`).
    /// `poll_interval_ms`: suggested polling interval in milliseconds.
    pub fn new(
        task_id: TaskId,
        created_at: Timestamp,
        ttl_ms: Option<u64>,
        poll_interval_ms: Option<NonZeroU64>,
    ) -> Self {
        Task {
            task_id,
            created_at,
            last_updated_at: created_at,
            ttl_ms: Ttl::new(ttl_ms),
            poll_interval_ms,
            status_message: Some(MESSAGE_ACCEPTED.into()),
            revision: 1,
            state: TaskState::Working,
            extras: Extras::default(),
        }
    }

    /// The task id.
    pub fn id(&self) -> &TaskId {
        &self.task_id
    }
    /// The task design that created the task (see [`TaskOrigin`]).
    pub fn origin(&self) -> TaskOrigin {
        self.extras.origin()
    }
    /// When the task was created.
    pub fn created_at(&self) -> Timestamp {
        self.created_at
    }
    /// When the task last changed.
    pub fn last_updated_at(&self) -> Timestamp {
        self.last_updated_at
    }
    /// Time to live from creation in milliseconds; `None` means unlimited.
    pub fn ttl_ms(&self) -> Option<u64> {
        self.ttl_ms.get()
    }
    /// Suggested polling interval in milliseconds.
    pub fn poll_interval_ms(&self) -> Option<NonZeroU64> {
        self.poll_interval_ms
    }
    /// The status message, if any.
    pub fn status_message(&self) -> Option<&str> {
        self.status_message.as_deref()
    }
    /// The compare-and-set revision: 1 at creation, +1 on every real change.
    pub fn revision(&self) -> u64 {
        self.revision
    }
    /// The status and its payload.
    pub fn state(&self) -> &TaskState {
        &self.state
    }
    /// The status.
    pub fn status(&self) -> TaskStatus {
        self.state.status()
    }
    /// Whether the task is terminal.
    pub fn is_terminal(&self) -> bool {
        self.status().is_terminal()
    }
    /// Keys already answered (empty once terminal).
    pub fn answered_keys(&self) -> impl Iterator<Item = &str> {
        self.extras.keys()
    }
    /// How far the work is, as it last reported ([`crate::Event::Progress`]): never behind
    /// an earlier value of the same task, and kept once the task is terminal.
    pub fn progress(&self) -> Option<Progress> {
        self.extras.progress().copied()
    }
    /// The accepted answer to `key`, typed, while the task is not terminal: what a re-run of
    /// the work gets instead of asking the client again.
    pub fn answer(&self, key: &str) -> Option<InputResponse> {
        let answered = self.extras.get(key)?;
        answered.request.check_response(&answered.response).ok()
    }
    /// The stored answer to `key` with the request it answered, while the task is not
    /// terminal (a re-run compares the request it asks again with the one answered).
    pub fn answered(&self, key: &str) -> Option<&Answered> {
        self.extras.get(key)
    }
    /// The instant after which the task reads as unknown: `createdAt + ttlMs`, or `None`.
    pub fn expires_at(&self) -> Option<Timestamp> {
        self.ttl_ms().map(|ttl| self.created_at.plus_millis(ttl))
    }
    /// Whether the task has expired at `now` (`now >= createdAt + ttlMs`).
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.expires_at().is_some_and(|at| now >= at)
    }

    /// The `failed` task a store keeps in place of a stored task it could not read back (a
    /// quarantined row: the poison-message rule, one bad row fails only its own task):
    /// error -32603 [`MESSAGE_UNREADABLE`], the same `statusMessage`, and what the store still
    /// knows from the row's other columns. `ttl_ms`: milliseconds from `created_at`, `None`
    /// for unlimited. `revision`: the revision to store it under (one past the row's, so every
    /// reader sees a change); at least 1. `lastUpdatedAt` is `now`, or `created_at` when later.
    pub fn unreadable(
        task_id: TaskId,
        created_at: Timestamp,
        ttl_ms: Option<u64>,
        revision: u64,
        now: Timestamp,
    ) -> Self {
        Task {
            task_id,
            created_at,
            last_updated_at: now.max(created_at),
            ttl_ms: Ttl::new(ttl_ms),
            poll_interval_ms: None,
            status_message: Some(MESSAGE_UNREADABLE.into()),
            revision: revision.max(1),
            state: TaskState::Failed {
                error: Box::new(JsonRpcError::internal(MESSAGE_UNREADABLE)),
            },
            extras: Extras::default(),
        }
    }
}

/// An answered input key: the request it answered and the accepted answer (its normalized
/// wire form, [`InputResponse::to_value`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answered {
    /// The request the answer answered.
    pub request: InputRequest,
    /// The accepted answer.
    pub response: serde_json::Value,
}

/// A task as created: revision 1, `working`, `statusMessage` `Task accepted`. The only thing
/// a store creates (a change to a stored task is a [`crate::TaskUpdate`] from the reducer).
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask(Task);

impl NewTask {
    /// A new task; the arguments as for [`Task::new`].
    pub fn new(
        task_id: TaskId,
        created_at: Timestamp,
        ttl_ms: Option<u64>,
        poll_interval_ms: Option<NonZeroU64>,
    ) -> Self {
        NewTask(Task::new(task_id, created_at, ttl_ms, poll_interval_ms))
    }

    /// The same task, created by the task design `origin` (the default is
    /// [`TaskOrigin::Extension`]).
    pub fn with_origin(mut self, origin: TaskOrigin) -> Self {
        // A new task's extras are empty: the default origin leaves them so, with no work.
        if origin != self.0.extras.origin() {
            self.0.extras.set_origin(origin);
        }
        self
    }

    /// The task.
    pub fn task(&self) -> &Task {
        &self.0
    }

    /// The task, owned.
    pub fn into_task(self) -> Task {
        self.0
    }
}

/// A stored task that breaks an invariant of [`Task`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidTask {
    /// The revision is 0 (a task starts at 1).
    #[error("a task's revision starts at 1")]
    Revision,
    /// `lastUpdatedAt` is before `createdAt`.
    #[error("lastUpdatedAt is before createdAt")]
    Timestamps,
    /// A terminal task still lists answered input keys.
    #[error("a terminal task keeps no answered keys")]
    TerminalAnswers,
    /// An outstanding input key was already answered.
    #[error("an outstanding input key was already answered")]
    KeyReused,
}

/// The storage form as read, before its invariants are checked.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredTask {
    task_id: TaskId,
    created_at: Timestamp,
    last_updated_at: Timestamp,
    ttl_ms: Option<u64>,
    #[serde(default)]
    poll_interval_ms: Option<NonZeroU64>,
    #[serde(default)]
    status_message: Option<String>,
    revision: u64,
    #[serde(flatten)]
    state: TaskState,
    #[serde(default)]
    answered: BTreeMap<String, Answered>,
    /// Absent in every task a build without progress stored: such a task reads as one whose
    /// work reported none.
    #[serde(default)]
    progress: Option<Progress>,
    /// Absent in every task of this extension, and in every task stored before origins were
    /// recorded (a store's migration marks the 2025 ones it can tell).
    #[serde(default)]
    origin: TaskOrigin,
}

impl TryFrom<StoredTask> for Task {
    type Error = InvalidTask;

    fn try_from(stored: StoredTask) -> Result<Self, Self::Error> {
        if stored.revision == 0 {
            return Err(InvalidTask::Revision);
        }
        if stored.last_updated_at < stored.created_at {
            return Err(InvalidTask::Timestamps);
        }
        if stored.state.status().is_terminal() && !stored.answered.is_empty() {
            return Err(InvalidTask::TerminalAnswers);
        }
        if let TaskState::InputRequired { input_requests } = &stored.state {
            if input_requests
                .as_map()
                .keys()
                .any(|key| stored.answered.contains_key(key))
            {
                return Err(InvalidTask::KeyReused);
            }
        }
        Ok(Task {
            task_id: stored.task_id,
            created_at: stored.created_at,
            last_updated_at: stored.last_updated_at,
            ttl_ms: Ttl::new(stored.ttl_ms),
            poll_interval_ms: stored.poll_interval_ms,
            status_message: stored.status_message.map(Into::into),
            revision: stored.revision,
            state: stored.state,
            extras: Extras::new(stored.answered, stored.progress, stored.origin),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arc_of_a_task_fits_a_128_byte_allocation() {
        // 16 bytes of reference counts + the task: allocators round 136 up to 144 or 160.
        assert!(
            std::mem::size_of::<Task>() <= 112,
            "{}",
            std::mem::size_of::<Task>()
        );
    }

    #[test]
    fn a_2025_origin_is_stored_kept_by_every_change_and_read_back() {
        let id = TaskId::parse("t").unwrap();
        let at = Timestamp::from_unix_millis(1_000);
        let plain = NewTask::new(id.clone(), at, None, None).into_task();
        assert_eq!(plain.origin(), TaskOrigin::Extension);
        let stored = serde_json::to_value(&plain).unwrap();
        assert!(stored.get("origin").is_none(), "{stored}");
        let legacy = NewTask::new(id, at, None, None)
            .with_origin(TaskOrigin::Experimental2025)
            .into_task();
        let stored = serde_json::to_value(&legacy).unwrap();
        assert_eq!(stored["origin"], "2025-11-25");
        let read: Task = serde_json::from_value(stored).unwrap();
        assert_eq!(read, legacy);
        // Progress, an answer and the end of the task keep it.
        let later = Timestamp::from_unix_millis(2_000);
        let progress = crate::Event::Progress {
            progress: Progress::new(1.0, None).unwrap(),
            message: None,
        };
        let step = crate::apply(&legacy, progress, later).unwrap().task;
        let done = crate::apply(&step, crate::Event::Cancelled, later)
            .unwrap()
            .task;
        assert!(done.is_terminal());
        assert_eq!(done.origin(), TaskOrigin::Experimental2025);
        let read: Task = serde_json::from_value(serde_json::to_value(&done).unwrap()).unwrap();
        assert_eq!(read.origin(), TaskOrigin::Experimental2025);
    }

    #[test]
    fn an_unlimited_ttl_is_null_and_a_limit_is_kept() {
        let id = TaskId::parse("t").unwrap();
        let at = Timestamp::from_unix_millis(1_000);
        for (ttl, wire) in [
            (None, serde_json::Value::Null),
            (Some(0), 0.into()),
            (Some(60_000), 60_000.into()),
            (Some(u64::MAX - 1), (u64::MAX - 1).into()),
        ] {
            let task = Task::new(id.clone(), at, ttl, None);
            assert_eq!(task.ttl_ms(), ttl);
            let stored = serde_json::to_value(&task).unwrap();
            assert_eq!(stored["ttlMs"], wire);
            let read: Task = serde_json::from_value(stored).unwrap();
            assert_eq!(read.ttl_ms(), ttl);
        }
        let unlimited = Task::new(id, at, Some(u64::MAX), None);
        assert_eq!(unlimited.ttl_ms(), None);
        assert_eq!(unlimited.expires_at(), None);
    }
}
