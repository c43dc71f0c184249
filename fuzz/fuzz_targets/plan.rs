//! The request planner (`tasks_core::plan::plan`) on arbitrary headers and body, without a
//! runtime: never panics, and every plan is consistent with the message (the properties of
//! `crates/tasks-core/tests/reducer_props/plan_props.rs`, on coverage-guided inputs); and its
//! typed fast path (`plan_typed`) plans only what the `Value` path (`parse_envelope`, then
//! `plan_envelope`) plans the same way (`typed_props.rs` there).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tasks_core::plan::ToolRules;
use tasks_core::plan::StateKey;
use tasks_core::plan::ParamHeader;
use tasks_core::plan::{parse_envelope, plan, plan_envelope, plan_typed, Plan, ServerView};
use tasks_core::{JsonObject, Method, TaskPolicy, Timestamp};
use tasks_core::input::ClientCapability;
use tasks_http::Head;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Tool;

impl ToolRules for Tool {
    fn param_headers(&self) -> &[ParamHeader] {
        &[]
    }
    fn policy_for(&self, _params: &JsonObject) -> TaskPolicy {
        TaskPolicy::Optional
    }
    fn fixed_policy(&self) -> Option<TaskPolicy> {
        Some(TaskPolicy::Optional)
    }
    fn client_needs(&self) -> &[ClientCapability] {
        &[ClientCapability::ElicitationForm]
    }
    fn validate_arguments(&self, _arguments: &JsonObject) -> Result<(), String> {
        Ok(())
    }
}

struct View(StateKey);

impl ServerView for View {
    type Tool = Tool;

    fn tool(&self, name: &str) -> Option<Tool> {
        (name == "a_header_probe").then_some(Tool)
    }
    fn state_key(&self) -> &StateKey {
        &self.0
    }
}

fuzz_target!(|data: &[u8]| {
    let (headers, body) = common::split(data);
    let view = View(StateKey::from_bytes([5; 32]));
    let message: Option<Value> = serde_json::from_slice(body).ok();
    let readable_id = message
        .as_ref()
        .and_then(|m| m.get("id"))
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .cloned();
    let now = Timestamp::from_unix_millis(1);
    if let Some(typed) = plan_typed(&Head(&headers), body, &view, "scope", now) {
        let envelope = parse_envelope(body).expect("a typed plan's body is a request");
        assert_eq!(
            typed,
            plan_envelope(&Head(&headers), envelope, &view, "scope", now)
        );
    }
    match plan(&Head(&headers), body, &view, "scope", now) {
        Plan::Accepted => {
            let m = message.expect("a notification is JSON");
            assert!(m.get("id").is_none());
        }
        Plan::Reject { id, error } => {
            assert!(matches!(error.http_status(), 400 | 404 | 500), "{error:?}");
            assert_eq!(error.code() == -32601, error.http_status() == 404);
            if error.code() != -32700 {
                assert_eq!(id, readable_id);
            }
        }
        Plan::Run(run) => {
            let m = message.expect("a planned request is JSON");
            assert!(Method::parse(m["method"].as_str().unwrap()).is_some());
            assert_eq!(Some(run.id), readable_id);
            assert_eq!(run.meta.protocol_version, "2026-07-28");
        }
    }
});
