//! Wire projections of a [`Task`].
//!
//! | projection | used for | `resultType` | payload |
//! |---|---|---|---|
//! | [`creation`] | `CreateTaskResult` (flat `Result & Task`) | `"task"` | none |
//! | [`detailed`] | `tasks/get` result (`DetailedTask`) | `"complete"` | exactly the status's one |
//! | [`notification`] | `notifications/tasks` params | absent | exactly the status's one |
//! | [`ack`] | `tasks/update` and `tasks/cancel` results | `"complete"` | none |
//!
//! Base fields: `taskId`, `status`, `statusMessage?`, `createdAt`, `lastUpdatedAt`, `ttlMs`
//! (always present, `null` when unlimited), `pollIntervalMs?` (integer milliseconds). Sources:
//! SEP-2663 "Task Creation", "Task Polling", "Task Status Notifications"; runner checks
//! `sep-2663-result-type-task-on-create`, `tasks-wire-field-renames`,
//! `sep-2663-cancel-ack-empty-result`.
//!
//! Each projection may carry a result `_meta` object (the HTTP layer passes the serverInfo
//! `_meta`, prepared once as a [`ResultMeta`] so that its text is written unchanged); the
//! notification's `_meta` always holds `io.modelcontextprotocol/subscriptionId`. A task whose
//! work reported progress carries it in the `_meta` of its [`detailed`] and [`notification`]
//! views under [`META_PROGRESS`] (this server's experimental key, [`crate::progress`]).
//! No projection ever writes `requestState`, `ttl`, `pollInterval`, a nested `task` or
//! `io.modelcontextprotocol/related-task`.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::progress::{Progress, META_PROGRESS};
use crate::protocol::META_SUBSCRIPTION_ID;
use crate::raw::RawObject;
use crate::task::{Task, TaskState};
use crate::JsonObject;

/// A result `_meta` object that many answers carry unchanged (the server's
/// `{"io.modelcontextprotocol/serverInfo": {"name": …, "version": …}}`), with its compact text
/// written once: a projection given it with [`TaskView::with_result_meta`] copies the text
/// instead of serializing the object again. Dereferences to the object.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultMeta {
    object: JsonObject,
    text: RawObject,
}

impl ResultMeta {
    /// Prepares `object`.
    pub fn new(object: JsonObject) -> Self {
        let text = RawObject::from(&object);
        ResultMeta { object, text }
    }

    /// The object.
    pub fn object(&self) -> &JsonObject {
        &self.object
    }

    /// Its compact text, e.g. `{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}}`.
    pub fn text(&self) -> &RawObject {
        &self.text
    }
}

impl std::ops::Deref for ResultMeta {
    type Target = JsonObject;

    fn deref(&self) -> &JsonObject {
        &self.object
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Creation,
    Detailed,
    Notification,
}

/// A borrowed, serializable wire view of a task. Build one with [`creation`], [`detailed`] or
/// [`notification`]; serialize it with serde (e.g. `serde_json::to_vec`).
#[derive(Debug, Clone, Copy)]
pub struct TaskView<'a> {
    task: &'a Task,
    kind: Kind,
    meta: Option<&'a JsonObject>,
    /// The text of `meta`, when prepared ([`TaskView::with_result_meta`]).
    meta_text: Option<&'a RawObject>,
    subscription_id: Option<&'a Value>,
}

impl<'a> TaskView<'a> {
    /// Adds a result `_meta` object (e.g. `{"io.modelcontextprotocol/serverInfo": …}`).
    pub fn with_meta(mut self, meta: &'a JsonObject) -> Self {
        self.meta = Some(meta);
        self.meta_text = None;
        self
    }

    /// Adds a prepared result `_meta` ([`ResultMeta`]): the same answer as
    /// [`TaskView::with_meta`] with its object, written from its text.
    pub fn with_result_meta(mut self, meta: &'a ResultMeta) -> Self {
        self.meta = Some(&meta.object);
        self.meta_text = Some(&meta.text);
        self
    }

    /// Renders the view as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The `CreateTaskResult`: `resultType: "task"` and the base task fields, flat.
pub fn creation(task: &Task) -> TaskView<'_> {
    TaskView {
        task,
        kind: Kind::Creation,
        meta: None,
        meta_text: None,
        subscription_id: None,
    }
}

