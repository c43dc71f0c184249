//! The operator's inventory ([`Store::inventory`], [`Store::inventory_counts`],
//! [`Store::nodes`]): every check here is one rule of `tasks_runtime::store::inventory`.
//!
//! A store that offers an inventory runs [`run_all`] from its tests; a store that does not
//! answers `None` and skips it. A lost holder is a node registered with a lease that has run
//! out: a holder not registered at all (a runtime that runs no leases) is not one.

use std::future::Future;

use serde_json::json;
use tasks_core::input::InputRequest;
use tasks_core::{Event, NewTask, Progress, TaskStatus, Timestamp};
use tasks_runtime::store::inventory::{
    InventoryCursor, InventoryOrder, InventoryPage, InventoryQuery, InventoryRow, StuckReason,
    StuckRules,
};
use tasks_runtime::store::{Authority, CasOutcome, NodeId, Snapshot, Store};
use tasks_runtime::Scope;

use crate::{at, id, next, work, LEASE_MS, NODE_A, NODE_B, ROOMY, T0};

/// Rules under which no task of these checks is stuck by idleness (a day each).
const PATIENT: StuckRules = StuckRules {
    working_ms: 86_400_000,
    input_required_ms: 86_400_000,
};

/// Runs every inventory check, each on a fresh store from `make`.
///
/// # Panics
/// When the store breaks a rule; the message names it.
pub async fn run_all<S, F, Fut>(make: F)
where
    S: Store,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    rows_carry_every_scope_and_their_metadata(&make().await).await;
    filters_narrow_the_listing(&make().await).await;
    cursors_page_in_creation_order_while_tasks_change(&make().await).await;
    expired_tasks_are_not_listed(&make().await).await;
    stuck_tasks_are_marked_with_their_reason(&make().await).await;
    counts_are_by_status_tool_and_stuck_reason(&make().await).await;
    nodes_are_listed_with_their_leases_and_tasks(&make().await).await;
}

/// Creates task `name` of `tool` in `scope` at `created`, owned by `owner` (no TTL).
async fn create<S: Store + ?Sized>(
    store: &S,
    name: &str,
    tool: &str,
    scope: &Scope,
    created: Timestamp,
    owner: &NodeId,
) -> Snapshot {
    let task = NewTask::new(id(name), created, None, None);
    store
        .create(task, work(scope, tool).into(), ROOMY, owner)
        .await
        .unwrap_or_else(|e| panic!("create {name} failed: {e}"))
        .snapshot
}

/// Commits `event` to `snapshot`'s task at `now`, as a request of its scope.
async fn commit<S: Store + ?Sized>(
    store: &S,
    snapshot: &Snapshot,
    event: Event,
    now: Timestamp,
) -> Snapshot {
    let update = next(&snapshot.task, event, now);
    match store
        .transition(Authority::Request(&snapshot.scope), update, now)
        .await
        .expect("transition must not fail")
    {
        CasOutcome::Committed(snapshot) => snapshot,
        other => panic!("the inventory check's transition did not commit: {other:?}"),
    }
}

async fn page<S: Store + ?Sized>(
    store: &S,
    query: &InventoryQuery,
    rules: StuckRules,
    now: Timestamp,
) -> InventoryPage {
    store
        .inventory(query, rules, now)
        .await
        .expect("inventory must not fail")
        .expect("a store running the inventory checks offers an inventory")
}

fn ids(page: &InventoryPage) -> Vec<&str> {
    page.rows.iter().map(|row| row.id.as_str()).collect()
}

fn row<'a>(page: &'a InventoryPage, name: &str) -> &'a InventoryRow {
    page.rows
        .iter()
        .find(|row| row.id.as_str() == name)
        .unwrap_or_else(|| panic!("task {name} is missing from the inventory: {:?}", ids(page)))
}

