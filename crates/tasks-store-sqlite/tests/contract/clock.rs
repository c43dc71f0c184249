//! The clock's high-water mark: a host clock set back across a restart brings no expired task
//! back (it is neither readable nor claimed and re-run), and a database of schema version 1 is
//! migrated to carry the mark.

use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use tasks_runtime::Creation;

use serde_json::Value;
use tasks_core::{McpError, Timestamp};
use tasks_runtime::store::Store;
use tasks_runtime::{Clock, Recovery, RuntimeConfig, Scope, TaskRuntime, Tool, ToolRegistry};
use tasks_store_sqlite::{SqliteOptions, SqliteStore};
use tasks_test_support::store::*;

/// A wall clock the test sets by hand.
struct HostClock(AtomicU64);

impl HostClock {
    fn at(time: Timestamp) -> Arc<HostClock> {
        Arc::new(HostClock(AtomicU64::new(time.unix_millis())))
    }

    fn set(&self, time: Timestamp) {
        self.0.store(time.unix_millis(), Ordering::Relaxed);
    }
}

impl Clock for HostClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_millis(self.0.load(Ordering::Relaxed))
    }
}

const HOUR_MS: u64 = 3_600_000;

/// One server process: its own tokio runtime (dropped with it, which drops the tools still
/// running, like a crash) and a runtime over the database at `path`, read through `clock`.
struct Process {
    tokio: tokio::runtime::Runtime,
    tasks: TaskRuntime,
}

impl Process {
    fn start(path: &Path, clock: Arc<HostClock>, runs: Arc<AtomicUsize>) -> Process {
        let tokio = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let store = SqliteStore::open(path, SqliteOptions::default()).expect("open");
        let mut tools = ToolRegistry::new();
        tools.register(
            Tool::new("job", "Runs until the process dies", move |_ctx| {
                let runs = runs.clone();
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    std::future::pending::<()>().await;
                    Ok(Value::Null)
                }
            })
            .with_recovery(Recovery::rerun()),
        );
        let tasks =
            TaskRuntime::with_clock(Arc::new(store), tools, RuntimeConfig::default(), clock);
        Process { tokio, tasks }
    }

    fn run<T>(&self, future: impl std::future::Future<Output = T>) -> T {
        self.tokio.block_on(future)
    }
}

#[test]
fn a_clock_set_back_across_a_restart_brings_no_expired_task_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let runs = Arc::new(AtomicUsize::new(0));
    let scope = Scope::new("alice");
    let clock = HostClock::at(T0);

    let first = Process::start(&path, clock.clone(), runs.clone());
    let expired = first.run(async {
        first.tasks.recover().await.expect("recover");
        first
            .tasks
            .create(Creation::new(work(&scope, "job")).ttl_ms(Some(60_000)))
            .await
            .expect("create")
    });
    let expired = expired.id().clone();
    // Two minutes on, the task has expired (not yet reaped); the node acts at that time.
    clock.set(at(120_000));
    first.run(async {
        first
            .tasks
            .recover()
            .await
            .expect("a write at the later time");
        assert!(matches!(
            first.tasks.get(&scope, &expired).await,
            Err(McpError::UnknownTask)
        ));
    });
    drop(first);
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // The host clock is set back an hour across the restart.
    let clock = HostClock::at(Timestamp::from_unix_millis(
        at(120_000).unix_millis() - HOUR_MS,
    ));
    let second = Process::start(&path, clock.clone(), runs.clone());
    second.run(async {
        assert_eq!(
            second.tasks.recover().await.expect("recover"),
            0,
            "the expired task is not taken over"
        );
        assert_eq!(
            second.tasks.now(),
            at(120_000),
            "time stands still at the highest time the store had acted on"
        );
        assert!(
            matches!(
                second.tasks.get(&scope, &expired).await,
                Err(McpError::UnknownTask)
            ),
            "the expired task stays expired"
        );
        let fresh = second
            .tasks
            .create(Creation::new(work(&scope, "job")).ttl_ms(Some(60_000)))
            .await
            .expect("create");
        assert_eq!(
            fresh.created_at(),
            at(120_000),
            "a new task is stamped with the held time, so its TTL is never shortened"
        );
        tokio::task::yield_now().await;
    });
    assert_eq!(runs.load(Ordering::SeqCst), 2, "only the new task ran");
    // Once the host clock passes the mark, time moves again.
    clock.set(at(180_000));
    assert_eq!(second.tasks.now(), at(180_000));
}

#[test]
fn a_version_1_database_is_migrated_with_its_latest_creation_as_the_mark() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let scope = Scope::new("alice");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    {
        let store = SqliteStore::open(&path, SqliteOptions::default()).expect("open");
        rt.block_on(async {
            for (name, created) in [("older", T0), ("newer", at(5_000))] {
                let task = tasks_core::NewTask::new(id(name), created, None, None);
                store
                    .create(task, work(&scope, name).into(), ROOMY, &NODE_A)
                    .await
                    .expect("create");
            }
        });
    }
    // What version 1 wrote: its schema (migrations/0001_init.sql) and rows, without the
    // `clock` table version 2 adds.
    let old = dir.path().join("version-1.db");
    crate::migrations::old_database(&old, 1, &path);
    let store = SqliteStore::open(&old, SqliteOptions::default()).expect("migrating open");
    assert_eq!(
        store.time_floor(),
        at(5_000),
        "the mark starts at the latest task creation"
    );
    rt.block_on(async {
        for name in ["older", "newer"] {
            assert!(
                store
                    .get(&scope, &id(name), at(6_000))
                    .await
                    .expect("get")
                    .is_some(),
                "{name} survives the migration"
            );
        }
    });
    drop(store);
    let conn = rusqlite::Connection::open(&old).expect("open the file");
    let version = crate::migrations::user_version(&conn);
    assert_eq!(version, crate::migrations::LATEST);
}

#[test]
fn every_commit_raises_the_mark_and_it_never_goes_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let store = SqliteStore::open(&path, SqliteOptions::default()).expect("open");
    assert_eq!(
        store.time_floor(),
        Timestamp::from_unix_millis(0),
        "a new file"
    );
    rt.block_on(async {
        store
            .register_node(&NODE_A, at(1_000), 60_000)
            .await
            .expect("register");
        store
            .heartbeat(&NODE_A, at(7_000), 60_000)
            .await
            .expect("heartbeat");
        // An earlier time (another caller's clock) never lowers it.
        store.reap(at(3_000)).await.expect("reap");
    });
    drop(store);
    let store = SqliteStore::open(&path, SqliteOptions::default()).expect("reopen");
    assert_eq!(store.time_floor(), at(7_000));
}
