//! # tasks-core
//!
//! The pure core of the MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the
//! stateless MCP revision 2026-07-28.
//!
//! This crate performs no IO, reads no clock and draws no randomness: the current time
//! ([`Timestamp`]), task ids (from caller-supplied random bytes) and everything else that varies
//! come in as arguments. That keeps every rule here deterministic and property-testable, in the
//! spirit of quinn-proto: *events in, new state and effects out*.
//!
//! ## Map
//!
//! | module | concept |
//! |---|---|
//! | [`method`] | [`Method`]: the served methods, in one place |
//! | [`admission`] | parsing and admitting one message: steps 3–11 of this server's admission order |
//! | [`mrtr`] | MRTR `requestState`: signed, request-bound, expiring; idempotent retry task ids |
//! | [`canonical`] | a canonical byte encoding of JSON values for hashing: key order and number spelling do not matter |
//! | [`call`] | planning a `tools/call`: the normative step order, run now or create a task |
//! | [`catalog`] | the requests of prompts, resources, completion and skills, validated |
//! | [`cursor`] | pagination: opaque cursors and pages of list results |
//! | [`uri_template`] | resource templates: which URIs a `uriTemplate` covers, and its variables |
//! | [`skill`] | the Skills extension: `SKILL.md` frontmatter, names, paths, digests, limits, directory children |
//! | [`plan`] | the request planner: a message in, a [`plan::Plan`] out (reject, accept, or the action to run) |
//! | [`protocol`] | protocol constants: revision, extension id, `_meta` keys |
//! | [`id`] | [`TaskId`]: non-empty, at most 256 bytes |
//! | [`time`] | [`Timestamp`]: UTC milliseconds, RFC 3339 on the wire |
//! | [`input`] | input requests, the client capability each needs, typed and validated answers |
//! | [`task`] | [`Task`] and [`TaskState`]: the status-payload table enforced by the type |
//! | [`event`] | [`Event`]: what can happen to a task |
//! | [`progress`] | [`Progress`]: how far a task's work is, and its experimental `_meta` key |
//! | [`reducer`] | [`apply`]: the pure reducer; terminal states absorb every event |
//! | [`projection`] | wire shapes: `CreateTaskResult`, `DetailedTask`, `notifications/tasks`, the ack |
//! | [`params`] | parsing and validation of `tasks/get`, `tasks/update`, `tasks/cancel` params |
//! | [`negotiation`] | per-request `_meta`, client capabilities, task policy and the decision table |
//! | [`headers`] | `Mcp-Method` / `Mcp-Name` routing-header rules and `=?base64?…?=` decoding |
//! | [`param_headers`] | `x-mcp-header` tool parameters mirrored in `Mcp-Param-*` headers |
//! | [`listen`] | `subscriptions/listen` filters, acknowledgement, closing; [`listen::ListKind`] |
//! | [`exchange`] | what outlives a message, as state machines (events in, frames out): the listen stream, a request answered now with its notifications and next MRTR round |
//! | [`jsonrpc`] | JSON-RPC framing of results, errors and notifications; the serverInfo `_meta` |
//! | [`logging`] | [`LogLevel`] of `notifications/message` |
//! | [`wire`] | typed base-protocol shapes: discover, `tools/list`, `input_required`, progress, log; `resultType` |
//! | [`sessions`] | the 2025 session path on the same endpoint: era routing, sessions and their machines (table, request ids, re-delivery), its planner and wire shapes |
//! | [`labels`] | the bounded metric label values of a request: its method, its JSON-RPC code, a store refusal's outcome |
//! | [`error`] | [`McpError`]: every JSON-RPC error the server sends, with its HTTP status |
//!
//! ## Module layers
//!
//! Each module uses only what its row names (checked by the workspace's layering test, which
//! also fails on any cycle): the planner and the machines on top, the task model and the wire
//! vocabulary at the bottom.
//!
//! | module | uses |
//! |---|---|
//! | `labels` | `sessions`, `admission`, `method`, `error` |
//! | `sessions` | `plan`, `exchange`, `jsonrpc`, `call`, `admission`, `catalog`, `listen`, `params`, `negotiation`, `headers`, `input`, `task`, `progress`, `logging`, `method`, `id`, `number`, `protocol`, `error` |
//! | `exchange` | `listen`, `projection`, `wire`, `mrtr`, `jsonrpc`, `negotiation`, `input`, `task`, `logging`, `method`, `id`, `time`, `error` |
//! | `plan` | `call`, `catalog`, `listen`, `admission`, `params`, `negotiation`, `mrtr`, `method`, `time`, `error` |
//! | `listen` | `catalog`, `id`, `protocol`, `error` |
//! | `catalog` | `call`, `cursor`, `skill`, `mrtr`, `wire`, `method`, `protocol`, `time`, `error` |
//! | `call` | `admission`, `mrtr`, `negotiation`, `headers`, `param_headers`, `input`, `method`, `id`, `time`, `error` |
//! | `admission` | `negotiation`, `headers`, `method`, `protocol`, `error` |
//! | `param_headers` | `headers`, `error` |
//! | `headers`, `params` | `method`, `id`, `error` |
//! | `negotiation` | `logging`, `trace`, `protocol`, `error` |
//! | `mrtr` | `canonical`, `input`, `method`, `id`, `time`, `error` |
//! | `wire` | `task`, `input`, `progress`, `logging`, `number`, `id`, `time` |
//! | `projection` | `task`, `progress`, `raw`, `protocol` |
//! | `reducer` | `event`, `task`, `input`, `raw`, `protocol`, `time` |
//! | `event` | `task`, `progress`, `raw`, `error` |
//! | `task` | `input`, `progress`, `raw`, `id`, `time`, `error` |
//! | `input` | `protocol`, `error` |
//! | `cursor`, `jsonrpc` | `error` |
//! | `error`, `id` | `protocol` |
//! | `progress` | `number` |
//! | `canonical`, `logging`, `method`, `number`, `protocol`, `raw`, `skill`, `time`, `trace`, `uri_template` | nothing of this crate |
//!
//! ## Design notes
//!
//! * **Invalid states are unrepresentable.** `inputRequests` exists only inside
//!   [`TaskState::InputRequired`] and is non-empty by construction; `result` only inside
//!   [`TaskState::Completed`]; `error` only inside [`TaskState::Failed`]. The wire projections
//!   therefore cannot emit a payload for the wrong status.
//! * **The reducer is the only way a task changes.** [`Task`] fields are private; a store
//!   creates only a [`NewTask`] and commits only a [`TaskUpdate`], which only [`apply`] makes,
//!   comparing [`TaskUpdate::expected_revision`] (compare-and-set). Reading a stored task back
//!   checks its invariants.
//! * **The protocol is decided here, before anything runs.** [`plan::plan`] takes a message
//!   (headers as plain data, body, the server's view of its tools, the time) to a rejection or
//!   an action; the transport carries the action out on the runtime and frames the answer with
//!   [`jsonrpc`], [`projection`] and [`wire`]. Every rule is tested here without a network or an
//!   async runtime: order tables (admission, `tools/call`), property tests of the planner, and
//!   model-based sequences of planner and reducer together.
//! * **Projections never carry** `requestState`, `ttl`, `pollInterval`, a nested `task`, or the
//!   2025-11-25 `io.modelcontextprotocol/related-task` key (runner scenarios
//!   `tasks-request-state-removal`, `tasks-wire-fields`, `tasks-lifecycle`).
//!
//! ## Sources
//!
//! Docs cite the public source of each rule:
//!
//! * the MCP 2026-07-28 specification by page and section heading, e.g. streamable-http
//!   "Server Validation" for
//!   <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>,
//!   and its schema (<https://modelcontextprotocol.io/specification/2026-07-28/schema>);
//! * the Tasks extension, SEP-2663, by section heading, e.g. "Task Status"
//!   (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>);
//! * for what only the conformance runner (`@modelcontextprotocol/conformance@0.2.0-alpha.12`)
//!   pins down, its scenario and check id, e.g. `tasks-lifecycle/sep-2663-cancel-ack-empty-result`.
//!
//! Where none of them decides, the docs say that the choice is this server's.
#![forbid(unsafe_code)]

