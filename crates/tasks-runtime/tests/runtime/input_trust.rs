//! What a tool may ask, what an answer means, idempotent creation, status messages and
//! progress, through the runtime (issue "input you can trust"). Tokio's paused clock
//! throughout.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tasks_runtime::Creation;

use serde_json::{json, Value};
use tasks_core::input::{ClientCapability, ElicitAnswer};
use tasks_core::TASK_ID_RANDOM_BYTES;
use tasks_core::{JsonRpcError, McpError, TaskId, TaskState, TaskStatus};
use tasks_runtime::{run_sync, text_result, RuntimeConfig, Scope, SyncCall, SyncOutcome, Tool};
use tasks_test_support::events::drain_for;
use tasks_test_support::protocol::accept;
use tasks_test_support::{probe::*, runtime::*, task_wait::*};

/// `consent`: asks `confirm` with a form of one required boolean `confirm`; answers what the
/// typed answer means.
fn consent_tool() -> Tool {
    Tool::new("consent", "Asks for consent", |ctx| async move {
        let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}},
                            "required": ["confirm"]});
        let text = match ctx
            .elicit("confirm", "Delete q3-report.txt?", schema)
            .await?
        {
            ElicitAnswer::Accept(content) => format!("accepted {}", Value::Object(content)),
            ElicitAnswer::Decline => "declined".to_owned(),
            ElicitAnswer::Cancel => "cancelled".to_owned(),
        };
        Ok(text_result(text))
    })
}

fn work_declaring(tool: &str, capabilities: Value) -> tasks_runtime::Work {
    let mut work = work(tool);
    work.client_capabilities = obj(capabilities);
    work
}

