//! The behavioural contract every [`Store`] implementation must satisfy.
//!
//! Each `pub async fn` here checks one rule of the [`Store`] documentation and panics (with a
//! message naming the rule) when the store breaks it. [`run_all`] runs every check, each against a
//! fresh store from `make`. A backend crate runs the suite from its own tests:
//!
//! ```
//! use tasks_runtime::store::contract;
//! use tasks_runtime::MemoryStore;
//!
//! # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! # rt.block_on(async {
//! contract::run_all(MemoryStore::new).await;
//! # });
//! ```
//!
//! The checks pass `now` explicitly, so no clock (and no tokio `test-util`) is needed; they must
//! run inside a tokio runtime because [`concurrent_creates_respect_max_tasks`] spawns tasks. Run
//! it on a multi-thread runtime for the concurrency check to exercise real parallelism. A store
//! backed by shared external state (a database) must make `make` return an empty store each time.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{json, Value};
use tasks_core::{
    apply, CapacityLimit, Event, InputRequest, JsonObject, NewTask, Task, TaskId, TaskStatus,
    TaskUpdate, Timestamp,
};

use super::{CasOutcome, CreateLimits, Snapshot, Store, StoreError};
use crate::scope::Scope;
use crate::work::Work;

/// The creation time of every task the checks create (2026-11-03T18:04:05.123Z).
pub const T0: Timestamp = Timestamp::from_unix_millis(1_793_729_045_123);

/// The TTL of the expiring tasks the checks create, in milliseconds.
pub const TTL_MS: u64 = 60_000;

/// Limits that no check reaches unless it means to.
pub const ROOMY: CreateLimits = CreateLimits {
    max_tasks: 1_000,
    max_active_per_scope: 1_000,
};

/// Runs every check of the contract, each on a fresh store from `make`.
///
/// # Panics
/// When the store breaks a rule; the message names it.
pub async fn run_all<S: Store>(make: impl Fn() -> S) {
    create_then_get(&make()).await;
    get_from_another_scope_is_none(&make()).await;
    get_unknown_id_is_none(&make()).await;
    transition_with_current_revision_commits(&make()).await;
    transition_with_stale_revision_conflicts(&make()).await;
    transition_on_another_scope_or_unknown_id_is_not_found(&make()).await;
    expired_tasks_are_absent_before_reaping(&make()).await;
    tasks_without_ttl_never_expire(&make()).await;
    reap_deletes_exactly_the_expired_tasks(&make()).await;
    max_tasks_refuses_and_stores_nothing(&make()).await;
    max_active_per_scope_refuses_and_stores_nothing(&make()).await;
    terminal_tasks_do_not_count_as_active(&make()).await;
    reaping_frees_capacity(&make()).await;
    duplicate_id_is_refused_and_changes_nothing(&make()).await;
    work_is_returned_for_its_scope_only(&make()).await;
    concurrent_creates_respect_max_tasks(Arc::new(make())).await;
}

// ---- helpers ---------------------------------------------------------------------------------

fn id(text: &str) -> TaskId {
    TaskId::parse(text).expect("contract task ids are valid")
}

fn task(task_id: &str, ttl_ms: Option<u64>) -> NewTask {
    NewTask::new(id(task_id), T0, ttl_ms, None)
}

fn work(scope: &Scope, tool: &str) -> Work {
    let mut arguments = JsonObject::new();
    arguments.insert("tool".into(), Value::from(tool));
    Work {
        tool: tool.to_owned(),
        arguments,
        input_responses: None,
        client_capabilities: JsonObject::new(),
        scope: scope.clone(),
    }
}

fn alice() -> Scope {
    Scope::new("alice")
}

fn bob() -> Scope {
    Scope::new("bob")
}

fn at(ms_after_t0: u64) -> Timestamp {
    T0.plus_millis(ms_after_t0)
}

/// The reducer's update for `event`: the only thing a store commits.
fn next(task: &Task, event: Event, now: Timestamp) -> TaskUpdate {
    apply(task, event, now)
        .expect("contract events are valid")
        .into_update()
        .expect("contract events change the task")
}

