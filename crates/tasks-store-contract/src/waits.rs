//! Waits end, on any store: the runtime-level checks of what a store must do for a waiter
//! ([`tasks_runtime::TaskRuntime::wait_task`], [`tasks_runtime::TaskRuntime::changes`]) to end, run from each
//! store's own tests with [`run_all`]:
//!
//! * [`reaping_ends_the_waits_of_a_task`]: a reaped task is announced as removed
//!   ([`tasks_runtime::TaskEvent::Removed`], which needs [`Store::reap`] to return the ids it deleted)
//!   and its wait ends with -32602 (which needs [`Store::get`] to miss it);
//! * [`a_wait_that_hears_nothing_ends_by_its_guard`]: a change committed by another runtime,
//!   of which this one hears nothing, still ends the wait, by the guard re-read
//!   ([`tasks_runtime::RuntimeConfig::wait_recheck`]).
//!
//! They run on the real clock (a few hundred milliseconds each) with a runtime clock set by
//! hand, so a store that runs its I/O on threads of its own needs no paused tokio clock.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tasks_runtime::Creation;

use tasks_core::{McpError, TaskStatus, Timestamp};
use tokio::sync::Notify;

use crate::{work, T0};
use tasks_runtime::store::Store;
use tasks_runtime::{
    text_result, Clock, RuntimeConfig, Scope, TaskRuntime, Tool, ToolRegistry, Wake,
};

/// How long any expected wake-up may take.
const PROMPT: Duration = Duration::from_secs(5);

/// Runs every check, each on a fresh store from `make`.
///
/// # Panics
/// When a wait does not end as it must; the message says which.
pub async fn run_all<S, F, Fut>(make: F)
where
    S: Store,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    reaping_ends_the_waits_of_a_task(Arc::new(make().await)).await;
    a_wait_that_hears_nothing_ends_by_its_guard(Arc::new(make().await)).await;
}

/// A clock the check sets.
struct Manual(AtomicU64);

impl Manual {
    fn at(ms_after_t0: u64) -> Arc<Self> {
        Arc::new(Manual(AtomicU64::new(T0.unix_millis() + ms_after_t0)))
    }

    fn set(&self, ms_after_t0: u64) {
        self.0
            .store(T0.unix_millis() + ms_after_t0, Ordering::SeqCst);
    }
}

impl Clock for Manual {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_millis(self.0.load(Ordering::SeqCst))
    }
}

/// `gated`: completes with "released" once `gate` is notified; stops when cancelled.
fn gated(gate: &Arc<Notify>) -> ToolRegistry {
    let gate = gate.clone();
    let mut tools = ToolRegistry::new();
    tools.register(Tool::new("gated", "Waits for the check", move |ctx| {
        let gate = gate.clone();
        async move {
            tokio::select! {
                () = gate.notified() => Ok(text_result("released")),
                () = ctx.cancellation().cancelled() => Err(tasks_runtime::ToolError::Cancelled),
            }
        }
    }));
    tools
}

/// A task with a 1 h TTL is reaped while a wait follows it: the waiters hear
/// [`Wake::Removed`], the wait ends with -32602 `Unknown or inaccessible taskId`, and the
/// task's worker is stopped. The runtime's clock (the one the store is given as `now`) jumps
/// past the expiry, tokio's timers do not move: the wait's own re-read at the task's expiry
/// and the guard are both an hour away, so only the removal can end the wait within
/// 5 s.
pub async fn reaping_ends_the_waits_of_a_task<S: Store>(store: Arc<S>) {
    const TTL_MS: u64 = 3_600_000;
    let clock = Manual::at(0);
    let gate = Arc::new(Notify::new());
    let config = RuntimeConfig::default().with_wait_recheck(Duration::from_secs(3600));
    let rt = TaskRuntime::with_clock(store, gated(&gate), config, clock.clone());
    let scope = Scope::shared();
    let task = rt
        .create(Creation::new(work(&scope, "gated")).ttl_ms(Some(TTL_MS)))
        .await
        .expect("created");
    let id = task.id().clone();
    let mut changes = rt.changes();
    let mut wait = rt.wait_task(&scope, &id);
    assert_eq!(
        wait.current().await.expect("the task is there").status(),
        TaskStatus::Working
    );

    clock.set(2 * TTL_MS);
    assert_eq!(rt.reap_now().await.expect("reaped"), 1, "the task expired");
    let removed = tokio::time::timeout(PROMPT, async {
        loop {
            match changes.next().await {
                Some(Wake::Removed(gone)) => return gone,
                Some(_) => {}
                None => panic!("the runtime's changes ended"),
            }
        }
    })
    .await
    .expect("reaping is announced to the waiters as a removal");
    assert_eq!(removed, id);
    let ended = tokio::time::timeout(PROMPT, wait.next())
        .await
        .expect("the wait ends once its task is reaped");
    assert_eq!(ended.expect_err("the task is gone"), McpError::UnknownTask);
    let stopped = tokio::time::timeout(PROMPT, async {
        while rt.busy_workers() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(stopped.is_ok(), "the reaped task's worker was stopped");
}

/// Two runtimes share the store, and the waiting one hears nothing of the other's commits
/// (no change feed between them, as when every hint is lost): the wait still ends, with the
/// completed task, by the guard re-read (every 200 ms here).
pub async fn a_wait_that_hears_nothing_ends_by_its_guard<S: Store>(store: Arc<S>) {
    let clock = Manual::at(0);
    let gate = Arc::new(Notify::new());
    let runner = TaskRuntime::with_clock(
        store.clone(),
        gated(&gate),
        RuntimeConfig::default(),
        clock.clone(),
    );
    let config = RuntimeConfig::default().with_wait_recheck(Duration::from_millis(200));
    let waiter = TaskRuntime::with_clock(store, ToolRegistry::new(), config, clock);
    let scope = Scope::shared();
    let id = runner
        .create(work(&scope, "gated"))
        .await
        .expect("created")
        .id()
        .clone();
    let mut wait = waiter.wait_task(&scope, &id);
    let first = wait.current().await.expect("the task is there");
    assert_eq!(first.status(), TaskStatus::Working);

    gate.notify_one();
    let done = tokio::time::timeout(PROMPT, wait.next())
        .await
        .expect("the guard re-read ends a wait that heard nothing")
        .expect("the task is there");
    assert_eq!(done.status(), TaskStatus::Completed);
    assert!(done.revision() > first.revision());
}
