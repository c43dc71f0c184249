//! Faults under load on three fixture nodes sharing one PostgreSQL database: a seeded
//! schedule of `kill -9` of two nodes in turn (each started again), `SIGSTOP` past the lease then `SIGCONT`, the change
//! feed's connection terminated, and one node's database stalled (a proxy that stops moving
//! bytes, as a server that accepts and never answers), while clients create, answer, cancel
//! and read tasks on every node. Afterwards:
//!
//! * every acknowledged creation is there, every acknowledged answer completed its task, every
//!   acknowledged cancellation left its task `cancelled`;
//! * no status read went backwards: once a task was read terminal, every later read of it (on
//!   any node) shows the same terminal status;
//! * nothing is left `working` without a live owner once the lease and a claim have passed:
//!   every `resumable_job` ends, and the `slow_compute` tasks of a killed node fail as
//!   interrupted (or were cancelled);
//! * no task ran more often than its recovery policy allows (3 runs of `resumable_job`),
//!   counted by the runs the nodes note in a shared `--run-log`.
//!
//! The schedule is printed with its seed; `FAULT_SEED=N` replays it. Without a database the
//! test says it skipped, except under `CI=true`, where it fails. It runs alone (nextest group
//! `processes`), in about a minute.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tasks_test_support::cluster::*;
use tasks_test_support::postgres::proxy::{through, upstream, StallProxy};
use tasks_test_support::{result_text, Client, Fixture};

/// The binary every node runs.
const FIXTURE: &str = env!("CARGO_BIN_EXE_tasks-fixture");

/// The lease of the nodes in this test, in milliseconds: short, so faults past it fit in the
/// test's time.
const LEASE: u64 = 4_000;
/// Every request of the load gives up after this long (a stopped or stalled node).
const REQUEST: Duration = Duration::from_secs(4);
/// How many runs `resumable_job` may have (`Recovery::rerun()`).
const MAX_RUNS: usize = 3;

/// What a client was told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `resumable_job`, re-run after a crash.
    Job,
    /// `confirm_delete`, answered by the client.
    Parked,
    /// `slow_compute` for ten minutes, cancelled by the client.
    Long,
}

/// Everything the clients were told, and every status they read.
#[derive(Debug, Default)]
struct Ledger {
    created: HashMap<String, Kind>,
    /// The URL of the node that acknowledged each creation.
    created_on: HashMap<String, String>,
    answered: Vec<String>,
    cancelled: Vec<String>,
    /// Per task, each status read, in order.
    reads: HashMap<String, Vec<String>>,
}

/// The faults, in the order a seed picks.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// `kill -9` of node A, then A started again.
    KillA,
    /// `SIGSTOP` of node B past its lease, then `SIGCONT`.
    PauseB,
    /// Node A's change-feed connection terminated.
    FeedA,
    /// Node C's database stalled past its lease, then moving again.
    StallC,
    /// `kill -9` of node C, then C started again.
    KillC,
}

/// A small deterministic generator (SplitMix64) for the schedule.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The nodes' current URLs (A's changes when it restarts).
type Urls = Arc<Mutex<[String; 3]>>;

/// One client loop: creates a task of each kind in turn on the nodes in turn, answers or
/// cancels it on another node, and reads an earlier task, until `stop`.
async fn load(index: usize, urls: Urls, ledger: Arc<Mutex<Ledger>>, stop: Arc<AtomicBool>) {
    let mut turn = index;
    while !stop.load(Ordering::SeqCst) {
        turn += 1;
        let (here, there) = {
            let urls = urls.lock().unwrap();
            (urls[turn % 3].clone(), urls[(turn + 1) % 3].clone())
        };
        let (here, there) = (
            Client::with_timeout(&here, REQUEST),
            Client::with_timeout(&there, REQUEST),
        );
        let kind = [Kind::Job, Kind::Parked, Kind::Long][(turn / 3) % 3];
        let (tool, arguments) = match kind {
            Kind::Job => ("resumable_job", json!({"steps": 3, "stepMs": 300})),
            Kind::Parked => ("confirm_delete", json!({"filename": "x"})),
            Kind::Long => ("slow_compute", json!({"seconds": 600})),
        };
        let reply = here
            .try_request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        let Some(id) = reply
            .as_ref()
            .and_then(|r| r["result"]["taskId"].as_str())
            .map(str::to_owned)
        else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        {
            let mut ledger = ledger.lock().unwrap();
            ledger.created.insert(id.clone(), kind);
            ledger.created_on.insert(id.clone(), here.url().to_owned());
        }
        // An answer counts only for a task read waiting for it: one that arrives before the
        // task parks answers nothing (keys not outstanding are ignored).
        if kind == Kind::Parked && !parks(&there, &id).await {
            continue;
        }
        let (method, params) = match kind {
            Kind::Parked => (
                "tasks/update",
                json!({"taskId": id, "inputResponses": confirm(true)}),
            ),
            Kind::Long => ("tasks/cancel", json!({"taskId": id})),
            Kind::Job => ("tasks/get", json!({"taskId": id})),
        };
        let acknowledged = there
            .try_request(method, params)
            .await
            .is_some_and(|body| body.get("result").is_some());
        if acknowledged {
            let mut ledger = ledger.lock().unwrap();
            match kind {
                Kind::Parked => ledger.answered.push(id.clone()),
                Kind::Long => ledger.cancelled.push(id.clone()),
                Kind::Job => {}
            }
        }
        read_some(&there, &ledger, turn).await;
    }
}

