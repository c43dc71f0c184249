//! The behavioural contract every [`Store`] implementation must satisfy, for
//! [`tasks_runtime::store::Store`] implementations to run from their own tests (as rustls keeps its
//! provider tests apart from the providers).
//!
//! Each `pub async fn` here checks one rule of the [`Store`] documentation and panics (with a
//! message naming the rule) when the store breaks it. [`run_all`] runs every check, each against a
//! fresh store from `make`; [`waits::run_all`] runs the runtime-level checks that every wait ends.
//! A store crate depends on this crate in its `[dev-dependencies]` only:
//!
//! ```toml
//! [dev-dependencies]
//! tasks-store-contract = "0.1"
//! ```
//!
//! It is test code, not covered by the semver promise of the other crates: a release may add
//! checks (which a store that passed before may then fail, because the runtime relies on the new
//! rule) or change the helpers and fixtures (ids, times, nodes, limits).
//!
//! ```
//! use tasks_runtime::store::MemoryStore;
//! use tasks_store_contract as contract;
//!
//! # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! # rt.block_on(async {
//! contract::run_all(|| async { MemoryStore::new() }).await;
//! # });
//! ```
//!
//! The checks pass `now` explicitly, so no clock (and no tokio `test-util`) is needed; they must
//! run inside a tokio runtime because [`concurrent_creates_respect_max_tasks`] spawns tasks. Run
//! it on a multi-thread runtime for the concurrency check to exercise real parallelism. A store
//! backed by shared external state (a database) must make `make` return an empty store each time.
//!
//! # Modules
//!
//! Each module uses only what its row names (checked by the workspace's layering test); both
//! use the crate root's helpers:
//!
//! | module | uses |
//! |---|---|
//! | `inventory` ([`inventory::run_all`]: the operator's inventory), `waits` ([`waits::run_all`]) | nothing of this crate |

pub mod inventory;
pub mod waits;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;

use serde_json::{json, Value};
use tasks_core::input::InputRequest;
use tasks_core::{
    apply, CapacityLimit, Event, JsonObject, NewTask, Task, TaskId, TaskStatus, TaskUpdate,
    Timestamp,
};

use tasks_runtime::store::{
    Authority, CasOutcome, Claimed, CreateLimits, Lease, Liveness, NodeId, Snapshot, StatusCounts,
    Store, StoreError,
};
use tasks_runtime::{Scope, Work};

/// The creation time of every task the checks create (2026-11-03T18:04:05.123Z).
pub const T0: Timestamp = Timestamp::from_unix_millis(1_793_729_045_123);

/// The TTL of the expiring tasks the checks create, in milliseconds.
pub const TTL_MS: u64 = 60_000;

/// Limits that no check reaches unless it means to.
pub const ROOMY: CreateLimits = CreateLimits {
    max_tasks: 1_000,
    max_active_per_scope: 1_000,
    lease_required: false,
};

/// The node that creates the checks' tasks.
pub const NODE_A: NodeId = NodeId::from_bytes([0xa; 16]);
/// A second node.
pub const NODE_B: NodeId = NodeId::from_bytes([0xb; 16]);

/// The node lease of the lease checks, in milliseconds.
pub const LEASE_MS: u64 = 1_000;

/// Runs every check of the contract, each on a fresh store from `make` (an async factory, so
/// a database store can create a fresh file or schema per check).
///
/// # Panics
/// When the store breaks a rule; the message names it.
pub async fn run_all<S, F, Fut>(make: F)
where
    S: Store,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    create_then_get(&make().await).await;
    status_counts_count_unexpired_tasks_by_status(&make().await).await;
    get_from_another_scope_is_none(&make().await).await;
    get_unknown_id_is_none(&make().await).await;
    transition_with_current_revision_commits(&make().await).await;
    transition_with_stale_revision_conflicts(&make().await).await;
    transition_on_another_scope_or_unknown_id_is_not_found(&make().await).await;
    expired_tasks_are_absent_before_reaping(&make().await).await;
    tasks_without_ttl_never_expire(&make().await).await;
    reap_deletes_exactly_the_expired_tasks(&make().await).await;
    max_tasks_refuses_and_stores_nothing(&make().await).await;
    max_active_per_scope_refuses_and_stores_nothing(&make().await).await;
    terminal_tasks_do_not_count_as_active(&make().await).await;
    reaping_frees_capacity(&make().await).await;
    duplicate_id_is_refused_and_changes_nothing(&make().await).await;
    work_is_returned_for_its_scope_only(&make().await).await;
    load_reads_any_scope_and_skips_missing_and_expired(&make().await).await;
    list_pages_one_scope_in_id_order(&make().await).await;
    answered_inputs_survive_the_store(&make().await).await;
    progress_survives_the_store(&make().await).await;
    the_origin_survives_the_store(&make().await).await;
    concurrent_creates_respect_max_tasks(Arc::new(make().await)).await;
    concurrent_reapers_keep_the_counts_exact(Arc::new(make().await)).await;
    create_grants_the_creator_generation_one(&make().await).await;
    a_create_requiring_the_lease_needs_a_live_owner(&make().await).await;
    heartbeat_extends_a_live_lease_and_never_revives_an_expired_one(&make().await).await;
    claim_takes_exactly_the_orphans(&make().await).await;
    a_stale_lease_is_fenced_and_changes_nothing(&make().await).await;
    request_writes_ignore_leases(&make().await).await;
    retire_makes_tasks_claimable_at_once(&make().await).await;
    a_node_never_claims_its_own_tasks(&make().await).await;
    attempts_are_charged_by_starts_never_by_claims(&make().await).await;
    held_lists_a_nodes_active_tasks_in_id_order(&make().await).await;
    concurrent_claimers_take_each_orphan_once(Arc::new(make().await)).await;
    a_completion_racing_a_claim_is_never_overwritten(Arc::new(make().await)).await;
}

// ---- helpers (public ones are shared with the stores' own tests) ----------------------------

/// The task id `text`.
///
/// # Panics
/// When `text` is not a valid task id.
pub fn id(text: &str) -> TaskId {
    TaskId::parse(text).expect("contract task ids are valid")
}

/// A new task `name` created at [`T0`] with `ttl_ms` (milliseconds; `None`: unlimited).
pub fn new_task(name: &str, ttl_ms: Option<u64>) -> NewTask {
    NewTask::new(id(name), T0, ttl_ms, None)
}

