//! What a store wrote reads back after the store is dropped and the file opened again; the
//! file passes SQLite's integrity check; the previous process's tasks are orphans at once; a
//! task row of the previous build takes progress without a schema change.

use std::collections::BTreeMap;
use std::sync::Arc;

use tasks_core::{Task, TaskStatus};
use tasks_runtime::store::{Authority, CasOutcome, Lease, Liveness, NodeId, Store};
use tasks_runtime::{Scope, Work};
use tasks_store_contract::{one_of_four, ROWS_BEFORE_PROGRESS, ROW_WITH_PROGRESS_END};
use tasks_store_sqlite::{SqliteOptions, SqliteStore};
use tasks_test_support::store::*;

struct Expected {
    scope: Scope,
    task: Task,
    work: Option<Work>,
    lease: Lease,
}

async fn commit(store: &SqliteStore, scope: &Scope, update: tasks_core::TaskUpdate) -> Task {
    let expected = update.task().clone();
    match store
        .transition(Authority::Request(scope), update, at(50))
        .await
        .expect("transition")
    {
        CasOutcome::Committed(snapshot) => {
            assert_eq!(*snapshot.task, expected);
            expected
        }
        other => panic!("expected a commit, got {other:?}"),
    }
}

/// Writes one task of every shape; returns what each must read back as.
async fn workload(store: &SqliteStore) -> BTreeMap<String, Expected> {
    let alice = Scope::new("alice-hash");
    let bob = Scope::new("bob-hash");
    store
        .register_node(&NODE_A, T0, 3_600_000)
        .await
        .expect("register");
    let mut expected = BTreeMap::new();
    let shapes: [(&str, &Scope, Option<u64>); 7] = [
        ("running", &alice, Some(3_600_000)),
        ("asking", &alice, Some(3_600_000)),
        ("answered", &bob, Some(3_600_000)),
        ("done", &alice, Some(3_600_000)),
        ("cancelled", &bob, Some(3_600_000)),
        ("forever", &bob, None),
        ("expired", &alice, Some(10)),
    ];
    for (name, scope, ttl) in shapes {
        let work = work(scope, name);
        let created = store
            .create(new_task(name, ttl), work.clone().into(), ROOMY, &NODE_A)
            .await
            .expect("create");
        let first = created.snapshot.task.as_ref().clone();
        let task = match name {
            "asking" => commit(store, scope, ask(&first, "confirm", at(1))).await,
            "answered" => {
                let asked = commit(store, scope, ask(&first, "confirm", at(1))).await;
                commit(store, scope, answer(&asked, "confirm", at(2))).await
            }
            "done" => commit(store, scope, complete(&first, at(3))).await,
            "cancelled" => commit(store, scope, cancel(&first, at(4))).await,
            _ => first,
        };
        let work = (!task.is_terminal()).then_some(work);
        expected.insert(
            name.to_owned(),
            Expected {
                scope: scope.clone(),
                task,
                work,
                lease: created.lease,
            },
        );
    }
    expected
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn everything_written_reads_back_after_reopening() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let store = SqliteStore::open(&path, SqliteOptions::default()).expect("open");
    let expected = workload(&store).await;
    let count = store.task_count().await.expect("count");
    assert_eq!(count, expected.len());
    drop(store);

    let store = SqliteStore::open(&path, SqliteOptions::default()).expect("reopen");
    assert_eq!(store.path(), path.as_path());
    assert_eq!(
        store.task_count().await.expect("count"),
        count,
        "counts equal"
    );
    let now = at(100);
    for (name, want) in &expected {
        let task_id = id(name);
        let read = store.get(&want.scope, &task_id, now).await.expect("get");
        if name == "expired" {
            assert!(
                read.is_none(),
                "an expired task stays absent after reopening"
            );
            continue;
        }
        let read = read.unwrap_or_else(|| panic!("{name} must read back"));
        assert_eq!(*read.task, want.task, "{name}: the task reads back equal");
        assert_eq!(read.scope, want.scope, "{name}: the scope reads back");
        let work = store.work(&want.scope, &task_id).await.expect("work");
        assert_eq!(
            work.as_deref(),
            want.work.as_ref(),
            "{name}: the work reads back"
        );
    }
    let answered = &expected["answered"].task;
    assert!(
        answered.answer("confirm").is_some(),
        "the accepted answer survives"
    );
    assert_eq!(expected["asking"].task.status(), TaskStatus::InputRequired);

    // The lock proved the previous process dead: its active tasks are claimable at once,
    // although NODE_A's lease (an hour) has not run out.
    let node_c = NodeId::from_bytes([0xc; 16]);
    store
        .register_node(&node_c, now, 1_000)
        .await
        .expect("register");
    let claimed = store.claim_orphans(&node_c, now, 100).await.expect("claim");
    let mut names: Vec<&str> = claimed
        .iter()
        .map(|c| c.snapshot.task.id().as_str())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["answered", "asking", "forever", "running"],
        "exactly the active, unexpired tasks are orphans"
    );
    for claim in &claimed {
        let want = &expected[claim.snapshot.task.id().as_str()];
        assert_eq!(
            *claim.snapshot.task, want.task,
            "a claim carries the stored task"
        );
        assert_eq!(
            Some(claim.work.as_ref()),
            want.work.as_ref(),
            "and its work"
        );
        assert_eq!(
            claim.lease,
            Lease {
                node: node_c,
                generation: want.lease.generation + 1,
                attempt: want.lease.attempt
            },
            "the generation is raised, the attempt is not (it is charged when a re-run starts)"
        );
    }
    assert_eq!(
        store
            .heartbeat(&NODE_A, now, 1_000)
            .await
            .expect("heartbeat"),
        Liveness::Lost,
        "the previous process's node is gone"
    );
    // The previous holder's lease is fenced; the new one writes.
    let running = &expected["running"];
    let stale = complete(&running.task, now);
    assert!(matches!(
        store
            .transition(Authority::Worker(&running.lease), stale.clone(), now)
            .await
            .expect("transition"),
        CasOutcome::Fenced
    ));
    let lease = claimed
        .iter()
        .find(|c| c.snapshot.task.id().as_str() == "running")
        .map(|c| c.lease)
        .expect("running was claimed");
    assert!(matches!(
        store
            .transition(Authority::Worker(&lease), stale, now)
            .await
            .expect("transition"),
        CasOutcome::Committed(_)
    ));
    drop(store);

    // The claim and the completion were durable too.
    let store = SqliteStore::open(&path, SqliteOptions::default()).expect("reopen again");
    let read = store
        .get(&running.scope, &id("running"), now)
        .await
        .expect("get")
        .expect("found");
    assert_eq!(read.task.status(), TaskStatus::Completed);
    let reaped = store.reap(at(3_600_000)).await.expect("reap");
    assert_eq!(
        reaped.len(),
        count - 1,
        "everything but the task without TTL expires"
    );
    drop(store);
    let store = SqliteStore::open(&path, SqliteOptions::default()).expect("reopen after reap");
    assert_eq!(
        store.task_count().await.expect("count"),
        1,
        "reaping was durable"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_file_passes_the_integrity_check_after_a_workload() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let store = Arc::new(SqliteStore::open(&path, SqliteOptions::default()).expect("open"));
    workload(&store).await;
    // Concurrent creates and completions, then a big reap.
    let mut set = tokio::task::JoinSet::new();
    for i in 0..200 {
        let store = store.clone();
        set.spawn(async move {
            let scope = Scope::new(format!("scope-{}", i % 7));
            let created = store
                .create(
                    new_task(&format!("load-{i}"), Some(1_000)),
                    work(&scope, "load").into(),
                    ROOMY,
                    &NODE_A,
                )
                .await
                .expect("create");
            if i % 2 == 0 {
                let done = complete(&created.snapshot.task, at(5));
                store
                    .transition(Authority::Worker(&created.lease), done, at(5))
                    .await
                    .expect("complete");
            }
        });
    }
    while let Some(joined) = set.join_next().await {
        joined.expect("task panicked");
    }
    let reaped = store.reap(at(1_000)).await.expect("reap");
    assert_eq!(
        reaped.len(),
        201,
        "the load tasks and the short-lived one expire"
    );
    drop(set);
    let store = Arc::into_inner(store).expect("the only handle");
    drop(store);

    let conn =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open read-only");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .expect("integrity_check");
    assert_eq!(check, "ok");
    let journal: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .expect("journal_mode");
    assert_eq!(journal, "wal");
    let auto_vacuum: i64 = conn
        .query_row("PRAGMA auto_vacuum", [], |row| row.get(0))
        .expect("auto_vacuum");
    assert_eq!(auto_vacuum, 2, "auto_vacuum is INCREMENTAL");
    let version = crate::migrations::user_version(&conn);
    assert_eq!(version, crate::migrations::LATEST);
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM tasks", [], |row| row.get(0))
        .expect("count");
    assert_eq!(rows, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_big_reap_returns_the_space_to_the_file_system() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let options =
        SqliteOptions::default().with_synchronous(tasks_store_sqlite::Synchronous::Normal);
    let store = Arc::new(SqliteStore::open(&path, options.clone()).expect("open"));
    let scope = Scope::new("s");
    let mut set = tokio::task::JoinSet::new();
    for i in 0..640 {
        let store = store.clone();
        let mut work = work(&scope, "big");
        work.arguments
            .insert("blob".into(), "b".repeat(16 * 1024).into());
        set.spawn(async move {
            store
                .create(
                    new_task(&format!("big-{i}"), Some(10)),
                    work.into(),
                    ROOMY,
                    &NODE_A,
                )
                .await
                .expect("create");
        });
    }
    while let Some(joined) = set.join_next().await {
        joined.expect("task panicked");
    }
    store
        .create(
            new_task("keep", None),
            work(&scope, "keep").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");
    let full = page_count(&path);
    assert!(full > 2_500, "the tasks fill {full} pages");
    assert_eq!(store.reap(at(10)).await.expect("reap").len(), 640);
    let store = Arc::into_inner(store).expect("the only handle");
    drop(store);
    let after = page_count(&path);
    assert!(
        after < full / 10,
        "the file shrank from {full} to {after} pages"
    );
    let store = SqliteStore::open(&path, options).expect("reopen");
    assert_eq!(store.task_count().await.expect("count"), 1);
}

/// Pages in the file and its WAL, as a separate connection sees them.
fn page_count(path: &std::path::Path) -> i64 {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open read-only");
    conn.query_row("PRAGMA page_count", [], |row| row.get(0))
        .expect("page_count")
}

#[test]
fn a_new_database_keeps_its_schema_in_the_main_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let store = tasks_store_sqlite::SqliteStore::open(&path, Default::default()).expect("open");
    // Read the main file alone, as if the WAL had been lost: the schema is already there.
    let copy = dir.path().join("copy.db");
    std::fs::copy(&path, &copy).expect("copy the main file");
    drop(store);
    let connection = rusqlite::Connection::open(&copy).expect("open the copy");
    let version = crate::migrations::user_version(&connection);
    assert!(version >= 1, "the schema version is in the main file");
    let tables: i64 = connection
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'tasks'",
            [],
            |row| row.get(0),
        )
        .expect("schema");
    assert_eq!(tables, 1, "the tasks table is in the main file");
}

