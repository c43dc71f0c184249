//! Schema migrations on old data: a database that an older schema version wrote opens
//! migrated to the latest version, every task intact and readable.

use std::path::Path;

use tasks_runtime::store::Store;
use tasks_runtime::Scope;
use tasks_store_sqlite::{SqliteOptions, SqliteStore};
use tasks_test_support::store::*;

/// The schema migrations as released: version `i` is the first `i` of them.
const RELEASED: [&str; 6] = [
    include_str!("../../migrations/0001_init.sql"),
    include_str!("../../migrations/0002_clock.sql"),
    include_str!("../../migrations/0003_status_check.sql"),
    include_str!("../../migrations/0004_quarantine.sql"),
    include_str!("../../migrations/0005_task_origin.sql"),
    include_str!("../../migrations/0006_inventory.sql"),
];

/// The schema version this build writes: one per released migration.
pub(crate) const LATEST: i64 = RELEASED.len() as i64;

/// The schema version of the database `conn` is open on (`PRAGMA user_version`).
pub(crate) fn user_version(conn: &rusqlite::Connection) -> i64 {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
        .expect("user_version")
}

/// `PRAGMA application_id` of a task database ("MCPT").
const APPLICATION_ID: i64 = 0x4d43_5054;

/// Writes `path` as schema version `version` wrote it: that version's schema, from its
/// released migrations, holding the rows of the database `rows_from` (written by this build;
/// a task row has had the same encoding in every version, and the same columns up to
/// version 5, which are the ones copied). The clock row is copied when version 2 or later
/// has the table.
pub(crate) fn old_database(path: &Path, version: usize, rows_from: &Path) {
    let conn = rusqlite::Connection::open(path).expect("create the old file");
    conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL;")
        .expect("auto_vacuum");
    for migration in &RELEASED[..version] {
        conn.execute_batch(migration).expect("an old migration");
    }
    conn.execute(
        "ATTACH DATABASE ?1 AS current",
        [rows_from.to_str().expect("utf-8 path")],
    )
    .expect("attach");
    conn.execute_batch(
        "INSERT INTO tasks SELECT id, scope, revision, status, created_at_ms, expires_at_ms, \
         task, work, owner_node, generation, attempt FROM current.tasks;",
    )
    .expect("copy the tasks");
    if version >= 2 {
        conn.execute_batch("DELETE FROM clock; INSERT INTO clock SELECT * FROM current.clock;")
            .expect("copy the clock");
    }
    conn.execute_batch(&format!(
        "DETACH DATABASE current; PRAGMA user_version = {version}; \
         PRAGMA application_id = {APPLICATION_ID};"
    ))
    .expect("mark the version");
}

/// `store` after creating `working` (its TTL running, its work kept) and `done` (completed,
/// its work dropped); the two as stored, in that order.
async fn two_tasks(store: &SqliteStore, scope: &Scope) -> Vec<tasks_runtime::store::Snapshot> {
    for name in ["working", "done"] {
        let task = tasks_core::NewTask::new(id(name), T0, Some(3_600_000), None);
        let created = store
            .create(task, work(scope, name).into(), ROOMY, &NODE_A)
            .await
            .expect("create");
        if name == "done" {
            let update = complete(&created.snapshot.task, at(1_000));
            let lease = created.lease;
            store
                .transition(
                    tasks_runtime::store::Authority::Worker(&lease),
                    update,
                    at(1_000),
                )
                .await
                .expect("complete");
        }
    }
    let mut stored = Vec::new();
    for name in ["working", "done"] {
        let snapshot = store.get(scope, &id(name), at(2_000)).await.expect("get");
        stored.push(snapshot.expect("stored"));
    }
    stored
}