/// Task rows (the JSON of the `task` column of the SQLite and PostgreSQL stores) by task id,
/// for the stores' tests on old data: `old`, exactly as the builds before progress stored a
/// task created at [`T0`] without a TTL; `unknown-member`, the same with a member no build
/// knows (as a build without progress sees a row with it). Both read as
/// `Task::new(id, T0, None, None)`.
pub const ROWS_BEFORE_PROGRESS: [(&str, &str); 2] = [
    (
        "old",
        r#"{"taskId":"old","createdAt":"2026-11-03T18:04:05.123Z","lastUpdatedAt":"2026-11-03T18:04:05.123Z","ttlMs":null,"statusMessage":"Task accepted","revision":1,"status":"working"}"#,
    ),
    (
        "unknown-member",
        r#"{"taskId":"unknown-member","createdAt":"2026-11-03T18:04:05.123Z","lastUpdatedAt":"2026-11-03T18:04:05.123Z","ttlMs":null,"statusMessage":"Task accepted","revision":1,"status":"working","laterMember":{"x":1}}"#,
    ),
];

/// The end of the `old` row of [`ROWS_BEFORE_PROGRESS`] once it took [`one_of_four`]: one
/// optional member more.
pub const ROW_WITH_PROGRESS_END: &str =
    r#""status":"working","progress":{"progress":1,"total":4}}"#;

/// The reducer's update giving `task` the progress 1 of 4 at `now`.
///
/// # Panics
/// When `task` is terminal or already further.
pub fn one_of_four(task: &Task, now: Timestamp) -> TaskUpdate {
    let progress = tasks_core::Progress::new(1.0, Some(4.0)).expect("a valid progress");
    let event = Event::Progress {
        progress,
        message: None,
    };
    next(task, event, now)
}

/// `value` as a JSON object (`{}` for anything else).
pub fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// Work for `tool` in `scope`, with every field set (arguments, `inputResponses`, client
/// capabilities, trace context, a sealed principal), so a store that drops or garbles one is
/// caught.
pub fn work(scope: &Scope, tool: &str) -> Work {
    Work {
        tool: tool.to_owned(),
        arguments: object(json!({"text": format!("hello from {tool}"), "n": 3})),
        input_responses: Some(object(json!({"earlier": {"action": "accept"}}))),
        client_capabilities: object(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})),
        scope: scope.clone(),
        trace_parent: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned()),
        sealed_principal: Some(tasks_runtime::PrincipalKey::from_bytes([9; 32]).seal(
            &tasks_runtime::Principal::new("alice@example.com"),
            scope,
            [3; tasks_runtime::SEAL_NONCE_BYTES],
        )),
    }
}

fn alice() -> Scope {
    Scope::new("alice")
}

fn bob() -> Scope {
    Scope::new("bob")
}

/// [`T0`] plus `ms_after_t0` milliseconds.
pub fn at(ms_after_t0: u64) -> Timestamp {
    T0.plus_millis(ms_after_t0)
}

/// The reducer's update for `event`: the only thing a store commits.
///
/// # Panics
/// When `event` is refused or changes nothing.
pub fn next(task: &Task, event: Event, now: Timestamp) -> TaskUpdate {
    apply(task, event, now)
        .expect("contract events are valid")
        .into_update()
        .expect("contract events change the task")
}

fn input_request() -> InputRequest {
    InputRequest::elicit_form("Continue?", json!({"type": "object", "properties": {}}))
}

fn completed(task: &Task, now: Timestamp) -> TaskUpdate {
    let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
    let Value::Object(result) = result else {
        unreachable!()
    };
    next(
        task,
        Event::Completed {
            result: result.into(),
        },
        now,
    )
}

/// `store.create` by [`NODE_A`], as the snapshot.
async fn create_in<S: Store + ?Sized>(
    store: &S,
    task: NewTask,
    work: Work,
    limits: CreateLimits,
) -> Result<Snapshot, StoreError> {
    store
        .create(task, work.into(), limits, &NODE_A)
        .await
        .map(|created| created.snapshot)
}

async fn create_ok<S: Store + ?Sized>(
    store: &S,
    task_id: &str,
    scope: &Scope,
    ttl_ms: Option<u64>,
) -> Snapshot {
    create_in(
        store,
        new_task(task_id, ttl_ms),
        work(scope, task_id),
        ROOMY,
    )
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
        .transition(Authority::Request(scope), update, now)
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
        *new_task("task-a", Some(TTL_MS)).task(),
        "create: same task"
    );
    assert_eq!(created.scope, alice(), "create: snapshot carries the scope");

    let read = get(store, &alice(), "task-a", at(0))
        .await
        .expect("get: a created task is found");
    assert_eq!(
        *read.task,
        *new_task("task-a", Some(TTL_MS)).task(),
        "get: same task"
    );
    assert_eq!(read.task.revision(), 1, "get: revision 1");
    assert_eq!(read.task.status(), TaskStatus::Working, "get: working");
    assert_eq!(read.scope, alice(), "get: snapshot carries the scope");
    assert_eq!(count(store).await, 1, "task_count after one create");
}

/// `load` is the change consumer's read: every scope, the current revision, unknown and
/// expired ids left out.
pub async fn load_reads_any_scope_and_skips_missing_and_expired<S: Store>(store: &S) {
    let a = create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    create_ok(store, "task-b", &bob(), None).await;
    create_ok(store, "task-short", &bob(), Some(1)).await;
    let done = completed(&a.task, at(5));
    assert!(
        matches!(
            transition(store, &alice(), done, at(5)).await,
            CasOutcome::Committed(_)
        ),
        "load: completing task-a commits"
    );
    let ids = [
        id("task-a"),
        id("task-b"),
        id("task-short"),
        id("task-none"),
    ];
    let mut loaded = store.load(&ids, at(10)).await.expect("load must not fail");
    loaded.sort_by(|x, y| x.task.id().as_str().cmp(y.task.id().as_str()));
    let seen: Vec<(&str, u64, Scope)> = loaded
        .iter()
        .map(|s| (s.task.id().as_str(), s.task.revision(), s.scope.clone()))
        .collect();
    assert_eq!(
        seen,
        vec![("task-a", 2, alice()), ("task-b", 1, bob())],
        "load: both scopes at their current revision; the expired and unknown ids left out"
    );
    assert_eq!(
        loaded[0].task.status(),
        TaskStatus::Completed,
        "load: the committed state"
    );
    assert!(
        store.load(&[], at(10)).await.expect("load").is_empty(),
        "load of no ids is empty"
    );
}

