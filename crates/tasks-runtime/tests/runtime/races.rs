//! Races on a multi-thread runtime: each test loops many iterations of one race and checks the
//! invariants that must hold whichever side wins. No sleeps: waits are event-driven.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tasks_core::{TaskState, TaskStatus};
use tasks_runtime::{text_result, Limits, RuntimeConfig, Scope, TaskRuntime, Tool};

use tasks_test_support::events::{assert_event_order, events_through};
use tasks_test_support::protocol::accept;
use tasks_test_support::{probe::*, runtime::*, task_wait::*, wait::*};

fn roomy() -> RuntimeConfig {
    RuntimeConfig::default().with_limits(Limits::default().with_max_workers(10_000))
}

/// `quick`: yields `arguments.yields` times, then completes.
fn quick_tool() -> Tool {
    Tool::new("quick", "Completes after a few yields", |ctx| async move {
        let yields = ctx
            .arguments()
            .get("yields")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        for _ in 0..yields {
            tokio::task::yield_now().await;
        }
        Ok(text_result("done"))
    })
}

/// `ask_once`: asks under `confirm`, counts the answers it receives, answers `who`.
fn ask_once_tool(received: Arc<AtomicUsize>) -> Tool {
    Tool::new("ask_once", "Asks once", move |ctx| {
        let received = received.clone();
        async move {
            let answer = ctx.input("confirm", elicit("Proceed?")).await?;
            received.fetch_add(1, Ordering::SeqCst);
            let who = answer.as_elicit().and_then(|a| a.str_field("who"));
            Ok(text_result(who.unwrap_or("?")))
        }
    })
}

