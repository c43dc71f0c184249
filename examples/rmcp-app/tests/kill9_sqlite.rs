//! `kill -9` of `rmcp-app` under load on one SQLite database, restarted on the same file each
//! cycle: the fixture's kill -9 harness (`tasks_test_support::kill9`) run
//! through the rmcp bridge, smaller than the fixture's own (5 cycles of 4 clients; it adds
//! well under a minute on 2 cores). Acknowledged tasks survive every restart; interrupted
//! ones end as their tool's recovery policy says: `slow_compute` fails "Task interrupted…",
//! `resumable_job` runs again to completion, a parked `confirm_delete` stays parked and
//! answerable. `TASKS_KILL9_SEED` replays a run, `TASKS_KILL9_CYCLES` sets the cycles. It runs
//! alone (nextest group `processes`).

use tasks_test_support::kill9::{self, Kill9};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_changes_survive_kill_9_of_rmcp_app() {
    kill9::run(Kill9 {
        binary: env!("CARGO_BIN_EXE_rmcp-app"),
        args: &["--poll-interval-ms", "50"],
        cycles: 5,
        clients: 4,
    })
    .await;
}
