//! Waiting for tasks to reach a status: poll `tasks/get` until every task has it.

use std::sync::Arc;
use std::time::Duration;

use crate::mcp::Call;
use crate::pool::{Outcomes, Pool};

/// Rounds of polling before a task still short of its status counts as an error.
const ROUNDS: usize = 50;
/// Pause between rounds.
const PAUSE: Duration = Duration::from_millis(100);

/// Polls every task of `ids` until its status is `status`; a task in `transient` is polled
/// again, any other status (or a failure) is an error. Returns how many tasks failed, and the
/// first failure.
pub(crate) async fn settle(
    pool: &Arc<Pool>,
    ids: Vec<String>,
    status: &'static str,
    transient: &'static str,
) -> (u64, Option<String>) {
    let mut pending = ids;
    let mut errors = 0;
    let mut first_error = None;
    for round in 0..ROUNDS {
        if pending.is_empty() {
            break;
        }
        if round > 0 {
            tokio::time::sleep(PAUSE).await;
        }
        let ids = Arc::new(std::mem::take(&mut pending));
        let calls = ids.clone();
        let Outcomes {
            values,
            errors: failed,
            first_error: failure,
        } = pool
            .run_indexed(
                ids.len(),
                move |i| Call::tasks_get(&calls[i]),
                move |task| {
                    if task.status == status {
                        Ok(None)
                    } else if task.status == transient {
                        Ok(Some(task.task_id))
                    } else {
                        Err(format!("task not {status}: {task:?}"))
                    }
                },
            )
            .await;
        errors += failed;
        first_error = first_error.or(failure);
        pending = values.into_iter().flatten().collect();
    }
    if !pending.is_empty() {
        errors += pending.len() as u64;
        first_error.get_or_insert(format!(
            "{} tasks still {transient} after {ROUNDS} rounds",
            pending.len()
        ));
    }
    (errors, first_error)
}
