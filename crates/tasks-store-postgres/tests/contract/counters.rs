//! The capacity counters: a refused or failed create changes no counter (and a value the
//! database refuses fails only its own create, not the others of its batch), a terminal
//! transition releases its scope's active slot, the reaper settles what a node left unsettled
//! (a reservation of an earlier build without its insert, a release never applied) once it is
//! stale, and after any mix of concurrent creates, refusals and completions the counters
//! equal what the tasks table holds.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::*;
use tasks_core::{CapacityLimit, Task};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{Authority, CasOutcome, Store, StoreError};
use tasks_runtime::Scope;

/// What the counter tables say, or what the tasks table holds.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) total: i64,
    /// Active tasks per scope; scopes at 0 left out.
    pub(super) active: BTreeMap<String, i64>,
    /// Rows of `pending_counts` (always 0 for the tasks table).
    pub(super) pending: i64,
}

pub(super) fn active_of(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
    pairs.iter().map(|(s, n)| ((*s).to_owned(), *n)).collect()
}

/// The counters as stored.
pub(super) async fn counters(admin: &tokio_postgres::Client, schema: &str) -> Counts {
    let total: i64 = admin
        .query_one(&format!("SELECT total FROM \"{schema}\".counts"), &[])
        .await
        .expect("counts")
        .get(0);
    let active = admin
        .query(
            &format!("SELECT scope, active FROM \"{schema}\".scope_counts WHERE active <> 0"),
            &[],
        )
        .await
        .expect("scope_counts")
        .iter()
        .map(|row| (row.get::<_, String>(0), row.get::<_, i64>(1)))
        .collect();
    let pending: i64 = admin
        .query_one(
            &format!("SELECT count(*) FROM \"{schema}\".pending_counts"),
            &[],
        )
        .await
        .expect("pending_counts")
        .get(0);
    Counts {
        total,
        active,
        pending,
    }
}

/// What the tasks table holds, counted.
async fn actual(admin: &tokio_postgres::Client, schema: &str) -> Counts {
    let total: i64 = admin
        .query_one(&format!("SELECT count(*) FROM \"{schema}\".tasks"), &[])
        .await
        .expect("tasks")
        .get(0);
    let active = admin
        .query(
            &format!(
                "SELECT scope, count(*) FROM \"{schema}\".tasks \
                 WHERE status IN ('working', 'input_required') GROUP BY scope"
            ),
            &[],
        )
        .await
        .expect("active tasks")
        .iter()
        .map(|row| (row.get::<_, String>(0), row.get::<_, i64>(1)))
        .collect();
    Counts {
        total,
        active,
        pending: 0,
    }
}

/// Leaves what a node of an earlier build (schema version 2, whose creates reserve first and
/// insert second) leaves when it dies between the two steps of a create: a committed
/// reservation of both counters in `scope`, and its `pending_counts` row, `age` old.
async fn leak_reservation(admin: &tokio_postgres::Client, schema: &str, scope: &str, age: &str) {
    admin
        .execute(
            &format!(
                "WITH total AS (UPDATE \"{schema}\".counts SET total = total + 1 RETURNING 1), \
                 active AS (INSERT INTO \"{schema}\".scope_counts AS c (scope, active) \
                            SELECT $1::text, 1 FROM total \
                            ON CONFLICT (scope) DO UPDATE SET active = c.active + 1 \
                            RETURNING 1) \
                 INSERT INTO \"{schema}\".pending_counts (token, scope, total, active, since) \
                 SELECT 4242, $1::text, 1, 1, now() - $2::text::interval FROM active"
            ),
            &[&scope, &age],
        )
        .await
        .expect("leave a reservation without its insert");
}

fn limits(max_tasks: usize, max_active_per_scope: usize) -> CreateLimits {
    CreateLimits {
        max_tasks,
        max_active_per_scope,
        lease_required: false,
    }
}

