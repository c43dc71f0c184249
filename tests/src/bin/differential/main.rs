//! Differential run of two builds of the conformance fixture (`tasks-fixture`): starts both
//! (in-memory store, free loopback ports), replays one corpus of HTTP requests against each, and
//! compares what they answer: the status, the response headers (all but `date`;
//! `content-length` by presence), and the body normalised (task ids, session ids, `requestState`
//! tokens, idempotency keys, subscription ids and cursors become placeholders numbered in order
//! of first appearance, so one id keeps one placeholder through a scenario, `Mcp-Session-Id`
//! included; timestamps become `<timestamp>`; an SSE body is compared as its list of events,
//! keep-alive comments left out; a `tasks/list` page, ordered by the random task ids, as its
//! tasks in creation order plus whether it was in id order). It prints a report and exits with
//! 1 on any difference (2 when a fixture cannot be started).
//!
//! Run by hand, not by CI: it needs two builds of the fixture (docs/testing.md, "Differential
//! run of the fixture"). For example, the fixture of an older commit against this checkout's:
//!
//! ```sh
//! git worktree add /tmp/base <commit> && (cd /tmp/base && cargo build --bin tasks-fixture)
//! cargo build --bin tasks-fixture --bin differential
//! target/debug/differential /tmp/base/target/debug/tasks-fixture target/debug/tasks-fixture
//! ```
//!
//! Running one binary against itself checks the harness: the corpus and its normalisation must
//! find no difference there, or a scenario depends on timing.
//!
//! The corpus, in three phases (each a pair of fresh fixtures, the scenarios run in order on
//! both at once): the default fixture (2026-07-28 discovery, listing, synchronous calls with
//! and without progress and log streams, task creation, `tasks/get`, `tasks/update`,
//! `tasks/cancel`, `subscriptions/listen`, MRTR rounds, malformed requests, a 2025-11-25 and a
//! 2025-06-18 session, and the metric names), `--bearer-scope --cors-origin` (401, scopes,
//! `tasks/list` in a session, CORS) and `--max-workers 1` (capacity). `--only TEXT` runs the
//! scenarios whose name contains TEXT; `--verbose` prints every normalised exchange.

mod compare;
mod corpus;
mod wire;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Duration;

use clap::Parser;
use serde_json::{json, Value};

use compare::{differences, normalise, shown};
use corpus::{Scenario, PHASES};
use wire::Run;

/// Differential run of two fixture builds over one request corpus.
#[derive(Debug, Parser)]
#[command(name = "differential")]
struct Args {
    /// The fixture binary before the change (`tasks-fixture`).
    base: PathBuf,
    /// The fixture binary after the change.
    candidate: PathBuf,
    /// Print every normalised exchange, not only the differing ones.
    #[arg(long)]
    verbose: bool,
    /// Run only the scenarios whose name contains this text.
    #[arg(long)]
    only: Option<String>,
    /// Write the fixtures' logs (stderr, `RUST_LOG=info`) to `DIR/<phase>-<side>.log` instead of
    /// discarding them.
    #[arg(long, value_name = "DIR")]
    logs: Option<PathBuf>,
}

// ---------------------------------------------------------------------------------------------
// The fixtures.
// ---------------------------------------------------------------------------------------------

/// A running fixture process, killed when dropped.
struct Fixture {
    child: Child,
    url: String,
}

impl Fixture {
    /// Starts `binary` on a free loopback port with `args`, and waits for the URL it prints.
    fn start(binary: &Path, args: &[&str], log: Option<PathBuf>) -> Result<Fixture, String> {
        let stderr = match log {
            Some(path) => Stdio::from(
                std::fs::File::create(&path)
                    .map_err(|e| format!("cannot create {}: {e}", path.display()))?,
            ),
            None => Stdio::null(),
        };
        let mut child = Command::new(binary)
            .args(["--listen", "127.0.0.1:0", "--drain-ms", "0"])
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = tx.send(reader.read_line(&mut line).map(|_| line));
            // Keep the pipe open (and drained) while the fixture runs.
            let mut rest = String::new();
            while matches!(reader.read_line(&mut rest), Ok(n) if n > 0) {
                rest.clear();
            }
        });
        let mut fixture = Fixture {
            child,
            url: String::new(),
        };
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(line)) if line.trim().starts_with("http://") => {
                fixture.url = line.trim().to_owned();
                Ok(fixture)
            }
            Ok(Ok(line)) => Err(format!(
                "{} printed {line:?} instead of its URL (see --logs)",
                binary.display()
            )),
            Ok(Err(e)) => Err(format!("cannot read from {}: {e}", binary.display())),
            Err(_) => Err(format!(
                "{} printed no URL within 60 s (see --logs)",
                binary.display()
            )),
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// The run.
// ---------------------------------------------------------------------------------------------

/// Runs `scenario` on `run`; its log, with a last entry naming the error that stopped it.
async fn play(run: &mut Run, scenario: Scenario) -> Vec<Value> {
    run.log.clear();
    if let Err(error) = scenario(run).await {
        run.log.push(json!({"stopped": error}));
    }
    std::mem::take(&mut run.log)
}

