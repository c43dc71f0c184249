//! The cache of settled tasks: tasks this instance has read in a terminal state (`completed`,
//! `failed`, `cancelled`), kept in memory so that a `tasks/get` of a finished task needs no
//! round trip to the database.
//!
//! It needs no invalidation, on this node or any other, because a terminal task never changes
//! again: the reducer absorbs every event in a terminal state (`tasks_core::apply`), and a store
//! commits only the reducer's output, at the revision it was made from, so no write can follow
//! a terminal state. The one later change is the task's deletion by the reaper, which deletes
//! only expired tasks; here an entry is judged expired at the same `now`, by the same rule
//! (`expires_at <= now`), as the database's read, and then reads as absent (the runtime's clock
//! never goes back, and its task ids are random, so a reaped id does not come back as another
//! task while an entry for it could still answer). So an entry answers
//! exactly what the database would until the task expires, and every read of a task not yet
//! terminal goes to the database, which has every node's acknowledged writes: a read never goes
//! backwards and an acknowledged write is readable on every node at once.
//!
//! A quarantined row ([`crate::quarantine`]) needs nothing either: only a task that decoded is
//! ever kept, the same text always decodes the same way, so a row kept here is never one that
//! gets quarantined; the failed task standing in a quarantined row's place is terminal and kept
//! like any other.
//!
//! What it does not see: a terminal row deleted or edited by hand, outside this store, which no
//! statement of this crate announces. Such a task is answered as this instance last read it
//! until it expires, is evicted, or the process restarts (docs/deployment.md, "Operations",
//! says to restart the nodes one at a time after such an edit).
//!
//! Bounded: at most [`CAPACITY`] tasks and [`BUDGET_BYTES`] of task JSON, in [`SHARDS`] shards
//! each evicting its least recently read tasks ([`hashlink::LruCache`]); a task whose JSON is
//! larger than [`MAX_TASK_BYTES`] (a large result) is not kept and is read from the database
//! each time.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::sync::{Arc, Mutex};

use hashlink::LruCache;
use tasks_core::{Task, TaskId, Timestamp};
use tasks_runtime::store::Snapshot;
use tasks_runtime::Scope;

/// Settled tasks kept at most, per store instance.
pub(crate) const CAPACITY: usize = 16_384;

/// The task JSON kept at most, per store instance, in bytes (64 MiB).
pub(crate) const BUDGET_BYTES: usize = 64 * 1024 * 1024;

/// A task whose JSON is larger than this many bytes (64 KiB) is not kept.
pub(crate) const MAX_TASK_BYTES: usize = 64 * 1024;

/// Shards, each behind its own lock, so concurrent reads rarely wait for each other.
pub(crate) const SHARDS: usize = 16;

/// One settled task.
struct Settled {
    task: Arc<Task>,
    scope: Scope,
    /// The length of its JSON, in bytes.
    bytes: usize,
}

/// One shard: its tasks, least recently read first, and the bytes they hold.
struct Shard {
    tasks: LruCache<TaskId, Settled>,
    bytes: usize,
}

/// The cache of one store instance.
pub(crate) struct SettledTasks {
    shards: Vec<Mutex<Shard>>,
}

impl Default for SettledTasks {
    fn default() -> Self {
        SettledTasks {
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard {
                        tasks: LruCache::new_unbounded(),
                        bytes: 0,
                    })
                })
                .collect(),
        }
    }
}

impl SettledTasks {
    fn shard(&self, id: &TaskId) -> &Mutex<Shard> {
        let mut hasher = DefaultHasher::new();
        id.as_str().hash(&mut hasher);
        let index = usize::try_from(hasher.finish() % SHARDS as u64).unwrap_or(0);
        &self.shards[index]
    }

    /// The settled task `id` of `scope` unexpired at `now`, when this instance has read it.
    /// `None` says nothing: the database decides.
    pub(crate) fn get(&self, scope: &Scope, id: &TaskId, now: Timestamp) -> Option<Snapshot> {
        let mut shard = self.shard(id).lock().unwrap_or_else(|e| e.into_inner());
        let settled = shard.tasks.get(id)?;
        if settled.scope != *scope || settled.task.is_expired(now) {
            return None;
        }
        Some(Snapshot {
            task: settled.task.clone(),
            scope: settled.scope.clone(),
        })
    }

