//! Connections that die under a call: a read whose connection the server terminates
//! (`pg_terminate_backend`, as a failover or an administrator does) runs once more on a fresh
//! connection instead of failing; a store with no connection to be had answers
//! `StoreError::Unavailable` (nothing was done).

use crate::common;

use std::time::Duration;

use common::*;
use tasks_runtime::store::{Store, StoreError};
use tasks_runtime::Scope;
use tasks_store_postgres::{PostgresOptions, PostgresStore};

/// How long any step may take before the test fails instead of hanging.
const DEADLINE: Duration = Duration::from_secs(10);

/// `url` with `application_name` set to `name`, so the test finds its own connections.
fn with_application_name(url: &str, name: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}application_name={name}")
}

/// The server process of the connection named `name` that waits on a lock.
async fn waiting_on_a_lock(admin: &tokio_postgres::Client, name: &str) -> i32 {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let row = admin
            .query_opt(
                "SELECT pid FROM pg_stat_activity \
                 WHERE application_name = $1 AND wait_event_type = 'Lock'",
                &[&name],
            )
            .await
            .expect("pg_stat_activity");
        if let Some(row) = row {
            return row.get(0);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no connection of {name} waits on the lock"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_read_whose_connection_is_terminated_runs_again_on_a_fresh_one() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let name = format!("{schema}_reader");
    let store = PostgresStore::connect(
        &with_application_name(&db.url, &name),
        PostgresOptions::default()
            .with_schema(&schema)
            .with_pool_size(2),
    )
    .await
    .expect("connect");
    let alice = Scope::new("alice");
    store
        .create(
            new_task("t1", None),
            work(&alice, "t1").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");

    // The read waits on a lock the test holds; its connection is terminated meanwhile.
    let mut admin = db.admin().await;
    let lock = admin.transaction().await.expect("begin");
    lock.batch_execute(&format!(
        "LOCK TABLE \"{schema}\".tasks IN ACCESS EXCLUSIVE MODE"
    ))
    .await
    .expect("lock the tasks table");
    let read = {
        let store = store.clone();
        let alice = alice.clone();
        tokio::spawn(async move { store.get(&alice, &id("t1"), T0).await })
    };
    let reader = db.admin().await;
    let pid = waiting_on_a_lock(&reader, &name).await;
    let terminated: bool = reader
        .query_one("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .expect("terminate")
        .get(0);
    assert!(terminated);
    lock.rollback().await.expect("release the lock");

    let read = tokio::time::timeout(DEADLINE, read)
        .await
        .expect("the read ends")
        .expect("the read task");
    let snapshot = read
        .expect("the read ran again on a fresh connection")
        .expect("the task is there");
    assert_eq!(snapshot.task.id(), &id("t1"));
}

#[tokio::test]
async fn a_store_with_no_connection_to_be_had_is_unavailable() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    // A role of this test only, so that refusing its logins touches nothing else.
    let role = format!("{schema}_role");
    let admin = db.admin().await;
    admin
        .batch_execute(&format!("CREATE ROLE {role} LOGIN SUPERUSER"))
        .await
        .expect("create a role");
    let url = db.url.replacen("postgres@", &format!("{role}@"), 1);
    assert_ne!(url, db.url, "the test database URL names the postgres user");
    let store = PostgresStore::connect(
        &url,
        PostgresOptions::default()
            .with_schema(&schema)
            .with_pool_size(1),
    )
    .await
    .expect("connect");
    let alice = Scope::new("alice");
    store
        .create(
            new_task("t1", None),
            work(&alice, "t1").into(),
            ROOMY,
            &NODE_A,
        )
        .await
        .expect("create");

    // The role may no longer log in, and its connections are terminated.
    admin
        .batch_execute(&format!(
            "ALTER ROLE {role} NOLOGIN; \
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'"
        ))
        .await
        .expect("refuse the role's logins");
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        // Terminated again each time: a connection that was logging in while the role lost
        // its login (a pool or feed reconnect) can appear after the first termination.
        let left: i64 = admin
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE usename = $1",
                &[&role],
            )
            .await
            .expect("pg_stat_activity")
            .get(0);
        if left == 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{left} connections left"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let read = tokio::time::timeout(DEADLINE, store.get(&alice, &id("t1"), T0))
        .await
        .expect("the read ends");
    assert!(
        matches!(read, Err(StoreError::Unavailable(_))),
        "no connection to be had: {read:?}"
    );
    let write = tokio::time::timeout(
        DEADLINE,
        store.create(
            new_task("t2", None),
            work(&alice, "t2").into(),
            ROOMY,
            &NODE_A,
        ),
    )
    .await
    .expect("the write ends");
    assert!(
        matches!(write, Err(StoreError::Unavailable(_))),
        "nothing was sent: {write:?}"
    );

    drop(store);
    admin
        .batch_execute(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'; \
             DROP OWNED BY {role}; DROP ROLE {role}"
        ))
        .await
        .expect("drop the role");
}
