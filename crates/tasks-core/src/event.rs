//! Events: everything that can happen to a task.
//!
//! Events are plain data with a stable serde form in JSON (`serde_json`: the completed result is a `RawObject`, which other formats see as serde_json's raw-value wrapper), so that a durable store can log them and a
//! runtime can replay them. The event set is this server's design; input rounds follow SEP-2663
//! "Task Update Requests"
//! (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::JsonRpcError;
use crate::input::InputRequest;
use crate::progress::Progress;
use crate::raw::RawObject;

/// One thing that happened to a task, fed to [`crate::apply`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The work asks the client for input under `key` (moves the task to `input_required`).
    InputRequested {
        /// Server-chosen key, unique for the task's lifetime.
        key: String,
        /// The bare request surfaced in `inputRequests`.
        request: InputRequest,
    },
    /// `tasks/update` delivered responses; only keys currently outstanding are taken, each
    /// checked against the request it answers (all or nothing).
    InputResponsesAccepted {
        /// key → response as the client sent it (bare result object, e.g. an ElicitResult).
        responses: BTreeMap<String, Value>,
    },
    /// The work describes what it is doing (`statusMessage`); the status does not change. Has
    /// no effect while the task is `input_required` (the message then names the outstanding
    /// keys).
    StatusMessage {
        /// The new `statusMessage`.
        message: String,
    },
    /// The work says how far it is (this server's addition, [`Progress`](crate::Progress)), and what
    /// it is doing when `message` is set; the status does not change. The progress is taken
    /// only when it is ahead of the task's ([`Progress::advances`]: it never moves backwards,
    /// not even for a re-run that starts counting again); the message as
    /// [`Event::StatusMessage`] takes it. An event of which neither is taken changes nothing.
    Progress {
        /// How far the work is.
        progress: Progress,
        /// The new `statusMessage`, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The work finished with a result object (a `CallToolResult`, `isError: true` included).
    Completed {
        /// The result object stored and inlined by `tasks/get`, as its compact text
        /// (`RawObject::from(object)`): the form the task keeps, so that the event is cheap to
        /// clone (a commit that loses a race applies it again) and the object is serialized
        /// once. Its `io.modelcontextprotocol/related-task` `_meta` key is dropped when stored.
        result: RawObject,
    },
    /// The work failed with a JSON-RPC error.
    Failed {
        /// The error stored and inlined by `tasks/get`; its message becomes `statusMessage`.
        error: JsonRpcError,
    },
    /// The task was cancelled.
    Cancelled,
    /// An operator cancelled the task (from an operator's console, not the task's caller):
    /// as [`Event::Cancelled`], with `statusMessage` [`MESSAGE_CANCELLED_BY_OPERATOR`](crate::MESSAGE_CANCELLED_BY_OPERATOR).
    /// Who the operator was is for the server's audit log, not for the task's caller.
    CancelledByOperator,
}