#[tokio::test]
async fn a_version_2_database_is_migrated_with_every_task_intact() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (current, old) = (dir.path().join("current.db"), dir.path().join("old.db"));
    let scope = Scope::new("alice");
    let store = SqliteStore::open(&current, SqliteOptions::default()).expect("open");
    let before = two_tasks(&store, &scope).await;
    let work_before = store.work(&scope, &id("working")).await.expect("work");
    drop(store);
    old_database(&old, 2, &current);

    let store = SqliteStore::open(&old, SqliteOptions::default()).expect("migrating open");
    for (name, before) in ["working", "done"].into_iter().zip(&before) {
        let after = store.get(&scope, &id(name), at(2_000)).await.expect("get");
        let after = after.unwrap_or_else(|| panic!("{name} survives the migration"));
        assert_eq!(*after.task, *before.task, "{name} is the same task");
        assert_eq!(after.scope, scope);
    }
    let work_after = store.work(&scope, &id("working")).await.expect("work");
    assert_eq!(
        work_after.as_deref(),
        work_before.as_deref(),
        "the work of the running task is kept"
    );
    assert!(store
        .work(&scope, &id("done"))
        .await
        .expect("work")
        .is_none());
    // The migrated table takes writes: a new task, and the running one completed.
    two_tasks_more(&store, &scope).await;
    drop(store);

    let conn = rusqlite::Connection::open(&old).expect("open the file");
    let version = crate::migrations::user_version(&conn);
    assert_eq!(version, crate::migrations::LATEST);
    let table: String = conn
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE name = 'tasks'",
            [],
            |row| row.get(0),
        )
        .expect("the tasks table");
    assert!(
        table.contains("status = 'working' OR status = 'input_required'"),
        "{table}"
    );
    let indexes: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'tasks' ORDER BY name")
        .expect("prepare")
        .query_map([], |row| row.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("names");
    assert_eq!(
        indexes,
        [
            "sqlite_autoindex_tasks_1",
            "tasks_active",
            "tasks_created",
            "tasks_expiry",
            "tasks_idle",
            "tasks_tool"
        ]
    );
    let refused = conn.execute(
        "INSERT INTO tasks (id, scope, revision, status, created_at_ms, task, generation, attempt) \
         VALUES ('bad', 's', 1, 'bogus', 0, '{}', 1, 1)",
        [],
    );
    assert!(
        refused.is_err_and(|error| error.to_string().contains("CHECK constraint failed")),
        "a status outside the five is still refused"
    );
}

/// A database of schema version 3 (the last before `quarantined_tasks`) opens migrated, every
/// task intact, with the empty quarantine table; a row it holds that does not decode is
/// quarantined on that same open.
#[tokio::test]
async fn a_version_3_database_gains_the_quarantine_table_with_every_task_intact() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (current, old) = (dir.path().join("current.db"), dir.path().join("old.db"));
    let scope = Scope::new("alice");
    let store = SqliteStore::open(&current, SqliteOptions::default()).expect("open");
    let before = two_tasks(&store, &scope).await;
    drop(store);
    old_database(&old, 3, &current);
    {
        let conn = rusqlite::Connection::open(&old).expect("open the old file");
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name = 'quarantined_tasks'",
                [],
                |row| row.get(0),
            )
            .expect("count");
        assert_eq!(tables, 0, "version 3 has no quarantine table");
        conn.execute(
            "INSERT INTO tasks SELECT 'broken', scope, revision, status, created_at_ms,              expires_at_ms, '{\"not\":1}', work, owner_node, generation, attempt              FROM tasks WHERE id = 'working'",
            [],
        )
        .expect("a row that does not decode");
    }

    let store = SqliteStore::open(&old, SqliteOptions::default()).expect("migrating open");
    for (name, before) in ["working", "done"].into_iter().zip(&before) {
        let after = store.get(&scope, &id(name), at(2_000)).await.expect("get");
        let after = after.unwrap_or_else(|| panic!("{name} survives the migration"));
        assert_eq!(*after.task, *before.task, "{name} is the same task");
    }
    assert_eq!(store.quarantined(), 1);
    let broken = store
        .get(&scope, &id("broken"), at(2_000))
        .await
        .expect("get");
    assert_eq!(
        broken.expect("kept").task.status(),
        tasks_core::TaskStatus::Failed
    );
    two_tasks_more(&store, &scope).await;
    drop(store);
    let conn = rusqlite::Connection::open(&old).expect("open the file");
    assert_eq!(crate::migrations::user_version(&conn), LATEST);
    let kept: String = conn
        .query_row(
            "SELECT task FROM quarantined_tasks WHERE id = 'broken'",
            [],
            |row| row.get(0),
        )
        .expect("the original row");
    assert_eq!(kept, "{\"not\":1}");
}

