//! Behaviour of `TaskRuntime` on a current-thread runtime, with paused tokio time wherever time
//! matters (no real sleeps: `tokio::time::advance` and paused auto-advance drive `TokioClock`).

// Modules rather than binaries of their own (each integration-test binary links the
// whole stack, and linking is slow): their tests are named `<module>::<test>`.
mod executor_host;
mod follow;
mod input_trust;
mod node;
mod operator;
mod races;
mod recovery;
mod stall;
mod store_contract;
mod typed;
mod waits;

use std::sync::Arc;
use std::time::Duration;
use tasks_runtime::Creation;

use serde_json::{json, Value};
use tasks_core::{CapacityLimit, JsonObject, JsonRpcError, McpError, TaskState, TaskStatus};
use tasks_runtime::unstable::encoded_len;
use tasks_runtime::{
    run_sync, text_result, Limits, RuntimeConfig, Scope, SyncCall, SyncOutcome, TaskRuntime, Tool,
    ToolError,
};

use tasks_test_support::events::{assert_event_order, drain_for};
use tasks_test_support::protocol::accept;
use tasks_test_support::{probe::*, runtime::*, task_wait::*, wait::*};

const PANIC_TEXT: &str = "secret-db-password-hunter2 exploded";

fn config() -> RuntimeConfig {
    RuntimeConfig::default()
}

fn with_limits(limits: Limits) -> RuntimeConfig {
    RuntimeConfig::default().with_limits(limits)
}

fn is_error_tool() -> Tool {
    Tool::new("tool_error", "Reports a tool error", |_ctx| async move {
        Ok(json!({"content": [{"type": "text", "text": "file not found"}], "isError": true}))
    })
}

fn rpc_error() -> JsonRpcError {
    JsonRpcError {
        code: -32001,
        message: "Upstream quota exceeded".into(),
        data: Some(json!({"retryAfterMs": 1500})),
    }
}

fn rpc_error_tool() -> Tool {
    Tool::new(
        "rpc_error",
        "Fails with a protocol error",
        |_ctx| async move { Err(ToolError::Rpc(rpc_error())) },
    )
}

fn panic_tool() -> Tool {
    Tool::new("boom", "Panics", |_ctx| async move {
        if PANIC_TEXT.is_empty() {
            return Ok(Value::Null);
        }
        panic!("{PANIC_TEXT}");
    })
}

fn not_object_tool() -> Tool {
    Tool::new("array", "Returns an array", |_ctx| async move {
        Ok(json!([1, 2, 3]))
    })
}

fn continuation_tool() -> Tool {
    Tool::new("continuation", "Returns InputRequired", |_ctx| async move {
        Err(ToolError::InputRequired)
    })
}

fn sleepy_tool(probe: Arc<Probe>) -> Tool {
    Tool::new("sleepy", "Sleeps a minute", move |_ctx| {
        let probe = probe.clone();
        async move {
            let _guard = probe.enter();
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(text_result("woke up"))
        }
    })
}

fn mode_tool() -> Tool {
    Tool::new(
        "mode",
        "Tells whether it runs as a task",
        |ctx| async move { Ok(text_result(format!("is_task={}", ctx.is_task()))) },
    )
}

fn expected_echo(text: &str) -> tasks_core::JsonObject {
    obj(json!({
        "content": [{"type": "text", "text": text}],
        "isError": false,
        "resultType": "complete"
    }))
}

async fn create(rt: &TaskRuntime, work: tasks_runtime::Work) -> Arc<tasks_core::Task> {
    rt.create(work).await.expect("create_task")
}

// ---- outcomes ----------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_task_created_with_its_tool_runs_it_without_a_lookup_by_name() {
    // The tool a request's plan found is the one that runs: it is not looked up again by name
    // (here the runtime has no tool registered at all).
    let rt = runtime(vec![], config());
    let tool = Arc::new(echo_tool());
    let work = work_in(&Scope::shared(), "echo", json!({"text": "planned"}));
    let created = rt
        .create(Creation::new(work).tool(tool.clone()))
        .await
        .expect("created with the planned tool");
    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    assert_eq!(
        *done.state(),
        TaskState::Completed {
            result: expected_echo("planned").into()
        }
    );
    // By name, the same work is refused: the runtime has no such tool.
    let work = work_in(&Scope::shared(), "echo", json!({"text": "by name"}));
    assert_eq!(
        rt.create(work).await.unwrap_err(),
        McpError::invalid_params("Unknown tool")
    );
    // A work naming another tool is refused before anything is stored.
    let work = work_in(&Scope::shared(), "other", json!({}));
    assert_eq!(
        rt.create(Creation::new(work).tool(tool)).await.unwrap_err(),
        McpError::Internal("Tool does not match the work")
    );
    assert_eq!(rt.stored_tasks().await.unwrap(), 1);
}

#[tokio::test(start_paused = true)]
async fn worker_completes_with_the_tool_result() {
    let rt = runtime(vec![echo_tool()], config());
    let created = create(
        &rt,
        work_in(&Scope::shared(), "echo", json!({"text": "hello"})),
    )
    .await;
    assert_eq!(created.status(), TaskStatus::Working);
    assert_eq!(created.revision(), 1);
    assert_eq!(created.status_message(), Some("Task accepted"));
    assert_eq!(created.created_at(), T0);
    assert_eq!(created.ttl_ms(), Some(3_600_000));
    assert_eq!(created.poll_interval_ms().map(|n| n.get()), Some(250));
    assert_eq!(created.id().as_str().len(), 32);

    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    assert_eq!(
        *done.state(),
        TaskState::Completed {
            result: expected_echo("hello").into()
        }
    );
    assert_eq!(done.revision(), 2);
    assert_eq!(done.status_message(), None);
    assert_eq!(
        detailed_json(&done)["result"],
        json!({"content": [{"type": "text", "text": "hello"}], "isError": false, "resultType": "complete"})
    );
    yield_until("the worker slot is released", || rt.busy_workers() == 0).await;
}

#[tokio::test(start_paused = true)]
async fn tool_reporting_is_error_completes() {
    let rt = runtime(vec![is_error_tool()], config());
    let created = create(&rt, work("tool_error")).await;
    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(
        *done.state(),
        TaskState::Completed {
            result: obj(json!({
                "content": [{"type": "text", "text": "file not found"}],
                "isError": true,
                "resultType": "complete"
            }))
            .into()
        }
    );
}

