//! On-demand soak test of the fixture server (docs/soak.md; not run by `cargo test` or CI).
//!
//! Starts the release fixture (or targets `--url`) with a short TTL and reaper interval, runs
//! `--clients` concurrent clients for `--duration-secs`, each looping over task scenarios
//! (create, poll, update, cancel; see [`Scenario`]), counts every response by operation and
//! outcome, records every created task id with the terminal status its client observed, then
//! waits for the reaper and checks that the tasks are gone and that resident memory came back
//! down. Exits non-zero when any check fails. See `docs/soak.md`.
//!
//! ```sh
//! cargo build --release -p tasks-fixture -p tasks-tests --bin tasks-fixture --bin soak
//! target/release/soak                      # 200 clients, 10 minutes
//! target/release/soak --duration-secs 30   # a quick run
//! ```

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};
use tasks_test_support::protocol::tasks_caps;
use tasks_test_support::Client;

/// Soak test: concurrent clients creating, polling, updating and cancelling tasks.
#[derive(Debug, Parser)]
#[command(name = "soak")]
struct Args {
    /// Concurrent clients.
    #[arg(long, default_value_t = 200)]
    clients: usize,
    /// How long the clients run, in seconds.
    #[arg(long, default_value_t = 600)]
    duration_secs: u64,
    /// Fixture binary to start (default: `tasks-fixture` next to this binary, i.e. in the same
    /// cargo target directory and profile).
    #[arg(long)]
    fixture: Option<PathBuf>,
    /// Target a running server at this MCP URL instead of starting the fixture.
    #[arg(long)]
    url: Option<String>,
    /// With --url: the server's pid, for the memory figures.
    #[arg(long)]
    pid: Option<u32>,
    /// The fixture's --ttl-ms.
    #[arg(long, default_value_t = 10_000)]
    ttl_ms: u64,
    /// The fixture's --reap-interval-ms.
    #[arg(long, default_value_t = 2_000)]
    reap_interval_ms: u64,
    /// The fixture's --max-workers (each client runs at most one task at a time).
    #[arg(long, default_value_t = 512)]
    max_workers: usize,
    /// How many created ids to read back after reaping (each must be unknown by then).
    #[arg(long, default_value_t = 5_000)]
    reap_sample: usize,
    /// Accepted growth of resident memory from start to end, in MiB.
    #[arg(long, default_value_t = 64)]
    rss_tolerance_mib: u64,
    /// After the end figure, ask the server's allocator to return free memory
    /// (`gdb -p <pid> -batch -ex 'call (int)malloc_trim(0)'`) and read RSS again: this tells
    /// memory the allocator keeps cached from memory still in use.
    #[arg(long)]
    malloc_trim: bool,
}

/// What one client iteration does, and the terminal status it must end in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Scenario {
    /// `slow_compute` for 0–200 ms, polled to `completed` with the full label.
    Quick,
    /// `slow_compute` for 60 s, cancelled while working.
    CancelWorking,
    /// `confirm_delete`, answered with `tasks/update`, polled to `completed`.
    Confirm,
    /// `confirm_delete`, cancelled while parked; a late update is acked and changes nothing.
    CancelParked,
    /// `failing_job`: `completed` with `isError: true`.
    ToolError,
    /// `protocol_error_job`: `failed` with -32603.
    ProtocolError,
    /// `greet` without the Tasks declaration: synchronous, no task.
    Sync,
}

const SCENARIOS: [Scenario; 10] = [
    Scenario::Quick,
    Scenario::Quick,
    Scenario::Quick,
    Scenario::CancelWorking,
    Scenario::Confirm,
    Scenario::Confirm,
    Scenario::CancelParked,
    Scenario::ToolError,
    Scenario::ProtocolError,
    Scenario::Sync,
];

impl Scenario {
    fn expected(self) -> &'static str {
        match self {
            Scenario::Quick | Scenario::Confirm | Scenario::ToolError => "completed",
            Scenario::CancelWorking | Scenario::CancelParked => "cancelled",
            Scenario::ProtocolError => "failed",
            Scenario::Sync => "none",
        }
    }
}

/// Live counters, printed while the soak runs.
#[derive(Default)]
struct Live {
    requests: AtomicU64,
    created: AtomicU64,
    unexpected: AtomicU64,
}

/// One client's tally.
#[derive(Default)]
struct Tally {
    /// `"<operation> <outcome>"` → count, e.g. `"tasks/get ok"`, `"tasks/cancel error -32602"`.
    responses: BTreeMap<String, u64>,
    /// Every created task id → (scenario, observed terminal status).
    tasks: Vec<(String, Scenario, String)>,
    /// Descriptions of unexpected outcomes (the first few are printed).
    unexpected: Vec<String>,
    scenarios: BTreeMap<String, u64>,
    latencies_us: Vec<u64>,
}

