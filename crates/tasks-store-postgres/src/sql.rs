//! The statements, with every table qualified by the store's schema, and the conversions
//! between the runtime's types and column values.
//!
//! Lock order, the same in every statement so that none can deadlock another: the caller's own
//! `pending_counts` rows, then task rows (several in id order), then the `counts` row, then
//! `scope_counts` rows (several only while holding `counts`). Inserting a fresh `pending_counts` row (a random
//! token) waits for nothing, nor does taking rows with `SKIP LOCKED`, so these may come at any
//! point.

use tasks_core::Timestamp;

/// How old a `pending_counts` row must be before the reaper settles it: far longer than a
/// transition batch and its settlement take (or, on a node of the previous build, a create's
/// reservation and insert), so only the rows of a node that died or lost its connection
/// between the two are settled. Such a create whose reservation was settled this way inserts
/// nothing and fails.
pub(crate) const STALE: &str = "60 seconds";

/// Statuses of a non-terminal task, as an SQL list.
macro_rules! active {
    () => {
        "('working', 'input_required')"
    };
}

/// The statuses of a non-terminal task.
pub(crate) const ACTIVE: [&str; 2] = ["working", "input_required"];

/// The columns of a task row that a decoding read selects first, in the order
/// [`crate::quarantine::Stored::read`] reads them: id, scope, revision, status, created_at_ms,
/// expires_at_ms, then the `task` and `work` columns as text, each only when `task` or `work`
/// holds (else a NULL). `t` qualifies the names (`"t."`, or `""`).
pub(crate) fn row(t: &str, task: bool, work: bool) -> String {
    let task = if task {
        format!("{t}task::text")
    } else {
        "NULL::text".into()
    };
    let work = if work {
        format!("{t}work::text")
    } else {
        "NULL::text".into()
    };
    format!(
        "{t}id, {t}scope, {t}revision, {t}status, {t}created_at_ms, {t}expires_at_ms, {task}, \
         {work}"
    )
}

