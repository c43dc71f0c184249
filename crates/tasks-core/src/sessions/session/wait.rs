//! A 2025-11-25 `tasks/result` waiting for its task: when it answers, when it delivers the
//! task's input requests, and what it does when a delivery ends.
//!
//! MCP 2025-11-25 tasks, "Result Retrieval" and "Input Required Status"
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks>):
//! `tasks/result` blocks until the task is terminal, then answers what the underlying call
//! would have ([`payload`]); while the task waits for input, its input requests go out on the
//! request's stream. The rules, this server's choices where the spec is silent:
//!
//! * A state that is terminal is answered at once ([`WaitStep::Answer`]): the result, or the
//!   error (a cancelled task: -32602 `Task was cancelled: it has no result`).
//! * A read that fails ends the wait with that error as the answer: a task gone (its TTL ran
//!   out) is -32602 `Unknown or inaccessible taskId`, as `tasks/get` answers; a store that is
//!   unavailable is its -32603 (the driver counts that refusal once it is sent).
//! * Any other state is delivered ([`WaitStep::Deliver`]; a state not asking ends its delivery
//!   at once). While a delivery runs, the driver feeds each change it sees
//!   ([`ResultWait::changed`]): one no longer asking (or a failed read) withdraws the delivery.
//! * When the delivery ends ([`ResultWait::delivered`]): answers committed to a state that
//!   asked mean the task is read afresh ([`WaitStep::Read`]), since a change seen meanwhile
//!   may predate them and nothing is asked twice; a delivery that failed ends the wait with its
//!   error; the request stopped (its stream closed, a cancellation) ends it without an answer
//!   ([`WaitStep::End`]); otherwise the newest change seen meanwhile is taken, or the wait
//!   awaits the next change ([`WaitStep::Await`]), and also, when another stream of the
//!   session held the delivery, that stream letting it go ([`ResultWait::released`]).
//!
//! Closing the stream stops only the wait: the task goes on.

use std::sync::Arc;

use serde_json::Value;

use crate::sessions::tasks::payload;
use crate::{jsonrpc, McpError, Task, TaskState};

/// How a delivery of a task's input requests ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivered {
    /// The answers reached the task (or the task no longer waits for input).
    Done,
    /// Another stream of the session is delivering this task's requests
    /// ([`super::TaskBook::claim`]).
    Busy,
    /// The stream closed (or the request was cancelled) before every answer arrived: the
    /// requests are no longer outstanding on it, and a later delivery sends them again.
    Stopped,
    /// The runtime refused the answers (or could not read the task).
    Failed(McpError),
}

/// What the driver of a `tasks/result` wait does next.
#[derive(Debug, Clone, PartialEq)]
pub enum WaitStep {
    /// Send `frame` (the JSON-RPC response to the request, serialized) and end. `error` is
    /// the error it answers when the wait ended on a failure (a failed read or delivery), which
    /// the driver counts once it is sent; `None` for the task's own payload.
    Answer {
        /// The response, one JSON-RPC message.
        frame: Vec<u8>,
        /// The failure it reports, if any.
        error: Option<McpError>,
    },
    /// Deliver the input requests of this state of the task on the request's stream, feeding
    /// the changes seen meanwhile to [`ResultWait::changed`] while [`ResultWait::follows`],
    /// then the outcome to [`ResultWait::delivered`].
    Deliver(Arc<Task>),
    /// Read the task afresh and feed it to [`ResultWait::seen`].
    Read,
    /// Wait for the task's next change (fed to [`ResultWait::seen`]); with `or_released`,
    /// also for another stream of the session ending its delivery ([`ResultWait::released`]).
    /// The request stopping meanwhile ends the wait without an answer.
    Await {
        /// Whether another stream held the delivery.
        or_released: bool,
    },
    /// End the stream without an answer: the request stopped.
    End,
}

/// One `tasks/result` waiting for its task: the decisions of its driver.
#[derive(Debug)]
pub struct ResultWait {
    /// The request's JSON-RPC id.
    id: Value,
    /// The state the running delivery was started for.
    delivering: Option<Arc<Task>>,
    /// The newest state (or failed read) seen while the delivery ran.
    newer: Option<Result<Arc<Task>, McpError>>,
}

/// Whether `task` waits for input.
fn asks(task: &Task) -> bool {
    matches!(task.state(), TaskState::InputRequired { .. })
}

impl ResultWait {
    /// The wait of request `id`.
    pub fn new(id: Value) -> Self {
        ResultWait {
            id,
            delivering: None,
            newer: None,
        }
    }

    fn fail(&self, error: McpError) -> WaitStep {
        WaitStep::Answer {
            frame: jsonrpc::error(Some(&self.id), &error.to_error_object()),
            error: Some(error),
        }
    }

    /// A read of the task (the first, a fresh one, or its next change): the answer when it
    /// is terminal or the read failed, else its delivery.
    pub fn seen(&mut self, read: Result<Arc<Task>, McpError>) -> WaitStep {
        self.newer = None;
        let task = match read {
            Ok(task) => task,
            Err(error) => return self.fail(error),
        };
        match payload(&task) {
            Some(Ok(result)) => WaitStep::Answer {
                frame: jsonrpc::result(&self.id, &result),
                error: None,
            },
            Some(Err(error)) => WaitStep::Answer {
                frame: jsonrpc::error(Some(&self.id), &error),
                error: None,
            },
            None => {
                self.delivering = Some(task.clone());
                WaitStep::Deliver(task)
            }
        }
    }

    /// Whether the driver still follows the task's changes while the delivery runs: until a
    /// read failed.
    pub fn follows(&self) -> bool {
        !matches!(self.newer, Some(Err(_)))
    }

    /// A change of the task (or a failed read) arrived while the delivery runs: `true` when
    /// the delivery must be withdrawn (the task no longer asks, or is gone).
    pub fn changed(&mut self, read: Result<Arc<Task>, McpError>) -> bool {
        let withdraw = read.as_ref().map_or(true, |task| !asks(task));
        self.newer = Some(read);
        withdraw
    }

    /// The delivery ended with `delivered`; `stopped` tells whether the request itself
    /// stopped (its stream closed, a cancellation, the session ended), which ends a stopped
    /// delivery's wait without an answer.
    pub fn delivered(&mut self, delivered: Delivered, stopped: bool) -> WaitStep {
        let asked = self.delivering.take().is_some_and(|task| asks(&task));
        let newer = self.newer.take();
        let answered = match delivered {
            Delivered::Done => asked,
            Delivered::Busy => false,
            Delivered::Stopped if stopped => return WaitStep::End,
            Delivered::Stopped => false,
            Delivered::Failed(error) => return self.fail(error),
        };
        match newer {
            _ if answered => WaitStep::Read,
            Some(newer) => self.seen(newer),
            None => WaitStep::Await {
                or_released: matches!(delivered, Delivered::Busy),
            },
        }
    }

    /// The stream that held the delivery let it go (it closed, or was answered): the task is
    /// read afresh, and this wait delivers what is still outstanding.
    pub fn released(&self) -> WaitStep {
        WaitStep::Read
    }
}