struct Worker {
    client: Client,
    live: Arc<Live>,
    tally: Tally,
    rng: u64,
    index: usize,
}

enum Outcome {
    Result(Value),
    Error(i64),
    Transport,
}

const WAIT_LIMIT: Duration = Duration::from_secs(30);

impl Worker {
    fn next_rand(&mut self) -> u64 {
        // xorshift64*
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn unexpected(&mut self, what: String) {
        self.live.unexpected.fetch_add(1, Ordering::Relaxed);
        self.tally.unexpected.push(what);
    }

    async fn send(&mut self, op: &str, params: Value, caps: Value) -> Outcome {
        let id = self.client.next_id();
        let request = self.client.post(id.clone(), op, params, caps);
        self.live.requests.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let outcome = match request.send().await {
            Err(_) => Outcome::Transport,
            Ok(response) => {
                let status = response.status().as_u16();
                match response.bytes().await {
                    Err(_) => Outcome::Transport,
                    Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                        Err(_) => Outcome::Transport,
                        Ok(body) => {
                            if body["id"] != id || body["jsonrpc"] != "2.0" {
                                self.unexpected(format!("{op}: malformed response {body}"));
                            }
                            match (status, body.get("result"), body["error"]["code"].as_i64()) {
                                (200, Some(result), None) => Outcome::Result(result.clone()),
                                (_, None, Some(code)) => Outcome::Error(code),
                                _ => {
                                    self.unexpected(format!("{op}: HTTP {status} {body}"));
                                    Outcome::Transport
                                }
                            }
                        }
                    },
                }
            }
        };
        self.tally
            .latencies_us
            .push(started.elapsed().as_micros() as u64);
        let label = match &outcome {
            Outcome::Result(_) => format!("{op} ok"),
            Outcome::Error(code) => format!("{op} error {code}"),
            Outcome::Transport => format!("{op} transport-error"),
        };
        *self.tally.responses.entry(label).or_default() += 1;
        outcome
    }

    /// A request that must succeed; anything else is unexpected.
    async fn expect_ok(&mut self, op: &str, params: Value) -> Option<Value> {
        match self.send(op, params, tasks_caps()).await {
            Outcome::Result(result) => Some(result),
            Outcome::Error(code) => {
                self.unexpected(format!("{op}: error {code}"));
                None
            }
            Outcome::Transport => {
                self.unexpected(format!("{op}: transport error"));
                None
            }
        }
    }

    async fn get(&mut self, id: &str) -> Option<Value> {
        self.expect_ok("tasks/get", json!({"taskId": id})).await
    }

    /// Polls `tasks/get` (every `pollIntervalMs`) until `done` holds or the task is terminal.
    async fn poll(&mut self, id: &str, done: impl Fn(&str) -> bool) -> Option<Value> {
        let deadline = Instant::now() + WAIT_LIMIT;
        loop {
            let task = self.get(id).await?;
            let status = task["status"].as_str().unwrap_or_default();
            if done(status) || matches!(status, "completed" | "failed" | "cancelled") {
                return Some(task);
            }
            if Instant::now() > deadline {
                self.unexpected(format!("task stuck in {status}"));
                return None;
            }
            let interval = task["pollIntervalMs"].as_u64().unwrap_or(100);
            tokio::time::sleep(Duration::from_millis(interval)).await;
        }
    }

    async fn create(&mut self, tool: &str, arguments: Value) -> Option<String> {
        let result = self
            .expect_ok("tools/call", json!({"name": tool, "arguments": arguments}))
            .await?;
        match (result["resultType"].as_str(), result["taskId"].as_str()) {
            (Some("task"), Some(id)) => {
                self.live.created.fetch_add(1, Ordering::Relaxed);
                Some(id.to_owned())
            }
            _ => {
                self.unexpected(format!("{tool}: not a CreateTaskResult: {result}"));
                None
            }
        }
    }

