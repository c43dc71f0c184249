//! The work descriptor: what a task runs, as serializable data.

use serde::{Deserialize, Serialize};
use tasks_core::JsonObject;

use crate::scope::Scope;
use crate::seal::SealedPrincipal;

/// What a task runs, stored atomically with the task.
///
/// It is data, not a closure, so a durable store can persist it and another process can re-run
/// a recovered task: the tool name, its arguments, the creating request's `inputResponses`
/// (answers gathered by synchronous MRTR rounds before the task was created), the client
/// capabilities that request declared, and the scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Work {
    /// The tool to run.
    pub tool: String,
    /// The tool arguments (`{}` when the request had none).
    pub arguments: JsonObject,
    /// The creating request's `inputResponses`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<JsonObject>,
    /// The creating request's `clientCapabilities` (`{}` when it declared none).
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub client_capabilities: JsonObject,
    /// The scope that owns the task.
    pub scope: Scope,
    /// The creating request's W3C `traceparent` (`params._meta["traceparent"]`), when it had a
    /// valid one: the task's span records its trace id, on every run of the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_parent: Option<String>,
    /// The creating request's caller, sealed under the server's principal key
    /// ([`crate::Creation::caller`], bound to [`Work::scope`]): what [`crate::ToolContext::principal`] shows,
    /// on every run of the task. `None` for the shared scope and for work stored before this
    /// member existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_principal: Option<SealedPrincipal>,
}

impl Work {
    /// Work for `tool` with `arguments`, in `scope`: no `inputResponses`, no declared client
    /// capabilities (so the tool cannot ask for input), no trace context.
    pub fn new(scope: Scope, tool: impl Into<String>, arguments: JsonObject) -> Self {
        Work {
            tool: tool.into(),
            arguments,
            input_responses: None,
            client_capabilities: JsonObject::new(),
            scope,
            trace_parent: None,
            sealed_principal: None,
        }
    }

    /// The work of a task-creating `tools/call` of `tool`: its arguments, the answers the
    /// planner passed on (`CallPlan::CreateTask`), and from its validated `_meta` the declared
    /// client capabilities and the W3C `traceparent`; owned by `scope`.
    pub fn for_call(
        scope: Scope,
        tool: impl Into<String>,
        arguments: JsonObject,
        answers: Option<JsonObject>,
        meta: tasks_core::RequestMeta,
    ) -> Self {
        Work {
            tool: tool.into(),
            arguments,
            input_responses: answers,
            client_capabilities: meta.client_capabilities,
            scope,
            trace_parent: meta.trace_parent.map(|t| t.as_str().to_owned()),
            sealed_principal: None,
        }
    }

    /// Whether the descriptor reads back once stored: its objects nest at most
    /// [`MAX_WORK_DEPTH`] deep and have no member named after `serde_json`'s markers
    /// ([`tasks_core::json::check_object`]). A body read by this project's HTTP adapter always
    /// passes; work built by another host (an rmcp server, whose parser honours the markers) or
    /// by hand may not.
    ///
    /// # Errors
    /// The first problem found in `arguments`, `inputResponses` or `clientCapabilities`.
    pub fn check_storable(&self) -> Result<(), tasks_core::json::Unstorable> {
        use tasks_core::json::check_object;
        check_object(&self.arguments, MAX_WORK_DEPTH)?;
        if let Some(answers) = &self.input_responses {
            check_object(answers, MAX_WORK_DEPTH)?;
        }
        check_object(&self.client_capabilities, MAX_WORK_DEPTH)
    }

    /// The size of the serialized descriptor in bytes (what the input limit measures).
    pub fn encoded_len(&self) -> usize {
        encoded_len(self)
    }
}

/// The deepest nesting of the objects a [`Work`] holds (`arguments`, `inputResponses`,
/// `clientCapabilities`, each counting as 1): they sit one level inside the stored descriptor,
/// which must stay within the parser's [`tasks_core::json::MAX_PARSE_DEPTH`]. Deeper than any
/// request body can carry them (they sit two or three levels inside it).
pub const MAX_WORK_DEPTH: usize = tasks_core::json::MAX_PARSE_DEPTH - 1;

/// The deepest nesting of an input response a task keeps (the value counting as 1): a stored
/// task holds it four levels in (task, `answered`, key, answer), within the parser's
/// [`tasks_core::json::MAX_PARSE_DEPTH`].
pub const MAX_ANSWER_DEPTH: usize = tasks_core::json::MAX_PARSE_DEPTH - 4;

/// Serialized JSON length of `value` in bytes, without allocating the output.
pub fn encoded_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work as the builds before sealed principals stored it reads with no principal, and
    /// work without one stores no such member.
    #[test]
    fn work_stored_before_sealed_principals_reads_without_one() {
        let old = r#"{"tool":"slow_compute","arguments":{"seconds":5},"scope":"s"}"#;
        let work: Work = serde_json::from_str(old).expect("old work reads");
        assert_eq!(work.sealed_principal, None);
        assert_eq!(work.tool, "slow_compute");
        assert_eq!(serde_json::to_string(&work).unwrap(), old);
    }
}
