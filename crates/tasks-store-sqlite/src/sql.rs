//! The SQL statements the writer runs (each prepared once and cached by the connection) and
//! the conversions between the runtime's types and column values.

use tasks_core::{TaskStatus, Timestamp};
use tasks_runtime::store::NodeId;

/// Inserts a created task (`?10` its tool; `lastUpdatedAt` is its creation time `?5`); a taken
/// id changes nothing (the caller sees zero changed rows).
pub(crate) const INSERT_TASK: &str = "\
INSERT INTO tasks (id, scope, revision, status, created_at_ms, expires_at_ms, task, work, \
                   owner_node, generation, attempt, tool, updated_at_ms) \
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, 1, ?10, ?5) \
ON CONFLICT (id) DO NOTHING";

/// The set part of a compare-and-set write: the new task, its `lastUpdatedAt` (`?5`, ms), and
/// `work` cleared once terminal (`tool` is kept).
/// `?9` is 1 when the new task is terminal and the stored one must still be active (so the
/// writer knows the task *became* terminal); 0 accepts any stored status. `?6` (the expiry
/// time) is not set, nor is the creation time: no reducer event changes `createdAt` or `ttlMs`
/// (a property test of tasks-core), and leaving `expires_at_ms` out of the `SET` spares the
/// write an update of the `tasks_expiry` index.
macro_rules! cas_set {
    () => {
        "UPDATE tasks SET revision = ?3, status = ?4, updated_at_ms = ?5, \
                          task = ?7, work = CASE WHEN ?8 THEN NULL ELSE work END \
         WHERE id = ?1 AND revision = ?2 \
           AND (expires_at_ms IS NULL OR expires_at_ms > ?10) \
           AND (?9 = 0 OR status IN ('working', 'input_required'))"
    };
}

/// Compare-and-set under a request's authority: `?11` is the scope. Changes one row or none.
///
/// No `RETURNING`: SQLite collects returned rows in a temporary table built and dropped per
/// statement, which cost about a third of a durable task's writer CPU (docs/benchmarks.md,
/// round 4); the scope is the request's, or for a worker's write the read model's ([`SCOPE_OF`]
/// when the model lacks the task).
pub(crate) const CAS_REQUEST: &str = concat!(cas_set!(), " AND scope = ?11");

/// Compare-and-set under a worker's authority: `?11` the owner, `?12` the generation. Changes
/// one row or none.
pub(crate) const CAS_WORKER: &str =
    concat!(cas_set!(), " AND owner_node = ?11 AND generation = ?12");

/// The scope of task `?1`.
pub(crate) const SCOPE_OF: &str = "SELECT scope FROM tasks WHERE id = ?1";

/// What a refused compare-and-set is classified on.
pub(crate) const CLASSIFY: &str = "\
SELECT scope, revision, status, expires_at_ms, owner_node, generation, task \
FROM tasks WHERE id = ?1";

/// Deletes up to `?2` tasks expired at `?1`.
pub(crate) const REAP: &str = "\
DELETE FROM tasks WHERE id IN \
  (SELECT id FROM tasks WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= ?1 LIMIT ?2) \
RETURNING id, scope, status";

/// How many expired tasks one reaping statement deletes.
pub(crate) const REAP_CHUNK: i64 = 500;

/// Registers a node at `?3` until `?2` (or renews it unconditionally, as started at `?3`).
pub(crate) const REGISTER_NODE: &str = "\
INSERT INTO nodes (node_id, lease_expires_at_ms, started_at_ms, renewed_at_ms) \
VALUES (?1, ?2, ?3, ?3) \
ON CONFLICT (node_id) DO UPDATE SET lease_expires_at_ms = excluded.lease_expires_at_ms, \
  started_at_ms = excluded.started_at_ms, renewed_at_ms = excluded.renewed_at_ms";

/// Renews a node's lease until `?2` only while it is still alive at `?3` (renewed at `?3`).
pub(crate) const RENEW_NODE: &str = "\
UPDATE nodes SET lease_expires_at_ms = ?2, renewed_at_ms = ?3 \
WHERE node_id = ?1 AND lease_expires_at_ms > ?3";

/// Whether node `?1` holds a lease live at `?2` (a create that requires its owner's lease).
pub(crate) const NODE_LIVE: &str =
    "SELECT EXISTS (SELECT 1 FROM nodes WHERE node_id = ?1 AND lease_expires_at_ms > ?2)";

