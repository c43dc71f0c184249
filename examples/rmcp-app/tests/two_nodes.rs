//! Two `rmcp-app` processes on one PostgreSQL database (a fresh schema per test run, one
//! shared `--secret-file`), as nodes behind a load balancer: a task created on node A is read,
//! answered and cancelled on node B, and each node sees what the other did; an MRTR
//! `requestState` issued by A is verified by B (the shared secret) and refused by a third node
//! with a secret of its own. The nodes never talk to each other, only through the database.
//! (The requests carry no principal, so every node puts them in the shared scope: B finds A's
//! tasks with or without the shared secret; the secret matters for `requestState`.)
//!
//! The cluster and the client are the shared multi-process test support
//! (`tasks_test_support::cluster`), run with this binary. The database is `DATABASE_URL`
//! (default `postgres://postgres@127.0.0.1:5432/test`); without one the test prints that it was
//! skipped, except under `CI=true`, where it fails. It runs alone (nextest group `processes`).

use serde_json::json;
use tasks_test_support::cluster::*;

/// The binary every node runs.
const RMCP_APP: &str = env!("CARGO_BIN_EXE_rmcp-app");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_on_one_node_is_answered_and_cancelled_on_the_other() {
    let Some(cluster) = Cluster::new(RMCP_APP).await else {
        return;
    };
    let a = cluster.node("rmcp-a", &[]);
    let b = cluster.node("rmcp-b", &[]);
    let (ca, cb) = (a.client(), b.client());

    // Parked on A, read and answered on B: it completes, and A reads what B reads.
    let (parked, done) = answered_across(&ca, &cb).await;
    assert_eq!(
        ca.get_task(&parked).await,
        done,
        "A and B read the same task"
    );

    // A long task on A, read on B while it runs, cancelled on B: cancelled as A sees it, and
    // the same on both nodes afterwards.
    let long = ca.create("slow_compute", json!({"seconds": 600})).await;
    let running = cb.get_task(&long).await;
    assert_eq!(status(&running), "working", "{running}");
    assert_eq!(running["taskId"], long.as_str());
    let ack = cb.cancel_task(&long).await;
    assert_eq!(ack["resultType"], "complete", "{ack}");
    let cancelled = ca
        .wait_until(&long, PROMPT, "cancelled, read on A", is_terminal)
        .await;
    assert_eq!(status(&cancelled), "cancelled", "{cancelled}");
    assert_eq!(cb.get_task(&long).await, cancelled, "B reads what A reads");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mrtr_retry_verifies_on_a_node_sharing_the_secret_only() {
    let Some(cluster) = Cluster::new(RMCP_APP).await else {
        return;
    };
    let a = cluster.node("rmcp-a", &[]);
    let b = cluster.node("rmcp-b", &[]);
    let stranger = cluster.node("rmcp-c", &["--no-shared-secret"]);
    mrtr_retry_across(&a.client(), &b.client(), &stranger.client()).await;
}
