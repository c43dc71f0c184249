//! The wall clock used for task timestamps and TTL.

use std::time::{SystemTime, UNIX_EPOCH};

use tasks_core::Timestamp;

/// A source of wall-clock time.
pub trait Clock: Send + Sync + 'static {
    /// The current UTC time in milliseconds.
    fn now(&self) -> Timestamp;
}

/// Wall-clock time that advances with tokio's clock.
///
/// It reads the system clock once, at construction, and then adds the elapsed
/// `tokio::time::Instant` time. Under `tokio::time::pause()` the timestamps (and so TTL expiry)
/// move exactly when a test advances time, together with timers such as the reaper's.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    base_ms: u64,
    start: tokio::time::Instant,
}

impl TokioClock {
    /// A clock starting at the current system time.
    pub fn new() -> Self {
        let base_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        Self::starting_at(Timestamp::from_unix_millis(base_ms))
    }

    /// A clock that reads `start` now (for tests).
    pub fn starting_at(start: Timestamp) -> Self {
        TokioClock {
            base_ms: start.unix_millis(),
            start: tokio::time::Instant::now(),
        }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Timestamp {
        let elapsed = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        Timestamp::from_unix_millis(self.base_ms.saturating_add(elapsed))
    }
}