fn input_request() -> InputRequest {
    InputRequest {
        method: "elicitation/create".into(),
        params: json!({"message": "Continue?"}).as_object().cloned(),
    }
}

fn completed(task: &Task, now: Timestamp) -> TaskUpdate {
    let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
    let Value::Object(result) = result else {
        unreachable!()
    };
    next(task, Event::Completed { result }, now)
}

async fn create_ok<S: Store + ?Sized>(
    store: &S,
    task_id: &str,
    scope: &Scope,
    ttl_ms: Option<u64>,
) -> Snapshot {
    store
        .create(task(task_id, ttl_ms), work(scope, task_id), ROOMY)
        .await
        .unwrap_or_else(|e| panic!("create {task_id} within roomy limits failed: {e}"))
}

async fn get<S: Store + ?Sized>(
    store: &S,
    scope: &Scope,
    task_id: &str,
    now: Timestamp,
) -> Option<Snapshot> {
    store
        .get(scope, &id(task_id), now)
        .await
        .expect("get must not fail")
}

async fn count<S: Store + ?Sized>(store: &S) -> usize {
    store.task_count().await.expect("task_count must not fail")
}

/// Commits `update` and checks what a committed snapshot must be: exactly the update's task,
/// one revision after the one it replaced.
async fn transition<S: Store + ?Sized>(
    store: &S,
    scope: &Scope,
    update: TaskUpdate,
    now: Timestamp,
) -> CasOutcome {
    let expected = update.clone();
    let outcome = store
        .transition(scope, update, now)
        .await
        .expect("transition must not fail");
    if let CasOutcome::Committed(snapshot) = &outcome {
        assert_eq!(
            *snapshot.task,
            *expected.task(),
            "the committed task is the update's"
        );
        assert_eq!(snapshot.task.revision(), expected.expected_revision() + 1);
    }
    outcome
}

// ---- checks ----------------------------------------------------------------------------------

/// `create` stores the task at revision 1 and `get` returns it unchanged, with its scope.
pub async fn create_then_get<S: Store>(store: &S) {
    let created = create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    assert_eq!(created.task.revision(), 1, "create: revision is 1");
    assert_eq!(
        *created.task,
        *task("task-a", Some(TTL_MS)).task(),
        "create: same task"
    );
    assert_eq!(created.scope, alice(), "create: snapshot carries the scope");

    let read = get(store, &alice(), "task-a", at(0))
        .await
        .expect("get: a created task is found");
    assert_eq!(
        *read.task,
        *task("task-a", Some(TTL_MS)).task(),
        "get: same task"
    );
    assert_eq!(read.task.revision(), 1, "get: revision 1");
    assert_eq!(read.task.status(), TaskStatus::Working, "get: working");
    assert_eq!(read.scope, alice(), "get: snapshot carries the scope");
    assert_eq!(count(store).await, 1, "task_count after one create");
}

/// A task is invisible to every other scope.
pub async fn get_from_another_scope_is_none<S: Store>(store: &S) {
    create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    assert!(
        get(store, &bob(), "task-a", at(0)).await.is_none(),
        "get from another scope must be None"
    );
    assert!(
        get(store, &Scope::shared(), "task-a", at(0))
            .await
            .is_none(),
        "get from the shared scope must be None for a principal's task"
    );
}

/// An id that was never created reads as `None`.
pub async fn get_unknown_id_is_none<S: Store>(store: &S) {
    assert!(get(store, &alice(), "nope", at(0)).await.is_none());
    create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    assert!(
        get(store, &alice(), "task-b", at(0)).await.is_none(),
        "get of an unknown id must be None"
    );
}

