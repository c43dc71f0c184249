//! One bad row fails one task, never the store (issue: hostile bytes and poison rows): rows
//! whose stored state does not decode (invalid JSON, valid JSON of the wrong shape, nesting
//! past the parser's limit, a serde_json marker member, a truncated value, undecodable work,
//! an invalid id) next to good tasks. The store opens; each bad task reads `failed` with
//! "The stored state of this task could not be read", is listed, is left out of the claim of
//! the previous process's tasks, expires and is reaped as usual; its original row is kept in
//! `quarantined_tasks`; `Store::quarantined` counts each once.

use std::path::Path;

use tasks_core::{TaskState, TaskStatus, MESSAGE_UNREADABLE};
use tasks_runtime::store::{NodeId, Store};
use tasks_runtime::Scope;
use tasks_store_sqlite::{SqliteOptions, SqliteStore};
use tasks_test_support::store::*;

fn open(path: &Path) -> SqliteStore {
    SqliteStore::open(path, SqliteOptions::default()).expect("the store opens")
}

/// The bad rows: (id, task text, work text) of an active task, each wrong in its own way.
fn bad_rows(good_task: &str, good_work: &str, done_task: &str) -> Vec<(String, String, String)> {
    let renamed = |text: &str, name: &str| text.replace("\"good\"", &format!("\"{name}\""));
    let marker = done_task.replace("\"done\"", "\"bad-marker\"").replacen(
        "\"result\":{",
        "\"result\":{\"x\":{\"$serde_json::private::RawValue\":5},",
        1,
    );
    assert_ne!(marker, done_task.replace("\"done\"", "\"bad-marker\""));
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    vec![
        ("bad-json".into(), "{\"taskId\": ".into(), good_work.into()),
        (
            "bad-shape".into(),
            "{\"not\":\"a task\"}".into(),
            good_work.into(),
        ),
        (
            "bad-deep".into(),
            done_task.replace("\"done\"", "\"bad-deep\"").replacen(
                "\"result\":{",
                &format!("\"result\":{{\"deep\":{deep},"),
                1,
            ),
            good_work.into(),
        ),
        ("bad-marker".into(), marker, good_work.into()),
        (
            "bad-truncated".into(),
            renamed(good_task, "bad-truncated")[..good_task.len() / 2].to_owned(),
            good_work.into(),
        ),
        ("bad-work".into(), renamed(good_task, "bad-work"), deep),
        (String::new(), renamed(good_task, ""), good_work.into()),
    ]
}

