//! # tasks-runtime
//!
//! Everything a server needs to run MCP tasks, independent of any transport: a [`Store`] trait
//! with an in-memory implementation, the [`TaskRuntime`] that creates tasks and runs their
//! workers, input parking (`input_required` ↔ `tasks/update`), cancellation, TTL and reaping,
//! capacity limits, and a broadcast stream of status changes.
//!
//! The same [`ToolHandler`] serves a synchronous `tools/call` ([`run_sync`]) and a task: inside
//! a task, [`ToolContext::input`] parks the task until `tasks/update` answers; in a synchronous
//! call it ends the call with an MRTR `input_required` result instead.
//!
//! ## Example: a tool that asks for confirmation
//!
//! ```
//! use serde_json::json;
//! use tasks_core::{InputRequest, TaskPolicy};
//! use tasks_runtime::{Tool, ToolContext, ToolError, text_result};
//!
//! let tool = Tool::new("confirm_delete", "Deletes a file after asking the user", |ctx: ToolContext| async move {
//!     let file = ctx.arguments().get("filename").and_then(|v| v.as_str()).unwrap_or("file").to_owned();
//!     let request = InputRequest {
//!         method: "elicitation/create".into(),
//!         params: json!({"message": format!("Delete {file}?"), "requestedSchema": {
//!             "type": "object", "properties": {"confirm": {"type": "boolean"}}}})
//!             .as_object().cloned(),
//!     };
//!     let answer = ctx.input("confirm-delete", request).await?;
//!     let confirmed = answer.pointer("/content/confirm") == Some(&json!(true));
//!     Ok::<_, ToolError>(text_result(format!("Delete confirmed: {confirmed}")))
//! })
//! .with_policy(TaskPolicy::Optional);
//! assert_eq!(tool.name(), "confirm_delete");
//! ```
//!
//! ## Example: a cancellable long computation
//!
//! ```
//! use std::time::Duration;
//! use tasks_core::TaskPolicy;
//! use tasks_runtime::{Tool, ToolContext, ToolError, text_result};
//!
//! let tool = Tool::new("slow", "Sleeps, then answers", |ctx: ToolContext| async move {
//!     tokio::select! {
//!         _ = tokio::time::sleep(Duration::from_secs(60)) => Ok(text_result("done")),
//!         _ = ctx.cancellation().cancelled() => Err(ToolError::Cancelled),
//!     }
//! })
//! .with_policy(TaskPolicy::Optional);
//! assert_eq!(tool.policy_for(&Default::default()), TaskPolicy::Optional);
//! ```

pub mod clock;
pub mod config;
pub mod context;
pub mod events;
pub mod list_changes;
pub mod notify;
pub mod registry;
pub mod runtime;
pub mod scope;
pub mod store;
pub mod sync;
pub mod work;
mod worker;

pub use clock::{Clock, TokioClock};
pub use config::{Limits, RuntimeConfig};
pub use context::{ToolContext, ToolError};
pub use events::StatusEvent;
pub use list_changes::{ListChanges, ListKind};
pub use notify::{Notifier, RequestNotification};
pub use registry::{text_result, Tool, ToolHandler, ToolPolicy, ToolRegistry};
pub use runtime::TaskRuntime;
pub use scope::Scope;
pub use store::memory::MemoryStore;
pub use store::{CasOutcome, Snapshot, Store, StoreError};
pub use sync::{run_sync, SyncCall, SyncOutcome};
pub use work::Work;
