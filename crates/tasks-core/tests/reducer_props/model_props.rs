//! Model-based sequences over the planner and the reducer together, without a runtime: random
//! creations, reads, answers, cancellations, work steps and clock advances go through
//! `plan()` and `apply()` into a small in-memory table, and every reply is checked against a
//! simple reference model.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::{json, Value};
use tasks_core::input::{ClientCapability, InputRequest};
use tasks_core::plan::ParamHeader;
use tasks_core::plan::StateKey;
use tasks_core::plan::TaskAction;
use tasks_core::plan::{plan, Action, Plan, ServerView};
use tasks_core::plan::{CallPlan, ToolRules};
use tasks_core::wire::{creation, detailed};
use tasks_core::TASK_ID_RANDOM_BYTES;
use tasks_core::{
    apply, Event, JsonObject, McpError, ReduceError, Task, TaskId, TaskPolicy, TaskStatus,
    Timestamp,
};

const TTL_MS: u64 = 10_000;
const T0: u64 = 1_800_000_000_000;

#[derive(Debug, Clone, Copy)]
struct Job;

impl ToolRules for Job {
    fn param_headers(&self) -> &[ParamHeader] {
        &[]
    }
    fn policy_for(&self, _params: &JsonObject) -> TaskPolicy {
        TaskPolicy::Required
    }
    fn client_needs(&self) -> &[ClientCapability] {
        &[]
    }
    fn validate_arguments(&self, _arguments: &JsonObject) -> Result<(), String> {
        Ok(())
    }
}

struct View(StateKey);

impl ServerView for View {
    type Tool = Job;

    fn tool(&self, name: &str) -> Option<Job> {
        (name == "job").then_some(Job)
    }
    fn state_key(&self) -> &StateKey {
        &self.0
    }
}

fn question() -> InputRequest {
    InputRequest::elicit_form(
        "OK?",
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
    )
}

