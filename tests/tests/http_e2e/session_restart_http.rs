//! Tasks outlive the session that created them (the failure reported in PrefectHQ/fastmcp#3758,
//! where tasks still stored were lost because their lookup was tied to the MCP session): on
//! SQLite and PostgreSQL, a task created in a 2025-11-25 session is found after a restart from
//! a new session of the same caller, and from a 2026-07-28 client of the same caller (also one
//! declaring only the 2025 tasks capability: the task's origin is stored); another caller
//! still cannot see it. A task belongs to its caller's scope, never to a session.

use serde_json::{json, Value};
use tasks_core::TaskStatus;
use tasks_fixture::store::StoreSpec;
use tasks_fixture::Settings;
use tasks_http::RunningServer;
use tasks_test_support::client::Client;
use tasks_test_support::dispatcher::bearer_principal;
use tasks_test_support::events::wait_status;
use tasks_test_support::fixture::settings;
use tasks_test_support::postgres as pg;
use tasks_test_support::protocol::tasks_caps;

const V2025: &str = "2025-11-25";

/// The fixture on `settings`' durable store, a scope per bearer token.
async fn serve(settings: &Settings) -> RunningServer {
    tasks_fixture::open_server(settings)
        .await
        .expect("the store opens")
        .principal_fn(bearer_principal)
        .bind(settings.listen)
        .await
        .expect("the fixture binds a loopback port")
}

/// A 2025-11-25 session of caller `who`.
struct Session {
    http: reqwest::Client,
    url: String,
    who: String,
    id: String,
}

impl Session {
    async fn open(server: &RunningServer, who: &str) -> Session {
        let http = reqwest::Client::new();
        let init = http
            .post(server.url())
            .bearer_auth(who)
            .header("accept", "application/json, text/event-stream")
            .json(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": V2025, "capabilities": {},
                "clientInfo": {"name": "restart", "version": "1"}}}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(init.status(), 200);
        let id = init.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let session = Session {
            http,
            url: server.url(),
            who: who.to_owned(),
            id,
        };
        let initialized = session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(initialized, Value::Null);
        session
    }

    /// POSTs `body` in the session; the JSON answer (`Null` for 202).
    async fn post(&self, body: Value) -> Value {
        let response = self
            .http
            .post(&self.url)
            .bearer_auth(&self.who)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", V2025)
            .json(&body)
            .send()
            .await
            .unwrap();
        if response.status() == 202 {
            return Value::Null;
        }
        let text = response.text().await.unwrap();
        // A JSON body, or one SSE event carrying it.
        let json = text
            .lines()
            .find_map(|line| line.strip_prefix("data: "))
            .unwrap_or(&text);
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    async fn call(&self, method: &str, params: Value) -> Value {
        self.post(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .await
    }
}

/// Creates a short task in a session of alice, waits until it completes, restarts the server on
/// the same store, and reads it from a new session of alice, from a 2026 client of alice, and
/// as bob.
async fn a_task_outlives_its_session_and_the_process(settings: Settings) {
    let server = serve(&settings).await;
    let mut events = server.dispatcher().runtime().subscribe();
    let first = Session::open(&server, "alice").await;
    let created = first
        .call(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0.1, "label": "kept"},
                   "task": {}}),
        )
        .await;
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    wait_status(&mut events, &task_id, TaskStatus::Completed).await;
    let before = first
        .call("tasks/result", json!({ "taskId": task_id }))
        .await;
    assert!(before["result"]["content"].is_array(), "{before}");
    server.shutdown().await;

    let server = serve(&settings).await;
    let second = Session::open(&server, "alice").await;
    assert_ne!(second.id, first.id, "a new session");
    let got = second.call("tasks/get", json!({ "taskId": task_id })).await;
    assert_eq!(got["result"]["taskId"], task_id, "{got}");
    assert_eq!(got["result"]["status"], "completed", "{got}");
    let after = second
        .call("tasks/result", json!({ "taskId": task_id }))
        .await;
    assert_eq!(after["result"], before["result"], "the same result");

    let modern = Client::new(server.url());
    let got = Client::send(
        modern
            .post(
                json!(2),
                "tasks/get",
                json!({ "taskId": task_id }),
                tasks_caps(),
            )
            .bearer_auth("alice"),
    )
    .await
    .result();
    assert_eq!(got["status"], "completed", "{got}");
    // A 2026 client declaring only the 2025 tasks capability reaches it too (SEP-2663's
    // version table): the store kept the task's origin across the restart. Not as bob.
    let legacy_only = json!({"tasks": {"requests": {"tools": {"call": {}}}}});
    for (who, expected) in [("alice", Some("completed")), ("bob", None)] {
        let reply = Client::send(
            modern
                .post(
                    json!(3),
                    "tasks/get",
                    json!({ "taskId": task_id }),
                    legacy_only.clone(),
                )
                .bearer_auth(who),
        )
        .await;
        match expected {
            Some(status) => assert_eq!(reply.result()["status"], status),
            None => {
                reply.error(400, -32021, "Missing required client capability");
            }
        }
    }

    let bob = Session::open(&server, "bob").await;
    let hidden = bob.call("tasks/get", json!({ "taskId": task_id })).await;
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_task_is_found_from_a_new_session_after_a_restart_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        store: StoreSpec::Sqlite(dir.path().join("tasks.db")),
        ..settings()
    };
    a_task_outlives_its_session_and_the_process(settings).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_task_is_found_from_a_new_session_after_a_restart_on_postgres() {
    let Some(db) = pg::Database::open().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        store: StoreSpec::Postgres(pg::url()),
        postgres_schema: db.schema(),
        // Nodes and restarts of one deployment share the secret the scopes derive from.
        secret_file: Some(dir.path().join("secret")),
        ..settings()
    };
    a_task_outlives_its_session_and_the_process(settings).await;
}
