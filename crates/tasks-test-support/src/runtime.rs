//! Runtimes for in-process tests: over a fresh [`MemoryStore`] (or a [`YieldingStore`]) with a
//! [`TokioClock`] starting at [`T0`], the work they run, and the values tests build and check.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};
use tasks_core::input::InputRequest;
use tasks_core::{wire, JsonObject, McpError, Task, Timestamp};
use tasks_runtime::store::{MemoryStore, Store};
use tasks_runtime::{RuntimeConfig, Scope, TaskRuntime, TokioClock, Tool, ToolRegistry, Work};

use crate::yielding::YieldingStore;

/// The wall-clock start of every test runtime (2026-11-03T18:04:05.123Z).
pub const T0: Timestamp = Timestamp::from_unix_millis(1_793_729_045_123);

/// A JSON object literal.
///
/// # Panics
/// When `value` is not an object.
pub fn obj(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// `{key: value}` responses for `update`.
pub fn responses<const N: usize>(pairs: [(&str, Value); N]) -> BTreeMap<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// An `elicitation/create` request with `message`, asking for a boolean `confirm`.
pub fn elicit(message: &str) -> InputRequest {
    InputRequest {
        method: "elicitation/create".into(),
        params: Some(obj(json!({
            "message": message,
            "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
        }))),
    }
}

/// The scope of principal `alice`.
pub fn alice() -> Scope {
    Scope::new("alice")
}

/// The scope of principal `bob`.
pub fn bob() -> Scope {
    Scope::new("bob")
}

/// Work for `tool` with `arguments`, in `scope`, created by a request that declared form
/// elicitation, sampling and roots.
pub fn work_in(scope: &Scope, tool: &str, arguments: Value) -> Work {
    Work {
        tool: tool.to_owned(),
        arguments: obj(arguments),
        input_responses: None,
        client_capabilities: obj(json!({"elicitation": {}, "sampling": {}, "roots": {}})),
        scope: scope.clone(),
        trace_parent: None,
        sealed_principal: None,
    }
}

/// Work for `tool` with no arguments, in the shared scope.
pub fn work(tool: &str) -> Work {
    work_in(&Scope::shared(), tool, json!({}))
}

fn runtime_on(store: Arc<dyn Store>, tools: Vec<Tool>, config: RuntimeConfig) -> TaskRuntime {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(tool);
    }
    TaskRuntime::with_clock(
        store,
        registry,
        config,
        Arc::new(TokioClock::starting_at(T0)),
    )
}

/// A runtime over a fresh [`MemoryStore`] with a [`TokioClock`] starting at [`T0`].
pub fn runtime(tools: Vec<Tool>, config: RuntimeConfig) -> TaskRuntime {
    runtime_on(Arc::new(MemoryStore::new()), tools, config)
}

/// A runtime over a [`YieldingStore`] (see there), otherwise like [`runtime`].
pub fn yielding_runtime(tools: Vec<Tool>, config: RuntimeConfig) -> TaskRuntime {
    runtime_on(Arc::new(YieldingStore(MemoryStore::new())), tools, config)
}

/// The `tasks/get` wire form of `task`.
pub fn detailed_json(task: &Task) -> Value {
    wire::detailed(task).to_value()
}

/// Asserts `result` is the error -32602 `Unknown or inaccessible taskId`.
///
/// # Panics
/// When it is not.
pub fn assert_unknown(result: Result<impl std::fmt::Debug, McpError>) {
    match result {
        Err(error) => {
            assert_eq!(error, McpError::UnknownTask);
            assert_eq!(error.code(), -32602);
            assert_eq!(error.to_string(), "Unknown or inaccessible taskId");
        }
        Ok(value) => panic!("expected UnknownTask, got {value:?}"),
    }
}
