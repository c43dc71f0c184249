//! A node whose database connections stall (the server accepts but never answers), through a
//! TCP proxy on 127.0.0.1 that the test pauses: its lease renewals run out of their deadline,
//! it reports the store unwritable, and it stops its workers while the stall lasts; once the
//! proxy forwards again, the same store (its pool and its abandoned calls) serves again.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::proxy::{through, upstream, StallProxy};
use common::*;
use tasks_runtime::store::Store;
use tasks_runtime::store::StoreError;
use tasks_runtime::{
    LeaseConfig, Limits, RuntimeConfig, Scope, TaskRuntime, Tool, ToolError, ToolRegistry,
};
use tasks_store_postgres::PostgresStore;

/// The longest any wait of this test may take before it fails instead of hanging.
const WAIT_LIMIT: Duration = Duration::from_secs(20);

/// Polls `cond` every 10 ms until it holds; fails the test after [`WAIT_LIMIT`], with
/// `state()` in the message.
async fn until(what: &str, cond: impl Fn() -> bool, state: impl Fn() -> String) {
    let wait = async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(WAIT_LIMIT, wait)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting until {what} ({})", state()));
}

/// Counts a stop when the tool's future ends or is dropped (a stopped worker drops it).
struct Stop(Arc<AtomicUsize>);

impl Drop for Stop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_database_stalls_reports_it_and_fences_itself() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let proxy = StallProxy::start(upstream(&db.url)).await;
    let store = PostgresStore::connect(
        &through(&db.url, proxy.addr),
        Database::options(&schema).with_pool_size(4),
    )
    .await
    .expect("connect through the proxy");

    let started = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let mut tools = ToolRegistry::new();
    let (on_start, on_stop) = (started.clone(), stopped.clone());
    tools.register(Tool::new("wait", "Runs until cancelled", move |ctx| {
        let (on_start, on_stop) = (on_start.clone(), on_stop.clone());
        async move {
            on_start.fetch_add(1, Ordering::SeqCst);
            let _stop = Stop(on_stop);
            ctx.cancellation().cancelled().await;
            Err::<serde_json::Value, _>(ToolError::Cancelled)
        }
    }));
    let config = RuntimeConfig::default()
        .with_leases(
            LeaseConfig::default()
                .with_lease(Duration::from_secs(6))
                .with_tick(Duration::from_secs(2)),
        )
        .with_limits(Limits::default().with_store_deadline(Duration::from_secs(3)));
    let store: Arc<dyn Store> = Arc::new(store);
    let node = TaskRuntime::new(store, tools, config);
    node.recover().await.expect("recover");
    let liveness = node.spawn_liveness();
    let task = node
        .create(work(&Scope::shared(), "wait"))
        .await
        .expect("create");
    let state = || {
        format!(
            "store writable: {}, node: {}, runs started: {}, stopped: {}",
            node.store_writable(),
            node.node(),
            started.load(Ordering::SeqCst),
            stopped.load(Ordering::SeqCst)
        )
    };
    until(
        "the task runs",
        || started.load(Ordering::SeqCst) == 1,
        state,
    )
    .await;
    let first = node.node();

    proxy.stall();
    until(
        "the node reports the store unwritable",
        || !node.store_writable(),
        state,
    )
    .await;
    until(
        "the worker is stopped while the database stalls",
        || stopped.load(Ordering::SeqCst) == 1,
        state,
    )
    .await;
    assert_ne!(node.node(), first, "the node took a new id");

    proxy.resume();
    until(
        "the store is writable again",
        || node.store_writable(),
        state,
    )
    .await;
    let read = tokio::time::timeout(WAIT_LIMIT, node.get(&Scope::shared(), task.id()))
        .await
        .expect("the read ends");
    assert!(read.is_ok(), "the store serves again: {read:?}");
    liveness.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_finds_no_free_connection_is_refused_as_unavailable() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let proxy = StallProxy::start(upstream(&db.url)).await;
    let store = PostgresStore::connect(
        &through(&db.url, proxy.addr),
        Database::options(&schema).with_pool_size(1),
    )
    .await
    .expect("connect through the proxy");
    let alice = Scope::new("alice");
    store
        .create(
            new_task("t1", None),
            work(&alice, "t1").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");

    // The only connection stalls under a read; the next call finds none free.
    proxy.stall();
    let stalled = {
        let (store, alice) = (store.clone(), alice.clone());
        tokio::spawn(async move { store.get(&alice, &id("t1"), T0).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = tokio::time::timeout(WAIT_LIMIT, store.get(&alice, &id("t1"), T0))
        .await
        .expect("the call waits for a connection for a bounded time");
    assert!(
        matches!(refused, Err(StoreError::Unavailable(_))),
        "no connection free: {refused:?}"
    );

    proxy.resume();
    let read = tokio::time::timeout(WAIT_LIMIT, stalled)
        .await
        .expect("the stalled read ends once the database answers")
        .expect("the read task");
    assert!(read.expect("the stalled read succeeds").is_some());
}