/// `list` answers one scope's unexpired tasks in id order, a page at a time (a store that
/// cannot list, answering `None`, passes).
pub async fn list_pages_one_scope_in_id_order<S: Store>(store: &S) {
    for name in ["c", "a", "e", "b"] {
        create_ok(store, name, &alice(), Some(TTL_MS)).await;
    }
    create_ok(store, "d", &bob(), Some(TTL_MS)).await;
    create_ok(store, "short", &alice(), Some(5)).await;
    let ids = |page: Vec<Snapshot>| -> Vec<String> {
        page.iter()
            .map(|s| s.task.id().as_str().to_owned())
            .collect()
    };
    let Some(first) = store.list(&alice(), None, 3, at(10)).await.expect("list") else {
        return;
    };
    assert_eq!(
        ids(first),
        ["a", "b", "c"],
        "list: the first page, in id order"
    );
    let after = id("c");
    let rest = store
        .list(&alice(), Some(&after), 3, at(10))
        .await
        .expect("list");
    assert_eq!(
        ids(rest.expect("a listing store lists every page")),
        ["e"],
        "list: after the cursor; another scope's and expired tasks left out"
    );
    let bobs = store.list(&bob(), None, 10, at(10)).await.expect("list");
    assert_eq!(
        ids(bobs.expect("listed")),
        ["d"],
        "list: only the scope's tasks"
    );
    let none = store
        .list(&Scope::shared(), None, 10, at(10))
        .await
        .expect("list");
    assert!(none.expect("listed").is_empty(), "list: an empty scope");
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
    let unknown = completed(new_task("task-z", Some(TTL_MS)).task(), at(10));
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
        lease_required: false,
    };
    for (name, scope) in [("t1", alice()), ("t2", bob())] {
        create_in(
            store,
            new_task(name, Some(TTL_MS)),
            work(&scope, name),
            limits,
        )
        .await
        .expect("within max_tasks");
    }
    // Terminal tasks count towards max_tasks (they are still stored).
    let t1 = get(store, &alice(), "t1", at(0)).await.expect("found");
    assert!(matches!(
        transition(store, &alice(), completed(&t1.task, at(1)), at(1)).await,
        CasOutcome::Committed(_)
    ));
    let refused = create_in(
        store,
        new_task("t3", Some(TTL_MS)),
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
        lease_required: false,
    };
    for name in ["a1", "a2"] {
        create_in(
            store,
            new_task(name, Some(TTL_MS)),
            work(&alice(), name),
            limits,
        )
        .await
        .expect("within max_active_per_scope");
    }
    let refused = create_in(
        store,
        new_task("a3", Some(TTL_MS)),
        work(&alice(), "a3"),
        limits,
    )
    .await;
    assert_eq!(
        refused.map(|s| s.task.id().clone()),
        Err(StoreError::Capacity(CapacityLimit::MaxActiveTasksPerScope))
    );
    assert_eq!(count(store).await, 2, "a refused create stores nothing");
    assert!(get(store, &alice(), "a3", at(0)).await.is_none());
    // Another scope has its own budget.
    create_in(
        store,
        new_task("b1", Some(TTL_MS)),
        work(&bob(), "b1"),
        limits,
    )
    .await
    .expect("another scope is not limited by alice's active tasks");
    assert_eq!(count(store).await, 3);
}

/// A task that became terminal no longer counts as active for its scope.
pub async fn terminal_tasks_do_not_count_as_active<S: Store>(store: &S) {
    let limits = CreateLimits {
        max_tasks: 100,
        max_active_per_scope: 1,
        lease_required: false,
    };
    let first = create_in(
        store,
        new_task("a1", Some(TTL_MS)),
        work(&alice(), "a1"),
        limits,
    )
    .await
    .expect("first");
    assert_eq!(
        create_in(
            store,
            new_task("a2", Some(TTL_MS)),
            work(&alice(), "a2"),
            limits
        )
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
        create_in(
            store,
            new_task("a2", Some(TTL_MS)),
            work(&alice(), "a2"),
            limits
        )
        .await
        .is_err(),
        "an input_required task is still active"
    );
    let cancelled = next(asked.task(), Event::Cancelled, at(2));
    assert!(matches!(
        transition(store, &alice(), cancelled, at(2)).await,
        CasOutcome::Committed(_)
    ));
    let second = create_in(
        store,
        new_task("a2", Some(TTL_MS)),
        work(&alice(), "a2"),
        limits,
    )
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
        lease_required: false,
    };
    create_in(
        store,
        new_task("old", Some(1_000)),
        work(&alice(), "old"),
        limits,
    )
    .await
    .expect("first");
    assert!(create_in(
        store,
        new_task("new", Some(1_000)),
        work(&alice(), "new"),
        limits
    )
    .await
    .is_err());
    assert_eq!(store.reap(at(1_000)).await.expect("reap"), vec![id("old")]);
    create_in(
        store,
        new_task("new", Some(1_000)),
        work(&alice(), "new"),
        limits,
    )
    .await
    .expect("reaping frees max_tasks and the scope's active slot");
    assert_eq!(count(store).await, 1);
}

