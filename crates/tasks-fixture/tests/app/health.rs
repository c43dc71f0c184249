//! `GET /healthz` follows the store: 503 while the store refuses the node's lease renewals
//! (writes), or does not answer them in time (a stalled writer), 200 again once it accepts
//! them; `mcp_lease_renewals_total` counts both outcomes, and a stall shows in
//! `mcp_store_deadline_exceeded_total` and `mcp_node_self_fences_total`.

use std::sync::Arc;
use std::time::Duration;

use tasks_fixture::Settings;
use tasks_store_sqlite::{SqliteOptions, SqliteStore};

/// Polls `url` until its status is `status`, within 15 s; returns the body.
async fn until_status(url: &str, status: u16) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let response = reqwest::get(url).await.unwrap();
        if response.status().as_u16() == status {
            return response.text().await.unwrap();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{url} never answered {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The value of the sample `series` in the scrape `metrics`.
fn sample(metrics: &str, series: &str) -> u64 {
    let prefix = format!("{series} ");
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no {prefix:?} in:\n{metrics}"))
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_is_503_while_the_store_stalls() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        Arc::new(SqliteStore::open(dir.path().join("tasks.db"), SqliteOptions::default()).unwrap());
    let settings = Settings {
        lease_ms: 1_500, // renewed every 500 ms, each renewal given 250 ms
        ..Settings::default()
    };
    let (mcp, handle) = tasks_fixture::server(&settings)
        .store(store.clone())
        .into_service()
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = tasks_fixture::app::router(mcp, &settings);
    tokio::spawn(tasks_http::serve(listener, app, handle.shutdown_token()));
    let health = format!("http://{addr}/healthz");

    assert_eq!(until_status(&health, 200).await, "ok\n");
    // The writer thread stops answering (a disk or a database that hangs): renewals never
    // fail, they just do not come back.
    let pause = store.pause();
    assert_eq!(
        until_status(&health, 503).await,
        "unhealthy: the task store cannot be written\n"
    );
    let scrape = || async {
        reqwest::get(format!("http://{addr}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while sample(
        &scrape().await,
        "mcp_node_self_fences_total{reason=\"stalled\"}",
    ) == 0
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the node never fenced itself"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let metrics = scrape().await;
    assert!(
        sample(
            &metrics,
            "mcp_store_deadline_exceeded_total{operation=\"heartbeat\"}"
        ) >= 1
    );
    drop(pause);
    assert_eq!(until_status(&health, 200).await, "ok\n");
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_is_503_while_the_store_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        Arc::new(SqliteStore::open(dir.path().join("tasks.db"), SqliteOptions::default()).unwrap());
    let settings = Settings {
        lease_ms: 1_000, // renewed every 333 ms
        ..Settings::default()
    };
    let (mcp, handle) = tasks_fixture::server(&settings)
        .store(store.clone())
        .into_service()
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = tasks_fixture::app::router(mcp, &settings);
    tokio::spawn(tasks_http::serve(listener, app, handle.shutdown_token()));
    let health = format!("http://{addr}/healthz");

    assert_eq!(until_status(&health, 200).await, "ok\n");
    store.fail_next_commits(usize::MAX);
    assert_eq!(
        until_status(&health, 503).await,
        "unhealthy: the task store cannot be written\n"
    );
    store.fail_next_commits(0);
    assert_eq!(until_status(&health, 200).await, "ok\n");

    let metrics = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for outcome in ["ok", "failed"] {
        let prefix = format!("mcp_lease_renewals_total{{outcome=\"{outcome}\"}} ");
        let count: u64 = metrics
            .lines()
            .find_map(|line| line.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("no {prefix:?} in:\n{metrics}"))
            .parse()
            .unwrap();
        assert!(count >= 1, "{prefix}{count}");
    }
    handle.shutdown().await;
}
