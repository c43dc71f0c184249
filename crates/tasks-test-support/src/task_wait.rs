//! Waiting on a [`TaskRuntime`]'s tasks: until a task satisfies a condition, is terminal, or
//! asks for given input keys.

use std::sync::Arc;

use tasks_core::{Task, TaskId};
use tasks_runtime::{Scope, TaskRuntime};
use tokio::sync::broadcast::error::RecvError;

use crate::runtime::detailed_json;
use crate::wait::WAIT_LIMIT;

/// Waits until task `id` satisfies `done` and returns it; fails after [`WAIT_LIMIT`].
///
/// Subscribes before the first read, so no change can slip between the read and the wait.
pub async fn wait_for(
    rt: &TaskRuntime,
    scope: &Scope,
    id: &TaskId,
    what: &str,
    done: impl Fn(&Task) -> bool,
) -> Arc<Task> {
    let mut events = rt.subscribe();
    let wait = async {
        loop {
            let task = rt
                .get(scope, id)
                .await
                .unwrap_or_else(|e| panic!("waiting for {what}: get failed: {e}"));
            if done(&task) {
                return task;
            }
            loop {
                match events.recv().await {
                    Ok(event) if event.task.id() == id => break,
                    Ok(_) => {}
                    Err(RecvError::Lagged(_)) => break,
                    Err(RecvError::Closed) => panic!("event channel closed"),
                }
            }
        }
    };
    match tokio::time::timeout(WAIT_LIMIT, wait).await {
        Ok(task) => task,
        Err(_) => {
            let current = rt.get(scope, id).await.map(|t| detailed_json(&t));
            panic!("timed out waiting for {what}; task is now {current:?}")
        }
    }
}

/// Waits until task `id` is terminal.
pub async fn wait_terminal(rt: &TaskRuntime, scope: &Scope, id: &TaskId) -> Arc<Task> {
    wait_for(rt, scope, id, "a terminal status", Task::is_terminal).await
}

/// Waits until task `id` is `input_required` with exactly `keys` outstanding.
pub async fn wait_input_keys(
    rt: &TaskRuntime,
    scope: &Scope,
    id: &TaskId,
    keys: &[&str],
) -> Arc<Task> {
    wait_for(rt, scope, id, &format!("input keys {keys:?}"), |t| {
        input_keys(t) == keys
    })
    .await
}

/// The outstanding input keys of `task` (empty unless `input_required`).
pub fn input_keys(task: &Task) -> Vec<String> {
    match task.state() {
        tasks_core::TaskState::InputRequired { input_requests } => {
            input_requests.as_map().keys().cloned().collect()
        }
        _ => Vec::new(),
    }
}