/// `transition` with the stored revision commits and returns the new snapshot.
pub async fn transition_with_current_revision_commits<S: Store>(store: &S) {
    let created = create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    let asked = next(
        &created.task,
        Event::InputRequested {
            key: "confirm".into(),
            request: input_request(),
        },
        at(10),
    );
    let CasOutcome::Committed(snapshot) = transition(store, &alice(), asked.clone(), at(10)).await
    else {
        panic!("transition with the current revision must commit");
    };
    assert_eq!(
        *snapshot.task,
        *asked.task(),
        "committed snapshot is the new task"
    );
    assert_eq!(snapshot.task.revision(), 2);
    assert_eq!(snapshot.scope, alice());
    let read = get(store, &alice(), "task-a", at(10)).await.expect("found");
    assert_eq!(*read.task, *asked.task(), "get returns the committed task");

    let done = completed(asked.task(), at(20));
    let CasOutcome::Committed(snapshot) = transition(store, &alice(), done.clone(), at(20)).await
    else {
        panic!("second transition with the current revision must commit");
    };
    assert_eq!(snapshot.task.revision(), 3);
    assert_eq!(snapshot.task.status(), TaskStatus::Completed);
    assert_eq!(count(store).await, 1, "a transition does not add a task");
}

/// `transition` with a stale revision is a conflict carrying the current snapshot, and changes
/// nothing.
pub async fn transition_with_stale_revision_conflicts<S: Store>(store: &S) {
    let created = create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    let asked = next(
        &created.task,
        Event::InputRequested {
            key: "confirm".into(),
            request: input_request(),
        },
        at(10),
    );
    assert!(matches!(
        transition(store, &alice(), asked.clone(), at(10)).await,
        CasOutcome::Committed(_)
    ));
    // A writer that still holds revision 1 tries to complete the task.
    let stale = completed(&created.task, at(20));
    match transition(store, &alice(), stale, at(20)).await {
        CasOutcome::Conflict(current) => {
            assert_eq!(
                *current.task,
                *asked.task(),
                "conflict carries the current task"
            );
            assert_eq!(current.task.revision(), 2);
            assert_eq!(current.scope, alice());
        }
        other => panic!("stale revision must conflict, got {other:?}"),
    }
    // A revision from the future conflicts too: an update expecting revision 3.
    let mut ahead = created.task.as_ref().clone();
    for message in ["a", "b"] {
        let update = next(
            &ahead,
            Event::StatusMessage {
                message: message.into(),
            },
            at(15),
        );
        ahead = update.into_task();
    }
    let future = completed(&ahead, at(20));
    assert_eq!(future.expected_revision(), 3);
    assert!(
        matches!(
            transition(store, &alice(), future, at(20)).await,
            CasOutcome::Conflict(_)
        ),
        "a revision that is not the stored one must conflict"
    );
    let read = get(store, &alice(), "task-a", at(20)).await.expect("found");
    assert_eq!(*read.task, *asked.task(), "a conflict changes nothing");
}

/// `transition` on another scope's task or an unknown id is `NotFound` and changes nothing.
pub async fn transition_on_another_scope_or_unknown_id_is_not_found<S: Store>(store: &S) {
    let created = create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    let done = completed(&created.task, at(10));
    assert!(
        matches!(
            transition(store, &bob(), done.clone(), at(10)).await,
            CasOutcome::NotFound
        ),
        "transition from another scope must be NotFound"
    );
    let unknown = completed(task("task-z", Some(TTL_MS)).task(), at(10));
    assert!(
        matches!(
            transition(store, &alice(), unknown, at(10)).await,
            CasOutcome::NotFound
        ),
        "transition of an unknown id must be NotFound"
    );
    let read = get(store, &alice(), "task-a", at(10)).await.expect("found");
    assert_eq!(*read.task, *created.task, "NotFound changes nothing");
    assert_eq!(count(store).await, 1, "NotFound stores nothing");
}

/// A task expired at `now` (`now >= createdAt + ttlMs`) is absent on every path before reaping.
pub async fn expired_tasks_are_absent_before_reaping<S: Store>(store: &S) {
    let created = create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    let last_live = at(TTL_MS - 1);
    let expiry = at(TTL_MS);
    assert!(
        get(store, &alice(), "task-a", last_live).await.is_some(),
        "a task is readable until createdAt + ttlMs"
    );
    assert!(
        get(store, &alice(), "task-a", expiry).await.is_none(),
        "get at createdAt + ttlMs must be None"
    );
    assert!(
        get(store, &alice(), "task-a", at(10 * TTL_MS))
            .await
            .is_none(),
        "get long after expiry must be None"
    );
    let done = completed(&created.task, expiry);
    assert!(
        matches!(
            transition(store, &alice(), done, expiry).await,
            CasOutcome::NotFound
        ),
        "transition of an expired task must be NotFound"
    );
    // Still stored (not reaped), and still unchanged for a reader that is earlier in time.
    assert_eq!(count(store).await, 1, "expiry alone deletes nothing");
    let read = get(store, &alice(), "task-a", last_live)
        .await
        .expect("found");
    assert_eq!(
        *read.task, *created.task,
        "NotFound on expiry changes nothing"
    );
}

