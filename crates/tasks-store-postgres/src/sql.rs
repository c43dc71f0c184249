//! The statements, with every table qualified by the store's schema, and the conversions
//! between the runtime's types and column values.
//!
//! Lock order, the same in every statement so that none can deadlock another: the caller's own
//! `pending_counts` row, then task rows, then the `counts` row, then `scope_counts` rows
//! (several only while holding `counts`). Inserting a fresh `pending_counts` row (a random
//! token) waits for nothing, nor does taking rows with `SKIP LOCKED`, so these may come at any
//! point.

use tasks_core::Timestamp;

/// How old a `pending_counts` row must be before the reaper settles it: far longer than a
/// create's reservation and insert (sent together) or a transition and its settlement take,
/// so only the rows of a node that died or lost its connection between the two are settled.
/// A create whose reservation was settled this way inserts nothing and fails.
pub(crate) const STALE: &str = "60 seconds";

/// Statuses of a non-terminal task, as an SQL list.
macro_rules! active {
    () => {
        "('working', 'input_required')"
    };
}

/// Every statement of the store, for one schema.
#[derive(Debug)]
pub(crate) struct Sql {
    /// Reserves a create's capacity (phase 2): raises `counts.total` under `$3` (max_tasks)
    /// and then the active count of scope `$2` under `$4` (max_active_per_scope), and records
    /// what it raised as `pending_counts` row `$1`. Commits without waiting for the WAL flush
    /// (`synchronous_commit` off for this transaction only), so the counter rows are locked
    /// for microseconds; the insert that follows commits with a flush, which makes this
    /// durable too (the WAL is sequential). Answers two booleans: total counted, active
    /// counted.
    pub(crate) reserve: String,
    /// Consumes `pending_counts` row `$1`: inserts task `$2` (columns `$2`..`$10`) if the row
    /// holds a whole reservation (total and active) and the id is free, and otherwise gives the
    /// reservation back; one transaction. Answers two booleans: the row was there, the task
    /// was inserted.
    pub(crate) insert: String,
    /// Settles `pending_counts` row `$1`, if it is still there: deletes it and lowers the
    /// counters by its amounts, without waiting for the WAL flush. Answers whether it was there.
    pub(crate) settle: String,
    /// Settles up to `$1` `pending_counts` rows older than [`STALE`] no one else holds;
    /// answers how many.
    pub(crate) settle_stale: String,
    /// The task JSON of `$1` in scope `$2`, unless expired at `$3`.
    pub(crate) get: String,
    /// The task JSON and scope of the ids `$1` (a text array) unexpired at `$2`, any scope.
    pub(crate) load: String,
    /// The work JSON of `$1` in scope `$2` (NULL once terminal).
    pub(crate) work: String,
    /// Compare-and-set, see [`Sql::new`].
    pub(crate) cas: String,
    /// Deletes up to `$2` tasks expired at `$1` and uncounts them; returns their ids.
    pub(crate) reap: String,
    /// The stored task count: `counts.total` less the reservations of creates in flight.
    pub(crate) count: String,
    /// Registers node `$1` until `$2` (or renews it unconditionally).
    pub(crate) register: String,
    /// Renews node `$1` until `$2` if alive at `$3`, else forgets it; answers whether renewed.
    pub(crate) heartbeat: String,
    /// Forgets node `$1`.
    pub(crate) retire: String,
    /// Forgets every node whose lease expired at `$1`.
    pub(crate) expire_nodes: String,
    /// Claims up to `$3` orphans at `$2` for node `$1`.
    pub(crate) claim: String,
}

