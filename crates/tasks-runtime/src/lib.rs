//! # tasks-runtime
//!
//! Everything a server needs to run MCP tasks, independent of any transport: a [`Store`](store::Store) trait
//! with an in-memory implementation, the [`TaskRuntime`] that creates tasks and runs their
//! workers, input parking (`input_required` ↔ `tasks/update`), cancellation, TTL and reaping,
//! capacity limits, a broadcast stream of status changes, and the waits built on it
//! ([`TaskWait`]: every wait ends, when its task changes or is gone, whatever notification is lost).
//!
//! The same [`ToolHandler`] serves a synchronous `tools/call` ([`run_sync`]) and a task: inside
//! a task, [`ToolContext::input`] (and its typed forms `elicit_as`, `elicit`, `sample`,
//! `list_roots`) parks the task until `tasks/update` answers; in a synchronous call it ends the
//! call with an MRTR `input_required` result instead. Either way the client is only ever asked
//! for input its request declared it can give, and every answer is checked against the request
//! it answers before the tool sees it, typed ([`tasks_core::input::InputResponse`]).
//!
//! A tool's arguments can be a Rust type ([`Tool::typed`]): the `inputSchema` is generated
//! from it with schemars, and arguments that do not fit are answered before the tool runs. So
//! can its questions ([`Tool::asks`], [`ToolContext::elicit_as`]): the form is generated from
//! the type, checked against what MCP forms allow when the tool is built, and the answer comes
//! back deserialized ([`Elicited`]). In a tool body `?` turns the common errors
//! (`std::io::Error`, `serde_json::Error`, …) into the tool's own failure, an `isError: true`
//! result ([`ToolError`] lists them).
//!
//! ## Example: a tool that asks for confirmation
//!
//! ```
//! use serde_json::json;
//! use tasks_core::TaskPolicy;
//! use tasks_core::input::{ClientCapability, ElicitAnswer};
//! use tasks_runtime::{Tool, text_result};
//!
//! let tool = Tool::new("confirm_delete", "Deletes a file after asking the user", |ctx| async move {
//!     let file = ctx.arguments().get("filename").and_then(|v| v.as_str()).unwrap_or("file").to_owned();
//!     let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}},
//!                         "required": ["confirm"]});
//!     // Only `accept` carries content; a decline or cancel is never consent.
//!     let text = match ctx.elicit("confirm-delete", format!("Delete {file}?"), schema).await? {
//!         ElicitAnswer::Accept(content) if content.get("confirm") == Some(&json!(true)) => "deleted",
//!         _ => "kept",
//!     };
//!     Ok(text_result(text))
//! })
//! .with_policy(TaskPolicy::Optional)
//! // Calls whose request does not declare form elicitation get -32021 before anything runs.
//! .requires_client([ClientCapability::ElicitationForm]);
//! assert_eq!(tool.name(), "confirm_delete");
//! ```
//!
//! ## Example: a cancellable long computation
//!
//! ```
//! use std::time::Duration;
//! use tasks_core::TaskPolicy;
//! use tasks_runtime::{Tool, ToolError, text_result};
//!
//! let tool = Tool::new("slow", "Sleeps, then answers", |ctx| async move {
//!     tokio::select! {
//!         _ = tokio::time::sleep(Duration::from_secs(60)) => Ok(text_result("done")),
//!         _ = ctx.cancellation().cancelled() => Err(ToolError::Cancelled),
//!     }
//! })
//! .with_policy(TaskPolicy::Optional);
//! assert_eq!(tool.policy_for(&Default::default()), TaskPolicy::Optional);
//! ```
#![forbid(unsafe_code)]

