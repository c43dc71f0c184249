//! A durable node on SQLite without any transport: a process that dies with a task running
//! leaves it to the next start of the node (the store forgets the previous process's lease
//! when it opens) ([`TaskRuntime::start`] takes it over and re-runs
//! it), whose shutdown drains it to completion.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tasks_core::TaskStatus;
use tasks_runtime::{text_result, Recovery, RuntimeConfig, Scope, TaskRuntime, Tool, ToolRegistry};
use tasks_store_sqlite::{SqliteOptions, SqliteStore};
use tasks_test_support::store::*;
use tokio::sync::Notify;

/// One server process: its own tokio runtime (dropped with it, which drops the tools still
/// running, like a crash) and a runtime over the database at `path`, whose `job` counts its
/// runs and finishes when `gate` is notified.
struct Process {
    tokio: tokio::runtime::Runtime,
    tasks: TaskRuntime,
}

impl Process {
    fn start(path: &Path, runs: &Arc<AtomicUsize>, gate: &Arc<Notify>) -> Process {
        let tokio = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let store = SqliteStore::open(path, SqliteOptions::default()).expect("open");
        let mut tools = ToolRegistry::new();
        let (runs, gate) = (runs.clone(), gate.clone());
        tools.register(
            Tool::new("job", "Finishes when the test says so", move |_ctx| {
                let (runs, gate) = (runs.clone(), gate.clone());
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    gate.notified().await;
                    Ok(text_result("done"))
                }
            })
            .with_recovery(Recovery::rerun()),
        );
        let tasks = TaskRuntime::new(Arc::new(store), tools, RuntimeConfig::default());
        Process { tokio, tasks }
    }
}

#[test]
fn a_durable_node_recovers_a_crashed_run_and_drains_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let runs = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Notify::new());
    let scope = Scope::new("alice");

    let first = Process::start(&path, &runs, &gate);
    let id = first.tokio.block_on(async {
        let node = first.tasks.start().await.expect("start");
        assert_eq!(node.recovered(), 0);
        let id = first
            .tasks
            .create(work(&scope, "job"))
            .await
            .expect("create")
            .id()
            .clone();
        while runs.load(Ordering::SeqCst) < 1 {
            tokio::task::yield_now().await;
        }
        // The process dies: no shutdown (dropping the node stops its background work and
        // leaves the lease as it is).
        drop(node);
        id
    });
    drop(first);

    let second = Process::start(&path, &runs, &gate);
    second.tokio.block_on(async {
        let node = second.tasks.start().await.expect("start");
        assert_eq!(
            node.recovered(),
            1,
            "the start takes over the task the dead process left"
        );
        let rerun = async {
            while runs.load(Ordering::SeqCst) < 2 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), rerun)
            .await
            .expect("the taken-over task is re-run");
        let (drained, ()) = tokio::join!(node.shutdown(Duration::from_secs(30)), async {
            gate.notify_one();
        });
        assert!(drained, "the re-run finished within the drain");
        let task = second.tasks.get(&scope, &id).await.expect("get");
        assert_eq!(task.status(), TaskStatus::Completed);
    });
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "one crashed run and one re-run"
    );
}
