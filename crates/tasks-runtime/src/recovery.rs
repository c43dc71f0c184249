//! Recovery: this node's lease, taking over the tasks of dead nodes, and what happens to them.
//!
//! The design notes are on [`Recovery`](crate::Recovery).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use tasks_core::{Event, McpError, TaskStatus};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::config::LeaseConfig;
use crate::inner::{patiently, store_error, Inner, WorkerHandle};
use crate::registry::{Recovery, Tool};
use crate::store::{Claimed, Lease, Liveness, NodeId, StoreError};
use crate::worker;

/// `error.message` of a task failed by recovery under [`Recovery::Fail`] (or whose tool is no
/// longer registered).
pub const MESSAGE_INTERRUPTED: &str =
    "Task interrupted: the server stopped while it ran; it was not retried";

fn message_exhausted(max_attempts: u32) -> String {
    format!(
        "Task interrupted: the server stopped while it ran, and it had already run {max_attempts} times"
    )
}

/// Tasks claimed per store call.
const CLAIM_BATCH: usize = 256;

/// Registers this node and takes over every orphaned task; returns how many were taken over.
pub(crate) async fn start(inner: &Arc<Inner>) -> Result<usize, McpError> {
    register(inner).await?;
    claim_pass(inner).await
}

/// Registers this node. From the first call on, every create requires the owner's lease
/// ([`crate::store::CreateLimits::lease_required`]): a node whose lease ran out, or whose new
/// id after a fence is not registered yet, stores no task that another node would take over.
async fn register(inner: &Inner) -> Result<(), McpError> {
    inner.leased.store(true, Ordering::SeqCst);
    let now = inner.clock.now();
    inner
        .store
        .register_node(&inner.node(), now, inner.config.leases.lease_ms())
        .await
        .map_err(store_error)
}

/// Claims orphans in batches until none is left; returns how many were taken over. The tasks
/// of a batch are taken over concurrently (a durable store commits their failures together).
/// A claim whose answer was lost ([`StoreError::Interrupted`]) may have committed: the tasks
/// it took are this node's, and nothing runs them, so it leaves an adoption owed
/// ([`adopt_held`], made on the next tick).
pub(crate) async fn claim_pass(inner: &Arc<Inner>) -> Result<usize, McpError> {
    let mut owed = inner.claims.lock().await;
    let mut taken = 0;
    loop {
        let now = inner.clock.now();
        let batch = match inner
            .store
            .claim_orphans(&inner.node(), now, CLAIM_BATCH)
            .await
        {
            Ok(batch) => batch,
            Err(error) => {
                *owed |= matches!(error, StoreError::Interrupted(_));
                return Err(store_error(error));
            }
        };
        let len = batch.len();
        inner.metrics.took_over(len);
        futures_util::future::join_all(batch.into_iter().map(|claimed| take_over(inner, claimed)))
            .await;
        taken += len;
        if len < CLAIM_BATCH {
            return Ok(taken);
        }
    }
}

/// What [`adopt_held`] found.
#[derive(Debug, PartialEq, Eq)]
enum Adopted {
    /// Every task this node held under a claim has a worker now; this many were started.
    All(usize),
    /// The store cannot list what a node holds ([`crate::store::Store::held`] answered `None`).
    Unknowable,
}

