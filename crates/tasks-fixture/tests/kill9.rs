//! `kill -9` of the real fixture binary under load, on one SQLite database, restarted on the
//! same file each cycle: 20 cycles of 16 clients (`TASKS_KILL9_CYCLES` sets the number of
//! cycles). What is loaded and checked: the harness, `support/kill9.rs`, shared with
//! `examples/rmcp-app`'s kill -9 test.

use tasks_test_support::kill9::{self, Kill9};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_changes_survive_kill_9_under_load() {
    kill9::run(Kill9 {
        binary: env!("CARGO_BIN_EXE_tasks-fixture"),
        args: &[
            "--ttl-ms",
            "0",
            "--poll-interval-ms",
            "50",
            "--max-workers",
            "256",
        ],
        cycles: 20,
        clients: 16,
    })
    .await;
}
