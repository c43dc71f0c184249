//! The database server's clock, read locally: [`DbClock`] adds the local monotonic clock
//! (`std::time::Instant`) to an offset measured against the server's `clock_timestamp()`,
//! at connect and then every [`REFRESH`] in the background.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use deadpool_postgres::{Object, Pool};
use tasks_core::Timestamp;
use tasks_runtime::Clock;
use tokio_util::sync::CancellationToken;

use crate::backend;

/// How often the offset is measured again.
const REFRESH: Duration = Duration::from_secs(30);

/// Round trips per measurement; the one with the shortest round trip is kept (it bounds the
/// error best).
const SAMPLES: usize = 3;

/// A correction backwards smaller than this is absorbed: `now` holds still until the new
/// reading catches up, so readings never go back. A larger one (the server's clock was
/// stepped) is taken as is, so every node follows the server at once.
const MAX_HOLD_MS: u64 = 1_000;

/// The server's time in microseconds since the Unix epoch.
const SQL: &str = "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint";

/// The database server's wall clock, read without a round trip: the local monotonic clock plus
/// the last measured offset. Readings never go back by less than [`MAX_HOLD_MS`].
#[derive(Debug)]
pub(crate) struct DbClock {
    /// The local origin of `offset_us`.
    origin: Instant,
    /// The server's time (µs since the Unix epoch) at `origin`, per the last measurement.
    offset_us: AtomicI64,
    /// The latest reading handed out (ms since the Unix epoch).
    last_ms: AtomicU64,
}

/// One round trip: when it was sent and answered locally, and the server's time in between.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    sent: Instant,
    received: Instant,
    server_us: i64,
}

impl Sample {
    /// The server's time at `origin`, assuming the server read its clock halfway through the
    /// round trip (the error is at most half the round trip).
    fn offset_us(&self, origin: Instant) -> i64 {
        let midpoint = self.sent + (self.received - self.sent) / 2;
        self.server_us
            .saturating_sub(micros(midpoint.saturating_duration_since(origin)))
            + micros(origin.saturating_duration_since(midpoint))
    }

    fn round_trip(&self) -> Duration {
        self.received - self.sent
    }
}

impl DbClock {
    /// A clock set by `sample`.
    fn new(sample: Sample) -> DbClock {
        let origin = sample.sent;
        DbClock {
            origin,
            offset_us: AtomicI64::new(sample.offset_us(origin)),
            last_ms: AtomicU64::new(0),
        }
    }

    /// Sets the offset from a newer `sample`.
    fn adjust(&self, sample: Sample) {
        self.offset_us
            .store(sample.offset_us(self.origin), Ordering::Relaxed);
    }

    /// The server's time now per the last measurement, in ms, before the monotonic hold.
    fn reading_ms(&self, at: Instant) -> u64 {
        let us = self
            .offset_us
            .load(Ordering::Relaxed)
            .saturating_add(micros(at.saturating_duration_since(self.origin)));
        u64::try_from(us / 1_000).unwrap_or(0)
    }

    /// The reading at `at`, held so that it never goes back by less than [`MAX_HOLD_MS`].
    fn read(&self, at: Instant) -> u64 {
        let reading = self.reading_ms(at);
        let mut last = self.last_ms.load(Ordering::Acquire);
        loop {
            if reading <= last && last - reading <= MAX_HOLD_MS {
                return last;
            }
            match self.last_ms.compare_exchange_weak(
                last,
                reading,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return reading,
                Err(current) => last = current,
            }
        }
    }
}

impl Clock for DbClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_millis(self.read(Instant::now()))
    }
}

/// Measures the server's clock on `client` ([`SAMPLES`] round trips, the shortest kept).
pub(crate) async fn measure(client: &Object) -> Result<DbClock, tokio_postgres::Error> {
    Ok(DbClock::new(best_sample(client).await?))
}

