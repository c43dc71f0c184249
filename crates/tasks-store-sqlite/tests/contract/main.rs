//! The shared store contract (the `tasks-store-contract` crate) against [`SqliteStore`], each
//! check on a fresh database file, and its concurrency checks repeated.

// Modules rather than binaries of their own (each integration-test binary links the
// whole stack, and linking is slow): their tests are named `<module>::<test>`.
mod batching;
mod clock;
mod migrations;
mod node;
mod open_errors;
mod persistence;
mod poison;
mod stall;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tasks_store_contract as contract;
use tasks_store_sqlite::{SqliteOptions, SqliteStore, Synchronous};

/// New database files in one temporary directory.
struct Files {
    dir: tempfile::TempDir,
    next: AtomicUsize,
}

impl Files {
    fn new() -> Self {
        Files {
            dir: tempfile::tempdir().expect("temp dir"),
            next: AtomicUsize::new(0),
        }
    }

    fn path(&self) -> PathBuf {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        self.dir.path().join(format!("tasks-{n}.db"))
    }

    fn store(&self, options: SqliteOptions) -> SqliteStore {
        open(&self.path(), options)
    }
}

fn open(path: &Path, options: SqliteOptions) -> SqliteStore {
    SqliteStore::open(path, options).expect("open a new database")
}

fn normal() -> SqliteOptions {
    SqliteOptions::default().with_synchronous(Synchronous::Normal)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_store_passes_the_whole_contract() {
    let files = Files::new();
    contract::run_all(|| async { files.store(SqliteOptions::default()) }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_on_a_sqlite_store_end() {
    let files = Files::new();
    contract::waits::run_all(|| async { files.store(SqliteOptions::default()) }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_store_passes_the_inventory_checks() {
    let files = Files::new();
    contract::inventory::run_all(|| async { files.store(SqliteOptions::default()) }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_store_passes_the_whole_contract_with_synchronous_normal() {
    let files = Files::new();
    contract::run_all(|| async { files.store(normal()) }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_store_passes_the_whole_contract_one_write_per_commit() {
    let files = Files::new();
    let options = normal().with_max_batch(1);
    contract::run_all(|| async { files.store(options.clone()) }).await;
}

#[tokio::test]
async fn sqlite_store_passes_the_contract_on_a_current_thread_runtime() {
    let files = Files::new();
    contract::run_all(|| async { files.store(normal()) }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_respect_max_tasks_repeatedly() {
    let files = Files::new();
    for _ in 0..10 {
        contract::concurrent_creates_respect_max_tasks(Arc::new(files.store(normal()))).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claimers_take_each_orphan_once_repeatedly() {
    let files = Files::new();
    for _ in 0..10 {
        contract::concurrent_claimers_take_each_orphan_once(Arc::new(files.store(normal()))).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_completion_racing_a_claim_is_never_overwritten_repeatedly() {
    let files = Files::new();
    for _ in 0..10 {
        contract::a_completion_racing_a_claim_is_never_overwritten(Arc::new(files.store(normal())))
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_reapers_keep_the_counts_exact_repeatedly() {
    let files = Files::new();
    for _ in 0..10 {
        contract::concurrent_reapers_keep_the_counts_exact(Arc::new(files.store(normal()))).await;
    }
}
