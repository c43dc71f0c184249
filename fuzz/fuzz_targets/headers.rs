//! Routing-header value decoding (`tasks_core::headers`): trimming, the visible-ASCII rule,
//! strict `=?base64?…?=` decoding in `Mcp-Name`, comparison and repetition. Total; failures are
//! -32020 with a message that never echoes the value; base64 round-trips.
#![no_main]

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use tasks_core::headers::{check_mirrored, decode_value, single, MirroredHeader};

const HEADERS: [MirroredHeader; 3] = [
    MirroredHeader::ProtocolVersion,
    MirroredHeader::Method,
    MirroredHeader::Name,
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, raw)) = data.split_first() else {
        return;
    };
    let header = HEADERS[usize::from(selector) % 3];
    match decode_value(header, raw) {
        Ok(value) => {
            let value = value.into_owned();
            // The value matches itself, whichever spelling was sent ...
            assert!(check_mirrored(header, Some(raw), Some(&value)).is_ok());
            assert!(check_mirrored(header, Some(raw), None).is_ok());
            // ... and nothing else.
            let other = format!("{value}x");
            assert!(check_mirrored(header, Some(raw), Some(&other)).is_err());
            let wrapped = raw.trim_ascii().starts_with(b"=?base64?") && header.allows_base64();
            if !wrapped {
                assert!(value
                    .bytes()
                    .all(|b| (0x20..=0x7e).contains(&b) || b == b'\t'));
                assert!(!value.starts_with([' ', '\t']) && !value.ends_with([' ', '\t']));
            } else {
                assert!(
                    !value.is_empty(),
                    "an empty decoded value is never accepted"
                );
            }
        }
        Err(error) => {
            assert_eq!(error.code(), -32020);
            assert_eq!(error.http_status(), 400);
            let message = error.to_string();
            assert!(message.starts_with("Invalid ") || message.starts_with("Mcp-Name"));
            if raw.len() >= 8 {
                assert!(!message.as_bytes().windows(raw.len()).any(|w| w == raw));
            }
            // A value that fails to decode never matches anything.
            assert!(check_mirrored(header, Some(raw), None).is_err());
        }
    }
    // Any non-empty UTF-8 text round-trips through the base64 form of Mcp-Name.
    if let Ok(text) = std::str::from_utf8(raw) {
        if !text.is_empty() {
            let wrapped = format!("=?base64?{}?=", STANDARD.encode(text));
            let decoded = decode_value(MirroredHeader::Name, wrapped.as_bytes()).unwrap();
            assert_eq!(decoded, text);
        }
    }
    // Repetition: one value is kept, two are an error.
    assert_eq!(single(header, [raw]).unwrap(), Some(raw));
    assert_eq!(single(header, [raw, raw]).unwrap_err().code(), -32020);
});
