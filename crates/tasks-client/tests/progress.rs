//! The progress of the fixture's `slow_compute` as the client reads it over real HTTP
//! ([`DetailedTask::progress`]): growing on a listen stream and on `tasks/get` while the task
//! runs, in memory and on SQLite, and kept across a restart of the node on SQLite (where the
//! interrupted `slow_compute` fails, keeping where it got to).
//!
//! The fixture runs in this process on a loopback port, so the waits are the client's own
//! (listening, and polling at the task's `pollIntervalMs`), never sleeps of the test.

use std::path::Path;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::json;
use tasks_client::{Client, DetailedTask, Execution, SettleOptions, TaskCall, TaskStatus, Wait};
use tasks_fixture::store::StoreSpec;
use tasks_http::RunningServer;

/// Every wait in these tests gives up after this long.
const LIMIT: Duration = Duration::from_secs(30);

async fn start(store: StoreSpec) -> RunningServer {
    let settings = tasks_fixture::Settings {
        listen: "127.0.0.1:0".parse().expect("an address"),
        drain_ms: 0,
        poll_interval_ms: 100,
        store,
        ..Default::default()
    };
    tasks_fixture::open_server(&settings)
        .await
        .expect("the fixture's store opens")
        .bind(settings.listen)
        .await
        .expect("the fixture binds")
}

fn sqlite(dir: &Path) -> StoreSpec {
    StoreSpec::Sqlite(dir.join("tasks.db"))
}

async fn slow_compute(server: &RunningServer, seconds: f64) -> TaskCall {
    let client = Client::builder(server.url())
        .connect()
        .await
        .expect("connects");
    let arguments = json!({"seconds": seconds, "label": "progress"});
    let execution = client
        .call_tool("slow_compute", arguments.as_object().cloned().unwrap())
        .await
        .expect("the call is accepted");
    match execution {
        Execution::Task(task) => task,
        other => panic!("slow_compute runs as a task: {other:?}"),
    }
}

/// The progress (seconds slept) of every update until the task ends, listening or polling.
async fn progress_until_done(task: &TaskCall, wait: Wait) -> (Vec<f64>, DetailedTask) {
    let options = SettleOptions::default().deadline(LIMIT).wait(wait);
    let mut updates = std::pin::pin!(task.updates(&options));
    let mut seen = Vec::new();
    let mut last = None;
    while let Some(update) = updates.next().await {
        let update = update.expect("an update");
        if let Some(progress) = update.progress() {
            assert_eq!(progress.total(), Some(2.0), "of the seconds asked");
            seen.push(progress.done());
            if update.state.status() == TaskStatus::Working {
                // The status message moves with the progress (not "Task accepted").
                let message = update.task.status_message.as_deref().unwrap_or("");
                let done = message
                    .strip_prefix("Computing: ")
                    .and_then(|rest| rest.strip_suffix(" of 2 s"))
                    .and_then(|done| done.parse::<f64>().ok());
                assert!(
                    done.is_some_and(|shown| (shown - progress.done()).abs() < 0.1),
                    "{message:?} at {}",
                    progress.done()
                );
            }
        }
        last = Some(update);
    }
    (seen, last.expect("a last update"))
}

/// Listening and polling at once while a two-second `slow_compute` runs: each sees the
/// progress grow, never go back, and end at its total, with a status message that says it
/// (`Computing: 1.2 of 2 s`).
async fn progress_grows(store: StoreSpec) {
    let server = start(store).await;
    let task = slow_compute(&server, 2.0).await;
    let (listened, polled) = tokio::join!(
        progress_until_done(&task, Wait::Listen),
        progress_until_done(&task, Wait::Poll)
    );
    for (how, (seen, last)) in [("listen", listened), ("tasks/get", polled)] {
        assert_eq!(last.state.status(), TaskStatus::Completed, "{how}");
        assert!(
            seen.windows(2).all(|w| w[0] <= w[1]),
            "{how}: never backwards: {seen:?}"
        );
        let mut distinct = seen.clone();
        distinct.dedup();
        assert!(
            distinct.len() >= 3,
            "{how}: seen growing while it ran: {seen:?}"
        );
        assert_eq!(seen.last(), Some(&2.0), "{how}: the end: {seen:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_grows_on_listen_and_tasks_get_in_memory() {
    progress_grows(StoreSpec::Memory).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_grows_on_listen_and_tasks_get_on_sqlite() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    progress_grows(sqlite(dir.path())).await;
}

/// A tokio runtime standing for one server process: dropping it ends everything the process
/// ran (its server, its workers, its store), as a crash does.
fn process() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

#[test]
fn progress_is_kept_across_a_restart_on_sqlite() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let first = process();
    let (id, seen) = first.block_on(async {
        let server = start(sqlite(dir.path())).await;
        let task = slow_compute(&server, 60.0).await;
        // Listen until half a second has been slept; the last progress seen was stored.
        let options = SettleOptions::default().deadline(LIMIT);
        let mut updates = std::pin::pin!(task.updates(&options));
        let mut seen = Vec::new();
        while seen.last().is_none_or(|&done| done < 0.5) {
            let update = updates.next().await.expect("an update").expect("no error");
            if let Some(progress) = update.progress() {
                seen.push(progress.done());
            }
        }
        (task.id().clone(), seen)
    });
    // The node dies with the task running.
    drop(first);

    process().block_on(async {
        let server = start(sqlite(dir.path())).await;
        let client = Client::builder(server.url())
            .connect()
            .await
            .expect("connects");
        let after = client
            .task(id)
            .get()
            .await
            .expect("the task is still there");
        // slow_compute is not re-run after a crash: it fails as interrupted, where it got to.
        assert_eq!(after.state.status(), TaskStatus::Failed);
        let kept = after.progress().expect("the progress survived the restart");
        let before = *seen.last().unwrap();
        assert!(
            kept.done() >= before && kept.done() < 60.0,
            "kept {} after seeing {seen:?}",
            kept.done()
        );
        assert_eq!(kept.total(), Some(60.0));
    });
}
