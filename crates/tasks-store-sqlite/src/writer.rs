//! The writer thread: the only user of the database connection and the only writer of the
//! read model.
//!
//! Loop: block for the first command, drain whatever else is queued up to `max_batch`,
//! `BEGIN IMMEDIATE`, run each write (a write of several statements inside its own `SAVEPOINT`,
//! so a refused or failed one rolls back only itself; a write of one change needs none: a
//! refused one changed nothing, a failed statement is undone by SQLite), `COMMIT` (one fsync for the
//! batch under `synchronous=FULL`), apply the committed changes to the read model in commit
//! order, publish the task count, and only then answer every caller. Nothing is acknowledged
//! before its batch has committed.
//!
//! Before `COMMIT`, the batch raises the clock's high-water mark (table `clock`) to the latest
//! time its writes act at, so the mark is exactly as durable as the writes.
//!
//! When `BEGIN` or `COMMIT` fails, or a statement error ends the transaction, the whole batch
//! is rolled back and every write of it is answered [`StoreError::Backend`]; the read model is
//! left as it was and the counters are counted again from the database.

use std::fs::File;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use rusqlite::Connection;
use tasks_runtime::store::StoreError;

use crate::command::{Command, Op, Write};
use crate::counters::Counters;
use crate::exec::{self, Failure, Outcome};
use crate::model::{Effect, Model};
use crate::sql;

/// Free pages (4 KiB each by default) above which the writer returns them to the file system
/// after a batch that reaped tasks.
const VACUUM_FREE_PAGES: i64 = 2_048;

/// State shared between the store handle and the writer thread.
#[derive(Default)]
pub(crate) struct Shared {
    /// Transactions committed by the writer (test support and diagnostics).
    pub(crate) commits: AtomicU64,
    /// Writes in the writer's channel so far (counted after the send, so every write counted
    /// is there to be taken).
    pub(crate) sent: AtomicU64,
    /// Writes the writer has taken from its channel so far. `sent - taken` is the queue; a
    /// write taken before its sender counted it makes that briefly negative, read as 0.
    pub(crate) taken: AtomicU64,
    /// Test support: the next this-many commits are turned into rollbacks by a commit hook.
    pub(crate) fail_commits: AtomicUsize,
}

impl Shared {
    fn take_commit_failure(&self) -> bool {
        self.fail_commits
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }
}

/// The writer thread's state.
pub(crate) struct Writer {
    conn: Connection,
    model: Arc<Model>,
    counters: Counters,
    /// Set when the counters could not be recounted after a failed batch: recount first.
    recount: bool,
    commands: Receiver<Command>,
    shared: Arc<Shared>,
    max_batch: usize,
    /// The single-process lock, released after the connection is closed.
    lock: File,
    /// The clock's high-water mark as committed (ms since the Unix epoch).
    high_water_ms: i64,
}

/// The opened database the writer takes over.
pub(crate) struct Database {
    /// The connection, migrated.
    pub(crate) conn: Connection,
    /// The single-process lock.
    pub(crate) lock: File,
    /// The clock's high-water mark as read at open (ms since the Unix epoch).
    pub(crate) high_water_ms: i64,
}

/// How a write inside the batch went wrong.
enum Step {
    /// The write failed; the transaction goes on without it.
    Failed(String),
    /// The transaction is gone or unusable: the batch must be abandoned.
    Abort(String),
}

impl Writer {
    pub(crate) fn new(
        db: Database,
        model: Arc<Model>,
        counters: Counters,
        commands: Receiver<Command>,
        shared: Arc<Shared>,
        max_batch: usize,
    ) -> rusqlite::Result<Self> {
        let Database {
            mut conn,
            lock,
            high_water_ms,
        } = db;
        let hook = shared.clone();
        conn.commit_hook(Some(move || hook.take_commit_failure()))?;
        Ok(Writer {
            conn,
            model,
            counters,
            recount: false,
            commands,
            shared,
            max_batch: max_batch.max(1),
            lock,
            high_water_ms,
        })
    }

    /// Runs until every store handle is gone and the queue is empty, then closes the database
    /// (checkpointing the WAL) and releases the lock.
    pub(crate) fn run(mut self) {
        while let Ok(first) = self.commands.recv() {
            let first = match first {
                Command::Pause(gate) => {
                    // Blocks until the gate's sender is dropped.
                    let _ = gate.recv();
                    continue;
                }
                Command::Write(write) => write,
            };
            self.shared.taken.fetch_add(1, Ordering::AcqRel);
            let mut batch = vec![first];
            let mut pause = None;
            while batch.len() < self.max_batch {
                match self.commands.try_recv() {
                    Ok(Command::Write(write)) => {
                        self.shared.taken.fetch_add(1, Ordering::AcqRel);
                        batch.push(write);
                    }
                    Ok(Command::Pause(gate)) => {
                        pause = Some(gate);
                        break;
                    }
                    Err(_) => break,
                }
            }
            self.batch(batch);
            if let Some(gate) = pause {
                let _ = gate.recv();
            }
        }
        let Writer { conn, lock, .. } = self;
        if let Err((_, error)) = conn.close() {
            tracing::warn!(%error, "closing the task database failed");
        }
        drop(lock);
    }

