//! Principals never reach the store: the builder hashes what `scope_fn` returns with the
//! scope key, so a durable store holds only keyed hashes.

mod common;

use std::sync::Arc;

use common::*;
use serde_json::json;
use tasks_core::TaskId;
use tasks_runtime::{MemoryStore, Scope, ScopeKey, Store};

fn bearer_dispatcher(store: Arc<MemoryStore>, secret: &[u8]) -> tasks_http::Dispatcher {
    let runs = Arc::new(Runs::default());
    builder(&runs)
        .store(store)
        .secret(secret)
        .scope_fn(bearer_principal)
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
