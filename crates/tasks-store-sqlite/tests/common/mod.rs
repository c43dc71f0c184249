//! Helpers shared by the integration tests: tasks, work and reducer updates.
#![allow(dead_code)] // each test binary uses a different subset

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tasks_core::{
    apply, Event, InputRequest, JsonObject, NewTask, Task, TaskId, TaskUpdate, Timestamp,
};
use tasks_runtime::store::CreateLimits;
use tasks_runtime::{NodeId, Scope, Work};

/// The tests' base time.
pub const T0: Timestamp = Timestamp::from_unix_millis(1_793_729_045_123);

pub const ROOMY: CreateLimits = CreateLimits {
    max_tasks: 100_000,
    max_active_per_scope: 100_000,
};

pub const NODE_A: NodeId = NodeId::from_bytes([0xa; 16]);
pub const NODE_B: NodeId = NodeId::from_bytes([0xb; 16]);

pub fn at(ms: u64) -> Timestamp {
    T0.plus_millis(ms)
}

pub fn id(text: &str) -> TaskId {
    TaskId::parse(text).expect("valid task id")
}

pub fn new_task(name: &str, ttl_ms: Option<u64>) -> NewTask {
    NewTask::new(id(name), T0, ttl_ms, None)
}

pub fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

pub fn work(scope: &Scope, tool: &str) -> Work {
    Work {
        tool: tool.to_owned(),
        arguments: object(json!({"text": format!("hello from {tool}"), "n": 3})),
        input_responses: Some(object(json!({"earlier": {"action": "accept"}}))),
        client_capabilities: object(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})),
        scope: scope.clone(),
    }
}

pub fn next(task: &Task, event: Event, now: Timestamp) -> TaskUpdate {
    apply(task, event, now)
        .expect("valid event")
        .into_update()
        .expect("the event changes the task")
}

pub fn ask(task: &Task, key: &str, now: Timestamp) -> TaskUpdate {
    let request =
        InputRequest::elicit_form("Continue?", json!({"type": "object", "properties": {}}));
    next(
        task,
        Event::InputRequested {
            key: key.into(),
            request,
        },
        now,
    )
}

pub fn answer(task: &Task, key: &str, now: Timestamp) -> TaskUpdate {
    let mut responses = BTreeMap::new();
    responses.insert(key.to_owned(), json!({"action": "accept", "content": {}}));
    next(task, Event::InputResponsesAccepted { responses }, now)
}

pub fn complete(task: &Task, now: Timestamp) -> TaskUpdate {
    let result = object(json!({"content": [{"type": "text", "text": "done ✓"}], "isError": false}));
    next(task, Event::Completed { result }, now)
}

pub fn cancel(task: &Task, now: Timestamp) -> TaskUpdate {
    next(task, Event::Cancelled, now)
}