#[tokio::test]
async fn unreadable_rows_fail_their_own_task_and_everything_else_is_served() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let scope = Scope::new("alice");
    let store = open(&path);
    for name in ["good", "done"] {
        let created = store
            .create(
                new_task(name, Some(60_000)),
                work(&scope, name).into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("create");
        if name == "done" {
            let update = complete(&created.snapshot.task, at(1_000));
            store
                .transition(
                    tasks_runtime::store::Authority::Worker(&created.lease),
                    update,
                    at(1_000),
                )
                .await
                .expect("complete");
        }
    }
    let before_good = store
        .get(&scope, &id("good"), at(2_000))
        .await
        .unwrap()
        .unwrap();
    drop(store);

    let bad = {
        let conn = rusqlite::Connection::open(&path).expect("open the file");
        let read = |name: &str| -> (String, Option<String>) {
            conn.query_row(
                "SELECT task, work FROM tasks WHERE id = ?1",
                [name],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .expect("a row")
        };
        let (good_task, good_work) = read("good");
        let (done_task, _) = read("done");
        let bad = bad_rows(&good_task, &good_work.expect("work"), &done_task);
        for (name, task, work) in &bad {
            conn.execute(
                "INSERT INTO tasks (id, scope, revision, status, created_at_ms, expires_at_ms, \
                 task, work, owner_node, generation, attempt) \
                 SELECT ?1, scope, revision, status, created_at_ms, expires_at_ms, ?2, ?3, \
                 owner_node, generation, attempt FROM tasks WHERE id = 'good'",
                rusqlite::params![name, task, work],
            )
            .expect("insert a bad row");
        }
        bad
    };

    let store = open(&path);
    assert_eq!(store.quarantined(), bad.len() as u64);
    let now = at(2_000);
    for (name, _, _) in bad.iter().filter(|(name, _, _)| !name.is_empty()) {
        let snapshot = store
            .get(&scope, &id(name), now)
            .await
            .expect("get")
            .unwrap_or_else(|| panic!("{name} is still there"));
        let TaskState::Failed { error } = snapshot.task.state() else {
            panic!("{name} reads {:?}", snapshot.task.state());
        };
        assert_eq!(
            (error.code, error.message.as_str()),
            (-32603, MESSAGE_UNREADABLE)
        );
        assert_eq!(snapshot.task.status_message(), Some(MESSAGE_UNREADABLE));
        assert_eq!(snapshot.task.revision(), 2, "{name}: one revision on");
        assert_eq!(snapshot.task.created_at(), T0);
        assert_eq!(
            snapshot.task.ttl_ms(),
            Some(60_000),
            "{name} keeps its expiry"
        );
        assert!(store.work(&scope, &id(name)).await.unwrap().is_none());
    }
    let good = store.get(&scope, &id("good"), now).await.unwrap().unwrap();
    assert_eq!(*good.task, *before_good.task, "a good task is unchanged");
    let listed: Vec<String> = store
        .list(&scope, None, 100, now)
        .await
        .expect("list")
        .expect("a listing")
        .iter()
        .map(|s| s.task.id().as_str().to_owned())
        .collect();
    assert_eq!(listed.len(), 2 + bad.len() - 1, "{listed:?}");

    // The previous process's tasks are orphans: only the good active one is claimed.
    let node = NodeId::from_bytes([0xc; 16]);
    store
        .register_node(&node, now, 1_000)
        .await
        .expect("register");
    let claimed = store
        .claim_orphans(&node, now, 100)
        .await
        .expect("the claim passes");
    let claimed: Vec<&str> = claimed
        .iter()
        .map(|c| c.snapshot.task.id().as_str())
        .collect();
    assert_eq!(claimed, ["good"]);
    let counts = store.status_counts(now).await.unwrap().expect("counts");
    assert_eq!(counts.get(TaskStatus::Failed), bad.len() as u64 - 1);
    assert_eq!(counts.get(TaskStatus::Working), 1);
    drop(store);

    // The originals are kept for an operator, with the reason.
    {
        let conn = rusqlite::Connection::open(&path).expect("open the file");
        let kept: Vec<(String, String, String)> = conn
            .prepare("SELECT id, task, reason FROM quarantined_tasks ORDER BY id")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut expected: Vec<(String, String)> = bad
            .iter()
            .map(|(name, task, _)| (name.clone(), task.clone()))
            .collect();
        expected.sort();
        let found: Vec<(String, String)> = kept
            .iter()
            .map(|(name, task, _)| (name.clone(), task.clone()))
            .collect();
        assert_eq!(found, expected);
        let reasons: Vec<&str> = kept.iter().map(|k| k.2.as_str()).collect();
        assert!(reasons[0].starts_with("invalid id"), "{reasons:?}");
        assert!(
            reasons
                .iter()
                .any(|r| r.starts_with("work does not decode")),
            "{reasons:?}"
        );
        assert!(
            reasons.iter().any(|r| r.contains("recursion limit")),
            "{reasons:?}"
        );
        let ids: i64 = conn
            .query_row("SELECT count(*) FROM tasks WHERE id = ''", [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(ids, 0, "a row with an invalid id is moved out");
    }

    // Opened again: nothing more to quarantine; the failed tasks expire and are reaped.
    let store = open(&path);
    assert_eq!(store.quarantined(), 0);
    let snapshot = store
        .get(&scope, &id("bad-json"), now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(snapshot.task.status(), TaskStatus::Failed);
    let mut reaped: Vec<String> = store
        .reap(at(60_000))
        .await
        .expect("reap")
        .iter()
        .map(|id| id.as_str().to_owned())
        .collect();
    reaped.sort();
    let mut expected: Vec<String> = bad
        .iter()
        .filter(|(name, _, _)| !name.is_empty())
        .map(|(name, _, _)| name.clone())
        .chain(["done".to_owned(), "good".to_owned()])
        .collect();
    expected.sort();
    assert_eq!(reaped, expected);
}

/// SQLite stores TEXT without checking it is UTF-8: a row whose task, work, scope or id holds
/// bytes that are not is one bad row, never a failed open. The task and work ones read failed
/// like any other; the scope and id ones cannot stand for a caller's task and are moved out;
/// `quarantined_tasks` keeps every original byte.
#[tokio::test]
async fn rows_that_are_not_utf8_fail_their_own_task_and_the_store_opens() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let scope = Scope::new("alice");
    let store = open(&path);
    store
        .create(
            new_task("good", Some(60_000)),
            work(&scope, "good").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");
    drop(store);
    // "\xc3(" is not UTF-8: a lead byte followed by a byte that cannot continue it.
    let bad = "CAST(x'c328' AS TEXT)";
    let renamed = |name: &str| format!("replace(task, '\"good\"', '\"{name}\"')");
    // (id, scope, task, work), each an SQL expression over the good row's columns.
    let rows: [[String; 4]; 4] = [
        [
            "'bad-task'".into(),
            "scope".into(),
            format!("replace(task, '\"good\"', {bad})"),
            "work".into(),
        ],
        [
            "'bad-work'".into(),
            "scope".into(),
            renamed("bad-work"),
            format!("replace(work, 'hello', {bad})"),
        ],
        [
            "'bad-scope'".into(),
            bad.into(),
            renamed("bad-scope"),
            "work".into(),
        ],
        [
            format!("'bad-' || {bad}"),
            "scope".into(),
            "task".into(),
            "work".into(),
        ],
    ];
    {
        let conn = rusqlite::Connection::open(&path).expect("open the file");
        for [id, scope, task, work] in &rows {
            conn.execute(
                &format!(
                    "INSERT INTO tasks (id, scope, revision, status, created_at_ms, \
                     expires_at_ms, task, work, owner_node, generation, attempt) \
                     SELECT {id}, {scope}, revision, status, created_at_ms, expires_at_ms, \
                     {task}, {work}, owner_node, generation, attempt FROM tasks WHERE id = 'good'"
                ),
                [],
            )
            .expect("insert a row that is not UTF-8");
        }
    }
    let original = |conn: &rusqlite::Connection, table: &str| -> Vec<String> {
        conn.prepare(&format!(
            "SELECT hex(id) || hex(scope) || hex(task) || hex(coalesce(work, '')) FROM {table} \
             WHERE id <> 'good' ORDER BY hex(id)"
        ))
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    let before = original(&rusqlite::Connection::open(&path).unwrap(), "tasks");
    assert_eq!(before.len(), rows.len());

    let store = open(&path);
    assert_eq!(store.quarantined(), rows.len() as u64);
    let now = at(2_000);
    for name in ["bad-task", "bad-work"] {
        let snapshot = store.get(&scope, &id(name), now).await.unwrap();
        let snapshot = snapshot.unwrap_or_else(|| panic!("{name} is still there"));
        assert_eq!(snapshot.task.status(), TaskStatus::Failed, "{name}");
        assert_eq!(snapshot.task.status_message(), Some(MESSAGE_UNREADABLE));
    }
    assert!(store
        .get(&scope, &id("bad-scope"), now)
        .await
        .unwrap()
        .is_none());
    let good = store.get(&scope, &id("good"), now).await.unwrap().unwrap();
    assert_eq!(
        good.task.status(),
        TaskStatus::Working,
        "a good task is served"
    );
    assert_eq!(
        store.task_count().await.unwrap(),
        3,
        "good, bad-task, bad-work"
    );
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(
        original(&conn, "quarantined_tasks"),
        before,
        "every original byte is kept"
    );
    drop(conn);
    assert_eq!(open(&path).quarantined(), 0, "opened again: nothing more");
}

/// A row that another program spoilt while the store is open (it is quarantined only at the
/// next open) does not fail an inventory page: it is listed from its columns.
#[tokio::test]
async fn an_inventory_page_lists_a_spoilt_row_from_its_columns() {
    use tasks_runtime::store::inventory::{InventoryQuery, StuckRules};
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.db");
    let store = open(&path);
    let scope = Scope::new("alice");
    for name in ["good", "spoilt"] {
        let task = tasks_core::NewTask::new(id(name), T0, None, None);
        store
            .create(task, work(&scope, "slow").into(), ROOMY, &NODE_A)
            .await
            .expect("create");
    }
    let conn = rusqlite::Connection::open(&path).expect("open the file");
    conn.execute(
        "UPDATE tasks SET task = '{not json' WHERE id = 'spoilt'",
        [],
    )
    .expect("spoil a row");
    conn.execute(
        "INSERT INTO tasks SELECT '', scope, revision, status, created_at_ms, \
         expires_at_ms, task, work, owner_node, generation, attempt, tool, updated_at_ms \
         FROM tasks WHERE id = 'good'",
        [],
    )
    .expect("a row whose id is not a task id (empty)");
    drop(conn);
    let page = store
        .inventory(&InventoryQuery::default(), StuckRules::default(), at(10))
        .await
        .expect("a spoilt row does not fail the page")
        .expect("an inventory");
    let ids: Vec<&str> = page.rows.iter().map(|row| row.id.as_str()).collect();
    assert_eq!(ids, ["spoilt", "good"], "the bad id is left out");
    let spoilt = &page.rows[0];
    assert_eq!(
        spoilt.status,
        tasks_core::TaskStatus::Working,
        "from its column"
    );
    assert_eq!(spoilt.tool.as_deref(), Some("slow"));
    assert_eq!(spoilt.last_updated_at, T0, "from updated_at_ms");
    assert_eq!(spoilt.status_message, None);
    let counts = store
        .inventory_counts(StuckRules::default(), at(10))
        .await
        .expect("counts")
        .expect("counts");
    assert_eq!(counts.by_status.working, 3, "every row counted");
}
