//! A wait that falls behind the runtime's event channel re-reads at once (tokio's paused
//! clock, memory store): the event it waited for was among those it missed.

use std::sync::Arc;
use std::time::Duration;

use tasks_core::TaskStatus;
use tasks_runtime::{text_result, Limits, RuntimeConfig, Scope, Tool};
use tasks_test_support::{runtime::*, task_wait::*};

#[tokio::test(start_paused = true)]
async fn a_wait_that_falls_behind_re_reads_at_once() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let gated = {
        let gate = gate.clone();
        Tool::new("gated", "Waits for the test", move |_ctx| {
            let gate = gate.clone();
            async move {
                gate.notified().await;
                Ok(text_result("released"))
            }
        })
    };
    let instant = Tool::new("instant", "Answers at once", |_ctx| async {
        Ok(text_result("done"))
    });
    // The guard is an hour away: only the lag can end the wait.
    let config = RuntimeConfig::default()
        .with_wait_recheck(Duration::from_secs(3600))
        .with_limits(Limits::default().with_max_workers(8_192));
    let rt = runtime(vec![gated, instant], config);
    let scope = Scope::shared();
    let id = rt.create(work("gated")).await.unwrap().id().clone();
    let mut wait = rt.wait_task(&scope, &id);
    assert_eq!(wait.current().await.unwrap().status(), TaskStatus::Working);

    gate.notify_one();
    let done = wait_terminal(&rt, &scope, &id).await;
    // Over 4096 events (the channel's capacity), one per creation, while the wait is not
    // polled: the completion's event is dropped from under it.
    for _ in 0..4_200 {
        rt.create(work("instant")).await.unwrap();
    }
    let seen = tokio::time::timeout(Duration::from_millis(100), wait.next())
        .await
        .expect("falling behind makes the wait re-read at once")
        .unwrap();
    assert_eq!(*seen, *done);
}