/// Makes good an owed adoption (a claim whose outcome was unknown, see [`claim_pass`]): takes
/// over every task this node holds under a claim (generation above 1) that no local worker
/// runs, exactly as the claim would have. A task this node created (generation 1) is left
/// alone: its creation starts its worker, or adopts it after an interrupted create. Nothing
/// when no adoption is owed.
async fn adopt_held(inner: &Arc<Inner>) -> Result<Adopted, StoreError> {
    let mut owed = inner.claims.lock().await;
    if !*owed {
        return Ok(Adopted::All(0));
    }
    let node = inner.node();
    let mut after: Option<tasks_core::TaskId> = None;
    let mut adopted = 0;
    loop {
        let now = inner.clock.now();
        let Some(batch) = inner
            .store
            .held(&node, now, after.as_ref(), CLAIM_BATCH)
            .await?
        else {
            return Ok(Adopted::Unknowable);
        };
        let len = batch.len();
        after = batch.last().map(|held| held.snapshot.task.id().clone());
        let unrun: Vec<Claimed> = batch
            .into_iter()
            .filter(|held| {
                held.lease.generation > 1 && !inner.workers.contains_key(held.snapshot.task.id())
            })
            .collect();
        if !unrun.is_empty() {
            tracing::warn!(
                tasks = unrun.len(),
                "a claim whose answer was lost had taken tasks: taking them over now"
            );
        }
        adopted += unrun.len();
        inner.metrics.took_over(unrun.len());
        futures_util::future::join_all(unrun.into_iter().map(|held| take_over(inner, held))).await;
        if len < CLAIM_BATCH {
            *owed = false;
            return Ok(Adopted::All(adopted));
        }
    }
}

/// Why a claimed task is failed instead of re-run, if it is.
fn failure(tool: Option<&Arc<Tool>>, claimed: &Claimed) -> Option<String> {
    let Some(tool) = tool else {
        return Some(MESSAGE_INTERRUPTED.to_owned());
    };
    match tool.recovery() {
        Recovery::Fail => Some(MESSAGE_INTERRUPTED.to_owned()),
        // A task that was waiting for input had not resumed its work: its re-run stops at the
        // same question, so restarts while it waits do not use up its attempts.
        Recovery::Rerun { .. } if claimed.snapshot.task.status() == TaskStatus::InputRequired => {
            None
        }
        // `lease.attempt` counts the runs started so far (a claim charges none).
        Recovery::Rerun { max_attempts } if claimed.lease.attempt >= max_attempts => {
            Some(message_exhausted(max_attempts))
        }
        Recovery::Rerun { .. } => None,
    }
}

async fn take_over(inner: &Arc<Inner>, claimed: Claimed) {
    let tool = inner.tools.load().get(&claimed.work.tool).cloned();
    let failure = failure(tool.as_ref(), &claimed);
    let Claimed {
        snapshot,
        work,
        lease,
    } = claimed;
    let id = snapshot.task.id().clone();
    tracing::info!(
        task = %id.as_str(),
        attempt = lease.attempt,
        outcome = if failure.is_none() { "re-run" } else { "failed" },
        "taking over an interrupted task"
    );
    let (Some(tool), None) = (tool, failure.as_ref()) else {
        let event = Event::Failed {
            error: tasks_core::JsonRpcError::internal(failure.unwrap_or_default()),
        };
        match inner
            .commit(&snapshot.scope, &id, event.clone(), Some(&lease))
            .await
        {
            Ok(_) | Err(McpError::UnknownTask) => {}
            // The store failed: keep trying in the background, so the task is not left
            // `working` under this live node with nothing running it.
            Err(_) => {
                let inner = inner.clone();
                tokio::spawn(async move {
                    inner
                        .commit_final(&snapshot.scope, &id, event, &lease, &Default::default())
                        .await;
                });
            }
        }
        return;
    };
    let handle = Arc::new(WorkerHandle::new(lease));
    inner.workers.insert(id.clone(), handle.clone());
    let inner = inner.clone();
    tokio::spawn(async move {
        let cancel = handle.cancel.clone();
        let permit = tokio::select! {
            permit = inner.slots.clone().acquire_owned() => permit,
            _ = cancel.cancelled() => {
                inner.forget_worker(&id, &handle);
                return;
            }
        };
        let Ok(permit) = permit else { return };
        let Some(lease) = charge(&inner, &id, &handle).await else {
            inner.forget_worker(&id, &handle);
            return;
        };
        worker::run(inner, tool, id, work, handle, lease, permit).await;
    });
}

