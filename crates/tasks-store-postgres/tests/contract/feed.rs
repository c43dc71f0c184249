//! The change feed between two `PostgresStore`s on one schema: each hears the other's
//! commits (create, committed transition, claim) as `Change::Task` after a first
//! `Change::Resync`, never its own, and recovers from a broken listening or notifying
//! connection with a `Resync`; a dropped store closes its feed connections.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;
use tasks_core::TaskId;
use tasks_runtime::store::{Authority, CasOutcome, Change, Store};
use tasks_runtime::Scope;
use tasks_store_postgres::PostgresStore;
use tokio::sync::broadcast::Receiver;

/// How long any expected change may take to arrive.
const DEADLINE: Duration = Duration::from_secs(10);

/// The next change, within [`DEADLINE`].
async fn next(changes: &mut Receiver<Change>) -> Change {
    tokio::time::timeout(DEADLINE, changes.recv())
        .await
        .expect("a change within the deadline")
        .expect("the feed is open and kept up")
}

fn task(id: &str, revision: u64) -> Change {
    Change::Task {
        id: TaskId::parse(id).expect("valid id"),
        revision,
    }
}

/// The store's feed. `connect` returns once the feed listens, so nothing is missed.
fn listening(store: &PostgresStore) -> Receiver<Change> {
    assert!(store.listener_pid().is_some(), "connect waits for LISTEN");
    store.changes().expect("a PostgreSQL store has a feed")
}

