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
//! What a user needs is at the crate root or in one of twelve public modules; every other module
//! is private, and its items that users need are re-exported from one of these (the workspace's
//! `unreachable_pub` lint keeps it so).
//!
//! | path | what |
//! |---|---|
//! | crate root | the task model: [`Task`], [`TaskState`], [`TaskStatus`], [`NewTask`], [`TaskOrigin`], [`TaskId`], [`Event`], the reducer [`apply`] and [`TaskUpdate`], [`Progress`], [`Timestamp`]; the error table [`McpError`]; [`Method`] and [`Feature`]; per-request [`RequestMeta`] and [`TaskPolicy`] |
//! | [`plan`] | the request planner: a message in, a [`plan::Plan`] out; with its parts: admission ([`plan::admit`]), `tools/call` ([`plan::plan_call`]), task params ([`plan::plan_task_method`]), MRTR `requestState` ([`plan::RequestState`], [`plan::StateKey`]), `Mcp-Param-*` headers ([`plan::ParamHeader`]) |
//! | [`exchange`] | what outlives a message, as state machines (events in, frames out): the listen stream and its filter ([`exchange::ListenFilter`], [`exchange::ListKind`]), a request answered now with its notifications and next MRTR round |
//! | [`sessions`] | the 2025 session path on the same endpoint: era routing, sessions and their machines (table, request ids, re-delivery), its planner and wire shapes |
//! | [`wire`] | typed base-protocol shapes (discover, `tools/list`, `input_required`, progress, log; `resultType`) and the task projections: `CreateTaskResult`, `DetailedTask`, `notifications/tasks`, the ack |
//! | [`json`] | reading JSON from untrusted bytes with plain member names (serde_json's marker names refused), and the checks that what is written reads back |
//! | [`jsonrpc`] | JSON-RPC framing of results, errors and notifications; the serverInfo `_meta` |
//! | [`headers`] | `Mcp-Method` / `Mcp-Name` routing-header rules and `=?base64?…?=` decoding |
//! | [`catalog`] | the requests of prompts, resources, completion and skills, validated; pagination; resource templates |
//! | [`skill`] | the Skills extension: `SKILL.md` frontmatter, names, paths, digests, limits, directory children |
//! | [`input`] | input requests, the client capability each needs, typed and validated answers |
//! | [`protocol`] | protocol constants: revision, extension id, `_meta` keys |
//! | [`labels`] | the bounded metric labels a request is counted under: method, JSON-RPC code, refusal outcome |
//!
//! The private modules, one concept each: `admission`, `borrowed` (the typed read of the hot
//! requests), `call`, `params`, `mrtr` (signed, request-bound, expiring `requestState`;
//! idempotent retry task ids), `param_headers`, `listen`, `projection`, `cursor`,
//! `uri_template`, `canonical` (a canonical byte encoding of JSON values for hashing),
//! `negotiation`, `task`, `origin` (which task design created a task), `event`, `reducer`, `progress`, `id`, `time`, `logging`, `method`,
//! `raw`, `trace`, `number` and `error`.
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
//! | `plan` | `call`, `catalog`, `listen`, `admission`, `params`, `param_headers`, `negotiation`, `mrtr`, `method`, `time`, `error` |
//! | `listen` | `catalog`, `id`, `protocol`, `error` |
//! | `catalog` | `call`, `cursor`, `uri_template`, `skill`, `mrtr`, `wire`, `method`, `protocol`, `time`, `error` |
//! | `call` | `admission`, `mrtr`, `negotiation`, `headers`, `param_headers`, `input`, `method`, `id`, `time`, `error` |
//! | `admission` | `borrowed`, `json`, `negotiation`, `headers`, `method`, `protocol`, `error` |
//! | `borrowed` | `json`, `negotiation`, `method`, `trace`, `protocol` |
//! | `param_headers` | `headers`, `error` |
//! | `headers` | `method`, `id`, `error` |
//! | `params` | `negotiation`, `method`, `origin`, `id`, `error` |
//! | `negotiation` | `logging`, `trace`, `protocol`, `error` |
//! | `mrtr` | `canonical`, `input`, `method`, `id`, `time`, `error` |
//! | `wire` | `projection`, `task`, `input`, `progress`, `logging`, `number`, `id`, `time` |
//! | `projection` | `task`, `progress`, `raw`, `protocol` |
//! | `reducer` | `event`, `task`, `input`, `raw`, `protocol`, `time` |
//! | `event` | `task`, `input`, `progress`, `raw`, `error` |
//! | `task` | `origin`, `input`, `progress`, `raw`, `id`, `time`, `error` |
//! | `input` | `protocol`, `error` |
//! | `cursor`, `jsonrpc` | `error` |
//! | `error`, `id` | `protocol` |
//! | `progress` | `number` |
//! | `raw` | `json` |
//! | `canonical`, `json`, `logging`, `method`, `number`, `origin`, `protocol`, `skill`, `time`, `trace`, `uri_template` | nothing of this crate |
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
//!   [`jsonrpc`] and [`wire`]. Every rule is tested here without a network or an
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

mod admission;
mod borrowed;
mod call;
mod canonical;
pub mod catalog;
mod cursor;
mod error;
mod event;
pub mod exchange;
pub mod headers;
mod id;
pub mod input;
pub mod json;
pub mod jsonrpc;
pub mod labels;
mod listen;
mod logging;
mod method;
mod mrtr;
mod negotiation;
mod number;
mod origin;
mod param_headers;
mod params;
pub mod plan;
mod progress;
mod projection;
pub mod protocol;
mod raw;
mod reducer;
pub mod sessions;
pub mod skill;
mod task;
mod time;
mod trace;
mod uri_template;
pub mod wire;

pub use error::{
    http_status_for_code, CapacityLimit, JsonRpcError, McpError, INTERNAL_ERROR, MAX_ECHO_BYTES,
};
pub use event::Event;
pub use id::{TaskId, TaskIdError, TASK_ID_RANDOM_BYTES};
pub use logging::{LogLevel, UnknownLogLevel};
pub use method::{Feature, Method};
pub use negotiation::{progress_token, Decision, RequestMeta, TaskPolicy};
pub use origin::TaskOrigin;
pub use progress::{Progress, META_PROGRESS};
pub use raw::{RawObject, MAX_RESULT_DEPTH};
pub use reducer::{apply, ReduceError, TaskUpdate, Transition};
pub use task::{
    Answered, InputRequests, InvalidTask, NewTask, Task, TaskState, TaskStatus, MESSAGE_ACCEPTED,
    MESSAGE_CANCELLED, MESSAGE_CANCELLED_BY_OPERATOR, MESSAGE_INPUT_RECEIVED, MESSAGE_UNREADABLE,
    MESSAGE_WAITING_PREFIX,
};
pub use time::Timestamp;
pub use trace::{TraceParent, META_TRACEPARENT};

/// A JSON object (`serde_json::Map<String, Value>`), the shape of every MCP result and params.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