//! ## Module layers
//!
//! A module uses only the modules its row names (checked by `tests/tests/layering.rs`, which
//! also fails on any cycle). The context of a running tool reaches the runtime only through
//! the `port` trait, so the runtime can sit above the tools:
//!
//! | module | uses |
//! |---|---|
//! | `executor` ([`Executor`]: the core's plans carried out, the same for every host) | `runtime`, `creation`, `drive`, `sync`, `registry`, `scope`, `work` |
//! | `lifecycle` ([`Node`]: start and shutdown) | `runtime` |
//! | `server_metrics` ([`ServerMetrics`](server_metrics::ServerMetrics): a host's requests and streams, and the runtime's metrics, in one registry) | `runtime`, `metrics` |
//! | `sessions` (the live 2025 sessions: their state, rounds, input delivery, tasks, and the drivers of their exchanges) | `server_metrics`, `feed`, `runtime`, `creation`, `wait`, `sync`, `notify`, `registry`, `entropy`, `list_changes`, `scope`, `work`, `lock` |
//! | `listen` ([`ListenRun`]: a listen stream carried out, the same for every host) | `feed`, `runtime`, `list_changes`, `wait`, `scope` |
//! | `feed` ([`Feed`]: what a long-lived stream follows) | `runtime`, `list_changes`, `wait`, `scope` |
//! | `hosted` (the catalog a [`TaskRuntime`] serves) | `runtime`, `catalog`, `list_changes` |
//! | `runtime` ([`TaskRuntime`]) | `creation`, `recovery`, `wait`, `inner`, `worker`, `registry`, `catalog`, `store`, `metrics`, `clock`, `config`, `entropy`, `events`, `seal`, `scope`, `work` |
//! | `creation` ([`Creation`]: what [`TaskRuntime::create`] creates) | `registry`, `scope`, `work` |
//! | `recovery` (leases, takeover) | `follow`, `inner`, `worker`, `registry`, `store`, `config`, `lock` |
//! | `follow` (commits of other nodes) | `inner`, `store`, `error` |
//! | `wait` ([`Changes`], [`TaskWait`]: what waiters follow) | `inner`, `events`, `error`, `scope` |
//! | `catalog` (prompts, resources, completions, skills) | `sync`, `registry`, `context`, `error`, `form`, `state`, `scope` |
//! | `drive` ([`drive_sync`]: a synchronous run's messages, the same for every host) | `sync`, `notify`, `entropy` |
//! | `sync` (a tool run within its request, input as MRTR rounds) | `worker`, `context`, `registry`, `result`, `notify`, `error`, `form`, `state`, `scope`, `lock` |
//! | `worker` (a task's tool run detached) | `inner`, `context`, `registry`, `result`, `status`, `store`, `error`, `work` |
//! | `inner` (shared state: commits, events, waiters, reaping) | `port` (implements it), `registry`, `store`, `metrics`, `expiry`, `clock`, `config`, `events`, `error`, `seal`, `scope`, `lock` |
//! | `listing` (the tools as `tools/list` shows them) | `registry` |
//! | `registry` ([`Tool`]) | `context`, `result`, `form`, `state` |
//! | `result` (what a tool answers) | `error`, `form` |
//! | `context` ([`ToolContext`]) | `port`, `status`, `notify`, `store`, `error`, `work`, `scope`, `form`, `state`, `lock` |
//! | `status` (coalesced status messages and progress) | `port`, `store`, `scope`, `lock` |
//! | `port` (what a context needs of the runtime) | `store`, `error`, `scope` |
//! | `metrics` | `store` |
//! | `store` (the [`Store`](store::Store) trait, the memory store, the metered wrapper) | `metrics`, `expiry`, `clock`, `work`, `scope`, `lock` |
//! | `operator` (the operator's inventory and cancel) | `runtime`, `store`, `error` |
//! | `config` | `entropy`, `clock`, `seal`, `store` |
//! | `work` | `seal`, `scope` |
//! | `seal` (a task's caller, sealed into its work) | `scope` |
//! | `events` | `scope` |
//! | `entropy`, `notify` | `lock` |
//! | `error`, `scope`, `clock`, `expiry`, `secret`, `state`, `list_changes`, `lock`, `form` (typed questions: the forms of [`ToolContext::elicit_as`], the schema generator) | nothing of this crate |
//!
//! ## Testing a store
//!
//! The store contract suite, every rule of the [`Store`](store::Store) documentation as a check that panics
//! when a store breaks it, is the `tasks-store-contract` crate: a crate that implements
//! [`Store`](store::Store) depends on it in its `[dev-dependencies]` and calls its `run_all` on fresh stores.

pub mod catalog;
mod clock;
mod config;
mod context;
mod creation;
mod drive;
mod entropy;
mod error;
mod events;
mod executor;
mod expiry;
mod feed;
mod follow;
mod form;
mod hosted;
mod inner;
mod lifecycle;
mod list_changes;
mod listen;
mod listing;
mod lock;
mod metrics;
mod notify;
mod operator;
mod port;
mod recovery;
mod registry;
mod result;
mod runtime;
mod scope;
mod seal;
mod secret;
pub mod server_metrics;
pub mod sessions;
mod state;
mod status;
pub mod store;
mod sync;
mod wait;
mod work;
mod worker;

pub use clock::{Clock, Monotonic, SharedClock, TokioClock};
pub use config::{duration_ms, LeaseConfig, Limits, RuntimeConfig};
pub use context::ToolContext;
pub use creation::Creation;
pub use drive::{drive_sync, SyncFrame, SyncStart, SyncStream};
pub use entropy::{Entropy, EntropyError, OsEntropy, Randomness, SeededEntropy};
pub use error::ToolError;
pub use events::{StatusEvent, TaskEvent};
pub use executor::{Answer, AnswerView, CallStep, Executor, PlannedCall, SyncRun};
pub use feed::{follow_tasks, Feed, FeedEvent};
pub use form::Elicited;
pub use lifecycle::{unfinished_fate, Node};
pub use list_changes::{ListChanges, ListKind};
pub use listen::ListenRun;
pub use metrics::RuntimeMetrics;
pub use notify::{Notifier, NotifyingRun, RequestNotification};
pub use operator::{OperatorCancel, OperatorError};
pub use recovery::MESSAGE_INTERRUPTED;
pub use registry::{PolicyFn, Recovery, Tool, ToolHandler, ToolPolicy, ToolRegistry};
pub use result::{error_result, text_result, IntoToolResult, Json};
pub use runtime::TaskRuntime;
pub use scope::{Caller, Principal, Scope, ScopeKey};
pub use seal::{PrincipalKey, SealedPrincipal, NONCE_BYTES as SEAL_NONCE_BYTES};
pub use secret::{load_or_create_secret, MIN_SECRET_BYTES, SECRET_BYTES};
pub use sync::{run_sync, SyncCall, SyncOutcome};
pub use wait::{Changes, TaskWait, Wake};
pub use work::{Work, MAX_ANSWER_DEPTH, MAX_WORK_DEPTH};

/// What only this workspace's fixture, fuzz targets and benchmarks use: no semver promise
/// (`docs/api-policy.md`), it may change or go in any release.
pub mod unstable {
    pub use crate::work::encoded_len;
}
