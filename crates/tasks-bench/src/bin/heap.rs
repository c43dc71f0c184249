//! `tasks-heap`: net heap bytes per stored completed task in the memory store, in one process
//! without HTTP, counted by an instrumented allocator (docs/benchmarks.md, "Heap per stored
//! task"); also the slowest single creation.
//!
//! `cargo run --release -p tasks-bench --bin tasks-heap -- --tasks 100000`

use std::alloc::System;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use tasks_core::{JsonObject, Task, TaskId, TaskState};
use tasks_runtime::store::MemoryStore;
use tasks_runtime::{text_result, unstable::encoded_len, Limits, RuntimeConfig};
use tasks_runtime::{Scope, TaskRuntime, Tool, ToolRegistry, Work};

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

/// The work of one `slow_compute` task with `seconds: 0`.
fn work() -> Work {
    let mut arguments = JsonObject::new();
    arguments.insert("seconds".into(), 0.into());
    Work::new(Scope::shared(), "slow_compute", arguments)
}

/// Creates `count` tasks and waits until no worker runs: the first task's id, the slowest
/// single creation, and how many took over a millisecond (a stall: the typical creation here
/// takes a few microseconds).
async fn store_tasks(
    runtime: &TaskRuntime,
    count: usize,
) -> Result<(Option<TaskId>, Duration, usize), String> {
    let (mut first, mut slowest, mut stalls) = (None, Duration::ZERO, 0);
    for _ in 0..count {
        let started = Instant::now();
        let task = runtime.create(work()).await;
        let took = started.elapsed();
        first.get_or_insert(task.map_err(|e| format!("create: {e:?}"))?.id().clone());
        slowest = slowest.max(took);
        stalls += usize::from(took > Duration::from_millis(1));
    }
    if !runtime.drain(Duration::from_secs(60)).await {
        return Err("workers still ran after 60 s".into());
    }
    Ok((first, slowest, stalls))
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
        .build();
    runtime.map_err(|e| e.to_string())?.block_on(async {
        let mut registry = ToolRegistry::new();
        let tool = Tool::new("slow_compute", "Completes at once", |_| async {
            Ok(text_result("Completed"))
        });
        registry.register(tool.with_policy(tasks_core::TaskPolicy::Optional));
        let limits = Limits::default()
            .with_max_tasks(10_000_000)
            .with_max_active_per_scope(10_000_000);
        let limits = limits.with_max_workers(1_000_000);
        let config = RuntimeConfig::default()
            .with_limits(limits)
            .with_ttl_ms(None);
        let tasks = TaskRuntime::new(Arc::new(MemoryStore::new()), registry, config);
        drop(store_tasks(&tasks, 1_000).await?);
        let region = Region::new(GLOBAL);
        let (first, slowest, stalls) = store_tasks(&tasks, args.tasks).await?;
        // Let finished workers and their wake-ups go before counting.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let change = region.change();
        let net = change.bytes_allocated as i64 - change.bytes_deallocated as i64
            + change.bytes_reallocated as i64;
        let per = |n: f64| n / args.tasks as f64;
        println!("tasks stored: {}", args.tasks);
        println!(
            "net heap bytes per stored completed task: {:.0}",
            per(net as f64)
        );
        let (allocations, frees) = (
            per(change.allocations as f64),
            per(change.deallocations as f64),
        );
        println!("allocations per task: {allocations:.1} (frees: {frees:.1})");
        let slowest = slowest.as_secs_f64() * 1000.0;
        println!("slowest single creation: {slowest:.3} ms; creations over 1 ms: {stalls}");
        println!("size_of::<Task>(): {}", std::mem::size_of::<Task>());
        println!("size_of::<Work>(): {}", std::mem::size_of::<Work>());
        if let Some(id) = first {
            let task = tasks.get(&Scope::shared(), &id).await;
            let task = task.map_err(|e| format!("get: {e:?}"))?;
            println!(
                "serialized Task (storage form): {} bytes",
                encoded_len(&*task)
            );
            if let TaskState::Completed { result } = task.state() {
                println!("serialized result: {} bytes", encoded_len(result));
                let text = heap_per_copy(|| result.clone());
                println!("the stored result (text): {text} heap bytes");
                let tree = result.to_object();
                let tree = heap_per_copy(|| tree.clone());
                println!("the same result as a Value tree: {tree} heap bytes");
            }
        }
        println!("serialized Work: {} bytes", encoded_len(&work()));
        Ok(())
    })
}
