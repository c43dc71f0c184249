//! Creates and gets per second against a `PostgresStore`, from concurrent tokio tasks.
//!
//! ```text
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo run --release -p tasks-store-postgres --example throughput -- \
//!   [CREATES] [GETS] [--concurrency N] [--pool N] [--scopes N] [--complete | --mixed]
//! ```
//!
//! Uses a fresh schema `bench_<random hex>` and drops it at the end. Not a test: numbers
//! depend on the machine, its load and the server's fsync latency. Run with `--help` for the
//! options.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tasks_core::{apply, Event, JsonObject, NewTask, Task, TaskId, TaskUpdate, Timestamp};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::store::{Authority, CasOutcome, NodeId, Store};
use tasks_runtime::{Scope, Work};
use tasks_store_postgres::{redacted, PostgresOptions, PostgresStore};
use tokio::task::JoinSet;
use tokio_postgres::NoTls;

const T0: Timestamp = Timestamp::from_unix_millis(1_793_729_045_123);

const HELP: &str = "\
throughput [CREATES] [GETS] [options]

Creates CREATES tasks (default 5000), then gets GETS of them (default 50000), from concurrent
tokio tasks, against a fresh schema of the database at DATABASE_URL (default
postgres://postgres@127.0.0.1:5432/test), and prints the rate of each phase.

Options:
  --concurrency N   tokio tasks issuing calls (default 64)
  --pool N          the store's connection pool size (default 16, the store's default)
  --scopes N        scopes the tasks are spread over (default 16; 1 = one shared scope, as on
                    a server without auth)
  --complete        after the gets, complete every task (a terminal transition, which lowers
                    its scope's active count) and print that rate too
  --mixed           instead: each call creates a task and at once completes it (by a worker,
                    under the create's lease), so creates and completions interleave as on a
                    server whose tools finish quickly; prints creates (with their completion)
                    per second, and skips the gets
  --help            this text
";

/// What to run.
struct Args {
    creates: usize,
    gets: usize,
    concurrency: usize,
    pool: usize,
    scopes: usize,
    complete: bool,
    mixed: bool,
}

fn parse() -> Result<Option<Args>, String> {
    let mut args = Args {
        creates: 5_000,
        gets: 50_000,
        concurrency: 64,
        pool: PostgresOptions::default().pool_size,
        scopes: 16,
        complete: false,
        mixed: false,
    };
    let mut positional = 0;
    let mut given = std::env::args().skip(1);
    while let Some(arg) = given.next() {
        let mut value = |name: &str| -> Result<usize, String> {
            let text = given.next().ok_or(format!("{name} needs a value"))?;
            text.parse::<usize>()
                .map_err(|e| format!("{name} {text}: {e}"))
        };
        match arg.as_str() {
            "--help" | "-h" => return Ok(None),
            "--concurrency" => args.concurrency = value("--concurrency")?.max(1),
            "--pool" => args.pool = value("--pool")?.max(1),
            "--scopes" => args.scopes = value("--scopes")?.max(1),
            "--complete" => args.complete = true,
            "--mixed" => args.mixed = true,
            number if !number.starts_with('-') && positional < 2 => {
                let n = number
                    .parse::<usize>()
                    .map_err(|e| format!("{number}: {e}"))?;
                if positional == 0 {
                    args.creates = n;
                } else {
                    args.gets = n;
                }
                positional += 1;
            }
            other => return Err(format!("unknown argument {other:?}; see --help")),
        }
    }
    Ok(Some(args))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(args) = parse()? else {
        print!("{HELP}");
        return Ok(());
    };
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let mut suffix = [0u8; 6];
    getrandom::fill(&mut suffix).map_err(|e| e.to_string())?;
    let schema = format!(
        "bench_{}",
        suffix
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let options = PostgresOptions::default()
        .with_schema(schema.clone())
        .with_pool_size(args.pool);
    println!(
        "PostgreSQL at {}, schema {schema}, pool {}, {} tokio tasks, {} scopes",
        redacted(&url),
        options.pool_size,
        args.concurrency,
        args.scopes
    );
    let store = Arc::new(PostgresStore::connect(&url, options).await?);
    let result = run(&store, &args).await;
    let (admin, connection) = tokio_postgres::connect(&url, NoTls).await?;
    tokio::spawn(connection);
    admin
        .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
        .await?;
    result
}

async fn run(store: &Arc<PostgresStore>, args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let node = NodeId::from_bytes([7; 16]);
    let limits = CreateLimits {
        max_tasks: usize::MAX / 2,
        max_active_per_scope: usize::MAX / 2,
        lease_required: false,
    };
    let (creates, scopes) = (args.creates, args.scopes);
    let scope_of = move |i: usize| Scope::new(format!("scope-{}", i % scopes));

    let mixed = args.mixed;
    let shared = store.clone();
    let elapsed = spread(creates, args.concurrency, move |i| {
        let store = shared.clone();
        async move {
            let scope = scope_of(i);
            let mut arguments = JsonObject::new();
            arguments.insert("n".into(), i.into());
            let work = Work {
                tool: "echo".into(),
                arguments,
                input_responses: None,
                client_capabilities: JsonObject::new(),
                scope,
                trace_parent: None,
                sealed_principal: None,
            };
            let task = NewTask::new(id(i)?, T0, Some(3_600_000), None);
            let created = store
                .create(task, work.into(), limits, &node)
                .await
                .map_err(|e| e.to_string())?;
            if !mixed {
                return Ok(());
            }
            let update = completed(&created.snapshot.task, i)?;
            match store
                .transition(Authority::Worker(&created.lease), update, T0)
                .await
                .map_err(|e| e.to_string())?
            {
                CasOutcome::Committed(_) => Ok(()),
                other => Err(format!("completing task {i}: {other:?}")),
            }
        }
    })
    .await?;
    if mixed {
        report("create + complete", creates, elapsed);
        return Ok(());
    }
    report("create", creates, elapsed);

    let shared = store.clone();
    let elapsed = spread(args.gets, args.concurrency, move |i| {
        let store = shared.clone();
        async move {
            let n = i % creates.max(1);
            match store.get(&scope_of(n), &id(n)?, T0).await {
                Ok(Some(_)) => Ok(()),
                Ok(None) => Err(format!("task {n} not found")),
                Err(e) => Err(e.to_string()),
            }
        }
    })
    .await?;
    report("get", args.gets, elapsed);

    if args.complete {
        let shared = store.clone();
        let elapsed = spread(creates, args.concurrency, move |i| {
            let store = shared.clone();
            async move {
                let scope = scope_of(i);
                let current = store
                    .get(&scope, &id(i)?, T0)
                    .await
                    .map_err(|e| e.to_string())?
                    .ok_or(format!("task {i} not found"))?;
                let update = completed(&current.task, i)?;
                match store
                    .transition(Authority::Request(&scope), update, T0)
                    .await
                    .map_err(|e| e.to_string())?
                {
                    CasOutcome::Committed(_) => Ok(()),
                    other => Err(format!("completing task {i}: {other:?}")),
                }
            }
        })
        .await?;
        report("complete (get + transition)", creates, elapsed);
    }
    Ok(())
}

/// The reducer's update completing `task` (task number `i`).
fn completed(task: &Task, i: usize) -> Result<TaskUpdate, String> {
    let result = json!({"content": [], "isError": false});
    let result = result.as_object().cloned().unwrap_or_default();
    apply(
        task,
        Event::Completed {
            result: result.into(),
        },
        T0,
    )
    .map_err(|e| e.to_string())?
    .into_update()
    .ok_or(format!("completing task {i} changed nothing"))
}

fn id(i: usize) -> Result<TaskId, String> {
    TaskId::parse(&format!("bench-{i:08}")).map_err(|e| e.to_string())
}

/// Runs `op(0..total)` from `concurrency` tasks, each taking the next index; the wall time.
async fn spread<F, Fut>(total: usize, concurrency: usize, op: F) -> Result<Duration, String>
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut set: JoinSet<Result<(), String>> = JoinSet::new();
    for _ in 0..concurrency {
        let next = next.clone();
        let op = op.clone();
        set.spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= total {
                    return Ok(());
                }
                op(i).await?;
            }
        });
    }
    while let Some(joined) = set.join_next().await {
        joined.map_err(|e| e.to_string())??;
    }
    Ok(started.elapsed())
}

fn report(what: &str, count: usize, elapsed: Duration) {
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 { count as f64 / secs } else { 0.0 };
    println!("{what}: {count} in {secs:.2} s = {rate:.0}/s");
}
