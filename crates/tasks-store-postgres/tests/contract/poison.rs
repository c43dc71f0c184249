//! One bad row fails one task, never the store: rows written by hand that do not decode (JSON
//! of the wrong shape, nested 200 deep, a marker member in a result, a truncated task, a broken
//! invariant, work of the wrong shape, an invalid id) beside good tasks. Each bad row is
//! quarantined once (its original kept in `quarantined_tasks`) and reads as the failed
//! unreadable task; gets, listings, claims after a node's death, reaping, conflicts and the
//! change feed serve everything else.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::common;
use crate::counters::{active_of, counters, Counts};

use common::*;
use serde_json::{json, Value};
use tasks_core::{Task, TaskState, TaskStatus, MESSAGE_UNREADABLE};
use tasks_runtime::store::{Authority, CasOutcome, Change, Store};
use tasks_runtime::Scope;
use tokio_postgres::Client;

const LEASE: u64 = 1_000;
const TTL: u64 = 3_600_000;
const GOOD: [&str; 3] = ["good-1", "good-2", "good-3"];
/// The rows whose `task` column is made unreadable.
const BAD: [&str; 5] = [
    "bad-shape",
    "bad-deep",
    "bad-marker",
    "bad-truncated",
    "bad-invariant",
];

/// Whether `task` is the failed unreadable task of `name` at `revision`.
fn assert_unreadable(task: &Task, name: &str, revision: u64) {
    assert_eq!(task.id(), &id(name));
    assert_eq!(task.status(), TaskStatus::Failed, "{name}");
    assert_eq!(task.revision(), revision, "{name}");
    assert_eq!(task.created_at(), T0, "{name}");
    assert_eq!(task.ttl_ms(), Some(TTL), "{name}");
    assert_eq!(task.status_message(), Some(MESSAGE_UNREADABLE), "{name}");
    match task.state() {
        TaskState::Failed { error } => {
            assert_eq!(
                (error.code, error.message.as_str()),
                (-32603, MESSAGE_UNREADABLE)
            );
        }
        other => panic!("{name}: {other:?}"),
    }
}

/// The stored `task` column of `name`, as text.
async fn stored(admin: &Client, schema: &str, name: &str) -> String {
    admin
        .query_one(
            &format!("SELECT task::text FROM \"{schema}\".tasks WHERE id = $1"),
            &[&name],
        )
        .await
        .expect("the row")
        .get(0)
}

/// Writes `text` into column `column` of row `name`, as a hand or a bug would.
async fn write(admin: &Client, schema: &str, name: &str, column: &str, text: &str) {
    let changed = admin
        .execute(
            &format!("UPDATE \"{schema}\".tasks SET {column} = $1::text::json WHERE id = $2"),
            &[&text, &name],
        )
        .await
        .expect("write the bad row");
    assert_eq!(changed, 1, "{name}");
}

/// The `quarantined_tasks` rows: (id, task, work, reason), by id.
async fn quarantined_rows(
    admin: &Client,
    schema: &str,
) -> Vec<(String, Option<String>, Option<String>, String)> {
    admin
        .query(
            &format!(
                "SELECT id, task, work, reason FROM \"{schema}\".quarantined_tasks ORDER BY id"
            ),
            &[],
        )
        .await
        .expect("quarantined_tasks")
        .iter()
        .map(|row| (row.get(0), row.get(1), row.get(2), row.get(3)))
        .collect()
}

