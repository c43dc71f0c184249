//! A canonical byte encoding of JSON values, for hashing: two values that mean the same get
//! the same bytes, and two that differ get different bytes, whatever the map's iteration order
//! (serde_json's `preserve_order` feature keeps insertion order) and however a number was
//! spelled.
//!
//! * Objects: their entries sorted by key (by the keys' UTF-8 bytes).
//! * Numbers: a number with an integral value is encoded by its exact decimal digits, so `1`,
//!   `1.0` and `1e0` are the same, and integers that serde_json holds exactly (all of `i64`
//!   and `u64`, beyond 2^53 too) keep every digit: two different integers never meet. Other
//!   numbers are encoded by the shortest decimal that reads back as the same `f64`.
//! * Every string, key and container is prefixed with its length, and every value with a
//!   type tag, so no two different values are spelled alike (`{"a":"bc"}` vs `{"ab":"c"}`).
//!
//! Used for the digests bound into a `requestState` ([`crate::mrtr`]).

use serde_json::{Map, Number, Value};

/// Feeds the canonical encoding of `value` to `out` (a hasher's `update`), in pieces.
pub(crate) fn encode(value: &Value, out: &mut impl FnMut(&[u8])) {
    match value {
        Value::Null => out(b"n"),
        Value::Bool(false) => out(b"f"),
        Value::Bool(true) => out(b"t"),
        Value::Number(number) => {
            out(b"#");
            text(&number_text(number), out);
        }
        Value::String(string) => {
            out(b"s");
            text(string, out);
        }
        Value::Array(items) => {
            out(b"[");
            out(&(items.len() as u64).to_be_bytes());
            for item in items {
                encode(item, out);
            }
        }
        Value::Object(map) => encode_object(map, out),
    }
}

/// [`encode`] of an object.
pub(crate) fn encode_object(map: &Map<String, Value>, out: &mut impl FnMut(&[u8])) {
    out(b"{");
    out(&(map.len() as u64).to_be_bytes());
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    for (key, item) in entries {
        text(key, out);
        encode(item, out);
    }
}

/// The canonical encoding of `value` as one byte vector.
#[cfg(test)]
fn to_bytes(value: &Value) -> Vec<u8> {
    let mut bytes = Vec::new();
    encode(value, &mut |piece| bytes.extend_from_slice(piece));
    bytes
}

/// A length-prefixed string.
fn text(text: &str, out: &mut impl FnMut(&[u8])) {
    out(&(text.len() as u64).to_be_bytes());
    out(text.as_bytes());
}

/// The digits of an integral value (exact), or the shortest round-trip decimal of another.
fn number_text(number: &Number) -> String {
    if let Some(n) = number.as_i64() {
        return n.to_string();
    }
    if let Some(n) = number.as_u64() {
        return n.to_string();
    }
    let Some(f) = number.as_f64() else {
        // Only with serde_json's `arbitrary_precision`: the digits as given.
        return number.to_string();
    };
    if f.is_finite() && f.fract() == 0.0 {
        // Integral: every f64 with an integral value below 2^127 converts to i128 exactly,
        // and larger ones print without an exponent in `{:.0}`.
        if f.abs() < 1.7e38 {
            return (f as i128).to_string();
        }
        return format!("{f:.0}");
    }
    // Rust prints the shortest decimal that reads back as the same f64.
    format!("{f:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn same(a: &str, b: &str) -> bool {
        let parse = |s: &str| serde_json::from_str::<Value>(s).expect("json");
        to_bytes(&parse(a)) == to_bytes(&parse(b))
    }

    #[test]
    fn a_number_is_the_same_however_it_is_spelled() {
        assert!(same("1", "1.0"));
        assert!(same("1", "1e0"));
        assert!(same("-0", "0"));
        assert!(same("-0.0", "0"));
        assert!(same("100", "1e2"));
        assert!(same("0.5", "5e-1"));
        assert!(same("[1, 2.50]", "[1.0, 2.5]"));
        assert!(!same("1", "1.5"));
        assert!(!same("1", "\"1\""));
    }

    #[test]
    fn integers_beyond_2_pow_53_keep_every_digit() {
        // 2^53 and 2^53 + 1 are one f64; as integers they differ.
        assert!(!same("9007199254740992", "9007199254740993"));
        assert!(!same("18446744073709551615", "18446744073709551614"));
        assert!(!same("-9223372036854775808", "-9223372036854775807"));
        assert_eq!(number_text(&Number::from(u64::MAX)), "18446744073709551615");
        assert_eq!(number_text(&Number::from(i64::MIN)), "-9223372036854775808");
        // Beyond u64 serde_json holds an f64; its integral value is written out exactly.
        assert!(same("1e20", "100000000000000000000"));
        assert_eq!(
            number_text(&Number::from_f64(1e20).expect("finite")),
            "100000000000000000000"
        );
        assert_eq!(
            number_text(&Number::from_f64(1e300).expect("finite")).len(),
            301
        );
    }

    #[test]
    fn key_order_does_not_matter_and_nothing_runs_together() {
        let mut a = serde_json::Map::new();
        a.insert("b".into(), json!(1));
        a.insert("a".into(), json!(2));
        let mut b = serde_json::Map::new();
        b.insert("a".into(), json!(2));
        b.insert("b".into(), json!(1));
        assert_eq!(to_bytes(&Value::Object(a)), to_bytes(&Value::Object(b)));
        assert!(!same(r#"{"a":"bc"}"#, r#"{"ab":"c"}"#));
        assert!(!same(r#"["a","b"]"#, r#"["ab"]"#));
        assert!(!same(r#"[[],[]]"#, r#"[[[]]]"#));
        assert!(!same("null", "false"));
        assert!(!same(r#"{}"#, r#"[]"#));
    }
}