#[tokio::test(start_paused = true)]
async fn tool_rpc_error_fails_with_that_exact_error() {
    let rt = runtime(vec![rpc_error_tool()], config());
    let created = create(&rt, work("rpc_error")).await;
    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    assert_eq!(
        *done.state(),
        TaskState::Failed {
            error: Box::new(rpc_error())
        }
    );
    assert_eq!(done.status_message(), Some("Upstream quota exceeded"));
    let wire = detailed_json(&done);
    assert_eq!(
        wire["error"],
        json!({"code": -32001, "message": "Upstream quota exceeded", "data": {"retryAfterMs": 1500}})
    );
    assert!(wire.get("result").is_none());
}

#[tokio::test(start_paused = true)]
async fn panicking_tool_fails_generically_without_leaking_the_panic() {
    let rt = runtime(vec![panic_tool()], config());
    let mut events = rt.subscribe();
    let created = create(&rt, work("boom")).await;
    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    assert_eq!(
        *done.state(),
        TaskState::Failed {
            error: Box::new(JsonRpcError {
                code: -32603,
                message: "Tool raised an exception".into(),
                data: None
            })
        }
    );
    assert_eq!(done.status_message(), Some("Tool raised an exception"));
    let wire = detailed_json(&done).to_string();
    assert!(!wire.contains("secret"), "panic text leaked: {wire}");
    let stored = serde_json::to_string(&*done).unwrap();
    assert!(!stored.contains("secret"), "panic text stored: {stored}");
    for event in drain_for(&mut events, created.id()) {
        assert!(!detailed_json(&event.task).to_string().contains("secret"));
    }
    yield_until("the slot is released after a panic", || {
        rt.busy_workers() == 0
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn non_object_result_fails() {
    let rt = runtime(vec![not_object_tool()], config());
    let created = create(&rt, work("array")).await;
    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    assert_eq!(
        *done.state(),
        TaskState::Failed {
            error: Box::new(JsonRpcError {
                code: -32603,
                message: "Task worker returned a non-object result".into(),
                data: None
            })
        }
    );
}

#[tokio::test(start_paused = true)]
async fn returning_input_required_inside_a_task_fails() {
    let rt = runtime(vec![continuation_tool()], config());
    let created = create(&rt, work("continuation")).await;
    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    let TaskState::Failed { error } = done.state() else {
        panic!("expected failed, got {:?}", done.state());
    };
    assert_eq!(error.code, -32603);
    assert_eq!(
        error.message,
        "Task worker returned a continuation; use ToolContext::input inside a task"
    );
}

#[tokio::test(start_paused = true)]
async fn result_over_max_result_bytes_fails_and_one_at_the_limit_completes() {
    let text = "x".repeat(1_000);
    let exact = encoded_len(&expected_echo(&text));
    for (limit, completes) in [(exact, true), (exact - 1, false)] {
        let rt = runtime(
            vec![echo_tool()],
            with_limits(Limits::default().with_max_result_bytes(limit)),
        );
        let created = create(
            &rt,
            work_in(&Scope::shared(), "echo", json!({"text": text})),
        )
        .await;
        let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
        if completes {
            assert_eq!(
                *done.state(),
                TaskState::Completed {
                    result: expected_echo(&text).into()
                }
            );
        } else {
            assert_eq!(
                *done.state(),
                TaskState::Failed {
                    error: Box::new(JsonRpcError {
                        code: -32603,
                        message: format!("Task result is larger than {limit} bytes"),
                        data: None
                    })
                }
            );
            assert!(detailed_json(&done).get("result").is_none());
        }
    }
}

#[tokio::test(start_paused = true)]
async fn exceeding_max_runtime_fails_the_task_and_stops_the_tool() {
    let probe = Probe::new();
    let rt = runtime(
        vec![sleepy_tool(probe.clone())],
        with_limits(Limits::default().with_max_runtime(Duration::from_secs(10))),
    );
    let created = create(&rt, work("sleepy")).await;
    yield_until("the tool starts", || probe.started() == 1).await;

    tokio::time::advance(Duration::from_millis(9_999)).await;
    let task = rt.get(&Scope::shared(), created.id()).await.unwrap();
    assert_eq!(task.status(), TaskStatus::Working);
    assert_eq!(rt.busy_workers(), 1);

    tokio::time::advance(Duration::from_millis(1)).await;
    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    assert_eq!(
        *done.state(),
        TaskState::Failed {
            error: Box::new(JsonRpcError {
                code: -32603,
                message: "Task exceeded its maximum runtime".into(),
                data: None
            })
        }
    );
    assert_eq!(done.last_updated_at(), T0.plus_millis(10_000));
    yield_until("the tool is stopped", || probe.stopped() == 1).await;
    assert_eq!(rt.busy_workers(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_context_knows_it_runs_as_a_task() {
    let rt = runtime(vec![mode_tool()], config());
    let created = create(&rt, work("mode")).await;
    let done = wait_terminal(&rt, &Scope::shared(), created.id()).await;
    assert_eq!(
        *done.state(),
        TaskState::Completed {
            result: expected_echo("is_task=true").into()
        }
    );
}

// ---- input parking -----------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn input_parks_the_task_and_update_resumes_it() {
    let probe = Probe::new();
    let rt = runtime(vec![ask_tool(probe.clone())], config());
    let scope = Scope::shared();
    let created = create(&rt, work("ask")).await;

    let parked = wait_input_keys(&rt, &scope, created.id(), &["confirm"]).await;
    let TaskState::InputRequired { input_requests } = parked.state() else {
        unreachable!()
    };
    assert_eq!(input_requests.get("confirm"), Some(&elicit("Proceed?")));
    assert_eq!(parked.status_message(), Some("Waiting for input: confirm"));
    assert_eq!(parked.revision(), 2);
    assert_eq!(
        detailed_json(&parked)["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    assert_eq!(rt.busy_workers(), 0, "a parked task holds no worker slot");
    assert!(probe.answers().is_empty());

    let answer = accept(json!({"confirm": true}));
    rt.update(
        &scope,
        created.id(),
        responses([("confirm", answer.clone())]),
    )
    .await
    .unwrap();
    let done = wait_terminal(&rt, &scope, created.id()).await;
    assert_eq!(
        *done.state(),
        TaskState::Completed {
            result: expected_echo(&format!("answer: {answer}")).into()
        }
    );
    assert_eq!(
        done.revision(),
        4,
        "working → input_required → working → completed"
    );
    assert_eq!(probe.answers(), vec![answer]);
    yield_until("the slot is released", || rt.busy_workers() == 0).await;
}

#[tokio::test(start_paused = true)]
async fn concurrent_inputs_are_pending_together_and_answered_separately() {
    let probe = Probe::new();
    let rt = runtime(vec![ask_two_tool(probe.clone())], config());
    let scope = Scope::shared();
    let created = create(&rt, work("ask_two")).await;

    let parked = wait_input_keys(&rt, &scope, created.id(), &["first", "second"]).await;
    assert_eq!(rt.busy_workers(), 0);
    let revision = parked.revision();
    assert_eq!(revision, 3, "one revision per input request");

    // Unknown keys are ignored: acked, nothing changes.
    rt.update(
        &scope,
        created.id(),
        responses([("nope", json!({"ignored": true}))]),
    )
    .await
    .unwrap();
    let same = rt.get(&scope, created.id()).await.unwrap();
    assert_eq!(*same, *parked);

    let first = accept(json!({"n": 1}));
    rt.update(&scope, created.id(), responses([("first", first.clone())]))
        .await
        .unwrap();
    let partial = rt.get(&scope, created.id()).await.unwrap();
    assert_eq!(partial.status(), TaskStatus::InputRequired);
    assert_eq!(input_keys(&partial), ["second"]);
    assert_eq!(partial.revision(), revision + 1);
    assert_eq!(partial.answered_keys().collect::<Vec<_>>(), ["first"]);

    // A second answer to an answered key is ignored.
    rt.update(
        &scope,
        created.id(),
        responses([("first", accept(json!({"n": 99})))]),
    )
    .await
    .unwrap();
    assert_eq!(
        rt.get(&scope, created.id()).await.unwrap().revision(),
        revision + 1
    );

    let second = accept(json!({"n": 2}));
    rt.update(
        &scope,
        created.id(),
        responses([("second", second.clone())]),
    )
    .await
    .unwrap();
    let done = wait_terminal(&rt, &scope, created.id()).await;
    let TaskState::Completed { result } = done.state() else {
        panic!("expected completed, got {:?}", done.state());
    };
    assert_eq!(
        result.to_object()["structuredContent"],
        json!({"first": first, "second": second})
    );
    assert_eq!(probe.answers(), vec![first, second]);
}

#[tokio::test(start_paused = true)]
async fn concurrent_inputs_resume_with_a_single_worker_slot() {
    // Both parked inputs of one task resume with max_workers = 1: the resumed branches share
    // the task's one slot instead of waiting for a second one.
    for separately in [false, true] {
        let probe = Probe::new();
        let rt = runtime(
            vec![ask_two_tool(probe.clone())],
            with_limits(Limits::default().with_max_workers(1)),
        );
        let scope = Scope::shared();
        let created = create(&rt, work("ask_two")).await;
        wait_input_keys(&rt, &scope, created.id(), &["first", "second"]).await;
        if separately {
            rt.update(
                &scope,
                created.id(),
                responses([("first", accept(json!({"a": 1})))]),
            )
            .await
            .unwrap();
            rt.update(
                &scope,
                created.id(),
                responses([("second", accept(json!({"b": 2})))]),
            )
            .await
            .unwrap();
        } else {
            rt.update(
                &scope,
                created.id(),
                responses([
                    ("first", accept(json!({"a": 1}))),
                    ("second", accept(json!({"b": 2}))),
                ]),
            )
            .await
            .unwrap();
        }
        let done = wait_terminal(&rt, &scope, created.id()).await;
        assert_eq!(
            done.status(),
            TaskStatus::Completed,
            "separately={separately}: {:?}",
            done.state()
        );
        yield_until("the slot is released", || rt.busy_workers() == 0).await;
    }
}

#[tokio::test(start_paused = true)]
async fn concurrent_inputs_answered_while_the_only_slot_is_busy_resume_once_it_frees() {
    let ask_probe = Probe::new();
    let spin_probe = Probe::new();
    let rt = runtime(
        vec![
            ask_two_tool(ask_probe.clone()),
            spin_tool(spin_probe.clone()),
        ],
        with_limits(Limits::default().with_max_workers(1)),
    );
    let scope = Scope::shared();
    let asking = create(&rt, work("ask_two")).await;
    wait_input_keys(&rt, &scope, asking.id(), &["first", "second"]).await;
    let spinning = create(&rt, work("spin")).await;
    yield_until("spin starts", || spin_probe.started() == 1).await;
    rt.update(
        &scope,
        asking.id(),
        responses([
            ("first", accept(json!({"n": 1}))),
            ("second", accept(json!({"n": 2}))),
        ]),
    )
    .await
    .unwrap();
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert!(ask_probe.answers().is_empty(), "no slot yet");
    rt.cancel(&scope, spinning.id()).await.unwrap();
    // Both resumed branches wait for the same slot; the first to get it shares it.
    let done = wait_terminal(&rt, &scope, asking.id()).await;
    assert_eq!(done.status(), TaskStatus::Completed, "{:?}", done.state());
    assert_eq!(
        ask_probe.answers(),
        vec![accept(json!({"n": 1})), accept(json!({"n": 2}))]
    );
    yield_until("the slot is released", || rt.busy_workers() == 0).await;
}

#[tokio::test(start_paused = true)]
async fn parked_tasks_do_not_hold_worker_slots() {
    let probe = Probe::new();
    let rt = runtime(
        vec![ask_tool(probe.clone()), echo_tool()],
        with_limits(Limits::default().with_max_workers(1)),
    );
    let scope = Scope::shared();
    let mut parked = Vec::new();
    for _ in 0..3 {
        let created = create(&rt, work("ask")).await;
        wait_input_keys(&rt, &scope, created.id(), &["confirm"]).await;
        assert_eq!(rt.busy_workers(), 0);
        parked.push(created);
    }
    let echo = create(&rt, work_in(&scope, "echo", json!({"text": "still room"}))).await;
    let done = wait_terminal(&rt, &scope, echo.id()).await;
    assert_eq!(
        *done.state(),
        TaskState::Completed {
            result: expected_echo("still room").into()
        }
    );

    for (i, task) in parked.iter().enumerate() {
        rt.update(
            &scope,
            task.id(),
            responses([("confirm", accept(json!({"i": i})))]),
        )
        .await
        .unwrap();
    }
    for (i, task) in parked.iter().enumerate() {
        let done = wait_terminal(&rt, &scope, task.id()).await;
        assert_eq!(
            *done.state(),
            TaskState::Completed {
                result: expected_echo(&format!("answer: {}", accept(json!({"i": i})))).into()
            }
        );
    }
    assert_eq!(probe.answers().len(), 3);
    yield_until("all slots released", || rt.busy_workers() == 0).await;
}

#[tokio::test(start_paused = true)]
async fn an_answered_task_waits_for_a_free_slot_before_resuming() {
    let ask_probe = Probe::new();
    let spin_probe = Probe::new();
    let rt = runtime(
        vec![ask_tool(ask_probe.clone()), spin_tool(spin_probe.clone())],
        with_limits(Limits::default().with_max_workers(1)),
    );
    let scope = Scope::shared();
    let asking = create(&rt, work("ask")).await;
    wait_input_keys(&rt, &scope, asking.id(), &["confirm"]).await;
    let spinning = create(&rt, work("spin")).await;
    yield_until("spin starts", || spin_probe.started() == 1).await;
    assert_eq!(rt.busy_workers(), 1);

    rt.update(
        &scope,
        asking.id(),
        responses([("confirm", accept(json!({"ok": true})))]),
    )
    .await
    .unwrap();
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    let waiting = rt.get(&scope, asking.id()).await.unwrap();
    assert_eq!(
        waiting.status(),
        TaskStatus::Working,
        "answered, waiting for a slot"
    );
    assert_eq!(ask_probe.answers().len(), 0, "not resumed without a slot");

    rt.cancel(&scope, spinning.id()).await.unwrap();
    let done = wait_terminal(&rt, &scope, asking.id()).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(ask_probe.answers(), vec![accept(json!({"ok": true}))]);
}

// ---- cancellation ------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn cancel_while_working_stops_the_worker_and_releases_its_slot() {
    let probe = Probe::new();
    let rt = runtime(
        vec![spin_tool(probe.clone()), echo_tool()],
        with_limits(Limits::default().with_max_workers(1)),
    );
    let scope = Scope::shared();
    let mut events = rt.subscribe();
    let created = create(&rt, work("spin")).await;
    yield_until("spin starts", || probe.started() == 1).await;
    assert_eq!(rt.busy_workers(), 1);

    rt.cancel(&scope, created.id()).await.unwrap();
    // Committed before cancel returns.
    let cancelled = rt.get(&scope, created.id()).await.unwrap();
    assert_eq!(*cancelled.state(), TaskState::Cancelled);
    assert_eq!(cancelled.status_message(), Some("Cancellation requested"));
    assert_eq!(cancelled.revision(), 2);

    yield_until("the tool is stopped", || probe.stopped() == 1).await;
    yield_until("the slot is released", || rt.busy_workers() == 0).await;
    let echo = create(&rt, work_in(&scope, "echo", json!({"text": "next"}))).await;
    wait_terminal(&rt, &scope, echo.id()).await;

    let statuses: Vec<_> = drain_for(&mut events, created.id())
        .iter()
        .map(|e| (e.task.revision(), e.task.status()))
        .collect();
    assert_eq!(
        statuses,
        [(1, TaskStatus::Working), (2, TaskStatus::Cancelled)]
    );
    let after = rt.get(&scope, created.id()).await.unwrap();
    assert_eq!(*after, *cancelled, "the stopped worker changed nothing");
}

#[tokio::test(start_paused = true)]
async fn cancel_while_parked_then_update_is_acked_without_effect() {
    let probe = Probe::new();
    let rt = runtime(vec![ask_tool(probe.clone())], config());
    let scope = Scope::shared();
    let created = create(&rt, work("ask")).await;
    wait_input_keys(&rt, &scope, created.id(), &["confirm"]).await;

    rt.cancel(&scope, created.id()).await.unwrap();
    let cancelled = rt.get(&scope, created.id()).await.unwrap();
    assert_eq!(*cancelled.state(), TaskState::Cancelled);
    assert_eq!(cancelled.revision(), 3);
    yield_until("the parked tool is stopped", || probe.stopped() == 1).await;
    assert_eq!(rt.busy_workers(), 0);

    let mut events = rt.subscribe();
    rt.update(
        &scope,
        created.id(),
        responses([("confirm", accept(json!({"late": true})))]),
    )
    .await
    .expect("update on a cancelled task is acked");
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(*rt.get(&scope, created.id()).await.unwrap(), *cancelled);
    assert!(
        probe.answers().is_empty(),
        "the tool never got the late answer"
    );
    assert!(drain_for(&mut events, created.id()).is_empty());
}

#[tokio::test(start_paused = true)]
async fn cancel_on_a_terminal_task_leaves_it_unchanged() {
    let rt = runtime(vec![echo_tool(), rpc_error_tool()], config());
    let scope = Scope::shared();
    let completed = create(&rt, work("echo")).await;
    let failed = create(&rt, work("rpc_error")).await;
    for created in [completed, failed] {
        let done = wait_terminal(&rt, &scope, created.id()).await;
        let mut events = rt.subscribe();
        rt.cancel(&scope, created.id()).await.unwrap();
        rt.cancel(&scope, created.id()).await.unwrap();
        let after = rt.get(&scope, created.id()).await.unwrap();
        assert_eq!(*after, *done);
        assert!(drain_for(&mut events, created.id()).is_empty());
    }
}

// ---- TTL and reaping ---------------------------------------------------------------------------

fn ttl_config(ttl_ms: Option<u64>) -> RuntimeConfig {
    RuntimeConfig::default().with_ttl_ms(ttl_ms)
}

#[tokio::test(start_paused = true)]
async fn expired_tasks_are_unknown_before_reaping_and_reap_now_removes_them() {
    let probe = Probe::new();
    let rt = runtime(vec![ask_tool(probe.clone())], ttl_config(Some(5_000)));
    let scope = Scope::shared();
    let created = create(&rt, work("ask")).await;
    assert_eq!(created.ttl_ms(), Some(5_000));
    wait_input_keys(&rt, &scope, created.id(), &["confirm"]).await;

    tokio::time::advance(Duration::from_millis(4_999)).await;
    assert_eq!(
        rt.get(&scope, created.id()).await.unwrap().status(),
        TaskStatus::InputRequired
    );
    assert_eq!(rt.reap_now().await.unwrap(), 0);

    tokio::time::advance(Duration::from_millis(1)).await;
    assert_unknown(rt.get(&scope, created.id()).await);
    assert_unknown(
        rt.update(
            &scope,
            created.id(),
            responses([("confirm", accept(json!({})))]),
        )
        .await,
    );
    assert_unknown(rt.cancel(&scope, created.id()).await);
    assert_eq!(rt.stored_tasks().await.unwrap(), 1, "not reaped yet");
    assert!(probe.answers().is_empty());

    assert_eq!(rt.reap_now().await.unwrap(), 1);
    assert_eq!(rt.stored_tasks().await.unwrap(), 0);
    yield_until("the parked worker is stopped", || probe.stopped() == 1).await;
    assert_unknown(rt.get(&scope, created.id()).await);
}

#[tokio::test(start_paused = true)]
async fn reap_now_stops_a_still_running_worker() {
    let probe = Probe::new();
    let rt = runtime(vec![spin_tool(probe.clone())], ttl_config(Some(5_000)));
    let scope = Scope::shared();
    let mut events = rt.subscribe();
    let created = create(&rt, work("spin")).await;
    yield_until("spin starts", || probe.started() == 1).await;

    tokio::time::advance(Duration::from_secs(5)).await;
    assert_unknown(rt.get(&scope, created.id()).await);
    assert_eq!(
        rt.busy_workers(),
        1,
        "expiry alone does not stop the worker"
    );
    assert_eq!(rt.reap_now().await.unwrap(), 1);
    yield_until("the worker is stopped", || probe.stopped() == 1).await;
    yield_until("the slot is released", || rt.busy_workers() == 0).await;
    assert_eq!(rt.stored_tasks().await.unwrap(), 0);
    let published: Vec<_> = drain_for(&mut events, created.id())
        .iter()
        .map(|e| e.task.status())
        .collect();
    assert_eq!(
        published,
        [TaskStatus::Working],
        "a reaped task publishes nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn spawn_reaper_reaps_on_its_interval() {
    let rt = runtime(
        vec![echo_tool()],
        RuntimeConfig::default()
            .with_ttl_ms(Some(1_000))
            .with_limits(Limits::default().with_reap_interval(Duration::from_secs(60))),
    );
    let scope = Scope::shared();
    let reaper = rt.spawn_reaper();
    let first = create(&rt, work("echo")).await;
    wait_terminal(&rt, &scope, first.id()).await;

    tokio::time::sleep(Duration::from_secs(59)).await;
    assert_unknown(rt.get(&scope, first.id()).await);
    assert_eq!(
        rt.stored_tasks().await.unwrap(),
        1,
        "expired, not yet reaped"
    );

    tokio::time::sleep(Duration::from_secs(2)).await; // t = 61 s: the 60 s pass ran
    assert_eq!(rt.stored_tasks().await.unwrap(), 0);

    let second = create(&rt, work("echo")).await;
    wait_terminal(&rt, &scope, second.id()).await;
    tokio::time::sleep(Duration::from_secs(58)).await; // t = 119 s
    assert_eq!(rt.stored_tasks().await.unwrap(), 1);
    tokio::time::sleep(Duration::from_secs(2)).await; // t = 121 s: the 120 s pass ran
    assert_eq!(rt.stored_tasks().await.unwrap(), 0);

    // The reaper ends once every runtime handle is gone.
    drop(rt);
    tokio::time::sleep(Duration::from_secs(61)).await;
    assert!(reaper.is_finished());
}

#[tokio::test(start_paused = true)]
async fn tasks_without_ttl_are_never_reaped() {
    let rt = runtime(vec![echo_tool()], ttl_config(None));
    let scope = Scope::shared();
    let reaper = rt.spawn_reaper();
    let created = create(&rt, work("echo")).await;
    assert_eq!(created.ttl_ms(), None);
    let done = wait_terminal(&rt, &scope, created.id()).await;
    assert_eq!(detailed_json(&done)["ttlMs"], Value::Null);

    tokio::time::advance(Duration::from_secs(10 * 365 * 86_400)).await;
    assert_eq!(rt.reap_now().await.unwrap(), 0);
    tokio::time::sleep(Duration::from_secs(120)).await; // two reaper passes
    assert_eq!(*rt.get(&scope, created.id()).await.unwrap(), *done);
    assert_eq!(rt.stored_tasks().await.unwrap(), 1);
    reaper.abort();
}

// ---- limits ------------------------------------------------------------------------------------

fn assert_capacity(result: Result<Arc<tasks_core::Task>, McpError>, limit: CapacityLimit) {
    let error = result.expect_err("creation must be refused");
    assert_eq!(error, McpError::CapacityExhausted(limit));
    let object = error.to_error_object();
    assert_eq!(object.code, -32603);
    assert_eq!(object.message, "Task capacity exhausted");
    assert_eq!(
        object.data,
        Some(json!({"retryable": true, "limit": limit.as_str()}))
    );
}

#[tokio::test(start_paused = true)]
async fn max_workers_refuses_with_max_jobs() {
    let probe = Probe::new();
    let rt = runtime(
        vec![spin_tool(probe.clone()), echo_tool()],
        with_limits(Limits::default().with_max_workers(1)),
    );
    let scope = Scope::shared();
    let spinning = create(&rt, work("spin")).await;
    assert_capacity(rt.create(work("echo")).await, CapacityLimit::MaxJobs);
    let error = rt.create(work("echo")).await.unwrap_err();
    assert_eq!(error.to_error_object().data.unwrap()["limit"], "max_jobs");
    assert_eq!(rt.stored_tasks().await.unwrap(), 1, "nothing stored");
    let text = metrics_text(&rt);
    for line in [
        r#"task_capacity_refusals_total{limit="max_jobs"} 2"#,
        "worker_slots_busy 1",
        "worker_slots 1",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in:\n{text}"
        );
    }

    rt.cancel(&scope, spinning.id()).await.unwrap();
    yield_until("the slot is released", || rt.busy_workers() == 0).await;
    let echo = create(&rt, work("echo")).await;
    wait_terminal(&rt, &scope, echo.id()).await;
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_drops_its_context_still_holds_its_slot() {
    // `sleepy` never moves its `ToolContext` into its future.
    let probe = Probe::new();
    let rt = runtime(
        vec![sleepy_tool(probe.clone()), echo_tool()],
        with_limits(Limits::default().with_max_workers(1)),
    );
    let sleeping = create(&rt, work("sleepy")).await;
    yield_until("sleepy starts", || probe.started() == 1).await;
    assert_eq!(rt.busy_workers(), 1);
    assert_capacity(rt.create(work("echo")).await, CapacityLimit::MaxJobs);

    tokio::time::advance(Duration::from_secs(60)).await;
    let done = wait_terminal(&rt, &Scope::shared(), sleeping.id()).await;
    assert_eq!(
        *done.state(),
        TaskState::Completed {
            result: expected_echo("woke up").into()
        }
    );
    yield_until("the slot is released", || rt.busy_workers() == 0).await;
    create(&rt, work("echo")).await;
}

#[tokio::test(start_paused = true)]
async fn max_tasks_refuses_with_max_tasks() {
    let rt = runtime(
        vec![echo_tool()],
        with_limits(Limits::default().with_max_tasks(2)),
    );
    let scope = Scope::shared();
    for _ in 0..2 {
        let created = create(&rt, work("echo")).await;
        wait_terminal(&rt, &scope, created.id()).await;
    }
    assert_capacity(rt.create(work("echo")).await, CapacityLimit::MaxTasks);
    assert_eq!(rt.stored_tasks().await.unwrap(), 2);
    yield_until("the refused creation released its worker slot", || {
        rt.busy_workers() == 0
    })
    .await;
    // The metrics saw two creations, two completions and the refusal.
    let text = metrics_text(&rt);
    for line in [
        r#"tasks_created_total{tool="echo",policy="sync"} 2"#,
        r#"task_transitions_total{status="completed"} 2"#,
        r#"task_duration_seconds_count{status="completed"} 2"#,
        r#"task_capacity_refusals_total{limit="max_tasks"} 1"#,
        "worker_slots_busy 0",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in:\n{text}"
        );
    }
}

/// The runtime's metrics as OpenMetrics text (no prefix), worker slots read now.
fn metrics_text(rt: &TaskRuntime) -> String {
    let mut registry = prometheus_client::registry::Registry::default();
    rt.metrics().register(&mut registry);
    rt.metrics()
        .set_workers(rt.busy_workers(), rt.config().limits.max_workers);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    text
}

#[tokio::test(start_paused = true)]
async fn max_active_per_scope_refuses_until_a_task_ends() {
    let probe = Probe::new();
    let rt = runtime(
        vec![ask_tool(probe.clone()), echo_tool()],
        with_limits(Limits::default().with_max_active_per_scope(1)),
    );
    let parked = create(&rt, work_in(&alice(), "ask", json!({}))).await;
    wait_input_keys(&rt, &alice(), parked.id(), &["confirm"]).await;
    assert_capacity(
        rt.create(work_in(&alice(), "echo", json!({}))).await,
        CapacityLimit::MaxActiveTasksPerScope,
    );
    assert_eq!(rt.stored_tasks().await.unwrap(), 1);

    let other = create(&rt, work_in(&bob(), "echo", json!({}))).await;
    wait_terminal(&rt, &bob(), other.id()).await;

    rt.update(
        &alice(),
        parked.id(),
        responses([("confirm", accept(json!({})))]),
    )
    .await
    .unwrap();
    wait_terminal(&rt, &alice(), parked.id()).await;
    let again = create(&rt, work_in(&alice(), "echo", json!({}))).await;
    wait_terminal(&rt, &alice(), again.id()).await;
    assert_eq!(rt.stored_tasks().await.unwrap(), 3);
}

#[tokio::test(start_paused = true)]
async fn oversized_work_is_refused_and_nothing_is_stored() {
    let rt = runtime(vec![echo_tool()], config());
    let base = work_in(&Scope::shared(), "echo", json!({"text": ""})).encoded_len();
    let sized = |len: usize| work_in(&Scope::shared(), "echo", json!({"text": "x".repeat(len)}));
    let at_limit = sized(262_144 - base);
    assert_eq!(at_limit.encoded_len(), 262_144);
    let over = sized(262_144 - base + 1);

    let mut events = rt.subscribe();
    let error = rt.create(over).await.unwrap_err();
    assert_eq!(error, McpError::TaskInputTooLarge { limit: 262_144 });
    assert_eq!(error.code(), -32602);
    assert_eq!(error.to_string(), "Task input is larger than 262144 bytes");
    assert_eq!(rt.stored_tasks().await.unwrap(), 0);
    assert_eq!(rt.busy_workers(), 0);
    assert!(events.try_recv().is_err(), "nothing published");

    let created = create(&rt, at_limit).await;
    assert_eq!(rt.stored_tasks().await.unwrap(), 1);
    wait_terminal(&rt, &Scope::shared(), created.id()).await;
}

#[tokio::test(start_paused = true)]
async fn unknown_tool_is_refused_and_nothing_is_stored() {
    let rt = runtime(vec![echo_tool()], config());
    let error = rt.create(work("missing")).await.unwrap_err();
    assert_eq!(error, McpError::InvalidParams("Unknown tool".into()));
    assert_eq!(error.code(), -32602);
    assert_eq!(rt.stored_tasks().await.unwrap(), 0);
}

// ---- scopes and events -------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn another_scope_sees_an_unknown_task() {
    let probe = Probe::new();
    let rt = runtime(vec![ask_tool(probe.clone())], config());
    let created = create(&rt, work_in(&alice(), "ask", json!({}))).await;
    let parked = wait_input_keys(&rt, &alice(), created.id(), &["confirm"]).await;

    for scope in [bob(), Scope::shared()] {
        assert_unknown(rt.get(&scope, created.id()).await);
        assert_unknown(
            rt.update(
                &scope,
                created.id(),
                responses([("confirm", accept(json!({"x": 1})))]),
            )
            .await,
        );
        assert_unknown(rt.cancel(&scope, created.id()).await);
    }
    assert_eq!(*rt.get(&alice(), created.id()).await.unwrap(), *parked);
    assert!(probe.answers().is_empty());

    rt.update(
        &alice(),
        created.id(),
        responses([("confirm", accept(json!({"x": 2})))]),
    )
    .await
    .unwrap();
    let done = wait_terminal(&rt, &alice(), created.id()).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(probe.answers(), vec![accept(json!({"x": 2}))]);
}

#[tokio::test(start_paused = true)]
async fn subscribe_sees_creation_and_every_change_in_order() {
    let probe = Probe::new();
    let rt = runtime(vec![ask_two_tool(probe.clone())], config());
    let mut events = rt.subscribe();
    let created = create(&rt, work_in(&alice(), "ask_two", json!({}))).await;
    wait_input_keys(&rt, &alice(), created.id(), &["first", "second"]).await;
    tokio::time::advance(Duration::from_millis(1_500)).await;
    rt.update(
        &alice(),
        created.id(),
        responses([("second", accept(json!({"s": 2})))]),
    )
    .await
    .unwrap();
    tokio::time::advance(Duration::from_millis(500)).await;
    rt.update(
        &alice(),
        created.id(),
        responses([("first", accept(json!({"f": 1})))]),
    )
    .await
    .unwrap();
    let done = wait_terminal(&rt, &alice(), created.id()).await;

    let published = drain_for(&mut events, created.id());
    assert_event_order(&published);
    let seen: Vec<_> = published
        .iter()
        .map(|e| (e.task.revision(), e.task.status(), input_keys(&e.task)))
        .collect();
    use TaskStatus::*;
    assert_eq!(
        seen,
        vec![
            (1, Working, vec![]),
            (2, InputRequired, vec!["first".to_owned()]),
            (
                3,
                InputRequired,
                vec!["first".to_owned(), "second".to_owned()]
            ),
            (4, InputRequired, vec!["first".to_owned()]),
            (5, Working, vec![]),
            (6, Completed, vec![]),
        ]
    );
    assert!(published.iter().all(|e| e.scope == alice()));
    assert_eq!(*published.last().unwrap().task, *done);
    let updated: Vec<_> = published
        .iter()
        .map(|e| e.task.last_updated_at().unix_millis() - T0.unix_millis())
        .collect();
    assert_eq!(updated, [0, 0, 0, 1_500, 2_000, 2_000]);
}

// ---- run_sync ----------------------------------------------------------------------------------

#[tokio::test]
async fn run_sync_completes_with_result_type_complete() {
    let outcome = run_sync(&echo_tool(), SyncCall::new(obj(json!({"text": "sync"})))).await;
    assert_eq!(outcome, SyncOutcome::Complete(expected_echo("sync")));
    let outcome = run_sync(&mode_tool(), SyncCall::new(obj(json!({})))).await;
    assert_eq!(
        outcome,
        SyncOutcome::Complete(expected_echo("is_task=false"))
    );
}

/// Client capabilities declaring form elicitation.
fn elicits() -> JsonObject {
    obj(json!({"elicitation": {}}))
}

#[tokio::test]
async fn run_sync_lists_every_concurrent_input_and_completes_on_the_retry() {
    let probe = Probe::new();
    let tool = ask_two_tool(probe.clone());
    let outcome = run_sync(
        &tool,
        SyncCall::new(obj(json!({}))).with_client_capabilities(elicits()),
    )
    .await;
    let SyncOutcome::InputRequired(asked) = outcome else {
        panic!("expected input_required, got {outcome:?}");
    };
    assert_eq!(asked.keys().collect::<Vec<_>>(), ["first", "second"]);
    assert_eq!(asked["first"], elicit("First?"));
    assert_eq!(asked["second"], elicit("Second?"));

    // A partial retry asks only for what is still missing.
    let partial = run_sync(
        &tool,
        SyncCall::new(obj(json!({})))
            .with_client_capabilities(elicits())
            .with_input_responses(Some(obj(
                json!({"first": {"action": "decline", "content": {"x": 1}}}),
            ))),
    )
    .await;
    let SyncOutcome::InputRequired(asked) = partial else {
        panic!("expected input_required, got {partial:?}");
    };
    assert_eq!(asked.keys().collect::<Vec<_>>(), ["second"]);

    let retry = run_sync(
        &tool,
        SyncCall::new(obj(json!({})))
            .with_client_capabilities(elicits())
            .with_input_responses(Some(obj(
                json!({"first": accept(json!({"f": 1})), "second": accept(json!({"s": 2}))}),
            ))),
    )
    .await;
    let SyncOutcome::Complete(result) = retry else {
        panic!("expected complete, got {retry:?}");
    };
    assert_eq!(
        result["structuredContent"],
        json!({"first": accept(json!({"f": 1})), "second": accept(json!({"s": 2}))})
    );
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        probe.answers(),
        vec![accept(json!({"f": 1})), accept(json!({"s": 2}))]
    );
}

#[tokio::test]
async fn run_sync_errors_are_generic_or_passed_through() {
    let panic = run_sync(&panic_tool(), SyncCall::new(obj(json!({})))).await;
    assert_eq!(
        panic,
        SyncOutcome::Error(JsonRpcError {
            code: -32603,
            message: "Tool raised an exception".into(),
            data: None
        })
    );
    assert!(!format!("{panic:?}").contains("secret"));

    let not_object = run_sync(&not_object_tool(), SyncCall::new(obj(json!({})))).await;
    assert_eq!(
        not_object,
        SyncOutcome::Error(JsonRpcError {
            code: -32603,
            message: "Task worker returned a non-object result".into(),
            data: None
        })
    );

    let rpc = run_sync(&rpc_error_tool(), SyncCall::new(obj(json!({})))).await;
    assert_eq!(rpc, SyncOutcome::Error(rpc_error()));

    let is_error = run_sync(&is_error_tool(), SyncCall::new(obj(json!({})))).await;
    let SyncOutcome::Complete(result) = is_error else {
        panic!("a tool error is a complete result, got {is_error:?}");
    };
    assert_eq!(result["isError"], true);
}

/// A caller that goes away once its task is stored (a server drops the request of a client
/// that disconnected) does not leave the task stored but never started: it still runs.
#[tokio::test(start_paused = true)]
async fn a_creation_abandoned_after_the_task_is_stored_still_runs_it() {
    let rt = yielding_runtime(vec![echo_tool()], RuntimeConfig::default());
    let scope = Scope::shared();
    let mut events = rt.subscribe();
    let mut create = Box::pin(rt.create(work_in(&scope, "echo", json!({"text": "left"}))));
    while rt.stored_tasks().await.unwrap() == 0 {
        assert!(
            futures_util::poll!(&mut create).is_pending(),
            "the creation finished before the task was seen stored"
        );
        tokio::task::yield_now().await;
    }
    drop(create);
    let created = tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .expect("the task was stored but never published: its worker never started")
        .unwrap();
    let id = created.task.id().clone();
    let done = wait_terminal(&rt, &scope, &id).await;
    assert_eq!(
        *done.state(),
        TaskState::Completed {
            result: expected_echo("left").into()
        }
    );
}

/// A result nested deeper than a stored task may hold fails the task: kept, it could not be
/// read back (a JSON parser stops at 128 levels).
#[tokio::test(start_paused = true)]
async fn a_result_nested_too_deeply_fails_the_task() {
    let deep_tool = Tool::new("deep", "Answers a deeply nested result", |ctx| async move {
        let levels = ctx
            .arguments()
            .get("levels")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let mut deep = json!("bottom");
        for _ in 0..levels {
            deep = json!([deep]);
        }
        Ok(json!({"content": [], "structuredContent": {"deep": deep}}))
    });
    let rt = runtime(vec![deep_tool], RuntimeConfig::default());
    let scope = Scope::shared();
    let limit = tasks_core::MAX_RESULT_DEPTH as u64;
    // result → structuredContent → deep → `levels` arrays.
    let fits = rt
        .create(work_in(&scope, "deep", json!({ "levels": limit - 2 })))
        .await
        .unwrap();
    let fits = wait_terminal(&rt, &scope, fits.id()).await;
    assert_eq!(fits.status(), TaskStatus::Completed);
    let deeper = rt
        .create(work_in(&scope, "deep", json!({ "levels": limit - 1 })))
        .await
        .unwrap();
    let deeper = wait_terminal(&rt, &scope, deeper.id()).await;
    let TaskState::Failed { error } = deeper.state() else {
        panic!("expected failed, got {:?}", deeper.state());
    };
    assert_eq!(error.code, -32603);
    assert_eq!(
        error.message,
        "Task result is nested deeper than 120 levels"
    );
}

/// Work that would not read back once stored (built by a host whose parser honours
/// serde_json's markers, or by hand) is refused before anything is stored: arguments nested
/// past [`tasks_runtime::MAX_WORK_DEPTH`], or with a marker member name.
#[tokio::test(start_paused = true)]
async fn work_that_would_not_read_back_is_refused_before_it_is_stored() {
    let rt = runtime(vec![echo_tool()], RuntimeConfig::default());
    let scope = Scope::shared();
    let mut deep = json!(1);
    for _ in 0..tasks_runtime::MAX_WORK_DEPTH {
        deep = json!([deep]);
    }
    // `{"x": deep}` is one level deeper than `deep`.
    let error = rt
        .create(work_in(&scope, "echo", json!({ "x": deep })))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        McpError::InvalidParams(
            "Task input cannot be stored: the value nests 127 levels deep, more than the 126 allowed"
                .into()
        )
    );
    let marker = json!({"x": [{"$serde_json::private::RawValue": "1"}]});
    let error = rt
        .create(work_in(&scope, "echo", marker))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        McpError::InvalidParams(
            "Task input cannot be stored: a member name is reserved: $serde_json::private::RawValue"
                .into()
        )
    );
    assert_eq!(rt.stored_tasks().await.unwrap(), 0);
    // One level less is stored and runs.
    let mut fits = json!(1);
    for _ in 0..tasks_runtime::MAX_WORK_DEPTH - 1 {
        fits = json!([fits]);
    }
    let task = rt
        .create(work_in(&scope, "echo", json!({ "x": fits })))
        .await
        .unwrap();
    assert_eq!(rt.stored_tasks().await.unwrap(), 1);
    let done = wait_terminal(&rt, &scope, task.id()).await;
    assert_eq!(done.status(), TaskStatus::Completed);
}

/// A tool result, or a tool error's `data`, with a member named after a serde_json marker
/// fails the task with a clear message instead of storing what would not read back.
#[tokio::test(start_paused = true)]
async fn a_result_with_a_marker_name_fails_the_task() {
    let tool = Tool::new("marker", "Answers a marker member", |ctx| async move {
        let marker = json!({"$serde_json::private::RawValue": "[1]"});
        if ctx.arguments().contains_key("error") {
            return Err(tasks_runtime::ToolError::Rpc(JsonRpcError {
                code: -32000,
                message: "no".into(),
                data: Some(json!({ "d": marker })),
            }));
        }
        Ok(json!({"content": [], "structuredContent": marker}))
    });
    let rt = runtime(vec![tool], RuntimeConfig::default());
    let scope = Scope::shared();
    for (arguments, message) in [
        (json!({}), "Task result has a reserved member name"),
        (
            json!({"error": true}),
            "Task error data has a reserved member name",
        ),
    ] {
        let task = rt
            .create(work_in(&scope, "marker", arguments))
            .await
            .unwrap();
        let done = wait_terminal(&rt, &scope, task.id()).await;
        let TaskState::Failed { error } = done.state() else {
            panic!("expected failed, got {:?}", done.state());
        };
        assert_eq!((error.code, error.message.as_str()), (-32603, message));
    }
}