    /// Commits one batch and answers its writes.
    fn batch(&mut self, batch: Vec<Write>) {
        if self.recount {
            if let Err(error) = self.recount() {
                return fail_all(batch, format!("counting tasks failed: {error}"));
            }
        }
        if let Err(reason) = self.run_sql("BEGIN IMMEDIATE") {
            return fail_all(batch, reason);
        }
        let mut answers = Vec::with_capacity(batch.len());
        let mut effects: Vec<Effect> = Vec::new();
        let mut deleted = 0;
        let mut writes = batch.into_iter();
        let mut abort = None;
        let mut latest = self.high_water_ms;
        for write in writes.by_ref() {
            if let Some(time) = write.op.time() {
                latest = latest.max(sql::ms(time));
            }
            match self.write(write.op) {
                Ok(outcome) => {
                    effects.extend(outcome.effect);
                    deleted += outcome.deleted;
                    answers.push((write.reply, outcome.answer));
                }
                Err(Step::Failed(reason)) => {
                    tracing::error!(%reason, "task store write failed");
                    answers.push((write.reply, Err(StoreError::Backend(reason))));
                }
                Err(Step::Abort(reason)) => {
                    answers.push((write.reply, Err(StoreError::Backend(reason.clone()))));
                    abort = Some(reason);
                    break;
                }
            }
        }
        let commit = match abort {
            Some(reason) => Err(reason),
            None => self
                .raise_high_water(latest)
                .and_then(|()| self.run_sql("COMMIT")),
        };
        if let Err(reason) = commit {
            tracing::error!(%reason, "task store batch rolled back");
            self.rollback();
            let replies = answers.into_iter().map(|(reply, _)| reply);
            for reply in replies.chain(writes.map(|write| write.reply)) {
                let _ = reply.send(Err(StoreError::Backend(reason.clone())));
            }
            return;
        }
        self.shared.commits.fetch_add(1, Ordering::AcqRel);
        self.high_water_ms = latest;
        for effect in effects {
            self.model.apply(effect);
        }
        self.model.set_total(self.counters.total());
        for (reply, answer) in answers {
            // A caller that stopped waiting still had its write committed.
            let _ = reply.send(answer);
        }
        if deleted > 0 {
            self.vacuum();
        }
    }

    /// Runs one write: inside its own savepoint when it may change the database with more
    /// than one statement ([`Op::one_change`]), so a refused or failed write rolls back alone.
    fn write(&mut self, op: Op) -> Result<Outcome, Step> {
        if self.conn.is_autocommit() {
            return Err(Step::Abort("the transaction ended early".into()));
        }
        let savepoint = !op.one_change();
        if savepoint {
            self.run_sql("SAVEPOINT w").map_err(Step::Abort)?;
        }
        let outcome = match exec::execute(&self.conn, &mut self.counters, &self.model, op) {
            // Some errors (a full disk, an I/O error) end the whole transaction in SQLite.
            Err(Failure(reason)) if self.conn.is_autocommit() => return Err(Step::Abort(reason)),
            outcome => outcome,
        };
        if savepoint {
            if !outcome.as_ref().is_ok_and(|outcome| outcome.keep) {
                self.run_sql("ROLLBACK TO w").map_err(Step::Abort)?;
            }
            self.run_sql("RELEASE w").map_err(Step::Abort)?;
        }
        outcome.map_err(|Failure(reason)| Step::Failed(reason))
    }

    /// Raises the clock's high-water mark to `latest` inside the batch's transaction (a
    /// batch whose writes carry no later time writes nothing).
    fn raise_high_water(&self, latest: i64) -> Result<(), String> {
        if latest <= self.high_water_ms {
            return Ok(());
        }
        self.conn
            .prepare_cached(sql::RAISE_HIGH_WATER)
            .and_then(|mut s| s.execute([latest]))
            .map(|_| ())
            .map_err(|error| format!("raising the clock's high-water mark failed: {error}"))
    }

    fn run_sql(&self, statement: &str) -> Result<(), String> {
        self.conn
            .prepare_cached(statement)
            .and_then(|mut s| s.execute([]))
            .map(|_| ())
            .map_err(|error| format!("{statement} failed: {error}"))
    }

    /// Ends a failed batch: rolls back what is left of the transaction and recounts.
    fn rollback(&mut self) {
        if !self.conn.is_autocommit() {
            if let Err(error) = self.run_sql("ROLLBACK") {
                tracing::error!(%error, "task store rollback failed");
            }
        }
        if let Err(error) = self.recount() {
            tracing::error!(%error, "task store recount failed; retrying before the next batch");
        }
    }

    fn recount(&mut self) -> rusqlite::Result<()> {
        self.recount = true;
        self.counters = Counters::load(&self.conn)?;
        self.recount = false;
        Ok(())
    }

    /// Returns free pages to the file system once enough have accumulated.
    fn vacuum(&self) {
        let free = self
            .conn
            .query_row("PRAGMA freelist_count", [], |row| row.get::<_, i64>(0));
        match free {
            Ok(free) if free > VACUUM_FREE_PAGES => {
                if let Err(error) = self.incremental_vacuum() {
                    tracing::warn!(%error, "incremental vacuum failed");
                }
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "reading the free page count failed"),
        }
    }

    /// `PRAGMA incremental_vacuum` frees one page per step: step it to the end.
    fn incremental_vacuum(&self) -> rusqlite::Result<()> {
        let mut statement = self.conn.prepare_cached("PRAGMA incremental_vacuum")?;
        let mut rows = statement.query([])?;
        while rows.next()?.is_some() {}
        Ok(())
    }
}

fn fail_all(batch: Vec<Write>, reason: String) {
    tracing::error!(%reason, "task store batch failed");
    for write in batch {
        let _ = write.reply.send(Err(StoreError::Backend(reason.clone())));
    }
}