/// The counters of a store whose tasks are all alice's: `total`, alice's active tasks and the
/// `pending_counts` rows.
fn alice_counts(total: i64, active: i64, pending: i64) -> Counts {
    let alice = [("alice", active)];
    Counts {
        total,
        // The counters leave out a scope at 0.
        active: active_of(if active == 0 { &[] } else { &alice }),
        pending,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_rows_fail_their_own_task_and_everything_else_is_served() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let admin = db.admin().await;
    let scope = Scope::new("alice");
    let mut seen_by_a = a.changes().expect("a feed");

    a.register_node(&NODE_A, T0, LEASE)
        .await
        .expect("register a");
    let mut created = Vec::new();
    for name in GOOD.iter().chain(&BAD).chain(&["bad-work"]) {
        let task = a
            .create(
                new_task(name, Some(TTL)),
                work(&scope, name).into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("create");
        created.push(task.snapshot.task);
    }
    // bad-marker completes first: the marker goes into its stored result.
    let marker_task = created
        .iter()
        .find(|t| t.id() == &id("bad-marker"))
        .expect("created")
        .clone();
    let done = complete_with(&marker_task, "result", at(1));
    assert!(matches!(
        a.transition(Authority::Request(&scope), done, at(1))
            .await
            .expect("complete"),
        CasOutcome::Committed(_)
    ));

    let mut originals = std::collections::BTreeMap::new();
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let mut marked: Value =
        serde_json::from_str(&stored(&admin, &schema, "bad-marker").await).expect("a task row");
    marked["result"]
        .as_object_mut()
        .expect("a completed task stores its result")
        .insert("x".into(), json!({"$serde_json::private::RawValue": 5}));
    let mut broken: Value =
        serde_json::from_str(&stored(&admin, &schema, "bad-invariant").await).expect("a task row");
    broken["lastUpdatedAt"] = json!("2020-01-01T00:00:00.000Z");
    let texts = [
        (
            "bad-shape",
            r#"{"taskId": "bad-shape", "status": 5, "revision": "one"}"#.to_owned(),
        ),
        ("bad-deep", deep),
        ("bad-marker", marked.to_string()),
        (
            "bad-truncated",
            r#"{"taskId":"bad-truncated","createdAt":"2026-11-03T18:04:05.123Z"}"#.to_owned(),
        ),
        ("bad-invariant", broken.to_string()),
    ];
    for (name, text) in &texts {
        write(&admin, &schema, name, "task", text).await;
        originals.insert((*name).to_owned(), text.clone());
    }
    write(&admin, &schema, "bad-work", "work", r#"{"tool": 5}"#).await;
    // A row with an id no task can have (over 256 bytes), counted as a create counts it.
    let long_id = "x".repeat(300);
    admin
        .batch_execute(&format!(
            "INSERT INTO \"{schema}\".tasks SELECT '{long_id}', scope, revision, status, \
               created_at_ms, expires_at_ms, task, work, owner_node, generation, attempt \
             FROM \"{schema}\".tasks WHERE id = 'good-1'; \
             UPDATE \"{schema}\".counts SET total = total + 1; \
             UPDATE \"{schema}\".scope_counts SET active = active + 1 WHERE scope = 'alice'"
        ))
        .await
        .expect("a row with an invalid id");

    // Gets: the good tasks as created, each bad one as the failed unreadable task.
    for task in created.iter().filter(|t| GOOD.contains(&t.id().as_str())) {
        let read = b
            .get(&scope, task.id(), at(10))
            .await
            .expect("get")
            .expect("found");
        assert_eq!(*read.task, **task);
    }
    for _ in 0..2 {
        for name in BAD {
            let read = b
                .get(&scope, &id(name), at(10))
                .await
                .expect("get")
                .expect("found");
            let revision = if name == "bad-marker" { 3 } else { 2 };
            assert_unreadable(&read.task, name, revision);
        }
    }
    assert_eq!(b.quarantined(), 5, "each bad row once, however often read");
    assert_eq!(a.quarantined(), 0);
    let kept = quarantined_rows(&admin, &schema).await;
    assert_eq!(kept.len(), 5);
    for (name, task, work, reason) in &kept {
        assert_eq!(
            task.as_ref(),
            originals.get(name),
            "{name}: the original text"
        );
        if name == "bad-marker" {
            assert_eq!(work, &None, "a completed task has no work");
        } else {
            let work: Value = serde_json::from_str(work.as_deref().expect("its work")).unwrap();
            assert_eq!(work["tool"], json!(name));
        }
        assert!(
            reason.starts_with("task does not decode: "),
            "{name}: {reason}"
        );
    }
    let reasons: Vec<&str> = kept.iter().map(|k| k.3.as_str()).collect();
    assert!(
        reasons.iter().any(|r| r.contains("recursion limit")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("lastUpdatedAt is before createdAt")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("A member name is reserved")),
        "{reasons:?}"
    );

    // A listing serves every task; the row with the invalid id is set aside and deleted.
    let listed = b
        .list(&scope, None, 100, at(10))
        .await
        .expect("list")
        .expect("a listing");
    let listed: Vec<(String, &str)> = listed
        .iter()
        .map(|s| (s.task.id().as_str().to_owned(), s.task.status().as_str()))
        .collect();
    let mut expected: Vec<(String, &str)> = GOOD
        .iter()
        .chain(&["bad-work"])
        .map(|n| ((*n).to_owned(), "working"))
        .chain(BAD.iter().map(|n| ((*n).to_owned(), "failed")))
        .collect();
    expected.sort();
    assert_eq!(listed, expected);
    assert_eq!(b.quarantined(), 6);
    let kept = quarantined_rows(&admin, &schema).await;
    let gone = kept
        .iter()
        .find(|k| k.0 == long_id)
        .expect("the long id is kept");
    assert!(gone.3.starts_with("invalid id"), "{}", gone.3);
    assert_eq!(
        gone.1.as_deref(),
        Some(stored(&admin, &schema, "good-1").await.as_str())
    );
    assert_eq!(
        counters(&admin, &schema).await,
        alice_counts(9, 4, 0),
        "4 working: 3 good, bad-work"
    );

    // Node a dies; b claims: the good tasks, not bad-work (its work does not decode), in
    // passes of 3 so one pass must claim again for what it left out.
    b.register_node(&NODE_B, at(2 * LEASE), LEASE)
        .await
        .expect("register b");
    let claimed = b
        .claim_orphans(&NODE_B, at(2 * LEASE), 3)
        .await
        .expect("a claim pass never fails for a bad row");
    let mut names: Vec<&str> = claimed
        .iter()
        .map(|c| c.snapshot.task.id().as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, GOOD);
    for task in &claimed {
        assert_eq!(task.lease.generation, 2);
        assert_eq!(*task.work, work(&scope, task.snapshot.task.id().as_str()));
        assert_eq!(task.snapshot.task.status(), TaskStatus::Working);
    }
    assert!(b
        .claim_orphans(&NODE_B, at(2 * LEASE), 3)
        .await
        .expect("claim")
        .is_empty());
    assert_eq!(b.quarantined(), 7);
    let read = b
        .get(&scope, &id("bad-work"), at(2 * LEASE))
        .await
        .unwrap()
        .unwrap();
    assert_unreadable(&read.task, "bad-work", 2);
    assert!(b.work(&scope, &id("bad-work")).await.unwrap().is_none());
    let kept = quarantined_rows(&admin, &schema).await;
    let bad_work = kept.iter().find(|k| k.0 == "bad-work").expect("kept");
    assert_eq!(bad_work.2.as_deref(), Some(r#"{"tool": 5}"#));
    assert!(
        bad_work.3.starts_with("work does not decode"),
        "{}",
        bad_work.3
    );
    let held = b
        .held(&NODE_B, at(2 * LEASE), None, 10)
        .await
        .expect("held")
        .expect("known");
    assert_eq!(held.len(), 3);
    assert_eq!(counters(&admin, &schema).await, alice_counts(9, 3, 0));

    // The feed told a of every quarantine (at its new revision) and every claim.
    let mut hinted = BTreeSet::new();
    let mut wanted: BTreeSet<(String, u64)> = BAD
        .iter()
        .map(|n| ((*n).to_owned(), if *n == "bad-marker" { 3 } else { 2 }))
        .chain(GOOD.iter().map(|n| ((*n).to_owned(), 1)))
        .collect();
    wanted.insert(("bad-work".to_owned(), 2));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !wanted.is_subset(&hinted) {
        match tokio::time::timeout_at(deadline, seen_by_a.recv()).await {
            Ok(Ok(Change::Task { id, revision })) => {
                hinted.insert((id.as_str().to_owned(), revision));
            }
            Ok(_) => {}
            Err(_) => panic!("hints missing: {:?}", wanted.difference(&hinted)),
        }
    }
    let ids: Vec<_> = wanted.iter().map(|(n, _)| id(n)).collect();
    let loaded = a.load(&ids, at(2 * LEASE)).await.expect("load");
    assert_eq!(loaded.len(), ids.len());
    for snapshot in &loaded {
        let name = snapshot.task.id().as_str();
        let failed = snapshot.task.status() == TaskStatus::Failed;
        assert_eq!(failed, !GOOD.contains(&name), "{name}");
    }

    // Reaping takes every expired task, the quarantined ones too; the copies stay.
    let mut reaped = b.reap(at(TTL)).await.expect("reap");
    reaped.sort();
    assert_eq!(reaped.len(), 9);
    assert_eq!(counters(&admin, &schema).await, alice_counts(0, 0, 0));
    assert_eq!(quarantined_rows(&admin, &schema).await.len(), 7);
    assert_eq!(b.task_count().await.expect("count"), 0);
}

/// A revision conflict on a row that does not decode answers the failed task in its place;
/// two instances meeting the same bad row at once quarantine it once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conflict_reads_the_failed_task_and_racing_readers_quarantine_once() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let a = db.connect(&schema).await;
    let b = db.connect(&schema).await;
    let admin = db.admin().await;
    let scope = Scope::new("alice");
    let mut first = None;
    for name in ["bad-cas", "bad-race"] {
        let created = a
            .create(
                new_task(name, Some(TTL)),
                work(&scope, name).into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("create");
        first.get_or_insert(created.snapshot.task);
    }
    let created = first.expect("created");
    let asked = tasks_test_support::store::ask(&created, "more", at(1));
    assert!(matches!(
        a.transition(Authority::Request(&scope), asked, at(1))
            .await
            .unwrap(),
        CasOutcome::Committed(_)
    ));
    for name in ["bad-cas", "bad-race"] {
        write(&admin, &schema, name, "task", "[]").await;
    }

    // A stale write (from revision 1): the row is at 2, does not decode, and is quarantined.
    let stale = complete_with(&created, "late", at(2));
    match a.transition(Authority::Request(&scope), stale, at(2)).await {
        Ok(CasOutcome::Conflict(current)) => assert_unreadable(&current.task, "bad-cas", 3),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(a.quarantined(), 1);

    let race = id("bad-race");
    for _ in 0..3 {
        let (x, y) = tokio::join!(a.get(&scope, &race, at(3)), b.get(&scope, &race, at(3)),);
        assert_unreadable(&x.unwrap().unwrap().task, "bad-race", 2);
        assert_unreadable(&y.unwrap().unwrap().task, "bad-race", 2);
    }
    assert_eq!(
        a.quarantined() + b.quarantined(),
        2,
        "bad-race once, by one of them"
    );
    let kept = quarantined_rows(&admin, &schema).await;
    assert_eq!(kept.len(), 2);
    assert!(
        kept.iter().all(|k| k.1.as_deref() == Some("[]")),
        "{kept:?}"
    );
    assert_eq!(counters(&admin, &schema).await, alice_counts(2, 0, 0));
}

/// A row that does not decode never fails an inventory page (an operator's read quarantines
/// nothing): it is listed from its columns, and counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inventory_page_lists_a_row_that_does_not_decode_from_its_columns() {
    use tasks_runtime::store::inventory::{InventoryQuery, StuckRules};
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store = db.connect(&schema).await;
    let scope = tasks_runtime::Scope::new("alice");
    for name in ["good", "spoilt"] {
        store
            .create(
                new_task(name, None),
                work(&scope, "slow").into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("create");
    }
    let admin = db.admin().await;
    admin
        .batch_execute(&format!(
            "UPDATE \"{schema}\".tasks SET task = '{{\"taskId\": \"spoilt\"}}' WHERE id = 'spoilt'"
        ))
        .await
        .expect("spoil a row");
    let page = tasks_runtime::store::Store::inventory(
        &store,
        &InventoryQuery::default(),
        StuckRules::default(),
        at(10),
    )
    .await
    .expect("a spoilt row does not fail the page")
    .expect("an inventory");
    let ids: Vec<&str> = page.rows.iter().map(|row| row.id.as_str()).collect();
    assert_eq!(ids, ["spoilt", "good"]);
    let spoilt = &page.rows[0];
    assert_eq!(
        spoilt.status,
        tasks_core::TaskStatus::Working,
        "from its column"
    );
    assert_eq!(spoilt.tool.as_deref(), Some("slow"));
    assert_eq!(spoilt.last_updated_at, T0, "from updated_at_ms");
    assert_eq!(spoilt.status_message, None);
    let counts =
        tasks_runtime::store::Store::inventory_counts(&store, StuckRules::default(), at(10))
            .await
            .expect("counts")
            .expect("counts");
    assert_eq!(counts.by_status.working, 2);
    let quarantined: i64 = admin
        .query_one(
            &format!("SELECT count(*) FROM \"{schema}\".quarantined_tasks"),
            &[],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(quarantined, 0, "the inventory writes nothing");
}
