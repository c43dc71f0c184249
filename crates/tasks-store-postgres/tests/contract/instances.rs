//! Two `PostgresStore`s on one schema act as two nodes: each sees the other's writes at once,
//! a claim by one fences the other's worker, and what is written reads back exactly.

use crate::common;

use common::*;
use tasks_core::Event;
use tasks_runtime::store::{Authority, CasOutcome, Liveness, Store};
use tasks_runtime::Scope;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_see_each_others_writes_at_once() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let scope = Scope::new("alice-hash");

    let created = a
        .create(
            new_task("shared", None),
            work(&scope, "shared").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create on a");
    let read = b
        .get(&scope, &id("shared"), T0)
        .await
        .expect("get on b")
        .expect("b sees a's create");
    assert_eq!(*read.task, *created.snapshot.task);
    assert_eq!(b.task_count().await.expect("count"), 1);
    assert_eq!(
        b.work(&scope, &id("shared"))
            .await
            .expect("work")
            .as_deref(),
        Some(&work(&scope, "shared"))
    );

    let done = complete_with(&read.task, "done on b", at(5));
    let outcome = b
        .transition(Authority::Request(&scope), done.clone(), at(5))
        .await
        .expect("transition on b");
    assert!(matches!(outcome, CasOutcome::Committed(_)), "{outcome:?}");
    let seen = a
        .get(&scope, &id("shared"), at(6))
        .await
        .expect("get on a")
        .expect("found");
    assert_eq!(*seen.task, *done.task(), "a sees b's completion");
    assert!(a.work(&scope, &id("shared")).await.expect("work").is_none());

    // A stale write on a (revision 1 again) conflicts with b's commit.
    let stale = complete_with(&created.snapshot.task, "late", at(7));
    match a
        .transition(Authority::Request(&scope), stale, at(7))
        .await
        .expect("transition on a")
    {
        CasOutcome::Conflict(current) => assert_eq!(*current.task, *done.task()),
        other => panic!("expected a conflict, got {other:?}"),
    }
}

/// Each instance keeps the terminal tasks it reads (they never change again): a task read
/// while running is read again from the database, a settled one answers as the database
/// would, in its scope, until it expires, also after another instance reaped it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settled_tasks_read_as_the_database_would_on_every_instance() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let scope = Scope::new("alice-hash");
    let created = a
        .create(
            new_task("settling", Some(1_000)),
            work(&scope, "settling").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create on a");
    // b reads it running (nothing kept), then a completes it: b sees the completion at once.
    let running = read(&b, &scope, at(0)).await.expect("found");
    assert_eq!(running, *created.snapshot.task);
    let done = complete_with(&created.snapshot.task, "done on a", at(5));
    let outcome = a
        .transition(Authority::Request(&scope), done.clone(), at(5))
        .await
        .expect("transition on a");
    assert!(matches!(outcome, CasOutcome::Committed(_)), "{outcome:?}");
    // Read twice (the second read may be b's kept copy): the completion both times.
    for _ in 0..2 {
        assert_eq!(read(&b, &scope, at(6)).await.as_ref(), Some(done.task()));
    }
    assert_eq!(read(&b, &Scope::new("bob-hash"), at(6)).await, None);
    // Created at T0 with a TTL of 1 000 ms: expired at 1 000, reaped by a, absent on both.
    assert!(read(&b, &scope, at(999)).await.is_some());
    let reaped = a.reap(at(1_000)).await.expect("reap on a");
    assert_eq!(reaped, vec![id("settling")]);
    assert_eq!(read(&b, &scope, at(1_000)).await, None);
    assert_eq!(read(&a, &scope, at(1_000)).await, None);
}