/// `ttl_ms: None` never expires and is never reaped.
pub async fn tasks_without_ttl_never_expire<S: Store>(store: &S) {
    let created = create_ok(store, "forever", &alice(), None).await;
    let far = Timestamp::from_unix_millis(u64::MAX);
    assert!(
        get(store, &alice(), "forever", far).await.is_some(),
        "a task without TTL is readable at any time"
    );
    assert!(
        store.reap(far).await.expect("reap").is_empty(),
        "a task without TTL is never reaped"
    );
    let done = completed(&created.task, far);
    assert!(matches!(
        transition(store, &alice(), done, far).await,
        CasOutcome::Committed(_)
    ));
    assert_eq!(count(store).await, 1);
}

/// `reap` deletes exactly the tasks expired at `now`, returns their ids, and `task_count` drops.
pub async fn reap_deletes_exactly_the_expired_tasks<S: Store>(store: &S) {
    create_ok(store, "short-1", &alice(), Some(1_000)).await;
    let short_2 = create_ok(store, "short-2", &bob(), Some(1_000)).await;
    create_ok(store, "long", &alice(), Some(TTL_MS)).await;
    create_ok(store, "forever", &bob(), None).await;
    // A terminal task expires like any other.
    let done = completed(&short_2.task, at(5));
    assert!(matches!(
        transition(store, &bob(), done, at(5)).await,
        CasOutcome::Committed(_)
    ));
    assert_eq!(count(store).await, 4);

    assert!(
        store.reap(at(999)).await.expect("reap").is_empty(),
        "nothing has expired yet"
    );
    assert_eq!(count(store).await, 4);

    let mut reaped: Vec<String> = store
        .reap(at(1_000))
        .await
        .expect("reap")
        .iter()
        .map(|id| id.as_str().to_owned())
        .collect();
    reaped.sort();
    assert_eq!(
        reaped,
        ["short-1", "short-2"],
        "reap returns the expired ids"
    );
    assert_eq!(
        count(store).await,
        2,
        "task_count drops by the reaped tasks"
    );
    assert!(
        store.reap(at(1_000)).await.expect("reap").is_empty(),
        "a second pass reaps nothing"
    );
    assert!(get(store, &alice(), "long", at(1_000)).await.is_some());
    assert!(get(store, &bob(), "forever", at(1_000)).await.is_some());
    assert!(store
        .work(&alice(), &id("short-1"))
        .await
        .expect("work")
        .is_none());

    let reaped = store.reap(at(TTL_MS)).await.expect("reap");
    assert_eq!(reaped, vec![id("long")]);
    assert_eq!(count(store).await, 1);
}

/// `max_tasks` refuses with `Capacity(MaxTasks)` and stores nothing.
pub async fn max_tasks_refuses_and_stores_nothing<S: Store>(store: &S) {
    let limits = CreateLimits {
        max_tasks: 2,
        max_active_per_scope: 100,
    };
    for (name, scope) in [("t1", alice()), ("t2", bob())] {
        store
            .create(task(name, Some(TTL_MS)), work(&scope, name), limits)
            .await
            .expect("within max_tasks");
    }
    // Terminal tasks count towards max_tasks (they are still stored).
    let t1 = get(store, &alice(), "t1", at(0)).await.expect("found");
    assert!(matches!(
        transition(store, &alice(), completed(&t1.task, at(1)), at(1)).await,
        CasOutcome::Committed(_)
    ));
    let refused = store
        .create(
            task("t3", Some(TTL_MS)),
            work(&Scope::new("carol"), "t3"),
            limits,
        )
        .await;
    assert_eq!(
        refused.map(|s| s.task.id().clone()),
        Err(StoreError::Capacity(CapacityLimit::MaxTasks))
    );
    assert_eq!(count(store).await, 2, "a refused create stores nothing");
    assert!(get(store, &Scope::new("carol"), "t3", at(0))
        .await
        .is_none());
    assert!(store
        .work(&Scope::new("carol"), &id("t3"))
        .await
        .expect("work")
        .is_none());
}

