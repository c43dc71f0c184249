//! The admin surface's token bucket ([`RateLimit`]): one for the whole router, whoever asks.

use std::sync::Mutex;

use tokio::time::Instant;

use crate::config::RateLimit;

/// A token bucket on tokio's clock (so a paused test clock drives it).
#[derive(Debug)]
pub(crate) struct Bucket {
    per_second: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl Bucket {
    /// A full bucket for `limit`.
    pub(crate) fn new(limit: RateLimit) -> Self {
        let burst = f64::from(limit.burst.max(1));
        Bucket {
            per_second: f64::from(limit.per_second.max(1)),
            burst,
            state: Mutex::new((burst, Instant::now())),
        }
    }

    /// Takes one token; `false` when there is none left.
    pub(crate) fn take(&self) -> bool {
        let mut state = match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(state.1).as_secs_f64();
        state.0 = (state.0 + elapsed * self.per_second).min(self.burst);
        state.1 = now;
        if state.0 >= 1.0 {
            state.0 -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_empties_the_bucket_and_time_refills_it() {
        let bucket = Bucket::new(RateLimit {
            per_second: 2,
            burst: 3,
        });
        assert_eq!((0..5).filter(|_| bucket.take()).count(), 3);
        tokio::time::advance(std::time::Duration::from_millis(500)).await;
        assert!(bucket.take());
        assert!(!bucket.take());
        tokio::time::advance(std::time::Duration::from_secs(10)).await;
        assert_eq!((0..5).filter(|_| bucket.take()).count(), 3);
    }
}
