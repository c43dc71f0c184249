//! Wall-clock instants, passed in by the caller.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::format_description::well_known::Rfc3339;
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

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`: the length of every timestamp this type writes (years are
/// clamped to four digits).
const RFC3339_MILLIS_LEN: usize = 24;

impl Timestamp {
    /// The wire form, `2026-11-03T18:04:05.123Z`, written into a fixed buffer: the `time` crate
    /// gives the calendar date and the time of day, and the digits are placed directly (its
    /// format-description formatter went through `fmt::Write` one item at a time, about 12 % of
    /// a `tasks/get` served in process, for two timestamps).
    fn to_rfc3339_millis(self) -> [u8; RFC3339_MILLIS_LEN] {
        let datetime = self.to_datetime();
        let (year, month, day) = datetime.to_calendar_date();
        let (hour, minute, second, milli) = datetime.to_hms_milli();
        let mut out = *b"0000-00-00T00:00:00.000Z";
        // `to_datetime` keeps the year within 1970..=9999.
        let year = u32::try_from(year).unwrap_or(0);
        put_digits(&mut out[0..4], year);
        put_digits(&mut out[5..7], u32::from(u8::from(month)));
        put_digits(&mut out[8..10], u32::from(day));
        put_digits(&mut out[11..13], u32::from(hour));
        put_digits(&mut out[14..16], u32::from(minute));
        put_digits(&mut out[17..19], u32::from(second));
        put_digits(&mut out[20..23], u32::from(milli));
        out
    }
}

/// Writes `value` as decimal digits filling `field`, zero-padded on the left.
fn put_digits(field: &mut [u8], mut value: u32) {
    for digit in field.iter_mut().rev() {
        // `value % 10` is below 10, so the cast cannot truncate.
        *digit = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.to_rfc3339_millis();
        // Every byte is an ASCII digit or one of `-T:.Z`.
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = self.to_rfc3339_millis();
        match std::str::from_utf8(&text) {
            Ok(text) => serializer.serialize_str(text),
            Err(_) => Err(serde::ser::Error::custom("timestamp is not ASCII")),
        }
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
    fn clamps_to_four_digit_years() {
        assert_eq!(
            Timestamp::from_unix_millis(u64::MAX).to_string(),
            "9999-12-31T23:59:59.999Z"
        );
    }

    proptest::proptest! {
        /// The digits written directly are what the `time` crate's own formatter writes for
        /// the same instant, over the whole four-digit range of years.
        #[test]
        fn writes_what_the_time_crate_formats(ms in 0u64..=253_402_300_799_999) {
            let format = time::macros::format_description!(
                "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
            );
            let t = Timestamp::from_unix_millis(ms);
            let expected = t.to_datetime().format(&format).unwrap();
            proptest::prop_assert_eq!(t.to_string(), expected.clone());
            proptest::prop_assert_eq!(
                serde_json::to_string(&t).unwrap(),
                format!("\"{expected}\"")
            );
        }
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
