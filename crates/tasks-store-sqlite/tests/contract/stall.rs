//! A stalled writer thread (a disk that stops answering): the node's lease renewals, which the
//! writer commits, run out of their deadline, the node reports the store unwritable, and it
//! fences itself (stops its workers) by its own clock once no renewal has succeeded for the
//! lease minus one tick, while the writer is still stalled. Real time, short leases.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tasks_runtime::store::Store;
use tasks_runtime::{
    LeaseConfig, RuntimeConfig, Scope, TaskRuntime, Tool, ToolError, ToolRegistry, Work,
};
use tasks_store_sqlite::{SqliteOptions, SqliteStore};

const LEASE: Duration = Duration::from_millis(2_000);
const TICK: Duration = Duration::from_millis(500);
/// The longest any wait of this test may take before it fails instead of hanging.
const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// Polls `cond` every 10 ms until it holds; fails the test after [`WAIT_LIMIT`].
async fn until(what: &str, cond: impl Fn() -> bool) {
    let wait = async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(WAIT_LIMIT, wait)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting until {what}"));
}

/// Counts the runs of `wait` that started and stopped.
#[derive(Default)]
struct Runs {
    started: AtomicUsize,
    stopped: AtomicUsize,
}

/// Counts a stop when the tool's future ends or is dropped.
struct Stop(Arc<Runs>);

impl Drop for Stop {
    fn drop(&mut self) {
        self.0.stopped.fetch_add(1, Ordering::SeqCst);
    }
}

fn wait_tool(runs: Arc<Runs>) -> Tool {
    Tool::new("wait", "Runs until cancelled", move |ctx| {
        let runs = runs.clone();
        async move {
            runs.started.fetch_add(1, Ordering::SeqCst);
            let _stop = Stop(runs);
            ctx.cancellation().cancelled().await;
            Err::<serde_json::Value, _>(ToolError::Cancelled)
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_fences_itself_while_the_sqlite_writer_stalls() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = Arc::new(
        SqliteStore::open(dir.path().join("tasks.db"), SqliteOptions::default()).expect("open"),
    );
    let store: Arc<dyn Store> = sqlite.clone();
    let runs = Arc::new(Runs::default());
    let mut tools = ToolRegistry::new();
    tools.register(wait_tool(runs.clone()));
    let config = RuntimeConfig::default()
        .with_leases(LeaseConfig::default().with_lease(LEASE).with_tick(TICK));
    let node = TaskRuntime::new(store, tools, config);
    node.recover().await.unwrap();
    let liveness = node.spawn_liveness();
    let work = Work {
        tool: "wait".into(),
        arguments: serde_json::Map::new(),
        input_responses: None,
        client_capabilities: json!({}).as_object().cloned().unwrap(),
        scope: Scope::shared(),
        trace_parent: None,
        sealed_principal: None,
    };
    node.create(work).await.unwrap();
    until("the task runs", || runs.started.load(Ordering::SeqCst) == 1).await;
    let first = node.node();

    let stalled_at = tokio::time::Instant::now();
    let pause = sqlite.pause();
    until("the node reports the store unwritable", || {
        !node.store_writable()
    })
    .await;
    until("the worker is stopped", || {
        runs.stopped.load(Ordering::SeqCst) == 1
    })
    .await;
    let fenced_after = stalled_at.elapsed();
    assert_ne!(node.node(), first, "the node took a new id");
    // The last renewal that succeeded was sent at most a tick (plus its deadline) before the
    // stall, so the fence cannot come sooner than the lease minus two ticks and a half.
    assert!(
        fenced_after >= LEASE - TICK * 2 - TICK / 2,
        "fenced {fenced_after:?} after the stall began"
    );

    // The writer answers again: the node registers its new id and is writable again.
    drop(pause);
    until("the store is writable again", || node.store_writable()).await;
    liveness.abort();
}
