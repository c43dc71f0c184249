//! Speaking MCP to a fixture through `tasks-client`: creating many tasks at once, waiting
//! until each reaches a status, and tallying failures. At most `concurrency` requests are in
//! flight at a time, so the client keeps at most that many connections.

use std::time::Duration;

use futures_util::{stream, StreamExt as _};
use serde_json::{json, Value};
use tasks_client::{
    Client, ClientCapability, Execution, InputHandler, TaskId, TaskState, TaskStatus,
};

/// Rounds of polling before a task short of its status counts as an error, and the pause
/// between rounds.
const ROUNDS: usize = 50;
const PAUSE: Duration = Duration::from_millis(100);

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

/// Calls `tool` with `arguments` `count` times, `concurrency` at once; the ids of the tasks
/// created, in completion order, and the failures (an answer that is not a task is one).
pub(crate) async fn create(
    client: &Client,
    tool: &str,
    arguments: &Value,
    count: usize,
    concurrency: usize,
) -> (Vec<TaskId>, Tally) {
    let calls = stream::iter(0..count).map(|_| client.call_tool(tool, arguments));
    let outcomes: Vec<_> = calls.buffer_unordered(concurrency.max(1)).collect().await;
    let (mut ids, mut tally) = (Vec::with_capacity(count), Tally::default());
    for outcome in outcomes {
        match outcome {
            Ok(Execution::Task(task)) => ids.push(task.id().clone()),
            Ok(_) => tally.fail(format!("{tool}: no task created")),
            Err(error) => tally.fail(format!("{tool}: {error}")),
        }
    }
    (ids, tally)
}

/// Polls every task of `ids` with `tasks/get` until it is in `status`; a task still
/// `working` is polled again (after a pause) up to [`ROUNDS`] times; any other status is an
/// error.
pub(crate) async fn wait_all(
    client: &Client,
    ids: &[TaskId],
    status: TaskStatus,
    concurrency: usize,
) -> Tally {
    let (mut pending, mut tally) = (ids.to_vec(), Tally::default());
    for round in 0..ROUNDS {
        if pending.is_empty() {
            return tally;
        }
        if round > 0 {
            tokio::time::sleep(PAUSE).await;
        }
        let gets = stream::iter(std::mem::take(&mut pending)).map(|id| async move {
            let now = client
                .task(id.clone())
                .get()
                .await
                .map(|t| t.state.status());
            (id, now)
        });
        for (id, now) in gets
            .buffer_unordered(concurrency.max(1))
            .collect::<Vec<_>>()
            .await
        {
            match now {
                Ok(now) if now == status => {}
                Ok(TaskStatus::Working) => pending.push(id),
                Ok(now) => tally.fail(format!(
                    "task {id} {}, not {}",
                    now.as_str(),
                    status.as_str()
                )),
                Err(error) => tally.fail(format!("tasks/get {id}: {error}")),
            }
        }
    }
    for id in pending {
        tally.fail(format!("task {id} still working after {ROUNDS} rounds"));
    }
    tally
}

/// Creates one `slow_compute` task with `seconds: 0` at `url` and waits until it completes:
/// its id, and the serialized size of its stored `result` (the payload).
pub(crate) async fn completed_task(url: &str) -> Result<(String, usize), String> {
    let client = connect(url, false).await?;
    let (ids, tally) = create(&client, "slow_compute", &json!({"seconds": 0}), 1, 1).await;
    tally.ok("creating a task")?;
    let id = ids.into_iter().next().ok_or("no task created")?;
    let waited = wait_all(&client, std::slice::from_ref(&id), TaskStatus::Completed, 1).await;
    waited.ok("waiting for it")?;
    let task = client
        .task(id.clone())
        .get()
        .await
        .map_err(|e| e.to_string())?;
    let payload = match &task.state {
        TaskState::Completed { result } => result.as_str().len(),
        _ => 0,
    };
    Ok((id.to_string(), payload))
}
