//! A node whose database connections stall (the server accepts but never answers), through a
//! TCP proxy on 127.0.0.1 that the test pauses: its lease renewals run out of their deadline,
//! it reports the store unwritable, and it stops its workers while the stall lasts; once the
//! proxy forwards again, the same store (its pool and its abandoned calls) serves again.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use tasks_runtime::StoreError;
use tasks_runtime::{
    LeaseConfig, Limits, RuntimeConfig, Scope, Store, TaskRuntime, Tool, ToolError, ToolRegistry,
};
use tasks_store_postgres::PostgresStore;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// The longest any wait of this test may take before it fails instead of hanging.
const WAIT_LIMIT: Duration = Duration::from_secs(20);

/// Polls `cond` every 10 ms until it holds; fails the test after [`WAIT_LIMIT`], with
/// `state()` in the message.
async fn until(what: &str, cond: impl Fn() -> bool, state: impl Fn() -> String) {
    let wait = async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(WAIT_LIMIT, wait)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting until {what} ({})", state()));
}

/// Counts a stop when the tool's future ends or is dropped (a stopped worker drops it).
struct Stop(Arc<AtomicUsize>);

impl Drop for Stop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Copies `from` to `to`, holding each chunk while `paused` says so.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut paused: watch::Receiver<bool>,
) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let Ok(read) = from.read(&mut buffer).await else {
            return;
        };
        if read == 0 || paused.wait_for(|paused| !paused).await.is_err() {
            return;
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}

/// A TCP proxy on 127.0.0.1 to `upstream` that forwards nothing while paused (connections
/// stay open: a server that accepts and never answers). Returns its port.
async fn proxy(upstream: String, paused: watch::Receiver<bool>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(&upstream).await else {
                continue;
            };
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            tokio::spawn(pump(client_read, server_write, paused.clone()));
            tokio::spawn(pump(server_read, client_write, paused.clone()));
        }
    });
    port
}

/// The test database's `host:port`.
fn upstream(url: &str) -> String {
    let config: tokio_postgres::Config = url.parse().expect("a valid DATABASE_URL");
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        _ => "127.0.0.1".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}")
}

/// The libpq connection string of the test database, through 127.0.0.1:`port`.
fn through(url: &str, port: u16) -> String {
    let config: tokio_postgres::Config = url.parse().expect("a valid DATABASE_URL");
    let mut proxied = format!("host=127.0.0.1 port={port}");
    if let Some(user) = config.get_user() {
        proxied.push_str(&format!(" user={user}"));
    }
    if let Some(dbname) = config.get_dbname() {
        proxied.push_str(&format!(" dbname={dbname}"));
    }
    if let Some(password) = config.get_password() {
        proxied.push_str(&format!(" password={}", String::from_utf8_lossy(password)));
    }
    proxied
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_database_stalls_reports_it_and_fences_itself() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let (pause, paused) = watch::channel(false);
    let port = proxy(upstream(&db.url), paused).await;
    let store = PostgresStore::connect(
        &through(&db.url, port),
        Database::options(&schema).with_pool_size(4),
    )
    .await
    .expect("connect through the proxy");

    let started = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let mut tools = ToolRegistry::new();
    let (on_start, on_stop) = (started.clone(), stopped.clone());
    tools.register(Tool::new("wait", "Runs until cancelled", move |ctx| {
        let (on_start, on_stop) = (on_start.clone(), on_stop.clone());
        async move {
            on_start.fetch_add(1, Ordering::SeqCst);
            let _stop = Stop(on_stop);
            ctx.cancellation().cancelled().await;
            Err::<serde_json::Value, _>(ToolError::Cancelled)
        }
    }));
    let config = RuntimeConfig::default()
        .with_leases(
            LeaseConfig::default()
                .with_lease(Duration::from_secs(6))
                .with_tick(Duration::from_secs(2)),
        )
        .with_limits(Limits::default().with_store_deadline(Duration::from_secs(3)));
    let store: Arc<dyn Store> = Arc::new(store);
    let node = TaskRuntime::new(store, tools, config);
    node.recover().await.expect("recover");
    let liveness = node.spawn_liveness();
    let task = node
        .create_task(work(&Scope::shared(), "wait"))
        .await
        .expect("create");
    let state = || {
        format!(
            "store writable: {}, node: {}, runs started: {}, stopped: {}",
            node.store_writable(),
            node.node(),
            started.load(Ordering::SeqCst),
            stopped.load(Ordering::SeqCst)
        )
    };
    until(
        "the task runs",
        || started.load(Ordering::SeqCst) == 1,
        state,
    )
    .await;
    let first = node.node();

    pause.send_replace(true);
    until(
        "the node reports the store unwritable",
        || !node.store_writable(),
        state,
    )
    .await;
    until(
        "the worker is stopped while the database stalls",
        || stopped.load(Ordering::SeqCst) == 1,
        state,
    )
    .await;
    assert_ne!(node.node(), first, "the node took a new id");

    pause.send_replace(false);
    until(
        "the store is writable again",
        || node.store_writable(),
        state,
    )
    .await;
    let read = tokio::time::timeout(WAIT_LIMIT, node.get(&Scope::shared(), task.id()))
        .await
        .expect("the read ends");
    assert!(read.is_ok(), "the store serves again: {read:?}");
    liveness.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_finds_no_free_connection_is_refused_as_unavailable() {
    let Some(db) = Database::open().await else {
        return;
    };
    let schema = db.schema();
    let (pause, paused) = watch::channel(false);
    let port = proxy(upstream(&db.url), paused).await;
    let store = PostgresStore::connect(
        &through(&db.url, port),
        Database::options(&schema).with_pool_size(1),
    )
    .await
    .expect("connect through the proxy");
    let alice = Scope::new("alice");
    store
        .create(new_task("t1", None), work(&alice, "t1"), ROOMY, &NODE_A)
        .await
        .expect("create");

    // The only connection stalls under a read; the next call finds none free.
    pause.send_replace(true);
    let stalled = {
        let (store, alice) = (store.clone(), alice.clone());
        tokio::spawn(async move { store.get(&alice, &id("t1"), T0).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = tokio::time::timeout(WAIT_LIMIT, store.get(&alice, &id("t1"), T0))
        .await
        .expect("the call waits for a connection for a bounded time");
    assert!(
        matches!(refused, Err(StoreError::Unavailable(_))),
        "no connection free: {refused:?}"
    );

    pause.send_replace(false);
    let read = tokio::time::timeout(WAIT_LIMIT, stalled)
        .await
        .expect("the stalled read ends once the database answers")
        .expect("the read task");
    assert!(read.expect("the stalled read succeeds").is_some());
}
