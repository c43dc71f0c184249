//! Several real fixture processes on loopback sharing one PostgreSQL database (a fresh schema
//! per test), as nodes behind a load balancer would: each request goes to whichever node the
//! test picks, and nodes never talk to each other, only through the database.
//!
//! Covered: `tasks/get`, `tasks/update`, `tasks/cancel` and `subscriptions/listen` across
//! nodes; an MRTR retry verified by another node (the shared secret file) and refused by a node
//! without it; `kill -9` of a node under load with every acknowledged task accounted for; a
//! node paused (SIGSTOP) past its lease that fences itself when resumed (SIGCONT); SIGTERM
//! handing tasks over at once; a terminated listener connection and pool connections
//! (`pg_terminate_backend`) repaired by reconnecting.
//!
//! The database is `DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/test`); without
//! one these tests print that they were skipped, except under `CI=true`, where they fail.
//! Leases are 6 s and deadlines generous: PostgreSQL, the nodes and the test share two cores.
//! The tests run one at a time (nextest group `processes`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tasks_test_support::cluster::*;
use tasks_test_support::result_text;

/// The binary every node runs.
const FIXTURE: &str = env!("CARGO_BIN_EXE_tasks-fixture");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_share_tasks_answers_cancellations_and_notifications() {
    let Some(cluster) = Cluster::new(FIXTURE).await else {
        return;
    };
    let a = cluster.node("mn-a", &["--max-workers", "1"]);
    let b = cluster.node("mn-b", &[]);
    let (ca, cb) = (a.client(), b.client());

    // A task created on A is read on B and answered on B; A's parked worker resumes.
    answered_across(&ca, &cb).await;

    // A's one worker slot is busy with a long task; a cancel on B stops it on A (A can create
    // again), and the task stays cancelled.
    let long = ca.create("slow_compute", json!({"seconds": 600})).await;
    let refused = ca
        .try_request(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0}}),
        )
        .await
        .expect("an answer");
    assert_eq!(
        refused["error"]["data"]["limit"], "max_jobs",
        "A's only slot is taken: {refused}"
    );
    cb.cancel_task(&long).await;
    let cancelled = ca
        .wait_until(&long, PROMPT, "cancelled, read on A", is_terminal)
        .await;
    assert_eq!(status(&cancelled), "cancelled");
    let deadline = tokio::time::Instant::now() + PROMPT;
    let freed = loop {
        let reply = ca
            .try_request(
                "tools/call",
                json!({"name": "slow_compute", "arguments": {"seconds": 0}}),
            )
            .await
            .expect("an answer");
        if reply["result"]["resultType"] == "task" {
            break reply["result"]["taskId"].as_str().unwrap().to_owned();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "A's worker never stopped: {reply}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    ca.wait_until(&freed, PROMPT, "the new task completes", is_terminal)
        .await;
    assert_eq!(
        cb.get_task(&long).await,
        cancelled,
        "still cancelled, unchanged"
    );

    // A listen stream on B follows a task running on A: states in order, no repeats, the
    // terminal state last.
    let job = ca
        .create("resumable_job", json!({"steps": 6, "stepMs": 400}))
        .await;
    let mut sse = cb.listen(&[&job]).await;
    let mut seen: Vec<Value> = Vec::new();
    while let Some(message) = sse.try_next(PROMPT).await {
        assert_eq!(message["method"], "notifications/tasks", "{message}");
        let task = message["params"].clone();
        assert_eq!(task["taskId"], job.as_str());
        let end = is_terminal(&task);
        seen.push(task);
        if end {
            break;
        }
    }
    let last = seen.last().expect("notifications arrived");
    assert_eq!(status(last), "completed", "terminal delivered: {seen:?}");
    assert_eq!(result_text(last), "Finished 6 steps on attempt 1");
    let steps: Vec<u64> = seen[..seen.len() - 1]
        .iter()
        .filter_map(|t| {
            message(t)
                .strip_prefix("Step ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    assert!(
        steps.len() >= 2,
        "B relayed A's progress as it happened: {seen:?}"
    );
    assert!(
        steps.windows(2).all(|w| w[0] < w[1]),
        "in order, without repeats: {steps:?}"
    );
    let stamps: Vec<&str> = seen
        .iter()
        .map(|t| t["lastUpdatedAt"].as_str().unwrap_or_default())
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mrtr_retry_verifies_on_a_node_sharing_the_secret_only() {
    let Some(cluster) = Cluster::new(FIXTURE).await else {
        return;
    };
    let a = cluster.node("mn-a", &[]);
    let b = cluster.node("mn-b", &[]);
    let stranger = cluster.node("mn-c", &["--no-shared-secret"]);
    mrtr_retry_across(&a.client(), &b.client(), &stranger.client()).await;
}

/// Which kind of task a client created, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Resumable,
    Parked,
    Long,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_node_s_tasks_are_taken_over_and_every_acknowledged_task_is_accounted_for() {
    let Some(cluster) = Cluster::new(FIXTURE).await else {
        return;
    };
    let mut a = cluster.node("mn-a", &[]);
    let b = cluster.node("mn-b", &[]);
    let c = cluster.node("mn-c", &[]);
    let ledger: Arc<Mutex<HashMap<String, (Kind, char)>>> = Arc::default();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut load = Vec::new();
    for (index, (node, name)) in [(a.client(), 'a'), (b.client(), 'b'), (a.client(), 'a')]
        .into_iter()
        .enumerate()
    {
        let (ledger, stop) = (ledger.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            let kinds = [Kind::Resumable, Kind::Parked, Kind::Long];
            let mut turn = index;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let kind = kinds[turn % kinds.len()];
                turn += 1;
                let (tool, arguments) = match kind {
                    Kind::Resumable => ("resumable_job", json!({"steps": 4, "stepMs": 500})),
                    Kind::Parked => ("confirm_delete", json!({"filename": "x"})),
                    Kind::Long => ("slow_compute", json!({"seconds": 600})),
                };
                let reply = node
                    .try_request("tools/call", json!({"name": tool, "arguments": arguments}))
                    .await;
                // Only an answer the client received acknowledges a task.
                if let Some(id) = reply.as_ref().and_then(|r| r["result"]["taskId"].as_str()) {
                    ledger.lock().unwrap().insert(id.to_owned(), (kind, name));
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    a.signal("KILL");
    assert!(a.wait_exit(Duration::from_secs(10)), "A died");
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for task in load {
        task.await.unwrap();
    }
    let ledger = ledger.lock().unwrap().clone();
    let on_a = ledger.values().filter(|(_, node)| *node == 'a').count();
    assert!(on_a >= 3, "A acknowledged tasks before it died: {ledger:?}");

    let cc = c.client();
    for (id, (kind, node)) in &ledger {
        let task = cc
            .wait_until(id, TAKEOVER, "the task settles", |t| match (kind, node) {
                (Kind::Resumable, _) => is_terminal(t),
                (Kind::Parked, _) => parked_on(t, "confirm-delete"),
                (Kind::Long, 'a') => is_terminal(t),
                (Kind::Long, _) => status(t) == "working",
            })
            .await;
        match (kind, node) {
            (Kind::Resumable, _) => {
                assert_eq!(status(&task), "completed", "{id} on {node}: {task}");
                assert!(
                    result_text(&task).starts_with("Finished 4 steps on attempt"),
                    "{task}"
                );
            }
            (Kind::Long, 'a') => {
                assert_eq!(status(&task), "failed", "{task}");
                assert_eq!(
                    task["error"]["message"],
                    "Task interrupted: the server stopped while it ran; it was not retried"
                );
            }
            _ => {}
        }
    }
    // Parked tasks of the dead node are answerable on the others, and complete.
    let parked_on_a: Vec<&String> = ledger
        .iter()
        .filter(|(_, (kind, node))| *kind == Kind::Parked && *node == 'a')
        .map(|(id, _)| id)
        .collect();
    assert!(!parked_on_a.is_empty(), "{ledger:?}");
    let cb = b.client();
    for id in &parked_on_a {
        cb.update_task(id, confirm(true)).await;
    }
    for id in parked_on_a {
        let done = cc.wait_until(id, PROMPT, "answered", is_terminal).await;
        assert_eq!(result_text(&done), "Delete confirmed: true", "{done}");
    }
}

/// The attempt in a `resumable_job` status message, e.g. 2 in "Step 3 of 16 (attempt 2)".
fn attempt(task: &Value) -> Option<u64> {
    message(task)
        .rsplit_once("(attempt ")?
        .1
        .strip_suffix(')')?
        .parse()
        .ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_paused_past_its_lease_fences_itself_when_it_resumes() {
    let Some(cluster) = Cluster::new(FIXTURE).await else {
        return;
    };
    let a = cluster.node("mn-a", &[]);
    let b = cluster.node("mn-b", &[]);
    let (ca, cb) = (a.client(), b.client());
    let job = ca
        .create("resumable_job", json!({"steps": 24, "stepMs": 500}))
        .await;
    cb.wait_until(&job, PROMPT, "A's run is under way", |t| {
        attempt(t) == Some(1) && message(t).starts_with("Step 2")
    })
    .await;

    a.signal("STOP");
    cb.wait_until(&job, TAKEOVER, "B re-runs it", |t| attempt(t) == Some(2))
        .await;
    a.signal("CONT");
    // From now on only B's run may write: A's run (still in its sleep) is fenced.
    let deadline = tokio::time::Instant::now() + TAKEOVER;
    let done = loop {
        let task = cb.get_task(&job).await;
        if let Some(seen) = attempt(&task) {
            assert_eq!(seen, 2, "the paused node wrote after its takeover: {task}");
        }
        if is_terminal(&task) {
            break task;
        }
        assert!(tokio::time::Instant::now() < deadline, "{task}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(result_text(&done), "Finished 24 steps on attempt 2");
    assert_eq!(done["result"]["structuredContent"]["attempt"], 2);
    // A lives on under a new node id and serves the task as stored.
    let from_a = ca.wait_until(&job, PROMPT, "A serves", is_terminal).await;
    assert_eq!(from_a, done);
    assert!(
        a.log_text().contains("node lease lost"),
        "A noticed it lost its lease: {}",
        a.log_text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_hands_a_node_s_tasks_over_at_once() {
    let Some(cluster) = Cluster::new(FIXTURE).await else {
        return;
    };
    // A lease of a minute: a takeover well before it shows the stopping node retired.
    let mut a = cluster.node("mn-a", &["--lease-ms", "60000"]);
    let b = cluster.node("mn-b", &["--lease-ms", "60000"]);
    let cb = b.client();
    let job = a
        .client()
        .create("resumable_job", json!({"steps": 10, "stepMs": 500}))
        .await;
    cb.wait_until(&job, PROMPT, "A's run is under way", |t| {
        attempt(t) == Some(1)
    })
    .await;
    let stopping = tokio::time::Instant::now();
    a.signal("TERM");
    assert!(a.wait_exit(Duration::from_secs(20)), "A stops on SIGTERM");
    let rerun = cb
        .wait_until(&job, Duration::from_secs(40), "B takes over", |t| {
            attempt(t) == Some(2)
        })
        .await;
    assert!(
        stopping.elapsed() < Duration::from_secs(50),
        "taken over before A's 60 s lease could have run out: {rerun}"
    );
    let done = cb.wait_until(&job, PROMPT, "completed", is_terminal).await;
    assert_eq!(result_text(&done), "Finished 10 steps on attempt 2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminated_database_sessions_are_replaced() {
    let Some(cluster) = Cluster::new(FIXTURE).await else {
        return;
    };
    let a = cluster.node("mn-a", &[]);
    let b = cluster.node("mn-b", &[]);
    let (ca, cb) = (a.client(), b.client());
    // B's listener is connected once B serves.
    let listening = async {
        while cluster.sessions("mn-b-listen").await == 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(PROMPT, listening)
        .await
        .expect("B's listener connects");
    assert_eq!(cluster.terminate("mn-b-listen").await, 1, "B's listener");
    assert!(cluster.terminate("mn-b").await >= 1, "B's pool");

    // B reconnects both: it serves again, and relays A's progress as it happens.
    let job = ca
        .create("resumable_job", json!({"steps": 8, "stepMs": 400}))
        .await;
    let deadline = tokio::time::Instant::now() + PROMPT;
    while cb
        .try_request("tasks/get", json!({"taskId": job}))
        .await
        .and_then(|body| body.get("result").cloned())
        .is_none()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "B's pool never reconnected"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut sse = cb.listen(&[&job]).await;
    let mut steps = Vec::new();
    while let Some(message) = sse.try_next(PROMPT).await {
        let task = &message["params"];
        if is_terminal(task) {
            assert_eq!(status(task), "completed", "{task}");
            break;
        }
        steps.push(self::message(task).to_owned());
    }
    assert!(
        steps.len() >= 2,
        "B's listener reconnected and relays intermediate states: {steps:?}"
    );
    assert!(cluster.sessions("mn-b-listen").await >= 1);
}