    /// Keeps `snapshot` when its task is terminal (a read from the database) and its JSON is at
    /// most [`MAX_TASK_BYTES`], evicting the shard's least recently read tasks while it holds
    /// more than its share of [`CAPACITY`] or [`BUDGET_BYTES`].
    pub(crate) fn keep(&self, snapshot: &Snapshot) {
        if !snapshot.task.is_terminal() {
            return;
        }
        let bytes = tasks_runtime::unstable::encoded_len(&*snapshot.task);
        if bytes > MAX_TASK_BYTES {
            return;
        }
        let id = snapshot.task.id().clone();
        let settled = Settled {
            task: snapshot.task.clone(),
            scope: snapshot.scope.clone(),
            bytes,
        };
        let mut shard = self.shard(&id).lock().unwrap_or_else(|e| e.into_inner());
        if let Some(replaced) = shard.tasks.insert(id, settled) {
            shard.bytes -= replaced.bytes;
        }
        shard.bytes += bytes;
        while shard.tasks.len() > CAPACITY / SHARDS || shard.bytes > BUDGET_BYTES / SHARDS {
            let Some((_, evicted)) = shard.tasks.remove_lru() else {
                break;
            };
            shard.bytes -= evicted.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tasks_core::{apply, Event, NewTask};

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_unix_millis(ms)
    }

    /// Task `id` of alice, created at 1 000 with a TTL of 10 000 ms, cancelled at 2 000 when
    /// `terminal`.
    fn snapshot(id: &str, terminal: bool) -> Snapshot {
        let id = TaskId::parse(id).unwrap();
        let task = NewTask::new(id, at(1_000), Some(10_000), None).into_task();
        let task = if terminal {
            apply(&task, Event::Cancelled, at(2_000))
                .unwrap()
                .into_update()
                .unwrap()
                .into_task()
        } else {
            task
        };
        Snapshot {
            task: Arc::new(task),
            scope: Scope::new("alice"),
        }
    }

    #[test]
    fn only_terminal_tasks_are_kept_and_answered_until_they_expire() {
        let cache = SettledTasks::default();
        let id = TaskId::parse("t-1").unwrap();
        let alice = Scope::new("alice");
        cache.keep(&snapshot("t-1", false));
        assert!(
            cache.get(&alice, &id, at(3_000)).is_none(),
            "a working task"
        );
        let settled = snapshot("t-1", true);
        cache.keep(&settled);
        let read = cache.get(&alice, &id, at(3_000)).expect("kept");
        assert_eq!(*read.task, *settled.task);
        assert_eq!(read.scope, alice);
        assert!(cache.get(&Scope::new("bob"), &id, at(3_000)).is_none());
        // Expired from 11 000 on, as the database's `expires_at_ms > now` says.
        assert!(cache.get(&alice, &id, at(10_999)).is_some());
        assert!(cache.get(&alice, &id, at(11_000)).is_none());
    }

    #[test]
    fn it_keeps_at_most_its_capacity_and_the_latest_read() {
        let cache = SettledTasks::default();
        for i in 0..(CAPACITY * 2) {
            cache.keep(&snapshot(&format!("t-{i}"), true));
        }
        let kept: usize = cache
            .shards
            .iter()
            .map(|s| s.lock().unwrap().tasks.len())
            .sum();
        assert_eq!(kept, CAPACITY, "each shard holds its share");
        let last = TaskId::parse(&format!("t-{}", CAPACITY * 2 - 1)).unwrap();
        assert!(cache.get(&Scope::new("alice"), &last, at(3_000)).is_some());
        let first = TaskId::parse("t-0").unwrap();
        assert!(cache.get(&Scope::new("alice"), &first, at(3_000)).is_none());
    }

    /// Task `id` of alice completed with a text of `text_bytes` bytes.
    fn completed(id: &str, text_bytes: usize) -> Snapshot {
        let task = snapshot(id, false);
        let result = serde_json::json!({
            "content": [{"type": "text", "text": "x".repeat(text_bytes)}],
            "isError": false
        });
        let serde_json::Value::Object(result) = result else {
            unreachable!()
        };
        let done = apply(
            &task.task,
            Event::Completed {
                result: result.into(),
            },
            at(2_000),
        )
        .unwrap()
        .into_update()
        .unwrap()
        .into_task();
        Snapshot {
            task: Arc::new(done),
            scope: task.scope,
        }
    }

    #[test]
    fn large_tasks_are_not_kept_and_the_bytes_stay_within_the_budget() {
        let cache = SettledTasks::default();
        let alice = Scope::new("alice");
        cache.keep(&completed("big", MAX_TASK_BYTES));
        let big = TaskId::parse("big").unwrap();
        assert!(
            cache.get(&alice, &big, at(3_000)).is_none(),
            "over the limit"
        );
        // 48 KiB tasks: a shard's 4 MiB share holds about 85 of them, not its 1 024.
        for i in 0..(SHARDS * 200) {
            cache.keep(&completed(&format!("t-{i}"), 48 * 1024));
        }
        for shard in &cache.shards {
            let shard = shard.lock().unwrap();
            assert!(shard.bytes <= BUDGET_BYTES / SHARDS, "{}", shard.bytes);
            assert!(shard.tasks.len() < CAPACITY / SHARDS);
            let counted: usize = shard.tasks.iter().map(|(_, s)| s.bytes).sum();
            assert_eq!(counted, shard.bytes, "the shard counts what it holds");
        }
    }
}
