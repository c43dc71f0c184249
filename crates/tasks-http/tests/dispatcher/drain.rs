//! A graceful shutdown lets running tasks finish (up to the drain timeout) before it ends the
//! node's lease; without a drain timeout they are left to recovery.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tasks_core::{TaskPolicy, TaskStatus};
use tasks_http::ServerBuilder;
use tasks_runtime::store::{MemoryStore, Store};
use tasks_runtime::{text_result, Scope, Tool, Work};

fn work() -> Work {
    Work {
        tool: "short".into(),
        arguments: Default::default(),
        input_responses: None,
        client_capabilities: Default::default(),
        scope: Scope::shared(),
        trace_parent: None,
        sealed_principal: None,
    }
}

async fn status_after_shutdown(drain: Duration) -> TaskStatus {
    let store = Arc::new(MemoryStore::new());
    let tool = Tool::new("short", "Takes 300 ms", |_ctx| async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        Ok(text_result("done"))
    })
    .with_input_schema(json!({"type": "object"}))
    .with_policy(TaskPolicy::Optional);
    let server = ServerBuilder::new("drain", "1")
        .tool(tool)
        .store(store.clone())
        .drain_timeout(drain)
        .bind("127.0.0.1:0")
        .await
        .expect("binds");
    let runtime = server.dispatcher().runtime().clone();
    let task = runtime.create(work()).await.expect("created");
    server.shutdown().await;
    let now = runtime.now();
    let stored = store
        .get(&Scope::shared(), task.id(), now)
        .await
        .expect("get")
        .expect("stored");
    stored.task.status()
}

#[tokio::test(start_paused = true)]
async fn a_graceful_shutdown_waits_for_running_tasks_up_to_the_drain_timeout() {
    assert_eq!(
        status_after_shutdown(Duration::from_secs(5)).await,
        TaskStatus::Completed,
        "the running task finished before the server stopped"
    );
}

#[tokio::test(start_paused = true)]
async fn without_a_drain_timeout_running_tasks_are_left_to_recovery() {
    assert_eq!(
        status_after_shutdown(Duration::ZERO).await,
        TaskStatus::Working
    );
}

#[tokio::test(start_paused = true)]
async fn the_drain_gives_up_at_its_timeout() {
    assert_eq!(
        status_after_shutdown(Duration::from_millis(100)).await,
        TaskStatus::Working,
        "a task longer than the drain timeout is interrupted"
    );
}