/// `max_active_per_scope` refuses with `Capacity(MaxActiveTasksPerScope)`, stores nothing, and
/// does not limit other scopes.
pub async fn max_active_per_scope_refuses_and_stores_nothing<S: Store>(store: &S) {
    let limits = CreateLimits {
        max_tasks: 100,
        max_active_per_scope: 2,
    };
    for name in ["a1", "a2"] {
        store
            .create(task(name, Some(TTL_MS)), work(&alice(), name), limits)
            .await
            .expect("within max_active_per_scope");
    }
    let refused = store
        .create(task("a3", Some(TTL_MS)), work(&alice(), "a3"), limits)
        .await;
    assert_eq!(
        refused.map(|s| s.task.id().clone()),
        Err(StoreError::Capacity(CapacityLimit::MaxActiveTasksPerScope))
    );
    assert_eq!(count(store).await, 2, "a refused create stores nothing");
    assert!(get(store, &alice(), "a3", at(0)).await.is_none());
    // Another scope has its own budget.
    store
        .create(task("b1", Some(TTL_MS)), work(&bob(), "b1"), limits)
        .await
        .expect("another scope is not limited by alice's active tasks");
    assert_eq!(count(store).await, 3);
}

/// A task that became terminal no longer counts as active for its scope.
pub async fn terminal_tasks_do_not_count_as_active<S: Store>(store: &S) {
    let limits = CreateLimits {
        max_tasks: 100,
        max_active_per_scope: 1,
    };
    let first = store
        .create(task("a1", Some(TTL_MS)), work(&alice(), "a1"), limits)
        .await
        .expect("first");
    assert_eq!(
        store
            .create(task("a2", Some(TTL_MS)), work(&alice(), "a2"), limits)
            .await
            .map(|s| s.task.id().clone()),
        Err(StoreError::Capacity(CapacityLimit::MaxActiveTasksPerScope))
    );
    // input_required is still active.
    let asked = next(
        &first.task,
        Event::InputRequested {
            key: "k".into(),
            request: input_request(),
        },
        at(1),
    );
    assert!(matches!(
        transition(store, &alice(), asked.clone(), at(1)).await,
        CasOutcome::Committed(_)
    ));
    assert!(
        store
            .create(task("a2", Some(TTL_MS)), work(&alice(), "a2"), limits)
            .await
            .is_err(),
        "an input_required task is still active"
    );
    let cancelled = next(asked.task(), Event::Cancelled, at(2));
    assert!(matches!(
        transition(store, &alice(), cancelled, at(2)).await,
        CasOutcome::Committed(_)
    ));
    let second = store
        .create(task("a2", Some(TTL_MS)), work(&alice(), "a2"), limits)
        .await
        .expect("a terminal task frees its scope's active slot");
    assert_eq!(second.task.revision(), 1);
    assert_eq!(count(store).await, 2);
}

/// Reaping an expired non-terminal task frees both its `max_tasks` and its active slot.
pub async fn reaping_frees_capacity<S: Store>(store: &S) {
    let limits = CreateLimits {
        max_tasks: 1,
        max_active_per_scope: 1,
    };
    store
        .create(task("old", Some(1_000)), work(&alice(), "old"), limits)
        .await
        .expect("first");
    assert!(store
        .create(task("new", Some(1_000)), work(&alice(), "new"), limits)
        .await
        .is_err());
    assert_eq!(store.reap(at(1_000)).await.expect("reap"), vec![id("old")]);
    store
        .create(task("new", Some(1_000)), work(&alice(), "new"), limits)
        .await
        .expect("reaping frees max_tasks and the scope's active slot");
    assert_eq!(count(store).await, 1);
}

