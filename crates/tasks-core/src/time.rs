//! Wall-clock instants, passed in by the caller.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::OffsetDateTime;

/// A UTC instant in whole milliseconds since the Unix epoch.
///
/// On the wire (`createdAt`, `lastUpdatedAt`) it is RFC 3339 in UTC with exactly three
/// fractional digits, e.g. `2026-11-03T18:04:05.123Z`. The core never reads a clock: callers
/// pass the current time to [`crate::apply`] and [`crate::Task::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(u64);

impl Timestamp {
    /// From milliseconds since the Unix epoch.
    pub const fn from_unix_millis(ms: u64) -> Self {
        Timestamp(ms)
    }

    /// Milliseconds since the Unix epoch.
    pub const fn unix_millis(self) -> u64 {
        self.0
    }

    /// This instant plus `ms` milliseconds (saturating).
    pub const fn plus_millis(self, ms: u64) -> Self {
        Timestamp(self.0.saturating_add(ms))
    }

    /// Parses an RFC 3339 timestamp (any offset, any precision; sub-millisecond digits are
    /// truncated). Instants before 1970 are rejected.
    pub fn parse_rfc3339(text: &str) -> Option<Self> {
        let t = OffsetDateTime::parse(text, &Rfc3339).ok()?;
        let ms = t.unix_timestamp_nanos() / 1_000_000;
        u64::try_from(ms).ok().map(Timestamp)
    }

    fn to_datetime(self) -> OffsetDateTime {
        // RFC 3339 has four-digit years: clamp to 9999-12-31T23:59:59.999Z.
        const MAX_MS: u64 = 253_402_300_799_999;
        let nanos = i128::from(self.0.min(MAX_MS)) * 1_000_000;
        OffsetDateTime::from_unix_timestamp_nanos(nanos).unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let format = format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        );
        match self.to_datetime().format(&format) {
            Ok(text) => f.write_str(&text),
            Err(_) => Err(fmt::Error),
        }
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Timestamp::parse_rfc3339(&text)
            .ok_or_else(|| serde::de::Error::custom("expected an RFC 3339 timestamp"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_with_milliseconds() {
        assert_eq!(
            Timestamp::from_unix_millis(0).to_string(),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(
            Timestamp::from_unix_millis(1_793_729_045_123).to_string(),
            "2026-11-03T18:04:05.123Z"
        );
    }

    #[test]
    fn round_trips_through_rfc3339() {
        let t = Timestamp::from_unix_millis(1_793_729_045_123);
        assert_eq!(Timestamp::parse_rfc3339(&t.to_string()), Some(t));
        assert_eq!(
            Timestamp::parse_rfc3339("2026-11-03T19:04:05.123456+01:00"),
            Some(t)
        );
    }
}