/// A database of schema version 4 (the last before task origins) opens migrated: a running
/// task whose work does not declare the Tasks extension (what a 2025 session stored) reads as a
/// 2025 task, one whose work declares it and a terminal one as tasks of the extension, each
/// otherwise the same task; rows that do not decode do not stop the migration.
#[tokio::test]
async fn a_version_4_database_marks_its_running_2025_tasks() {
    use tasks_core::TaskOrigin;
    let dir = tempfile::tempdir().expect("temp dir");
    let (current, old) = (dir.path().join("current.db"), dir.path().join("old.db"));
    let scope = Scope::new("alice");
    let store = SqliteStore::open(&current, SqliteOptions::default()).expect("open");
    let before = two_tasks(&store, &scope).await;
    let mut session_work = work(&scope, "session");
    session_work.client_capabilities = tasks_store_contract::object(
        serde_json::json!({"tasks": {"requests": {"tools": {"call": {}}}}}),
    );
    let task = tasks_core::NewTask::new(id("session"), T0, Some(3_600_000), None);
    let session = store
        .create(task, session_work.into(), ROOMY, &NODE_A)
        .await
        .expect("create")
        .snapshot;
    drop(store);
    old_database(&old, 4, &current);
    {
        let conn = rusqlite::Connection::open(&old).expect("open the old file");
        let stored: String = conn
            .query_row("SELECT task FROM tasks WHERE id = 'session'", [], |row| {
                row.get(0)
            })
            .expect("the row");
        assert!(
            !stored.contains("origin"),
            "version 4 stores no origin: {stored}"
        );
        for (name, task, work) in [
            ("not-json", "{not json", "{not json"),
            ("an-array", "[1]", "[2]"),
        ] {
            conn.execute(
                "INSERT INTO tasks SELECT ?1, scope, revision, status, created_at_ms, \
                 expires_at_ms, ?2, ?3, owner_node, generation, attempt \
                 FROM tasks WHERE id = 'working'",
                [name, task, work],
            )
            .expect("a row that does not decode");
        }
        // A 2025 task's text with a NUL byte and garbage after it (SQLite's JSON functions
        // stop at the NUL), and one already naming an origin spelt with an escape: neither is
        // changed by the migration.
        conn.execute_batch(
            r#"INSERT INTO tasks SELECT 'nul-tail', scope, revision, status, created_at_ms,
                 expires_at_ms, replace(task, '"session"', '"nul-tail"') || CAST(x'00' AS TEXT)
                 || 'garbage', work, owner_node, generation, attempt FROM tasks WHERE id = 'session';
               INSERT INTO tasks SELECT 'escaped-origin', scope, revision, status, created_at_ms,
                 expires_at_ms, replace(replace(task, '"session"', '"escaped-origin"'),
                 '"revision":1', '"revision":1,"\u006frigin":"2026-07-28"'), work, owner_node,
                 generation, attempt FROM tasks WHERE id = 'session';"#,
        )
        .expect("rows the migration must leave alone");
    }

    let store = SqliteStore::open(&old, SqliteOptions::default()).expect("migrating open");
    let after = |name: &'static str| {
        let store = &store;
        let scope = &scope;
        async move {
            store
                .get(scope, &id(name), at(2_000))
                .await
                .expect("get")
                .unwrap_or_else(|| panic!("{name} survives the migration"))
        }
    };
    let session_after = after("session").await;
    assert_eq!(session_after.task.origin(), TaskOrigin::Experimental2025);
    let expected = tasks_core::NewTask::new(id("session"), T0, Some(3_600_000), None)
        .with_origin(TaskOrigin::Experimental2025)
        .into_task();
    assert_eq!(*session_after.task, expected, "otherwise the same task");
    assert_eq!(session.task.origin(), TaskOrigin::Extension);
    for (name, before) in ["working", "done"].into_iter().zip(&before) {
        let read = after(name).await;
        assert_eq!(read.task.origin(), TaskOrigin::Extension, "{name}");
        assert_eq!(*read.task, *before.task, "{name} is the same task");
    }
    let escaped = after("escaped-origin").await;
    assert_eq!(
        escaped.task.status(),
        tasks_core::TaskStatus::Working,
        "still readable"
    );
    assert_eq!(
        escaped.task.origin(),
        TaskOrigin::Extension,
        "its own origin kept"
    );
    let tail = after("nul-tail").await;
    assert_eq!(
        tail.task.status(),
        tasks_core::TaskStatus::Failed,
        "still undecodable"
    );
    assert_eq!(
        store.quarantined(),
        3,
        "the three bad rows, quarantined as before"
    );
    drop(store);
    let conn = rusqlite::Connection::open(&old).expect("open the file");
    assert_eq!(crate::migrations::user_version(&conn), LATEST);
    let kept: String = conn
        .query_row(
            "SELECT task FROM quarantined_tasks WHERE id = 'not-json'",
            [],
            |row| row.get(0),
        )
        .expect("the original row");
    assert_eq!(kept, "{not json");
}

/// After the migration: one task more, and `working` completed by its worker.
async fn two_tasks_more(store: &SqliteStore, scope: &Scope) {
    let task = tasks_core::NewTask::new(id("later"), at(2_000), None, None);
    store
        .create(task, work(scope, "later").into(), ROOMY, &NODE_A)
        .await
        .expect("create after the migration");
    let working = store
        .get(scope, &id("working"), at(2_000))
        .await
        .expect("get")
        .expect("stored");
    let update = complete(&working.task, at(2_500));
    let outcome = store
        .transition(
            tasks_runtime::store::Authority::Request(scope),
            update,
            at(2_500),
        )
        .await
        .expect("complete after the migration");
    assert!(
        matches!(outcome, tasks_runtime::store::CasOutcome::Committed(_)),
        "{outcome:?}"
    );
}

