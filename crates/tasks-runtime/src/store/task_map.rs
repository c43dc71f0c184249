//! The concurrent map from task ids that the stores and the runtime keep their per-task
//! entries in.
//!
//! A hash table grows by doubling: it allocates the larger table and moves every entry, on
//! the thread whose insert filled it, while every request waiting on that thread waits too.
//! With dashmap's default shards (four per CPU: 8 on 2 CPUs), a map of 1 000 000 tasks moves
//! over 100 000 entries at once: storing 1 000 000 tasks one after another, the slowest single
//! creation took 40–48 ms (`tasks-heap --tasks 1000000`, see `docs/benchmarks.md`). With
//! [`TASK_MAP_SHARDS`] shards each move is at most about 16 000 entries and the slowest
//! creation took about 9 ms, which is this machine's noise floor (128 and 256 shards did no
//! better). More shards are not free: each growth frees the previous table, and the allocator
//! keeps more of those smaller blocks (RSS per stored task at 1 000 000 tasks: 483 bytes with
//! 8 shards, 489 with 64, 504 with 128, 519 with 256).
//!
//! Keys are hashed with foldhash, seeded at random per map, instead of std's SipHash 1-3: a
//! creation hashes a task id about ten times (store, worker and publication maps), and SipHash
//! was about 3 % of a creation's instructions. foldhash is not a keyed PRF as SipHash is, so a
//! client who chose keys could aim for collisions; here the keys a map holds are task ids the
//! server minted (24 random bytes, or a keyed hash of a signed `requestState`), and a client's own strings are only looked up,
//! never inserted.

use dashmap::DashMap;
use tasks_core::TaskId;

/// The hasher of a [`TaskMap`]: foldhash, seeded at random per map.
pub type TaskHasher = foldhash::fast::RandomState;

/// Shards of a [`TaskMap`]: 1 000 000 tasks are about 16 000 per shard. An empty map costs one
/// cache-line-padded lock and an empty table per shard (8 KiB in all).
pub const TASK_MAP_SHARDS: usize = 64;

/// A concurrent map from task ids to `V`, sharded by [`TASK_MAP_SHARDS`].
pub type TaskMap<V> = DashMap<TaskId, V, TaskHasher>;

/// An empty [`TaskMap`].
pub fn task_map<V>() -> TaskMap<V> {
    DashMap::with_hasher_and_shard_amount(TaskHasher::default(), TASK_MAP_SHARDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_has_the_documented_shards() {
        let map: TaskMap<u8> = task_map();
        assert_eq!(map.shards().len(), TASK_MAP_SHARDS);
        for i in 0..10_000u32 {
            map.insert(TaskId::parse(&format!("t{i}")).unwrap(), 1);
        }
        // Entries spread over every shard, so no one table holds more than a small share.
        let largest = map.shards().iter().map(|s| s.read().len()).max().unwrap();
        assert!(
            largest < 10_000 / TASK_MAP_SHARDS * 3,
            "largest shard {largest}"
        );
    }
}