/// Progress needs no schema change: the `task` column's JSON gains an optional `progress`
/// member. A row as the previous build wrote it (no such member) reads as a task without
/// progress, takes progress, and keeps it across reopening; a row with a member its reader
/// does not know still reads (which is how a build without progress reads a row with it).
#[test]
fn a_row_of_the_previous_build_reads_and_keeps_the_progress_it_takes() {
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
            for name in ["old", "unknown-member"] {
                let task = tasks_core::NewTask::new(id(name), T0, None, None);
                store
                    .create(task, work(&scope, name).into(), ROOMY, &NODE_A)
                    .await
                    .expect("create");
            }
        });
    }
    {
        let conn = rusqlite::Connection::open(&path).expect("open the file");
        for (name, row) in ROWS_BEFORE_PROGRESS {
            conn.execute("UPDATE tasks SET task = ?1 WHERE id = ?2", [row, name])
                .expect("write the row as stored before");
        }
    }
    let store = SqliteStore::open(&path, SqliteOptions::default()).expect("open");
    let read = rt.block_on(async {
        for name in ["old", "unknown-member"] {
            let read = store
                .get(&scope, &id(name), at(10))
                .await
                .expect("get")
                .expect("found");
            assert_eq!(read.task.progress(), None, "{name}");
            assert_eq!(*read.task, Task::new(id(name), T0, None, None), "{name}");
        }
        store
            .get(&scope, &id("old"), at(10))
            .await
            .expect("get")
            .expect("found")
    });
    let update = one_of_four(&read.task, at(20));
    let progress = update.task().progress();
    rt.block_on(commit(&store, &scope, update));
    drop(store);
    let store = SqliteStore::open(&path, SqliteOptions::default()).expect("reopen");
    rt.block_on(async {
        let read = store
            .get(&scope, &id("old"), at(30))
            .await
            .expect("get")
            .expect("found");
        assert_eq!(read.task.progress(), progress, "kept across reopening");
        assert_eq!(read.task.revision(), 2);
    });
    drop(store);
    let conn = rusqlite::Connection::open(&path).expect("open the file");
    let stored: String = conn
        .query_row("SELECT task FROM tasks WHERE id = 'old'", [], |row| {
            row.get(0)
        })
        .expect("the row");
    assert!(
        stored.ends_with(ROW_WITH_PROGRESS_END),
        "one optional member more: {stored}"
    );
    let version = crate::migrations::user_version(&conn);
    assert_eq!(version, crate::migrations::LATEST, "no schema change");
}
