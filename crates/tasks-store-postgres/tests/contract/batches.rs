//! Batches (group commit) at their edges: a caller that goes away while its call is queued,
//! results too big to share a batch, and a store used after the tokio runtime that connected
//! it has shut down.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::json;
use tasks_core::Event;
use tasks_runtime::store::{Authority, CasOutcome, Change, Store};
use tasks_runtime::Scope;

/// Polls `call` once (so it is queued), then drops it: its caller went away.
async fn poll_once_then_drop<F: std::future::Future>(call: F) {
    let mut call = std::pin::pin!(call);
    tokio::select! {
        biased;
        _ = &mut call => {}
        () = std::future::ready(()) => {}
    }
}

/// Every change `changes` has received so far.
fn heard(changes: &mut tokio::sync::broadcast::Receiver<Change>) -> Vec<Change> {
    std::iter::from_fn(|| changes.try_recv().ok()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_caller_went_away_is_either_not_made_or_made_and_hinted() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let mut changes = b.changes().expect("a change feed");
    let scope = Scope::new("alice");
    for round in 0..6 {
        let name = format!("t{round}");
        let created = a
            .create(
                new_task(&name, None),
                work(&scope, &name).into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("create");
        let done = complete_with(&created.snapshot.task, "done", at(5));
        // Usually still queued when dropped; on a loaded machine the call may even have
        // finished within that one poll. Either way, what was made must be hinted.
        poll_once_then_drop(a.transition(Authority::Request(&scope), done, at(5))).await;
        let late = format!("late{round}");
        poll_once_then_drop(a.create(
            new_task(&late, None),
            work(&scope, &late).into(),
            ROOMY,
            &NODE_A,
        ))
        .await;
        // Whatever was made is hinted to the other instance (the hint may trail the commit).
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let heard = heard(&mut changes);
        let hinted = |id: &str, revision: u64| {
            heard.iter().any(|change| {
                matches!(change, Change::Task { id: hinted, revision: r }
                         if hinted.as_str() == id && *r == revision)
            })
        };
        let task = a
            .get(&scope, &id(&name), at(6))
            .await
            .expect("get")
            .expect("stored");
        if task.task.revision() == 2 {
            assert!(hinted(&name, 2), "{name}: completed but never hinted");
        }
        if a.get(&scope, &id(&late), at(6))
            .await
            .expect("get")
            .is_some()
        {
            assert!(hinted(&late, 1), "{late}: created but never hinted");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_results_completed_at_once_all_commit() {
    let Some(db) = Database::open().await else {
        return;
    };
    // A statement timeout of 2 s (the store's is 5 s): 4 MiB results commit in well under it
    // one at a time (each is more than a batch's byte budget, so each goes alone), but 90 MiB
    // of them in one batch would take longer.
    let separator = if db.url.contains('?') { '&' } else { '?' };
    let url = format!("{}{separator}options=-c%20statement_timeout%3D2000", db.url);
    let store = tasks_store_postgres::PostgresStore::connect(&url, Database::options(&db.schema()))
        .await
        .expect("connect");
    let scope = Scope::new("alice");
    let text = "x".repeat(4 << 20);
    let mut created = Vec::new();
    for i in 0..24 {
        let name = format!("big{i}");
        created.push(
            store
                .create(
                    new_task(&name, None),
                    work(&scope, &name).into(),
                    ROOMY,
                    &NODE_A,
                )
                .await
                .expect("create"),
        );
    }
    // All at once, so that they queue up together.
    let completions: Vec<_> = created
        .into_iter()
        .map(|created| {
            let result = object(json!({"content": [{"type": "text", "text": text}]}));
            let done = next(
                &created.snapshot.task,
                Event::Completed {
                    result: result.into(),
                },
                at(5),
            );
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .transition(Authority::Worker(&created.lease), done, at(5))
                    .await
            })
        })
        .collect();
    for completion in completions {
        let outcome = completion.await.expect("joined").expect("committed");
        assert!(matches!(outcome, CasOutcome::Committed(_)), "{outcome:?}");
    }
}

#[test]
fn a_store_outlives_the_runtime_that_connected_it() {
    let Some((db, schema, store)) =
        tokio::runtime::Runtime::new()
            .expect("a runtime")
            .block_on(async {
                let db = Database::open().await?;
                let schema = db.schema();
                let store = db.connect(&schema).await;
                Some((db, schema, store))
            })
    else {
        return;
    };
    // That runtime is gone, and with it the store's background tasks; calls still work.
    let runtime = tokio::runtime::Runtime::new().expect("another runtime");
    runtime.block_on(async {
        let scope = Scope::new("alice");
        let created = store
            .create(
                new_task("x", None),
                work(&scope, "x").into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("a create");
        let done = complete_with(&created.snapshot.task, "done", at(5));
        let outcome = store
            .transition(Authority::Request(&scope), done, at(5))
            .await
            .expect("a transition");
        assert!(matches!(outcome, CasOutcome::Committed(_)), "{outcome:?}");
        assert_eq!(store.task_count().await.expect("count"), 1);
    });
    drop(store);
    drop(runtime);
    drop((db, schema));
}

/// Creates of a live owner and of an owner without a lease, made at once so that they share
/// batches: each is answered by its own owner's lease (`create_tasks` of schema version 5
/// hands the rows that pass to the version 3 function and merges the codes back in order),
/// and the counters count exactly the stored ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_of_live_and_dead_owners_in_one_batch_each_get_their_own_answer() {
    let Some(db) = Database::open().await else {
        return;
    };
    let store = std::sync::Arc::new(db.store().await);
    store
        .register_node(&NODE_B, T0, 3_600_000)
        .await
        .expect("register B");
    let leased = tasks_runtime::store::CreateLimits {
        lease_required: true,
        ..ROOMY
    };
    let scope = Scope::new("alice");
    let calls: Vec<_> = (0..40)
        .map(|i| {
            let (store, scope) = (store.clone(), scope.clone());
            let owner = if i % 3 == 0 { NODE_A } else { NODE_B };
            tokio::spawn(async move {
                let name = format!("t{i}");
                let outcome = store
                    .create(
                        new_task(&name, None),
                        work(&scope, &name).into(),
                        leased,
                        &owner,
                    )
                    .await;
                (i, outcome.map(|created| created.lease.node))
            })
        })
        .collect();
    let mut stored = 0;
    for call in calls {
        let (i, outcome) = call.await.expect("a create");
        if i % 3 == 0 {
            assert_eq!(
                outcome,
                Err(tasks_runtime::store::StoreError::LeaseLost),
                "t{i}"
            );
            let found = store.get(&scope, &id(&format!("t{i}")), T0).await;
            assert!(found.expect("get").is_none(), "t{i} was refused");
        } else {
            assert_eq!(outcome, Ok(NODE_B), "t{i}");
            stored += 1;
        }
    }
    assert_eq!(stored, 26);
    assert_eq!(store.task_count().await.expect("count"), 26);
}