fn text_of(task: &tasks_core::Task) -> String {
    match task.state() {
        TaskState::Completed { result } => result.to_object()["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        other => panic!("not completed: {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_decline_carrying_content_is_a_decline() {
    let rt = runtime(vec![consent_tool()], RuntimeConfig::default());
    let scope = Scope::shared();
    for (answer, expected) in [
        (
            json!({"action": "decline", "content": {"confirm": true}}),
            "declined",
        ),
        (
            json!({"action": "cancel", "content": {"confirm": true}}),
            "cancelled",
        ),
        (
            accept(json!({"confirm": false})),
            "accepted {\"confirm\":false}",
        ),
        (
            accept(json!({"confirm": true})),
            "accepted {\"confirm\":true}",
        ),
    ] {
        let task = rt.create(work("consent")).await.unwrap();
        wait_input_keys(&rt, &scope, task.id(), &["confirm"]).await;
        rt.update(&scope, task.id(), responses([("confirm", answer.clone())]))
            .await
            .unwrap();
        let done = wait_terminal(&rt, &scope, task.id()).await;
        assert_eq!(text_of(&done), expected, "{answer}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_malformed_answer_is_refused_whole_and_the_task_stays_parked() {
    let probe = Probe::new();
    let rt = runtime(vec![ask_two_tool(probe.clone())], RuntimeConfig::default());
    let scope = Scope::shared();
    let task = rt.create(work("ask_two")).await.unwrap();
    let parked = wait_input_keys(&rt, &scope, task.id(), &["first", "second"]).await;
    for bad in [
        json!({"action": "maybe", "content": {"confirm": true}}),
        json!({"confirm": true}),
        accept(json!({"confirm": "yes"})),
        json!({"action": "accept"}),
    ] {
        let refused = rt
            .update(
                &scope,
                task.id(),
                responses([
                    ("first", accept(json!({"confirm": true}))),
                    ("second", bad.clone()),
                ]),
            )
            .await;
        let Err(McpError::InvalidParams(message)) = refused else {
            panic!("{bad}: expected -32602, got {refused:?}");
        };
        assert!(
            message.starts_with("Invalid input response for second: "),
            "{message}"
        );
        let now = rt.get(&scope, task.id()).await.unwrap();
        assert_eq!(*now, *parked, "{bad}: nothing of the update was applied");
    }
    assert!(probe.answers().is_empty());
    rt.update(
        &scope,
        task.id(),
        responses([
            ("first", accept(json!({"confirm": true}))),
            ("second", json!({"action": "decline"})),
        ]),
    )
    .await
    .unwrap();
    let done = wait_terminal(&rt, &scope, task.id()).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(
        probe.answers(),
        vec![
            accept(json!({"confirm": true})),
            json!({"action": "decline"})
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_undeclared_input_fails_the_task_without_parking() {
    let rt = runtime(vec![consent_tool()], RuntimeConfig::default());
    let scope = Scope::shared();
    let mut events = rt.subscribe();
    for declared in [
        json!({}),
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
        json!({"sampling": {}}),
        json!({"elicitation": {"url": {}}}),
    ] {
        let task = rt
            .create(work_declaring("consent", declared.clone()))
            .await
            .unwrap();
        let done = wait_terminal(&rt, &scope, task.id()).await;
        assert_eq!(
            *done.state(),
            TaskState::Failed {
                error: Box::new(JsonRpcError {
                    code: -32021,
                    message: "Missing required client capability".into(),
                    data: Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}})),
                })
            },
            "{declared}"
        );
        let statuses: Vec<TaskStatus> = drain_for(&mut events, task.id())
            .iter()
            .map(|e| e.task.status())
            .collect();
        assert_eq!(
            statuses,
            [TaskStatus::Working, TaskStatus::Failed],
            "{declared}: never input_required"
        );
    }
}

#[tokio::test]
async fn a_synchronous_call_is_refused_for_an_undeclared_input_and_a_url_only_client() {
    for declared in [
        json!({}),
        json!({"elicitation": {"url": {}}}),
        json!({"roots": {}}),
    ] {
        let outcome = run_sync(
            &consent_tool(),
            SyncCall::new(obj(json!({}))).with_client_capabilities(obj(declared.clone())),
        )
        .await;
        let SyncOutcome::Error(error) = outcome else {
            panic!("{declared}: expected -32021, got {outcome:?}");
        };
        assert_eq!(error.code, -32021, "{declared}");
        assert_eq!(
            error.data,
            Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}}))
        );
    }
    let outcome = run_sync(
        &consent_tool(),
        SyncCall::new(obj(json!({}))).with_client_capabilities(obj(json!({"elicitation": {}}))),
    )
    .await;
    assert!(
        matches!(outcome, SyncOutcome::InputRequired(_)),
        "{outcome:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_tool_can_check_first_and_do_without() {
    let tool = Tool::new("fallback", "Asks only when it may", |ctx| async move {
        if !ctx.client_declares(ClientCapability::ElicitationForm) {
            return Ok(text_result("assumed no"));
        }
        let answer = ctx
            .elicit("ok", "OK?", json!({"type": "object", "properties": {}}))
            .await?;
        Ok(text_result(format!("{answer:?}")))
    });
    let rt = runtime(vec![tool], RuntimeConfig::default());
    let task = rt
        .create(work_declaring("fallback", json!({"sampling": {}})))
        .await
        .unwrap();
    let done = wait_terminal(&rt, &Scope::shared(), task.id()).await;
    assert_eq!(text_of(&done), "assumed no");
}

#[tokio::test(start_paused = true)]
async fn a_malformed_request_is_the_tools_fault() {
    let tool = Tool::new("bad", "Asks nonsense", |ctx| async move {
        let request = tasks_core::input::InputRequest {
            method: "ping".into(),
            params: None,
        };
        ctx.input("x", request).await?;
        Ok(text_result("unreachable"))
    });
    let rt = runtime(vec![tool], RuntimeConfig::default());
    let task = rt.create(work("bad")).await.unwrap();
    let done = wait_terminal(&rt, &Scope::shared(), task.id()).await;
    let TaskState::Failed { error } = done.state() else {
        panic!("{done:?}");
    };
    assert_eq!(
        (error.code, error.message.as_str()),
        (-32603, "Tool made a malformed input request")
    );
}

#[tokio::test(start_paused = true)]
async fn creation_under_a_derived_id_is_idempotent() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let tool = Tool::new("once", "Counts its runs", move |_ctx| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Ok(text_result("ran")) }
    });
    let rt = runtime(vec![tool], RuntimeConfig::default());
    let id = TaskId::from_random_bytes([7; TASK_ID_RANDOM_BYTES]);
    let first = rt
        .create(Creation::new(work("once")).retry_id(id.clone()))
        .await
        .unwrap();
    assert_eq!(first.id(), &id);
    wait_terminal(&rt, &Scope::shared(), &id).await;
    let replay = rt
        .create(Creation::new(work("once")).retry_id(id.clone()))
        .await
        .unwrap();
    assert_eq!(replay.id(), &id);
    assert_eq!(
        replay.status(),
        TaskStatus::Completed,
        "the existing task, as it is now"
    );
    // Concurrent replays: one creation, one run.
    let other = TaskId::from_random_bytes([8; TASK_ID_RANDOM_BYTES]);
    let (a, b) = tokio::join!(
        rt.create(Creation::new(work("once")).retry_id(other.clone())),
        rt.create(Creation::new(work("once")).retry_id(other.clone())),
    );
    assert_eq!(a.unwrap().id(), b.unwrap().id());
    wait_terminal(&rt, &Scope::shared(), &other).await;
    tokio::task::yield_now().await;
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(rt.stored_tasks().await.unwrap(), 2);
    // Another scope cannot reach the task through its id: it gets its own.
    let theirs = rt
        .create(Creation::new(work_in(&alice(), "once", json!({}))).retry_id(id.clone()))
        .await;
    assert!(
        theirs.is_err(),
        "the id is taken by another scope: {theirs:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn status_messages_are_coalesced_to_one_write_per_poll_interval() {
    let tool = Tool::new("reporter", "Reports progress", |ctx| async move {
        assert!(ctx.set_status_message("step 1"));
        // Let the first write happen, then report four times within one interval.
        tokio::time::sleep(Duration::from_millis(1)).await;
        for step in 2..=5 {
            ctx.set_status_message(format!("step {step}"));
        }
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        ctx.set_status_message("step 6");
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        Ok(text_result("done"))
    });
    let config = RuntimeConfig::default().with_poll_interval_ms(std::num::NonZeroU64::new(250));
    let rt = runtime(vec![tool], config);
    let mut events = rt.subscribe();
    let task = rt.create(work("reporter")).await.unwrap();
    wait_terminal(&rt, &Scope::shared(), task.id()).await;
    let history = drain_for(&mut events, task.id());
    let messages: Vec<Option<String>> = history
        .iter()
        .map(|e| e.task.status_message().map(str::to_owned))
        .collect();
    let at = |i: usize| history[i].task.last_updated_at().unix_millis();
    assert_eq!(
        messages,
        [
            Some("Task accepted".to_owned()),
            Some("step 1".to_owned()),
            Some("step 5".to_owned()),
            Some("step 6".to_owned()),
            None,
        ],
        "step 1 at once, steps 2-5 coalesced into the latest one interval later"
    );
    assert_eq!(
        at(1),
        T0.unix_millis(),
        "the first message is written at once"
    );
    assert_eq!(at(2) - at(1), 250, "the next one a poll interval later");
    let sync = run_sync(
        &Tool::new("sync", "", |ctx| async move {
            Ok(text_result(ctx.set_status_message("x").to_string()))
        }),
        SyncCall::new(obj(json!({}))),
    )
    .await;
    let SyncOutcome::Complete(result) = sync else {
        panic!("{sync:?}");
    };
    assert_eq!(
        result["content"][0]["text"], "false",
        "a synchronous call has no status"
    );
}

