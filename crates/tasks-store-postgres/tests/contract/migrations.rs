//! Connecting: migrations are idempotent and safe to race, a newer schema is refused and left
//! unchanged, a schema holding another program's tables is refused, bad input or an
//! unreachable server give clear errors that never show the password, and a task row of the
//! previous build takes progress without a schema change.

use crate::common;

use common::*;
use tasks_runtime::store::Store;
use tasks_runtime::Scope;
use tasks_store_contract::{one_of_four, ROWS_BEFORE_PROGRESS, ROW_WITH_PROGRESS_END};
use tasks_store_postgres::{ConnectError, PostgresOptions, PostgresStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connecting_twice_to_one_schema_keeps_its_tasks() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let first = db.connect(&schema).await;
    let scope = Scope::new("alice");
    first
        .create(
            new_task("kept", None),
            work(&scope, "kept").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");
    drop(first);
    let second = db.connect(&schema).await;
    assert_eq!(second.task_count().await.expect("count"), 1);
    assert!(second
        .get(&scope, &id("kept"), T0)
        .await
        .expect("get")
        .is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_connects_on_a_fresh_schema_both_succeed() {
    let Some(db) = Database::open().await else {
        return;
    };
    for _ in 0..3 {
        let schema = db.schema();
        let (a, b, c) = tokio::join!(
            PostgresStore::connect(&db.url, Database::options(&schema)),
            PostgresStore::connect(&db.url, Database::options(&schema)),
            PostgresStore::connect(&db.url, Database::options(&schema)),
        );
        for store in [a, b, c] {
            let store = store.expect("every racing connect succeeds");
            assert_eq!(store.task_count().await.expect("count"), 0);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_schema_is_refused_and_left_unchanged() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store = db.connect(&schema).await;
    store
        .create(
            new_task("old", None),
            work(&Scope::new("s"), "old").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");
    drop(store);
    let admin = db.admin().await;
    admin
        .batch_execute(&format!(
            "UPDATE \"{schema}\".schema_version SET version = 99"
        ))
        .await
        .expect("pretend a newer build wrote it");

    let refused = PostgresStore::connect(&db.url, Database::options(&schema)).await;
    match refused {
        Err(ConnectError::NewerSchema {
            schema: ref named,
            found: 99,
            supported: 8,
        }) if *named == schema => {}
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    let message = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("99"), "{message}");

    let version: i32 = admin
        .query_one(
            &format!("SELECT version FROM \"{schema}\".schema_version"),
            &[],
        )
        .await
        .expect("version")
        .get(0);
    assert_eq!(version, 99, "the version is left as found");
    let tasks: i64 = admin
        .query_one(&format!("SELECT count(*) FROM \"{schema}\".tasks"), &[])
        .await
        .expect("count")
        .get(0);
    assert_eq!(tasks, 1, "the tasks are left as found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_with_another_programs_tables_is_refused_and_left_unchanged() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let admin = db.admin().await;
    admin
        .batch_execute(&format!(
            "CREATE SCHEMA \"{schema}\"; CREATE TABLE \"{schema}\".tasks (x int)"
        ))
        .await
        .expect("a foreign table");
    let refused = PostgresStore::connect(&db.url, Database::options(&schema)).await;
    assert!(
        matches!(refused, Err(ConnectError::Database { .. })),
        "{refused:?}"
    );
    let tables: i64 = admin
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
            &[&schema],
        )
        .await
        .expect("tables")
        .get(0);
    assert_eq!(tables, 1, "the migration was rolled back whole");
}

#[tokio::test]
async fn bad_input_and_an_unreachable_server_are_clear_and_never_show_the_password() {
    let invalid = PostgresStore::connect(
        "postgres://u:s3cret@127.0.0.1:5432/test",
        PostgresOptions::default().with_schema("Robert'); DROP TABLE students;--"),
    )
    .await;
    assert!(
        matches!(invalid, Err(ConnectError::InvalidSchema(_))),
        "{invalid:?}"
    );

    let unparsable =
        PostgresStore::connect("postgres://u:s3cret@[::1", PostgresOptions::default()).await;
    let message = match unparsable {
        Err(error @ ConnectError::InvalidUrl(_)) => error.to_string(),
        other => panic!("expected InvalidUrl, got {other:?}"),
    };
    assert!(!message.contains("s3cret"), "{message}");

    // Port 1 on loopback: nothing listens there.
    let unreachable = PostgresStore::connect(
        "postgres://u:s3cret@127.0.0.1:1/test?connect_timeout=2",
        PostgresOptions::default(),
    )
    .await;
    let message = match unreachable {
        Err(ref error @ ConnectError::Unreachable { .. }) => error.to_string(),
        other => panic!("expected Unreachable, got {other:?}"),
    };
    assert!(
        message.contains("postgres://u@127.0.0.1:1/test"),
        "{message}"
    );
    assert!(!message.contains("s3cret"), "{message}");
    assert!(!format!("{unreachable:?}").contains("s3cret"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_schema_is_migrated_to_the_latest_keeping_its_tasks_and_counts() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store = db.connect(&schema).await;
    let scope = Scope::new("s");
    store
        .create(
            new_task("old", None),
            work(&scope, "old").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");
    drop(store);
    // What version 1 was: the same tables without `pending_counts` (version 2), without
    // the batch function (version 3), without the listing index (version 4) and without the
    // batch function that checks the owner's lease (version 5) nor the table of quarantined
    // rows (version 6).
    let admin = db.admin().await;
    admin
        .batch_execute(&format!(
            "{undo} DROP TABLE \"{schema}\".pending_counts; \
             DROP TABLE \"{schema}\".quarantined_tasks; \
             DROP FUNCTION \"{schema}\".create_tasks(text[], text[], bigint[], text[], \
               bigint[], bigint[], json[], json[], bytea[], bigint[], bigint[], boolean[]); \
             DROP FUNCTION \"{schema}\".create_tasks(text[], text[], bigint[], text[], \
               bigint[], bigint[], json[], json[], bytea[], bigint[], bigint[]); \
             DROP INDEX \"{schema}\".tasks_scope_id; \
             UPDATE \"{schema}\".schema_version SET version = 1",
            undo = undo_version_8(&schema)
        ))
        .await
        .expect("turn the schema back into version 1");

    let store = db.connect(&schema).await;
    let version: i32 = admin
        .query_one(
            &format!("SELECT version FROM \"{schema}\".schema_version"),
            &[],
        )
        .await
        .expect("version")
        .get(0);
    assert_eq!(version, 8);
    assert_eq!(store.task_count().await.expect("count"), 1);
    let tight = tasks_runtime::store::CreateLimits {
        max_tasks: 2,
        max_active_per_scope: 2,
        lease_required: false,
    };
    store
        .create(
            new_task("new", None),
            work(&scope, "new").into(),
            tight,
            &NODE_A,
        )
        .await
        .expect("a create on the migrated schema");
    assert_eq!(
        store
            .create(
                new_task("more", None),
                work(&scope, "more").into(),
                tight,
                &NODE_A
            )
            .await
            .map(drop),
        Err(tasks_runtime::store::StoreError::Capacity(
            tasks_core::CapacityLimit::MaxTasks
        )),
        "the old task still counts"
    );
    let leased = tasks_runtime::store::CreateLimits {
        lease_required: true,
        ..tight
    };
    assert_eq!(
        store
            .create(
                new_task("unleased", None),
                work(&scope, "unleased").into(),
                leased,
                &NODE_A
            )
            .await
            .map(drop),
        Err(tasks_runtime::store::StoreError::LeaseLost),
        "version 5 checks the owner's lease, before the capacity"
    );
    let row = admin
        .query_one(
            &format!(
                "SELECT (SELECT total FROM \"{schema}\".counts), \
                        (SELECT active FROM \"{schema}\".scope_counts WHERE scope = 's'), \
                        (SELECT count(*) FROM \"{schema}\".pending_counts)"
            ),
            &[],
        )
        .await
        .expect("counters");
    assert_eq!(
        (
            row.get::<_, i64>(0),
            row.get::<_, i64>(1),
            row.get::<_, i64>(2)
        ),
        (2, 2, 0)
    );
}

/// A schema of version 6 (the last before task origins: version 7 only changes rows) is
/// migrated: a running task whose work does not declare the Tasks extension (what a 2025
/// session stored) reads as a 2025 task, otherwise the same task. What cannot be read for
/// certain stays the extension's and readable: a row holding U+0000 (which PostgreSQL's json
/// operators refuse) does not stop the migration, a declaration spelt with escapes is still
/// found, and a task already naming an `origin` is left as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_6_schema_marks_its_running_2025_tasks() {
    use tasks_core::TaskOrigin;
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let scope = Scope::new("alice");
    let store = db.connect(&schema).await;
    let mut session_work = work(&scope, "session");
    session_work.client_capabilities = tasks_store_contract::object(
        serde_json::json!({"tasks": {"requests": {"tools": {"call": {}}}}}),
    );
    for (name, work) in [
        ("session", session_work.clone()),
        ("nul", session_work.clone()),
        ("escaped-origin", session_work),
        ("modern", work(&scope, "modern")),
        ("escaped-declaration", work(&scope, "escaped-declaration")),
    ] {
        store
            .create(new_task(name, None), work.into(), ROOMY, &NODE_A)
            .await
            .expect("create");
    }
    drop(store);
    let admin = db.admin().await;
    admin
        .execute(
            &format!(
                "UPDATE \"{schema}\".tasks SET task = \
                 replace(task::text, '\"Task accepted\"', '\"Task\\u0000accepted\"')::json, \
                 work = replace(work::text, '\"n\":3', '\"n\":\"\\u0000\"')::json \
                 WHERE id = 'nul'"
            ),
            &[],
        )
        .await
        .expect("a status message holding U+0000");
    admin
        .batch_execute(&format!(
            r#"UPDATE "{schema}".tasks SET task = replace(task::text, '"revision":1',
                 '"revision":1,"\u006frigin":"2026-07-28"')::json WHERE id = 'escaped-origin';
               UPDATE "{schema}".tasks SET work = replace(work::text,
                 '"io.modelcontextprotocol/tasks":', '"io.modelcontextprotocol\/tasks" :')::json
                 WHERE id = 'escaped-declaration'"#
        ))
        .await
        .expect("an origin and a declaration spelt with escapes");
    admin
        .batch_execute(&format!(
            "{undo} UPDATE \"{schema}\".schema_version SET version = 6",
            undo = undo_version_8(&schema)
        ))
        .await
        .expect("turn the schema back into version 6");

    let store = db.connect(&schema).await;
    let read = |name: &'static str| {
        let store = &store;
        let scope = &scope;
        async move {
            store
                .get(scope, &id(name), T0)
                .await
                .expect("get")
                .unwrap_or_else(|| panic!("{name} survives"))
                .task
        }
    };
    let session = read("session").await;
    assert_eq!(session.origin(), TaskOrigin::Experimental2025);
    let expected = new_task("session", None)
        .with_origin(TaskOrigin::Experimental2025)
        .into_task();
    assert_eq!(*session, expected, "otherwise the same task");
    let nul = read("nul").await;
    assert_eq!(nul.origin(), TaskOrigin::Extension, "not read for certain");
    assert_eq!(nul.status_message(), Some("Task\u{0}accepted"));
    let escaped = read("escaped-origin").await;
    assert_eq!(
        escaped.status(),
        tasks_core::TaskStatus::Working,
        "still readable"
    );
    assert_eq!(
        escaped.origin(),
        TaskOrigin::Extension,
        "its own origin kept"
    );
    for name in ["modern", "escaped-declaration"] {
        assert_eq!(read(name).await.origin(), TaskOrigin::Extension, "{name}");
    }
    assert_eq!(store.quarantined(), 0, "no row made unreadable");
    let nul_work = store.work(&scope, &id("nul")).await.expect("work");
    assert_eq!(nul_work.expect("kept").arguments["n"], "\u{0}");
    let version: i32 = admin
        .query_one(
            &format!("SELECT version FROM \"{schema}\".schema_version"),
            &[],
        )
        .await
        .expect("version")
        .get(0);
    assert_eq!(version, 8);
}

/// Progress needs no schema change: the `task` column's JSON gains an optional `progress`
/// member. A row as the previous build wrote it (no such member) reads as a task without
/// progress and takes progress, which a later connection reads back; a row with a member its
/// reader does not know still reads (which is how a node of the previous build reads a row
/// with progress, beside nodes of this one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_of_the_previous_build_reads_and_keeps_the_progress_it_takes() {
    use tasks_runtime::store::{Authority, CasOutcome};
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let scope = Scope::new("alice");
    let store = db.connect(&schema).await;
    for name in ["old", "unknown-member"] {
        store
            .create(
                new_task(name, None),
                work(&scope, name).into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("create");
    }
    drop(store);
    let admin = db.admin().await;
    for (name, row) in ROWS_BEFORE_PROGRESS {
        admin
            .execute(
                &format!("UPDATE \"{schema}\".tasks SET task = $1::text::json WHERE id = $2"),
                &[&row, &name],
            )
            .await
            .expect("write the row as stored before");
    }
    let store = db.connect(&schema).await;
    for name in ["old", "unknown-member"] {
        let read = store
            .get(&scope, &id(name), at(10))
            .await
            .expect("get")
            .expect("found");
        assert_eq!(read.task.progress(), None, "{name}");
        assert_eq!(
            *read.task,
            tasks_core::Task::new(id(name), T0, None, None),
            "{name}"
        );
    }
    let read = store
        .get(&scope, &id("old"), at(10))
        .await
        .expect("get")
        .expect("found");
    let update = one_of_four(&read.task, at(20));
    let progress = update.task().progress();
    let committed = store
        .transition(Authority::Request(&scope), update, at(20))
        .await
        .expect("transition");
    assert!(
        matches!(committed, CasOutcome::Committed(_)),
        "{committed:?}"
    );
    drop(store);
    let store = db.connect(&schema).await;
    let read = store
        .get(&scope, &id("old"), at(30))
        .await
        .expect("get")
        .expect("found");
    assert_eq!(read.task.progress(), progress, "read by a later connection");
    let stored: String = admin
        .query_one(
            &format!("SELECT task::text FROM \"{schema}\".tasks WHERE id = 'old'"),
            &[],
        )
        .await
        .expect("the row")
        .get(0);
    assert!(
        stored.ends_with(ROW_WITH_PROGRESS_END),
        "one optional member more: {stored}"
    );
}

/// Version 6 adds `quarantined_tasks` and changes no other table: a version 5 schema with
/// tasks in it (a good one, a bad one) opens with this build, keeps its tasks and counts, and
/// quarantines the bad row into the new table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_5_schema_gains_the_quarantine_table_and_keeps_its_tasks() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store = db.connect(&schema).await;
    let scope = Scope::new("s");
    let mut kept = Vec::new();
    for name in ["kept", "bad"] {
        let created = store
            .create(
                new_task(name, None),
                work(&scope, name).into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("create");
        kept.push(created.snapshot.task);
    }
    drop(store);
    // What version 5 was: the same tables without `quarantined_tasks`.
    let admin = db.admin().await;
    admin
        .batch_execute(&format!(
            "{undo} DROP TABLE \"{schema}\".quarantined_tasks; \
             UPDATE \"{schema}\".schema_version SET version = 5; \
             UPDATE \"{schema}\".tasks SET task = '{{\"taskId\": \"bad\"}}' WHERE id = 'bad'",
            undo = undo_version_8(&schema)
        ))
        .await
        .expect("turn the schema back into version 5, with a bad row");

    let store = db.connect(&schema).await;
    let version: i32 = admin
        .query_one(
            &format!("SELECT version FROM \"{schema}\".schema_version"),
            &[],
        )
        .await
        .expect("version")
        .get(0);
    assert_eq!(version, 8);
    assert_eq!(store.task_count().await.expect("count"), 2);
    let read = store
        .get(&scope, &id("kept"), T0)
        .await
        .expect("get")
        .expect("found");
    assert_eq!(*read.task, *kept[0], "the good task is intact");
    let bad = store
        .get(&scope, &id("bad"), T0)
        .await
        .expect("get")
        .expect("found");
    assert_eq!(bad.task.status(), tasks_core::TaskStatus::Failed);
    assert_eq!(bad.task.revision(), 2);
    let row = admin
        .query_one(
            &format!("SELECT task, reason FROM \"{schema}\".quarantined_tasks WHERE id = 'bad'"),
            &[],
        )
        .await
        .expect("the bad row is kept in the new table");
    assert_eq!(row.get::<_, String>(0), r#"{"taskId": "bad"}"#);
    assert!(row.get::<_, String>(1).starts_with("task does not decode"));
    assert_eq!(store.quarantined(), 1);
}

/// The statements that turn a schema of version 8 back into version 7: without the inventory's
/// columns, indexes, trigger and `create_tasks` (the version is set by the caller).
fn undo_version_8(schema: &str) -> String {
    format!(
        "DROP TRIGGER tasks_updated_at_from_created ON \"{schema}\".tasks; \
         DROP FUNCTION \"{schema}\".tasks_updated_at_from_created(); \
         DROP FUNCTION \"{schema}\".create_tasks(text[], text[], bigint[], text[], bigint[], \
           bigint[], json[], json[], bytea[], bigint[], bigint[], boolean[], text[]); \
         DROP INDEX \"{schema}\".tasks_created; \
         ALTER TABLE \"{schema}\".tasks DROP COLUMN tool, DROP COLUMN updated_at_ms; \
         ALTER TABLE \"{schema}\".nodes DROP COLUMN started_at_ms, DROP COLUMN renewed_at_ms;"
    )
}

/// A schema of version 7 (the last before the inventory's columns) is migrated: the inventory
/// lists its tasks with their tool (from the work a running task keeps, also when the json
/// operators refuse the row for a U+0000; none for a terminal task, whose work was dropped)
/// and their `lastUpdatedAt` (from the task), and its old node rows show no start or renewal
/// time. A task created by a node of version 7 after the migration (through the version 5
/// function) starts at its creation time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_7_schema_lists_its_tasks_in_the_inventory() {
    use tasks_runtime::store::inventory::{InventoryQuery, StuckRules};
    use tasks_runtime::store::{Authority, CasOutcome};
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let scope = Scope::new("alice");
    let store = db.connect(&schema).await;
    store
        .register_node(&NODE_A, T0, 60_000)
        .await
        .expect("register");
    let mut made = Vec::new();
    for name in ["running", "done", "nul"] {
        let created = store
            .create(
                new_task(name, None),
                work(&scope, name).into(),
                ROOMY,
                &NODE_A,
            )
            .await
            .expect("create");
        made.push(created.snapshot);
    }
    let message = |text: &str| tasks_core::Event::StatusMessage {
        message: text.into(),
    };
    for (snapshot, event, now) in [
        (&made[0], message("halfway"), at(500)),
        (&made[2], message("nil"), at(700)),
    ] {
        let update = next(&snapshot.task, event, now);
        let outcome = store
            .transition(Authority::Request(&scope), update, now)
            .await
            .expect("transition");
        assert!(matches!(outcome, CasOutcome::Committed(_)), "{outcome:?}");
    }
    let update = complete_with(&made[1].task, "done", at(1_000));
    store
        .transition(Authority::Request(&scope), update, at(1_000))
        .await
        .expect("complete");
    drop(store);
    let admin = db.admin().await;
    admin
        .batch_execute(&format!(
            "{undo} UPDATE \"{schema}\".schema_version SET version = 7; \
             UPDATE \"{schema}\".tasks SET \
               task = replace(task::text, '\"nil\"', '\"n\\u0000l\"')::json, \
               work = replace(work::text, '\"n\":3', '\"n\":\"\\u0000\"')::json \
             WHERE id = 'nul'",
            undo = undo_version_8(&schema)
        ))
        .await
        .expect("turn the schema back into version 7, with a row holding U+0000");

    let store = db.connect(&schema).await;
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
            .clone()
    };
    let running = row("running");
    assert_eq!(running.tool.as_deref(), Some("running"), "from its work");
    assert_eq!(running.last_updated_at, at(500), "from its task");
    assert_eq!(running.status_message.as_deref(), Some("halfway"));
    assert_eq!(running.node, Some(NODE_A));
    let done = row("done");
    assert_eq!(
        done.tool, None,
        "terminal before version 8: its work was dropped"
    );
    assert_eq!(done.last_updated_at, at(1_000));
    let nul = row("nul");
    assert_eq!(nul.tool.as_deref(), Some("nul"), "read from the text");
    assert_eq!(nul.last_updated_at, at(700), "read from the text");
    assert_eq!(nul.status_message.as_deref(), Some("n\u{0}l"));
    let stored: Vec<(String, Option<String>, i64)> = admin
        .query(
            &format!("SELECT id, tool, updated_at_ms FROM \"{schema}\".tasks ORDER BY id"),
            &[],
        )
        .await
        .expect("rows")
        .iter()
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .collect();
    let ms = |t: tasks_core::Timestamp| i64::try_from(t.unix_millis()).unwrap();
    assert_eq!(
        stored,
        [
            ("done".to_owned(), None, ms(at(1_000))),
            ("nul".to_owned(), Some("nul".to_owned()), ms(at(700))),
            (
                "running".to_owned(),
                Some("running".to_owned()),
                ms(at(500))
            ),
        ]
    );
    let nodes = store.nodes(at(2_000)).await.expect("nodes").expect("nodes");
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].id, NODE_A);
    assert_eq!(nodes[0].started_at, None, "an old row: not recorded");
    assert_eq!(nodes[0].renewed_at, None);
    assert_eq!(nodes[0].held, 2);

    // A node of version 7 creating through the version 5 function: no tool, and its
    // `updated_at_ms` starts at its creation time.
    admin
        .batch_execute(&format!(
            "SELECT \"{schema}\".create_tasks(ARRAY['old-build'], ARRAY['alice'], ARRAY[1::bigint], \
               ARRAY['working'], ARRAY[{created}::bigint], ARRAY[NULL::bigint], \
               ARRAY[(SELECT replace(task::text, '\"running\"', '\"old-build\"') \
                      FROM \"{schema}\".tasks WHERE id = 'running')::json], \
               ARRAY[(SELECT work FROM \"{schema}\".tasks WHERE id = 'running')], \
               ARRAY['\\x0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a'::bytea], ARRAY[100::bigint], \
               ARRAY[100::bigint], ARRAY[false])",
            created = ms(at(1_500))
        ))
        .await
        .expect("a create of the previous build");
    let updated: i64 = admin
        .query_one(
            &format!("SELECT updated_at_ms FROM \"{schema}\".tasks WHERE id = 'old-build'"),
            &[],
        )
        .await
        .expect("the row")
        .get(0);
    assert_eq!(updated, ms(at(1_500)));
}
