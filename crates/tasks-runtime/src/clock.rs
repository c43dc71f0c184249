//! The wall clock used for task timestamps and TTL.

use std::time::{SystemTime, UNIX_EPOCH};

use tasks_core::Timestamp;

/// A source of wall-clock time.
pub trait Clock: Send + Sync + 'static {
    /// The current UTC time in milliseconds.
    fn now(&self) -> Timestamp;
}

/// A shared handle on a [`Clock`], for [`RuntimeConfig::clock`](crate::RuntimeConfig::clock):
/// cheap to clone, equal to its clones (two handles are equal when they share one clock).
#[derive(Clone)]
pub struct SharedClock(pub(crate) std::sync::Arc<dyn Clock>);

impl SharedClock {
    /// A handle on `clock`.
    pub fn new(clock: std::sync::Arc<dyn Clock>) -> Self {
        SharedClock(clock)
    }
}

impl PartialEq for SharedClock {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SharedClock {}

impl std::fmt::Debug for SharedClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedClock({})", self.0.now().unix_millis())
    }
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

/// A clock that never goes back and never reads below a floor: the highest time the store has
/// acted on ([`crate::store::Store::time_floor`]). [`crate::TaskRuntime`] wraps its clock in one unless
/// the store brings its own ([`crate::store::Store::clock`]).
///
/// When the wrapped clock steps back (the host's clock was set back, before a restart or
/// while running), readings stand still at the highest one handed out until the wrapped clock
/// passes it again: TTLs, leases and task timestamps then last longer by up to the step, never
/// shorter, and a task that was expired at some reading stays expired (this server's choice,
/// see docs/durability.md, "When the clock moves").
#[derive(Debug)]
pub struct Monotonic<C: ?Sized> {
    high_ms: std::sync::atomic::AtomicU64,
    /// Whether the last reading was held (for one warning per step back).
    held: std::sync::atomic::AtomicBool,
    inner: std::sync::Arc<C>,
}

impl<C: Clock + ?Sized> Monotonic<C> {
    /// `inner`, never read below `floor` nor below an earlier reading.
    pub fn new(inner: std::sync::Arc<C>, floor: Timestamp) -> Self {
        Monotonic {
            high_ms: std::sync::atomic::AtomicU64::new(floor.unix_millis()),
            held: std::sync::atomic::AtomicBool::new(false),
            inner,
        }
    }
}

impl<C: Clock + ?Sized> Clock for Monotonic<C> {
    fn now(&self) -> Timestamp {
        use std::sync::atomic::Ordering;
        let read = self.inner.now().unix_millis();
        let before = self.high_ms.fetch_max(read, Ordering::AcqRel);
        let held = before > read;
        if held != self.held.swap(held, Ordering::Relaxed) && held {
            tracing::warn!(
                behind_ms = before - read,
                "the wall clock is behind the highest time this server has acted on; \
                 time stands still until it catches up"
            );
        }
        Timestamp::from_unix_millis(before.max(read))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    use super::*;

    /// A clock a test sets by hand.
    struct Manual(AtomicU64);

    impl Clock for Manual {
        fn now(&self) -> Timestamp {
            Timestamp::from_unix_millis(self.0.load(Ordering::Relaxed))
        }
    }

    #[test]
    fn monotonic_holds_at_the_floor_and_at_the_highest_reading() {
        let manual = Arc::new(Manual(AtomicU64::new(5_000)));
        let clock = Monotonic::new(manual.clone(), Timestamp::from_unix_millis(7_000));
        assert_eq!(clock.now().unix_millis(), 7_000, "never below the floor");
        manual.0.store(8_000, Ordering::Relaxed);
        assert_eq!(clock.now().unix_millis(), 8_000, "follows once past it");
        manual.0.store(2_000, Ordering::Relaxed);
        assert_eq!(clock.now().unix_millis(), 8_000, "a step back stands still");
        manual.0.store(8_001, Ordering::Relaxed);
        assert_eq!(
            clock.now().unix_millis(),
            8_001,
            "and moves on once caught up"
        );
    }
}
