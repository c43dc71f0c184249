//! `kill -9` of a real server binary (the fixture, or `rmcp-app`) under load, on one SQLite
//! database, restarted on the same file each cycle: the harness of the `kill9` tests of
//! `tasks-fixture` and of `examples/rmcp-app`, which pass their binary, its flags, the number of
//! cycles and of clients ([`Kill9`]).
//!
//! Clients create tasks of four kinds, read them, answer parked ones and cancel long ones while
//! the process is killed with SIGKILL at a random moment (a seeded RNG; the seed is printed, and
//! `TASKS_KILL9_SEED` replays it). Every response a client *received* is an acknowledgement
//! that must survive; a request in flight at the kill may go either way. After each restart:
//!
//! * `PRAGMA integrity_check` of the file is `ok`;
//! * every acknowledged creation is found;
//! * every terminal state a client saw is unchanged (status, result, error);
//! * every acknowledged cancel left the task terminal; every acknowledged answer is kept
//!   (the task completes with it and is never asked again);
//! * interrupted work is resolved by its tool's policy: `slow_compute` fails "Task
//!   interrupted", `resumable_job` runs again to completion, a parked `confirm_delete` is
//!   still parked and answerable (about half of the parked tasks are answered after each
//!   restart, the others stay parked across the next one).
//!
//! `TASKS_KILL9_CYCLES` overrides the number of cycles.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{stream, StreamExt as _};
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::{json, Value};

use crate::client::Client;
use crate::process::Fixture;

/// One kill -9 test: which server, how often killed, under how much load.
#[derive(Debug)]
pub struct Kill9 {
    /// The server binary (`env!("CARGO_BIN_EXE_…")`).
    pub binary: &'static str,
    /// Its flags besides `--listen` and `--store sqlite:PATH`.
    pub args: &'static [&'static str],
    /// Kill cycles, unless `TASKS_KILL9_CYCLES` says otherwise.
    pub cycles: u64,
    /// Clients sending requests at once.
    pub clients: u64,
}

/// The error of a `slow_compute` task that a kill interrupted (its tool is not re-run).
const INTERRUPTED: &str = "Task interrupted: the server stopped while it ran; it was not retried";
/// How long a restarted task may take to settle.
const SETTLE: Duration = Duration::from_secs(20);

/// The kinds of task the clients create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `slow_compute` with 0 s: completes at once.
    Quick,
    /// `slow_compute` with 600 s: interrupted by every kill (fails by policy), or cancelled.
    Long,
    /// `resumable_job`, 3 steps of 150 ms: re-run after a kill.
    Resumable,
    /// `confirm_delete`: parks on `confirm-delete` until answered.
    Parked,
}

impl Kind {
    /// The tool and arguments that create a task of this kind.
    fn call(self) -> (&'static str, Value) {
        match self {
            Kind::Quick => ("slow_compute", json!({"seconds": 0, "label": "quick"})),
            Kind::Long => ("slow_compute", json!({"seconds": 600})),
            Kind::Resumable => ("resumable_job", json!({"steps": 3, "stepMs": 150})),
            Kind::Parked => ("confirm_delete", json!({"filename": "report.txt"})),
        }
    }
}

/// What clients were told about one task.
#[derive(Debug, Clone)]
struct Acked {
    kind: Kind,
    /// The first terminal state a client saw: it must never change.
    terminal: Option<Value>,
    answered: bool,
    cancelled: bool,
    /// A `confirm_delete` read still parked, unanswered, after a restart.
    parked_across_restart: bool,
    /// A witness the harness made right before a kill ([`witnesses`]): the load neither
    /// answers nor cancels it, so it is still running or parked when the server dies.
    held: bool,
}

/// Every acknowledged task, by id.
type Ledger = Arc<Mutex<HashMap<String, Acked>>>;

/// What must never change once a client saw it: the status, result and error of a terminal
/// task (`None` while it is not terminal).
fn terminal_view(task: &Value) -> Option<Value> {
    let status = task["status"].as_str()?;
    matches!(status, "completed" | "failed" | "cancelled")
        .then(|| json!({"status": status, "result": task["result"], "error": task["error"]}))
}