#[tokio::test(start_paused = true)]
async fn progress_is_stored_coalesced_with_the_status_message_and_only_moves_forward() {
    let tool = Tool::new("counter", "Reports progress", |ctx| async move {
        assert!(ctx.progress(1.0, Some(10.0), None), "written at once");
        tokio::time::sleep(Duration::from_millis(1)).await;
        // Within one interval: coalesced into the latest, with the latest message.
        assert!(ctx.progress(2.0, Some(10.0), None));
        assert!(ctx.progress(3.0, Some(10.0), Some("three")));
        for (done, total) in [
            (3.0, Some(10.0)),
            (2.5, Some(10.0)),
            (f64::NAN, None),
            (-1.0, None),
            (11.0, Some(10.0)),
            (3.5, Some(0.0)),
        ] {
            assert!(!ctx.progress(done, total, None), "{done} of {total:?}");
        }
        // A total that is not a number is left out, as in a synchronous call.
        assert!(ctx.progress(4.0, Some(f64::INFINITY), None));
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        // A message and a progress set together are one write.
        assert!(ctx.set_status_message("five"));
        assert!(ctx.progress(5.0, Some(10.0), None));
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        Ok(text_result("done"))
    });
    let config = RuntimeConfig::default().with_poll_interval_ms(std::num::NonZeroU64::new(250));
    let rt = runtime(vec![tool], config);
    let mut events = rt.subscribe();
    let task = rt.create(work("counter")).await.unwrap();
    let done = wait_terminal(&rt, &Scope::shared(), task.id()).await;
    let history = drain_for(&mut events, task.id());
    /// A task's progress (done, total) and status message.
    type Seen = (Option<(f64, Option<f64>)>, Option<String>);
    let seen: Vec<Seen> = history
        .iter()
        .map(|e| {
            (
                e.task.progress().map(|p| (p.done(), p.total())),
                e.task.status_message().map(str::to_owned),
            )
        })
        .collect();
    let at = |i: usize| history[i].task.last_updated_at().unix_millis();
    assert_eq!(
        seen,
        [
            (None, Some("Task accepted".to_owned())),
            (Some((1.0, Some(10.0))), Some("Task accepted".to_owned())),
            (Some((4.0, None)), Some("three".to_owned())),
            (Some((5.0, Some(10.0))), Some("five".to_owned())),
            (Some((5.0, Some(10.0))), None),
        ],
        "one write per interval, the latest progress and message winning; kept once completed"
    );
    assert_eq!(
        at(1),
        T0.unix_millis(),
        "the first report is written at once"
    );
    assert_eq!(at(2) - at(1), 250, "the next one a poll interval later");
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(
        detailed_json(&done)["_meta"]["dev.mcp-tasks/progress"],
        json!({"progress": 5, "total": 10}),
        "tasks/get shows it"
    );
    // A synchronous call without a progress token takes no progress.
    let sync = run_sync(
        &Tool::new("sync", "", |ctx| async move {
            Ok(text_result(ctx.progress(1.0, None, None).to_string()))
        }),
        SyncCall::new(obj(json!({}))),
    )
    .await;
    let SyncOutcome::Complete(result) = sync else {
        panic!("{sync:?}");
    };
    assert_eq!(result["content"][0]["text"], "false");
}