    async fn run_one(&mut self, scenario: Scenario, n: u64) {
        *self
            .tally
            .scenarios
            .entry(format!("{scenario:?}"))
            .or_default() += 1;
        let label = format!("soak-{}-{n}", self.index);
        let (id, final_task) = match scenario {
            Scenario::Sync => {
                let reply = self
                    .send(
                        "tools/call",
                        json!({"name": "greet", "arguments": {"name": label}}),
                        json!({}),
                    )
                    .await;
                match reply {
                    Outcome::Result(result)
                        if result["content"][0]["text"] == format!("Hello, {label}!")
                            && result.get("taskId").is_none() => {}
                    _ => self.unexpected("greet: unexpected reply".into()),
                }
                return;
            }
            Scenario::Quick => {
                let seconds = (self.next_rand() % 201) as f64 / 1000.0;
                let Some(id) = self
                    .create("slow_compute", json!({"seconds": seconds, "label": label}))
                    .await
                else {
                    return;
                };
                let task = self.poll(&id, |_| false).await;
                if let Some(task) = &task {
                    if task["status"] == "completed"
                        && task["result"]["content"][0]["text"] != format!("Completed {label}")
                    {
                        self.unexpected(format!("wrong result {task}"));
                    }
                }
                (id, task)
            }
            Scenario::CancelWorking => {
                let Some(id) = self
                    .create("slow_compute", json!({"seconds": 60, "label": label}))
                    .await
                else {
                    return;
                };
                self.get(&id).await;
                self.expect_ok("tasks/cancel", json!({"taskId": id})).await;
                let task = self.get(&id).await;
                (id, task)
            }
            Scenario::Confirm | Scenario::CancelParked => {
                let Some(id) = self
                    .create(
                        "confirm_delete",
                        json!({"filename": format!("{label}.txt")}),
                    )
                    .await
                else {
                    return;
                };
                let parked = self.poll(&id, |s| s == "input_required").await;
                if parked.as_ref().map(|t| t["status"].clone()) != Some(json!("input_required")) {
                    self.unexpected(format!("confirm_delete did not park: {parked:?}"));
                }
                let answer = json!({"confirm-delete": {"action": "accept",
                                                       "content": {"confirm": true}}});
                if scenario == Scenario::Confirm {
                    self.expect_ok(
                        "tasks/update",
                        json!({"taskId": id, "inputResponses": answer}),
                    )
                    .await;
                    let task = self.poll(&id, |_| false).await;
                    if let Some(task) = &task {
                        if task["result"]["content"][0]["text"] != "Delete confirmed: true" {
                            self.unexpected(format!("wrong result {task}"));
                        }
                    }
                    (id, task)
                } else {
                    self.expect_ok("tasks/cancel", json!({"taskId": id})).await;
                    let cancelled = self.get(&id).await;
                    // A late answer is acked and changes nothing.
                    self.expect_ok(
                        "tasks/update",
                        json!({"taskId": id, "inputResponses": answer}),
                    )
                    .await;
                    let after = self.get(&id).await;
                    if after != cancelled {
                        self.unexpected(format!("late update changed {cancelled:?} → {after:?}"));
                    }
                    (id, after)
                }
            }
            Scenario::ToolError | Scenario::ProtocolError => {
                let tool = if scenario == Scenario::ToolError {
                    "failing_job"
                } else {
                    "protocol_error_job"
                };
                let Some(id) = self.create(tool, json!({})).await else {
                    return;
                };
                let task = self.poll(&id, |_| false).await;
                if let Some(task) = &task {
                    let right = if scenario == Scenario::ToolError {
                        task["result"]["isError"] == true
                    } else {
                        task["error"]["code"] == -32603
                    };
                    if !right {
                        self.unexpected(format!("wrong payload {task}"));
                    }
                }
                (id, task)
            }
        };
        let status = final_task
            .as_ref()
            .and_then(|t| t["status"].as_str())
            .unwrap_or("unknown")
            .to_owned();
        if status != scenario.expected() {
            self.unexpected(format!("{scenario:?} ended {status}"));
        }
        self.tally.tasks.push((id, scenario, status));
    }
}

