//! How long a test waits before it fails instead of hanging, and waiting on a condition.

use std::time::Duration;

/// How long any wait may take before the test fails instead of hanging. Under paused time it
/// is virtual: a deadlocked runtime auto-advances to it at once.
pub const WAIT_LIMIT: Duration = Duration::from_secs(30);

/// `future`'s output; fails the test, naming `what`, when it takes longer than
/// [`WAIT_LIMIT`] (of tokio time).
///
/// # Panics
/// When `future` takes longer.
pub async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(WAIT_LIMIT, future).await {
        Ok(output) => output,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// Yields until `cond` holds; fails after [`WAIT_LIMIT`] of tokio time.
///
/// # Panics
/// When `cond` does not hold in time.
pub async fn yield_until(what: &str, cond: impl Fn() -> bool) {
    within(what, async {
        while !cond() {
            tokio::task::yield_now().await;
        }
    })
    .await;
}
