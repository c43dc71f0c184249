//! Principals never reach the store in clear: the builder hashes what `principal_fn` returns
//! with the scope key, so a durable store holds only keyed hashes as scopes, and a task's work
//! holds its caller only sealed; the tools see the caller as `ToolContext::principal`.

use std::sync::Arc;

use serde_json::json;
use tasks_core::TaskId;
use tasks_runtime::store::{MemoryStore, Store};
use tasks_runtime::{Scope, ScopeKey};
use tasks_test_support::dispatcher::*;
use tasks_test_support::events::wait_status;
use tasks_test_support::request::*;
use tasks_test_support::tools::*;

fn bearer_dispatcher(store: Arc<MemoryStore>, secret: &[u8]) -> tasks_http::Dispatcher {
    let runs = Arc::new(Runs::default());
    builder(&runs)
        .store(store)
        .secret(secret)
        .principal_fn(bearer_principal)
        .build()
}

#[tokio::test]
async fn the_store_sees_a_keyed_hash_of_the_principal_never_the_token() {
    let store = Arc::new(MemoryStore::new());
    let d = bearer_dispatcher(store.clone(), b"server secret");
    let id = create(
        &d,
        Req::call("required_job", json!({}))
            .tasks()
            .bearer("token-1"),
    )
    .await;
    let id = TaskId::parse(&id).unwrap();
    let now = d.runtime().now();

    let raw = store.get(&Scope::new("token-1"), &id, now).await.unwrap();
    assert!(raw.is_none(), "the raw token is not the stored scope");
    let hashed = ScopeKey::from_secret(b"server secret").scope_of(&Scope::new("token-1"));
    let stored = store.get(&hashed, &id, now).await.unwrap().expect("found");
    assert_eq!(stored.scope, hashed);
    assert!(!stored.scope.as_str().contains("token"));

    // The same secret after a restart finds the task again; the same principal with another
    // secret does not.
    let again = bearer_dispatcher(store.clone(), b"server secret");
    let reply = Req::get(id.as_str())
        .tasks()
        .bearer("token-1")
        .send(&again)
        .await;
    assert_eq!(reply.result()["taskId"], id.as_str());
    let other = bearer_dispatcher(store, b"another secret");
    Req::get(id.as_str())
        .tasks()
        .bearer("token-1")
        .send(&other)
        .await
        .error(400, -32602, "Unknown or inaccessible taskId");
}

/// A tool that answers with its caller (`nobody` without one) once `gate` lets it.
fn whoami(gate: Arc<tokio::sync::Semaphore>) -> tasks_runtime::Tool {
    tasks_runtime::Tool::new("whoami", "Names its caller", move |ctx| {
        let gate = gate.clone();
        async move {
            let caller = ctx.principal().map_or("nobody", |p| p.as_str()).to_owned();
            gate.acquire().await.expect("the gate stays open").forget();
            Ok(tasks_runtime::text_result(caller))
        }
    })
    .with_policy(tasks_core::TaskPolicy::Optional)
}

/// The principal `principal_fn` names reaches the tool as `ToolContext::principal`, on a
/// synchronous call and in a task, whose stored work holds it only sealed; a server without
/// a principal function shows none.
#[tokio::test]
async fn a_tool_sees_its_callers_principal_in_a_call_and_in_a_task_stored_sealed() {
    let store = Arc::new(MemoryStore::new());
    let runs = Arc::new(Runs::default());
    let gate = Arc::new(tokio::sync::Semaphore::new(1));
    let d = builder(&runs)
        .tool(whoami(gate.clone()))
        .store(store.clone())
        .secret(b"server secret")
        .principal_fn(bearer_principal)
        .build();
    let reply = Req::call("whoami", json!({}))
        .bearer("token-1")
        .send(&d)
        .await
        .result();
    assert_eq!(reply["content"][0]["text"], "token-1", "{reply}");

    // The call took the gate's one permit: the task's run waits at it while its stored work
    // is read (a terminal task's work is cleared).
    let mut events = d.runtime().subscribe();
    let id = create(&d, Req::call("whoami", json!({})).tasks().bearer("token-2")).await;
    let scope = ScopeKey::from_secret(b"server secret").scope_of(&Scope::new("token-2"));
    let work = store
        .work(&scope, &TaskId::parse(&id).unwrap())
        .await
        .unwrap()
        .expect("the work is kept while the task runs");
    let stored = serde_json::to_string(&*work).unwrap();
    assert!(stored.contains("\"sealedPrincipal\":\""), "{stored}");
    assert!(!stored.contains("token-2"), "{stored}");
    gate.add_permits(2);
    wait_status(&mut events, &id, tasks_core::TaskStatus::Completed).await;
    let task = Req::get(&id)
        .tasks()
        .bearer("token-2")
        .send(&d)
        .await
        .result();
    assert_eq!(task["result"]["content"][0]["text"], "token-2", "{task}");

    let open = builder(&runs).tool(whoami(gate)).build();
    let reply = Req::call("whoami", json!({})).send(&open).await.result();
    assert_eq!(reply["content"][0]["text"], "nobody", "{reply}");
}