/// A taken id is refused with `Duplicate`, whatever the scope, and nothing changes.
pub async fn duplicate_id_is_refused_and_changes_nothing<S: Store>(store: &S) {
    let original = create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    let dup = create_in(
        store,
        new_task("task-a", None),
        work(&alice(), "other-tool"),
        ROOMY,
    )
    .await;
    assert_eq!(dup.map(|s| s.task.id().clone()), Err(StoreError::Duplicate));
    let dup_other_scope = create_in(
        store,
        new_task("task-a", None),
        work(&bob(), "other-tool"),
        ROOMY,
    )
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
        lease_required: false,
    };
    create_in(
        store,
        new_task("task-b", Some(TTL_MS)),
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
    create_in(
        store,
        new_task("task-a", Some(TTL_MS)),
        descriptor.clone(),
        ROOMY,
    )
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
        lease_required: false,
    };
    let mut set = tokio::task::JoinSet::new();
    for i in 0..ATTEMPTS {
        let store = store.clone();
        set.spawn(async move {
            let name = format!("concurrent-{i}");
            let scope = Scope::new(format!("scope-{}", i % 3));
            create_in(
                &*store,
                new_task(&name, Some(TTL_MS)),
                work(&scope, &name),
                limits,
            )
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

/// Registers [`NODE_A`], creates `task-a` for alice with it, and commits the updates `make`
/// builds from the created task, in order. Checks that the last update's task reads back
/// through `get`, and through a claim by [`NODE_B`] once A's lease ran out (what `what` says
/// must survive); returns that task.
async fn survives_get_and_claim<S: Store + ?Sized>(
    store: &S,
    make: impl FnOnce(&Task) -> Vec<TaskUpdate>,
    what: &str,
) -> Arc<Task> {
    store
        .register_node(&NODE_A, T0, LEASE_MS)
        .await
        .expect("register");
    let created = create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    let updates = make(&created.task);
    let last = updates.last().expect("updates").task().clone();
    for update in updates {
        assert!(matches!(
            transition(store, &alice(), update, at(20)).await,
            CasOutcome::Committed(_)
        ));
    }
    let read = get(store, &alice(), "task-a", at(20)).await.expect("found");
    assert_eq!(*read.task, last, "{what} reads back");
    store
        .register_node(&NODE_B, at(2 * LEASE_MS), LEASE_MS)
        .await
        .expect("register");
    let claimed = claim(store, &NODE_B, at(2 * LEASE_MS), 10).await;
    assert_eq!(claimed.len(), 1, "the orphan is claimed");
    assert_eq!(
        *claimed[0].snapshot.task, last,
        "a claim carries {what} to the re-run"
    );
    read.task
}

/// Accepted input responses are stored with the task (so a re-run can replay them) and read
/// back exactly, through `get` and through a claim.
pub async fn answered_inputs_survive_the_store<S: Store>(store: &S) {
    let read = survives_get_and_claim(
        store,
        |created| {
            let asked = next(
                created,
                Event::InputRequested {
                    key: "confirm".into(),
                    request: input_request(),
                },
                at(10),
            );
            let answer = json!({"action": "accept", "content": {}});
            let responses = std::collections::BTreeMap::from([("confirm".to_owned(), answer)]);
            let answered = next(
                asked.task(),
                Event::InputResponsesAccepted { responses },
                at(20),
            );
            vec![asked, answered]
        },
        "the answered task",
    )
    .await;
    assert!(
        read.answer("confirm").is_some(),
        "the accepted answer is stored with the task"
    );
}

/// The progress a task's work reported ([`Event::Progress`]) is stored with the task and read
/// back exactly, through `get`, through a claim (a re-run keeps it), and once the task is
/// terminal.
pub async fn progress_survives_the_store<S: Store>(store: &S) {
    let progress = |done: f64, total: Option<f64>| Event::Progress {
        progress: tasks_core::Progress::new(done, total).expect("a valid progress"),
        message: Some(format!("{done} done")),
    };
    let read = survives_get_and_claim(
        store,
        |created| {
            let first = next(created, progress(1.0, Some(3.0)), at(10));
            let second = next(first.task(), progress(2.5, None), at(20));
            vec![first, second]
        },
        "the progress",
    )
    .await;
    assert_eq!(read.progress().map(|p| p.done()), Some(2.5));
    let done = completed(&read, at(2 * LEASE_MS + 10));
    assert!(matches!(
        transition(store, &alice(), done.clone(), at(2 * LEASE_MS + 10)).await,
        CasOutcome::Committed(_)
    ));
    let read = get(store, &alice(), "task-a", at(2 * LEASE_MS + 10))
        .await
        .expect("found");
    assert_eq!(
        *read.task,
        *done.task(),
        "a terminal task keeps its progress"
    );
    assert_eq!(read.task.progress().map(|p| p.done()), Some(2.5));
}

/// The task design that created a task ([`tasks_core::TaskOrigin`]) is stored with it and
/// read back, through `get`, through `load` and once the task is terminal; a task of the
/// extension (the default) reads as one.
pub async fn the_origin_survives_the_store<S: Store>(store: &S) {
    use tasks_core::TaskOrigin;
    let legacy = new_task("legacy", Some(TTL_MS)).with_origin(TaskOrigin::Experimental2025);
    create_in(store, legacy, work(&alice(), "legacy"), ROOMY)
        .await
        .expect("create legacy");
    create_ok(store, "modern", &alice(), Some(TTL_MS)).await;
    let origin = |snapshot: Option<Snapshot>| snapshot.expect("found").task.origin();
    assert_eq!(
        origin(get(store, &alice(), "legacy", at(10)).await),
        TaskOrigin::Experimental2025
    );
    assert_eq!(
        origin(get(store, &alice(), "modern", at(10)).await),
        TaskOrigin::Extension
    );
    let loaded = store
        .load(&[id("legacy")], at(10))
        .await
        .expect("load must not fail");
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].task.origin(), TaskOrigin::Experimental2025);
    let read = get(store, &alice(), "legacy", at(10)).await.expect("found");
    let done = completed(&read.task, at(20));
    assert!(matches!(
        transition(store, &alice(), done, at(20)).await,
        CasOutcome::Committed(_)
    ));
    let ended = get(store, &alice(), "legacy", at(30)).await.expect("found");
    assert!(ended.task.is_terminal());
    assert_eq!(
        ended.task.origin(),
        TaskOrigin::Experimental2025,
        "a terminal task keeps its origin"
    );
}

/// Reapers running at once delete each expired task once and keep the counts exact.
pub async fn concurrent_reapers_keep_the_counts_exact<S: Store>(store: Arc<S>) {
    for i in 0..40 {
        create_ok(&*store, &format!("old-{i}"), &alice(), Some(1_000)).await;
    }
    for i in 0..5 {
        create_ok(&*store, &format!("keep-{i}"), &alice(), None).await;
    }
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let store = store.clone();
        set.spawn(async move { store.reap(at(1_000)).await.expect("reap") });
    }
    let mut reaped = Vec::new();
    while let Some(joined) = set.join_next().await {
        reaped.extend(joined.expect("reaper panicked"));
    }
    let distinct: HashSet<_> = reaped.iter().cloned().collect();
    assert_eq!(reaped.len(), 40, "each expired task is reaped exactly once");
    assert_eq!(distinct.len(), 40);
    assert_eq!(count(&*store).await, 5, "task_count after concurrent reaps");
    let limits = CreateLimits {
        max_tasks: 100,
        max_active_per_scope: 6,
        lease_required: false,
    };
    create_in(
        &*store,
        new_task("one-more", None),
        work(&alice(), "x"),
        limits,
    )
    .await
    .expect("the reaped tasks freed their active slots");
    assert_eq!(
        create_in(
            &*store,
            new_task("too-many", None),
            work(&alice(), "x"),
            limits
        )
        .await
        .map(|s| s.task.id().clone()),
        Err(StoreError::Capacity(CapacityLimit::MaxActiveTasksPerScope)),
        "the active count is exact after concurrent reaps"
    );
}

