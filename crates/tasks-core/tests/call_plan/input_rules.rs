//! The client-input rules: which capability each request needs, what an answer means, and the
//! 2025-era answer (`tasks_core::input`, `tasks_core::sessions::session_era_error`).

use crate::common;

use common::{arb_any_json, object};
use proptest::prelude::*;
use serde_json::{json, Value};
use tasks_core::input::{missing_capabilities, InputKind, InvalidResponse, MalformedRequest};
use tasks_core::input::{
    ClientCapability, ElicitAnswer, InputRequest, InputResponse, Root, SamplingRequest,
};
use tasks_core::sessions::session_era_error;
use tasks_core::McpError;

fn form() -> InputRequest {
    InputRequest::elicit_form(
        "Delete q3-report.txt?",
        json!({"type": "object", "properties": {"confirm": {"type": "boolean"}},
               "required": ["confirm"]}),
    )
}

fn url() -> InputRequest {
    InputRequest::elicit_url("Sign in", "https://example.com/login", "e-1")
}

fn required(declared: Value, request: &InputRequest) -> Option<Value> {
    let needs = request.needs().expect("well formed");
    missing_capabilities(&object(declared), needs).map(|e| e.data().unwrap())
}

#[test]
fn each_request_needs_exactly_its_capability() {
    let sample = InputRequest::sample(SamplingRequest::user_text("hi", 10));
    let sample_tools =
        InputRequest::sample(SamplingRequest::user_text("hi", 10).param("tools", json!([])));
    let sample_context = InputRequest::sample(
        SamplingRequest::user_text("hi", 10).param("includeContext", json!("thisServer")),
    );
    let sample_no_context = InputRequest::sample(
        SamplingRequest::user_text("hi", 10).param("includeContext", json!("none")),
    );
    let roots = InputRequest::list_roots();
    let (form, url) = (form(), url());
    let form_data = json!({"requiredCapabilities": {"elicitation": {"form": {}}}});
    let url_data = json!({"requiredCapabilities": {"elicitation": {"url": {}}}});
    let table: Vec<(&InputRequest, Value, Option<Value>)> = vec![
        // Form mode: `elicitation: {}` or `elicitation.form`, never URL-only.
        (&form, json!({"elicitation": {}}), None),
        (&form, json!({"elicitation": {"form": {}}}), None),
        (&form, json!({"elicitation": {"form": {}, "url": {}}}), None),
        (
            &form,
            json!({"elicitation": {"url": {}}}),
            Some(form_data.clone()),
        ),
        (&form, json!({}), Some(form_data.clone())),
        (&form, json!({"sampling": {}}), Some(form_data.clone())),
        (
            &form,
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
            Some(form_data.clone()),
        ),
        (&form, json!({"elicitation": true}), Some(form_data.clone())),
        (&form, json!({"elicitation": null}), Some(form_data)),
        // URL mode: only `elicitation.url`.
        (&url, json!({"elicitation": {"url": {}}}), None),
        (&url, json!({"elicitation": {}}), Some(url_data.clone())),
        (&url, json!({"elicitation": {"form": {}}}), Some(url_data)),
        // Sampling, with its sub-capabilities.
        (&sample, json!({"sampling": {}}), None),
        (
            &sample,
            json!({"elicitation": {}}),
            Some(json!({"requiredCapabilities": {"sampling": {}}})),
        ),
        (&sample_no_context, json!({"sampling": {}}), None),
        (&sample_tools, json!({"sampling": {"tools": {}}}), None),
        (
            &sample_tools,
            json!({"sampling": {}}),
            Some(json!({"requiredCapabilities": {"sampling": {"tools": {}}}})),
        ),
        (
            &sample_tools,
            json!({}),
            Some(json!({"requiredCapabilities": {"sampling": {"tools": {}}}})),
        ),
        (&sample_context, json!({"sampling": {"context": {}}}), None),
        (
            &sample_context,
            json!({"sampling": {"tools": {}}}),
            Some(json!({"requiredCapabilities": {"sampling": {"context": {}}}})),
        ),
        // Roots.
        (&roots, json!({"roots": {}}), None),
        (&roots, json!({"roots": {"listChanged": true}}), None),
        (
            &roots,
            json!({"sampling": {}}),
            Some(json!({"requiredCapabilities": {"roots": {}}})),
        ),
    ];
    for (request, declared, want) in table {
        assert_eq!(
            required(declared.clone(), request),
            want,
            "{request:?} with {declared}"
        );
    }
}

