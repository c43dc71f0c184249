//! The Tasks tools, first in `tools/list`: the tools the runner's `tasks-*` scenarios call.
//!
//! | tool | task policy | behaviour |
//! |---|---|---|
//! | `a_header_probe` | sync | no arguments; answers `ok` (header probes call the first tool with `{}`) |
//! | `greet` | sync | `Hello, <name>!` (default `World`); never a task |
//! | `slow_compute` | optional | sleeps `seconds` (rounded to ms), then `Completed <label>`; cancellable while sleeping; as a task of more than [`PROGRESS_TICK`], reports its progress every tick: the seconds slept of `seconds`, with the status message `Computing: <slept> of <seconds> s` ([`computing`]) |
//! | `failing_job` | required | a tool error: completed with `isError: true`, `The task job failed` |
//! | `protocol_error_job` | required | fails with -32603 |
//! | `confirm_delete` | optional | needs form elicitation (-32021 up front without it); parks on key `confirm-delete` (a typed question, `{"confirm": boolean}`), then `Delete confirmed: <bool>` on accept, `Delete declined: nothing deleted` / `Delete cancelled: …` otherwise |
//! | `multi_input` | optional | needs form elicitation; parks on `first-input` and `second-input` at once, then `Inputs received: …` |
//! | `test_tool_with_task` | sync without `inputResponses`, required with them | synchronous MRTR round for `user_name`, then a task that answers `Hello, <name>` |
//! | `resumable_job` | optional | `steps` steps of `stepMs` each, reporting `Step i of n (attempt k)` as its status; re-run from the start if the server dies while it runs ([`Recovery::Rerun`]); answers `Finished <n> steps on attempt <k>` |
//! | `write_haiku` | required | needs sampling (-32021 up front without it); parks on key `haiku`, asking the client's model for a haiku about `topic`, then answers the model's text |
//!
//! Recovery after a crash ([`Recovery`]): `confirm_delete`, `multi_input` and `write_haiku` ask
//! first and act after, so they are re-run (a parked one parks again on the same keys, and answers already
//! given are replayed); `resumable_job` is re-run; every other task fails as interrupted.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tasks_core::input::{ClientCapability, ElicitAnswer};
use tasks_core::{JsonRpcError, TaskPolicy};
use tasks_runtime::{text_result, Elicited, Recovery, Tool, ToolError};

use super::{str_arg, user_name};

/// The Tasks tools, in listing order (the harmless probe first); `resumable_job` notes each
/// run it starts in `run_log` (`--run-log`).
pub fn all(run_log: Option<&Path>) -> Vec<Tool> {
    vec![
        header_probe(),
        greet(),
        slow_compute(),
        failing_job(),
        protocol_error_job(),
        confirm_delete(),
        multi_input(),
        test_tool_with_task(),
        resumable_job(run_log.map(Arc::from)),
        write_haiku(),
    ]
}

fn write_haiku() -> Tool {
    Tool::new(
        "write_haiku",
        "Asks the client's model for a haiku about `topic` (key haiku), then returns it. Needs \
         sampling; runs only as a task.",
        |ctx| async move {
            let topic = str_arg(&ctx, "topic").unwrap_or("the sea").to_owned();
            let answer = ctx
                .sample(
                    "haiku",
                    super::sampling(&format!("Write a haiku about {topic}.")),
                )
                .await?;
            Ok(text_result(answer.text().unwrap_or("").to_owned()))
        },
    )
    .with_input_schema(json!({
        "type": "object",
        "properties": {"topic": {"type": "string", "description": "What the haiku is about"}},
    }))
    .with_policy(TaskPolicy::Required)
    .requires_client([ClientCapability::Sampling])
    .with_recovery(Recovery::rerun())
}

fn header_probe() -> Tool {
    Tool::new(
        "a_header_probe",
        "Harmless probe: takes no arguments and answers \"ok\".",
        |_ctx| async { Ok(text_result("ok")) },
    )
    .with_input_schema(json!({"type": "object", "additionalProperties": false}))
}

// The arguments of `greet` (no doc comment: it would become the schema's description).
#[derive(Deserialize, JsonSchema)]
struct Greet {
    /// Who to greet
    #[serde(default = "world")]
    name: String,
}

fn world() -> String {
    "World".to_owned()
}

fn greet() -> Tool {
    Tool::typed(
        "greet",
        "Greets someone synchronously: \"Hello, <name>!\".",
        |_ctx, Greet { name }| async move { Ok(text_result(format!("Hello, {name}!"))) },
    )
}