async fn complete(store: &impl Store, scope: &Scope, task: &Task) {
    let outcome = store
        .transition(
            Authority::Request(scope),
            complete_with(task, "done", at(5)),
            at(5),
        )
        .await
        .expect("transition");
    assert!(matches!(outcome, CasOutcome::Committed(_)), "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_and_failed_creates_change_no_counter() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store = db.connect(&schema).await;
    let admin = db.admin().await;
    let alice = Scope::new("alice");
    let bob = Scope::new("bob");
    let tight = limits(2, 1);

    store
        .create(
            new_task("a1", None),
            work(&alice, "a1").into(),
            tight,
            &NODE_A,
        )
        .await
        .expect("first create");
    let one = Counts {
        total: 1,
        active: active_of(&[("alice", 1)]),
        pending: 0,
    };
    assert_eq!(counters(&admin, &schema).await, one);

    // A taken id.
    assert_eq!(
        store
            .create(
                new_task("a1", None),
                work(&bob, "a1").into(),
                tight,
                &NODE_A
            )
            .await
            .map(drop),
        Err(StoreError::Duplicate)
    );
    assert_eq!(counters(&admin, &schema).await, one);

    // The per-scope bound.
    assert_eq!(
        store
            .create(
                new_task("a2", None),
                work(&alice, "a2").into(),
                tight,
                &NODE_A
            )
            .await
            .map(drop),
        Err(StoreError::Capacity(CapacityLimit::MaxActiveTasksPerScope))
    );
    assert_eq!(counters(&admin, &schema).await, one);

    // A failing insert (a constraint the test adds).
    admin
        .batch_execute(&format!(
            "ALTER TABLE \"{schema}\".tasks ADD CONSTRAINT no_boom CHECK (id <> 'boom')"
        ))
        .await
        .expect("add a constraint");
    match store
        .create(
            new_task("boom", None),
            work(&bob, "boom").into(),
            tight,
            &NODE_A,
        )
        .await
    {
        Err(StoreError::Backend(message)) => assert!(message.contains("no_boom"), "{message}"),
        other => panic!("expected a backend failure, got {other:?}"),
    }
    assert_eq!(counters(&admin, &schema).await, one);

    // Nothing leaked: the one free slot of max_tasks = 2 is still there, and then not.
    store
        .create(
            new_task("b1", None),
            work(&bob, "b1").into(),
            tight,
            &NODE_A,
        )
        .await
        .expect("the refusals left max_tasks' second slot free");
    assert_eq!(
        store
            .create(
                new_task("b2", None),
                work(&bob, "b2").into(),
                limits(2, 5),
                &NODE_A
            )
            .await
            .map(drop),
        Err(StoreError::Capacity(CapacityLimit::MaxTasks))
    );
    let two = Counts {
        total: 2,
        active: active_of(&[("alice", 1), ("bob", 1)]),
        pending: 0,
    };
    assert_eq!(counters(&admin, &schema).await, two);
    assert_eq!(actual(&admin, &schema).await, two);
    assert_eq!(store.task_count().await.expect("count"), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reaper_settles_a_stale_reservation_left_without_its_insert() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store = db.connect(&schema).await;
    let admin = db.admin().await;
    let alice = Scope::new("alice");
    let tight = limits(2, 2);

    store
        .create(
            new_task("a1", None),
            work(&alice, "a1").into(),
            tight,
            &NODE_A,
        )
        .await
        .expect("first create");
    // A node reserved a slot in alice's scope, then died before its insert ran.
    leak_reservation(&admin, &schema, "alice", "0 seconds").await;
    assert_eq!(
        counters(&admin, &schema).await,
        Counts {
            total: 2,
            active: active_of(&[("alice", 2)]),
            pending: 1,
        }
    );
    assert_eq!(
        store.task_count().await.expect("count"),
        1,
        "task_count leaves reservations out"
    );
    assert_eq!(
        store
            .create(
                new_task("a2", None),
                work(&alice, "a2").into(),
                tight,
                &NODE_A
            )
            .await
            .map(drop),
        Err(StoreError::Capacity(CapacityLimit::MaxTasks)),
        "the reservation holds its slot"
    );

    // A fresh reservation may belong to a create still in flight: a reap leaves it.
    assert!(store.reap(at(0)).await.expect("reap").is_empty());
    assert_eq!(counters(&admin, &schema).await.pending, 1);

    // Once stale, a reap settles it and the slot is free again.
    admin
        .execute(
            &format!(
                "UPDATE \"{schema}\".pending_counts SET since = now() - interval '61 seconds'"
            ),
            &[],
        )
        .await
        .expect("age the reservation");
    assert!(store.reap(at(0)).await.expect("reap").is_empty());
    let one = Counts {
        total: 1,
        active: active_of(&[("alice", 1)]),
        pending: 0,
    };
    assert_eq!(counters(&admin, &schema).await, one);
    assert_eq!(actual(&admin, &schema).await, one);
    store
        .create(
            new_task("a2", None),
            work(&alice, "a2").into(),
            tight,
            &NODE_A,
        )
        .await
        .expect("the settled reservation freed its slot");
    assert_eq!(store.task_count().await.expect("count"), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_the_database_refuses_fails_alone_and_its_batch_is_stored() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store = db.connect(&schema).await;
    let admin = db.admin().await;
    admin
        .batch_execute(&format!(
            "ALTER TABLE \"{schema}\".tasks ADD CONSTRAINT no_boom CHECK (id <> 'boom')"
        ))
        .await
        .expect("add a constraint");
    let alice = Scope::new("alice");
    // Sent at once, so they queue up and most share a batch with the refused one.
    let ids: Vec<String> = (0..40)
        .map(|i| {
            if i == 20 {
                "boom".into()
            } else {
                format!("t{i}")
            }
        })
        .collect();
    let creates = ids.iter().map(|id| {
        let store = store.clone();
        let alice = alice.clone();
        async move {
            store
                .create(new_task(id, None), work(&alice, id).into(), ROOMY, &NODE_A)
                .await
        }
    });
    let outcomes = futures_util::future::join_all(creates).await;
    for (id, outcome) in ids.iter().zip(&outcomes) {
        match (id.as_str(), outcome) {
            ("boom", Err(StoreError::Backend(message))) => {
                assert!(message.contains("no_boom"), "{message}")
            }
            ("boom", other) => panic!("expected a backend failure, got {other:?}"),
            (_, outcome) => assert!(outcome.is_ok(), "{id}: {outcome:?}"),
        }
    }
    let stored = Counts {
        total: 39,
        active: active_of(&[("alice", 39)]),
        pending: 0,
    };
    assert_eq!(counters(&admin, &schema).await, stored);
    assert_eq!(actual(&admin, &schema).await, stored);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transition_the_database_refuses_fails_alone_and_its_batch_is_stored() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store = db.connect(&schema).await;
    let admin = db.admin().await;
    let alice = Scope::new("alice");
    let ids: Vec<String> = (0..40)
        .map(|i| {
            if i == 20 {
                "boom".into()
            } else {
                format!("t{i}")
            }
        })
        .collect();
    let mut tasks = Vec::new();
    for id in &ids {
        let created = store
            .create(new_task(id, None), work(&alice, id).into(), ROOMY, &NODE_A)
            .await
            .expect("create");
        tasks.push(created.snapshot.task);
    }
    admin
        .batch_execute(&format!(
            "ALTER TABLE \"{schema}\".tasks ADD CONSTRAINT no_boom \
             CHECK (id <> 'boom' OR status <> 'completed')"
        ))
        .await
        .expect("add a constraint");
    let completions = tasks.iter().map(|task| {
        let (store, alice) = (store.clone(), alice.clone());
        async move {
            store
                .transition(
                    Authority::Request(&alice),
                    complete_with(task, "done", at(5)),
                    at(5),
                )
                .await
        }
    });
    let outcomes = futures_util::future::join_all(completions).await;
    for (id, outcome) in ids.iter().zip(&outcomes) {
        match (id.as_str(), outcome) {
            ("boom", Err(StoreError::Backend(message))) => {
                assert!(message.contains("no_boom"), "{message}")
            }
            ("boom", other) => panic!("expected a backend failure, got {other:?}"),
            (_, outcome) => assert!(
                matches!(outcome, Ok(CasOutcome::Committed(_))),
                "{id}: {outcome:?}"
            ),
        }
    }
    let one_left = Counts {
        total: 40,
        active: active_of(&[("alice", 1)]),
        pending: 0,
    };
    assert_eq!(counters(&admin, &schema).await, one_left);
    assert_eq!(actual(&admin, &schema).await, one_left);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_transitions_release_the_active_slot_and_a_lost_release_is_settled() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store = db.connect(&schema).await;
    let admin = db.admin().await;
    let alice = Scope::new("alice");
    let tight = limits(10, 1);

    let first = store
        .create(
            new_task("a1", None),
            work(&alice, "a1").into(),
            tight,
            &NODE_A,
        )
        .await
        .expect("first create");
    complete(&store, &alice, &first.snapshot.task).await;
    let after_one = Counts {
        total: 1,
        active: BTreeMap::new(),
        pending: 0,
    };
    assert_eq!(counters(&admin, &schema).await, after_one);
    assert_eq!(actual(&admin, &schema).await, after_one);

    let second = store
        .create(
            new_task("a2", None),
            work(&alice, "a2").into(),
            tight,
            &NODE_A,
        )
        .await
        .expect("the completed task freed its slot");
    // A worker's terminal write releases the slot too.
    let lease = second.lease;
    let outcome = store
        .transition(
            Authority::Worker(&lease),
            complete_with(&second.snapshot.task, "done", at(6)),
            at(6),
        )
        .await
        .expect("worker transition");
    assert!(matches!(outcome, CasOutcome::Committed(_)), "{outcome:?}");
    assert_eq!(counters(&admin, &schema).await.active, BTreeMap::new());

    // A node completed a task, then died before its release was applied: the scope's slot
    // stays taken, with the release's row.
    admin
        .execute(
            &format!(
                "WITH up AS (UPDATE \"{schema}\".scope_counts SET active = active + 1 \
                             WHERE scope = 'alice' RETURNING 1) \
                 INSERT INTO \"{schema}\".pending_counts (token, scope, total, active, since) \
                 SELECT 77, 'alice', 0, 1, now() - interval '2 minutes' FROM up"
            ),
            &[],
        )
        .await
        .expect("leave a release unapplied");
    assert_eq!(
        store
            .create(
                new_task("a3", None),
                work(&alice, "a3").into(),
                tight,
                &NODE_A
            )
            .await
            .map(drop),
        Err(StoreError::Capacity(CapacityLimit::MaxActiveTasksPerScope))
    );
    assert!(store.reap(at(0)).await.expect("reap").is_empty());
    let after_two = Counts {
        total: 2,
        active: BTreeMap::new(),
        pending: 0,
    };
    assert_eq!(counters(&admin, &schema).await, after_two);
    assert_eq!(actual(&admin, &schema).await, after_two);
    store
        .create(
            new_task("a3", None),
            work(&alice, "a3").into(),
            tight,
            &NODE_A,
        )
        .await
        .expect("the settled release freed the slot");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_equal_the_tasks_after_concurrent_creates_refusals_and_completions() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store = Arc::new(db.connect(&schema).await);
    let admin = db.admin().await;
    const TASKS: usize = 120;
    const MAX_ACTIVE: usize = 25;
    let bounds = limits(100, MAX_ACTIVE);
    let scope_of = |i: usize| {
        Scope::new(if i.is_multiple_of(2) {
            "shared"
        } else {
            "other"
        })
    };

    // Every id is created twice at once (one of each pair is a duplicate), the second time in
    // a third scope, so that a full scope does not refuse it first (the per-scope bound is
    // checked before the id); creates beyond a bound are refused; half of the stored tasks
    // are completed as soon as they exist.
    let mut set = tokio::task::JoinSet::new();
    for i in 0..2 * TASKS {
        let store = store.clone();
        set.spawn(async move {
            let n = i / 2;
            let name = format!("t{n}");
            let scope = if i % 2 == 1 {
                Scope::new("again")
            } else {
                scope_of(n)
            };
            let created = store
                .create(
                    new_task(&name, None),
                    work(&scope, &name).into(),
                    bounds,
                    &NODE_A,
                )
                .await;
            match created {
                Ok(created) if n.is_multiple_of(2) => {
                    complete(&*store, &scope, &created.snapshot.task).await;
                    Ok(())
                }
                Ok(_) => Ok(()),
                Err(refusal) => Err(refusal),
            }
        });
    }
    let mut stored = 0;
    let mut refusals = BTreeMap::new();
    while let Some(joined) = set.join_next().await {
        match joined.expect("create task panicked") {
            Ok(()) => stored += 1,
            Err(refusal @ (StoreError::Duplicate | StoreError::Capacity(_))) => {
                *refusals.entry(format!("{refusal:?}")).or_insert(0) += 1;
            }
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert!(stored <= 100, "max_tasks holds: {stored} stored");
    assert!(
        refusals.contains_key("Duplicate"),
        "duplicates were refused: {refusals:?}"
    );
    let counted = counters(&admin, &schema).await;
    assert_eq!(counted, actual(&admin, &schema).await);
    assert_eq!(counted.total, i64::try_from(stored).expect("small"));
    assert!(counted
        .active
        .values()
        .all(|n| *n <= i64::try_from(MAX_ACTIVE).expect("small")));
    assert_eq!(store.task_count().await.expect("count"), stored);
}
