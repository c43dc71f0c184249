//! The `tools/call` plan without a network or a runtime (`tasks_core::plan::plan_call`): each step broken
//! alone gets its own answer, with two broken the earlier step wins, and the happy paths plan
//! what they should.

#[path = "../common/mod.rs"]
mod common;

// Modules rather than binaries of their own (each integration-test binary links the
// whole stack, and linking is slow): their tests are named `<module>::<test>`.
mod admission_order;
mod envelope_rules;
mod header_rules;
mod input_rules;
mod legacy_plan;
mod negotiation_errors;
mod params_rules;
mod request;

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tasks_core::input::{ClientCapability, InputRequest};
use tasks_core::plan::{issue, Binding, RequestState, StateKey, STATE_LIFETIME_MS};
use tasks_core::plan::{param_headers, ParamHeader};
use tasks_core::plan::{parse_call, plan_call, CallContext, CallPlan, ToolRules};
use tasks_core::{JsonObject, McpError, Method, RequestMeta, TaskPolicy, Timestamp};

const NOW: Timestamp = Timestamp::from_unix_millis(1_800_000_000_000);

/// A tool that needs form elicitation, mirrors `region` in `Mcp-Param-Region`, requires an
/// integer `count`, and runs as a task when asked to.
struct Rules {
    headers: Vec<ParamHeader>,
    policy: TaskPolicy,
}

impl Rules {
    fn new(policy: TaskPolicy) -> Self {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer"}}});
        Rules {
            headers: param_headers(schema.as_object().unwrap()).unwrap(),
            policy,
        }
    }
}

impl ToolRules for Rules {
    fn param_headers(&self) -> &[ParamHeader] {
        &self.headers
    }
    fn policy_for(&self, _params: &JsonObject) -> TaskPolicy {
        self.policy
    }
    fn client_needs(&self) -> &[ClientCapability] {
        &[ClientCapability::ElicitationForm]
    }
    fn validate_arguments(&self, arguments: &JsonObject) -> Result<(), String> {
        match arguments.get("count") {
            Some(Value::Number(n)) if n.is_i64() => Ok(()),
            _ => Err("Invalid arguments at /count".into()),
        }
    }
}

fn key() -> StateKey {
    StateKey::from_bytes([9; 32])
}

fn ask() -> InputRequest {
    InputRequest::elicit_form(
        "Name?",
        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
    )
}

/// A round-1 state for `arguments`, asking `who`.
fn state_for(arguments: &Value) -> String {
    let arguments = arguments.as_object().unwrap().clone();
    let binding = Binding {
        method: Method::ToolsCall,
        name: "t",
        arguments: &arguments,
        scope: "alice",
    };
    let state = RequestState {
        round: 1,
        answers: JsonObject::new(),
        asked: BTreeMap::from([("who".to_owned(), ask())]),
    };
    issue(&key(), binding, state, NOW, STATE_LIFETIME_MS, [0; 12])
}

#[derive(Clone)]
struct Call {
    params: Value,
    region_header: Option<&'static str>,
    caps: Value,
    policy: TaskPolicy,
}

