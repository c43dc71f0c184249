//! One task's worker: runs the tool detached from the request and commits the outcome.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use serde_json::Value;
use tasks_core::json::Unstorable;
use tasks_core::{Event, JsonRpcError, TaskId, MAX_RESULT_DEPTH};
use tokio::sync::OwnedSemaphorePermit;
use tracing::Instrument as _;

use crate::context::{CallInputs, InputMode, TaskInput, ToolContext};
use crate::error::ToolError;
use crate::error::MESSAGE_PANIC;
use crate::inner::{Inner, WorkerHandle};
use crate::registry::Tool;
use crate::status::StatusCoalescer;
use crate::store::Lease;
use crate::work::{encoded_len, Work};

/// `error.message` of a task whose tool returned something other than a JSON object.
pub(crate) const MESSAGE_NOT_OBJECT: &str = "Task worker returned a non-object result";
/// `error.message` of a task whose tool asked for MRTR input outside [`ToolContext::input`].
pub(crate) const MESSAGE_CONTINUATION: &str =
    "Task worker returned a continuation; use ToolContext::input inside a task";

/// `error.message` of a task whose tool's result (or error `data`) would not read back once
/// stored: nested deeper than [`MAX_RESULT_DEPTH`] levels (`Task result is nested deeper than
/// 120 levels`), or with a member named after one of `serde_json`'s markers (`Task result has a
/// reserved member name`).
fn unstorable_message(what: &str, unstorable: &Unstorable) -> String {
    match unstorable {
        Unstorable::TooDeep { max, .. } => {
            format!("Task {what} is nested deeper than {max} levels")
        }
        Unstorable::ReservedName(_) => format!("Task {what} has a reserved member name"),
    }
}

/// Turns a tool's return value into the event that ends the task.
pub(crate) fn outcome_event(
    outcome: Result<Value, ToolError>,
    max_result_bytes: usize,
) -> Option<Event> {
    match outcome {
        Ok(Value::Object(result)) => {
            let result = tasks_core::wire::complete(result);
            if encoded_len(&result) > max_result_bytes {
                return Some(Event::Failed {
                    error: JsonRpcError::internal(format!(
                        "Task result is larger than {max_result_bytes} bytes"
                    )),
                });
            }
            if let Err(unstorable) = tasks_core::json::check_object(&result, MAX_RESULT_DEPTH) {
                return Some(Event::Failed {
                    error: JsonRpcError::internal(unstorable_message("result", &unstorable)),
                });
            }
            Some(Event::Completed {
                result: result.into(),
            })
        }
        Ok(_) => Some(Event::Failed {
            error: JsonRpcError::internal(MESSAGE_NOT_OBJECT),
        }),
        // The tool's own failure is a result (`completed`, `isError: true`), not `failed`.
        Err(ToolError::Tool(message)) => outcome_event(
            Ok(Value::Object(crate::result::error_object(message))),
            max_result_bytes,
        ),
        Err(ToolError::Rpc(error)) => {
            let data = error.data.as_ref();
            match data.map(|data| tasks_core::json::check_value(data, MAX_RESULT_DEPTH)) {
                Some(Err(unstorable)) => Some(Event::Failed {
                    error: JsonRpcError::internal(unstorable_message("error data", &unstorable)),
                }),
                _ => Some(Event::Failed { error }),
            }
        }
        Err(ToolError::InputRequired) => Some(Event::Failed {
            error: JsonRpcError::internal(MESSAGE_CONTINUATION),
        }),
        Err(ToolError::Cancelled) => Some(Event::Cancelled),
    }
}

/// How often a task's own `statusMessage` may be written: its `pollIntervalMs`, else 1 s.
fn status_interval(inner: &Inner) -> Duration {
    let millis = inner.config.poll_interval_ms.map_or(1_000, |ms| ms.get());
    Duration::from_millis(millis)
}

