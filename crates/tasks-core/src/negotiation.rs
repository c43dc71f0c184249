//! Per-request negotiation: the required request `_meta`, client capabilities, and the task
//! decision table.
//!
//! MCP 2026-07-28 is stateless: every request carries its protocol version and client
//! capabilities in `params._meta`, and nothing is remembered between requests (MCP 2026-07-28
//! basic, "Statelessness" and "`_meta`":
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/index>). A client opts into
//! Tasks on one request by declaring
//! `clientCapabilities.extensions["io.modelcontextprotocol/tasks"] = {}` (SEP-2663 "Capability
//! Negotiation":
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).

use serde_json::Value;

use crate::error::McpError;
use crate::logging::LogLevel;
use crate::protocol::{
    META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROGRESS_TOKEN, META_PROTOCOL_VERSION,
    METHOD_INITIALIZE, SUPPORTED_VERSIONS, TASKS_EXTENSION,
};
use crate::JsonObject;

/// The validated request `_meta` of a 2026-07-28 request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities` (`{}` means no optional capability).
    pub client_capabilities: JsonObject,
    /// `io.modelcontextprotocol/logLevel`, when the request opts into log notifications.
    pub log_level: Option<LogLevel>,
    /// `progressToken`, when the request opts into progress notifications.
    pub progress_token: Option<Value>,
    /// `traceparent` (W3C trace context), when present and valid; an invalid one is ignored.
    pub trace_parent: Option<crate::trace::TraceParent>,
}

impl RequestMeta {
    /// Reads `params._meta`.
    ///
    /// # Errors
    /// -32602, HTTP 400, when `params` or `params._meta` is not an object, or when either
    /// required key is missing or of the wrong type (runner checks
    /// `sep-2575-request-meta-invalid-*`), or when `logLevel` is present but not one of the
    /// eight level names (MCP 2026-07-28 logging, "Error Handling": an invalid level is
    /// -32602), or when `progressToken` is present but neither a string nor an integer (schema
    /// `ProgressToken`).
    pub fn parse(params: Option<&Value>) -> Result<Self, McpError> {
        let meta = params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object)
            .ok_or_else(|| McpError::invalid_params("params._meta is required"))?;
        let protocol_version = meta
            .get(META_PROTOCOL_VERSION)
            .and_then(Value::as_str)
            .ok_or_else(|| {
                McpError::invalid_params(
                    "params._meta is missing io.modelcontextprotocol/protocolVersion",
                )
            })?
            .to_owned();
        let client_capabilities = meta
            .get(META_CLIENT_CAPABILITIES)
            .and_then(Value::as_object)
            .ok_or_else(|| {
                McpError::invalid_params(
                    "params._meta is missing io.modelcontextprotocol/clientCapabilities",
                )
            })?
            .clone();
        let log_level = match meta.get(META_LOG_LEVEL) {
            None => None,
            Some(level) => Some(
                level
                    .as_str()
                    .and_then(|text| text.parse::<LogLevel>().ok())
                    .ok_or_else(|| {
                        McpError::invalid_params(
                            "params._meta io.modelcontextprotocol/logLevel is not a log level",
                        )
                    })?,
            ),
        };
        let progress_token = progress_token(meta)?;
        Ok(RequestMeta {
            protocol_version,
            client_capabilities,
            log_level,
            progress_token,
            trace_parent: crate::trace::TraceParent::from_meta(meta),
        })
    }

    /// Whether this request declared the Tasks extension.
    ///
    /// # Errors
    /// -32602 `"The Tasks extension defines no settings"` when the declared settings are not
    /// the empty object (SEP-2663: "No extension-specific settings are currently defined").
    pub fn declares_tasks(&self) -> Result<bool, McpError> {
        match self
            .client_capabilities
            .get("extensions")
            .and_then(|e| e.get(TASKS_EXTENSION))
        {
            None => Ok(false),
            Some(Value::Object(settings)) if settings.is_empty() => Ok(true),
            Some(_) => Err(McpError::invalid_params(
                "The Tasks extension defines no settings",
            )),
        }
    }

    /// Whether the request declared the experimental tasks capability of MCP 2025-11-25 (the
    /// top-level client capability `tasks`, an object), which is not this extension's
    /// declaration: SEP-2663's version table has a 2026-07-28 server treat such a client as
    /// non-declaring, except that a server also serving the 2025 design SHOULD let it
    /// `tasks/get` and `tasks/cancel` the tasks of that flow
    /// ([`crate::plan::plan_legacy_task_method`]).
    pub fn declares_legacy_tasks(&self) -> bool {
        self.declares("tasks")
    }

    /// Whether the request declared the top-level client capability `name` (e.g.
    /// `"elicitation"`, `"sampling"`, `"roots"`): its value must be an object (`false` or `null`
    /// declare nothing).
    pub fn declares(&self, name: &str) -> bool {
        self.client_capabilities
            .get(name)
            .is_some_and(Value::is_object)
    }
}