/// Re-measures `clock` every [`REFRESH`] on a pooled connection until `stop` is cancelled. A
/// failed measurement keeps the previous offset (the local monotonic clock goes on).
pub(crate) fn refresh(clock: Arc<DbClock>, pool: Pool, stop: CancellationToken) {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(REFRESH) => {}
            }
            let measured = tokio::select! {
                () = stop.cancelled() => return,
                measured = remeasure(&clock, &pool) => measured,
            };
            if let Err(error) = measured {
                tracing::warn!(%error, "measuring the database clock failed; keeping the last offset");
            }
        }
    });
}

async fn remeasure(clock: &DbClock, pool: &Pool) -> Result<(), String> {
    let client = pool.get().await.map_err(|e| match e {
        deadpool_postgres::PoolError::Backend(e) => backend::describe(&e),
        other => backend::chain(&other),
    })?;
    let sample = best_sample(&client)
        .await
        .map_err(|e| backend::describe(&e))?;
    clock.adjust(sample);
    Ok(())
}

async fn best_sample(client: &Object) -> Result<Sample, tokio_postgres::Error> {
    let statement = client.prepare_cached(SQL).await?;
    let mut best: Option<Sample> = None;
    for _ in 0..SAMPLES {
        let sent = Instant::now();
        let row = client.query_one(&statement, &[]).await?;
        let received = Instant::now();
        let sample = Sample {
            sent,
            received,
            server_us: row.try_get(0)?,
        };
        if best.is_none_or(|b| sample.round_trip() < b.round_trip()) {
            best = Some(sample);
        }
    }
    Ok(best.expect("SAMPLES > 0"))
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVER_US: i64 = 1_700_000_000_000_000;

    fn sample(origin: Instant, sent_ms: u64, trip_ms: u64, server_us: i64) -> Sample {
        let sent = origin + Duration::from_millis(sent_ms);
        Sample {
            sent,
            received: sent + Duration::from_millis(trip_ms),
            server_us,
        }
    }

    #[test]
    fn the_offset_corrects_for_half_the_round_trip() {
        let origin = Instant::now();
        // The server answered 1_700_000_000_000 ms during a 10 ms round trip: it read its
        // clock at +5 ms, so at +25 ms it reads 20 ms later.
        let clock = DbClock::new(sample(origin, 0, 10, SERVER_US));
        let later = origin + Duration::from_millis(25);
        assert_eq!(clock.read(later), 1_700_000_000_020);
    }

    #[test]
    fn a_sample_before_the_origin_still_measures_right() {
        let origin = Instant::now() + Duration::from_secs(1);
        let clock = DbClock::new(sample(origin, 0, 0, SERVER_US));
        let early = Sample {
            sent: origin - Duration::from_millis(100),
            received: origin - Duration::from_millis(100),
            server_us: SERVER_US - 100_000,
        };
        clock.adjust(early);
        assert_eq!(clock.read(origin), 1_700_000_000_000);
    }

    #[test]
    fn small_corrections_backwards_hold_the_clock_large_ones_are_followed() {
        let origin = Instant::now();
        let clock = DbClock::new(sample(origin, 0, 0, SERVER_US));
        let at = origin + Duration::from_millis(100);
        assert_eq!(clock.read(at), 1_700_000_000_100);

        // The server turns out 40 ms behind: the clock holds at what it said until it catches up.
        clock.adjust(sample(origin, 100, 0, SERVER_US + 60_000));
        assert_eq!(clock.read(at), 1_700_000_000_100);
        assert_eq!(
            clock.read(origin + Duration::from_millis(120)),
            1_700_000_000_100
        );
        assert_eq!(
            clock.read(origin + Duration::from_millis(150)),
            1_700_000_000_110
        );

        // The server's clock was stepped back an hour: followed at once.
        clock.adjust(sample(origin, 150, 0, SERVER_US - 3_600_000_000));
        assert_eq!(
            clock.read(origin + Duration::from_millis(150)),
            1_700_000_000_000 - 3_600_000
        );
    }
}