/// Rows list the tasks of every scope, with their tool, status, message, progress, times and
/// lease; a terminal task keeps its tool and shows no holder.
pub async fn rows_carry_every_scope_and_their_metadata<S: Store>(store: &S) {
    store.register_node(&NODE_A, T0, LEASE_MS).await.unwrap();
    let alice = Scope::new("alice");
    let bob = Scope::new("bob");
    let a = create(store, "inv-a", "slow", &alice, T0, &NODE_A).await;
    let progress = Progress::new(1.0, Some(4.0)).expect("a valid progress");
    let event = Event::Progress {
        progress,
        message: Some("one of four".into()),
    };
    commit(store, &a, event, at(10)).await;
    let b = create(store, "inv-b", "fast", &bob, at(1), &NODE_A).await;
    let result = json!({"content": [], "isError": false});
    let result = result.as_object().cloned().unwrap_or_default();
    let event = Event::Completed {
        result: result.into(),
    };
    commit(store, &b, event, at(20)).await;

    let listed = page(store, &InventoryQuery::default(), PATIENT, at(30)).await;
    assert_eq!(
        ids(&listed),
        ["inv-b", "inv-a"],
        "newest first, every scope"
    );
    let a = row(&listed, "inv-a");
    assert_eq!(a.scope, alice, "a row carries its scope");
    assert_eq!(a.tool.as_deref(), Some("slow"), "a running task's tool");
    assert_eq!(a.status, TaskStatus::Working);
    assert_eq!(a.status_message.as_deref(), Some("one of four"));
    assert_eq!(a.progress, Some(progress), "the last progress");
    assert_eq!(a.created_at, T0);
    assert_eq!(a.last_updated_at, at(10));
    assert_eq!(a.expires_at, None, "no TTL, no expiry");
    assert_eq!(a.attempt, Some(1), "a created task is on its first run");
    assert_eq!(a.node, Some(NODE_A), "the creator holds it");
    assert_eq!(a.generation, Some(1));
    assert_eq!(
        a.stuck, None,
        "a live holder and a recent change: not stuck"
    );
    let b = row(&listed, "inv-b");
    assert_eq!(b.scope, bob);
    assert_eq!(
        b.tool.as_deref(),
        Some("fast"),
        "a terminal task keeps its tool"
    );
    assert_eq!(b.status, TaskStatus::Completed);
    assert_eq!(b.node, None, "nothing holds a terminal task");
    assert_eq!(b.stuck, None, "a terminal task is never stuck");
    assert_eq!(listed.next, None, "one page holds both");
}

/// Every filter narrows the listing: id, status, tool, node, creation time.
pub async fn filters_narrow_the_listing<S: Store>(store: &S) {
    store.register_node(&NODE_A, T0, LEASE_MS).await.unwrap();
    store.register_node(&NODE_B, T0, LEASE_MS).await.unwrap();
    let scope = Scope::new("alice");
    let one = create(store, "f-1", "slow", &scope, T0, &NODE_A).await;
    create(store, "f-2", "slow", &scope, at(1), &NODE_B).await;
    create(store, "f-3", "fast", &scope, at(2), &NODE_A).await;
    commit(store, &one, Event::Cancelled, at(5)).await;
    let now = at(10);
    let query = |edit: fn(&mut InventoryQuery)| {
        let mut query = InventoryQuery::default();
        edit(&mut query);
        query
    };
    let cases: [(&str, InventoryQuery, &[&str]); 7] = [
        ("id", query(|q| q.id = Some(id("f-2"))), &["f-2"]),
        (
            "status",
            query(|q| q.statuses = vec![TaskStatus::Cancelled]),
            &["f-1"],
        ),
        (
            "statuses",
            query(|q| q.statuses = vec![TaskStatus::Working, TaskStatus::Failed]),
            &["f-3", "f-2"],
        ),
        (
            "tool",
            query(|q| q.tool = Some("slow".into())),
            &["f-2", "f-1"],
        ),
        ("node", query(|q| q.node = Some(NODE_A)), &["f-3"]),
        (
            "created range",
            query(|q| {
                q.created_from = Some(at(1));
                q.created_before = Some(at(2));
            }),
            &["f-2"],
        ),
        (
            "tool and status",
            query(|q| {
                q.tool = Some("fast".into());
                q.statuses = vec![TaskStatus::Completed];
            }),
            &[],
        ),
    ];
    for (name, query, expected) in cases {
        let listed = page(store, &query, PATIENT, now).await;
        assert_eq!(ids(&listed), expected, "the {name} filter");
    }
}

