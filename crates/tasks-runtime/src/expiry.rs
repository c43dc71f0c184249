//! The earliest expiry among many entries, so that a periodic sweep skips its scan while
//! nothing can be due: with 1 000 000 stored tasks a scan takes milliseconds on the thread
//! that serves requests, and with no time to live (or long ones) it would find nothing.

use std::sync::atomic::{AtomicU64, Ordering};

use tasks_core::Timestamp;

/// The earliest expiry noted since the last sweep, in Unix milliseconds (`u64::MAX`: none).
#[derive(Debug)]
pub(crate) struct NextExpiry(AtomicU64);

impl Default for NextExpiry {
    fn default() -> Self {
        NextExpiry(AtomicU64::new(u64::MAX))
    }
}

impl NextExpiry {
    /// Notes an entry that expires at `at` (`None`: never). Call it after the entry is in
    /// the swept collection, so a sweep that starts in between still sees the entry.
    pub(crate) fn note(&self, at: Option<Timestamp>) {
        if let Some(at) = at {
            self.0.fetch_min(at.unix_millis(), Ordering::AcqRel);
        }
    }

    /// Whether a sweep at `now` can find an expired entry. When it can, the sweep starts
    /// here: the sweeper must [`NextExpiry::note`] every entry it keeps.
    pub(crate) fn sweep_due(&self, now: Timestamp) -> bool {
        if now.unix_millis() < self.0.load(Ordering::Acquire) {
            return false;
        }
        self.0.store(u64::MAX, Ordering::Release);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_unix_millis(ms)
    }

    #[test]
    fn a_sweep_is_due_once_the_earliest_noted_expiry_is_reached() {
        let next = NextExpiry::default();
        assert!(!next.sweep_due(at(u64::MAX - 1)), "nothing noted");
        next.note(None);
        assert!(!next.sweep_due(at(u64::MAX - 1)), "never expires");
        next.note(Some(at(500)));
        next.note(Some(at(200)));
        assert!(!next.sweep_due(at(199)));
        assert!(next.sweep_due(at(200)));
        // The sweep kept the entry expiring at 500.
        next.note(Some(at(500)));
        assert!(!next.sweep_due(at(499)));
        assert!(next.sweep_due(at(500)));
        assert!(!next.sweep_due(at(10_000)), "the sweep kept nothing");
    }
}