#[derive(Default)]
struct Totals {
    scenarios: usize,
    differing_scenarios: usize,
    exchanges: usize,
    events: usize,
    differing_exchanges: usize,
    /// Scenarios that stopped early on both sides alike (a corpus fault: what follows the stop
    /// was not compared).
    stopped: usize,
}

fn count_events(entry: &Value) -> usize {
    entry["body"]["events"].as_array().map_or(0, Vec::len)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let mut totals = Totals::default();
    let started = std::time::Instant::now();
    println!("differential: base      {}", args.base.display());
    println!("differential: candidate {}", args.candidate.display());
    for phase in PHASES {
        let scenarios: Vec<_> = phase
            .scenarios
            .iter()
            .filter(|(name, _)| args.only.as_deref().is_none_or(|only| name.contains(only)))
            .collect();
        if scenarios.is_empty() {
            continue;
        }
        let log = |side: &str| {
            args.logs.as_ref().map(|dir| {
                let safe: String = phase
                    .name
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '-' {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                dir.join(format!("{safe}-{side}.log"))
            })
        };
        let fixtures = Fixture::start(&args.base, phase.args, log("base")).and_then(|base| {
            Fixture::start(&args.candidate, phase.args, log("candidate")).map(|c| (base, c))
        });
        let (base, candidate) = match fixtures {
            Ok(pair) => pair,
            Err(error) => {
                eprintln!("differential: {error}");
                return ExitCode::from(2);
            }
        };
        println!(
            "\nphase {} (fixture args: {})",
            phase.name,
            if phase.args.is_empty() {
                "none".to_owned()
            } else {
                phase.args.join(" ")
            }
        );
        let mut base_run = Run::new(&base.url);
        let mut candidate_run = Run::new(&candidate.url);
        for (name, scenario) in scenarios {
            let (a, b) = tokio::join!(
                play(&mut base_run, *scenario),
                play(&mut candidate_run, *scenario)
            );
            let (a, b) = (normalise(&a), normalise(&b));
            totals.scenarios += 1;
            totals.exchanges += a.iter().filter(|e| e.get("exchange").is_some()).count();
            totals.events += a.iter().map(count_events).sum::<usize>();
            let mut lines = Vec::new();
            let mut differing = 0;
            for i in 0..a.len().max(b.len()) {
                let (x, y) = (a.get(i), b.get(i));
                let label = x
                    .or(y)
                    .and_then(|e| {
                        e["exchange"]
                            .as_str()
                            .or(e["stopped"].as_str().map(|_| "stopped"))
                    })
                    .unwrap_or("?")
                    .to_owned();
                if x == y {
                    if args.verbose {
                        lines.push(format!("    = #{i} {label}: {}", shown_full(x)));
                    }
                    continue;
                }
                differing += 1;
                let mut found = Vec::new();
                match (x, y) {
                    (Some(x), Some(y)) => differences(x, y, "", &mut found, 12),
                    (x, y) => found.push(format!(
                        "only on one side: base {}, candidate {}",
                        shown(x),
                        shown(y)
                    )),
                }
                lines.push(format!("    ≠ #{i} {label}"));
                lines.extend(found.into_iter().map(|d| format!("        {d}")));
            }
            let stopped = a.iter().chain(&b).find_map(|e| e["stopped"].as_str());
            let exchanges = a.iter().filter(|e| e.get("exchange").is_some()).count();
            if differing == 0 {
                match stopped {
                    Some(error) => {
                        totals.stopped += 1;
                        println!("  STOP  {name}: both sides stopped after {exchanges} exchanges: {error}");
                    }
                    None => println!("  same  {name}: {exchanges} exchanges"),
                }
            } else {
                totals.differing_scenarios += 1;
                totals.differing_exchanges += differing;
                println!(
                    "  DIFF  {name}: {differing} of {} entries differ",
                    a.len().max(b.len())
                );
            }
            for line in lines {
                println!("{line}");
            }
        }
        drop((base, candidate));
    }
    println!(
        "\n{} scenarios, {} exchanges ({} SSE events) on each side; {} differing exchanges in {} scenarios ({:.1} s)",
        totals.scenarios,
        totals.exchanges,
        totals.events,
        totals.differing_exchanges,
        totals.differing_scenarios,
        started.elapsed().as_secs_f64()
    );
    if totals.differing_exchanges > 0 {
        println!("differential: DIFFERENCES FOUND");
        ExitCode::FAILURE
    } else if totals.stopped > 0 {
        println!(
            "differential: no difference, but {} scenarios stopped early on both sides (fix the corpus)",
            totals.stopped
        );
        ExitCode::FAILURE
    } else {
        println!("differential: no difference");
        ExitCode::SUCCESS
    }
}

fn shown_full(value: Option<&Value>) -> String {
    value.map_or_else(|| "(absent)".into(), Value::to_string)
}