/// Charges the re-run of `id` its attempt, right before its tool starts; the lease with the
/// new attempt, or `None` when the task is no longer this worker's (finished, cancelled,
/// expired, taken over) or the worker was stopped. Retries while the store fails
/// ([`patiently`]): a re-run that never starts would leave the task `working` under a live
/// node with nothing running it.
async fn charge(inner: &Inner, id: &tasks_core::TaskId, handle: &WorkerHandle) -> Option<Lease> {
    if handle.cancel.is_cancelled() {
        return None;
    }
    let charged = patiently(&handle.cancel, || async {
        let now = inner.clock.now();
        inner
            .store
            .charge_attempt(id, &handle.lease, now)
            .await
            .map_err(store_error)
    })
    .await?;
    charged.ok().flatten()
}

/// Stops every local worker and registers again under a new node id (`reason`: `lost` or
/// `stalled`, see [`renew`]); answers whether the new id is registered.
async fn self_fence(inner: &Arc<Inner>, reason: &'static str) -> bool {
    let old = inner.node();
    inner.metrics.self_fenced(reason);
    tracing::warn!(node = %old, reason, "node lease lost: stopping local workers and re-registering");
    inner.stop_workers();
    match inner.config.entropy.bytes() {
        Ok(bytes) => {
            *crate::lock::write(&inner.node) = NodeId::from_bytes(bytes);
        }
        Err(error) => tracing::error!(%error, "no randomness for a new node id"),
    }
    match register(inner).await {
        Ok(()) => true,
        Err(error) => {
            tracing::warn!(%error, "re-registering the node failed; retrying every tick");
            false
        }
    }
}

/// The liveness loop: registers the node, then every tick renews the lease (self-fencing
/// when it is lost) and, independently, takes over orphaned tasks: a long claim pass never
/// delays a renewal. With a store shared by several processes it also follows their commits
/// ([`crate::follow`]), subscribed before anything is read. Stops when the runtime is dropped
/// or the handle is aborted.
pub(crate) fn spawn(weak: Weak<Inner>) -> JoinHandle<()> {
    let changes = weak.upgrade().and_then(|inner| inner.store.changes());
    tokio::spawn(async move {
        let Some(inner) = weak.upgrade() else { return };
        let leases = inner.config.leases.clone();
        let registered = match register(&inner).await {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(%error, "registering the node failed; retrying every tick");
                false
            }
        };
        drop(inner);
        // Whether the node's current id is registered: claims are made only under a
        // registered id (after a fence whose registration failed, the new id is nobody's, and
        // another node would take what it claimed).
        let live = Arc::new(AtomicBool::new(registered));
        // Asked by the claim loop when a claim's outcome is unknown and the store cannot say
        // what this node holds: fencing hands whatever that claim took to the next claim.
        let fence = Arc::new(Notify::new());
        let follow = async {
            if let Some(changes) = changes {
                crate::follow::run(weak.clone(), changes).await;
            }
        };
        tokio::join!(
            renew(weak.clone(), leases.clone(), live.clone(), fence.clone()),
            claim(weak.clone(), leases, live, fence),
            follow
        );
    })
}

fn ticks(period: std::time::Duration) -> tokio::time::Interval {
    let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    interval
}