/// Whether task `id` is read parked on `confirm-delete` within 3 s.
async fn parks(client: &Client, id: &str) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while tokio::time::Instant::now() < deadline {
        let body = client.try_request("tasks/get", json!({"taskId": id})).await;
        if body
            .as_ref()
            .and_then(|b| b.get("result"))
            .is_some_and(|task| parked_on(task, "confirm-delete"))
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Reads one earlier task and records its status.
async fn read_some(client: &Client, ledger: &Mutex<Ledger>, turn: usize) {
    let id = {
        let ledger = ledger.lock().unwrap();
        let count = ledger.created.len();
        if count == 0 {
            return;
        }
        ledger.created.keys().nth(turn * 7919 % count).cloned()
    };
    let Some(id) = id else { return };
    let body = client.try_request("tasks/get", json!({"taskId": id})).await;
    if let Some(task) = body.as_ref().and_then(|b| b.get("result")) {
        let status = status(task).to_owned();
        ledger
            .lock()
            .unwrap()
            .reads
            .entry(id)
            .or_default()
            .push(status);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_under_load_lose_nothing_and_run_nothing_too_often() {
    let Some(cluster) = Cluster::new(FIXTURE).await else {
        return;
    };
    let seed = std::env::var("FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    let mut random = Seeded(seed);
    let mut faults = vec![
        Fault::KillA,
        Fault::PauseB,
        Fault::FeedA,
        Fault::StallC,
        Fault::KillC,
    ];
    for i in (1..faults.len()).rev() {
        faults.swap(i, random.below(i as u64 + 1) as usize);
    }
    println!("fault schedule (FAULT_SEED={seed}): {faults:?}");

    let runs = cluster.dir.path().join("runs.log");
    let lease = LEASE.to_string();
    let runs_arg = runs.display().to_string();
    let flags = ["--lease-ms", &lease, "--run-log", &runs_arg];
    let proxy = StallProxy::start(upstream(&cluster.db.url)).await;
    let mut a = cluster.node("ft-a", &flags);
    let b = cluster.node("ft-b", &flags);
    let c_db = through(&cluster.db.url, proxy.addr);
    let mut c = cluster.node_at(&c_db, "ft-c", &flags);
    let urls: Urls = Arc::new(Mutex::new([a.url.clone(), b.url.clone(), c.url.clone()]));

    let ledger: Arc<Mutex<Ledger>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..3)
        .map(|i| tokio::spawn(load(i, urls.clone(), ledger.clone(), stop.clone())))
        .collect();
    let mut killed = Vec::new();
    let settle = |random: &mut Seeded| Duration::from_millis(1_000 + random.below(1_000));
    let past_lease = Duration::from_millis(LEASE + 2_000);
    for fault in &faults {
        tokio::time::sleep(settle(&mut random)).await;
        match fault {
            Fault::KillA => {
                a.signal("KILL");
                assert!(a.wait_exit(Duration::from_secs(10)), "A died");
                killed.push(a.url.clone());
                tokio::time::sleep(Duration::from_millis(500)).await;
                a = cluster.node("ft-a", &flags);
                urls.lock().unwrap()[0] = a.url.clone();
            }
            Fault::PauseB => {
                b.signal("STOP");
                tokio::time::sleep(past_lease).await;
                b.signal("CONT");
            }
            Fault::FeedA => {
                assert!(
                    cluster.terminate("ft-a-listen").await >= 1,
                    "A's feed connection"
                );
            }
            Fault::StallC => {
                proxy.stall();
                tokio::time::sleep(past_lease).await;
                proxy.resume();
            }
            Fault::KillC => {
                c.signal("KILL");
                assert!(c.wait_exit(Duration::from_secs(10)), "C died");
                killed.push(c.url.clone());
                tokio::time::sleep(Duration::from_millis(500)).await;
                c = cluster.node_at(&c_db, "ft-c", &flags);
                urls.lock().unwrap()[2] = c.url.clone();
            }
        }
    }
    tokio::time::sleep(settle(&mut random)).await;
    stop.store(true, Ordering::SeqCst);
    for client in clients {
        client.await.expect("a load loop");
    }
    let ledger = std::mem::take(&mut *ledger.lock().unwrap());
    check(&ledger, &[&a, &b, &c], &runs, &killed).await;
}

/// The checks of the module docs, on the nodes' answers after the faults.
async fn check(ledger: &Ledger, nodes: &[&Fixture], runs: &std::path::Path, killed: &[String]) {
    let count = |kind| ledger.created.values().filter(|k| **k == kind).count();
    println!(
        "acknowledged: {} jobs, {} parked ({} answered), {} long ({} cancelled); {} reads",
        count(Kind::Job),
        count(Kind::Parked),
        ledger.answered.len(),
        count(Kind::Long),
        ledger.cancelled.len(),
        ledger.reads.values().map(Vec::len).sum::<usize>(),
    );
    assert!(
        count(Kind::Job) >= 5 && count(Kind::Parked) >= 5,
        "{ledger:?}"
    );
    let reader = Client::of_node(&nodes[1].url);
    let mut finals: HashMap<&str, Value> = HashMap::new();
    for (id, kind) in &ledger.created {
        let answered = ledger.answered.contains(id);
        let cancelled = ledger.cancelled.contains(id);
        // Work of a killed node is not left `working` without an owner: `slow_compute` is
        // not re-run, so it fails as interrupted once a live node takes it over.
        let orphaned = killed.contains(&ledger.created_on[id]);
        let task = reader
            .wait_until(id, TAKEOVER, "the task settles", |t| match kind {
                Kind::Job => is_terminal(t),
                Kind::Parked if answered => is_terminal(t),
                Kind::Parked => is_terminal(t) || parked_on(t, "confirm-delete"),
                Kind::Long if cancelled || orphaned => is_terminal(t),
                Kind::Long => true,
            })
            .await;
        match kind {
            Kind::Job => assert!(
                status(&task) == "completed"
                    && result_text(&task).starts_with("Finished 3 steps on attempt")
                    || status(&task) == "failed"
                        && task["error"]["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("already run 3 times")),
                "{id}: {task}"
            ),
            Kind::Parked if answered => {
                assert_eq!(result_text(&task), "Delete confirmed: true", "{id}: {task}")
            }
            Kind::Long if cancelled => assert_eq!(status(&task), "cancelled", "{id}: {task}"),
            Kind::Long if orphaned => assert!(
                status(&task) == "failed"
                    && task["error"]["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with("Task interrupted"))
                    || status(&task) == "cancelled",
                "{id} of a killed node: {task}"
            ),
            _ => {}
        }
        finals.insert(id, task);
    }
    // No read went backwards, and the final answers keep every terminal status read.
    for (id, reads) in &ledger.reads {
        let terminal = reads
            .iter()
            .position(|s| matches!(s.as_str(), "completed" | "failed" | "cancelled"));
        if let Some(first) = terminal {
            assert!(
                reads[first..].iter().all(|s| *s == reads[first]),
                "{id} went back after {}: {reads:?}",
                reads[first]
            );
            assert_eq!(status(&finals[id.as_str()]), reads[first], "{id}");
        }
    }
    // Runs, counted by every node that started one.
    let log = std::fs::read_to_string(runs).expect("the run log");
    let mut per_task: HashMap<&str, Vec<u32>> = HashMap::new();
    for line in log.lines() {
        let (key, attempt) = line.split_once(' ').expect("`<key> <attempt>`");
        per_task
            .entry(key)
            .or_default()
            .push(attempt.parse().expect("an attempt"));
    }
    for (id, kind) in &ledger.created {
        if *kind != Kind::Job {
            continue;
        }
        let started = per_task.get(id.as_str()).cloned().unwrap_or_default();
        assert!(
            !started.is_empty() && started.len() <= MAX_RUNS,
            "{id} ran {} times: attempts {started:?}",
            started.len()
        );
        let task = &finals[id.as_str()];
        if status(task) == "completed" {
            let attempt = task["result"]["structuredContent"]["attempt"]
                .as_u64()
                .expect("the attempt");
            assert!(
                started.contains(&(attempt as u32)),
                "{id} finished on attempt {attempt}, a run never started: {started:?}"
            );
        }
    }
}
