//! `tasks-heap`: heap bytes per stored task in the memory store, counted by an instrumented
//! allocator: the per-task memory target is checked with a counting allocator as well as RSS
//! (docs/benchmarks.md, round 2).
//!
//! In one process, without HTTP: a `TaskRuntime` on a `MemoryStore` with one tool that
//! completes at once with the fixture's `slow_compute` result (`{"content": [{"type": "text",
//! "text": "Completed"}]}`). After 1 000 warm-up tasks, it creates `--tasks` more (default
//! 100 000), waits until every one is `completed`, and prints the net heap bytes (allocated
//! minus freed) per task, with the in-memory sizes of the types a stored task is made of and
//! the serialized size of its parts, for the byte budget in docs/benchmarks.md. It also prints
//! the slowest single creation, which shows a stall such as a large table growing at once.
//!
//! `cargo run --release -p tasks-bench --bin tasks-heap -- --tasks 100000`

use std::alloc::System;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::json;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use tasks_core::{JsonObject, Task, TaskStatus};
use tasks_runtime::MemoryStore;
use tasks_runtime::{text_result, RuntimeConfig, Scope, TaskRuntime, Tool, ToolRegistry};
use tasks_runtime::{unstable::encoded_len, Work};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Heap bytes per stored completed task in the memory store.
#[derive(Debug, Parser)]
#[command(name = "tasks-heap")]
struct Args {
    /// Tasks to store after the warm-up.
    #[arg(long, default_value_t = 100_000)]
    tasks: usize,
}

fn work(arguments: &JsonObject) -> Work {
    Work {
        tool: "slow_compute".into(),
        arguments: arguments.clone(),
        input_responses: None,
        client_capabilities: JsonObject::new(),
        scope: Scope::shared(),
        trace_parent: None,
        sealed_principal: None,
    }
}

/// How long single creations took: the slowest, and how many took over a millisecond (a
/// stall: the typical creation here takes a few microseconds).
#[derive(Debug, Default)]
struct Stalls {
    slowest: Duration,
    over_1_ms: usize,
}

async fn store_tasks(
    runtime: &TaskRuntime,
    count: usize,
) -> Result<(Vec<Arc<Task>>, Stalls), String> {
    let arguments = json!({"seconds": 0})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut ids = Vec::with_capacity(count);
    let mut stalls = Stalls::default();
    for _ in 0..count {
        let started = Instant::now();
        let task = runtime
            .create_task(work(&arguments))
            .await
            .map_err(|e| format!("create: {e:?}"))?;
        let took = started.elapsed();
        stalls.slowest = stalls.slowest.max(took);
        stalls.over_1_ms += usize::from(took > Duration::from_millis(1));
        ids.push(task.id().clone());
    }
    let mut last = Vec::with_capacity(count);
    for id in ids {
        loop {
            let task = runtime
                .get(&Scope::shared(), &id)
                .await
                .map_err(|e| format!("get: {e:?}"))?;
            if task.status() == TaskStatus::Completed {
                last.push(task);
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    Ok((last, stalls))
}

/// Heap bytes one value made by `make` keeps (the mean of 1 000, the containers excluded).
fn heap_per_copy<T>(make: impl Fn() -> T) -> usize {
    let region = Region::new(GLOBAL);
    let copies: Vec<T> = (0..1_000).map(|_| make()).collect();
    let change = region.change();
    drop(copies);
    (change.bytes_allocated - 1_000 * std::mem::size_of::<T>()) / 1_000
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let mut registry = ToolRegistry::new();
        registry.register(
            Tool::new("slow_compute", "Completes at once", |_ctx| async {
                Ok(text_result("Completed"))
            })
            .with_policy(tasks_core::TaskPolicy::Optional),
        );
        let limits = tasks_runtime::Limits::default()
            .with_max_tasks(10_000_000)
            .with_max_active_per_scope(10_000_000)
            .with_max_workers(1_000_000);
        let config = RuntimeConfig::default()
            .with_limits(limits)
            .with_ttl_ms(None);
        let tasks = TaskRuntime::new(Arc::new(MemoryStore::new()), registry, config);
        drop(store_tasks(&tasks, 1_000).await?);
        let region = Region::new(GLOBAL);
        let (stored, stalls) = store_tasks(&tasks, args.tasks).await?;
        let sample = stored.first().cloned();
        drop(stored);
        // Let finished workers and their wake-ups go before counting.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let change = region.change();
        let net = change.bytes_allocated as i64 - change.bytes_deallocated as i64
            + change.bytes_reallocated as i64;
        let per_task = net as f64 / args.tasks as f64;
        println!("tasks stored: {}", args.tasks);
        println!("net heap bytes per stored completed task: {per_task:.0}");
        println!(
            "allocations per task: {:.1} (frees: {:.1})",
            change.allocations as f64 / args.tasks as f64,
            change.deallocations as f64 / args.tasks as f64
        );
        println!(
            "slowest single creation: {:.3} ms; creations over 1 ms: {}",
            stalls.slowest.as_secs_f64() * 1000.0,
            stalls.over_1_ms
        );
        println!("size_of::<Task>(): {}", std::mem::size_of::<Task>());
        println!("size_of::<Work>(): {}", std::mem::size_of::<Work>());
        if let Some(task) = sample {
            println!(
                "serialized Task (storage form): {} bytes",
                encoded_len(&*task)
            );
            if let tasks_core::TaskState::Completed { result } = task.state() {
                println!("serialized result: {} bytes", encoded_len(result));
                println!(
                    "the stored result (text): {} heap bytes",
                    heap_per_copy(|| result.clone())
                );
                let tree = result.to_object();
                println!(
                    "the same result as a Value tree: {} heap bytes",
                    heap_per_copy(|| tree.clone())
                );
            }
        }
        println!(
            "serialized Work: {} bytes",
            encoded_len(&work(
                &json!({"seconds": 0})
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            ))
        );
        Ok::<(), String>(())
    })
}