/// The `tasks/get` result: `resultType: "complete"`, base fields and the status's payload.
pub fn detailed(task: &Task) -> TaskView<'_> {
    TaskView {
        task,
        kind: Kind::Detailed,
        meta: None,
        meta_text: None,
        subscription_id: None,
    }
}

/// The `notifications/tasks` params: the `DetailedTask` fields without `resultType`, with
/// `_meta["io.modelcontextprotocol/subscriptionId"]` set to the id of the
/// `subscriptions/listen` request (kept with its JSON type).
pub fn notification<'a>(task: &'a Task, subscription_id: &'a Value) -> TaskView<'a> {
    TaskView {
        task,
        kind: Kind::Notification,
        meta: None,
        meta_text: None,
        subscription_id: Some(subscription_id),
    }
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel`: `{"resultType":"complete"}`
/// plus the optional result `_meta`.
pub fn ack(meta: Option<&JsonObject>) -> Value {
    let mut object = JsonObject::new();
    object.insert("resultType".into(), Value::from("complete"));
    if let Some(meta) = meta {
        object.insert("_meta".into(), Value::Object(meta.clone()));
    }
    Value::Object(object)
}

/// A `_meta` object made of the given one and the keys the projection sets itself: the
/// task's progress ([`META_PROGRESS`]) and the subscription id, each replacing an entry of
/// the given object under its key.
struct MetaWithKeys<'a> {
    meta: Option<&'a JsonObject>,
    progress: Option<Progress>,
    subscription_id: Option<&'a Value>,
}

impl Serialize for MetaWithKeys<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.meta.into_iter().flatten() {
            let replaced = (key == META_SUBSCRIPTION_ID && self.subscription_id.is_some())
                || (key == META_PROGRESS && self.progress.is_some());
            if !replaced {
                map.serialize_entry(key, value)?;
            }
        }
        if let Some(progress) = &self.progress {
            map.serialize_entry(META_PROGRESS, progress)?;
        }
        if let Some(subscription_id) = self.subscription_id {
            map.serialize_entry(META_SUBSCRIPTION_ID, subscription_id)?;
        }
        map.end()
    }
}

impl Serialize for TaskView<'_> {
    #[inline]
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let task = self.task;
        let mut map = serializer.serialize_map(None)?;
        match self.kind {
            Kind::Creation => map.serialize_entry("resultType", "task")?,
            Kind::Detailed => map.serialize_entry("resultType", "complete")?,
            Kind::Notification => {}
        }
        map.serialize_entry("taskId", task.id())?;
        map.serialize_entry("status", task.status().as_str())?;
        if let Some(message) = task.status_message() {
            map.serialize_entry("statusMessage", message)?;
        }
        map.serialize_entry("createdAt", &task.created_at())?;
        map.serialize_entry("lastUpdatedAt", &task.last_updated_at())?;
        map.serialize_entry("ttlMs", &task.ttl_ms())?;
        if let Some(interval) = task.poll_interval_ms() {
            map.serialize_entry("pollIntervalMs", &interval.get())?;
        }
        if self.kind != Kind::Creation {
            match task.state() {
                TaskState::Working | TaskState::Cancelled => {}
                TaskState::InputRequired { input_requests } => {
                    map.serialize_entry("inputRequests", input_requests.as_map())?
                }
                TaskState::Completed { result } => map.serialize_entry("result", result)?,
                TaskState::Failed { error } => map.serialize_entry("error", error)?,
            }
        }
        // The work's progress, this server's experimental key (crate::progress), on the views
        // that show a task's state (a `CreateTaskResult` shows a task just created).
        let progress = task.progress().filter(|_| self.kind != Kind::Creation);
        match (self.subscription_id, progress) {
            (None, None) => match (self.meta_text, self.meta) {
                (Some(text), _) => map.serialize_entry("_meta", text)?,
                (None, Some(meta)) => map.serialize_entry("_meta", meta)?,
                (None, None) => {}
            },
            (subscription_id, progress) => map.serialize_entry(
                "_meta",
                &MetaWithKeys {
                    meta: self.meta,
                    progress,
                    subscription_id,
                },
            )?,
        }
        map.end()
    }
}
