//! The run: which server each row uses, with which flags, in which order.
//!
//! | server | rows | why a fresh one |
//! |---|---|---|
//! | fixture A | 2 `tasks/get` (also supplies the baseline's response body) | — |
//! | baseline | 1 (alive beside fixture A: the rounds interleave rows 1, 2, 3) | — |
//! | one fixture per round | 3 creation | a round stores every task it creates (~0.5 M) |
//! | fixture B | 4 lifecycle | CPU time per task of that row alone |
//! | fixture C | 5a stored | RSS of that row alone |
//! | fixture D | 5b parked | RSS of that row alone |
//!
//! Every fixture runs with [`FIXTURE_LIMITS`]: capacity limits far above what a row creates, so
//! no creation is refused, and unlimited TTL, so nothing is reaped during a row.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use crate::cli::{Row, RunArgs};
use crate::conn::{Connection, Endpoint};
use crate::load::{self, LoadSpec};
use crate::mcp::{self, Call, Expect};
use crate::pin::Pinning;
use crate::pool::Pool;
use crate::report::{Report, Setup};
use crate::server::{self, ServerProcess};
use crate::settle::settle;
use crate::{lifecycle, memory};

/// Fixture flags of every row.
pub const FIXTURE_LIMITS: &[&str] = &[
    "--max-tasks",
    "10000000",
    "--max-active-per-scope",
    "10000000",
    "--max-workers",
    "1000000",
    "--ttl-ms",
    "0",
];

struct Servers<'a> {
    args: &'a RunArgs,
    pinning: &'a Pinning,
    logs: PathBuf,
    fixture: PathBuf,
}

impl Servers<'_> {
    fn fixture(&self, name: &str) -> Result<ServerProcess, String> {
        let mut command = self.pinning.server_command(&self.fixture);
        command
            .args(["--listen", "127.0.0.1:0", "--worker-threads"])
            .arg(self.args.server_threads.to_string())
            .args(FIXTURE_LIMITS);
        ServerProcess::start(name, command, &self.logs.join(format!("{name}.log")))
    }

    fn baseline(&self, body_file: &std::path::Path) -> Result<ServerProcess, String> {
        let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
        let mut command = self.pinning.server_command(&exe);
        command
            .args([
                "baseline-server",
                "--listen",
                "127.0.0.1:0",
                "--worker-threads",
            ])
            .arg(self.args.server_threads.to_string())
            .arg("--body-file")
            .arg(body_file);
        ServerProcess::start("baseline", command, &self.logs.join("baseline.log"))
    }
}

/// Runs the selected rows.
pub async fn run(args: &RunArgs, pinning: &Pinning) -> Result<Report, String> {
    let logs = server::log_dir();
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let fixture = match &args.fixture {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .map_err(|e| format!("own path: {e}"))?
            .with_file_name("tasks-fixture"),
    };
    let servers = Servers {
        args,
        pinning,
        logs,
        fixture,
    };
    let spec = LoadSpec {
        connections: args.connections,
        warmup: Duration::from_millis(args.warmup_ms),
        duration: Duration::from_millis(args.duration_ms),
    };
    let mut report = Report::new(Setup::describe(args, pinning, spec));

    if args.runs(Row::Baseline) || args.runs(Row::Get) || args.runs(Row::Create) {
        let a = servers.fixture("fixture-a")?;
        let endpoint = Endpoint::parse(a.url())?;
        let get = completed_task(&endpoint).await?;
        let body = capture(&endpoint, &get).await?;
        report.get_response_bytes = Some(body.len());
        let baseline = if args.runs(Row::Baseline) {
            let body_file = servers.logs.join("baseline-body.json");
            std::fs::write(&body_file, &body)
                .map_err(|e| format!("{}: {e}", body_file.display()))?;
            let server = servers.baseline(&body_file)?;
            let endpoint = Endpoint::parse(server.url())?;
            Some((server, endpoint))
        } else {
            None
        };
        let create = Call::tools_call("slow_compute", json!({"seconds": 0}))?;
        let completed = Expect::Status("completed");
        let rounds = usize::try_from(args.rounds).unwrap_or(1);
        let mut round = 0;
        while [&report.baseline, &report.get, &report.create]
            .iter()
            .zip([Row::Baseline, Row::Get, Row::Create])
            .any(|(series, row)| args.runs(row) && series.wants_more(rounds))
        {
            round += 1;
            if let Some((server, base)) = &baseline {
                eprintln!("round {round}: row 1, baseline");
                let run = load::run(base, &get, completed, spec, server.pid()).await?;
                report.baseline.push(run, pinning);
            }
            if args.runs(Row::Get) {
                eprintln!("round {round}: row 2, tasks/get");
                let run = load::run(&endpoint, &get, completed, spec, a.pid()).await?;
                report.get.push(run, pinning);
            }
            if args.runs(Row::Create) {
                eprintln!("round {round}: row 3, creation");
                // A fresh fixture per round: a round stores every task it creates.
                let fresh = servers.fixture(&format!("fixture-create-{round}"))?;
                let target = Endpoint::parse(fresh.url())?;
                let run = load::run(&target, &create, Expect::Created, spec, fresh.pid()).await?;
                report.create.push(run, pinning);
            }
        }
    }
    if args.runs(Row::Lifecycle) {
        eprintln!("row 4: lifecycle");
        let b = servers.fixture("fixture-b")?;
        let pool = Pool::open(&Endpoint::parse(b.url())?, args.connections).await?;
        report.lifecycle =
            Some(lifecycle::run(&pool, &b, args.lifecycle_tasks, args.lifecycle_seconds).await?);
    }
    if args.runs(Row::Stored) {
        eprintln!("row 5a: stored tasks");
        let c = servers.fixture("fixture-c")?;
        let pool = Pool::open(&Endpoint::parse(c.url())?, args.connections).await?;
        report.stored = Some(memory::stored(&pool, &c, args.memory_tasks).await?);
    }
    if args.runs(Row::Parked) {
        eprintln!("row 5b: parked tasks");
        let d = servers.fixture("fixture-d")?;
        let pool = Pool::open(&Endpoint::parse(d.url())?, args.connections).await?;
        let rounds = usize::try_from(args.rounds).unwrap_or(1);
        report.parked =
            Some(memory::parked(&pool, &d, spec, args.memory_tasks, rounds, pinning).await?);
    }
    Ok(report)
}

/// Creates a `slow_compute` task with `seconds: 0`, waits until it is completed, and returns
/// the `tasks/get` call of it.
async fn completed_task(endpoint: &Endpoint) -> Result<Call, String> {
    let pool = Pool::open(endpoint, 1).await?;
    let created = pool
        .call(&Call::tools_call("slow_compute", json!({"seconds": 0}))?)
        .await?;
    Expect::Created.check_task(&created)?;
    let id = created.task_id;
    let (errors, first_error) = settle(&pool, vec![id.clone()], "completed", "working").await;
    if errors > 0 {
        return Err(first_error.unwrap_or_default());
    }
    Call::tasks_get(&id)
}

/// The raw body of one checked `call` response.
async fn capture(endpoint: &Endpoint, call: &Call) -> Result<bytes::Bytes, String> {
    let reply = Connection::open(endpoint)
        .await?
        .send(call.request(endpoint))
        .await
        .map_err(|e| e.to_string())?;
    Expect::Status("completed").check(&mcp::summary_of(&reply)?)?;
    Ok(reply.body)
}