fn good() -> Call {
    let arguments = json!({"region": "eu", "count": 1});
    Call {
        params: json!({"name": "t", "arguments": arguments, "requestState": state_for(&arguments),
                       "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}}}),
        region_header: Some("eu"),
        caps: json!({"elicitation": {}}),
        policy: TaskPolicy::Sync,
    }
}

impl Call {
    fn plan(&self) -> Result<CallPlan, McpError> {
        let call = parse_call(&self.params)?;
        let meta = RequestMeta::parse(Some(&json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": self.caps}})))?;
        let headers: Vec<(&str, &[u8])> = self
            .region_header
            .map(|v| vec![("mcp-param-region", v.as_bytes())])
            .unwrap_or_default();
        let cx = CallContext {
            params: self.params.as_object().unwrap(),
            meta: &meta,
            tasks_declared: meta.declares_tasks()?,
            scope: "alice",
            state_key: &key(),
            now: NOW,
        };
        plan_call(&call, &Rules::new(self.policy), headers.as_slice(), cx)
    }
}

fn answer(plan: Result<CallPlan, McpError>) -> (i64, String) {
    match plan {
        Err(error) => (error.code(), error.to_string()),
        Ok(CallPlan::InvalidArguments(result)) => {
            (0, result["content"][0]["text"].as_str().unwrap().to_owned())
        }
        Ok(other) => panic!("expected a refusal, got {other:?}"),
    }
}

type Break = fn(&mut Call);

fn steps() -> Vec<(&'static str, Break, i64, &'static str)> {
    vec![
        (
            "1 params",
            |c| c.params["arguments"] = json!([1]),
            -32602,
            "arguments must be an object",
        ),
        (
            "3 Mcp-Param",
            |c| c.region_header = Some("us"),
            -32020,
            "Mcp-Param header does not match the tool arguments",
        ),
        (
            "4 requestState",
            |c| {
                let tampered = format!("{}x", c.params["requestState"].as_str().unwrap());
                c.params["requestState"] = json!(tampered);
            },
            -32602,
            "Invalid requestState",
        ),
        (
            "5 capability",
            |c| c.caps = json!({"sampling": {}}),
            -32021,
            "Missing required client capability",
        ),
        (
            "6 answer",
            |c| c.params["inputResponses"]["who"] = json!({"action": "maybe"}),
            -32602,
            "Invalid input response for who: action must be accept, decline or cancel",
        ),
        // The arguments are bound into the state, so the state is issued for the bad ones.
        (
            "7 arguments",
            |c| {
                let arguments = json!({"region": "eu", "count": "one"});
                c.params["requestState"] = json!(state_for(&arguments));
                c.params["arguments"] = arguments;
            },
            0,
            "Invalid arguments at /count",
        ),
    ]
}

#[test]
fn the_happy_paths_plan_what_they_should() {
    let plan = good().plan().unwrap();
    let CallPlan::RunSync { answers, previous } = plan else {
        panic!("{plan:?}");
    };
    assert_eq!(
        answers.unwrap()["who"],
        json!({"action": "accept", "content": {"name": "Ada"}})
    );
    assert_eq!(previous.unwrap().round, 1);
    // The same retry as a task: the id is derived, and the same retry derives the same id.
    let mut task = good();
    task.policy = TaskPolicy::Required;
    task.caps = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let (
        Ok(CallPlan::CreateTask {
            task_id: Some(a), ..
        }),
        Ok(CallPlan::CreateTask {
            task_id: Some(b), ..
        }),
    ) = (task.plan(), task.plan())
    else {
        panic!("expected two creations under a derived id");
    };
    assert_eq!(a, b);
    // Without a state, a task takes no answers and gets a random id.
    task.params.as_object_mut().unwrap().remove("requestState");
    assert_eq!(
        task.plan().unwrap(),
        CallPlan::CreateTask {
            answers: None,
            task_id: None
        }
    );
    // Both a missing Tasks declaration and a missing capability, in one -32021.
    task.caps = json!({});
    let error = task.plan().unwrap_err();
    assert_eq!(
        error.data(),
        Some(json!({"requiredCapabilities": {"elicitation": {"form": {}},
                                             "extensions": {"io.modelcontextprotocol/tasks": {}}}}))
    );
}

#[test]
fn each_step_broken_alone_gets_its_own_answer() {
    for (name, break_it, code, message) in steps() {
        let mut call = good();
        break_it(&mut call);
        assert_eq!(answer(call.plan()), (code, message.to_owned()), "{name}");
    }
}

#[test]
fn with_two_steps_broken_the_earlier_one_wins() {
    let steps = steps();
    for (i, (early, break_early, code, message)) in steps.iter().enumerate() {
        for (late, break_late, _, _) in &steps[i + 1..] {
            let mut call = good();
            break_late(&mut call);
            break_early(&mut call);
            assert_eq!(
                answer(call.plan()),
                (*code, (*message).to_owned()),
                "{early} with {late}"
            );
        }
    }
}
