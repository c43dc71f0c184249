//! Speaking MCP to a fixture through `tasks-client`: creating many tasks at once, waiting
//! until each reaches a status, and tallying failures. At most `concurrency` requests are in
//! flight at a time, so the client keeps at most that many connections.

use std::pin::pin;
use std::time::Duration;

use futures_util::{stream, StreamExt as _};
use serde_json::{json, Value};
use tasks_client::{Client, ClientCapability, Execution, InputHandler, SettleOptions, TaskCall};
use tasks_client::{TaskId, TaskState, TaskStatus, Wait};

/// How long a task may take to reach the status waited for.
const LIMIT: Duration = Duration::from_secs(30);

/// Failures of many calls: how many, and the first.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub errors: u64,
    pub first_error: Option<String>,
}

impl Tally {
    pub(crate) fn fail(&mut self, why: impl Into<String>) {
        self.errors += 1;
        self.first_error.get_or_insert_with(|| why.into());
    }

    pub(crate) fn add(&mut self, other: Tally) {
        self.errors += other.errors;
        self.first_error = self.first_error.take().or(other.first_error);
    }

    /// Its errors and first error, for a report line.
    pub(crate) fn failed(&self) -> (u64, Option<&str>) {
        (self.errors, self.first_error.as_deref())
    }

    /// An error when anything failed, prefixed with `what`.
    pub(crate) fn ok(self, what: &str) -> Result<(), String> {
        match self.first_error {
            Some(why) if self.errors > 0 => Err(format!("{what}: {why}")),
            _ => Ok(()),
        }
    }
}

/// Declares form elicitation (which `confirm_delete` requires) and answers nothing: its tasks
/// stay parked in `input_required`.
#[derive(Debug)]
struct Parker;

impl InputHandler for Parker {
    fn capabilities(&self) -> Vec<ClientCapability> {
        vec![ClientCapability::ElicitationForm]
    }
}

/// A client of the fixture at `url`, declaring form elicitation when `eliciting`.
pub(crate) async fn connect(url: &str, eliciting: bool) -> Result<Client, String> {
    let builder = Client::builder(url);
    let builder = if eliciting {
        builder.input_handler(Parker)
    } else {
        builder
    };
    builder.connect().await.map_err(|e| format!("{url}: {e}"))
}

/// Calls `tool` with `arguments`: the task it created (an answer that is not a task fails).
pub(crate) async fn start(
    client: &Client,
    tool: &str,
    arguments: &Value,
) -> Result<TaskCall, String> {
    match client.call_tool(tool, arguments).await {
        Ok(Execution::Task(task)) => Ok(task),
        Ok(_) => Err(format!("{tool}: no task created")),
        Err(error) => Err(format!("{tool}: {error}")),
    }
}

/// Calls `tool` with `arguments` `count` times, `concurrency` at once; the ids of the tasks
/// created, in completion order, and the failures.
pub(crate) async fn create(
    client: &Client,
    tool: &str,
    arguments: &Value,
    count: usize,
    concurrency: usize,
) -> (Vec<TaskId>, Tally) {
    let calls = stream::iter(0..count).map(|_| start(client, tool, arguments));
    let outcomes: Vec<_> = calls.buffer_unordered(concurrency.max(1)).collect().await;
    let (mut ids, mut tally) = (Vec::with_capacity(count), Tally::default());
    for outcome in outcomes {
        match outcome {
            Ok(task) => ids.push(task.id().clone()),
            Err(why) => tally.fail(why),
        }
    }
    (ids, tally)
}

/// How [`wait_all`] and [`completed_task`] watch a task: polling `tasks/get` (at once, then at
/// the interval the server suggests), for at most [`LIMIT`], with no retry of a failed request.
fn polling() -> SettleOptions {
    let options = SettleOptions::default().wait(Wait::Poll);
    options.deadline(LIMIT).retry_for(Duration::ZERO)
}

/// Watches each task of `ids`, `concurrency` at once, until it is in `status`; the last view
/// of one that ends otherwise, fails, or is still short of it after [`LIMIT`] is an error.
pub(crate) async fn wait_all(
    client: &Client,
    ids: &[TaskId],
    status: TaskStatus,
    concurrency: usize,
) -> Tally {
    let watches = stream::iter(ids).map(|id| async move {
        let mut views = pin!(client.task(id.clone()).updates(&polling()));
        let mut last = None;
        while let Some(view) = views.next().await {
            match view.map(|view| view.state.status()) {
                Ok(now) if now == status => return None,
                Ok(now) => last = Some(now.as_str()),
                Err(error) => return Some(format!("task {id}: {error}")),
            }
        }
        let last = last.unwrap_or("unseen");
        Some(format!("task {id} {last}, not {}", status.as_str()))
    });
    let failures: Vec<_> = watches.buffer_unordered(concurrency.max(1)).collect().await;
    let mut tally = Tally::default();
    failures
        .into_iter()
        .flatten()
        .for_each(|why| tally.fail(why));
    tally
}

/// Creates one `slow_compute` task with `seconds: 0` at `url` and waits until it completes:
/// its id, and the serialized size of its stored `result` (the payload).
pub(crate) async fn completed_task(url: &str) -> Result<(String, usize), String> {
    let client = connect(url, false).await?;
    let task = start(&client, "slow_compute", &json!({"seconds": 0})).await?;
    let id = task.id().to_string();
    let last = task.updates(&polling()).collect::<Vec<_>>().await.pop();
    let view = last
        .ok_or("no view")?
        .map_err(|e| format!("task {id}: {e}"))?;
    match view.state {
        TaskState::Completed { result } => Ok((id, result.as_str().len())),
        state => Err(format!("task {id} {}", state.status().as_str())),
    }
}
