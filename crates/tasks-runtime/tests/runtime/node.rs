//! A node started and stopped without any transport ([`TaskRuntime::start`], [`Node`]): its
//! shutdown drains running tasks, and a task still running when the drain ends is stopped
//! (neither failed nor cancelled) and taken over at once by the next node on the store,
//! because the shutdown ended the lease.

use std::sync::Arc;
use std::time::Duration;

use tasks_core::TaskStatus;
use tasks_runtime::store::MemoryStore;
use tasks_runtime::{
    text_result, Recovery, RuntimeConfig, Scope, TaskRuntime, TokioClock, Tool, ToolRegistry,
};
use tasks_test_support::{runtime::*, task_wait::*};
use tokio::sync::Notify;

/// A node over `store` whose `job` finishes when `gate` is notified (re-run when recovered).
fn node_over(store: &Arc<MemoryStore>, gate: &Arc<Notify>) -> TaskRuntime {
    let mut tools = ToolRegistry::new();
    let gate = gate.clone();
    tools.register(
        Tool::new("job", "Finishes when the test says so", move |_ctx| {
            let gate = gate.clone();
            async move {
                gate.notified().await;
                Ok(text_result("done"))
            }
        })
        .with_recovery(Recovery::rerun()),
    );
    TaskRuntime::with_clock(
        store.clone(),
        tools,
        RuntimeConfig::default(),
        Arc::new(TokioClock::starting_at(T0)),
    )
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_drains_running_tasks() {
    let store = Arc::new(MemoryStore::new());
    let gate = Arc::new(Notify::new());
    let runtime = node_over(&store, &gate);
    let node = runtime.start().await.unwrap();
    assert_eq!(node.recovered(), 0);
    let scope = Scope::shared();
    let id = runtime.create(work("job")).await.unwrap().id().clone();
    assert_eq!(runtime.busy_workers(), 1);

    let (drained, ()) = tokio::join!(node.shutdown(Duration::from_secs(30)), async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        gate.notify_one();
    });
    assert!(drained, "the task finished within the drain");
    assert_eq!(
        runtime.get(&scope, &id).await.unwrap().status(),
        TaskStatus::Completed
    );
}

#[tokio::test(start_paused = true)]
async fn a_task_left_running_by_a_shutdown_is_taken_over_by_the_next_node_at_once() {
    let store = Arc::new(MemoryStore::new());
    let gate = Arc::new(Notify::new());
    let first = node_over(&store, &gate);
    let node = first.start().await.unwrap();
    let scope = Scope::shared();
    let id = first.create(work("job")).await.unwrap().id().clone();
    assert!(
        !node.shutdown(Duration::from_secs(1)).await,
        "the drain ended with the task still running"
    );
    assert_eq!(
        first.get(&scope, &id).await.unwrap().status(),
        TaskStatus::Working,
        "a stopped run commits nothing: the task is neither failed nor cancelled"
    );
    drop(node);
    drop(first);

    // No lease to wait out: the shutdown ended it, so the next node's start takes over.
    let second = node_over(&store, &gate);
    let node = second.start().await.unwrap();
    assert_eq!(
        node.recovered(),
        1,
        "the next node takes the task over at once"
    );
    // The first node's run was stopped by its shutdown: this permit is the re-run's.
    gate.notify_one();
    let done = wait_terminal(&second, &scope, &id).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert!(node.shutdown(Duration::ZERO).await);
}