/// Task `settling` of `scope` as `store` reads it at `now`.
async fn read(
    store: &impl Store,
    scope: &Scope,
    now: tasks_core::Timestamp,
) -> Option<tasks_core::Task> {
    let snapshot = store.get(scope, &id("settling"), now).await.expect("get");
    snapshot.map(|snapshot| (*snapshot.task).clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_by_one_instance_fences_the_others_worker() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let scope = Scope::new("alice-hash");
    const LEASE: u64 = 1_000;

    a.register_node(&NODE_A, T0, LEASE)
        .await
        .expect("register a");
    let created = a
        .create(
            new_task("orphan", Some(3_600_000)),
            work(&scope, "orphan").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create on a");
    b.register_node(&NODE_B, at(2 * LEASE), LEASE)
        .await
        .expect("register b");
    let claimed = b
        .claim_orphans(&NODE_B, at(2 * LEASE), 10)
        .await
        .expect("claim on b");
    assert_eq!(claimed.len(), 1, "a's expired lease orphaned its task");
    let lease_b = claimed[0].lease;
    assert_eq!(
        (lease_b.generation, lease_b.attempt),
        (2, 1),
        "a claim raises the generation; the attempt is charged when the re-run starts"
    );
    assert_eq!(*claimed[0].work, work(&scope, "orphan"));

    // A wakes up late: its heartbeat is lost and its worker's write is fenced.
    assert_eq!(
        a.heartbeat(&NODE_A, at(LEASE / 2), LEASE)
            .await
            .expect("heartbeat"),
        Liveness::Lost,
        "a claimed node is never revived, even by a heartbeat stamped earlier"
    );
    let late = complete_with(&created.snapshot.task, "from a", at(2 * LEASE + 1));
    let outcome = a
        .transition(Authority::Worker(&created.lease), late, at(2 * LEASE + 1))
        .await
        .expect("transition on a");
    assert!(matches!(outcome, CasOutcome::Fenced), "{outcome:?}");

    let progress = next(
        &claimed[0].snapshot.task,
        Event::Completed {
            result: object(serde_json::json!({"content": [], "isError": false})).into(),
        },
        at(2 * LEASE + 2),
    );
    let outcome = b
        .transition(
            Authority::Worker(&lease_b),
            progress.clone(),
            at(2 * LEASE + 2),
        )
        .await
        .expect("transition on b");
    assert!(matches!(outcome, CasOutcome::Committed(_)), "{outcome:?}");
    let seen = a
        .get(&scope, &id("orphan"), at(2 * LEASE + 3))
        .await
        .expect("get on a")
        .expect("found");
    assert_eq!(
        *seen.task,
        *progress.task(),
        "a reads b's result, not its own"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_are_kept_exactly_even_with_nul_characters() {
    let Some(db) = Database::open().await else {
        return;
    };
    let store = db.store().await;
    let scope = Scope::new("alice-hash");
    let created = store
        .create(
            new_task("nul", None),
            work(&scope, "nul").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");
    let done = complete_with(&created.snapshot.task, "a\u{0}b ✓ \"q\" \\", at(1));
    let outcome = store
        .transition(Authority::Request(&scope), done.clone(), at(1))
        .await
        .expect("transition");
    assert!(matches!(outcome, CasOutcome::Committed(_)), "{outcome:?}");
    let read = store
        .get(&scope, &id("nul"), at(2))
        .await
        .expect("get")
        .expect("found");
    assert_eq!(*read.task, *done.task());

    // An id that `text` cannot hold is simply absent.
    assert!(store
        .get(&scope, &id("nul\u{0}id"), at(2))
        .await
        .expect("get")
        .is_none());
    assert!(store
        .get(&Scope::new("x\u{0}"), &id("nul"), at(2))
        .await
        .expect("get")
        .is_none());
}

/// A rolling upgrade: a node of the previous build charges the attempt at its claim (the
/// effect of its claim statement, reproduced here in SQL), a node of this build at the re-run's
/// start. Both read the column as the runs charged so far, so each honours the other's count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attempts_charged_by_a_node_of_the_previous_build_are_honoured() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store = db.connect(&schema).await;
    let scope = Scope::new("alice-hash");
    const LEASE: u64 = 1_000;
    store
        .register_node(&NODE_A, T0, LEASE)
        .await
        .expect("register a");
    store
        .create(
            new_task("upgrading", Some(3_600_000)),
            work(&scope, "upgrading").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create on a");
    // A node of the previous build claims it (and so charges its run), then dies.
    let admin = db.admin().await;
    let changed = admin
        .execute(
            &format!(
                "UPDATE \"{schema}\".tasks SET owner_node = $1, generation = generation + 1, \
                 attempt = attempt + 1 WHERE id = 'upgrading'"
            ),
            &[&NODE_B.as_bytes().as_slice()],
        )
        .await
        .expect("the previous build's claim");
    assert_eq!(changed, 1);
    let node_c = tasks_runtime::store::NodeId::from_bytes([0xc; 16]);
    store
        .register_node(&node_c, at(2 * LEASE), LEASE)
        .await
        .expect("register c");
    let claimed = store
        .claim_orphans(&node_c, at(2 * LEASE), 10)
        .await
        .expect("claim on c");
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        (claimed[0].lease.generation, claimed[0].lease.attempt),
        (3, 2),
        "the old node's charged run counts; this build's claim charges none"
    );
    let started = store
        .charge_attempt(&id("upgrading"), &claimed[0].lease, at(2 * LEASE))
        .await
        .expect("charge")
        .expect("c holds the task");
    assert_eq!(started.attempt, 3, "c's re-run is the third run");
}

/// A row that does not decode fails only its own task: the claim of a dead node's tasks
/// leaves it out and claims every other (before, the whole pass failed, and the dead node's
/// other tasks stayed `working` with nobody running them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_that_does_not_decode_is_left_out_of_a_claim_and_the_rest_is_claimed() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let scope = Scope::new("alice-hash");
    const LEASE: u64 = 1_000;
    a.register_node(&NODE_A, T0, LEASE)
        .await
        .expect("register a");
    for name in ["good-1", "bad-shape", "bad-deep", "good-2"] {
        a.create(
            new_task(name, Some(3_600_000)),
            work(&scope, name).into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create on a");
    }
    let admin = db.admin().await;
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    admin
        .execute(
            &format!(
                "UPDATE {schema}.tasks SET task = '{{\"not\": \"a task\"}}' WHERE id = 'bad-shape'"
            ),
            &[],
        )
        .await
        .expect("damage a row");
    admin
        .execute(
            &format!(
                "UPDATE {schema}.tasks SET work = '{{\"tool\": {deep}}}' WHERE id = 'bad-deep'"
            ),
            &[],
        )
        .await
        .expect("damage a row's work");
    b.register_node(&NODE_B, at(2 * LEASE), LEASE)
        .await
        .expect("register b");
    let claimed = b
        .claim_orphans(&NODE_B, at(2 * LEASE), 10)
        .await
        .expect("the claim passes");
    let mut names: Vec<&str> = claimed
        .iter()
        .map(|c| c.snapshot.task.id().as_str())
        .collect();
    names.sort();
    assert_eq!(names, ["good-1", "good-2"]);
    let held = b
        .held(&NODE_B, at(2 * LEASE), None, 10)
        .await
        .expect("held passes")
        .expect("postgres answers held");
    assert_eq!(held.len(), 2, "held leaves the bad rows out too");
}