/// The result of a JSON-RPC success, or `None` (no answer: the server died under the client;
/// or an error).
async fn result(client: &Client, method: &str, params: Value) -> Option<Value> {
    client
        .try_request(method, params)
        .await?
        .get("result")
        .cloned()
}

/// Creates a task of `kind`; its id, or `None` when no task was acknowledged.
async fn create(client: &Client, kind: Kind) -> Option<String> {
    let (tool, arguments) = kind.call();
    let result = result(
        client,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await?;
    (result["resultType"] == "task").then(|| result["taskId"].as_str().map(str::to_owned))?
}

/// The task `id` as read now, or `None` (no answer, or an error).
async fn get(client: &Client, id: &str) -> Option<Value> {
    result(client, "tasks/get", json!({"taskId": id})).await
}

/// Answers `confirm-delete` of `id` with a confirmation; whether the answer was acknowledged.
async fn answer(client: &Client, id: &str) -> bool {
    let responses = json!({"confirm-delete": {"action": "accept", "content": {"confirm": true}}});
    result(
        client,
        "tasks/update",
        json!({"taskId": id, "inputResponses": responses}),
    )
    .await
    .is_some()
}

/// Cancels `id`; whether the cancellation was acknowledged.
async fn cancel(client: &Client, id: &str) -> bool {
    result(client, "tasks/cancel", json!({"taskId": id}))
        .await
        .is_some()
}

/// Starts the server of `run` on the SQLite database `db`.
fn start(run: &Kill9, db: &Path, log: &Path) -> Fixture {
    let args: Vec<String> = run
        .args
        .iter()
        .map(|arg| (*arg).to_owned())
        .chain(["--store".to_owned(), format!("sqlite:{}", db.display())])
        .collect();
    Fixture::start(run.binary, &args, log)
}

/// Asserts that SQLite finds the database file `db` intact.
fn integrity_check(db: &Path) {
    let connection = rusqlite::Connection::open(db).expect("the database opens");
    let verdict: String = connection
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .expect("integrity_check runs");
    assert_eq!(verdict, "ok", "PRAGMA integrity_check after the kill");
}

/// One client's load until `stop`: creations of every kind, reads, answers to parked tasks and
/// cancellations of long ones, each recorded in `ledger` once its answer came.
async fn load(client: Client, ledger: Ledger, stop: Arc<AtomicBool>, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let pick = |rng: &mut StdRng, want: &dyn Fn(&Acked) -> bool| {
        let ledger = ledger.lock().unwrap();
        let ids: Vec<&String> = ledger
            .iter()
            .filter(|(_, a)| want(a))
            .map(|(id, _)| id)
            .collect();
        (!ids.is_empty()).then(|| ids[rng.random_range(0..ids.len())].clone())
    };
    while !stop.load(Ordering::SeqCst) {
        match rng.random_range(0..10) {
            0..=3 => {
                let kind = [Kind::Quick, Kind::Long, Kind::Resumable, Kind::Parked]
                    [rng.random_range(0..4)];
                if let Some(id) = create(&client, kind).await {
                    ledger.lock().unwrap().insert(
                        id,
                        Acked {
                            kind,
                            terminal: None,
                            answered: false,
                            cancelled: false,
                            parked_across_restart: false,
                            held: false,
                        },
                    );
                }
            }
            4..=5 => {
                let Some(id) = pick(&mut rng, &|_| true) else {
                    continue;
                };
                if let Some(view) = get(&client, &id).await.as_ref().and_then(terminal_view) {
                    if let Some(acked) = ledger.lock().unwrap().get_mut(&id) {
                        acked.terminal.get_or_insert(view);
                    }
                }
            }
            6..=7 => {
                let Some(id) = pick(&mut rng, &|a| {
                    a.kind == Kind::Parked && !a.answered && !a.held
                }) else {
                    continue;
                };
                // Answer only once it is parked: an answer to a key not yet asked is ignored.
                let parked = get(&client, &id).await.is_some_and(|task| {
                    task["status"] == "input_required"
                        && task["inputRequests"].get("confirm-delete").is_some()
                });
                if parked && answer(&client, &id).await {
                    if let Some(acked) = ledger.lock().unwrap().get_mut(&id) {
                        acked.answered = true;
                    }
                }
            }
            _ => {
                let Some(id) = pick(&mut rng, &|a| {
                    a.kind == Kind::Long && !a.cancelled && !a.held
                }) else {
                    continue;
                };
                if cancel(&client, &id).await {
                    if let Some(acked) = ledger.lock().unwrap().get_mut(&id) {
                        acked.cancelled = true;
                    }
                }
            }
        }
    }
}

/// One task of each recovery policy, made right before a kill so that the kill finds it
/// unfinished whatever the random load did: a `confirm_delete` read parked (answered after the
/// restart), a long `slow_compute` (failed as interrupted) and a `resumable_job` made last (its
/// 450 ms of steps still running: re-run). Held: the load leaves them alone.
async fn witnesses(client: &Client) -> Vec<(String, Acked)> {
    let mut made = Vec::new();
    for kind in [Kind::Parked, Kind::Long, Kind::Resumable] {
        // A busy server may refuse a creation for a moment (every worker busy): try again.
        let mut id = None;
        for _ in 0..20 {
            id = create(client, kind).await;
            if id.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let Some(id) = id else {
            eprintln!("no {kind:?} witness could be created before this kill");
            continue;
        };
        if kind == Kind::Parked {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
            while tokio::time::Instant::now() < deadline
                && !get(client, &id)
                    .await
                    .is_some_and(|task| task["status"] == "input_required")
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let acked = Acked {
            kind,
            terminal: None,
            answered: false,
            cancelled: false,
            parked_across_restart: false,
            held: true,
        };
        made.push((id, acked));
    }
    made
}

/// Checks one task after a restart and waits until it has settled; answers a parked task
/// when `answer_parked`. Returns the settled state as the client now knows it.
async fn settle(client: &Client, id: &str, acked: &Acked, answer_parked: bool) -> Acked {
    let mut acked = acked.clone();
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        let task = get(client, id)
            .await
            .unwrap_or_else(|| panic!("acknowledged task {id} ({acked:?}) is lost"));
        let view = terminal_view(&task);
        if let Some(seen) = &acked.terminal {
            assert_eq!(view.as_ref(), Some(seen), "terminal task {id} changed");
            return acked;
        }
        if acked.cancelled {
            assert!(
                view.is_some(),
                "cancelled task {id} is not terminal: {task}"
            );
        }
        match (acked.kind, &view) {
            (_, Some(view)) => {
                let text = view["result"]["content"][0]["text"].as_str().unwrap_or("");
                let error = view["error"]["message"].as_str().unwrap_or("");
                match (acked.kind, view["status"].as_str().unwrap_or("")) {
                    // A kill between the creation and the completion interrupts it.
                    (Kind::Quick, "completed") => assert_eq!(text, "Completed quick"),
                    (Kind::Quick | Kind::Long, "failed") => assert_eq!(error, INTERRUPTED, "{id}"),
                    (Kind::Long, "cancelled") => {}
                    (Kind::Resumable, status) => {
                        assert_eq!(status, "completed", "{id}: {view}");
                        assert!(text.starts_with("Finished 3 steps on attempt "), "{text}");
                    }
                    (Kind::Parked, status) => {
                        assert_eq!(
                            (status, text),
                            ("completed", "Delete confirmed: true"),
                            "{id}"
                        )
                    }
                    (kind, status) => panic!("{id}: {kind:?} ended {status}: {view}"),
                }
                acked.terminal = Some(view.clone());
                return acked;
            }
            (Kind::Parked, None) if !acked.answered && task["status"] == "input_required" => {
                assert!(
                    task["inputRequests"].get("confirm-delete").is_some(),
                    "{id} is parked on confirm-delete: {task}"
                );
                acked.parked_across_restart = true;
                if !answer_parked && !acked.held {
                    return acked;
                }
                if answer(client, id).await {
                    acked.answered = true;
                }
            }
            (Kind::Parked, None) => assert_ne!(
                task["status"], "input_required",
                "{id} was answered but asks again: {task}"
            ),
            _ => {}
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {id} ({acked:?}) did not settle: {task}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `TASKS_KILL9_SEED`, or a random seed.
fn seed() -> u64 {
    std::env::var("TASKS_KILL9_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random())
}

/// Runs `run`: its cycles of load, `kill -9`, restart and checks, then the final checks.
///
/// # Panics
/// On any acknowledged change lost or altered, a task its recovery policy did not settle in
/// time, a damaged database file, or a kind of task never created.
pub async fn run(run: Kill9) {
    let seed = seed();
    let cycles: u64 = std::env::var("TASKS_KILL9_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(run.cycles);
    eprintln!(
        "kill -9 test of {}: seed {seed} (replay with TASKS_KILL9_SEED={seed}), {cycles} cycles, {} clients",
        run.binary, run.clients
    );
    let dir = tempfile::tempdir().expect("a temp dir");
    let db: PathBuf = dir.path().join("tasks.db");
    let log = dir.path().join("server.log");
    let ledger: Ledger = Arc::default();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut server = start(&run, &db, &log);
    for cycle in 0..cycles {
        let client = Client::of_node(&server.url);
        let stop = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = (0..run.clients)
            .map(|i| {
                tokio::spawn(load(
                    client.clone(),
                    ledger.clone(),
                    stop.clone(),
                    seed ^ (cycle << 16) ^ i,
                ))
            })
            .collect();
        let kill_after = Duration::from_millis(rng.random_range(300..1500));
        tokio::time::sleep(kill_after).await;
        let held = witnesses(&client).await;
        ledger.lock().unwrap().extend(held);
        server.child.kill().expect("SIGKILL");
        server.child.wait().expect("reaped");
        stop.store(true, Ordering::SeqCst);
        for worker in workers {
            worker.await.expect("a load client panicked");
        }
        integrity_check(&db);

        server = start(&run, &db, &log);
        let client = Client::of_node(&server.url);
        let entries: Vec<(String, Acked)> = ledger
            .lock()
            .unwrap()
            .iter()
            .map(|(id, acked)| (id.clone(), acked.clone()))
            .collect();
        let total = entries.len();
        let settled: Vec<(String, Acked)> = stream::iter(entries)
            .map(|(id, acked)| {
                let client = client.clone();
                // Leave about half of the parked tasks parked across the next restart (by the
                // last character of the id: every id has the same length).
                let answer_parked = id.bytes().last().is_some_and(|byte| byte % 2 == 0);
                async move {
                    let settled = settle(&client, &id, &acked, answer_parked).await;
                    (id, settled)
                }
            })
            .buffer_unordered(16)
            .collect()
            .await;
        ledger.lock().unwrap().extend(settled);
        eprintln!(
            "cycle {cycle}: killed after {} ms; {total} acknowledged tasks verified",
            kill_after.as_millis()
        );
    }
    server.child.kill().expect("SIGKILL");
    server.child.wait().expect("reaped");
    integrity_check(&db);
    let ledger = ledger.lock().unwrap();
    assert!(ledger.len() > cycles as usize, "the load created tasks");
    let count = |kind| ledger.values().filter(|a| a.kind == kind).count();
    for kind in [Kind::Quick, Kind::Long, Kind::Resumable, Kind::Parked] {
        assert!(count(kind) > 0, "no {kind:?} task was created");
    }
    // Each recovery policy was put to work, not only each kind created.
    let ended = |kind: Kind, outcome: &dyn Fn(&Acked, &Value) -> bool| {
        ledger.values().any(|acked| {
            acked.kind == kind && acked.terminal.as_ref().is_some_and(|v| outcome(acked, v))
        })
    };
    assert!(
        ended(Kind::Long, &|_, view| view["error"]["message"]
            == INTERRUPTED),
        "no slow_compute was interrupted by a kill"
    );
    assert!(
        ended(Kind::Resumable, &|_, view| {
            let text = view["result"]["content"][0]["text"].as_str().unwrap_or("");
            !text.ends_with(" on attempt 1")
        }),
        "no resumable_job ran again after a kill"
    );
    assert!(
        ended(Kind::Parked, &|acked, _| acked.parked_across_restart),
        "no confirm_delete stayed parked across a restart and completed once answered"
    );
}