/// A taken id is refused with `Duplicate`, whatever the scope, and nothing changes.
pub async fn duplicate_id_is_refused_and_changes_nothing<S: Store>(store: &S) {
    let original = create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    let dup = store
        .create(task("task-a", None), work(&alice(), "other-tool"), ROOMY)
        .await;
    assert_eq!(dup.map(|s| s.task.id().clone()), Err(StoreError::Duplicate));
    let dup_other_scope = store
        .create(task("task-a", None), work(&bob(), "other-tool"), ROOMY)
        .await;
    assert_eq!(
        dup_other_scope.map(|s| s.task.id().clone()),
        Err(StoreError::Duplicate),
        "ids are unique across scopes"
    );
    assert_eq!(count(store).await, 1, "a duplicate stores nothing");
    let read = get(store, &alice(), "task-a", at(0)).await.expect("found");
    assert_eq!(*read.task, *original.task, "the original task is unchanged");
    assert!(get(store, &bob(), "task-a", at(0)).await.is_none());
    let stored_work = store
        .work(&alice(), &id("task-a"))
        .await
        .expect("work")
        .expect("found");
    assert_eq!(
        *stored_work,
        work(&alice(), "task-a"),
        "the original work is unchanged"
    );
    // Refused duplicates do not use up active capacity.
    let limits = CreateLimits {
        max_tasks: 2,
        max_active_per_scope: 2,
    };
    store
        .create(
            task("task-b", Some(TTL_MS)),
            work(&alice(), "task-b"),
            limits,
        )
        .await
        .expect("duplicates released their reservations");
}

/// `work` returns the descriptor stored with the task, for its own scope only.
pub async fn work_is_returned_for_its_scope_only<S: Store>(store: &S) {
    let mut descriptor = work(&alice(), "echo");
    descriptor
        .arguments
        .insert("text".into(), Value::from("hello"));
    descriptor.input_responses = json!({"user_name": {"action": "accept"}})
        .as_object()
        .cloned();
    store
        .create(task("task-a", Some(TTL_MS)), descriptor.clone(), ROOMY)
        .await
        .expect("create");
    create_ok(store, "task-b", &bob(), Some(TTL_MS)).await;

    let stored = store
        .work(&alice(), &id("task-a"))
        .await
        .expect("work")
        .expect("work of the owning scope");
    assert_eq!(*stored, descriptor);
    assert!(
        store
            .work(&bob(), &id("task-a"))
            .await
            .expect("work")
            .is_none(),
        "work from another scope must be None"
    );
    assert!(store
        .work(&alice(), &id("unknown"))
        .await
        .expect("work")
        .is_none());
    let other = store
        .work(&bob(), &id("task-b"))
        .await
        .expect("work")
        .expect("bob's work");
    assert_eq!(other.scope, bob());
}

/// Concurrent creates from many tokio tasks store exactly `max_tasks` tasks, with distinct ids;
/// every refusal is `Capacity(MaxTasks)`.
pub async fn concurrent_creates_respect_max_tasks<S: Store>(store: Arc<S>) {
    const ATTEMPTS: usize = 200;
    const MAX_TASKS: usize = 37;
    let limits = CreateLimits {
        max_tasks: MAX_TASKS,
        max_active_per_scope: ATTEMPTS,
    };
    let mut set = tokio::task::JoinSet::new();
    for i in 0..ATTEMPTS {
        let store = store.clone();
        set.spawn(async move {
            let name = format!("concurrent-{i}");
            let scope = Scope::new(format!("scope-{}", i % 3));
            store
                .create(task(&name, Some(TTL_MS)), work(&scope, &name), limits)
                .await
                .map(|s| s.task.id().clone())
        });
    }
    let mut stored = HashSet::new();
    let mut refused = 0;
    while let Some(joined) = set.join_next().await {
        match joined.expect("create task panicked") {
            Ok(id) => assert!(stored.insert(id), "ids are distinct"),
            Err(StoreError::Capacity(CapacityLimit::MaxTasks)) => refused += 1,
            Err(other) => panic!("unexpected refusal under max_tasks: {other:?}"),
        }
    }
    assert_eq!(stored.len(), MAX_TASKS, "exactly max_tasks creates succeed");
    assert_eq!(refused, ATTEMPTS - MAX_TASKS);
    assert_eq!(count(&*store).await, MAX_TASKS);
}