/// Checks that two reads agree and that the published history is well ordered.
async fn assert_settled(
    rt: &TaskRuntime,
    scope: &Scope,
    id: &tasks_core::TaskId,
    events: &mut tokio::sync::broadcast::Receiver<tasks_runtime::StatusEvent>,
) -> Arc<tasks_core::Task> {
    let first = rt.get(scope, id).await.unwrap();
    let second = rt.get(scope, id).await.unwrap();
    assert!(first.is_terminal());
    assert_eq!(first.status(), second.status());
    assert_eq!(first.revision(), second.revision());
    let published = events_through(events, id, first.revision()).await;
    assert_event_order(&published);
    assert_eq!(
        published.last().map(|e| e.task.revision()),
        Some(first.revision()),
        "the last published state is the stored one"
    );
    first
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_racing_completion_settles_once() {
    // Alternate the plain memory store and one that yields around every call.
    let runtimes = [
        runtime(vec![quick_tool()], roomy()),
        yielding_runtime(vec![quick_tool()], roomy()),
    ];
    let scope = Scope::shared();
    let (mut completed, mut cancelled) = (0, 0);
    for i in 0..2_000u64 {
        let rt = &runtimes[(i % 2) as usize];
        let mut events = rt.subscribe();
        let created = rt
            .create(work_in(&scope, "quick", json!({"yields": i % 3})))
            .await
            .unwrap();
        let canceller = {
            let (rt, scope, id) = (rt.clone(), scope.clone(), created.id().clone());
            tokio::spawn(async move { rt.cancel(&scope, &id).await })
        };
        canceller.await.unwrap().expect("cancel is acked");
        let done = wait_terminal(rt, &scope, created.id()).await;
        // Wait for the worker to be gone too, so a late commit would show.
        yield_until("the worker slot is released", || rt.busy_workers() == 0).await;
        let settled = assert_settled(rt, &scope, created.id(), &mut events).await;
        assert_eq!(*settled, *done);
        assert_eq!(settled.revision(), 2, "exactly one terminal change");
        match settled.state() {
            TaskState::Completed { result } => {
                assert_eq!(result.to_object()["content"][0]["text"], "done");
                completed += 1;
            }
            TaskState::Cancelled => cancelled += 1,
            other => panic!("unexpected terminal state {other:?}"),
        }
    }
    assert_eq!(completed + cancelled, 2_000);
    assert!(cancelled > 0, "the cancel side never won");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_updates_for_one_key_deliver_it_once() {
    let received = Arc::new(AtomicUsize::new(0));
    let runtimes = [
        runtime(vec![ask_once_tool(received.clone())], roomy()),
        yielding_runtime(vec![ask_once_tool(received.clone())], roomy()),
    ];
    let scope = Scope::shared();
    for i in 0..1_000usize {
        let rt = &runtimes[i % 2];
        let mut events = rt.subscribe();
        let created = rt.create(work("ask_once")).await.unwrap();
        wait_input_keys(rt, &scope, created.id(), &["confirm"]).await;
        let updates: Vec<_> = ["left", "right"]
            .into_iter()
            .map(|who| {
                let (rt, scope, id) = (rt.clone(), scope.clone(), created.id().clone());
                tokio::spawn(async move {
                    rt.update(
                        &scope,
                        &id,
                        responses([("confirm", accept(json!({"who": who})))]),
                    )
                    .await
                })
            })
            .collect();
        for update in updates {
            update.await.unwrap().expect("both updates are acked");
        }
        let done = wait_terminal(rt, &scope, created.id()).await;
        yield_until("the worker is done", || rt.busy_workers() == 0).await;
        let settled = assert_settled(rt, &scope, created.id(), &mut events).await;
        assert_eq!(*settled, *done);
        let TaskState::Completed { result } = settled.state() else {
            panic!("expected completed, got {:?}", settled.state());
        };
        let result = result.to_object();
        let winner = result["content"][0]["text"].as_str().unwrap();
        assert!(winner == "left" || winner == "right", "{winner}");
        assert_eq!(settled.revision(), 4, "input_required, working, completed");
        assert_eq!(
            received.load(Ordering::SeqCst),
            i + 1,
            "the value arrives once"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creations_get_distinct_ids() {
    let rt = runtime(vec![quick_tool()], roomy());
    let tasks: Vec<_> = (0..2_000)
        .map(|i| {
            let rt = rt.clone();
            tokio::spawn(async move {
                let scope = Scope::new(format!("scope-{}", i % 4));
                let created = rt
                    .create(work_in(&scope, "quick", json!({})))
                    .await
                    .unwrap();
                (scope, created)
            })
        })
        .collect();
    let mut ids = HashSet::new();
    let mut created = Vec::new();
    for task in tasks {
        let (scope, task) = task.await.unwrap();
        assert_eq!(task.revision(), 1);
        assert!(
            ids.insert(task.id().clone()),
            "duplicate id {:?}",
            task.id()
        );
        created.push((scope, task));
    }
    assert_eq!(ids.len(), 2_000);
    assert_eq!(rt.stored_tasks().await.unwrap(), 2_000);
    for (scope, task) in &created {
        let done = wait_terminal(&rt, scope, task.id()).await;
        assert_eq!(done.status(), TaskStatus::Completed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_racing_parking_and_answering_settles_once() {
    let scope = Scope::shared();
    let (mut completed, mut cancelled) = (0, 0);
    for i in 0..2_000usize {
        // A fresh runtime and probe per round, so a straggling worker cannot blur the counts.
        let probe = Probe::new();
        let rt = if i % 4 < 2 {
            runtime(vec![ask_tool(probe.clone())], roomy())
        } else {
            yielding_runtime(vec![ask_tool(probe.clone())], roomy())
        };
        let mut events = rt.subscribe();
        let created = rt.create(work("ask")).await.unwrap();
        if i % 2 == 1 {
            // Cancel strictly while parked.
            wait_input_keys(&rt, &scope, created.id(), &["confirm"]).await;
        }
        // Cancel races the worker parking (even i) and an answer (every i).
        let canceller = {
            let (rt, scope, id) = (rt.clone(), scope.clone(), created.id().clone());
            tokio::spawn(async move { rt.cancel(&scope, &id).await })
        };
        let answerer = {
            let (rt, scope, id) = (rt.clone(), scope.clone(), created.id().clone());
            tokio::spawn(async move {
                rt.update(
                    &scope,
                    &id,
                    responses([("confirm", accept(json!({"i": i})))]),
                )
                .await
            })
        };
        canceller.await.unwrap().expect("cancel is acked");
        answerer.await.unwrap().expect("update is acked");
        wait_terminal(&rt, &scope, created.id()).await;
        yield_until("the tool is stopped", || probe.stopped() == probe.started()).await;
        yield_until("the slot is released", || rt.busy_workers() == 0).await;
        let settled = assert_settled(&rt, &scope, created.id(), &mut events).await;
        let answers = probe.answers();
        assert!(answers.len() <= 1, "one answer at most: {answers:?}");
        match settled.state() {
            TaskState::Cancelled => cancelled += 1,
            TaskState::Completed { result } => {
                assert_eq!(answers, vec![accept(json!({"i": i}))]);
                assert_eq!(
                    result.to_object()["content"][0]["text"],
                    format!("answer: {}", accept(json!({"i": i})))
                );
                completed += 1;
            }
            other => panic!("unexpected terminal state {other:?}"),
        }
        // Whoever won, a later update is acked and changes nothing.
        rt.update(
            &scope,
            created.id(),
            responses([("confirm", json!({"late": true}))]),
        )
        .await
        .unwrap();
        assert_eq!(*rt.get(&scope, created.id()).await.unwrap(), *settled);
    }
    assert_eq!(completed + cancelled, 2_000);
    assert!(cancelled > 0, "the cancel side never won");
}
