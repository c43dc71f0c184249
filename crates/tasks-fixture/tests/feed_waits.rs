//! A wait never depends on one notification, on PostgreSQL (docs/durability.md, promise 9):
//! node B serves a 2025-11-25 `tasks/result` for a task that node A runs; B's change-feed
//! connection is terminated (`pg_terminate_backend`, each new one again, in a loop) while A
//! completes the task, so the hint of the completion never reaches B. The feed reconnects and
//! sends `Resync`; the waiting request re-reads its task and answers. B's guard re-read is ten
//! minutes away, so only the resync can end the wait within the test's bound.
//!
//! Nodes run in process (a `TaskRuntime` for A, an HTTP server for B), each with its own
//! `PostgresStore` on one fresh schema. The database is `DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`); without one the test prints that it was
//! skipped, except under `CI=true`, where it fails. Nextest group `postgres`.

use tasks_test_support::postgres as pg;
use tasks_test_support::Sse;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tasks_core::TaskStatus;
use tasks_http::ServerBuilder;
use tasks_runtime::store::Store;
use tasks_runtime::{text_result, RuntimeConfig, Scope, TaskRuntime, Tool, ToolRegistry, Work};
use tokio::sync::Notify;

const V2025: &str = "2025-11-25";

/// How long any expected step may take (two loaded cores, PostgreSQL included).
const PROMPT: Duration = Duration::from_secs(20);

/// `gated`: completes with "released" once `gate` is notified.
fn gated(gate: &Arc<Notify>) -> ToolRegistry {
    let gate = gate.clone();
    let mut tools = ToolRegistry::new();
    tools.register(Tool::new("gated", "Waits for the test", move |_ctx| {
        let gate = gate.clone();
        async move {
            gate.notified().await;
            Ok(text_result("released"))
        }
    }));
    tools
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_result_on_another_node_ends_after_its_feed_connection_is_terminated() {
    let Some(db) = pg::Database::open().await else {
        return;
    };
    let schema = db.schema();
    let store_a = Arc::new(db.connect(&schema).await);
    // B's connections carry a name of their own, so that only B's listener is terminated
    // (other tests share the server).
    let b_name = format!("b-{schema}");
    let separator = if db.url.contains('?') { '&' } else { '?' };
    let b_url = format!("{}{separator}application_name={b_name}", db.url);
    let store_b = Arc::new(
        tasks_store_postgres::PostgresStore::connect(&b_url, pg::Database::options(&schema))
            .await
            .expect("B connects"),
    );
    let admin = db.admin().await;

    let gate = Arc::new(Notify::new());
    let a = TaskRuntime::new(
        store_a.clone() as Arc<dyn Store>,
        gated(&gate),
        RuntimeConfig::default(),
    );
    a.recover().await.expect("A registers");
    let _a_liveness = a.spawn_liveness();
    let b = ServerBuilder::new("node-b", "1")
        .store(store_b.clone())
        .wait_recheck(Duration::from_secs(600))
        .bind("127.0.0.1:0")
        .await
        .expect("B serves");

    let task = a
        .create(Work {
            tool: "gated".into(),
            arguments: Default::default(),
            input_responses: None,
            client_capabilities: Default::default(),
            scope: Scope::shared(),
            trace_parent: None,
            sealed_principal: None,
        })
        .await
        .expect("A creates the task");

    // B hears of the creation while nothing on B follows the task, so B neither publishes it
    // nor counts it among the tasks its own resync re-reads: as for a task created on another
    // node before anyone asked B about it.
    tokio::time::sleep(Duration::from_millis(500)).await;

    // A 2025-11-25 session on B waits for the task's result.
    let http = reqwest::Client::new();
    let post = |session: Option<&str>, body: Value| {
        let mut request = http
            .post(b.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", V2025);
        }
        request.send()
    };
    let init = post(
        None,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": V2025, "capabilities": {},
            "clientInfo": {"name": "feed-waits", "version": "1"}}}),
    )
    .await
    .expect("initialize");
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .expect("a session id")
        .to_owned();
    let initialized = post(
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await
    .expect("initialized");
    assert_eq!(initialized.status(), 202);
    let waiting = post(
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tasks/result",
               "params": {"taskId": task.id().as_str()}}),
    )
    .await
    .expect("tasks/result");
    assert_eq!(waiting.headers()["content-type"], "text/event-stream");
    let mut answer = Sse::of(waiting);

    // B's feed connection is terminated again and again (each new one within milliseconds)
    // while A completes the task, so the completion's hint reaches no listener of B.
    let pid = store_b.listener_pid().expect("B listens");
    let killing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let killer = {
        let killing = killing.clone();
        let listener = format!("{b_name}-listen");
        tokio::spawn(async move {
            let mut killed = 0_i64;
            while killing.load(std::sync::atomic::Ordering::SeqCst) {
                let row = admin
                    .query_one(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                         WHERE application_name = $1",
                        &[&listener],
                    )
                    .await
                    .expect("pg_terminate_backend");
                killed += row.get::<_, i64>(0);
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            killed
        })
    };
    let deadline = tokio::time::Instant::now() + PROMPT;
    while store_b.listener_pid() == Some(pid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "B's listener {pid} still there"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    gate.notify_one();
    while a
        .get(&Scope::shared(), task.id())
        .await
        .expect("the task")
        .status()
        != TaskStatus::Completed
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "A never completed the task"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // A's notifier sends its hint within milliseconds: let it go to no one.
    tokio::time::sleep(Duration::from_millis(300)).await;
    killing.store(false, std::sync::atomic::Ordering::SeqCst);
    let killed = killer.await.expect("the killer");
    assert!(killed >= 1, "B's listener was terminated");

    // Keep-alive comments flow meanwhile: the bound is on the answer itself.
    let done = answer
        .next_within(PROMPT)
        .await
        .expect("the wait ends once B's feed is back (its resync re-reads the task)");
    assert_eq!(done["id"], 7, "{done}");
    assert_eq!(
        done["result"]["content"],
        json!([{"type": "text", "text": "released"}]),
        "{done}"
    );
    let stored = a.get(&Scope::shared(), task.id()).await.expect("the task");
    assert_eq!(stored.status(), TaskStatus::Completed);
    assert_ne!(
        store_b.listener_pid(),
        Some(pid),
        "B listens on a new connection"
    );

    // The reconnect is counted (the first connect is over before B follows the feed).
    let metrics = b.dispatcher().encode_metrics().await;
    let resyncs: u64 = metrics
        .lines()
        .find_map(|line| line.strip_prefix("mcp_change_feed_resyncs_total{reason=\"feed\"} "))
        .unwrap_or_else(|| panic!("no feed resyncs in:\n{metrics}"))
        .parse()
        .expect("a count");
    assert!(resyncs >= 1, "{resyncs} feed resyncs");
    b.shutdown().await;
}
