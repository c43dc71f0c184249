//! The store's clock reads the database server's `clock_timestamp()`, and never goes back.

use crate::common;

use common::Database;
use tasks_runtime::store::Store;

/// The server's time in ms since the Unix epoch.
async fn server_ms(admin: &tokio_postgres::Client) -> u64 {
    let ms: i64 = admin
        .query_one(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            &[],
        )
        .await
        .expect("the server's time")
        .get(0);
    u64::try_from(ms).expect("after 1970")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clock_is_the_servers() {
    let Some(db) = Database::open().await else {
        return;
    };
    let store = db.store().await;
    let clock = store.clock().expect("a PostgreSQL store has a clock");
    let admin = db.admin().await;

    for _ in 0..5 {
        let before = clock.now().unix_millis();
        let server = server_ms(&admin).await;
        let after = clock.now().unix_millis();
        assert!(before <= after, "{before} then {after}");
        assert!(
            before.saturating_sub(1_000) <= server && server <= after + 1_000,
            "server {server} ms, store clock {before}..{after} ms"
        );
    }

    // Readings never go back, whatever thread reads.
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let clock = clock.clone();
            std::thread::spawn(move || {
                let mut last = 0;
                for _ in 0..100_000 {
                    let now = clock.now().unix_millis();
                    assert!(now >= last, "{now} after {last}");
                    last = now;
                }
                last
            })
        })
        .collect();
    for reader in readers {
        reader.join().expect("reader");
    }

    // The clock outlives the store (it only stops being re-measured).
    drop(store);
    let server = server_ms(&admin).await;
    let now = clock.now().unix_millis();
    assert!(now.abs_diff(server) <= 1_000, "{now} vs {server}");
}