fn rss_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|line| line.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn start_fixture(args: &Args) -> (Child, String) {
    let path = args.fixture.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(|dir| dir.join("tasks-fixture")))
            .unwrap_or_else(|| PathBuf::from("tasks-fixture"))
    });
    let mut child = Command::new(&path)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--ttl-ms",
            &args.ttl_ms.to_string(),
            "--reap-interval-ms",
            &args.reap_interval_ms.to_string(),
            "--max-workers",
            &args.max_workers.to_string(),
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| {
            eprintln!(
                "soak: cannot start {} ({e}); build it with `cargo build --release -p tasks-fixture` \
                 or pass --fixture PATH",
                path.display()
            );
            std::process::exit(2)
        });
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped stdout"))
        .read_line(&mut line)
        .expect("the fixture prints its URL");
    (child, line.trim().to_owned())
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index]
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let (mut child, url, pid) = match &args.url {
        Some(url) => (None, url.clone(), args.pid),
        None => {
            let (child, url) = start_fixture(&args);
            let pid = child.id();
            (Some(child), url, Some(pid))
        }
    };
    println!(
        "soak: {} clients for {} s against {url} (ttl {} ms, reap every {} ms)",
        args.clients, args.duration_secs, args.ttl_ms, args.reap_interval_ms
    );
    let rss = |field: &str| pid.and_then(|pid| rss_kib(pid, field));
    // Warm up: one request of each kind, so the baseline includes the lazily built state.
    let probe = Client::new(url.clone());
    let _ = probe
        .post(probe.next_id(), "tools/list", json!({}), json!({}))
        .send()
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rss_start = rss("VmRSS:");

    let live = Arc::new(Live::default());
    let started = Instant::now();
    let deadline = started + Duration::from_secs(args.duration_secs);
    let peak_sampled = Arc::new(AtomicU64::new(rss_start.unwrap_or(0)));
    let series = Arc::new(std::sync::Mutex::new(Vec::<(u64, u64, u64)>::new()));
    let monitor = {
        let (live, peak_sampled, series) = (live.clone(), peak_sampled.clone(), series.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            let mut n = 0u64;
            loop {
                tick.tick().await;
                n += 1;
                if let Some(now) = pid.and_then(|pid| rss_kib(pid, "VmRSS:")) {
                    peak_sampled.fetch_max(now, Ordering::Relaxed);
                }
                if n.is_multiple_of(30) {
                    if let Some(now) = pid.and_then(|pid| rss_kib(pid, "VmRSS:")) {
                        series.lock().expect("series").push((
                            started.elapsed().as_secs(),
                            live.created.load(Ordering::Relaxed),
                            now,
                        ));
                    }
                    println!(
                        "  t={:>4}s requests={} tasks={} unexpected={} rss={}",
                        started.elapsed().as_secs(),
                        live.requests.load(Ordering::Relaxed),
                        live.created.load(Ordering::Relaxed),
                        live.unexpected.load(Ordering::Relaxed),
                        pid.and_then(|pid| rss_kib(pid, "VmRSS:"))
                            .map_or("?".into(), mib),
                    );
                }
            }
        })
    };

    let clients: Vec<_> = (0..args.clients)
        .map(|index| {
            let mut worker = Worker {
                client: Client::new(url.clone()),
                live: live.clone(),
                tally: Tally::default(),
                rng: 0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9),
                index,
            };
            tokio::spawn(async move {
                let mut n = 0u64;
                while Instant::now() < deadline {
                    let pick = (worker.next_rand() % SCENARIOS.len() as u64) as usize;
                    worker.run_one(SCENARIOS[pick], n).await;
                    n += 1;
                }
                worker.tally
            })
        })
        .collect();
    let mut total = Tally::default();
    let mut panicked = 0;
    for client in clients {
        match client.await {
            Ok(tally) => {
                for (k, v) in tally.responses {
                    *total.responses.entry(k).or_default() += v;
                }
                for (k, v) in tally.scenarios {
                    *total.scenarios.entry(k).or_default() += v;
                }
                total.tasks.extend(tally.tasks);
                total.unexpected.extend(tally.unexpected);
                total.latencies_us.extend(tally.latencies_us);
            }
            Err(_) => panicked += 1,
        }
    }
    let load_secs = started.elapsed().as_secs_f64();
    let rss_after_load = rss("VmRSS:");
    let hwm = rss("VmHWM:");

    // Wait for every task to expire and the reaper to delete it, then read a sample back.
    let wait = Duration::from_millis(args.ttl_ms + 2 * args.reap_interval_ms + 1_000);
    println!("load done after {load_secs:.0} s; waiting {wait:?} for the reaper");
    tokio::time::sleep(wait).await;
    let mut reaped_unknown = 0u64;
    let mut reaped_other = Vec::new();
    let step = (total.tasks.len() / args.reap_sample.max(1)).max(1);
    let checker = Client::new(url.clone());
    for (id, _, _) in total.tasks.iter().step_by(step) {
        let reply = checker
            .post(
                checker.next_id(),
                "tasks/get",
                json!({"taskId": id}),
                tasks_caps(),
            )
            .send()
            .await;
        let body: Option<Value> = match reply {
            Ok(response) => response.json().await.ok(),
            Err(_) => None,
        };
        match body {
            Some(body)
                if body["error"]["code"] == -32602
                    && body["error"]["message"] == "Unknown or inaccessible taskId" =>
            {
                reaped_unknown += 1
            }
            other => reaped_other.push(format!("{id}: {other:?}")),
        }
    }
    // Let the allocator settle after the last reap.
    tokio::time::sleep(Duration::from_millis(args.reap_interval_ms + 500)).await;
    let rss_end = rss("VmRSS:");
    monitor.abort();
    let rss_trimmed = match pid {
        Some(pid) if args.malloc_trim => {
            let trimmed = Command::new("gdb")
                .args([
                    "-p",
                    &pid.to_string(),
                    "-batch",
                    "-ex",
                    "call (int)malloc_trim(0)",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            match trimmed {
                Ok(status) if status.success() => rss("VmRSS:"),
                _ => None,
            }
        }
        _ => None,
    };

    // Accounting: every created id is distinct and has the terminal status its scenario needs.
    let mut ids = HashMap::with_capacity(total.tasks.len());
    let mut duplicates = 0;
    let mut by_status: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (id, scenario, status) in &total.tasks {
        if ids.insert(id.as_str(), ()).is_some() {
            duplicates += 1;
        }
        *by_status
            .entry((format!("{scenario:?}"), status.clone()))
            .or_default() += 1;
    }
    let created = live.created.load(Ordering::Relaxed);
    total.latencies_us.sort_unstable();

    println!("\n== soak results ==");
    println!("clients: {}, load time: {load_secs:.1} s", args.clients);
    println!(
        "requests: {} ({:.0}/s)",
        live.requests.load(Ordering::Relaxed),
        live.requests.load(Ordering::Relaxed) as f64 / load_secs
    );
    println!(
        "latency: p50 {} µs, p99 {} µs, max {} µs",
        percentile(&total.latencies_us, 0.5),
        percentile(&total.latencies_us, 0.99),
        total.latencies_us.last().copied().unwrap_or(0)
    );
    println!("scenarios run:");
    for (k, v) in &total.scenarios {
        println!("  {k:<14} {v}");
    }
    println!("responses by operation and outcome:");
    for (k, v) in &total.responses {
        println!("  {k:<30} {v}");
    }
    println!(
        "tasks created: {created}, tracked: {}, distinct ids: {}, duplicates: {duplicates}",
        total.tasks.len(),
        ids.len()
    );
    println!("terminal status by scenario:");
    for ((scenario, status), v) in &by_status {
        println!("  {scenario:<14} {status:<10} {v}");
    }
    println!(
        "after reaping: {reaped_unknown} of {} sampled ids unknown (-32602), {} otherwise",
        reaped_unknown as usize + reaped_other.len(),
        reaped_other.len()
    );
    for line in reaped_other.iter().take(5) {
        println!("  still there: {line}");
    }
    println!(
        "server RSS: start {}, peak {} (sampled {}), after load {}, end {}",
        rss_start.map_or("?".into(), mib),
        hwm.map_or("?".into(), mib),
        mib(peak_sampled.load(Ordering::Relaxed)),
        rss_after_load.map_or("?".into(), mib),
        rss_end.map_or("?".into(), mib),
    );
    if let Some(trimmed) = rss_trimmed {
        println!("server RSS after malloc_trim(0): {}", mib(trimmed));
    }
    println!("server RSS while loaded (time, tasks created so far, RSS):");
    for (secs, created, kib) in series.lock().expect("series").iter() {
        println!("  t={secs:>4}s tasks={created:>8} rss={}", mib(*kib));
    }
    println!(
        "unexpected outcomes: {} (client panics: {panicked})",
        total.unexpected.len()
    );
    for line in total.unexpected.iter().take(10) {
        println!("  {line}");
    }

    // Memory is back when the end figure, or (with --malloc-trim) the figure once the
    // allocator has returned its free pages, is within the tolerance of the start.
    let near_start = |kib: Option<u64>| match (rss_start, kib) {
        (Some(start), Some(kib)) => Some(kib <= start + args.rss_tolerance_mib * 1024),
        _ => None,
    };
    let (raw_ok, trimmed_ok) = (near_start(rss_end), near_start(rss_trimmed));
    println!(
        "rss back within {} MiB of start: as measured {raw_ok:?}, after malloc_trim {trimmed_ok:?}",
        args.rss_tolerance_mib
    );
    let rss_ok = raw_ok.unwrap_or(true) || trimmed_ok == Some(true);
    let ok = total.unexpected.is_empty()
        && panicked == 0
        && duplicates == 0
        && created as usize == total.tasks.len()
        && reaped_other.is_empty()
        && rss_ok;
    println!("verdict: {}", if ok { "PASS" } else { "FAIL" });

    if let Some(child) = child.as_mut() {
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let _ = child.wait();
    }
    if ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