pub mod admission;
pub mod call;
pub mod canonical;
pub mod catalog;
pub mod cursor;
pub mod error;
pub mod event;
pub mod exchange;
pub mod headers;
pub mod id;
pub mod input;
pub mod jsonrpc;
pub mod labels;
pub mod listen;
pub mod logging;
pub mod method;
pub mod mrtr;
pub mod negotiation;
mod number;
pub mod param_headers;
pub mod params;
pub mod plan;
pub mod progress;
pub mod projection;
pub mod protocol;
pub mod raw;
pub mod reducer;
pub mod sessions;
pub mod skill;
pub mod task;
pub mod time;
pub mod trace;
pub mod uri_template;
pub mod wire;

pub use error::{CapacityLimit, JsonRpcError, McpError};
pub use event::Event;
pub use id::TaskId;
pub use input::{
    ClientCapability, ElicitAnswer, InputRequest, InputResponse, Root, SamplingAnswer,
    SamplingRequest,
};
pub use logging::LogLevel;
pub use method::{Feature, Method};
pub use negotiation::{Decision, RequestMeta, TaskPolicy};
pub use progress::{Progress, META_PROGRESS};
pub use raw::RawObject;
pub use reducer::{apply, ReduceError, TaskUpdate, Transition};
pub use task::{Answered, InputRequests, NewTask, Task, TaskState, TaskStatus};
pub use time::Timestamp;

/// A JSON object (`serde_json::Map<String, Value>`), the shape of every MCP result and params.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