async fn claim<S: Store + ?Sized>(
    store: &S,
    node: &NodeId,
    now: Timestamp,
    max: usize,
) -> Vec<Claimed> {
    store
        .claim_orphans(node, now, max)
        .await
        .expect("claim_orphans must not fail")
}

/// Creates task `name` of alice's scope for `node`, kept `ttl` ms.
async fn create_by<S: Store + ?Sized>(
    store: &S,
    name: &str,
    node: NodeId,
    ttl: u64,
) -> tasks_runtime::store::Created {
    store
        .create(
            new_task(name, Some(ttl)),
            work(&alice(), name).into(),
            ROOMY,
            &node,
        )
        .await
        .expect("create")
}

async fn register<S: Store + ?Sized>(store: &S, node: &NodeId, now: Timestamp, lease_ms: u64) {
    store
        .register_node(node, now, lease_ms)
        .await
        .expect("register_node must not fail");
}

async fn worker_write<S: Store + ?Sized>(
    store: &S,
    lease: &Lease,
    update: TaskUpdate,
    now: Timestamp,
) -> CasOutcome {
    store
        .transition(Authority::Worker(lease), update, now)
        .await
        .expect("transition must not fail")
}

/// A create with [`CreateLimits::lease_required`] is refused with [`StoreError::LeaseLost`],
/// before any capacity bound, when its owner never registered or its lease ended by the task's
/// creation time; nothing is stored and no capacity is used. A live owner creates as before, and
/// without the requirement nobody's lease is looked at.
pub async fn a_create_requiring_the_lease_needs_a_live_owner<S: Store>(store: &S) {
    let leased = CreateLimits {
        lease_required: true,
        ..ROOMY
    };
    let create = |name: &'static str, limits: CreateLimits, node: NodeId| async move {
        store
            .create(
                new_task(name, Some(TTL_MS)),
                work(&alice(), name).into(),
                limits,
                &node,
            )
            .await
            .map(|created| created.lease)
    };
    assert_eq!(
        create("never-registered", leased, NODE_A).await,
        Err(StoreError::LeaseLost),
        "an owner that never registered"
    );
    // NODE_A's lease ends exactly at T0, the tasks' creation time.
    register(
        store,
        &NODE_A,
        Timestamp::from_unix_millis(T0.unix_millis() - LEASE_MS),
        LEASE_MS,
    )
    .await;
    let full = CreateLimits {
        max_tasks: 0,
        ..leased
    };
    assert_eq!(
        create("expired", full, NODE_A).await,
        Err(StoreError::LeaseLost),
        "an owner whose lease ended, refused before max_tasks"
    );
    assert_eq!(store.task_count().await.expect("task_count"), 0);
    for name in ["never-registered", "expired"] {
        assert!(
            store
                .get(&alice(), &id(name), T0)
                .await
                .expect("get")
                .is_none(),
            "a refused create stores nothing ({name})"
        );
    }
    register(store, &NODE_B, T0, LEASE_MS).await;
    let one = CreateLimits {
        max_tasks: 1,
        ..leased
    };
    assert_eq!(
        create("live", one, NODE_B).await,
        Ok(Lease {
            node: NODE_B,
            generation: 1,
            attempt: 1,
        }),
        "a live owner creates, and the refusals used no capacity"
    );
    assert!(
        create("unchecked", ROOMY, NODE_A).await.is_ok(),
        "without the requirement, an expired owner still creates"
    );
    assert_eq!(store.task_count().await.expect("task_count"), 2);
}