/// A cursor walks every task once in creation order (ties by task id), in both orders, while
/// tasks change and finish between pages.
pub async fn cursors_page_in_creation_order_while_tasks_change<S: Store>(store: &S) {
    let scope = Scope::new("alice");
    let mut made = Vec::new();
    // Two share a creation time: the id breaks the tie.
    for (name, created) in [("p-a", 0), ("p-b", 1), ("p-c", 1), ("p-d", 2), ("p-e", 3)] {
        made.push(create(store, name, "slow", &scope, at(created), &NODE_A).await);
    }
    for (order, expected) in [
        (
            InventoryOrder::NewestFirst,
            ["p-e", "p-d", "p-c", "p-b", "p-a"],
        ),
        (
            InventoryOrder::OldestFirst,
            ["p-a", "p-b", "p-c", "p-d", "p-e"],
        ),
    ] {
        let mut query = InventoryQuery {
            order,
            limit: 2,
            ..InventoryQuery::default()
        };
        let mut seen = Vec::new();
        let mut pages = 0;
        loop {
            let listed = page(store, &query, PATIENT, at(10)).await;
            pages += 1;
            assert!(listed.rows.len() <= 2, "a page holds at most its limit");
            seen.extend(ids(&listed).into_iter().map(str::to_owned));
            if pages == 1 {
                // Changes between pages move nothing: the key is the creation time.
                for snapshot in &made {
                    commit(store, snapshot, Event::Cancelled, at(5)).await;
                }
            }
            match listed.next {
                Some(cursor) => {
                    let last = listed
                        .rows
                        .last()
                        .expect("a page with a next cursor has rows");
                    assert_eq!(
                        cursor,
                        InventoryCursor {
                            created_at: last.created_at,
                            id: last.id.clone(),
                        },
                        "the next cursor is the last row's key"
                    );
                    query.after = Some(cursor);
                }
                None => break,
            }
            assert!(pages < 10, "paging must end");
        }
        assert_eq!(seen, expected, "{order:?}: every task once, in order");
        assert_eq!(pages, 3, "five tasks two a page");
        // The first walk cancelled every task; the second walks terminal tasks.
        made.clear();
    }
}

/// A task expired at `now` is not listed.
pub async fn expired_tasks_are_not_listed<S: Store>(store: &S) {
    let scope = Scope::new("alice");
    let task = NewTask::new(id("short"), T0, Some(1_000), None);
    store
        .create(task, work(&scope, "slow").into(), ROOMY, &NODE_A)
        .await
        .expect("create");
    create(store, "long", "slow", &scope, T0, &NODE_A).await;
    let before = page(store, &InventoryQuery::default(), PATIENT, at(999)).await;
    assert_eq!(ids(&before), ["short", "long"], "ties by id, newest first");
    assert_eq!(row(&before, "short").expires_at, Some(at(1_000)));
    let after = page(store, &InventoryQuery::default(), PATIENT, at(1_000)).await;
    assert_eq!(ids(&after), ["long"], "expired at createdAt + ttlMs");
}

/// Stuck: a holder without a live lease first, then idleness past the rule per status;
/// `stuck_only` lists exactly those.
pub async fn stuck_tasks_are_marked_with_their_reason<S: Store>(store: &S) {
    let scope = Scope::new("alice");
    store.register_node(&NODE_A, T0, 100_000).await.unwrap();
    store.register_node(&NODE_B, T0, LEASE_MS).await.unwrap();
    create(store, "s-idle", "slow", &scope, T0, &NODE_A).await;
    let fresh = create(store, "s-fresh", "slow", &scope, T0, &NODE_A).await;
    commit(
        store,
        &fresh,
        Event::StatusMessage {
            message: "still going".into(),
        },
        at(4_000),
    )
    .await;
    let asking = create(store, "s-asking", "slow", &scope, T0, &NODE_A).await;
    let request = InputRequest::elicit_form("Continue?", json!({"type": "object"}));
    commit(
        store,
        &asking,
        Event::InputRequested {
            key: "go".into(),
            request,
        },
        at(1),
    )
    .await;
    create(store, "s-lost", "slow", &scope, at(4_500), &NODE_B).await;
    // A holder that never registered (a runtime without leases) is not a lost one.
    create(
        store,
        "s-unleased",
        "slow",
        &scope,
        at(4_500),
        &NodeId::from_bytes([0xc; 16]),
    )
    .await;
    let done = create(store, "s-done", "slow", &scope, T0, &NODE_B).await;
    commit(store, &done, Event::Cancelled, at(2)).await;

    // At +5 s node B's 1 s lease has run out; A's is live.
    let now = at(5_000);
    let rules = StuckRules {
        working_ms: 2_000,
        input_required_ms: 3_000,
    };
    let listed = page(store, &InventoryQuery::default(), rules, now).await;
    let reason = |name: &str| row(&listed, name).stuck;
    assert_eq!(
        reason("s-idle"),
        Some(StuckReason::Working { idle_ms: 5_000 }),
        "working without a change past the rule"
    );
    assert_eq!(reason("s-fresh"), None, "changed 1 s ago");
    assert_eq!(
        reason("s-asking"),
        Some(StuckReason::InputUnanswered { idle_ms: 4_999 }),
        "input_required unanswered past the rule"
    );
    assert_eq!(
        reason("s-lost"),
        Some(StuckReason::HolderLost { node: NODE_B }),
        "held by a node whose lease ran out (recent, yet stuck)"
    );
    assert_eq!(reason("s-done"), None, "terminal: never stuck");
    assert_eq!(
        reason("s-unleased"),
        None,
        "a holder never registered is not lost"
    );

    let stuck = InventoryQuery {
        stuck_only: true,
        order: InventoryOrder::OldestFirst,
        ..InventoryQuery::default()
    };
    let listed = page(store, &stuck, rules, now).await;
    assert_eq!(
        ids(&listed),
        ["s-asking", "s-idle", "s-lost"],
        "stuck_only lists exactly the stuck tasks"
    );
    let listed = page(
        store,
        &InventoryQuery {
            limit: 1,
            ..stuck.clone()
        },
        rules,
        now,
    )
    .await;
    assert_eq!(ids(&listed), ["s-asking"]);
    let rest = InventoryQuery {
        after: listed.next.clone(),
        ..stuck
    };
    let listed = page(store, &rest, rules, now).await;
    assert_eq!(ids(&listed), ["s-idle", "s-lost"], "stuck_only pages too");
}

