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
//! Bounded: at most [`CAPACITY`] tasks, in [`SHARDS`] shards each evicting its least recently
//! read task ([`hashlink::LruCache`]).

use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::sync::{Arc, Mutex};

use hashlink::LruCache;
use tasks_core::{Task, TaskId, Timestamp};
use tasks_runtime::{Scope, Snapshot};

/// Settled tasks kept at most, per store instance.
pub(crate) const CAPACITY: usize = 16_384;

/// Shards, each behind its own lock, so concurrent reads rarely wait for each other.
pub(crate) const SHARDS: usize = 16;

/// One settled task.
struct Settled {
    task: Arc<Task>,
    scope: Scope,
}

/// The cache of one store instance.
pub(crate) struct SettledTasks {
    shards: Vec<Mutex<LruCache<TaskId, Settled>>>,
}

impl Default for SettledTasks {
    fn default() -> Self {
        SettledTasks {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(LruCache::new(CAPACITY / SHARDS)))
                .collect(),
        }
    }
}

impl SettledTasks {
    fn shard(&self, id: &TaskId) -> &Mutex<LruCache<TaskId, Settled>> {
        let mut hasher = DefaultHasher::new();
        id.as_str().hash(&mut hasher);
        let index = usize::try_from(hasher.finish() % SHARDS as u64).unwrap_or(0);
        &self.shards[index]
    }

    /// The settled task `id` of `scope` unexpired at `now`, when this instance has read it.
    /// `None` says nothing: the database decides.
    pub(crate) fn get(&self, scope: &Scope, id: &TaskId, now: Timestamp) -> Option<Snapshot> {
        let mut shard = self.shard(id).lock().unwrap_or_else(|e| e.into_inner());
        let settled = shard.get(id)?;
        if settled.scope != *scope || settled.task.is_expired(now) {
            return None;
        }
        Some(Snapshot {
            task: settled.task.clone(),
            scope: settled.scope.clone(),
        })
    }

    /// Keeps `snapshot` when its task is terminal (a read from the database).
    pub(crate) fn keep(&self, snapshot: &Snapshot) {
        if !snapshot.task.is_terminal() {
            return;
        }
        let id = snapshot.task.id().clone();
        let settled = Settled {
            task: snapshot.task.clone(),
            scope: snapshot.scope.clone(),
        };
        let mut shard = self.shard(&id).lock().unwrap_or_else(|e| e.into_inner());
        shard.insert(id, settled);
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
        let kept: usize = cache.shards.iter().map(|s| s.lock().unwrap().len()).sum();
        assert_eq!(kept, CAPACITY, "each shard holds its share");
        let last = TaskId::parse(&format!("t-{}", CAPACITY * 2 - 1)).unwrap();
        assert!(cache.get(&Scope::new("alice"), &last, at(3_000)).is_some());
        let first = TaskId::parse("t-0").unwrap();
        assert!(cache.get(&Scope::new("alice"), &first, at(3_000)).is_none());
    }
}