/// `create` gives the creating node the task's first lease: generation 1, attempt 1, and a
/// worker write under it commits.
pub async fn create_grants_the_creator_generation_one<S: Store>(store: &S) {
    register(store, &NODE_A, T0, LEASE_MS).await;
    let created = store
        .create(
            new_task("task-a", Some(TTL_MS)),
            work(&alice(), "a").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");
    assert_eq!(
        created.lease,
        Lease {
            node: NODE_A,
            generation: 1,
            attempt: 1
        },
        "create: the creator's lease"
    );
    let done = completed(&created.snapshot.task, at(10));
    assert!(
        matches!(
            worker_write(store, &created.lease, done, at(10)).await,
            CasOutcome::Committed(_)
        ),
        "a worker write with the current lease must commit"
    );
}

/// A heartbeat renews a live lease; once a lease has expired, heartbeats answer `Lost` and
/// never revive it. An unknown node is `Lost`.
pub async fn heartbeat_extends_a_live_lease_and_never_revives_an_expired_one<S: Store>(store: &S) {
    let beat = |node: NodeId, ms: u64| async move {
        store
            .heartbeat(&node, at(ms), LEASE_MS)
            .await
            .expect("heartbeat must not fail")
    };
    assert_eq!(
        beat(NODE_A, 0).await,
        Liveness::Lost,
        "unknown node is Lost"
    );
    register(store, &NODE_A, T0, LEASE_MS).await;
    assert_eq!(beat(NODE_A, 900).await, Liveness::Alive);
    assert_eq!(
        beat(NODE_A, 1_800).await,
        Liveness::Alive,
        "a heartbeat extends the lease from its own time"
    );
    assert_eq!(
        beat(NODE_A, 2_800).await,
        Liveness::Lost,
        "a heartbeat after the lease expired must be Lost"
    );
    assert_eq!(
        beat(NODE_A, 2_801).await,
        Liveness::Lost,
        "an expired lease is never revived"
    );
}

/// `status_counts`, when the store counts at all, counts exactly the tasks unexpired at `now`,
/// by status, across scopes.
pub async fn status_counts_count_unexpired_tasks_by_status<S: Store>(store: &S) {
    let create = |name: &'static str, scope: Scope, ttl: u64| async move {
        store
            .create(
                new_task(name, Some(ttl)),
                work(&scope, name).into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("create")
    };
    create("counted-a", alice(), TTL_MS).await;
    let done = create("counted-b", alice(), TTL_MS).await;
    create("counted-c", bob(), TTL_MS).await;
    create("counted-expired", bob(), 10).await;
    let update = completed(&done.snapshot.task, at(5));
    assert!(matches!(
        worker_write(store, &done.lease, update, at(5)).await,
        CasOutcome::Committed(_)
    ));
    let Some(counts) = store
        .status_counts(at(20))
        .await
        .expect("status_counts must not fail")
    else {
        return;
    };
    assert_eq!(
        counts,
        StatusCounts {
            working: 2,
            completed: 1,
            ..StatusCounts::default()
        },
        "status_counts counts the unexpired tasks of every scope by status"
    );
}

/// `claim_orphans` takes exactly the non-terminal, unexpired tasks of dead nodes, raising
/// the generation (not the attempt), up to `max`; live nodes' tasks, terminal and expired tasks stay.
pub async fn claim_takes_exactly_the_orphans<S: Store>(store: &S) {
    register(store, &NODE_A, T0, LEASE_MS).await;
    register(store, &NODE_B, T0, 100 * LEASE_MS).await;
    let by = |name, node, ttl| create_by(store, name, node, ttl);
    let orphan_1 = by("orphan-1", NODE_A, TTL_MS).await;
    let orphan_2 = by("orphan-2", NODE_A, TTL_MS).await;
    let finished = by("finished", NODE_A, TTL_MS).await;
    by("expiring", NODE_A, 2 * LEASE_MS).await;
    by("alive", NODE_B, TTL_MS).await;
    let done = completed(&finished.snapshot.task, at(10));
    assert!(matches!(
        worker_write(store, &finished.lease, done, at(10)).await,
        CasOutcome::Committed(_)
    ));

    let node_c = NodeId::from_bytes([0xc; 16]);
    let now = at(2 * LEASE_MS);
    register(store, &node_c, now, LEASE_MS).await;
    let first = claim(store, &node_c, now, 1).await;
    assert_eq!(first.len(), 1, "claim_orphans takes at most max tasks");
    let second = claim(store, &node_c, now, 10).await;
    let mut claimed: Vec<&Claimed> = first.iter().chain(&second).collect();
    claimed.sort_by(|a, b| a.snapshot.task.id().cmp(b.snapshot.task.id()));
    let ids: Vec<&str> = claimed
        .iter()
        .map(|c| c.snapshot.task.id().as_str())
        .collect();
    assert_eq!(
        ids,
        ["orphan-1", "orphan-2"],
        "claim takes exactly the live orphans of the dead node"
    );
    for (claim, name) in claimed.iter().zip(["orphan-1", "orphan-2"]) {
        assert_eq!(
            *claim.work,
            work(&alice(), name),
            "a claim hands over the work as created (arguments, capabilities, trace context)"
        );
    }
    for (claim, created) in claimed.iter().zip([&orphan_1, &orphan_2]) {
        assert_eq!(
            claim.lease,
            Lease {
                node: node_c,
                generation: 2,
                attempt: 1
            },
            "a claim raises the generation by one and charges no attempt"
        );
        assert_eq!(*claim.snapshot.task, *created.snapshot.task);
        assert_eq!(claim.snapshot.scope, alice());
        let name = created.snapshot.task.id().as_str();
        assert_eq!(
            *claim.work,
            work(&alice(), name),
            "a claim carries the work"
        );
    }
    assert!(
        claim(store, &node_c, now, 10).await.is_empty(),
        "a live node's tasks are not orphans"
    );
    assert_eq!(
        store
            .heartbeat(&NODE_A, now, LEASE_MS)
            .await
            .expect("heartbeat"),
        Liveness::Lost,
        "the dead node is Lost after the claim"
    );
}

async fn held<S: Store + ?Sized>(
    store: &S,
    node: &NodeId,
    now: Timestamp,
    after: Option<&str>,
    max: usize,
) -> Vec<Claimed> {
    let after = after.map(id);
    store
        .held(node, now, after.as_ref(), max)
        .await
        .expect("held must not fail")
        .expect("held answers Some: the runtime relies on it after a claim whose answer was lost")
}

fn ids_of(claimed: &[Claimed]) -> Vec<&str> {
    claimed
        .iter()
        .map(|c| c.snapshot.task.id().as_str())
        .collect()
}

/// `held` lists the active, unexpired tasks a node holds (none of another node's, none
/// finished), in id order after the cursor, at most `max`, each with its work and lease; a
/// claim moves tasks from the dead node's list to the claimer's, with the raised generation.
pub async fn held_lists_a_nodes_active_tasks_in_id_order<S: Store>(store: &S) {
    register(store, &NODE_A, T0, LEASE_MS).await;
    register(store, &NODE_B, T0, 100 * LEASE_MS).await;
    let by = |name, node, ttl| create_by(store, name, node, ttl);
    // Created out of id order: the answer is in id order all the same.
    by("held-3", NODE_A, TTL_MS).await;
    let first = by("held-1", NODE_A, TTL_MS).await;
    let finished = by("held-2", NODE_A, TTL_MS).await;
    by("held-4", NODE_A, 2 * LEASE_MS).await;
    by("other-1", NODE_B, TTL_MS).await;
    let done = completed(&finished.snapshot.task, at(10));
    assert!(matches!(
        worker_write(store, &finished.lease, done, at(10)).await,
        CasOutcome::Committed(_)
    ));

    let now = at(10);
    let all = held(store, &NODE_A, now, None, 10).await;
    assert_eq!(
        ids_of(&all),
        ["held-1", "held-3", "held-4"],
        "held: the node's active tasks, in id order"
    );
    assert_eq!(all[0].lease, first.lease, "held answers each task's lease");
    assert_eq!(
        *all[0].work,
        work(&alice(), "held-1"),
        "held answers the work"
    );
    assert_eq!(all[0].snapshot.scope, alice());
    assert_eq!(*all[0].snapshot.task, *first.snapshot.task);
    assert_eq!(
        ids_of(&held(store, &NODE_A, now, None, 1).await),
        ["held-1"],
        "held answers at most max tasks"
    );
    assert_eq!(
        ids_of(&held(store, &NODE_A, now, Some("held-1"), 10).await),
        ["held-3", "held-4"],
        "held pages after the cursor"
    );

    // NODE_A's lease has run out, and held-4 with it; NODE_C claims the rest.
    let later = at(2 * LEASE_MS);
    assert_eq!(
        ids_of(&held(store, &NODE_A, later, None, 10).await),
        ["held-1", "held-3"],
        "held skips an expired task"
    );
    let node_c = NodeId::from_bytes([0xc; 16]);
    register(store, &node_c, later, LEASE_MS).await;
    assert_eq!(claim(store, &node_c, later, 10).await.len(), 2);
    assert!(
        held(store, &NODE_A, later, None, 10).await.is_empty(),
        "a claimed task is no longer held by its old node"
    );
    let moved = held(store, &node_c, later, None, 10).await;
    assert_eq!(ids_of(&moved), ["held-1", "held-3"]);
    assert!(
        moved
            .iter()
            .all(|c| c.lease.node == node_c && c.lease.generation == 2),
        "the claimer holds them under the raised generation: {:?}",
        moved.iter().map(|c| c.lease).collect::<Vec<_>>()
    );
    assert_eq!(
        ids_of(&held(store, &NODE_B, later, None, 10).await),
        ["other-1"]
    );
}

/// Once a task is claimed, a write under the previous lease (or any lease not the task's) is
/// `Fenced` and changes nothing; the new holder's write commits.
pub async fn a_stale_lease_is_fenced_and_changes_nothing<S: Store>(store: &S) {
    register(store, &NODE_A, T0, LEASE_MS).await;
    let created = store
        .create(
            new_task("task-a", Some(TTL_MS)),
            work(&alice(), "a").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");
    let now = at(2 * LEASE_MS);
    register(store, &NODE_B, now, LEASE_MS).await;
    let claimed = claim(store, &NODE_B, now, 10).await;
    assert_eq!(claimed.len(), 1);
    let old = created.lease;
    let forged = Lease {
        node: NODE_B,
        generation: 1,
        attempt: 1,
    };
    for lease in [old, forged] {
        let done = completed(&created.snapshot.task, now);
        assert!(
            matches!(
                worker_write(store, &lease, done, now).await,
                CasOutcome::Fenced
            ),
            "a write under a stale lease must be Fenced"
        );
    }
    let read = get(store, &alice(), "task-a", now).await.expect("found");
    assert_eq!(
        *read.task, *created.snapshot.task,
        "a fenced write changes nothing"
    );
    let done = completed(&created.snapshot.task, now);
    assert!(
        matches!(
            worker_write(store, &claimed[0].lease, done, now).await,
            CasOutcome::Committed(_)
        ),
        "the new holder's write commits"
    );
}

/// Request writes (`tasks/update`, `tasks/cancel`) are checked against the scope, not the
/// lease: they commit whoever holds the task.
pub async fn request_writes_ignore_leases<S: Store>(store: &S) {
    register(store, &NODE_A, T0, LEASE_MS).await;
    let created = create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    let now = at(2 * LEASE_MS);
    register(store, &NODE_B, now, LEASE_MS).await;
    assert_eq!(claim(store, &NODE_B, now, 10).await.len(), 1);
    let cancel = next(&created.task, Event::Cancelled, now);
    assert!(
        matches!(
            transition(store, &bob(), cancel.clone(), now).await,
            CasOutcome::NotFound
        ),
        "a request of another scope is NotFound"
    );
    assert!(
        matches!(
            transition(store, &alice(), cancel, now).await,
            CasOutcome::Committed(_)
        ),
        "a request write commits whoever holds the task"
    );
}

/// `retire_node` ends the lease at once: the node's tasks are claimable immediately.
pub async fn retire_makes_tasks_claimable_at_once<S: Store>(store: &S) {
    register(store, &NODE_A, T0, 100 * LEASE_MS).await;
    register(store, &NODE_B, T0, 100 * LEASE_MS).await;
    create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    assert!(
        claim(store, &NODE_B, at(1), 10).await.is_empty(),
        "a live node's tasks are not orphans"
    );
    store.retire_node(&NODE_A).await.expect("retire");
    let claimed = claim(store, &NODE_B, at(1), 10).await;
    assert_eq!(
        claimed.len(),
        1,
        "a retired node's tasks are claimable at once"
    );
    assert_eq!(
        store
            .heartbeat(&NODE_A, at(2), LEASE_MS)
            .await
            .expect("beat"),
        Liveness::Lost,
        "a retired node is Lost"
    );
}

/// Claimers racing over the same orphans take each one exactly once.
pub async fn concurrent_claimers_take_each_orphan_once<S: Store>(store: Arc<S>) {
    const ORPHANS: usize = 30;
    const CLAIMERS: u8 = 6;
    register(&*store, &NODE_A, T0, LEASE_MS).await;
    for i in 0..ORPHANS {
        create_ok(&*store, &format!("orphan-{i}"), &alice(), Some(TTL_MS)).await;
    }
    let now = at(2 * LEASE_MS);
    let mut set = tokio::task::JoinSet::new();
    for c in 0..CLAIMERS {
        let store = store.clone();
        set.spawn(async move {
            let node = NodeId::from_bytes([0x10 + c; 16]);
            register(&*store, &node, now, LEASE_MS).await;
            let mut mine = Vec::new();
            loop {
                let batch = claim(&*store, &node, now, 4).await;
                if batch.is_empty() {
                    return mine;
                }
                mine.extend(batch);
                tokio::task::yield_now().await;
            }
        });
    }
    let mut seen = HashMap::new();
    while let Some(joined) = set.join_next().await {
        for claimed in joined.expect("claimer panicked") {
            let id = claimed.snapshot.task.id().clone();
            assert_eq!(
                claimed.lease.generation, 2,
                "each orphan is claimed once: generation 2"
            );
            assert!(
                seen.insert(id, claimed.lease.node).is_none(),
                "an orphan was claimed twice by concurrent claimers"
            );
        }
    }
    assert_eq!(seen.len(), ORPHANS, "every orphan is claimed");
}

/// The previous holder completing its tasks while another node claims them: every task ends up
/// either completed by the old holder (and not claimed) or claimed and still running (the old
/// holder's write fenced). A claim never overwrites a completion (river#1302).
pub async fn a_completion_racing_a_claim_is_never_overwritten<S: Store>(store: Arc<S>) {
    const TASKS: usize = 30;
    register(&*store, &NODE_A, T0, LEASE_MS).await;
    let mut created = Vec::new();
    for i in 0..TASKS {
        let made = store
            .create(
                new_task(&format!("race-{i}"), Some(TTL_MS)),
                work(&alice(), "race").into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("create");
        created.push(made);
    }
    let now = at(2 * LEASE_MS);
    register(&*store, &NODE_B, now, LEASE_MS).await;
    let claimer = {
        let store = store.clone();
        tokio::spawn(async move { claim(&*store, &NODE_B, now, TASKS).await })
    };
    let mut completions = tokio::task::JoinSet::new();
    for made in &created {
        let store = store.clone();
        let (lease, task) = (made.lease, made.snapshot.task.clone());
        completions.spawn(async move {
            tokio::task::yield_now().await;
            let outcome = worker_write(&*store, &lease, completed(&task, now), now).await;
            (task.id().clone(), outcome)
        });
    }
    let claimed: HashSet<TaskId> = claimer
        .await
        .expect("claimer panicked")
        .into_iter()
        .map(|c| {
            assert!(
                !c.snapshot.task.is_terminal(),
                "a claim must never return a finished task"
            );
            c.snapshot.task.id().clone()
        })
        .collect();
    while let Some(joined) = completions.join_next().await {
        let (task_id, outcome) = joined.expect("completion panicked");
        let stored = get(&*store, &alice(), task_id.as_str(), now)
            .await
            .expect("found");
        match outcome {
            CasOutcome::Committed(_) => {
                assert!(
                    stored.task.is_terminal(),
                    "a claim overwrote a committed completion"
                );
                assert!(
                    !claimed.contains(&task_id),
                    "a completed task must not be claimed"
                );
            }
            CasOutcome::Fenced => {
                assert!(claimed.contains(&task_id), "fenced without a claim");
                assert_eq!(stored.task.status(), TaskStatus::Working);
            }
            other => panic!("unexpected outcome of the old holder's write: {other:?}"),
        }
    }
}

/// A node whose own lease has expired does not claim its own tasks as orphans (it would run
/// them twice): only its next heartbeat tells it, and a new node id claims them.
pub async fn a_node_never_claims_its_own_tasks<S: Store>(store: &S) {
    register(store, &NODE_A, T0, LEASE_MS).await;
    create_ok(store, "task-a", &alice(), Some(TTL_MS)).await;
    let late = at(2 * LEASE_MS);
    assert!(
        claim(store, &NODE_A, late, 10).await.is_empty(),
        "a node must never claim its own tasks"
    );
    assert_eq!(
        store
            .heartbeat(&NODE_A, late, LEASE_MS)
            .await
            .expect("beat"),
        Liveness::Lost
    );
    register(store, &NODE_B, late, LEASE_MS).await;
    assert_eq!(
        claim(store, &NODE_B, late, 10).await.len(),
        1,
        "another node claims them"
    );
}

/// An attempt is a run: claims charge none (two nodes that claimed a task and died before
/// starting it leave its attempt at 1); `charge_attempt` raises it by one for the task's
/// current holder only, and the next claim hands the charged count on. A stale lease, a
/// finished, an expired or an unknown task is charged nothing.
pub async fn attempts_are_charged_by_starts_never_by_claims<S: Store>(store: &S) {
    let charge = |id: TaskId, lease: Lease, now: Timestamp| async move {
        store
            .charge_attempt(&id, &lease, now)
            .await
            .expect("charge_attempt must not fail")
    };
    register(store, &NODE_A, T0, LEASE_MS).await;
    let created = store
        .create(
            new_task("task-a", Some(100 * LEASE_MS)),
            work(&alice(), "a").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");
    let expiring = store
        .create(
            new_task("expiring", Some(LEASE_MS)),
            work(&alice(), "expiring").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");
    let task_a = id("task-a");

    // Two nodes claim the task in turn and die before they start it.
    let mut holder = created.lease;
    for (round, node) in [NODE_B, NodeId::from_bytes([0xc; 16])]
        .into_iter()
        .enumerate()
    {
        let now = at((2 + 2 * round as u64) * LEASE_MS);
        register(store, &node, now, LEASE_MS).await;
        let claimed = claim(store, &node, now, 10).await;
        assert_eq!(claimed.len(), 1, "round {round}: the orphan is claimed");
        assert_eq!(
            claimed[0].lease,
            Lease {
                node,
                generation: holder.generation + 1,
                attempt: 1
            },
            "a claim charges no attempt: the task has run once"
        );
        holder = claimed[0].lease;
    }
    let now = at(5 * LEASE_MS);
    for stale in [
        created.lease,
        Lease {
            node: NODE_B,
            generation: 2,
            attempt: 1,
        },
    ] {
        assert_eq!(
            charge(task_a.clone(), stale, now).await,
            None,
            "a stale lease is charged nothing"
        );
    }
    let started = charge(task_a.clone(), holder, now).await;
    assert_eq!(
        started,
        Some(Lease {
            attempt: 2,
            ..holder
        }),
        "the holder's start charges the second run"
    );
    assert_eq!(
        charge(task_a.clone(), holder, now).await,
        started,
        "a retry of a charge already stored (its answer lost) charges nothing more"
    );
    let started = started.unwrap_or(holder);
    assert!(
        matches!(
            worker_write(
                store,
                &started,
                next(
                    &created.snapshot.task,
                    Event::StatusMessage {
                        message: "run 2".into()
                    },
                    now
                ),
                now
            )
            .await,
            CasOutcome::Committed(_)
        ),
        "the charged lease still writes the task"
    );

    // The holder dies after starting: the next claim hands on the two runs.
    let node_d = NodeId::from_bytes([0xd; 16]);
    let later = at(8 * LEASE_MS);
    register(store, &node_d, later, LEASE_MS).await;
    let claimed = claim(store, &node_d, later, 10).await;
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        claimed[0].lease,
        Lease {
            node: node_d,
            generation: holder.generation + 1,
            attempt: 2
        },
        "the next claim carries the charged attempts"
    );
    assert_eq!(
        charge(task_a.clone(), holder, later).await,
        None,
        "a claimed-away holder is charged nothing"
    );
    let done = completed(&claimed[0].snapshot.task, later);
    assert!(matches!(
        worker_write(store, &claimed[0].lease, done, later).await,
        CasOutcome::Committed(_)
    ));
    assert_eq!(
        charge(task_a.clone(), claimed[0].lease, later).await,
        None,
        "a finished task is charged nothing"
    );
    assert_eq!(
        charge(id("expiring"), expiring.lease, at(LEASE_MS)).await,
        None,
        "an expired task is charged nothing"
    );
    assert_eq!(
        charge(id("unknown"), holder, later).await,
        None,
        "an unknown task is charged nothing"
    );
}