/// One step of a sequence. Task indexes pick among the tasks created so far (modulo).
#[derive(Debug, Clone)]
enum Op {
    Create,
    Get(usize),
    Update(usize, &'static str, bool),
    Cancel(usize),
    Ask(usize, &'static str),
    Complete(usize),
    Advance(u64),
}

fn arb_op() -> impl Strategy<Value = Op> {
    let key = prop::sample::select(vec!["a", "b"]);
    prop_oneof![
        2 => Just(Op::Create),
        3 => any::<usize>().prop_map(Op::Get),
        3 => (any::<usize>(), key.clone(), prop::bool::weighted(0.8)).prop_map(|(i, k, ok)| Op::Update(i, k, ok)),
        1 => any::<usize>().prop_map(Op::Cancel),
        3 => (any::<usize>(), key).prop_map(|(i, k)| Op::Ask(i, k)),
        1 => any::<usize>().prop_map(Op::Complete),
        1 => (0u64..6_000).prop_map(Op::Advance),
    ]
}

/// The reference model of one task.
#[derive(Debug, Clone, Default)]
struct Model {
    created_at: u64,
    terminal: Option<TaskStatus>,
    outstanding: BTreeSet<&'static str>,
    answered: BTreeSet<&'static str>,
}

impl Model {
    fn status(&self) -> TaskStatus {
        match (self.terminal, self.outstanding.is_empty()) {
            (Some(status), _) => status,
            (None, true) => TaskStatus::Working,
            (None, false) => TaskStatus::InputRequired,
        }
    }
}

/// A well-formed request for `method` with `params`, declaring the Tasks extension and form
/// elicitation.
fn message(method: &str, mut params: Value) -> (Vec<(&'static str, Vec<u8>)>, Vec<u8>) {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}});
    let name = params
        .get("taskId")
        .or(params.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut headers = vec![
        ("mcp-protocol-version", b"2026-07-28".to_vec()),
        ("mcp-method", method.as_bytes().to_vec()),
    ];
    if let Some(name) = name {
        headers.push(("mcp-name", name.into_bytes()));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    (headers, serde_json::to_vec(&body).unwrap())
}

struct Server {
    view: View,
    tasks: BTreeMap<TaskId, Task>,
    now: u64,
    minted: u8,
}

impl Server {
    fn plan(&self, method: &str, params: Value) -> Plan<Job> {
        let (headers, body) = message(method, params);
        let pairs: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (*n, v.as_slice())).collect();
        plan(
            pairs.as_slice(),
            &body,
            &self.view,
            "s",
            Timestamp::from_unix_millis(self.now),
        )
    }

    /// The stored task, as a reader at `now` sees it (expired is unknown).
    fn live(&self, id: &TaskId) -> Option<&Task> {
        self.tasks
            .get(id)
            .filter(|t| !t.is_expired(Timestamp::from_unix_millis(self.now)))
    }

    /// Runs a task request: planned, looked up, applied.
    fn task_request(&mut self, method: &str, params: Value) -> Result<Value, McpError> {
        let Plan::Run(run) = self.plan(method, params) else {
            panic!("a well-formed task request is planned");
        };
        let Action::Task(action) = run.action else {
            panic!("a task method plans a task action");
        };
        let (id, event) = match action {
            TaskAction::Get(target) => {
                let task = self.live(&target.task_id).ok_or(McpError::UnknownTask)?;
                return Ok(detailed(task).to_value());
            }
            TaskAction::Update(update) => (
                update.task_id,
                Event::InputResponsesAccepted {
                    responses: update.input_responses,
                },
            ),
            TaskAction::Cancel(target) => (target.task_id, Event::Cancelled),
        };
        self.event(&id, event)
            .map(|_| json!({"resultType": "complete"}))
    }

    /// Applies `event` to task `id` as the runtime would (an expired task is unknown).
    fn event(&mut self, id: &TaskId, event: Event) -> Result<(), McpError> {
        let now = Timestamp::from_unix_millis(self.now);
        let task = self.live(id).ok_or(McpError::UnknownTask)?;
        let transition = apply(task, event, now).map_err(|e| match e {
            ReduceError::InvalidResponse { key, reason } => reason.to_error(&key),
            _ => McpError::Internal("Input request key reused"),
        })?;
        if let Some(update) = transition.into_update() {
            assert_eq!(update.expected_revision(), self.tasks[id].revision());
            self.tasks.insert(id.clone(), update.into_task());
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn planner_and_reducer_follow_the_model(ops in prop::collection::vec(arb_op(), 1..40)) {
        let mut server = Server {
            view: View(StateKey::from_bytes([1; 32])),
            tasks: BTreeMap::new(),
            now: T0,
            minted: 0,
        };
        let mut ids: Vec<TaskId> = Vec::new();
        let mut models: BTreeMap<TaskId, Model> = BTreeMap::new();
        for op in ops {
            let pick = |i: usize| (!ids.is_empty()).then(|| ids[i % ids.len()].clone());
            let expired = |m: &Model, now: u64| now >= m.created_at + TTL_MS;
            match op {
                Op::Create => {
                    let Plan::Run(run) = server.plan("tools/call", json!({"name": "job", "arguments": {}})) else {
                        panic!("a well-formed call is planned");
                    };
                    let Action::Call { plan: CallPlan::CreateTask { task_id: None, answers: None }, .. } = run.action else {
                        panic!("a required-task tool creates a task: {:?}", run.action);
                    };
                    server.minted += 1;
                    let id = TaskId::from_random_bytes([server.minted; TASK_ID_RANDOM_BYTES]);
                    let task = Task::new(id.clone(), Timestamp::from_unix_millis(server.now), Some(TTL_MS), None);
                    let reply = creation(&task).to_value();
                    prop_assert_eq!(&reply["status"], &json!("working"));
                    prop_assert_eq!(&reply["resultType"], &json!("task"));
                    server.tasks.insert(id.clone(), task);
                    models.insert(id.clone(), Model { created_at: server.now, ..Model::default() });
                    ids.push(id);
                }
                Op::Get(i) => {
                    let Some(id) = pick(i) else { continue };
                    let model = &models[&id];
                    let reply = server.task_request("tasks/get", json!({"taskId": id.as_str()}));
                    if expired(model, server.now) {
                        prop_assert_eq!(reply.unwrap_err(), McpError::UnknownTask);
                        continue;
                    }
                    let view = reply.unwrap();
                    prop_assert_eq!(&view["status"], &json!(model.status().as_str()));
                    let keys: BTreeSet<String> = view["inputRequests"].as_object()
                        .map(|m| m.keys().cloned().collect()).unwrap_or_default();
                    let want: BTreeSet<String> = model.outstanding.iter().map(|k| (*k).to_owned()).collect();
                    prop_assert_eq!(keys, want);
                }
                Op::Update(i, key, well_formed) => {
                    let Some(id) = pick(i) else { continue };
                    let answer = if well_formed {
                        json!({"action": "accept", "content": {"ok": true}})
                    } else {
                        json!({"action": "accept", "content": {"ok": "yes"}})
                    };
                    let reply = server.task_request(
                        "tasks/update",
                        json!({"taskId": id.as_str(), "inputResponses": {key: answer}}),
                    );
                    let model = models.get_mut(&id).unwrap();
                    if expired(model, server.now) {
                        prop_assert_eq!(reply.unwrap_err(), McpError::UnknownTask);
                    } else if model.terminal.is_none() && model.outstanding.contains(key) && !well_formed {
                        prop_assert_eq!(reply.unwrap_err().code(), -32602, "a malformed answer is refused");
                    } else {
                        prop_assert_eq!(reply.unwrap(), json!({"resultType": "complete"}));
                        if model.terminal.is_none() && model.outstanding.remove(key) {
                            model.answered.insert(key);
                        }
                    }
                }
                Op::Cancel(i) => {
                    let Some(id) = pick(i) else { continue };
                    let reply = server.task_request("tasks/cancel", json!({"taskId": id.as_str()}));
                    let model = models.get_mut(&id).unwrap();
                    if expired(model, server.now) {
                        prop_assert_eq!(reply.unwrap_err(), McpError::UnknownTask);
                    } else {
                        prop_assert!(reply.is_ok());
                        if model.terminal.is_none() {
                            model.terminal = Some(TaskStatus::Cancelled);
                            model.outstanding.clear();
                            model.answered.clear();
                        }
                    }
                }
                Op::Ask(i, key) => {
                    let Some(id) = pick(i) else { continue };
                    let result = server.event(&id, Event::InputRequested { key: key.into(), request: question() });
                    let model = models.get_mut(&id).unwrap();
                    if expired(model, server.now) {
                        prop_assert_eq!(result.unwrap_err(), McpError::UnknownTask);
                    } else if model.terminal.is_none() && model.answered.contains(key) {
                        prop_assert!(result.is_err(), "an answered key is never asked again");
                    } else {
                        prop_assert!(result.is_ok());
                        if model.terminal.is_none() {
                            model.outstanding.insert(key);
                        }
                    }
                }
                Op::Complete(i) => {
                    let Some(id) = pick(i) else { continue };
                    let result = server.event(&id, Event::Completed { result: JsonObject::new().into() });
                    let model = models.get_mut(&id).unwrap();
                    if expired(model, server.now) {
                        prop_assert_eq!(result.unwrap_err(), McpError::UnknownTask);
                    } else if model.terminal.is_none() {
                        model.terminal = Some(TaskStatus::Completed);
                        model.outstanding.clear();
                        model.answered.clear();
                    }
                }
                Op::Advance(ms) => server.now += ms,
            }
        }
    }
}