#[test]
fn missing_capabilities_are_named_together() {
    let error = missing_capabilities(
        &object(json!({"elicitation": {"url": {}}})),
        [
            ClientCapability::ElicitationForm,
            ClientCapability::Tasks,
            ClientCapability::Sampling,
        ],
    )
    .expect("missing");
    assert_eq!(error.code(), -32021);
    assert_eq!(error.http_status(), 400);
    assert_eq!(
        error.data(),
        Some(json!({"requiredCapabilities": {
            "elicitation": {"form": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
            "sampling": {}
        }}))
    );
    assert_eq!(
        missing_capabilities(
            &object(json!({"elicitation": {}})),
            [ClientCapability::ElicitationForm]
        ),
        None
    );
}

#[test]
fn malformed_requests_are_the_tools_fault() {
    let bad = |method: &str, params: Value| InputRequest {
        method: method.into(),
        params: params.as_object().cloned(),
    };
    assert_eq!(
        bad("ping", json!({})).kind(),
        Err(MalformedRequest::UnknownMethod)
    );
    assert_eq!(
        bad(
            "elicitation/create",
            json!({"requestedSchema": {"type": "object"}})
        )
        .kind(),
        Err(MalformedRequest::Elicitation),
        "no message"
    );
    assert_eq!(
        bad("elicitation/create", json!({"message": "m"})).kind(),
        Err(MalformedRequest::Elicitation),
        "no schema"
    );
    assert_eq!(
        bad(
            "elicitation/create",
            json!({"message": "m", "mode": "sms", "requestedSchema": {}})
        )
        .kind(),
        Err(MalformedRequest::Elicitation)
    );
    assert_eq!(
        bad(
            "elicitation/create",
            json!({"message": "m", "requestedSchema": {"type": 12}})
        )
        .kind(),
        Err(MalformedRequest::Elicitation),
        "not a JSON Schema"
    );
    assert_eq!(
        bad("elicitation/create", json!({"message": "m", "mode": "url"})).kind(),
        Err(MalformedRequest::Elicitation)
    );
    assert_eq!(
        bad("sampling/createMessage", json!({})).kind(),
        Err(MalformedRequest::Sampling)
    );
    assert_eq!(form().kind(), Ok(InputKind::ElicitForm));
    assert_eq!(url().kind(), Ok(InputKind::ElicitUrl));
    assert_eq!(InputRequest::list_roots().kind(), Ok(InputKind::Roots));
}

#[test]
fn elicitation_answers_mean_what_their_action_says() {
    let check = |request: &InputRequest, answer: Value| request.check_response(&answer);
    let accepted =
        |content: Value| Ok(InputResponse::Elicit(ElicitAnswer::Accept(object(content))));
    // The minimal case: a decline that carries `confirm: true` is a decline.
    assert_eq!(
        check(
            &form(),
            json!({"action": "decline", "content": {"confirm": true}})
        ),
        Ok(InputResponse::Elicit(ElicitAnswer::Decline))
    );
    assert_eq!(
        check(
            &form(),
            json!({"action": "cancel", "content": {"confirm": true}})
        ),
        Ok(InputResponse::Elicit(ElicitAnswer::Cancel))
    );
    assert_eq!(
        check(
            &form(),
            json!({"action": "accept", "content": {"confirm": true}})
        ),
        accepted(json!({"confirm": true}))
    );
    assert_eq!(
        check(
            &form(),
            json!({"action": "maybe", "content": {"confirm": true}})
        ),
        Err(InvalidResponse::Action)
    );
    assert_eq!(
        check(
            &form(),
            json!({"action": "ACCEPT", "content": {"confirm": true}})
        ),
        Err(InvalidResponse::Action)
    );
    assert_eq!(
        check(&form(), json!({"action": 1})),
        Err(InvalidResponse::Action)
    );
    assert_eq!(
        check(&form(), json!({"confirm": true})),
        Err(InvalidResponse::Action)
    );
    assert_eq!(
        check(&form(), json!({"action": "accept"})),
        Err(InvalidResponse::Content)
    );
    assert_eq!(
        check(&form(), json!({"action": "accept", "content": [true]})),
        Err(InvalidResponse::Content)
    );
    assert_eq!(
        check(
            &form(),
            json!({"action": "accept", "content": {"confirm": null}})
        ),
        Err(InvalidResponse::Content)
    );
    assert_eq!(
        check(
            &form(),
            json!({"action": "accept", "content": {"confirm": "true"}})
        ),
        Err(InvalidResponse::Schema)
    );
    assert_eq!(
        check(&form(), json!({"action": "accept", "content": {}})),
        Err(InvalidResponse::Schema)
    );
    // URL mode: an accept carries nothing, whatever it holds.
    assert_eq!(
        check(&url(), json!({"action": "accept", "content": {"x": 1}})),
        accepted(json!({}))
    );
    assert_eq!(
        check(&url(), json!({"action": "nope"})),
        Err(InvalidResponse::Action)
    );
}

#[test]
fn sampling_and_roots_answers_are_typed() {
    let sample = InputRequest::sample(SamplingRequest::user_text("Capital of France?", 50));
    let answer = sample
        .check_response(
            &json!({"role": "assistant", "content": {"type": "text", "text": "Paris"},
                                "model": "m", "stopReason": "endTurn", "extra": 1}),
        )
        .expect("valid");
    let typed = answer.as_sampling().expect("sampling");
    assert_eq!(typed.text(), Some("Paris"));
    assert_eq!(typed.stop_reason.as_deref(), Some("endTurn"));
    assert_eq!(
        answer.to_value(),
        json!({"role": "assistant", "content": {"type": "text", "text": "Paris"},
               "model": "m", "stopReason": "endTurn"})
    );
    for bad in [
        json!({"role": "robot", "content": {"type": "text", "text": "x"}, "model": "m"}),
        json!({"role": "assistant", "content": {"text": "x"}, "model": "m"}),
        json!({"role": "assistant", "content": [], "model": "m"}),
        json!({"role": "assistant", "content": {"type": "text", "text": "x"}}),
        json!({"action": "accept", "content": {}}),
        json!({"role": "assistant", "content": {"type": "text", "text": {"evil": 1}}, "model": "m"}),
        json!({"role": "assistant", "content": [{"type": "text"}], "model": "m"}),
    ] {
        assert_eq!(
            sample.check_response(&bad),
            Err(InvalidResponse::Sampling),
            "{bad}"
        );
    }
    let roots = InputRequest::list_roots();
    assert_eq!(
        roots
            .check_response(&json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]})),
        Ok(InputResponse::Roots(vec![Root {
            uri: "file:///test/root".into(),
            name: Some("Test Root".into())
        }]))
    );
    for bad in [
        json!({}),
        json!({"roots": {}}),
        json!({"roots": [{"name": "x"}]}),
        json!({"roots": [1]}),
        json!({"roots": [{"uri": "http://evil/"}]}),
        json!({"roots": [{"uri": "file:///ok"}, {"uri": "/etc"}]}),
    ] {
        assert_eq!(
            roots.check_response(&bad),
            Err(InvalidResponse::Roots),
            "{bad}"
        );
    }
}

