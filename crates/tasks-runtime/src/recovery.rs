//! Recovery: this node's lease, taking over the tasks of dead nodes, and what happens to them.
//!
//! Every tick ([`crate::config::LeaseConfig::tick`]) the node renews its lease, then claims
//! orphaned tasks ([`crate::Store::claim_orphans`]): tasks whose node died (a crash, a
//! `kill -9`, a lease that ran out). A durable store on one host makes the previous process's
//! tasks orphans at start-up, so the same claim path recovers them. Each claimed task is then
//! failed or re-run according to its tool's [`Recovery`] policy.
//!
//! A node that finds its own lease lost (the store says so, or no renewal has succeeded for
//! longer than the lease minus one tick) stops every local worker at once and registers again
//! under a new id: its tasks may already run elsewhere, and the fencing tokens make any late
//! write of the old workers fail.
//!
//! # Where this differs from the researched design
//!
//! * One loop renews the lease and then claims, every tick (default 2 s, lease 30 s), instead of
//!   a heartbeat every 5 s and a separate claim loop every 2 s: renewing first means a node that
//!   was merely slow (a long pause of its event loop) finds its own lease lost and fences itself
//!   before it could claim its own tasks as orphans, and one timer is simpler to reason about.
//!   A renewal costs one small write per tick.
//! * A claimed task is claimed whatever this node's free worker slots: a re-run waits for a slot
//!   before it runs (it holds none while it waits), and a task failed by policy needs none.
//!   Claiming only as many as there are free slots would leave a crashed node's parked tasks
//!   (which hold no slot) unrecovered for a long time.
//! * No per-task expiry timers: the reaper stops the local worker of an expired task, as before.

use std::sync::{Arc, Weak};

use tasks_core::{Event, McpError};
use tokio::task::JoinHandle;

use crate::inner::{store_error, Inner, WorkerHandle};
use crate::registry::Recovery;
use crate::store::{Claimed, Liveness, NodeId};
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

async fn register(inner: &Inner) -> Result<(), McpError> {
    let now = inner.clock.now();
    inner
        .store
        .register_node(&inner.node(), now, inner.config.leases.lease_ms())
        .await
        .map_err(store_error)
}

/// Claims orphans in batches until none is left; returns how many were taken over.
pub(crate) async fn claim_pass(inner: &Arc<Inner>) -> Result<usize, McpError> {
    let mut taken = 0;
    loop {
        let now = inner.clock.now();
        let batch = inner
            .store
            .claim_orphans(&inner.node(), now, CLAIM_BATCH)
            .await
            .map_err(store_error)?;
        let len = batch.len();
        for claimed in batch {
            take_over(inner, claimed).await;
        }
        taken += len;
        if len < CLAIM_BATCH {
            return Ok(taken);
        }
    }
}

async fn take_over(inner: &Arc<Inner>, claimed: Claimed) {
    let Claimed {
        snapshot,
        work,
        lease,
    } = claimed;
    let id = snapshot.task.id().clone();
    let tool = inner.tools.get(&work.tool).cloned();
    let failure = match tool.as_ref().map(|tool| tool.recovery()) {
        None | Some(Recovery::Fail) => Some(MESSAGE_INTERRUPTED.to_owned()),
        Some(Recovery::Rerun { max_attempts }) if lease.attempt > max_attempts => {
            Some(message_exhausted(max_attempts))
        }
        Some(Recovery::Rerun { .. }) => None,
    };
    tracing::info!(
        task = %id.as_str(),
        attempt = lease.attempt,
        rerun = failure.is_none(),
        "taking over an interrupted task"
    );
    let (Some(tool), None) = (tool, failure.as_ref()) else {
        let error = worker::internal(failure.unwrap_or_default());
        let event = Event::Failed { error };
        if let Err(error) = inner
            .commit(&snapshot.scope, &id, event, Some(&lease))
            .await
        {
            tracing::debug!(%error, "interrupted task not failed (finished, expired or taken)");
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
        worker::run(inner, tool, id, work, handle, permit).await;
    });
}

/// Stops every local worker and registers again under a new node id.
async fn self_fence(inner: &Arc<Inner>) {
    let old = inner.node();
    tracing::warn!(node = %old, "node lease lost: stopping local workers and re-registering");
    let ids: Vec<_> = inner.workers.iter().map(|e| e.key().clone()).collect();
    for id in ids {
        if let Some((_, handle)) = inner.workers.remove(&id) {
            handle.cancel.cancel();
        }
    }
    match NodeId::random() {
        Ok(node) => {
            *inner
                .node
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = node;
        }
        Err(error) => tracing::error!(%error, "no randomness for a new node id"),
    }
    if let Err(error) = register(inner).await {
        tracing::warn!(%error, "re-registering the node failed");
    }
}

/// The liveness loop: registers the node, then every tick renews the lease (self-fencing
/// when it is lost) and takes over orphaned tasks. Stops when the runtime is dropped.
pub(crate) fn spawn(weak: Weak<Inner>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let Some(inner) = weak.upgrade() else { return };
        let leases = inner.config.leases.clone();
        if let Err(error) = register(&inner).await {
            tracing::warn!(%error, "registering the node failed");
        }
        drop(inner);
        let mut last_renewed = tokio::time::Instant::now();
        let mut interval = tokio::time::interval(leases.tick);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        interval.tick().await;
        loop {
            interval.tick().await;
            let Some(inner) = weak.upgrade() else { return };
            let sent = tokio::time::Instant::now();
            let now = inner.clock.now();
            let node = inner.node();
            match inner.store.heartbeat(&node, now, leases.lease_ms()).await {
                Ok(Liveness::Alive) => last_renewed = sent,
                Ok(Liveness::Lost) => {
                    self_fence(&inner).await;
                    last_renewed = tokio::time::Instant::now();
                }
                Err(error) => {
                    tracing::warn!(%error, "node heartbeat failed");
                    if sent.duration_since(last_renewed) + leases.tick >= leases.lease {
                        self_fence(&inner).await;
                        last_renewed = tokio::time::Instant::now();
                    }
                    continue;
                }
            }
            if let Err(error) = claim_pass(&inner).await {
                tracing::warn!(%error, "claiming orphaned tasks failed");
            }
        }
    })
}