/// Renews the lease every tick; self-fences when it is lost, or when no renewal has succeeded
/// for the lease minus one tick (the store failing or stalled).
///
/// That second fence is driven by this node's own clock, counted from when the last successful
/// renewal was sent: it fires at that moment even while a renewal is still waiting for the
/// store, never later when one finally answers. Each renewal is also bounded by
/// [`RuntimeConfig::renewal_deadline`](crate::RuntimeConfig::renewal_deadline), so one that does
/// not answer in time counts as failed and marks the store unwritable
/// ([`crate::TaskRuntime::store_writable`]). After a fence whose registration failed, each tick
/// registers again instead of renewing, and nothing is claimed under the new id meanwhile.
/// `fence_request` asks for a fence at once (reason `claim_unknown`, see [`claim`]).
async fn renew(
    weak: Weak<Inner>,
    leases: LeaseConfig,
    live: Arc<AtomicBool>,
    fence_request: Arc<Notify>,
) {
    let mut registered = live.load(Ordering::SeqCst);
    let Some(renewal_deadline) = weak.upgrade().map(|inner| inner.config.renewal_deadline()) else {
        return;
    };
    // The lease minus one tick, but never before the renewal due one tick after the last
    // success has had its deadline to answer: a short lease must not fence a healthy node.
    let grace = leases
        .effective_lease()
        .saturating_sub(leases.tick)
        .max(leases.tick + renewal_deadline);
    let mut last_renewed = tokio::time::Instant::now();
    let mut interval = ticks(leases.tick);
    loop {
        live.store(registered, Ordering::SeqCst);
        let is_registered = registered;
        let renewal = async {
            interval.tick().await;
            let inner = weak.upgrade()?;
            let sent = tokio::time::Instant::now();
            let now = inner.clock.now();
            let renewed = if is_registered {
                inner
                    .store
                    .heartbeat(&inner.node(), now, leases.lease_ms())
                    .await
            } else {
                register_again(&inner, now, &leases).await
            };
            Some((inner, sent, renewed))
        };
        let fence_at = last_renewed + grace;
        let fence = async {
            if is_registered {
                tokio::time::sleep_until(fence_at).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        let renewed = tokio::select! {
            biased;
            () = fence => Err("stalled"),
            () = fence_request.notified() => Err("claim_unknown"),
            renewed = renewal => match renewed {
                Some(renewed) => Ok(renewed),
                None => return,
            },
        };
        let (inner, sent, renewed) = match renewed {
            Ok(renewed) => renewed,
            Err(reason) => {
                let Some(inner) = weak.upgrade() else { return };
                if reason == "stalled" {
                    // No renewal has succeeded since `last_renewed`: another node may claim
                    // this node's tasks one tick from now. (A renewal cut short here is not
                    // counted: each one that ran out of its deadline already was.)
                    inner
                        .store_writable
                        .store(false, std::sync::atomic::Ordering::Relaxed);
                }
                live.store(false, Ordering::SeqCst);
                registered = self_fence(&inner, reason).await;
                last_renewed = tokio::time::Instant::now();
                continue;
            }
        };
        inner
            .store_writable
            .store(renewed.is_ok(), std::sync::atomic::Ordering::Relaxed);
        match renewed {
            Ok(Liveness::Alive) => {
                inner.metrics.renewal("ok");
                last_renewed = sent;
                registered = true;
            }
            Ok(Liveness::Lost) => {
                inner.metrics.renewal("lost");
                live.store(false, Ordering::SeqCst);
                registered = self_fence(&inner, "lost").await;
                last_renewed = tokio::time::Instant::now();
            }
            Err(error) => {
                inner.metrics.renewal("failed");
                tracing::warn!(%error, "node heartbeat failed");
            }
        }
    }
}

/// Registers this node (under the id a fence gave it) once more: a registration that
/// succeeds counts as a renewal.
async fn register_again(
    inner: &Inner,
    now: tasks_core::Timestamp,
    leases: &LeaseConfig,
) -> Result<Liveness, crate::store::StoreError> {
    inner
        .store
        .register_node(&inner.node(), now, leases.lease_ms())
        .await
        .map(|()| Liveness::Alive)
}

/// Takes over orphaned tasks every tick, while the node's id is registered (`live`); first
/// makes good an owed adoption ([`adopt_held`]), or, when the store cannot list what a node
/// holds, asks the liveness loop to fence the node (`fence`).
async fn claim(weak: Weak<Inner>, leases: LeaseConfig, live: Arc<AtomicBool>, fence: Arc<Notify>) {
    let mut interval = ticks(leases.tick);
    loop {
        interval.tick().await;
        if !live.load(Ordering::SeqCst) {
            continue;
        }
        let Some(inner) = weak.upgrade() else { return };
        match adopt_held(&inner).await {
            Ok(Adopted::All(_)) => {}
            Ok(Adopted::Unknowable) => {
                *inner.claims.lock().await = false;
                fence.notify_one();
                continue;
            }
            Err(error) => {
                tracing::warn!(%error, "listing the tasks this node holds failed; retrying next tick");
                continue;
            }
        }
        if let Err(error) = claim_pass(&inner).await {
            tracing::warn!(%error, "claiming orphaned tasks failed");
        }
    }
}