#[test]
fn a_2025_era_request_is_told_the_supported_versions() {
    let unsupported = |requested: &str| {
        Some(McpError::UnsupportedVersion {
            requested: requested.into(),
        })
    };
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "inspector", "version": "1"}});
    assert_eq!(
        session_era_error("initialize", Some(&init), None),
        unsupported("2025-11-25")
    );
    assert_eq!(
        session_era_error("initialize", Some(&init), Some("2025-06-18")),
        unsupported("2025-11-25"),
        "the initialize body names the version asked for"
    );
    assert_eq!(
        session_era_error("initialize", None, Some("2025-06-18")),
        unsupported("2025-06-18")
    );
    assert_eq!(
        session_era_error("initialize", None, None),
        unsupported("unknown")
    );
    assert_eq!(
        session_era_error("tools/list", Some(&json!({})), Some("2025-11-25")),
        unsupported("2025-11-25"),
        "a session-era request after an initialize elsewhere"
    );
    // 2026-07-28 requests continue through admission.
    let modern = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                  "io.modelcontextprotocol/clientCapabilities": {}}});
    assert_eq!(
        session_era_error("initialize", Some(&modern), Some("2026-07-28")),
        None
    );
    assert_eq!(
        session_era_error("tools/list", Some(&json!({})), Some("2026-07-28")),
        None
    );
    assert_eq!(session_era_error("tools/list", None, None), None);
    let error = unsupported("2025-11-25").unwrap();
    assert_eq!((error.code(), error.http_status()), (-32022, 400));
    assert_eq!(
        error.data(),
        Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}))
    );
    // What was asked for is named, never reflected at any length.
    let huge = "A".repeat(400_000);
    let data = unsupported(&huge).unwrap().data().unwrap();
    assert_eq!(data["requested"], "A".repeat(64));
    let accented = "é".repeat(40);
    let data = unsupported(&accented).unwrap().data().unwrap();
    assert_eq!(
        data["requested"],
        "é".repeat(32),
        "cut at a character boundary"
    );
    let not_served = McpError::InitializeNotServed;
    assert_eq!((not_served.code(), not_served.http_status()), (-32601, 404));
    assert_eq!(
        not_served.data(),
        Some(json!({"supported": ["2026-07-28"]}))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Checking is total, and only an `accept` ever yields content.
    #[test]
    fn checking_any_json_is_total_and_only_accept_consents(answer in arb_any_json()) {
        for request in [form(), url(), InputRequest::list_roots(),
                        InputRequest::sample(SamplingRequest::user_text("x", 1))] {
            if let Ok(InputResponse::Elicit(ElicitAnswer::Accept(_))) = request.check_response(&answer) {
                prop_assert_eq!(answer.get("action"), Some(&json!("accept")));
            }
        }
    }
}

/// `declare` builds the object `is_declared` reads, for every subset of capabilities.
#[test]
fn declared_capabilities_are_exactly_those_declared() {
    let all = [
        ClientCapability::ElicitationForm,
        ClientCapability::ElicitationUrl,
        ClientCapability::Sampling,
        ClientCapability::SamplingTools,
        ClientCapability::SamplingContext,
        ClientCapability::Roots,
        ClientCapability::Tasks,
    ];
    for mask in 0u32..(1 << all.len()) {
        let chosen: Vec<_> = (0..all.len())
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| all[i])
            .collect();
        let declared = tasks_core::input::declare(chosen.iter().copied());
        for capability in all {
            let implied = chosen.contains(&capability)
                || (capability == ClientCapability::Sampling
                    && chosen.iter().any(|c| {
                        matches!(
                            c,
                            ClientCapability::SamplingTools | ClientCapability::SamplingContext
                        )
                    }));
            assert_eq!(
                capability.is_declared(&declared),
                implied,
                "{capability:?} in {declared:?}"
            );
        }
    }
}