// The arguments of `slow_compute`.
#[derive(Deserialize, JsonSchema)]
struct SlowCompute {
    /// How long to sleep, in seconds
    #[serde(default)]
    #[schemars(range(min = 0, max = 86400))]
    seconds: f64,
    /// Echoed in the result
    #[serde(default)]
    label: String,
}

/// How often `slow_compute` reports its progress while it runs as a task (the runtime writes
/// at most one report per `pollIntervalMs`).
pub const PROGRESS_TICK: Duration = Duration::from_millis(100);

/// `slow_compute`'s status message while it runs: `Computing: 1.2 of 5 s` (tenths, as a
/// person reads them: `1`, not `1.0`).
pub fn computing(slept: Duration, total: Duration) -> String {
    let tenths = |d: Duration| {
        let tenths = d.as_millis().div_ceil(100);
        if tenths.is_multiple_of(10) {
            format!("{}", tenths / 10)
        } else {
            format!("{}.{}", tenths / 10, tenths % 10)
        }
    };
    format!("Computing: {} of {} s", tenths(slept), tenths(total))
}

fn slow_compute() -> Tool {
    Tool::typed(
        "slow_compute",
        "Sleeps for `seconds`, then answers \"Completed <label>\". Runs as a task when the \
         client declares Tasks, reporting its progress (seconds slept of `seconds`, status \
         \"Computing: <slept> of <seconds> s\"); cancellable while sleeping.",
        |ctx, SlowCompute { seconds, label }| async move {
            // The schema bounds `seconds` to 0..=86400.
            let millis = (seconds * 1000.0).round().max(0.0) as u64;
            if millis > 0 {
                let total = Duration::from_millis(millis);
                let start = tokio::time::Instant::now();
                // A synchronous call reports nothing (its wire stays as it was), nor does a
                // task over within one tick (nothing to watch, and no write more per task).
                let watched = ctx.is_task() && total > PROGRESS_TICK;
                let tick = if watched { PROGRESS_TICK } else { total };
                let mut slept = Duration::ZERO;
                while slept < total {
                    let until = start + (slept + tick).min(total);
                    tokio::select! {
                        () = tokio::time::sleep_until(until) => {}
                        () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled),
                    }
                    slept = (until - start).min(total);
                    if watched {
                        let seconds = |d: Duration| d.as_millis() as f64 / 1000.0;
                        let message = computing(slept, total);
                        ctx.progress(seconds(slept), Some(seconds(total)), Some(&message));
                    }
                }
            }
            let text = if label.is_empty() {
                "Completed".to_owned()
            } else {
                format!("Completed {label}")
            };
            Ok(text_result(text))
        },
    )
    .with_policy(TaskPolicy::Optional)
}

fn failing_job() -> Tool {
    Tool::new(
        "failing_job",
        "A task-only job whose tool reports an error: the task completes with isError: true.",
        |_ctx| async { Err::<Value, _>(ToolError::tool("The task job failed")) },
    )
    .with_input_schema(json!({"type": "object"}))
    .with_policy(TaskPolicy::Required)
}

fn protocol_error_job() -> Tool {
    Tool::new(
        "protocol_error_job",
        "A task-only job that fails with a JSON-RPC internal error (-32603).",
        |_ctx| async {
            Err::<Value, _>(ToolError::Rpc(JsonRpcError {
                code: -32603,
                message: "Tool raised an exception".into(),
                data: None,
            }))
        },
    )
    .with_input_schema(json!({"type": "object"}))
    .with_policy(TaskPolicy::Required)
}

/// The `confirm_delete` question: a typed form ([`ToolContext::elicit_as`]), the same
/// `{"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}`
/// it always asked (no doc comment on the field, so no `description`: a task parked by an
/// earlier build asks the very same request when it is re-run).
///
/// [`ToolContext::elicit_as`]: tasks_runtime::ToolContext::elicit_as
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    confirm: bool,
}

fn confirm_delete() -> Tool {
    Tool::new(
        "confirm_delete",
        "Asks the user to confirm deleting `filename` (key confirm-delete), then reports the \
         answer. Needs form elicitation.",
        |ctx| async move {
            let filename = str_arg(&ctx, "filename").unwrap_or("file").to_owned();
            let answer = ctx
                .elicit_as::<Confirm>("confirm-delete", format!("Delete {filename}?"))
                .await?;
            let text = match answer {
                Elicited::Accept(Confirm { confirm }) => format!("Delete confirmed: {confirm}"),
                Elicited::Decline => "Delete declined: nothing deleted".to_owned(),
                Elicited::Cancel => "Delete cancelled: nothing deleted".to_owned(),
            };
            Ok(text_result(text))
        },
    )
    .asks::<Confirm>()
    .with_input_schema(json!({
        "type": "object",
        "properties": {"filename": {"type": "string", "description": "The file to delete"}},
    }))
    .with_policy(TaskPolicy::Optional)
    .requires_client([ClientCapability::ElicitationForm])
    .with_recovery(Recovery::rerun())
}