/// A database of schema version 5 (the last before the inventory's columns) opens migrated:
/// the inventory lists its tasks with their tool (from the work a running task keeps; none
/// for a terminal one, whose work was dropped) and their `lastUpdatedAt` (from the task text),
/// and rows that do not decode neither stop the migration nor fail a page. The `nodes` rows of
/// the old file are gone (the store deletes every node row at open, in every version); the new
/// columns are there.
#[tokio::test]
async fn a_version_5_database_lists_its_tasks_in_the_inventory() {
    use tasks_runtime::store::inventory::{InventoryQuery, StuckRules};
    let dir = tempfile::tempdir().expect("temp dir");
    let (current, old) = (dir.path().join("current.db"), dir.path().join("old.db"));
    let scope = Scope::new("alice");
    let store = SqliteStore::open(&current, SqliteOptions::default()).expect("open");
    two_tasks(&store, &scope).await;
    let working = store
        .get(&scope, &id("working"), at(0))
        .await
        .expect("get")
        .expect("stored");
    let event = tasks_core::Event::StatusMessage {
        message: "halfway".into(),
    };
    let update = tasks_store_contract::next(&working.task, event, at(500));
    store
        .transition(
            tasks_runtime::store::Authority::Request(&scope),
            update,
            at(500),
        )
        .await
        .expect("a status message");
    drop(store);
    old_database(&old, 5, &current);
    {
        let conn = rusqlite::Connection::open(&old).expect("open the old file");
        for (name, task, work) in [
            ("not-json", "{not json", "{not json"),
            ("an-array", "[1]", "[2]"),
        ] {
            conn.execute(
                "INSERT INTO tasks SELECT ?1, scope, revision, status, created_at_ms, \
                 expires_at_ms, ?2, ?3, owner_node, generation, attempt \
                 FROM tasks WHERE id = 'working'",
                [name, task, work],
            )
            .expect("a row that does not decode");
        }
        conn.execute(
            "INSERT INTO tasks SELECT 'nul-tail', scope, revision, status, created_at_ms, \
             expires_at_ms, replace(task, '\"working\"', '\"nul-tail\"') || CAST(x'00' AS TEXT) \
             || 'garbage', work || CAST(x'00' AS TEXT), owner_node, generation, attempt \
             FROM tasks WHERE id = 'working'",
            [],
        )
        .expect("a row with a NUL byte");
        conn.execute(
            "INSERT INTO nodes (node_id, lease_expires_at_ms) VALUES (?1, 1)",
            [&[7u8; 16][..]],
        )
        .expect("an old node row");
    }

    let store = SqliteStore::open(&old, SqliteOptions::default()).expect("migrating open");
    assert_eq!(store.quarantined(), 3, "the three bad rows, as before");
    let page = store
        .inventory(&InventoryQuery::default(), StuckRules::default(), at(2_000))
        .await
        .expect("the page")
        .expect("an inventory");
    let row = |name: &str| {
        page.rows
            .iter()
            .find(|row| row.id.as_str() == name)
            .unwrap_or_else(|| panic!("{name} is listed: {page:?}"))
    };
    let working = row("working");
    assert_eq!(working.tool.as_deref(), Some("working"), "from its work");
    assert_eq!(working.last_updated_at, at(500), "from the task text");
    assert_eq!(working.status_message.as_deref(), Some("halfway"));
    assert_eq!(working.node, Some(NODE_A), "its holder, kept");
    let done = row("done");
    assert_eq!(
        done.tool, None,
        "terminal before version 6: its work was dropped"
    );
    assert_eq!(done.last_updated_at, at(1_000));
    assert_eq!(done.node, None);
    for name in ["not-json", "an-array", "nul-tail"] {
        let bad = row(name);
        assert_eq!(bad.status, tasks_core::TaskStatus::Failed, "{name}");
        assert_eq!(bad.tool, None, "{name}: its work did not decode");
    }
    assert_eq!(page.rows.len(), 5);
    let nodes = store.nodes(at(2_000)).await.expect("nodes").expect("nodes");
    assert!(nodes.is_empty(), "node rows are deleted at open: {nodes:?}");
    drop(store);

    let conn = rusqlite::Connection::open(&old).expect("open the file");
    assert_eq!(crate::migrations::user_version(&conn), LATEST);
    let stored: Vec<(String, Option<String>, i64)> = conn
        .prepare("SELECT id, tool, updated_at_ms FROM tasks ORDER BY id")
        .expect("prepare")
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let ms = |t: tasks_core::Timestamp| i64::try_from(t.unix_millis()).unwrap();
    let find = |name: &str| stored.iter().find(|(id, _, _)| id == name).cloned();
    assert_eq!(
        find("working"),
        Some(("working".into(), Some("working".into()), ms(at(500))))
    );
    assert_eq!(find("done"), Some(("done".into(), None, ms(at(1_000)))));
}