/// `_meta.progressToken` of a request, when present (schema `ProgressToken`; the same in the
/// 2025 revisions).
///
/// # Errors
/// -32602 when it is neither a string nor an integer.
pub fn progress_token(meta: &JsonObject) -> Result<Option<Value>, McpError> {
    match meta.get(META_PROGRESS_TOKEN) {
        None => Ok(None),
        Some(token) if token.is_string() || token.is_i64() || token.is_u64() => {
            Ok(Some(token.clone()))
        }
        Some(_) => Err(McpError::invalid_params(
            "params._meta progressToken must be a string or an integer",
        )),
    }
}

/// The answer to a request of the 2025 (session-based) era, which this server does not serve:
/// an `initialize` whose params carry no `_meta` protocol version, or any other request with no
/// `params._meta` at all that names another revision in its `MCP-Protocol-Version` header
/// (`header_version`, decoded).
///
/// Such a request gets -32022 `Unsupported protocol version` (HTTP 400) with
/// `data.supported` (this server's revisions) and `data.requested` (the `initialize`
/// `protocolVersion`, else the header's version, else `"unknown"`): a modern-only server names
/// its versions in any error to `initialize`, and a dual-era client reads -32022 as "modern
/// server" (MCP 2026-07-28 versioning, "Backward Compatibility with Initialization-Based
/// Versions"; a dual-era server would serve these requests on its legacy path instead). `None`
/// for a 2026-07-28 request, which admission continues with.
pub fn session_era_error(
    method: &str,
    params: Option<&Value>,
    header_version: Option<&str>,
) -> Option<McpError> {
    let meta = params.and_then(|p| p.get("_meta"));
    let legacy = if method == METHOD_INITIALIZE {
        meta.and_then(|m| m.get(META_PROTOCOL_VERSION)).is_none()
    } else {
        meta.is_none() && header_version.is_some_and(|v| !SUPPORTED_VERSIONS.contains(&v))
    };
    if !legacy {
        return None;
    }
    let requested = params
        .filter(|_| method == METHOD_INITIALIZE)
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .or(header_version)
        .unwrap_or("unknown");
    Some(McpError::UnsupportedVersion {
        requested: requested.to_owned(),
    })
}

/// How a tool relates to tasks: server configuration, never wire data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskPolicy {
    /// Always runs synchronously; never creates a task.
    Sync,
    /// Creates a task when the request declared Tasks, else runs synchronously.
    Optional,
    /// Creates a task when the request declared Tasks, else -32021. (On the 2025 session path:
    /// published as `taskSupport: "required"`; a 2025-11-25 call without a task hint is -32601,
    /// and a 2025-06-18 session, which has no tasks, runs the tool synchronously.)
    Required,
}

/// What to do with one `tools/call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Run the tool now and return its `CallToolResult` (or an MRTR `input_required`).
    RunSync,
    /// Create a task and return a `CreateTaskResult`.
    CreateTask,
    /// Refuse with -32021 naming the Tasks extension.
    MissingCapability,
}

impl TaskPolicy {
    /// The decision table. The three policies are this server's configuration; the table keeps
    /// SEP-2663 "Capability Negotiation": never a task for a request that did not declare the
    /// extension, and -32021 when the tool cannot run without one:
    ///
    /// | policy | declared Tasks | did not |
    /// |---|---|---|
    /// | sync | run synchronously | run synchronously |
    /// | optional | create a task | run synchronously |
    /// | required | create a task | -32021 |
    pub fn decide(self, tasks_declared: bool) -> Decision {
        match (self, tasks_declared) {
            (TaskPolicy::Sync, _) | (TaskPolicy::Optional, false) => Decision::RunSync,
            (TaskPolicy::Optional, true) | (TaskPolicy::Required, true) => Decision::CreateTask,
            (TaskPolicy::Required, false) => Decision::MissingCapability,
        }
    }
}
