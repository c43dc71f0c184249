//! JSON numbers as this server writes them: a whole number as an integer (`40`, not `40.0`),
//! as MCP's examples of `notifications/progress` show them
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress>).

use serde::{Serialize, Serializer};

/// The largest integer a JSON number holds exactly (2^53 − 1).
const EXACT: f64 = 9_007_199_254_740_991.0;

/// Writes `value` as an integer when it is a whole number a JSON number holds exactly, else as
/// a float.
pub(crate) fn whole_as_integer<S: Serializer>(
    value: &f64,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && value.abs() <= EXACT {
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

/// [`whole_as_integer`] of an optional number (`None` as `null`).
pub(crate) fn optional_whole_as_integer<S: Serializer>(
    value: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => whole_as_integer(value, serializer),
        None => serializer.serialize_none(),
    }
}

/// A number written as [`whole_as_integer`] writes it.
pub(crate) struct Number(pub(crate) f64);

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        whole_as_integer(&self.0, serializer)
    }
}
