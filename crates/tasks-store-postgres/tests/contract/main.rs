//! The shared store contract (the `tasks-store-contract` crate) against [`PostgresStore`],
//! each check on a fresh schema (dropped afterwards), on a multi-thread runtime, and its
//! concurrency checks repeated.

// Modules rather than binaries of their own (each integration-test binary links the
// whole stack, and linking is slow): their tests are named `<module>::<test>`.
mod batches;
mod clock;
mod connection_faults;
mod counters;
mod feed;
mod instances;
mod migrations;
mod node_loss;
mod poison;
mod stall;

use tasks_test_support::postgres as common;

use std::sync::Arc;

use common::Database;
use tasks_store_contract as contract;

/// How often each concurrency check is repeated.
const REPEATS: usize = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store_passes_the_whole_contract() {
    let Some(db) = Database::open().await else {
        return;
    };
    contract::run_all(|| db.store()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store_passes_the_inventory_checks() {
    let Some(db) = Database::open().await else {
        return;
    };
    contract::inventory::run_all(|| db.store()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_on_a_postgres_store_end() {
    let Some(db) = Database::open().await else {
        return;
    };
    contract::waits::run_all(|| db.store()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_respect_max_tasks_repeatedly() {
    let Some(db) = Database::open().await else {
        return;
    };
    for _ in 0..REPEATS {
        contract::concurrent_creates_respect_max_tasks(Arc::new(db.store().await)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_reapers_keep_the_counts_exact_repeatedly() {
    let Some(db) = Database::open().await else {
        return;
    };
    for _ in 0..REPEATS {
        contract::concurrent_reapers_keep_the_counts_exact(Arc::new(db.store().await)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_claimers_take_each_orphan_once_repeatedly() {
    let Some(db) = Database::open().await else {
        return;
    };
    for _ in 0..REPEATS {
        contract::concurrent_claimers_take_each_orphan_once(Arc::new(db.store().await)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_racing_a_claim_is_never_overwritten_repeatedly() {
    let Some(db) = Database::open().await else {
        return;
    };
    for _ in 0..REPEATS {
        contract::a_completion_racing_a_claim_is_never_overwritten(Arc::new(db.store().await))
            .await;
    }
}