/// Every statement of the store, for one schema.
#[derive(Debug)]
pub(crate) struct Sql {
    /// Stores a batch of creates: `create_tasks` (migration 0008) with one array per
    /// column (`$1` ids, `$2` scopes, `$3` revisions, `$4` statuses, `$5` created, `$6`
    /// expiries, `$7` tasks, `$8` works, `$9` owners, `$10` max_tasks, `$11`
    /// max_active_per_scope, `$12` whether the owner's lease is required, `$13` tools);
    /// answers a `smallint[]` of outcome codes, one per create, in order. Commits without
    /// waiting for the WAL flush, so that the counter rows it locks are released at once;
    /// [`Sql::flush`], sent right after it, waits for that flush.
    pub(crate) create: String,
    /// A transaction that writes only its commit record, with `synchronous_commit` on: it
    /// returns once the WAL is flushed up to that record, so every transaction this connection
    /// committed before it is durable too.
    pub(crate) flush: String,
    /// Settles up to `$1` `pending_counts` rows older than [`STALE`] no one else holds;
    /// answers how many.
    pub(crate) settle_stale: String,
    /// The task of `$1` in scope `$2`, unless expired at `$3`: the [`row`] columns with the
    /// task.
    pub(crate) get: String,
    /// Up to `$4` tasks of scope `$1` with ids above `$2` (`''` for the first page),
    /// unexpired at `$3`, in id order (index `tasks_scope_id`): the [`row`] columns with the
    /// task.
    pub(crate) list: String,
    /// The tasks of the ids `$1` (a text array) unexpired at `$2`, any scope: the [`row`]
    /// columns with the task.
    pub(crate) load: String,
    /// The work of `$1` in scope `$2` (NULL once terminal): the [`row`] columns with the work.
    pub(crate) work: String,
    /// Row `$1` as it is now, whatever its expiry: the [`row`] columns with task and work.
    pub(crate) reread: String,
    /// Quarantines row `$1` if still at revision `$2` (see [`crate::quarantine`]): copies its
    /// `task` and `work` as text into `quarantined_tasks` with reason `$3` at `$4` (unless a
    /// copy of that id is there already), writes the task `$5` (text) in its place, one
    /// revision on, `failed`, its work cleared, and records the release of an active row's
    /// slot as `pending_counts` row `$6`. Answers one row, whether the row was active, or none
    /// when the row is gone or at another revision.
    pub(crate) quarantine: String,
    /// Quarantines row `$1` (an invalid id) if still at revision `$2`: copies it as
    /// [`Sql::quarantine`] does (`$3` the reason, `$4` the time), then deletes it and lowers the
    /// counters as a reap does. Answers how many rows it deleted.
    pub(crate) quarantine_gone: String,
    /// Runs a batch of compare-and-sets on distinct tasks, see [`Sql::new`]. One array per
    /// column (`$1` ids, `$2` expected revisions, `$3` revisions, `$4` statuses, `$5`
    /// created, `$6` expiries, `$7` tasks, `$8` terminal, `$9` now, `$10` owner nodes or
    /// NULL, `$11` scopes or NULL, `$12` generations or NULL, `$13` release tokens, `$14`
    /// the new tasks' `lastUpdatedAt` in ms); answers
    /// a row per transition whose task exists: its position (from 1), whether it was written,
    /// and the current columns.
    pub(crate) transition: String,
    /// Settles those of `pending_counts` rows `$1` (a `bigint[]`) that are still there, all
    /// releases of scope `$2`, without waiting for the WAL flush; answers how many.
    pub(crate) settle_scope: String,
    /// Deletes up to `$2` tasks expired at `$1` and uncounts them; returns their ids.
    pub(crate) reap: String,
    /// The stored task count: `counts.total` less the reservations of creates in flight.
    pub(crate) count: String,
    /// Tasks unexpired at `$1` by status: rows of (status, count).
    pub(crate) status_counts: String,
    /// Registers node `$1` at `$3` until `$2` (or renews it unconditionally, as started at
    /// `$3`).
    pub(crate) register: String,
    /// Renews node `$1` until `$2` if alive at `$3` (renewed at `$3`), else forgets it; answers
    /// whether renewed.
    pub(crate) heartbeat: String,
    /// Forgets node `$1`.
    pub(crate) retire: String,
    /// Forgets every node whose lease expired at `$1`.
    pub(crate) expire_nodes: String,
    /// Claims up to `$3` orphans at `$2` for node `$1`; raises the generation, not the attempt.
    /// Answers the [`row`] columns with task and work, then the generation and the attempt.
    pub(crate) claim: String,
    /// The active, unexpired tasks node `$1` holds at `$2`, in id order (bytewise) after `$3`
    /// (the empty string: from the start), at most `$4`; the columns of `claim`'s answer. A
    /// scan of the table: it is asked only after a claim whose outcome is unknown.
    pub(crate) held: String,
    /// Charges a run of task `$1` to its holder (`$2` the owner, `$3` the generation) at `$4`:
    /// raises the attempt of an active, unexpired task still held under that lease; answers
    /// the new attempt (no row when the lease is stale or the task finished, expired or is
    /// gone).
    pub(crate) charge_attempt: String,
    /// The start of an inventory page ([`crate::inventory`] adds the filters, the cursor, the
    /// order and the limit): the columns of [`crate::inventory`]'s rows, of the tasks `t`
    /// unexpired at `$1`.
    pub(crate) inventory_page: String,
    /// Whether the holder of task `t` is registered with a lease run out at `$1` (false for
    /// no holder, or one not registered).
    pub(crate) inventory_lost: String,
    /// Tasks unexpired at `$1` by status and tool: rows of (status, tool, count).
    pub(crate) inventory_counts: String,
    /// Active tasks unexpired at `$1` by stuck reason (`$2` and `$3` the idle bounds of
    /// `working` and `input_required`, ms): rows of (reason, count), reason 0 a holder
    /// registered with a lease run out, 1 working idle, 2 input unanswered, NULL not stuck.
    pub(crate) inventory_stuck: String,
    /// Every node in id order: id, started, renewed, lease expiry (ms), and the active tasks
    /// unexpired at `$1` it holds (index `tasks_active`).
    pub(crate) inventory_nodes: String,
}

