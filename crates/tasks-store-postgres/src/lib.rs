//! A task store in PostgreSQL, shared by several nodes: [`PostgresStore`] implements
//! [`tasks_runtime::store::Store`] with the semantics of the in-memory store (the shared contract
//! suite passes against it), and every node connected to the same database and schema sees
//! the same tasks.
//!
//! ```no_run
//! use tasks_store_postgres::{PostgresOptions, PostgresStore};
//!
//! # async fn start() -> Result<(), tasks_store_postgres::ConnectError> {
//! let store = PostgresStore::connect(
//!     "postgres://tasks@127.0.0.1:5432/tasks",
//!     PostgresOptions::default(),
//! )
//! .await?;
//! # Ok(()) }
//! ```
//!
//! # Model: the database is the only state
//!
//! The store keeps no changing task state in memory: it has a connection pool
//! ([`PostgresOptions::pool_size`] connections, `deadpool-postgres`) with each connection's
//! prepared statements (`prepare_cached`), plus the two dedicated connections of the
//! [change feed](#change-feed) and the offset of the [clock](#clock). Every call is one or a
//! few statements on one pooled connection: a `get` is one primary-key `SELECT`, a
//! `task_count` reads one counter row (less the reservations in flight). So a write
//! acknowledged by any node is visible to every node's next read, and there is no read model
//! to load at start-up or to keep coherent. The one exception needs no coherence: each
//! instance keeps up to 16 384 of the tasks it has read in a terminal state (64 MiB of task
//! JSON at most; a task over 64 KiB is not kept) and answers a `get` of them from memory, because a terminal task never changes again (the reducer absorbs
//! every event; the store commits only reducer output at the revision it was made from) and
//! is deleted only by reaping once expired, which the kept copy judges at the same `now`.
//!
//! Every decision is made in SQL, on the row, never by reading and then writing:
//!
//! * **create**: queued and stored in a [batch](#batches) with the creates queued beside it:
//!   one call of the `create_tasks` function (schema version 3) inserts the batch's rows
//!   (`ON CONFLICT (id) DO NOTHING`), then locks the capacity counters and decides each create
//!   in the order queued, as if one at a time: the refusal is answered in the in-memory
//!   store's order (`max_tasks` first, then the per-scope bound, then a taken id), a refused
//!   create's row is deleted again, and the counters are raised once for the batch. See
//!   [Capacity counters](#capacity-counters).
//! * **transition** (compare-and-set): queued and run in a [batch](#batches) too, one
//!   statement for the batch. It locks the rows in id order (`SELECT … ORDER BY id FOR
//!   UPDATE` in a CTE), writes each only when its expected revision holds, it is unexpired at
//!   its `now`, and its authority holds (a request's scope, or a worker's owner node and
//!   generation), records the release of the scope's active slot of each task that became
//!   terminal (settled by a statement per scope after the commit, see
//!   [Capacity counters](#capacity-counters)), and answers each row's current columns. A
//!   refusal is classified from them as the in-memory store does:
//!   missing, expired or another scope's is `NotFound`; a stale lease is `Fenced` (reported
//!   before a revision conflict); a stale revision is `Conflict` with the current task.
//! * **claim_orphans**: expired node rows are deleted first (so their later heartbeats answer
//!   `Lost`), then one `UPDATE … FROM (SELECT … FOR UPDATE SKIP LOCKED LIMIT max)` takes active,
//!   unexpired tasks whose owner is not a live node, raising the generation (not the
//!   attempt: **charge_attempt**, one guarded `UPDATE … RETURNING attempt`, raises it when the
//!   re-run starts). Schema version 4 is unchanged by this: a node of the previous build
//!   raises the attempt at its claim instead, and both read the column as "runs charged so
//!   far", so the two run side by side during a rolling upgrade (a task claimed by an old node
//!   that dies before starting it is still charged one run, as before). `FOR
//!   UPDATE` re-checks each row's newest version, so a task completed meanwhile is skipped;
//!   `SKIP LOCKED` lets concurrent claimers take disjoint tasks. The re-check judges the
//!   owner's liveness with the statement's snapshot, which misses a node registered after it,
//!   so a task whose generation changed since the snapshot (another node claimed it) is
//!   skipped too, to be judged by the next claim; without that, a node registering and
//!   claiming while another claim ran could have its fresh claim taken over.
//! * **reap**: batches of 500 `DELETE`d through `FOR UPDATE SKIP LOCKED`, each batch one
//!   statement that also lowers the counters, so several reapers at once reap each task once
//!   and keep the counts exact. A row another transaction holds at that instant is left for
//!   the next reap. A reap first settles stale counter changes (see
//!   [Capacity counters](#capacity-counters)).
//! * **heartbeat**: renews a lease only while it is unexpired at `now`; an expired one is
//!   deleted in the same statement and a missing one answers `Lost`, so it is never revived.
//!
//! Every statement waits for row locks in one order: its own `pending_counts` rows, then task
//! rows (several in id order), then the `counts` row, then `scope_counts` rows (several only
//! while holding `counts`). Inserting a fresh `pending_counts` row (a random key) waits for nothing, and so
//! does taking rows with `SKIP LOCKED` (the reaper's). So no statement can deadlock another.
//!
//! # Capacity counters
//!
//! `max_tasks` and `max_active_per_scope` are kept exact by two counter tables, `counts` (one
//! row: every task) and `scope_counts` (one row per scope: its active tasks), raised under
//! their bounds in SQL. Those rows are hot: every create of a deployment raises the one
//! `counts` row, and on a server without auth every request shares one scope, so one
//! `scope_counts` row too. A transaction that changes them holds their row locks until its
//! commit returns, WAL flush included; raised once per create (this store's first version),
//! creates ran one per flush: about 550–750 per second on a 2-core machine whose disk flushes
//! about 830 times a second (`pg_test_fsync`), whatever the pool size. Two things keep the
//! locks short now:
//!
//! 1. **Creates in batches** (schema version 3, see [Batches](#batches)): one transaction
//!    raises each counter once for the whole batch, and commits without waiting for the WAL
//!    flush (`synchronous_commit` off for that transaction only), so the counter rows are
//!    locked for microseconds. A second statement sent with it (one round trip), a
//!    transaction that writes only its commit record and commits with the flush, returns
//!    once the WAL is flushed past the batch's commit; only then is any create of the batch
//!    answered, so an acknowledged create is as durable as with a flushed commit.
//! 2. **Terminal transitions** record the release of their scope's active slot as a
//!    `pending_counts` row (active −1 due) in the transition's transaction, which does not
//!    touch the counter rows; after the commit, one statement per scope *settles* the
//!    batch's rows: deletes them and lowers that scope's counter, committed without the
//!    flush.
//!
//! What keeps the counters exact: a `pending_counts` row exists exactly while the counters
//! are ahead of the tasks table by its amounts, since a row is written in the transaction
//! that leaves the counters ahead (a terminal transition) and deleted in the transaction that
//! makes them right (a settlement). Whoever deletes a row first applies it, so it is applied
//! once. What a node leaves when it dies or loses its connection between the two steps (a
//! release not applied, a settlement lost with an unflushed commit) stays in
//! `pending_counts`, and every reap settles the rows older than a minute (`FOR UPDATE SKIP
//! LOCKED`). So the counters never exceed a bound, and match the tasks table exactly
//! whenever no transition is in flight. Until a stale row is settled, its slot stays taken:
//! capacity leaked by a crash is back within a minute and a reap. This differs from the
//! design's repair, a recount at every reap: a recount would have to shut out creates in
//! flight while it counts, and counting took 75–300 ms at 320 000 tasks on this machine, a
//! stall of every create on every node, each reap; the `pending_counts` rows name exactly
//! what to repair.
//!
//! Nodes of the previous build (schema version 2) may share the schema during a rolling
//! upgrade: their creates reserve both counters first, as a `pending_counts` row with
//! total 1, in a transaction of its own, and insert the task in a second one that deletes
//! the row. The counters stay exact with both kinds at once; a create of either kind counts
//! the other's reservations in flight, and the reaper settles a reservation whose insert
//! never came (its node died) once it is stale. `task_count` leaves reservations out.
//!
//! Costs and limits: a terminal transition writes and deletes one `pending_counts` row (its
//! settlement shares one statement with the batch's other releases of that scope). A reap
//! lowers the counters in its own (flushed) transaction, once per batch of 500. Through a
//! pooler in transaction mode, a create's two statements could run on different server
//! connections (the flush would then not cover the batch): connect directly or through a
//! session pooler, as the change feed requires anyway.
//!
//! # Batches
//!
//! Creates and compare-and-set transitions are *group-committed*: each call is queued, and
//! one background task per kind takes what is queued whenever one of its two batch slots is
//! free, up to 64 calls and 1 MiB of JSON (a bigger call goes alone), and runs them as one
//! statement, one transaction and one WAL flush.
//! A lone call goes at once (a batch of one: no added wait); under load, each batch takes
//! what queued up while the previous ones ran, so batches grow with the load by themselves.
//! Each batch holds at most one call per task id (a second one waits for the next batch),
//! so calls on one task run one after the other, in the order queued. A batch that the
//! database refuses because of one call's value (SQLSTATE classes 22, 23 and 54: a data
//! exception, a constraint, a size limit) is run again one call at a time, so only that
//! call fails; any other failure (a lost connection, a timeout) fails every call of the
//! batch with the same error, as it would have failed each call alone. A call whose caller went away (its future was dropped) before its
//! batch was taken is not made at all; once taken, it is made, and hinted to the other nodes
//! by the batch itself (see [Change feed](#change-feed)), like every call of the batch. The
//! batching tasks run on the tokio runtime that connected the store; should that runtime shut
//! down while the store is still used from another one, each call runs alone on the caller's
//! runtime instead.
//!
//! Why: on a 2-core machine shared by the server, the database and the load generator, a
//! create and its completion cost the database about 1 ms of CPU as four small transactions
//! of one task each (a reservation, an insert, a compare-and-set and a settlement), much of it
//! per statement and per commit rather than per row (executor start-up, which reads the
//! table's `CHECK` constraints each time; the commit); as batches they cost about a fifth of
//! that, and creation through the server went from 1 100–1 200 to 3 900–5 200 tasks per
//! second, side by side on that machine (see `docs/benchmarks.md`, row 8b).
//!
//! # Durability
//!
//! A call returns only after its transaction committed, and every connection runs with
//! `synchronous_commit=on` (set per session, whatever the server's default), so an
//! acknowledged write is in the server's flushed WAL (and on a synchronous standby, if the
//! server is configured with one). The only exceptions are transactions that change nothing
//! but the capacity counters (a terminal transition's settlement) and a batch of creates: they
//! commit with `synchronous_commit` off for that transaction. A batch of creates is answered
//! only after a flushed commit sent right after it on the same connection returns, which
//! covers it (the WAL is sequential); any write that used a slot freed by a settlement is
//! flushed after it; a settlement lost in a crash leaves its `pending_counts` row, which a
//! reap settles (see [Capacity counters](#capacity-counters)). Sessions also set `statement_timeout=5s` and
//! `lock_timeout=2s`, so a stuck statement or lock fails the call
//! ([`StoreError::Unavailable`](tasks_runtime::store::StoreError::Unavailable): it was rolled back)
//! instead of hanging it, and
//! `idle_in_transaction_session_timeout=10s`, so a node paused (SIGSTOP, a frozen VM) between
//! two statements of a transaction cannot hold its row locks for longer.
//! No connection to be had from the pool is
//! [`StoreError::Unavailable`](tasks_runtime::store::StoreError::Unavailable) (nothing was sent); a
//! connection lost while a call ran (terminated, reset) is
//! [`StoreError::Interrupted`](tasks_runtime::store::StoreError::Interrupted) (a write may have
//! committed), except for a read, which runs once more on a fresh connection first; other SQL
//! failures are `StoreError::Backend`. Their text is for logs only and never contains the
//! connection password. A server that accepts but never answers is bounded by the runtime's
//! store deadline (`Limits::store_deadline`), not here.
//!
//! # Clock
//!
//! Times come from the caller (`now`, milliseconds since the Unix epoch) and are bound as
//! statement parameters: expiry, lease expiry, claims and heartbeats are judged at the `now`
//! given, never at the database's `now()`. The contract suite relies on that.
//!
//! So that every node's `now` agrees, the store offers the database server's clock as
//! [`Store::clock`](tasks_runtime::store::Store::clock), which the runtime then uses for every `now`
//! it passes in (lease and expiry decisions included: they still take `now` from the caller,
//! and the caller's `now` is this clock). It reads without a round trip: the local monotonic
//! clock (`std::time::Instant`, real time, not tokio's) plus an offset to the server's
//! `clock_timestamp()`, measured before [`PostgresStore::connect`] returns (three round
//! trips, the shortest kept, the server's reading taken to be halfway through it) and again
//! every 30 s in the background. The error is about half a round trip plus the local clock's
//! drift over 30 s, so task timestamps, TTL checks and lease times of every node agree within
//! a few milliseconds, and a node whose system clock is skewed (minutes, hours) neither
//! expires tasks early nor sees other nodes' leases as expired and steals their tasks.
//!
//! Readings never go back: a re-measurement that moves the clock back by less than a second
//! holds it still until it catches up; a larger step (the server's clock was set back) is
//! followed at once, so that every node keeps agreeing with the server. A failed
//! re-measurement keeps the last offset. The clock handed out outlives the store; it is then
//! no longer re-measured.
//!
//! # Change feed
//!
//! Several nodes (processes) share the schema; a node waiting for a task that another node
//! runs (a `tasks/result`, a status subscription) needs to hear of that node's commits.
//! [`Store::changes`](tasks_runtime::store::Store::changes) gives hints: `Change::Task { id,
//! revision }` for each task that *another* store instance committed (a create, a committed
//! transition, each task taken by `claim_orphans`, whose revision a claim keeps), and
//! `Change::Resync` when hints may have been lost. A hint only says "re-read this task"; the
//! state always comes from [`Store::load`](tasks_runtime::store::Store::load).
//!
//! It runs on PostgreSQL `LISTEN`/`NOTIFY`, out of band:
//!
//! * **Sending.** After a write commits, the store queues `(task id, revision)` for its
//!   *notifier*, without waiting: the queue holds 4096 hints, and a hint that does not fit is
//!   dropped and counted. The notifier is one dedicated, unpooled connection
//!   (`application_name` the pool's and `-notify`, by default `mcp-tasks-notify`;
//!   `synchronous_commit=off`: a hint is worth no WAL
//!   flush) that batches what arrives within 2 ms of a first hint (at most 64) and sends it
//!   with one `SELECT pg_notify(...)` statement. `NOTIFY` is never issued inside a data
//!   transaction: a `NOTIFY` takes a database-wide lock at commit and fails the commit when
//!   the server's notification queue is full, and neither may ever hold up or fail a task's
//!   write.
//! * **Channel and payload.** The channel is `mcp_tasks_` and the first 12 hex digits of the
//!   SHA-256 of the schema name (one channel per schema and database). A payload's first line
//!   is the sending store instance's random tag (16 hex digits, drawn at connect), then one
//!   line `<revision> <task id>` per hint (a `\` or line feed in an id escaped as `\\` or
//!   `\n`), split so that each payload stays under PostgreSQL's 8000 bytes. A store instance
//!   ignores its own payloads. Any role that can connect may `LISTEN`, so payloads carry no
//!   scope, status or result: only ids and revisions.
//! * **Receiving.** The *listener* is another dedicated connection
//!   (`application_name` the pool's and `-listen`, by default `mcp-tasks-listen`; TCP
//!   keepalive on). Each time it connects it runs
//!   `LISTEN`, then sends `Change::Resync` (everything committed before is re-read, everything
//!   after is hinted), then forwards the other instances' hints to every receiver of
//!   [`Store::changes`](tasks_runtime::store::Store::changes) (a `tokio::sync::broadcast` channel of
//!   4096; a receiver that falls behind gets `RecvError::Lagged`, to be treated as `Resync`).
//!   A `SELECT 1` every 5 s (answered within 5 s) finds a dead connection; on any failure it
//!   reconnects after a backoff (100 ms doubling to 5 s), and the `Resync` follows the new
//!   `LISTEN`.
//! * **Start and stop.** [`PostgresStore::connect`] starts both connections and waits (up to
//!   5 s) for the first `LISTEN`, so that a receiver taken right after `connect` misses
//!   nothing; it does not fail when they cannot connect (the pool could), they retry in the
//!   background. Both stop when the last clone of the store is dropped (the notifier sends
//!   what is queued first). [`PostgresStore::listener_pid`] and
//!   [`PostgresStore::notifier_pid`] name their server processes in `pg_stat_activity`.
//!
//! **Hints may be lost**, and what repairs them: a lost listening connection is followed by
//! `Resync`; hints the notifier loses (its queue full, a batch refused by the server or lost
//! with its connection) are followed by a resync line in its next payload (at most one per
//! second), which every listener turns into `Resync`. Not repaired: the hints of commits
//! still queued when a process dies (at most a few milliseconds' worth, or what a failing
//! notifier holds); a consumer that must never wait on a missed hint re-reads the tasks it
//! waits for now and then as well.
//!
//! **Connection poolers.** `LISTEN` needs a session of its own: through PgBouncer in
//! transaction (or statement) pooling mode, the `LISTEN` runs on whichever server connection
//! serves that transaction, and notifications are lost or reach other clients. The two feed
//! connections use the same connection string as the pool, so a store behind such a pooler
//! gets no hints: connect it directly to PostgreSQL (or through a session-pooling port).
//! TODO: a separate connection string for the feed.
//!
//! # Schema
//!
//! Every table lives in [`PostgresOptions::schema`] (default `mcp_tasks`, created if missing;
//! names are schema-qualified in every statement, so `search_path` does not matter):
//!
//! * `tasks(id text primary key, scope text, revision bigint, status text, created_at_ms
//!   bigint, expires_at_ms bigint null, task json, work json null, owner_node bytea null,
//!   generation bigint, attempt int, tool text null, updated_at_ms bigint)`, with partial
//!   indexes on `expires_at_ms` (reaping) and on `owner_node` of active tasks; `fillfactor=80`
//!   for in-page updates. `tool` (the work's tool, kept once the work is cleared; NULL for a
//!   terminal task stored before schema version 8) and `updated_at_ms` (`lastUpdatedAt`, ms)
//!   serve the operator's inventory, with the indexes `(created_at_ms, id COLLATE "C")`,
//!   `(tool, created_at_ms)` and `(status, updated_at_ms)` of active tasks.
//! * `nodes(node_id bytea primary key, lease_expires_at_ms bigint, started_at_ms bigint null,
//!   renewed_at_ms bigint null)`: the last registration and renewal times are NULL for rows
//!   of schema versions before 8.
//! * `counts(id = 1, total bigint)` and `scope_counts(scope text primary key, active bigint)`:
//!   the capacity counters (see [Capacity counters](#capacity-counters)). A `scope_counts`
//!   row stays (at 0) once its scope has no active task.
//! * `pending_counts(token bigint primary key, scope text, total smallint, active smallint,
//!   since timestamptz)` (schema version 2): counter changes not yet settled, one row per
//!   create or terminal transition in flight, and none in the steady state (autovacuum after
//!   every 1000 dead rows).
//! * `quarantined_tasks(id text primary key, scope text, task text, work text, reason text,
//!   quarantined_at_ms bigint)` (schema version 6): the rows that could not be read, see
//!   [Unreadable rows](#unreadable-rows).
//! * `schema_version(singleton, version)`: the schema version (currently 8: version 4 adds the
//!   `tasks_scope_id` index that `list` reads; version 5 a `create_tasks` that refuses a create
//!   whose owner holds no live lease, `CreateLimits::lease_required`; version 6 the
//!   `quarantined_tasks` table, nothing else changed: running nodes of version 5 read a
//!   quarantined row as the failed task it now is, and leave bad rows as they were; version 7
//!   marks the running tasks of the 2025-11-25 flow with `"origin": "2025-11-25"` in `task`,
//!   which nodes of version 6 ignore; version 8 adds `tasks.tool`, `tasks.updated_at_ms`,
//!   `nodes.started_at_ms` and `nodes.renewed_at_ms` for the operator's inventory, their
//!   indexes, and a `create_tasks` that takes the tools; nodes of version 7 go on creating
//!   through the version 5 function, storing no tool).
//!   Migrations are
//!   embedded and run at [`PostgresStore::connect`] in one transaction under
//!   `pg_advisory_xact_lock` (keyed on the schema name), so nodes starting together do not
//!   race; then the tables' columns are checked. A schema of a newer version is refused
//!   ([`ConnectError::NewerSchema`]) and left unchanged.
//!
//! Times are milliseconds in `bigint` columns; times beyond `i64::MAX` ms are stored as
//! `i64::MAX`. `attempt` is an `int`: it stops growing at 2³¹−1 (the runtime's `u32` would
//! go on to 2³²−1; no task is re-run that often).
//!
//! # Unreadable rows
//!
//! One bad row fails one task, never the store. Every read that decodes a row (`get`, `list`,
//! `load`, `work`, `claim_orphans`, `held`, the current task of a revision conflict) reads
//! `task` and `work` as text, with plain member names (`tasks_core::json::check_text`, then
//! serde), and checks the task's id, revision and status against the row's columns. A row that
//! fails (JSON of the wrong shape, nesting past 127 levels, a member named
//! `$serde_json::private::…`, an invariant `Task` refuses; written by a bug, another version
//! or by hand) is *quarantined* by that read, in one statement (one transaction) guarded by the
//! revision read, so nodes meeting it at once do it once: its `task` and `work` are copied as
//! text into `quarantined_tasks` with the reason (`ON CONFLICT (id) DO NOTHING`), and the row
//! becomes the `failed` task of `tasks_core::Task::unreadable` (error -32603 "The stored state
//! of this task could not be read"), one revision on, `created_at`/TTL from its columns, work
//! cleared, owner and generation kept, as a terminal transition leaves them; an active row's
//! slot is released as a terminal transition's is, and the change is hinted on the
//! [change feed](#change-feed). A row whose id is no task id is copied and deleted (the counters
//! lowered as a reap does). The read carries on: `get` answers the failed task, `list` and
//! `load` include it, a claim pass leaves it out and claims others in its place, so no pass
//! fails as a whole. Each quarantine is logged once (`warn`, `task_id` and the reason, which
//! is for operators only) and counted by [`Store::quarantined`](tasks_runtime::store::Store::quarantined).
//! The store never deletes from `quarantined_tasks`: an operator reads, repairs or drops its
//! rows. The failed task is reaped as any other once expired.
//!
//! # What is stored, and for how long
//!
//! As in the SQLite store: per task its id, scope, revision, status, times, the task itself
//! as JSON (status message, results, pending input requests and *accepted input answers*),
//! the work descriptor as JSON (tool name, arguments, the creating request's `inputResponses`
//! and client capabilities; cleared once the task is terminal) and its lease (owner node,
//! generation, attempt); per node its random 16-byte id and lease expiry.
//!
//! The scope is stored as given. The server hands the runtime an opaque keyed hash of the
//! principal as the scope, never the raw principal, so no user name or token is written by
//! this store; a deployment that passes raw principals as scopes would store them.
//!
//! A task stays until it has expired (`createdAt + ttlMs`) *and* been reaped (the runtime
//! reaps periodically, on every node); a task without a TTL stays until deleted by hand. An
//! expired task reads as absent even before it is reaped. To delete everything:
//! `DROP SCHEMA mcp_tasks CASCADE` with every node stopped.
//!
//! PostgreSQL `text` cannot hold U+0000: an id or scope containing it is answered as absent
//! by reads and writes, and refused by `create` (`StoreError::Backend`); server-minted ids
//! never contain it.
//!
//! # Where this follows the design notes and where it differs
//!
//! It follows the researched design (durable stores, PostgreSQL section): tokio-postgres with
//! deadpool-postgres and cached prepared statements, one migration with a version table and
//! an advisory lock, compare-and-set in one round trip with a CTE, claims and reaps through
//! `FOR UPDATE SKIP LOCKED`, phase 2 capacity counters, `statement_timeout` and
//! `lock_timeout` on every connection. It differs in these points:
//!
//! * `task` and `work` are `json`, not `jsonb`: `jsonb` refuses strings containing U+0000
//!   (a tool result may hold one; the in-memory and SQLite stores keep it) and reorders
//!   object keys, and nothing queries inside these columns, so the text is kept as written.
//! * Times are `bigint` milliseconds, not `timestamptz`, and every decision uses the `now`
//!   passed in, not `coalesce($now, now())` (see [Clock](#clock)).
//! * Node ids are `bytea` (16 bytes), not `uuid`: they are random bytes, not RFC 4122 UUIDs.
//!   The `nodes` table has no `name` column; `started_at_ms` and `renewed_at_ms` (schema
//!   version 8) are read only by the operator's inventory.
//! * `updated_at_ms` (schema version 8) is written by every transition but read only by the
//!   operator's inventory (the stuck rules); being indexed (`tasks_idle`, active tasks only),
//!   it makes a transition of an active task a non-HOT update. No `lz4` column compression (it needs a server built with
//!   lz4; PostgreSQL's default `pglz` still compresses large results).
//! * A terminal transition clears `work` but keeps the owner and generation (the design
//!   clears the owner), so a late write under the last lease is a revision conflict, exactly
//!   as in the in-memory store.
//! * Create is two statements sent together (one round trip), not a PL/pgSQL function.
//! * Phase 2 counters repair what a crash leaves through `pending_counts` rows rather than by a
//!   recount at every reap, and terminal transitions release their slot the same way (see
//!   [Capacity counters](#capacity-counters)).
//! * The `NOTIFY` fan-out is sent by a dedicated connection after the commit, not by the
//!   write's own transaction (see [Change feed](#change-feed)).
//! * No clearing of the statement cache on SQLSTATE `0A000`: a later step.
//!
//! # TLS
//!
//! By default connections are plain TCP (`NoTls`), for a server on loopback or a private
//! network. The pool and the change feed's two connections make the same choice. The cargo feature `rustls` connects through rustls (ring provider, the Mozilla
//! roots of `webpki-roots`) as the connection string's `sslmode` asks: `prefer` (the
//! default) falls back to plain TCP when the server offers no TLS, `require` insists,
//! `disable` never tries. rustls always verifies the server certificate against those
//! roots, unlike libpq's `prefer`/`require`, so a server with a self-signed or private-CA
//! certificate (Debian's default "snakeoil" one included) is refused with `UnknownIssuer`.
//! TODO: an option for a private CA (`sslrootcert`); until then use `sslmode=disable` on
//! such servers, or build without the feature.
//!
//! # Modules
//!
//! Each module uses only what its row names (checked by the workspace's layering test):
//!
//! | module | uses |
//! |---|---|
//! | `store` ([`PostgresStore`]: the handle and its `Store` implementation) | `connect`, `create`, `cas`, `read`, `reap`, `leases`, `inventory`, `db`, `batch`, `options`, `error` |
//! | `connect` (settings, pool, migration at start-up) | `connector`, `schema`, `db`, `feed`, `clock`, `backend`, `sql`, `target`, `options`, `error` |
//! | `create`, `cas` (group-committed writes) | `batch`, `counters` (cas), `quarantine` (cas), `db`, `backend`, `sql`, `text` |
//! | `read`, `reap`, `leases` | `counters` (reap), `quarantine` (read, leases), `db`, `backend`, `sql`, `text` (read) |
//! | `inventory` (the operator's inventory: reads in SQL) | `db`, `backend`, `sql`, `text` |
//! | `quarantine` (rows that do not decode, see [Unreadable rows](#unreadable-rows)) | `counters`, `db`, `backend`, `sql` |
//! | `db` (the pool, statements, writer, feed, clock and settled tasks every call works with) | `batch`, `feed`, `clock`, `settled`, `backend`, `sql` |
//! | `batch` (group commit) | `feed`, `sql` |
//! | `counters` (unsettled counter changes) | `backend`, `sql` |
//! | `feed` (the change feed: `feed::listener`, `feed::notifier`, `feed::payload`, `feed::backoff`) | `connector`, `backend`, `sql` |
//! | `clock` (the database server's clock) | `backend` |
//! | `schema` | `sql` |
//! | `connector` (TCP or TLS) | `error` |
//! | `settled` (terminal tasks read, in memory) | nothing of this crate |
//! | `backend`, `sql`, `text`, `target`, `options`, `error` | nothing of this crate |

#![forbid(unsafe_code)]

mod backend;
mod batch;
mod cas;
mod clock;
mod connect;
mod connector;
mod counters;
mod create;
mod db;
mod error;
mod feed;
mod inventory;
mod leases;
mod options;
mod quarantine;
mod read;
mod reap;
mod schema;
mod settled;
mod sql;
mod store;
mod target;
mod text;

pub use error::ConnectError;
pub use options::PostgresOptions;
pub use store::PostgresStore;
pub use target::redacted;
