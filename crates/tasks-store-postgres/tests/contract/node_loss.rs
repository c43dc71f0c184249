//! Two nodes (two runtimes, each with its own store connection) on one PostgreSQL schema: a
//! node that stops renewing its lease (as a killed process does) shows its running tasks stuck
//! in the other node's inventory (`holder_lost`, naming it), and the nodes list shows its lease
//! run out; once the live node's claim pass takes them over, they are that node's, on their
//! second generation, and nothing is stuck. The claim pass is called by the test, so the
//! window between "lease ran out" and "claimed" is the test's to look at.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::Database;
use serde_json::json;
use tasks_runtime::store::inventory::{InventoryQuery, StuckReason};
use tasks_runtime::store::Store;
use tasks_runtime::{
    Creation, LeaseConfig, Recovery, RuntimeConfig, Scope, TaskRuntime, Tool, ToolError,
    ToolRegistry, Work,
};

/// The longest the test waits for the lease to run out before it fails.
const WAIT_LIMIT: Duration = Duration::from_secs(20);

fn tools() -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    tools.register(
        Tool::new("wait", "Runs until cancelled", |ctx| async move {
            ctx.cancellation().cancelled().await;
            Err::<serde_json::Value, _>(ToolError::Cancelled)
        })
        .with_recovery(Recovery::Rerun { max_attempts: 3 }),
    );
    tools
}

fn node(store: Arc<dyn Store>, lease: Duration) -> TaskRuntime {
    let leases = LeaseConfig::default()
        .with_lease(lease)
        .with_tick(Duration::from_millis(500));
    TaskRuntime::new(store, tools(), RuntimeConfig::default().with_leases(leases))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_node_s_tasks_show_stuck_then_claimed() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let dying = node(Arc::new(db.connect(&schema).await), Duration::from_secs(2));
    let live = node(Arc::new(db.connect(&schema).await), Duration::from_secs(60));
    // Registered once each; neither runs its liveness loop, so the dying node never renews.
    dying.recover().await.expect("register the dying node");
    live.recover().await.expect("register the live node");

    let scope = Scope::new("alice");
    let mut ids = Vec::new();
    for _ in 0..2 {
        let work = Work::new(
            scope.clone(),
            "wait",
            json!({}).as_object().cloned().unwrap_or_default(),
        );
        let task = dying.create(Creation::new(work)).await.expect("create");
        ids.push(task.id().clone());
    }
    ids.sort();

    let stuck_only = InventoryQuery {
        stuck_only: true,
        ..InventoryQuery::default()
    };
    let deadline = tokio::time::Instant::now() + WAIT_LIMIT;
    let page = loop {
        let page = live.inventory(&stuck_only).await.expect("inventory");
        if page.rows.len() == 2 {
            break page;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the dying node's tasks never showed stuck: {page:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut listed: Vec<_> = page.rows.iter().map(|row| row.id.clone()).collect();
    listed.sort();
    assert_eq!(listed, ids, "exactly the dying node's tasks are stuck");
    for row in &page.rows {
        assert_eq!(
            row.stuck,
            Some(StuckReason::HolderLost { node: dying.node() }),
            "stuck because their holder's lease ran out: {row:?}"
        );
        assert_eq!((row.node, row.generation), (Some(dying.node()), Some(1)));
    }
    let counts = live.inventory_counts().await.expect("counts");
    assert_eq!(counts.stuck.holder_lost, 2);
    let nodes = live.nodes().await.expect("nodes");
    let lost = nodes
        .iter()
        .find(|n| n.id == dying.node())
        .expect("the dying node is still listed until a claim pass");
    assert!(!lost.live, "its lease ran out: {lost:?}");
    assert_eq!(lost.held, 2);

    // The live node's claim pass takes both over (re-run: the tool's policy).
    assert_eq!(live.recover().await.expect("claim pass"), 2);
    let page = live
        .inventory(&InventoryQuery::default())
        .await
        .expect("inventory");
    assert_eq!(page.rows.len(), 2);
    for row in &page.rows {
        assert_eq!(
            row.node,
            Some(live.node()),
            "claimed by the live node: {row:?}"
        );
        assert_eq!(row.generation, Some(2), "one takeover: {row:?}");
        assert_eq!(row.stuck, None, "a live holder and a fresh change: {row:?}");
    }
    let nodes = live.nodes().await.expect("nodes");
    assert!(
        nodes.iter().all(|n| n.id != dying.node()),
        "the claim pass removed the lapsed node: {nodes:?}"
    );
    for id in &ids {
        live.cancel(&scope, id).await.expect("cancel");
    }
}