/// Waits until none of `pids` is a server process any more.
async fn gone(admin: &tokio_postgres::Client, pids: &[i32]) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let left: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)",
                &[&pids],
            )
            .await
            .expect("pg_stat_activity")
            .get(0);
        if left == 0 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "backends {pids:?} still there"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_reach_the_other_instance_in_order_and_never_their_own() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let mut seen_by_a = listening(&a);
    let mut seen_by_b = listening(&b);
    let scope = Scope::new("alice-hash");

    let created = a
        .create(
            new_task("fed", None),
            work(&scope, "fed").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create on a");
    assert_eq!(next(&mut seen_by_b).await, task("fed", 1));
    let done = complete_with(&created.snapshot.task, "done", at(5));
    let outcome = a
        .transition(Authority::Request(&scope), done, at(5))
        .await
        .expect("transition on a");
    assert!(matches!(outcome, CasOutcome::Committed(_)), "{outcome:?}");
    assert_eq!(next(&mut seen_by_b).await, task("fed", 2));

    // A refused write commits nothing and hints nothing: b's next change is a's next commit.
    let stale = complete_with(&created.snapshot.task, "late", at(6));
    let outcome = a
        .transition(Authority::Request(&scope), stale, at(6))
        .await
        .expect("stale transition on a");
    assert!(matches!(outcome, CasOutcome::Conflict(_)), "{outcome:?}");
    a.create(
        new_task("after", None),
        work(&scope, "after").into(),
        ROOMY,
        &NODE_A,
    )
    .await
    .expect("create on a");
    assert_eq!(next(&mut seen_by_b).await, task("after", 1));

    // a's own three commits were notified before b's, yet a's first change is b's commit.
    b.create(
        new_task("from-b", None),
        work(&scope, "from-b").into(),
        ROOMY,
        &NODE_B,
    )
    .await
    .expect("create on b");
    assert_eq!(next(&mut seen_by_a).await, task("from-b", 1));
    // And b skipped its own: its next change is a's next commit.
    a.create(
        new_task("again", None),
        work(&scope, "again").into(),
        ROOMY,
        &NODE_A,
    )
    .await
    .expect("create on a");
    assert_eq!(next(&mut seen_by_b).await, task("again", 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_is_hinted_to_the_previous_owner() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let mut seen_by_a = listening(&a);
    let mut seen_by_b = listening(&b);
    let scope = Scope::new("alice-hash");
    const LEASE: u64 = 1_000;

    a.register_node(&NODE_A, T0, LEASE)
        .await
        .expect("register a");
    a.create(
        new_task("orphan", Some(3_600_000)),
        work(&scope, "orphan").into(),
        ROOMY,
        &NODE_A,
    )
    .await
    .expect("create on a");
    assert_eq!(next(&mut seen_by_b).await, task("orphan", 1));
    let claimed = b
        .claim_orphans(&NODE_B, at(2 * LEASE), 10)
        .await
        .expect("claim on b");
    assert_eq!(claimed.len(), 1);
    // A claim keeps the revision: the hint says "re-read", the lease is what changed.
    assert_eq!(next(&mut seen_by_a).await, task("orphan", 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_listening_connection_resyncs_and_hints_follow() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let mut seen_by_b = listening(&b);
    let scope = Scope::new("alice-hash");
    let admin = db.admin().await;

    let pid = b.listener_pid().expect("b listens");
    let terminated = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'mcp-tasks-listen' AND pid = $1",
            &[&pid],
        )
        .await
        .expect("terminate b's listener");
    assert_eq!(terminated.len(), 1, "b's listener {pid} was found");
    assert!(terminated[0].get::<_, bool>(0));

    assert_eq!(next(&mut seen_by_b).await, Change::Resync);
    let again = b.listener_pid().expect("b listens again");
    assert_ne!(again, pid, "on a new connection");
    a.create(
        new_task("later", None),
        work(&scope, "later").into(),
        ROOMY,
        &NODE_A,
    )
    .await
    .expect("create on a");
    assert_eq!(next(&mut seen_by_b).await, task("later", 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hints_lost_with_the_notifying_connection_are_followed_by_a_resync() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let mut seen_by_a = listening(&a);
    let mut seen_by_b = listening(&b);
    let scope = Scope::new("alice-hash");
    let admin = db.admin().await;

    a.create(
        new_task("first", None),
        work(&scope, "first").into(),
        ROOMY,
        &NODE_A,
    )
    .await
    .expect("create on a");
    assert_eq!(next(&mut seen_by_b).await, task("first", 1));
    let pid = a.notifier_pid().expect("a's notifier is connected");
    let terminated = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'mcp-tasks-notify' AND pid = $1",
            &[&pid],
        )
        .await
        .expect("terminate a's notifier");
    assert_eq!(terminated.len(), 1, "a's notifier {pid} was found");
    gone(&admin, &[pid]).await;

    // The hint of this commit is lost with the connection; b is told to resync instead.
    a.create(
        new_task("lost", None),
        work(&scope, "lost").into(),
        ROOMY,
        &NODE_A,
    )
    .await
    .expect("create on a");
    assert_eq!(next(&mut seen_by_b).await, Change::Resync);
    a.create(
        new_task("later", None),
        work(&scope, "later").into(),
        ROOMY,
        &NODE_A,
    )
    .await
    .expect("create on a");
    assert_eq!(next(&mut seen_by_b).await, task("later", 1));

    // a heard nothing of its own, its resync line included.
    b.create(
        new_task("from-b", None),
        work(&scope, "from-b").into(),
        ROOMY,
        &NODE_B,
    )
    .await
    .expect("create on b");
    assert_eq!(next(&mut seen_by_a).await, task("from-b", 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_long_ids_all_arrive() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let mut seen_by_b = listening(&b);
    let scope = Scope::new("alice-hash");

    // 256-byte ids with the characters the payload escapes: 64 of them are ~33 kB of lines,
    // several payloads for any batch larger than 14.
    let ids: Vec<String> = (0..64)
        .map(|i| format!("{i:02} \\ \n{}", "x".repeat(250)))
        .collect();
    assert!(ids.iter().all(|id| id.len() == 256));
    let creates = ids
        .iter()
        .map(|id| a.create(new_task(id, None), work(&scope, id).into(), ROOMY, &NODE_A));
    for created in futures_util::future::join_all(creates).await {
        created.expect("create on a");
    }

    let mut heard = BTreeSet::new();
    while heard.len() < ids.len() {
        match next(&mut seen_by_b).await {
            Change::Task { id, revision: 1 } => assert!(heard.insert(id.as_str().to_owned())),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(heard, ids.into_iter().collect::<BTreeSet<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_store_closes_its_feed_connections() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let mut seen_by_b = listening(&b);
    let scope = Scope::new("alice-hash");
    let admin = db.admin().await;

    a.create(
        new_task("one", None),
        work(&scope, "one").into(),
        ROOMY,
        &NODE_A,
    )
    .await
    .expect("create on a");
    // b hears a's create, so a's notifier is connected by then.
    assert_eq!(next(&mut seen_by_b).await, task("one", 1));
    let pids = [
        a.listener_pid().expect("a listens"),
        a.notifier_pid().expect("a notifies"),
    ];
    let found: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1) \
             AND application_name IN ('mcp-tasks-listen', 'mcp-tasks-notify')",
            &[&&pids[..]],
        )
        .await
        .expect("pg_stat_activity")
        .get(0);
    assert_eq!(found, 2, "both feed connections are there");
    let clone = a.clone();
    drop(a);
    assert!(clone.listener_pid().is_some(), "a clone keeps the feed");
    drop(clone);
    gone(&admin, &pids).await;
}
