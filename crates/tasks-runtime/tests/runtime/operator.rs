//! The operator's side of a runtime: the inventory across scopes, a cancel that needs no
//! caller's scope, the stuck gauge, and a store without an inventory.

use std::sync::Arc;

use serde_json::json;
use tasks_core::{TaskId, TaskState, TaskStatus, MESSAGE_CANCELLED_BY_OPERATOR};
use tasks_runtime::store::inventory::{InventoryQuery, StuckReason, StuckRules};
use tasks_runtime::store::MemoryStore;
use tasks_runtime::{OperatorCancel, OperatorError, RuntimeConfig, TaskRuntime, ToolRegistry};
use tasks_test_support::yielding::YieldingStore;
use tasks_test_support::{probe::*, runtime::*, wait::*};

use super::{create, metrics_text};

#[tokio::test(start_paused = true)]
async fn an_operator_sees_every_scope_and_cancels_without_the_callers_scope() {
    let probe = Probe::new();
    let rt = runtime(vec![spin_tool(probe.clone())], RuntimeConfig::default());
    // Registers this node, as a server's start does.
    rt.recover().await.unwrap();
    let mine = create(&rt, work_in(&alice(), "spin", json!({}))).await;
    let theirs = create(&rt, work_in(&bob(), "spin", json!({}))).await;
    yield_until("both spin", || probe.started() == 2).await;

    let page = rt.inventory(&InventoryQuery::default()).await.unwrap();
    let mut listed: Vec<(&str, &str)> = page
        .rows
        .iter()
        .map(|row| (row.id.as_str(), row.scope.as_str()))
        .collect();
    listed.sort_unstable();
    let (alice, bob) = (alice(), bob());
    let mut expected = vec![
        (mine.id().as_str(), alice.as_str()),
        (theirs.id().as_str(), bob.as_str()),
    ];
    expected.sort_unstable();
    assert_eq!(listed, expected, "both scopes' tasks");
    assert!(page.rows.iter().all(|row| row.node == Some(rt.node())));
    assert!(page
        .rows
        .iter()
        .all(|row| row.tool.as_deref() == Some("spin")));

    let outcome = rt.cancel_as_operator(theirs.id(), "ops@example").await;
    assert_eq!(outcome, Ok(OperatorCancel::Cancelled));
    let cancelled = rt.get(&bob, theirs.id()).await.unwrap();
    assert_eq!(*cancelled.state(), TaskState::Cancelled);
    assert_eq!(
        cancelled.status_message(),
        Some(MESSAGE_CANCELLED_BY_OPERATOR)
    );
    yield_until("its tool is stopped", || probe.stopped() == 1).await;
    assert_eq!(
        rt.get(&alice, mine.id()).await.unwrap().status(),
        TaskStatus::Working,
        "the other task runs on"
    );

    assert_eq!(
        rt.cancel_as_operator(theirs.id(), "ops@example").await,
        Ok(OperatorCancel::AlreadyEnded(TaskStatus::Cancelled)),
        "a second cancel changes nothing"
    );
    let unknown = TaskId::parse("no-such-task").unwrap();
    assert_eq!(
        rt.cancel_as_operator(&unknown, "ops@example").await,
        Err(OperatorError::NotFound)
    );
    let counts = rt.inventory_counts().await.unwrap();
    assert_eq!(
        (counts.by_status.working, counts.by_status.cancelled),
        (1, 1)
    );
    let nodes = rt.nodes().await.unwrap();
    assert_eq!(nodes.len(), 1, "this runtime's node: {nodes:?}");
    assert_eq!(
        (nodes[0].id, nodes[0].live, nodes[0].held),
        (rt.node(), true, 1)
    );
}

#[tokio::test(start_paused = true)]
async fn stuck_tasks_are_marked_and_counted_in_the_gauge() {
    let probe = Probe::new();
    let config = RuntimeConfig::default().with_stuck(StuckRules {
        working_ms: 1_000,
        input_required_ms: 1_000,
    });
    let rt = runtime(vec![spin_tool(probe.clone())], config);
    let task = create(&rt, work_in(&alice(), "spin", json!({}))).await;
    yield_until("it spins", || probe.started() == 1).await;
    rt.refresh_status_counts().await;
    let text = metrics_text(&rt);
    assert!(
        text.contains("tasks_stuck{reason=\"working_idle\"} 0"),
        "{text}"
    );

    tokio::time::advance(std::time::Duration::from_secs(6)).await;
    let page = rt.inventory(&InventoryQuery::default()).await.unwrap();
    assert!(
        matches!(
            page.rows[0].stuck,
            Some(StuckReason::Working { idle_ms }) if idle_ms >= 6_000
        ),
        "{:?}",
        page.rows[0]
    );
    assert_eq!(page.rows[0].id, *task.id());
    rt.refresh_status_counts().await;
    let text = metrics_text(&rt);
    assert!(
        text.contains("tasks_stuck{reason=\"working_idle\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("tasks_stuck{reason=\"holder_lost\"} 0"),
        "{text}"
    );
}

#[tokio::test]
async fn a_store_without_an_inventory_says_so() {
    // YieldingStore forwards every call but the inventory's.
    let rt = TaskRuntime::new(
        Arc::new(YieldingStore(MemoryStore::new())),
        ToolRegistry::new(),
        RuntimeConfig::default(),
    );
    assert_eq!(
        rt.inventory(&InventoryQuery::default()).await,
        Err(OperatorError::NotSupported)
    );
    assert_eq!(
        rt.inventory_counts().await,
        Err(OperatorError::NotSupported)
    );
    assert_eq!(rt.nodes().await, Err(OperatorError::NotSupported));
}
