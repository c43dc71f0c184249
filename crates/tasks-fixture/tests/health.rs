//! `GET /healthz` follows the store: 503 while the store refuses the node's lease renewals
//! (writes), 200 again once it accepts them; `mcp_lease_renewals_total` counts both outcomes.

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