/// Counts: by status, by tool (unknown first, then by name), stuck by reason; expired tasks
/// are not counted.
pub async fn counts_are_by_status_tool_and_stuck_reason<S: Store>(store: &S) {
    let scope = Scope::new("alice");
    store.register_node(&NODE_A, T0, 100_000).await.unwrap();
    let a = create(store, "c-1", "slow", &scope, T0, &NODE_A).await;
    create(store, "c-2", "slow", &scope, at(3_000), &NODE_A).await;
    create(store, "c-3", "fast", &scope, at(3_000), &NODE_A).await;
    commit(store, &a, Event::Cancelled, at(10)).await;
    let task = NewTask::new(id("c-gone"), T0, Some(100), None);
    store
        .create(task, work(&scope, "fast").into(), ROOMY, &NODE_A)
        .await
        .expect("create");
    let rules = StuckRules {
        working_ms: 1_000,
        input_required_ms: 1_000,
    };
    let counts = store
        .inventory_counts(rules, at(4_500))
        .await
        .expect("inventory_counts must not fail")
        .expect("a store running the inventory checks counts");
    assert_eq!(counts.by_status.working, 2);
    assert_eq!(counts.by_status.cancelled, 1);
    assert_eq!(counts.by_status.completed, 0);
    let tools: Vec<(Option<&str>, u64, u64)> = counts
        .by_tool
        .iter()
        .map(|(tool, c)| (tool.as_deref(), c.working, c.cancelled))
        .collect();
    assert_eq!(
        tools,
        [(Some("fast"), 1, 0), (Some("slow"), 1, 1)],
        "by tool, in name order, the expired task left out"
    );
    assert_eq!(
        counts.stuck.working_idle, 2,
        "both working tasks idle 1.5 s"
    );
    assert_eq!(counts.stuck.holder_lost, 0);
    assert_eq!(counts.stuck.input_unanswered, 0);
}

/// Nodes: every registered node in id order, live or with its lease run out, with its start,
/// last renewal, expiry and the active tasks it holds.
pub async fn nodes_are_listed_with_their_leases_and_tasks<S: Store>(store: &S) {
    let scope = Scope::new("alice");
    store.register_node(&NODE_B, T0, LEASE_MS).await.unwrap();
    store
        .register_node(&NODE_A, at(10), LEASE_MS)
        .await
        .unwrap();
    store.heartbeat(&NODE_A, at(500), LEASE_MS).await.unwrap();
    create(store, "n-1", "slow", &scope, at(600), &NODE_A).await;
    create(store, "n-2", "slow", &scope, at(600), &NODE_A).await;
    let done = create(store, "n-3", "slow", &scope, at(600), &NODE_B).await;
    commit(store, &done, Event::Cancelled, at(700)).await;

    let nodes = store
        .nodes(at(1_200))
        .await
        .expect("nodes must not fail")
        .expect("a store running the inventory checks lists nodes");
    assert_eq!(nodes.len(), 2, "both registered nodes: {nodes:?}");
    let (a, b) = (&nodes[0], &nodes[1]);
    assert_eq!((a.id, b.id), (NODE_A, NODE_B), "in node id order");
    assert!(a.live, "A renewed at +500 ms for 1 s");
    assert_eq!(a.lease_expires_at, at(1_500));
    assert_eq!(a.held, 2, "A holds its two running tasks");
    assert_eq!(a.started_at, Some(at(10)), "A started at +10 ms");
    assert_eq!(a.renewed_at, Some(at(500)), "A renewed at +500 ms");
    assert_eq!(
        b.renewed_at,
        Some(T0),
        "B's registration is its last renewal"
    );
    assert!(!b.live, "B's lease ran out at +1 s");
    assert_eq!(b.lease_expires_at, at(1_000));
    assert_eq!(b.held, 0, "B's task is terminal");
}