fn multi_input() -> Tool {
    fn name_of(answer: &ElicitAnswer) -> String {
        match answer {
            ElicitAnswer::Accept(_) => answer.str_field("name").unwrap_or("confirmed").to_owned(),
            ElicitAnswer::Decline => "declined".to_owned(),
            ElicitAnswer::Cancel => "cancelled".to_owned(),
        }
    }
    Tool::new(
        "multi_input",
        "Asks two questions at once (keys first-input and second-input), then echoes both \
         answers. Needs form elicitation.",
        |ctx| async move {
            let schema = json!({"type": "object", "properties": {
                "name": {"type": "string"}, "confirm": {"type": "boolean"}}});
            let (first, second) = tokio::join!(
                ctx.elicit("first-input", "First input", schema.clone()),
                ctx.elicit("second-input", "Second input", schema.clone()),
            );
            let (first, second) = (first?, second?);
            Ok(text_result(format!(
                "Inputs received: {}, {}",
                name_of(&first),
                name_of(&second)
            )))
        },
    )
    .with_input_schema(json!({"type": "object"}))
    .with_policy(TaskPolicy::Optional)
    .requires_client([ClientCapability::ElicitationForm])
    .with_recovery(Recovery::rerun())
}

fn test_tool_with_task() -> Tool {
    Tool::new(
        "test_tool_with_task",
        "Asks for the user's name with a synchronous input_required round, then creates a task \
         that answers \"Hello, <name>\".",
        |ctx| async move {
            let name = user_name(&ctx).await?;
            Ok(text_result(format!("Hello, {name}")))
        },
    )
    .with_input_schema(json!({"type": "object"}))
    .with_policy_fn(|params| {
        if params.get("inputResponses").is_some_and(|r| !r.is_null()) {
            TaskPolicy::Required
        } else {
            TaskPolicy::Sync
        }
    })
}

/// Appends `<key> <attempt>` to the run log: one short `write` to a file opened for
/// appending, so lines of several processes never interleave.
fn note_run(path: &Path, key: &str, attempt: u32) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    file.write_all(format!("{key} {attempt}\n").as_bytes())
}

fn resumable_job(run_log: Option<Arc<Path>>) -> Tool {
    Tool::new(
        "resumable_job",
        "Works through `steps` steps of `stepMs` milliseconds each, reporting progress in its \
         status message. If the server stops while it runs, it is run again from the start \
         (at most 3 runs in all).",
        move |ctx| {
            let run_log = run_log.clone();
            async move {
                if let Some(path) = &run_log {
                    note_run(path, ctx.idempotency_key().unwrap_or("sync"), ctx.attempt())?;
                }
                let number = |name: &str, default: u64| {
                    ctx.arguments()
                        .get(name)
                        .and_then(Value::as_u64)
                        .unwrap_or(default)
                };
                let (steps, step_ms) = (number("steps", 5), number("stepMs", 200));
                let attempt = ctx.attempt();
                for step in 1..=steps {
                    ctx.set_status_message(format!("Step {step} of {steps} (attempt {attempt})"));
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(step_ms)) => {}
                        _ = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled),
                    }
                }
                Ok(json!({
                    "content": [{"type": "text",
                                 "text": format!("Finished {steps} steps on attempt {attempt}")}],
                    "structuredContent": {
                        "steps": steps,
                        "attempt": attempt,
                        "idempotencyKey": ctx.idempotency_key(),
                    },
                    "isError": false,
                }))
            }
        },
    )
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "steps": {"type": "integer", "minimum": 0, "maximum": 1000, "default": 5,
                      "description": "How many steps"},
            "stepMs": {"type": "integer", "minimum": 0, "maximum": 60000, "default": 200,
                       "description": "How long each step takes, in milliseconds"},
        },
    }))
    .with_policy(TaskPolicy::Optional)
    .with_recovery(Recovery::rerun())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::computing;

    #[test]
    fn the_status_message_reads_like_seconds() {
        let ms = Duration::from_millis;
        assert_eq!(computing(ms(100), ms(5000)), "Computing: 0.1 of 5 s");
        assert_eq!(computing(ms(1200), ms(2500)), "Computing: 1.2 of 2.5 s");
        assert_eq!(computing(ms(3000), ms(3000)), "Computing: 3 of 3 s");
        assert_eq!(
            computing(ms(1234), ms(86_400_000)),
            "Computing: 1.3 of 86400 s"
        );
    }
}
