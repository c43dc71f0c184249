//! A durable task store in one SQLite file: [`SqliteStore`] implements
//! [`tasks_runtime::store::Store`] with the same semantics as the in-memory store, and keeps every
//! task across restarts.
//!
//! ```no_run
//! use tasks_store_sqlite::{SqliteOptions, SqliteStore};
//!
//! let store = SqliteStore::open("tasks.db", SqliteOptions::default())?;
//! # Ok::<(), tasks_store_sqlite::OpenError>(())
//! ```
//!
//! # Durability
//!
//! A write is acknowledged (the store call returns) only after the transaction holding it has
//! committed: acknowledged means committed. How far a commit survives depends on
//! [`Synchronous`]: with [`Synchronous::Full`] (the default) the write-ahead log is synced at
//! every commit, so acknowledged writes survive power loss; with [`Synchronous::Normal`] they
//! survive a crash of the process (`kill -9`) but the last ones may be lost on power loss or an
//! OS crash.
//!
//! Writes are *group committed*: one writer thread owns the connection, takes every write
//! queued (up to [`SqliteOptions::max_batch`]), runs them in one `BEGIN IMMEDIATE`
//! transaction, and commits them with one sync. A refused write (a taken id, a stale revision,
//! a full capacity) changes nothing: a write of one statement (a creation, a transition, a
//! lease write) needs nothing more, and a write of several statements (a reap, a claim) or
//! one checked after its change (an attempt charge) runs inside its own savepoint, which
//! rolls back only itself. If the commit fails, every write
//! of the batch answers [`tasks_runtime::store::StoreError::Backend`] and nothing of it is visible.
//! The backend error text is for logs; it never reaches a client.
//!
//! Compare-and-set, fencing and claims are decided in SQL, under the write lock: a transition
//! is one `UPDATE … WHERE id = ? AND revision = ? AND <not expired> AND <authority>`, a claim
//! of orphaned tasks is one `UPDATE … WHERE id IN (SELECT … LIMIT ?) RETURNING …`.
//!
//! # One process per database
//!
//! [`SqliteStore::open`] takes an exclusive lock (`flock`) on the database file itself and
//! holds it until the store is dropped; a second open (from another process, or the same one,
//! through any path to the file: a symlink or a hard link too) fails with
//! [`OpenError::Locked`]. The lock is what makes the in-memory read model coherent: no one
//! else writes the file. (SQLite's own locks are POSIX record locks, which `flock` leaves
//! alone.)
//! Other readers (a backup, the `sqlite3` shell) may open the file; SQLite's `busy_timeout` is
//! set to 5 s for them.
//!
//! Because only one process can hold the lock, the process that held it before is gone: open
//! deletes every node lease, so the previous process's unfinished tasks are orphans at once
//! and the runtime's recovery (`TaskRuntime::recover`, which calls
//! [`claim_orphans`](tasks_runtime::store::Store::claim_orphans)) takes them over with a raised
//! generation; a re-run's attempt is charged when it starts
//! ([`charge_attempt`](tasks_runtime::store::Store::charge_attempt)), never by the claim. The store
//! never fails or re-runs a task by itself.
//!
//! # Reads
//!
//! Every task is kept in memory as well (a sharded map of `Arc<Task>`, loaded at open). Only
//! the writer thread changes it, after the commit and before answering, in commit order. So
//! `get`, `work` and `task_count` do no I/O and no thread hop, never show a state the disk
//! does not have, and show every acknowledged write. Memory use is therefore proportional to
//! the stored tasks, as with the in-memory store.
//!
//! # What is stored, and for how long
//!
//! * `tasks`: per task its id, scope, revision, status, creation and expiry times, the task
//!   itself as JSON (status message, results, pending input requests and *accepted input
//!   answers*), the work descriptor as JSON (tool name, arguments, the creating request's
//!   `inputResponses` and client capabilities; cleared once the task is terminal), and its
//!   lease (owner node id, generation, attempt); since schema version 6 also its tool name
//!   (kept when the work is cleared) and its `lastUpdatedAt` in ms (`updated_at_ms`), for the
//!   operator's inventory.
//! * `nodes`: each running node's random 16-byte id and lease expiry; since schema version 6
//!   also when it registered and last renewed (ms).
//! * `clock` (schema version 2): one row, the highest time the store has acted on (see
//!   [Clock](#clock)).
//!
//! The scope is stored as given (`Scope::as_str`). The server hands the runtime an opaque
//! keyed hash of the principal as the scope, never the raw principal, so no user name or
//! token is written to the file by this store; a deployment that passes raw principals as
//! scopes would store them.
//!
//! A task stays until it has expired (`createdAt + ttlMs`) *and* been reaped
//! ([`Store::reap`](tasks_runtime::store::Store::reap), run periodically by the runtime); a task
//! without a TTL stays until the file is deleted. An expired task reads as absent even
//! before it is reaped.
//!
//! # Clock
//!
//! Times come from the runtime's clock, the host's wall clock. Every committed batch raises
//! the `clock` row to the latest time its writes act at (a creation's `createdAt`, a write's
//! `now`; the runtime renews its lease every tick, 2 s by default, so the row is never more
//! than a tick behind a running server), in the batch's own transaction.
//! [`SqliteStore::open`] reads it back and offers it as
//! [`Store::time_floor`](tasks_runtime::store::Store::time_floor): the runtime then never reads its
//! clock below it ([`tasks_runtime::Monotonic`]). So a host clock set back across a restart
//! makes time stand still until the clock catches up, and a task expired before the stop
//! stays expired (it is never claimed and re-run); TTLs and leases last longer by up to the
//! step, never shorter. A task that expired within the last tick before a crash, and was read
//! as expired in that tick, could read as unexpired again if the clock was also set back.
//!
//! A database of schema version 1 is migrated at open (one transaction): the row starts at
//! the latest task creation time (0 without tasks). An older build refuses a file of a newer
//! schema version and leaves it unchanged.
//!
//! Schema version 3 has the same tables; the `tasks` table is rebuilt with its status check
//! written as a chain of comparisons (`status = 'working' OR …`) instead of a five-value `IN`
//! list, which SQLite evaluated by building a temporary b-tree on every insert and update of a
//! task. Rows, row ids and indexes are copied as they are, in the migration's transaction.
//!
//! Schema version 6 adds `tasks.tool` and `tasks.updated_at_ms` (backfilled from the `work`
//! and `task` texts where they read; a terminal task stored before it has no tool any more),
//! `nodes.started_at_ms` and `nodes.renewed_at_ms`, and the indexes of the inventory's pages
//! (`migrations/0006_inventory.sql`).
//!
//! # Files, space and purging
//!
//! The store uses `<db>`, `<db>-wal` and `<db>-shm` (SQLite's write-ahead log and its index).
//! The database file is created with mode `0600` (owner only); SQLite gives the WAL files the
//! database's mode. An existing file keeps its permissions.
//!
//! Space: SQLite checkpoints the WAL into the database automatically (every 1000 pages, its
//! default) on the writer thread, and truncates it to at most 64 MiB afterwards
//! (`journal_size_limit`). The database uses `auto_vacuum=INCREMENTAL`: after a reap leaves
//! more than 2048 free pages (8 MiB at the default page size) the writer runs
//! `PRAGMA incremental_vacuum` and the file shrinks. There is no full `VACUUM`.
//!
//! To purge data: expired tasks are deleted by reaping. To delete everything, stop the
//! process and delete the three files `<db>`, `<db>-wal` and `<db>-shm`.
//!
//! # Settings
//!
//! Pragmas at open: `journal_mode=WAL`, `synchronous=FULL|NORMAL`, `foreign_keys=ON`,
//! `busy_timeout=5000`, `temp_store=MEMORY`, `journal_size_limit=67108864`,
//! `auto_vacuum=INCREMENTAL` (set before the first table), `mmap_size=0` (memory-mapped I/O
//! stays off). The schema is versioned by `PRAGMA user_version` (currently 6: version 5 records which task design created a task, version 6 adds the inventory's columns and indexes) and marked by
//! `PRAGMA application_id`; migrations are embedded and run in one transaction. A file of a
//! newer version ([`OpenError::NewerSchema`]), or one that is not a task database or does not
//! load ([`OpenError::Corrupt`]), is refused and left unchanged: never emptied or recreated.
//! A task row that does not decode does not refuse the file: it is quarantined when the store
//! opens (copied as it was into `quarantined_tasks` with the reason, and read as the `failed`
//! task of [`tasks_core::Task::unreadable`]; docs/durability.md, "Unreadable rows").
//! Times are stored as milliseconds in signed 64-bit columns; times beyond `i64::MAX` ms are
//! stored as `i64::MAX`.
//!
//! # Design choices
//!
//! A `std::thread` writer with group commit, savepoints for writes of several statements,
//! memory as the read model,
//! and the pragmas and schema above, as the project's design for durable stores proposed. It
//! departs from that proposal in these points:
//!
//! * The lock is taken with the standard library's `File::try_lock` (an `flock` on Unix), not
//!   `libc::flock`: same lock, no `unsafe`. It locks the database file itself rather than a
//!   sidecar `<db>.lock`: a sidecar is found by name, so a hard link or a symlink to the
//!   database, or a deleted lock file, let a second process in (a hostile test did exactly
//!   that and the two writers corrupted the file).
//! * The capacity counters are owned and checked by the writer thread, counting the writes
//!   earlier in the same uncommitted batch, instead of being reserved before a write is
//!   queued: no reservation has to be undone when a write is refused or a batch fails, and
//!   after a failed batch the counters are simply counted again from the database.
//! * The read model is this crate's own map, not an embedded `MemoryStore`: leases live only
//!   in SQL (claims and fencing are decided there), so the map holds just tasks and work.
//! * Every row is loaded at open, expired-but-unreaped ones included, because `task_count`
//!   counts those too (as the in-memory store does).
//! * The operator's inventory (`Store::inventory`, `inventory_counts`, `nodes`) is read in
//!   SQL on the writer's connection, not from the read model, which holds neither leases nor
//!   the tools of terminal tasks (see `inventory`). A page waits for the batch before it and
//!   holds up the writes after it for its own duration (indexed: milliseconds).
//! * A terminal transition clears `work` but keeps the owner and generation, so a late write
//!   under the last lease is a revision conflict, exactly as in the in-memory store.
//!
//! # Modules
//!
//! Each module uses only what its row names (checked by the workspace's layering test):
//!
//! | module | uses |
//! |---|---|
//! | `store` ([`SqliteStore`]: the handle and its `Store` implementation) | `open`, `writer`, `command`, `inventory`, `model`, `options`, `error` |
//! | `open` (the lock, files, pragmas, migrations, loading the read model) | `schema`, `sql`, `quarantine`, `counters`, `model`, `options`, `error` |
//! | `quarantine` (rows that do not decode, set aside at open) | nothing of this crate |
//! | `writer` (the writer thread, group commit) | `exec`, `command`, `counters`, `model`, `sql` |
//! | `exec` (one write against the open transaction) | `command`, `counters`, `inventory`, `model`, `sql` |
//! | `command` (what callers send the writer thread) | `inventory` |
//! | `inventory` (the operator's inventory in SQL, and its rows decoded) | `sql` |
//! | `counters` (capacity counters, owned by the writer) | `sql` |
//! | `model`, `sql`, `schema`, `options`, `error` | nothing of this crate |

#![forbid(unsafe_code)]

mod command;
mod counters;
mod error;
mod exec;
mod inventory;
mod model;
mod open;
mod options;
mod quarantine;
mod schema;
mod sql;
mod store;
mod writer;

pub use error::OpenError;
pub use options::{SqliteOptions, Synchronous};
#[doc(hidden)]
pub use store::PauseGuard;
pub use store::SqliteStore;