/// Runs the task's tool inside the task's span: `task` at INFO level with `task_id`, `tool`,
/// `scope` (the first 8 characters of the scope, itself a keyed hash of the principal, never
/// the principal; empty for the shared scope), `node`, `attempt` and `trace_id` (of the creating
/// request's W3C `traceparent`, when it had one). Events inside (status
/// transitions, warnings) carry these fields. Arguments, answers and results are never recorded.
/// `lease` is this run's: the handle's, with the attempt charged for the run.
pub(crate) async fn run(
    inner: Arc<Inner>,
    tool: Arc<Tool>,
    task_id: TaskId,
    work: Arc<Work>,
    handle: Arc<WorkerHandle>,
    lease: Lease,
    permit: OwnedSemaphorePermit,
) {
    let scope_tag: String = work.scope.as_str().chars().take(8).collect();
    // A root span: the task outlives the request that created it (whose span is current
    // during the worker's first step, see `TaskRuntime::create`).
    let span = tracing::info_span!(
        parent: None,
        "task",
        task_id = task_id.as_str(),
        tool = tool.name(),
        scope = scope_tag.as_str(),
        node = %lease.node,
        attempt = lease.attempt,
        trace_id = tracing::field::Empty,
    );
    // The creating request's trace, on every run of the task (a re-run, a takeover).
    if let Some(trace) = work
        .trace_parent
        .as_deref()
        .and_then(tasks_core::TraceParent::parse)
    {
        span.record("trace_id", trace.trace_id());
    }
    run_tool(inner, tool, task_id, work, handle, lease, permit)
        .instrument(span)
        .await;
}

async fn run_tool(
    inner: Arc<Inner>,
    tool: Arc<Tool>,
    task_id: TaskId,
    work: Arc<Work>,
    handle: Arc<WorkerHandle>,
    lease: Lease,
    permit: OwnedSemaphorePermit,
) {
    tracing::debug!("task worker started");
    let scope = work.scope.clone();
    let cancel = handle.cancel.clone();
    // The worker keeps its own handle on the slot: a handler may drop its context (and so
    // this `Arc`) long before it finishes, which must not release the slot.
    let input = Arc::new(TaskInput {
        port: inner.clone(),
        task_id: task_id.clone(),
        scope: scope.clone(),
        lease,
        permit: tokio::sync::Mutex::new(Some(permit)),
        slots: inner.slots.clone(),
        parked: AtomicUsize::new(0),
        status: StatusCoalescer::new(status_interval(&inner)),
    });
    let ctx = ToolContext {
        inputs: CallInputs::Task(work.clone()),
        notifier: None,
        cancel: cancel.clone(),
        mode: InputMode::Task(input.clone()),
        forms: tool.forms.clone(),
        state: tool.state.clone(),
        principal: work
            .sealed_principal
            .as_ref()
            .and_then(|sealed| inner.principal_key.open(sealed, &work.scope)),
    };
    let limits = &inner.config.limits;
    let call = AssertUnwindSafe(tool.handler().call(ctx)).catch_unwind();
    let event = tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        finished = tokio::time::timeout(limits.max_runtime, call) => match finished {
            Err(_elapsed) => Some(Event::Failed {
                error: JsonRpcError::internal("Task exceeded its maximum runtime"),
            }),
            Ok(Err(_panic)) => {
                tracing::warn!(tool = tool.name(), "tool panicked inside a task");
                Some(Event::Failed { error: JsonRpcError::internal(MESSAGE_PANIC) })
            }
            Ok(Ok(outcome)) => outcome_event(outcome, limits.max_result_bytes),
        },
    };
    // The handler future is dropped by now; release the worker slot before the commit.
    let released = input.permit.lock().await.take();
    // A progress reported within the last interval is written before the outcome, with its
    // message (a task that ran to its end shows its last report, not the one an interval
    // earlier).
    let last_progress = event.as_ref().and(input.status.take_progress());
    drop((released, input));
    if let Some((progress, message)) = last_progress {
        let report = Event::Progress { progress, message };
        // Best effort, as every report: the outcome below is what must be committed.
        let _ = inner.commit(&scope, &task_id, report, Some(&lease)).await;
    }
    if let Some(event) = event {
        inner
            .commit_final(&scope, &task_id, event, &lease, &cancel)
            .await;
    }
    inner.forget_worker(&task_id, &handle);
    cancel.cancel();
}
