//! A quick measurement of create throughput: `CONCURRENCY` tokio tasks each create tasks one
//! after another for a while, under `synchronous=FULL` and `NORMAL`. Not a test; run with
//!
//! ```text
//! cargo run --release -p tasks-store-sqlite --example create_throughput [DIR] [SECONDS]
//! ```
//!
//! DIR (default: a temporary directory) decides the file system measured.
//!
//! With `COUNT=N` it instead creates and completes N tasks (a creation and a worker's terminal
//! write each, as a task whose tool finishes at once costs the store) under `synchronous=FULL`
//! by `CALLERS` concurrent callers (default 1: every write then commits alone), and exits: run under `valgrind --tool=callgrind` for two values of N,
//! the difference of the instruction counts over the difference of N is the store's CPU cost
//! of one task (both threads, the caller's and the writer's; fsync waits are not instructions),
//! without the start-up. `COMPLETE=0` leaves the tasks working (the creation alone): the least
//! a task whose tool finishes at once could cost if it were stored with one write.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tasks_core::{apply, Event, NewTask, TaskId, Timestamp};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{Authority, CasOutcome, NodeId, Store};
use tasks_runtime::{Scope, Work};
use tasks_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};

const CONCURRENCY: usize = 64;

fn work(scope: &Scope) -> Work {
    let arguments = match json!({"text": "hello", "n": 3}) {
        serde_json::Value::Object(map) => map,
        _ => unreachable!(),
    };
    Work {
        tool: "echo".into(),
        arguments,
        input_responses: None,
        client_capabilities: Default::default(),
        scope: scope.clone(),
        trace_parent: None,
        sealed_principal: None,
    }
}

async fn measure(dir: &std::path::Path, synchronous: Synchronous, seconds: u64) {
    let path = dir.join(format!("bench-{synchronous:?}.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let options = SqliteOptions::default().with_synchronous(synchronous);
    let store = Arc::new(SqliteStore::open(&path, options).expect("open"));
    let limits = CreateLimits {
        max_tasks: usize::MAX,
        max_active_per_scope: usize::MAX,
        lease_required: false,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let node = NodeId::from_bytes([1; 16]);
    let commits = store.commits();
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for worker in 0..CONCURRENCY {
        let (store, stop, done) = (store.clone(), stop.clone(), done.clone());
        set.spawn(async move {
            let scope = Scope::new(format!("scope-{}", worker % 16));
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let id = TaskId::parse(&format!("w{worker}-{i}")).expect("id");
                let task = NewTask::new(id, Timestamp::from_unix_millis(1), Some(3_600_000), None);
                store
                    .create(task, work(&scope).into(), limits, &node)
                    .await
                    .expect("create");
                done.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
        });
    }
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    while set.join_next().await.is_some() {}
    let elapsed = started.elapsed().as_secs_f64();
    let creates = done.load(Ordering::Relaxed);
    let batches = store.commits() - commits;
    println!(
        "{synchronous:?}: {creates} creates in {elapsed:.1} s = {:.0}/s, {batches} commits \
         ({:.1} creates per commit), {CONCURRENCY} concurrent tasks",
        creates as f64 / elapsed,
        creates as f64 / batches.max(1) as f64
    );
}

/// `COUNT=N`: N tasks created (and completed when `complete`), by `callers` concurrent callers
/// (each one task after another; with one caller every write commits alone).
async fn counted(dir: &std::path::Path, count: u64, callers: u64, complete: bool) {
    let path = dir.join("counted.db");
    let store = Arc::new(SqliteStore::open(&path, SqliteOptions::default()).expect("open"));
    let commits = store.commits();
    let mut set = tokio::task::JoinSet::new();
    for caller in 0..callers {
        let store = store.clone();
        set.spawn(async move {
            for i in (caller..count).step_by(usize::try_from(callers).expect("callers")) {
                create_and_complete(&store, i, complete).await;
            }
        });
    }
    while set.join_next().await.is_some() {}
    let commits = store.commits() - commits;
    eprintln!("{count} tasks by {callers} callers in {commits} commits");
}

/// Creates task `task-{i}` and, when `complete`, completes it as its worker would.
async fn create_and_complete(store: &SqliteStore, i: u64, complete: bool) {
    let limits = CreateLimits {
        max_tasks: usize::MAX,
        max_active_per_scope: usize::MAX,
        lease_required: false,
    };
    let node = NodeId::from_bytes([1; 16]);
    let scope = Scope::new("scope");
    let result = match json!({"content": [{"type": "text", "text": "done"}], "isError": false}) {
        serde_json::Value::Object(map) => map,
        _ => unreachable!(),
    };
    let now = Timestamp::from_unix_millis(2);
    let id = TaskId::parse(&format!("task-{i}")).expect("id");
    let task = NewTask::new(id, Timestamp::from_unix_millis(1), Some(3_600_000), None);
    let created = store
        .create(task, work(&scope).into(), limits, &node)
        .await
        .expect("create");
    if !complete {
        return;
    }
    let completed = Event::Completed {
        result: result.into(),
    };
    let update = apply(&created.snapshot.task, completed, now)
        .expect("the reducer completes a working task")
        .into_update()
        .expect("completing changes the task");
    let outcome = store
        .transition(Authority::Worker(&created.lease), update, now)
        .await
        .expect("transition");
    assert!(matches!(outcome, CasOutcome::Committed(_)), "{outcome:?}");
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let env = |name: &str| std::env::var(name).ok().and_then(|n| n.parse().ok());
    if let Some(count) = env("COUNT") {
        let temp = tempfile::tempdir().expect("temp dir");
        let dir = std::env::args().nth(1).map(std::path::PathBuf::from);
        let callers = env("CALLERS").unwrap_or(1).max(1);
        let complete = env("COMPLETE").unwrap_or(1) != 0;
        let dir = dir.as_deref().unwrap_or(temp.path());
        return counted(dir, count, callers, complete).await;
    }
    let mut args = std::env::args().skip(1);
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| temp.path().to_path_buf());
    let seconds = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    for synchronous in [Synchronous::Full, Synchronous::Normal] {
        measure(&dir, synchronous, seconds).await;
    }
}
