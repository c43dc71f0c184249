//! Group commit: writes queued together commit in one transaction; a failed commit fails every
//! write of its batch and leaves the read model and the counters as they were; a write whose
//! SQL fails (a full database) fails alone while the rest of its batch commits.

use std::sync::Arc;

use tasks_core::TaskStatus;
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{Authority, CasOutcome, Store, StoreError};
use tasks_runtime::Scope;
use tasks_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};
use tasks_test_support::store::*;

fn open(path: &std::path::Path, synchronous: Synchronous) -> SqliteStore {
    let options = SqliteOptions::default().with_synchronous(synchronous);
    SqliteStore::open(path, options).expect("open")
}

/// Waits (yielding, no timer) until `n` writes are queued behind a paused writer.
async fn until_queued(store: &SqliteStore, n: usize) {
    while store.queued() < n {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_queued_together_commit_in_one_transaction() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(open(&dir.path().join("tasks.db"), Synchronous::Full));
    let before = store.commits();
    let pause = store.pause();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..100 {
        let store = store.clone();
        set.spawn(async move {
            let scope = Scope::new("s");
            store
                .create(
                    new_task(&format!("t-{i}"), None),
                    work(&scope, "x").into(),
                    ROOMY,
                    &NODE_A,
                )
                .await
        });
    }
    until_queued(&store, 100).await;
    drop(pause);
    while let Some(joined) = set.join_next().await {
        joined.expect("task panicked").expect("create");
    }
    assert_eq!(
        store.commits() - before,
        1,
        "100 queued creates share one commit"
    );
    assert_eq!(store.task_count().await.expect("count"), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_concurrent_creates_complete_in_fewer_commits() {
    const TASKS: usize = 64;
    const EACH: usize = 20;
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(open(&dir.path().join("tasks.db"), Synchronous::Full));
    let before = store.commits();
    let mut set = tokio::task::JoinSet::new();
    for t in 0..TASKS {
        let store = store.clone();
        set.spawn(async move {
            let scope = Scope::new(format!("scope-{}", t % 8));
            for i in 0..EACH {
                store
                    .create(
                        new_task(&format!("t-{t}-{i}"), None),
                        work(&scope, "x").into(),
                        ROOMY,
                        &NODE_A,
                    )
                    .await
                    .expect("create");
            }
        });
    }
    while let Some(joined) = set.join_next().await {
        joined.expect("task panicked");
    }
    let commits = store.commits() - before;
    let writes = (TASKS * EACH) as u64;
    assert_eq!(store.task_count().await.expect("count"), TASKS * EACH);
    assert!(
        commits < writes,
        "{writes} creates took {commits} commits: no batch formed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_commit_fails_its_whole_batch_and_changes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let store = Arc::new(open(&path, Synchronous::Normal));
    let alice = Scope::new("alice");
    let first = store
        .create(
            new_task("first", None),
            work(&alice, "x").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");
    let limits = CreateLimits {
        max_tasks: 21,
        max_active_per_scope: 21,
        lease_required: false,
    };

    let pause = store.pause();
    store.fail_next_commits(1);
    let mut creates = tokio::task::JoinSet::new();
    for i in 0..20 {
        let store = store.clone();
        let alice = alice.clone();
        creates.spawn(async move {
            store
                .create(
                    new_task(&format!("t-{i}"), None),
                    work(&alice, "x").into(),
                    limits,
                    &NODE_A,
                )
                .await
        });
    }
    let completion = {
        let store = store.clone();
        let done = complete(&first.snapshot.task, at(1));
        let lease = first.lease;
        tokio::spawn(async move {
            store
                .transition(Authority::Worker(&lease), done, at(1))
                .await
        })
    };
    let register = {
        let store = store.clone();
        tokio::spawn(async move { store.register_node(&NODE_B, T0, 1_000).await })
    };
    until_queued(&store, 22).await;
    let commits = store.commits();
    drop(pause);

    while let Some(joined) = creates.join_next().await {
        let outcome = joined.expect("task panicked");
        assert!(
            matches!(outcome, Err(StoreError::Backend(_))),
            "{outcome:?}"
        );
    }
    let outcome = completion.await.expect("task panicked");
    assert!(
        matches!(outcome, Err(StoreError::Backend(_))),
        "{outcome:?}"
    );
    let outcome = register.await.expect("task panicked");
    assert!(
        matches!(outcome, Err(StoreError::Backend(_))),
        "{outcome:?}"
    );
    assert_eq!(store.commits(), commits, "nothing committed");

    // The read model and the count are as before the batch.
    assert_eq!(store.task_count().await.expect("count"), 1);
    for i in 0..20 {
        let read = store.get(&alice, &id(&format!("t-{i}")), at(1)).await;
        assert!(matches!(read, Ok(None)), "a failed create is not visible");
    }
    let read = store
        .get(&alice, &id("first"), at(1))
        .await
        .expect("get")
        .expect("found");
    assert_eq!(
        read.task.status(),
        TaskStatus::Working,
        "a failed transition is not visible"
    );
    assert!(store
        .work(&alice, &id("first"))
        .await
        .expect("work")
        .is_some());
    assert_eq!(
        store
            .heartbeat(&NODE_B, T0, 1_000)
            .await
            .expect("heartbeat"),
        tasks_runtime::store::Liveness::Lost,
        "a failed registration is not stored"
    );

    // The counters were not advanced by the failed batch: exactly 20 more fit in 21.
    for i in 0..20 {
        store
            .create(
                new_task(&format!("t-{i}"), None),
                work(&alice, "x").into(),
                limits,
                &NODE_A,
            )
            .await
            .expect("the same creates succeed now");
    }
    let refused = store
        .create(
            new_task("t-20", None),
            work(&alice, "x").into(),
            limits,
            &NODE_A,
        )
        .await;
    assert!(
        matches!(refused, Err(StoreError::Capacity(_))),
        "{refused:?}"
    );
    let done = complete(&first.snapshot.task, at(1));
    assert!(matches!(
        store
            .transition(Authority::Worker(&first.lease), done, at(1))
            .await
            .expect("transition"),
        CasOutcome::Committed(_)
    ));

    // On disk: what was acknowledged, nothing of the failed batch.
    let store = Arc::into_inner(store).expect("the only handle");
    drop(store);
    let store = open(&path, Synchronous::Normal);
    assert_eq!(store.task_count().await.expect("count"), 21);
    let read = store
        .get(&alice, &id("first"), at(1))
        .await
        .expect("get")
        .expect("found");
    assert_eq!(read.task.status(), TaskStatus::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_that_fails_in_sql_is_answered_backend_and_the_store_stays_consistent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let store = Arc::new(open(&path, Synchronous::Normal));
    let alice = Scope::new("alice");
    for i in 0..5 {
        store
            .create(
                new_task(&format!("old-{i}"), None),
                work(&alice, "x").into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("create");
    }
    // No new page may be allocated from now on: a large write fails with SQLITE_FULL.
    store.set_max_page_count(1).await.expect("limit pages");
    let big = |scope: &Scope| {
        let mut work = work(scope, "big");
        work.arguments
            .insert("blob".into(), "x".repeat(256 * 1024).into());
        work
    };
    let pause = store.pause();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..10 {
        let store = store.clone();
        let work = if i % 2 == 0 {
            big(&alice)
        } else {
            work(&alice, "small")
        };
        set.spawn(async move {
            let name = format!("new-{i}");
            let outcome = store
                .create(new_task(&name, None), work.into(), ROOMY, &NODE_A)
                .await;
            (name, outcome)
        });
    }
    until_queued(&store, 10).await;
    drop(pause);
    let mut stored = vec![];
    while let Some(joined) = set.join_next().await {
        let (name, outcome) = joined.expect("task panicked");
        let read = store.get(&alice, &id(&name), T0).await.expect("get");
        match outcome {
            Ok(_) => {
                assert!(read.is_some(), "{name}: acknowledged, so visible");
                stored.push(name);
            }
            Err(StoreError::Backend(_)) => assert!(read.is_none(), "{name}: failed, so absent"),
            Err(other) => panic!("{name}: unexpected {other:?}"),
        }
    }
    assert!(
        stored
            .iter()
            .all(|name| !["new-0", "new-2", "new-4", "new-6", "new-8"].contains(&name.as_str())),
        "the large writes cannot have fitted: {stored:?}"
    );
    assert_eq!(store.task_count().await.expect("count"), 5 + stored.len());

    // With room again, the store goes on, and its counters are exact.
    store.set_max_page_count(1 << 30).await.expect("unlimit");
    store
        .create(new_task("after", None), big(&alice).into(), ROOMY, &NODE_A)
        .await
        .expect("a large write fits now");
    let count = store.task_count().await.expect("count");
    assert_eq!(count, 6 + stored.len());
    let store = Arc::into_inner(store).expect("the only handle");
    drop(store);
    let store = open(&path, Synchronous::Normal);
    assert_eq!(
        store.task_count().await.expect("count"),
        count,
        "the disk agrees"
    );
    for name in &stored {
        assert!(store
            .get(&alice, &id(name), T0)
            .await
            .expect("get")
            .is_some());
    }
}
