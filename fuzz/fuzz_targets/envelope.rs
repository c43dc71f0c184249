//! Request parsing and admission (`tasks_core::plan::admit`): `parse_envelope` then `admit` on
//! arbitrary headers and body. Never panics; every failure has the code of its step.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use tasks_core::plan::{admit, parse_envelope};
use tasks_core::Method;
use tasks_http::Head;

fuzz_target!(|data: &[u8]| {
    let (headers, body) = common::split(data);
    let envelope = match parse_envelope(body) {
        Err(failure) => {
            assert!(
                matches!(failure.error.code(), -32700 | -32600),
                "{failure:?}"
            );
            assert_eq!(failure.error.http_status(), 400);
            if let Some(id) = &failure.id {
                assert!(common::readable_id(id));
            }
            return;
        }
        Ok(envelope) => envelope,
    };
    let Some(id) = envelope.id.clone() else {
        return; // a notification: answered 202 without admission
    };
    assert!(common::readable_id(&id));
    match admit(&Head(&headers), envelope.clone()) {
        Ok(admitted) => {
            assert_eq!(admitted.id, id);
            assert_eq!(admitted.method.as_str(), envelope.method);
            assert_eq!(Method::parse(&envelope.method), Some(admitted.method));
            assert!(admitted.params.is_object());
            assert_eq!(
                admitted.meta.protocol_version,
                headers["mcp-protocol-version"]
                    .to_str()
                    .unwrap()
                    .trim_matches([' ', '\t'])
            );
        }
        Err(error) => {
            assert!(
                matches!(error.code(), -32020 | -32602 | -32022 | -32601),
                "{error:?}"
            );
            assert!(matches!(error.http_status(), 400 | 404));
        }
    }
});
