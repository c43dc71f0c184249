//! Waiting between reconnection attempts: 100 ms, doubling up to 5 s, back to 100 ms once a
//! connection works again.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

const FIRST: Duration = Duration::from_millis(100);
const MAX: Duration = Duration::from_secs(5);

/// The delay before the next attempt.
#[derive(Debug)]
pub(super) struct Backoff {
    next: Duration,
}

impl Backoff {
    pub(super) fn new() -> Backoff {
        Backoff { next: FIRST }
    }

    /// A connection works: the next failure waits [`FIRST`] again.
    pub(super) fn reset(&mut self) {
        self.next = FIRST;
    }

    /// The delay to wait now; the one after is twice as long, up to [`MAX`].
    fn take(&mut self) -> Duration {
        let delay = self.next;
        self.next = (self.next * 2).min(MAX);
        delay
    }

    /// Waits the next delay; `false` when `stop` was cancelled first.
    pub(super) async fn wait(&mut self, stop: &CancellationToken) -> bool {
        let delay = self.take();
        tokio::select! {
            () = stop.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_five_seconds_and_reset() {
        let mut backoff = Backoff::new();
        let delays: Vec<u64> = (0..8).map(|_| backoff.take().as_millis() as u64).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
        backoff.reset();
        assert_eq!(backoff.take(), FIRST);
    }
}