/// Removes one node.
pub(crate) const DELETE_NODE: &str = "DELETE FROM nodes WHERE node_id = ?1";

/// Removes every node whose lease has expired at `?1`.
pub(crate) const DELETE_EXPIRED_NODES: &str = "DELETE FROM nodes WHERE lease_expires_at_ms <= ?1";

/// Claims up to `?3` orphans for node `?1` at `?2`: active, unexpired tasks whose owner is not
/// a live node. One statement, so each task is re-checked and taken under the write lock. The
/// attempt is left as it is: [`CHARGE_ATTEMPT`] raises it when the re-run starts.
pub(crate) const CLAIM: &str = "\
UPDATE tasks SET owner_node = ?1, generation = generation + 1 \
WHERE id IN ( \
  SELECT id FROM tasks \
  WHERE status IN ('working', 'input_required') \
    AND work IS NOT NULL \
    AND (expires_at_ms IS NULL OR expires_at_ms > ?2) \
    AND (owner_node IS NULL OR owner_node NOT IN \
          (SELECT node_id FROM nodes WHERE lease_expires_at_ms > ?2)) \
    AND owner_node IS NOT ?1 \
  LIMIT ?3) \
RETURNING id, scope, task, work, generation, attempt";

/// The active, unexpired tasks node `?1` holds at `?2`, in id order after `?3` (the empty
/// string: from the start), at most `?4`; the columns of [`CLAIM`]'s answer.
pub(crate) const HELD: &str = "\
SELECT id, scope, task, work, generation, attempt FROM tasks \
WHERE owner_node = ?1 \
  AND status IN ('working', 'input_required') \
  AND work IS NOT NULL \
  AND (expires_at_ms IS NULL OR expires_at_ms > ?2) \
  AND id > ?3 \
ORDER BY id LIMIT ?4";

/// Charges a run of task `?1` to its holder (`?2` the owner, `?3` the generation, `?5` the
/// attempt it holds) at `?4`: sets the attempt of an active, unexpired task still held under
/// that lease to `?5 + 1`, where it is `?5` or already that (a retry). Returns the new attempt
/// (no row when the lease is stale or the task finished, expired or is gone).
pub(crate) const CHARGE_ATTEMPT: &str = "\
UPDATE tasks SET attempt = MIN(?5 + 1, 4294967295) \
WHERE id = ?1 AND owner_node = ?2 AND generation = ?3 \
  AND attempt IN (?5, MIN(?5 + 1, 4294967295)) \
  AND status IN ('working', 'input_required') \
  AND (expires_at_ms IS NULL OR expires_at_ms > ?4) \
RETURNING attempt";

/// The clock's high-water mark (ms), read at open.
pub(crate) const HIGH_WATER: &str = "SELECT high_water_ms FROM clock WHERE id = 1";

/// Raises the clock's high-water mark to `?1` (never lowers it).
pub(crate) const RAISE_HIGH_WATER: &str = "\
INSERT INTO clock (id, high_water_ms) VALUES (1, ?1) \
ON CONFLICT (id) DO UPDATE SET high_water_ms = max(high_water_ms, excluded.high_water_ms)";

/// Every stored task, for the read model at start-up.
pub(crate) const LOAD: &str = "SELECT id, scope, revision, status, task, work, created_at_ms, \
     expires_at_ms, rowid FROM tasks";

/// The stored task count.
pub(crate) const COUNT: &str = "SELECT count(*) FROM tasks";

/// Active tasks per scope.
pub(crate) const ACTIVE_BY_SCOPE: &str = "\
SELECT scope, count(*) FROM tasks WHERE status IN ('working', 'input_required') GROUP BY scope";

/// A time as a column value. SQLite integers are signed: times past `i64::MAX` ms (some 292
/// million years) are stored as `i64::MAX`, which keeps their order against every earlier time.
pub(crate) fn ms(at: Timestamp) -> i64 {
    i64::try_from(at.unix_millis()).unwrap_or(i64::MAX)
}

/// A count or limit as a column value.
pub(crate) fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A node id as a column value.
pub(crate) fn node(id: &NodeId) -> &[u8] {
    id.as_bytes()
}

/// The status column value.
pub(crate) fn status(status: TaskStatus) -> &'static str {
    status.as_str()
}

/// Whether a status column value is a non-terminal status.
pub(crate) fn is_active(status: &str) -> bool {
    matches!(status, "working" | "input_required")
}