impl Sql {
    /// The statements for `schema`, a name already validated (see
    /// [`crate::options::valid_schema`]), so quoting it needs no escaping.
    pub(crate) fn new(schema: &str) -> Sql {
        let s = quote(schema);
        Sql {
            reserve: format!(
                "WITH total AS ( \
                   UPDATE {s}.counts SET total = total + 1 \
                   WHERE id = 1 AND total < $3::bigint RETURNING 1), \
                 active AS ( \
                   INSERT INTO {s}.scope_counts AS c (scope, active) \
                   SELECT $2::text, 1 WHERE $4::bigint > 0 AND EXISTS (SELECT 1 FROM total) \
                   ON CONFLICT (scope) DO UPDATE SET active = c.active + 1 \
                   WHERE c.active < $4::bigint RETURNING 1), \
                 held AS ( \
                   INSERT INTO {s}.pending_counts (token, scope, total, active) \
                   SELECT $1::bigint, $2::text, 1, \
                          CASE WHEN EXISTS (SELECT 1 FROM active) THEN 1 ELSE 0 END \
                   WHERE EXISTS (SELECT 1 FROM total)) \
                 SELECT set_config('synchronous_commit', 'off', true), \
                        EXISTS (SELECT 1 FROM total), EXISTS (SELECT 1 FROM active)"
            ),
            // `held` takes the reservation (the reaper's `SKIP LOCKED` then passes it by; a
            // reservation the reaper took first is gone, and nothing is inserted). Without an
            // insert (a partial reservation, or a taken id) the reservation is given back in
            // the same transaction, which then stored nothing and commits without waiting for
            // the WAL flush; with one, it commits with the flush.
            insert: format!(
                "WITH held AS ( \
                   DELETE FROM {s}.pending_counts WHERE token = $1 \
                   RETURNING scope, total, active), \
                 ins AS ( \
                   INSERT INTO {s}.tasks (id, scope, revision, status, created_at_ms, \
                                          expires_at_ms, task, work, owner_node, generation, \
                                          attempt) \
                   SELECT $2::text, $3::text, $4::bigint, $5::text, $6::bigint, $7::bigint, \
                          $8::json, $9::json, $10::bytea, 1, 1 \
                   FROM held WHERE held.total = 1 AND held.active = 1 \
                   ON CONFLICT (id) DO NOTHING RETURNING 1), \
                 total AS ( \
                   UPDATE {s}.counts c SET total = c.total - h.total FROM held h \
                   WHERE c.id = 1 AND h.total > 0 AND NOT EXISTS (SELECT 1 FROM ins) \
                   RETURNING 1), \
                 active AS ( \
                   UPDATE {s}.scope_counts c SET active = c.active - h.active FROM held h \
                   WHERE c.scope = h.scope AND h.active > 0 AND EXISTS (SELECT 1 FROM total)) \
                 SELECT EXISTS (SELECT 1 FROM held), EXISTS (SELECT 1 FROM ins), \
                        CASE WHEN NOT EXISTS (SELECT 1 FROM ins) \
                             THEN set_config('synchronous_commit', 'off', true) END"
            ),
            // `total` runs before `active` (which waits for it) when both change, keeping the
            // lock order.
            settle: format!(
                "WITH gone AS ( \
                   DELETE FROM {s}.pending_counts WHERE token = $1 \
                   RETURNING scope, total, active), \
                 total AS ( \
                   UPDATE {s}.counts c SET total = c.total - g.total FROM gone g \
                   WHERE c.id = 1 AND g.total > 0 RETURNING 1), \
                 active AS ( \
                   UPDATE {s}.scope_counts c SET active = c.active - g.active FROM gone g \
                   WHERE c.scope = g.scope AND g.active > 0 \
                     AND (g.total = 0 OR EXISTS (SELECT 1 FROM total))) \
                 SELECT set_config('synchronous_commit', 'off', true), \
                        EXISTS (SELECT 1 FROM gone)"
            ),
            // `SKIP LOCKED`: a row its create or transition still holds is not stale.
            settle_stale: format!(
                "WITH stale AS MATERIALIZED ( \
                   SELECT token FROM {s}.pending_counts \
                   WHERE since < now() - interval '{STALE}' \
                   ORDER BY since LIMIT $1 FOR UPDATE SKIP LOCKED), \
                 gone AS ( \
                   DELETE FROM {s}.pending_counts p USING stale WHERE p.token = stale.token \
                   RETURNING p.scope, p.total, p.active), \
                 total AS ( \
                   UPDATE {s}.counts \
                   SET total = total - (SELECT coalesce(sum(total), 0) FROM gone) \
                   WHERE id = 1 AND EXISTS (SELECT 1 FROM gone) RETURNING 1), \
                 active AS ( \
                   UPDATE {s}.scope_counts c SET active = c.active - g.n \
                   FROM (SELECT scope, sum(active) AS n FROM gone GROUP BY scope) g \
                   WHERE c.scope = g.scope AND g.n > 0 AND EXISTS (SELECT 1 FROM total)) \
                 SELECT count(*) FROM gone"
            ),
            get: format!(
                "SELECT task FROM {s}.tasks \
                 WHERE id = $1 AND scope = $2 \
                   AND (expires_at_ms IS NULL OR expires_at_ms > $3)"
            ),
            load: format!(
                "SELECT task, scope FROM {s}.tasks \
                 WHERE id = ANY($1::text[]) \
                   AND (expires_at_ms IS NULL OR expires_at_ms > $2)"
            ),
            work: format!("SELECT work FROM {s}.tasks WHERE id = $1 AND scope = $2"),
            // `cur` locks the row and reads its current version; `upd` writes it when the
            // expected revision (`$2`), expiry (`$9`) and authority hold: a request's scope
            // (`$10` NULL, `$11` the scope) or a worker's owner and generation (`$10`, `$12`);
            // `held` records the release of the scope's active slot when the task became
            // terminal (`$8`: the new task is terminal) as `pending_counts` row `$13`, settled
            // by the caller's next statement: the scope's counter row is not locked here, so
            // not for the length of this commit's WAL flush.
            // The answer carries the current columns for classifying a refusal, and the
            // current task only then.
            cas: format!(
                "WITH cur AS MATERIALIZED ( \
                   SELECT scope, revision, status, expires_at_ms, owner_node, generation, task \
                   FROM {s}.tasks WHERE id = $1 FOR UPDATE), \
                 upd AS ( \
                   UPDATE {s}.tasks t SET revision = $3, status = $4, created_at_ms = $5, \
                          expires_at_ms = $6, task = $7, \
                          work = CASE WHEN $8::boolean THEN NULL ELSE t.work END \
                   FROM cur \
                   WHERE t.id = $1 AND cur.revision = $2 \
                     AND (cur.expires_at_ms IS NULL OR cur.expires_at_ms > $9::bigint) \
                     AND CASE WHEN $10::bytea IS NULL THEN cur.scope = $11::text \
                              ELSE cur.owner_node = $10::bytea \
                                   AND cur.generation = $12::bigint END \
                   RETURNING cur.status IN {active} AS was_active), \
                 held AS ( \
                   INSERT INTO {s}.pending_counts (token, scope, total, active) \
                   SELECT $13::bigint, cur.scope, 0, 1 FROM cur, upd \
                   WHERE upd.was_active AND $8::boolean) \
                 SELECT EXISTS (SELECT 1 FROM upd), cur.scope, cur.revision, cur.expires_at_ms, \
                        cur.owner_node, cur.generation, \
                        CASE WHEN EXISTS (SELECT 1 FROM upd) THEN NULL ELSE cur.task END \
                 FROM cur",
                active = active!()
            ),
            // `gone` takes the expired rows no one else holds (a concurrent reaper, or a
            // transition about to answer NotFound, keeps its rows; they are reaped later);
            // the counters drop by what this statement deleted; `total` runs before `active`
            // (which waits for it), keeping the lock order.
            reap: format!(
                "WITH gone AS MATERIALIZED ( \
                   SELECT id FROM {s}.tasks \
                   WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= $1 \
                   ORDER BY expires_at_ms LIMIT $2 FOR UPDATE SKIP LOCKED), \
                 del AS ( \
                   DELETE FROM {s}.tasks t USING gone WHERE t.id = gone.id \
                   RETURNING t.id, t.scope, t.status), \
                 total AS ( \
                   UPDATE {s}.counts SET total = total - (SELECT count(*) FROM del) \
                   WHERE id = 1 AND EXISTS (SELECT 1 FROM del) RETURNING 1), \
                 active AS ( \
                   UPDATE {s}.scope_counts c SET active = c.active - d.n \
                   FROM (SELECT scope, count(*) AS n FROM del \
                         WHERE status IN {active} GROUP BY scope) d \
                   WHERE c.scope = d.scope AND EXISTS (SELECT 1 FROM total)) \
                 SELECT id FROM del",
                active = active!()
            ),
            // One snapshot: a reservation and its row commit together, and so do the insert
            // and the row's deletion.
            count: format!(
                "SELECT total - (SELECT coalesce(sum(total), 0) FROM {s}.pending_counts) \
                 FROM {s}.counts WHERE id = 1"
            ),
            register: format!(
                "INSERT INTO {s}.nodes (node_id, lease_expires_at_ms) VALUES ($1, $2) \
                 ON CONFLICT (node_id) DO UPDATE \
                 SET lease_expires_at_ms = excluded.lease_expires_at_ms"
            ),
            heartbeat: format!(
                "WITH renewed AS ( \
                   UPDATE {s}.nodes SET lease_expires_at_ms = $2 \
                   WHERE node_id = $1 AND lease_expires_at_ms > $3::bigint RETURNING 1), \
                 gone AS ( \
                   DELETE FROM {s}.nodes WHERE node_id = $1 AND lease_expires_at_ms <= $3::bigint) \
                 SELECT EXISTS (SELECT 1 FROM renewed)"
            ),
            retire: format!("DELETE FROM {s}.nodes WHERE node_id = $1"),
            expire_nodes: format!("DELETE FROM {s}.nodes WHERE lease_expires_at_ms <= $1"),
            // One statement: `FOR UPDATE` re-checks the conditions on the newest version of
            // each row, so a task that turned terminal meanwhile is skipped, and `SKIP LOCKED`
            // lets concurrent claimers take disjoint tasks. That re-check judges the owner's
            // liveness with the statement's snapshot, though, which misses a node that
            // registered after it: a task such a node claimed meanwhile would look orphaned
            // and be claimed twice. So the generation read with the snapshot (a correlated
            // primary-key lookup, which the re-check also runs with the snapshot) must be the
            // newest version's: a task claimed since the snapshot is skipped, to be judged by
            // the next claim.
            claim: format!(
                "UPDATE {s}.tasks t SET owner_node = $1, generation = t.generation + 1, \
                        attempt = CASE WHEN t.attempt < 2147483647 THEN t.attempt + 1 \
                                       ELSE t.attempt END \
                 FROM ( \
                   SELECT o.id FROM {s}.tasks o \
                   WHERE o.generation = ( \
                           SELECT seen.generation FROM {s}.tasks seen WHERE seen.id = o.id) \
                     AND o.status IN {active} AND o.work IS NOT NULL \
                     AND (o.expires_at_ms IS NULL OR o.expires_at_ms > $2::bigint) \
                     AND (o.owner_node IS NULL OR NOT EXISTS ( \
                           SELECT 1 FROM {s}.nodes n \
                           WHERE n.node_id = o.owner_node \
                             AND n.lease_expires_at_ms > $2::bigint)) \
                     AND o.owner_node IS DISTINCT FROM $1 \
                   ORDER BY o.created_at_ms LIMIT $3 FOR UPDATE SKIP LOCKED) c \
                 WHERE t.id = c.id \
                 RETURNING t.scope, t.task, t.work, t.generation, t.attempt",
                active = active!()
            ),
        }
    }
}

/// `name` as a quoted identifier. Only for validated names (no `"` inside).
pub(crate) fn quote(name: &str) -> String {
    format!("\"{name}\"")
}

/// A time as a column value: milliseconds since the epoch. `bigint` is signed: times past
/// `i64::MAX` ms are stored as `i64::MAX`, which keeps their order against every earlier time.
pub(crate) fn ms(at: Timestamp) -> i64 {
    i64::try_from(at.unix_millis()).unwrap_or(i64::MAX)
}

/// A count, limit, revision or generation as a `bigint`.
pub(crate) fn big<N: TryInto<i64>>(n: N) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}