#[tokio::test(start_paused = true)]
async fn the_last_progress_reported_is_written_before_the_outcome() {
    let tool = Tool::new(
        "finisher",
        "Reports its end and returns",
        |ctx| async move {
            assert!(ctx.progress(1.0, Some(2.0), None));
            tokio::time::sleep(Duration::from_millis(1)).await;
            // Within the interval of the first write, then done at once.
            assert!(ctx.progress(2.0, Some(2.0), None));
            Ok(text_result("done"))
        },
    );
    let config = RuntimeConfig::default().with_poll_interval_ms(std::num::NonZeroU64::new(250));
    let rt = runtime(vec![tool], config);
    let mut events = rt.subscribe();
    let task = rt.create(work("finisher")).await.unwrap();
    let done = wait_terminal(&rt, &Scope::shared(), task.id()).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(
        done.progress().map(|p| p.done()),
        Some(2.0),
        "ends at 2 of 2"
    );
    let progress: Vec<Option<f64>> = drain_for(&mut events, task.id())
        .iter()
        .map(|e| e.task.progress().map(|p| p.done()))
        .collect();
    assert_eq!(progress, [None, Some(1.0), Some(2.0), Some(2.0)]);
}

/// The last report before the outcome keeps its message: the revision written just before
/// the outcome shows the progress and the message reported together (not the message of the
/// write an interval earlier). The same for a message set beside the progress, and for a
/// task that fails.
#[tokio::test(start_paused = true)]
async fn the_last_progress_keeps_its_message_when_the_outcome_follows_at_once() {
    let tool = Tool::new(
        "finisher",
        "Reports its end and returns",
        |ctx| async move {
            assert!(ctx.progress(1.0, Some(3.0), Some("Computing: 1 of 3 s")));
            tokio::time::sleep(Duration::from_millis(1)).await;
            // Within the interval of the first write, then done at once.
            assert!(ctx.progress(2.0, Some(3.0), Some("Computing: 2 of 3 s")));
            if ctx.arguments().contains_key("separately") {
                assert!(ctx.set_status_message("Computing: 3 of 3 s"));
                assert!(ctx.progress(3.0, Some(3.0), None));
            }
            if ctx.arguments().contains_key("fail") {
                return Err(tasks_runtime::ToolError::tool("gave up"));
            }
            Ok(text_result("done"))
        },
    );
    let config = RuntimeConfig::default().with_poll_interval_ms(std::num::NonZeroU64::new(250));
    let rt = runtime(vec![tool], config);
    for (arguments, last) in [
        (json!({}), (2.0, "Computing: 2 of 3 s")),
        (json!({"separately": true}), (3.0, "Computing: 3 of 3 s")),
        (json!({"fail": true}), (2.0, "Computing: 2 of 3 s")),
    ] {
        let mut events = rt.subscribe();
        let task = rt
            .create(work_in(&Scope::shared(), "finisher", arguments.clone()))
            .await
            .unwrap();
        wait_terminal(&rt, &Scope::shared(), task.id()).await;
        let seen: Vec<(Option<f64>, Option<String>)> = drain_for(&mut events, task.id())
            .iter()
            .map(|e| {
                (
                    e.task.progress().map(|p| p.done()),
                    e.task.status_message().map(str::to_owned),
                )
            })
            .collect();
        let before_outcome = &seen[seen.len() - 2];
        assert_eq!(
            before_outcome,
            &(Some(last.0), Some(last.1.to_owned())),
            "{arguments}: {seen:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_half_answered_task_holds_no_worker_slot() {
    // Found by the hostile pass: answering one key of two resumed that branch with a slot while
    // the task stayed input_required, so such tasks could use up every worker.
    let probe = Probe::new();
    let config =
        RuntimeConfig::default().with_limits(tasks_runtime::Limits::default().with_max_workers(1));
    let rt = runtime(vec![ask_two_tool(probe.clone()), echo_tool()], config);
    let scope = Scope::shared();
    let task = rt.create(work("ask_two")).await.unwrap();
    wait_input_keys(&rt, &scope, task.id(), &["first", "second"]).await;
    rt.update(
        &scope,
        task.id(),
        responses([("first", accept(json!({"n": 1})))]),
    )
    .await
    .unwrap();
    let half = wait_input_keys(&rt, &scope, task.id(), &["second"]).await;
    assert_eq!(half.status_message(), Some("Waiting for input: second"));
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        rt.busy_workers(),
        0,
        "a task still waiting for input holds no slot"
    );
    let other = rt
        .create(work("echo"))
        .await
        .expect("the only slot is free");
    wait_terminal(&rt, &scope, other.id()).await;
    rt.update(
        &scope,
        task.id(),
        responses([("second", accept(json!({"n": 2})))]),
    )
    .await
    .unwrap();
    let done = wait_terminal(&rt, &scope, task.id()).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(
        probe.answers(),
        vec![accept(json!({"n": 1})), accept(json!({"n": 2}))]
    );
}

#[tokio::test]
async fn an_answer_already_given_is_used_whatever_the_retry_declares() {
    // Found by the hostile pass: a retry carrying a valid answer but declaring nothing failed
    // with -32021, although nothing needed to be asked.
    let outcome = run_sync(
        &consent_tool(),
        SyncCall::new(obj(json!({}))).with_input_responses(Some(obj(
            json!({"confirm": accept(json!({"confirm": true}))}),
        ))),
    )
    .await;
    let SyncOutcome::Complete(result) = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(result["content"][0]["text"], "accepted {\"confirm\":true}");
}

/// A synchronous call's retry runs the handler from the start; `is_retry` and
/// `input_responses` let it skip what it did in the first round.
#[tokio::test(start_paused = true)]
async fn a_retry_runs_the_handler_again_and_says_it_is_a_retry() {
    let side_effects = Arc::new(AtomicUsize::new(0));
    let counted = side_effects.clone();
    let tool = Tool::new("once", "Acts once, then asks", move |ctx| {
        let counted = counted.clone();
        async move {
            if !ctx.is_retry() {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            let answer = ctx
                .elicit("go", "Go on?", json!({"type": "object"}))
                .await?;
            Ok(text_result(format!("retry={} {answer:?}", ctx.is_retry())))
        }
    });
    let caps = obj(json!({"elicitation": {}}));
    let first = run_sync(
        &tool,
        SyncCall::new(obj(json!({}))).with_client_capabilities(caps.clone()),
    )
    .await;
    assert!(matches!(first, SyncOutcome::InputRequired(_)), "{first:?}");
    let retry = run_sync(
        &tool,
        SyncCall::new(obj(json!({})))
            .with_client_capabilities(caps)
            .with_input_responses(Some(obj(
                json!({"go": {"action": "accept", "content": {}}}),
            ))),
    )
    .await;
    let SyncOutcome::Complete(result) = retry else {
        panic!("expected a result, got {retry:?}");
    };
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("retry=true"),
        "{result:?}"
    );
    assert_eq!(
        side_effects.load(Ordering::SeqCst),
        1,
        "done in round one only"
    );
}