impl Sql {
    /// The statements for `schema`, a name already validated (see
    /// [`crate::options::valid_schema`]), so quoting it needs no escaping.
    pub(crate) fn new(schema: &str) -> Sql {
        let s = quote(schema);
        // The start of both quarantine statements: `cur` locks the row if still at the
        // revision read (a concurrent quarantine, or any write, moved it on: then nothing
        // happens), and `copy` keeps its columns as they were, with the reason.
        let copy = format!(
            "WITH cur AS MATERIALIZED ( \
               SELECT id, scope, status, task::text AS task, work::text AS work \
               FROM {s}.tasks WHERE id = $1 AND revision = $2 FOR UPDATE), \
             copy AS ( \
               INSERT INTO {s}.quarantined_tasks \
                 (id, scope, task, work, reason, quarantined_at_ms) \
               SELECT id, scope, task, work, $3::text, $4::bigint FROM cur \
               ON CONFLICT (id) DO NOTHING),"
        );
        Sql {
            create: format!(
                "SELECT {s}.create_tasks($1::text[], $2::text[], $3::bigint[], $4::text[], \
                 $5::bigint[], $6::bigint[], $7::text[]::json[], $8::text[]::json[], $9::bytea[], \
                 $10::bigint[], $11::bigint[], $12::boolean[], $13::text[]), \
                 set_config('synchronous_commit', 'off', true)"
            ),
            flush: "SELECT pg_current_xact_id()".to_owned(),
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
                "SELECT {row} FROM {s}.tasks \
                 WHERE id = $1 AND scope = $2 \
                   AND (expires_at_ms IS NULL OR expires_at_ms > $3)",
                row = row("", true, false)
            ),
            list: format!(
                "SELECT {row} FROM {s}.tasks \
                 WHERE scope = $1 AND id > $2 \
                   AND (expires_at_ms IS NULL OR expires_at_ms > $3) \
                 ORDER BY id LIMIT $4",
                row = row("", true, false)
            ),
            load: format!(
                "SELECT {row} FROM {s}.tasks \
                 WHERE id = ANY($1::text[]) \
                   AND (expires_at_ms IS NULL OR expires_at_ms > $2)",
                row = row("", true, false)
            ),
            work: format!(
                "SELECT {row} FROM {s}.tasks WHERE id = $1 AND scope = $2",
                row = row("", false, true)
            ),
            reread: format!(
                "SELECT {row} FROM {s}.tasks WHERE id = $1",
                row = row("", true, true)
            ),
            // `cur` locks the row if still at the revision read (a concurrent quarantine, or
            // any write, moved it on: then nothing happens); the copy reads the locked
            // version; the rewrite keeps owner and generation, as a terminal transition does;
            // `held` records an active row's release, as the transition statement does.
            quarantine: format!(
                "{copy} \
                 upd AS ( \
                   UPDATE {s}.tasks t SET revision = t.revision + 1, status = 'failed', \
                          task = $5::text::json, work = NULL, \
                          updated_at_ms = GREATEST($4::bigint, t.created_at_ms) \
                   FROM cur WHERE t.id = cur.id RETURNING t.id), \
                 held AS ( \
                   INSERT INTO {s}.pending_counts (token, scope, total, active) \
                   SELECT $6::bigint, cur.scope, 0, 1 FROM cur JOIN upd ON upd.id = cur.id \
                   WHERE cur.status IN {active}) \
                 SELECT cur.status IN {active} FROM cur JOIN upd ON upd.id = cur.id",
                active = active!()
            ),
            // As `reap`, for one row: the row, then `counts`, then `scope_counts`.
            quarantine_gone: format!(
                "{copy} \
                 del AS ( \
                   DELETE FROM {s}.tasks t USING cur WHERE t.id = cur.id \
                   RETURNING t.scope, t.status), \
                 total AS ( \
                   UPDATE {s}.counts SET total = total - (SELECT count(*) FROM del) \
                   WHERE id = 1 AND EXISTS (SELECT 1 FROM del) RETURNING 1), \
                 active AS ( \
                   UPDATE {s}.scope_counts c SET active = c.active - 1 FROM del \
                   WHERE c.scope = del.scope AND del.status IN {active} \
                     AND EXISTS (SELECT 1 FROM total)) \
                 SELECT count(*) FROM del",
                active = active!()
            ),
            // `cur` locks the batch's rows in id order (the sort runs below the row locks)
            // and reads their current versions; `ok` keeps the transitions whose expected
            // revision, expiry and authority hold: a request's scope (`owner_node` NULL) or a
            // worker's owner and generation; `upd` writes those; `held` records the release
            // of the scope's active slot of each task that became terminal as a
            // `pending_counts` row, settled by the caller after the commit (the scope's
            // counter row is not locked here, so not for the length of the WAL flush). The
            // answer carries the current columns for classifying a refusal, and the current
            // task only then.
            transition: format!(
                "WITH input AS ( \
                   SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], \
                          $5::bigint[], $6::bigint[], $7::text[]::json[], $8::boolean[], $9::bigint[], \
                          $10::bytea[], $11::text[], $12::bigint[], $13::bigint[], \
                          $14::bigint[]) \
                   WITH ORDINALITY AS i(id, expected, revision, status, created_at_ms, \
                          expires_at_ms, task, terminal, now_ms, owner_node, scope, generation, \
                          token, updated_at_ms, n)), \
                 cur AS MATERIALIZED ( \
                   SELECT t.id, t.scope, t.revision, t.status, t.created_at_ms, \
                          t.expires_at_ms, t.owner_node, t.generation, t.task \
                   FROM {s}.tasks t WHERE t.id IN (SELECT id FROM input) \
                   ORDER BY t.id FOR UPDATE), \
                 ok AS MATERIALIZED ( \
                   SELECT i.*, c.status IN {active} AS was_active, c.scope AS task_scope \
                   FROM input i JOIN cur c ON c.id = i.id \
                   WHERE c.revision = i.expected \
                     AND (c.expires_at_ms IS NULL OR c.expires_at_ms > i.now_ms) \
                     AND CASE WHEN i.owner_node IS NULL THEN c.scope = i.scope \
                              ELSE c.owner_node = i.owner_node \
                                   AND c.generation = i.generation END), \
                 upd AS ( \
                   UPDATE {s}.tasks t SET revision = ok.revision, status = ok.status, \
                          created_at_ms = ok.created_at_ms, expires_at_ms = ok.expires_at_ms, \
                          task = ok.task, updated_at_ms = ok.updated_at_ms, \
                          work = CASE WHEN ok.terminal THEN NULL ELSE t.work END \
                   FROM ok WHERE t.id = ok.id \
                   RETURNING t.id), \
                 held AS ( \
                   INSERT INTO {s}.pending_counts (token, scope, total, active) \
                   SELECT ok.token, ok.task_scope, 0, 1 FROM ok JOIN upd ON upd.id = ok.id \
                   WHERE ok.was_active AND ok.terminal) \
                 SELECT i.n::integer, u.id IS NOT NULL, c.owner_node, c.generation, \
                        c.id, c.scope, c.revision, c.status, c.created_at_ms, c.expires_at_ms, \
                        CASE WHEN u.id IS NULL THEN c.task::text END, NULL::text \
                 FROM input i JOIN cur c ON c.id = i.id LEFT JOIN upd u ON u.id = i.id",
                active = active!()
            ),
            settle_scope: format!(
                "WITH gone AS ( \
                   DELETE FROM {s}.pending_counts WHERE token = ANY($1::bigint[]) \
                     AND scope = $2::text AND total = 0 \
                   RETURNING active), \
                 active AS ( \
                   UPDATE {s}.scope_counts c \
                   SET active = c.active - (SELECT sum(active) FROM gone) \
                   WHERE c.scope = $2::text AND EXISTS (SELECT 1 FROM gone WHERE active > 0)) \
                 SELECT set_config('synchronous_commit', 'off', true), \
                        (SELECT count(*) FROM gone)"
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
            status_counts: format!(
                "SELECT status, count(*) FROM {s}.tasks \
                 WHERE expires_at_ms IS NULL OR expires_at_ms > $1 GROUP BY status"
            ),
            register: format!(
                "INSERT INTO {s}.nodes (node_id, lease_expires_at_ms, started_at_ms, renewed_at_ms) \
                 VALUES ($1, $2, $3, $3) \
                 ON CONFLICT (node_id) DO UPDATE \
                 SET lease_expires_at_ms = excluded.lease_expires_at_ms, \
                     started_at_ms = excluded.started_at_ms, \
                     renewed_at_ms = excluded.renewed_at_ms"
            ),
            heartbeat: format!(
                "WITH renewed AS ( \
                   UPDATE {s}.nodes SET lease_expires_at_ms = $2, renewed_at_ms = $3::bigint \
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
                "UPDATE {s}.tasks t SET owner_node = $1, generation = t.generation + 1 \
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
                 RETURNING {row}, t.generation, t.attempt",
                row = row("t.", true, true),
                active = active!()
            ),
            held: format!(
                "SELECT {row}, generation, attempt FROM {s}.tasks \
                 WHERE owner_node = $1 AND status IN {active} AND work IS NOT NULL \
                   AND (expires_at_ms IS NULL OR expires_at_ms > $2::bigint) \
                   AND id COLLATE \"C\" > $3 \
                 ORDER BY id COLLATE \"C\" LIMIT $4",
                row = row("", true, true),
                active = active!()
            ),
            charge_attempt: format!(
                "UPDATE {s}.tasks SET attempt = LEAST($5::bigint + 1, 2147483647)::integer \
                 WHERE id = $1 AND owner_node = $2 AND generation = $3 \
                   AND attempt IN ($5::bigint, LEAST($5::bigint + 1, 2147483647)) \
                   AND status IN {active} \
                   AND (expires_at_ms IS NULL OR expires_at_ms > $4::bigint) \
                 RETURNING attempt",
                active = active!()
            ),
            inventory_page: format!(
                "SELECT t.id, t.scope, t.status, t.created_at_ms, t.updated_at_ms, \
                        t.expires_at_ms, t.task::text, t.tool, t.owner_node, t.generation, \
                        t.attempt, {lost} \
                 FROM {s}.tasks t \
                 WHERE (t.expires_at_ms IS NULL OR t.expires_at_ms > $1::bigint)",
                lost = lost(&s)
            ),
            inventory_lost: lost(&s),
            inventory_counts: format!(
                "SELECT status, tool, count(*) FROM {s}.tasks \
                 WHERE expires_at_ms IS NULL OR expires_at_ms > $1 GROUP BY status, tool"
            ),
            inventory_stuck: format!(
                "SELECT CASE \
                   WHEN t.owner_node IS NOT NULL AND {lost} THEN 0 \
                   WHEN t.status = 'working' AND t.updated_at_ms < $2::bigint THEN 1 \
                   WHEN t.status = 'input_required' AND t.updated_at_ms < $3::bigint THEN 2 \
                 END, count(*) FROM {s}.tasks t \
                 WHERE t.status IN {active} \
                   AND (t.expires_at_ms IS NULL OR t.expires_at_ms > $1::bigint) \
                 GROUP BY 1",
                lost = lost(&s),
                active = active!()
            ),
            inventory_nodes: format!(
                "SELECT n.node_id, n.started_at_ms, n.renewed_at_ms, n.lease_expires_at_ms, \
                   (SELECT count(*) FROM {s}.tasks t WHERE t.owner_node = n.node_id \
                      AND t.status IN {active} \
                      AND (t.expires_at_ms IS NULL OR t.expires_at_ms > $1::bigint)) \
                 FROM {s}.nodes n ORDER BY n.node_id",
                active = active!()
            ),
        }
    }
}

/// Whether the holder of task `t` is registered with a lease that has run out at `$1`, in
/// schema `s` (quoted); false for no holder and for one not registered.
fn lost(s: &str) -> String {
    format!(
        "coalesce(EXISTS (SELECT 1 FROM {s}.nodes n \
           WHERE n.node_id = t.owner_node AND n.lease_expires_at_ms <= $1::bigint), false)"
    )
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

/// `value` (a task, a work descriptor) as JSON text, sent as `text` and cast to `json` by the
/// statement: serialized before its batch, so that the batch can be bounded in bytes, and
/// checked to read back (`tasks_runtime::store::encode_checked`).
pub(crate) fn to_json(
    value: &impl serde::Serialize,
) -> Result<String, tasks_runtime::store::StoreError> {
    tasks_runtime::store::encode_checked("postgres", value)
}
