//! Following commits made by other nodes: the consumer of [`Store::changes`].
//!
//! With a store shared by several processes, a `tasks/update` or `tasks/cancel` may reach a
//! node other than the one whose worker runs the task, and a `subscriptions/listen` stream may
//! watch a task another node runs. Nodes never call each other: the store hints that a task
//! changed ([`Change::Task`]), and each node re-reads the task's row ([`Store::load`]) and
//! then
//!
//! * publishes the state on its status-event stream (the revision guard of
//!   [`Inner::publish`] drops a state already published, so a stream sees each revision at
//!   most once and never an older one after a newer);
//! * hands answers stored for keys its local worker waits on to that worker (answered on
//!   another node);
//! * stops its local worker when the task became terminal (cancelled on another node).
//!
//! Hints are only hints: they may be coalesced, late or lost. [`Change::Resync`] (sent by a
//! feed after it reconnected, or when this consumer fell behind) re-reads every task this node
//! runs or has published and that may still change, then tells every waiter to re-read what it
//! waits on ([`crate::TaskEvent::Resync`], counted in `mcp_change_feed_resyncs_total`); and
//! every [`LeaseConfig::sweep`] the node re-reads the tasks of its own workers, so a lost hint
//! delays an answer or a cancellation by at most that long. A task found gone by a re-read
//! (expired, or reaped by another node) is announced as removed
//! ([`crate::TaskEvent::Removed`]). Waiters also re-read on their own guard interval
//! ([`crate::RuntimeConfig::wait_recheck`]), which bounds what any other loss can cost.
//!
//! Hints are read only when something here cares: a local worker, or an open status-event
//! receiver (a listen stream). Hints arriving together are read in one [`Store::load`].
//!
//! [`LeaseConfig::sweep`]: crate::LeaseConfig::sweep

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};

use tasks_core::TaskId;
use tokio::sync::broadcast::{self, error::RecvError};

use crate::inner::Inner;
use crate::store::Change;

/// At most this many ids are read per [`Store::load`] call.
const LOAD_BATCH: usize = 256;

/// Runs until the runtime is dropped or the feed closes.
pub(crate) async fn run(weak: Weak<Inner>, mut changes: broadcast::Receiver<Change>) {
    let Some(period) = weak.upgrade().map(|inner| inner.config.leases.sweep) else {
        return;
    };
    let mut sweep = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let wanted = tokio::select! {
            change = changes.recv() => match change {
                Ok(Change::Task { id, revision }) => {
                    let Some(inner) = weak.upgrade() else { return };
                    let mut ids = BTreeSet::new();
                    hinted(&inner, id, revision, &mut ids);
                    // Take what else is queued, so hints arriving together cost one read.
                    let mut resync = None;
                    while ids.len() < LOAD_BATCH {
                        match changes.try_recv() {
                            Ok(Change::Task { id, revision }) => {
                                hinted(&inner, id, revision, &mut ids);
                            }
                            Ok(Change::Resync) => {
                                resync = Some("feed");
                                break;
                            }
                            Err(broadcast::error::TryRecvError::Lagged(_)) => {
                                resync = Some("lagged");
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    if let Some(reason) = resync {
                        ids.extend(resync_set(&inner));
                        resynced(&inner, reason, ids).await;
                        continue;
                    }
                    ids
                }
                Ok(Change::Resync) | Err(RecvError::Lagged(_)) => {
                    let Some(inner) = weak.upgrade() else { return };
                    let reason = if change.is_ok() { "feed" } else { "lagged" };
                    let ids = resync_set(&inner);
                    resynced(&inner, reason, ids).await;
                    continue;
                }
                Err(RecvError::Closed) => return,
            },
            _ = sweep.tick() => {
                let Some(inner) = weak.upgrade() else { return };
                inner.workers.iter().map(|entry| entry.key().clone()).collect()
            }
        };
        let Some(inner) = weak.upgrade() else { return };
        reread(&inner, wanted).await;
    }
}

/// After hints may have been lost (`reason`: `feed` or `lagged`, the metric's label): re-reads
/// `ids` (the resync set and any hinted ids), then tells every waiter to re-read what it waits
/// on, whether this node has published it or not.
async fn resynced(inner: &Arc<Inner>, reason: &'static str, ids: BTreeSet<TaskId>) {
    inner.metrics.feed_resync(reason);
    reread(inner, ids).await;
    inner.resync();
}

/// Adds `id` to `ids` if this node cares about it and has not published `revision` yet.
fn hinted(inner: &Inner, id: TaskId, revision: u64, ids: &mut BTreeSet<TaskId>) {
    let seen = inner
        .published
        .get(&id)
        .is_some_and(|last| last.revision() >= revision);
    let cares = inner.workers.contains_key(&id) || inner.followed();
    if cares && !seen {
        ids.insert(id);
    }
}

/// Every task that may have changed unseen: those of local workers, and those published
/// while not yet terminal.
fn resync_set(inner: &Inner) -> BTreeSet<TaskId> {
    let mut ids: BTreeSet<TaskId> = inner.workers.iter().map(|e| e.key().clone()).collect();
    ids.extend(
        inner
            .published
            .iter()
            .filter(|entry| !entry.terminal())
            .map(|entry| entry.key().clone()),
    );
    ids
}

/// Reads `ids` and brings this node in line with what is stored.
async fn reread(inner: &Arc<Inner>, ids: BTreeSet<TaskId>) {
    let ids: Vec<TaskId> = ids.into_iter().collect();
    for chunk in ids.chunks(LOAD_BATCH) {
        let now = inner.clock.now();
        match inner.store.load(chunk, now).await {
            Ok(snapshots) => {
                let mut missing: BTreeSet<&TaskId> = chunk.iter().collect();
                for snapshot in snapshots {
                    missing.remove(snapshot.task.id());
                    inner.publish(&snapshot.scope, &snapshot.task);
                    inner.follow(&snapshot.task);
                }
                // Expired or reaped (perhaps by another node): gone for every waiter too.
                for id in missing {
                    inner.removed(id);
                }
            }
            Err(error) => tracing::warn!(%error, "re-reading tasks changed elsewhere failed"),
        }
    }
}
