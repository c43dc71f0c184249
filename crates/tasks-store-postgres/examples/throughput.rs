//! Creates and gets per second against a `PostgresStore`, from 64 concurrent tokio tasks.
//!
//! ```text
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo run --release -p tasks-store-postgres --example throughput [creates] [gets]
//! ```
//!
//! Uses a fresh schema `bench_<random hex>` and drops it at the end. Not a test: numbers
//! depend on the machine and the server's fsync latency (phase 1 counters serialize creates
//! on one row for the length of a commit).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tasks_core::{JsonObject, NewTask, TaskId, Timestamp};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::{NodeId, Scope, Store, Work};
use tasks_store_postgres::{redacted, PostgresOptions, PostgresStore};
use tokio::task::JoinSet;
use tokio_postgres::NoTls;

const CONCURRENCY: usize = 64;
const T0: Timestamp = Timestamp::from_unix_millis(1_793_729_045_123);

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let creates: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5_000);
    let gets: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(50_000);
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
    let options = PostgresOptions {
        schema: schema.clone(),
        ..PostgresOptions::default()
    };
    println!(
        "PostgreSQL at {}, schema {schema}, pool {}, {CONCURRENCY} tokio tasks",
        redacted(&url),
        options.pool_size
    );
    let store = Arc::new(PostgresStore::connect(&url, options).await?);
    let result = run(&store, creates, gets).await;
    let (admin, connection) = tokio_postgres::connect(&url, NoTls).await?;
    tokio::spawn(connection);
    admin
        .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
        .await?;
    result
}

async fn run(
    store: &Arc<PostgresStore>,
    creates: usize,
    gets: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let node = NodeId::from_bytes([7; 16]);
    let limits = CreateLimits {
        max_tasks: usize::MAX / 2,
        max_active_per_scope: usize::MAX / 2,
    };
    let shared = store.clone();
    let elapsed = spread(creates, move |i| {
        let store = shared.clone();
        async move {
            let scope = Scope::new(format!("scope-{}", i % 16));
            let mut arguments = JsonObject::new();
            arguments.insert("n".into(), i.into());
            let work = Work {
                tool: "echo".into(),
                arguments,
                input_responses: None,
                client_capabilities: JsonObject::new(),
                scope,
            };
            let task = NewTask::new(id(i)?, T0, Some(3_600_000), None);
            store
                .create(task, work, limits, &node)
                .await
                .map(drop)
                .map_err(|e| e.to_string())
        }
    })
    .await?;
    report("create", creates, elapsed);

    let shared = store.clone();
    let elapsed = spread(gets, move |i| {
        let store = shared.clone();
        async move {
            let n = i % creates.max(1);
            let scope = Scope::new(format!("scope-{}", n % 16));
            match store.get(&scope, &id(n)?, T0).await {
                Ok(Some(_)) => Ok(()),
                Ok(None) => Err(format!("task {n} not found")),
                Err(e) => Err(e.to_string()),
            }
        }
    })
    .await?;
    report("get", gets, elapsed);
    Ok(())
}

fn id(i: usize) -> Result<TaskId, String> {
    TaskId::parse(&format!("bench-{i:08}")).map_err(|e| e.to_string())
}

/// Runs `op(0..total)` from [`CONCURRENCY`] tasks, each taking the next index; the wall time.
async fn spread<F, Fut>(total: usize, op: F) -> Result<Duration, String>
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut set: JoinSet<Result<(), String>> = JoinSet::new();
    for _ in 0..CONCURRENCY {
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
