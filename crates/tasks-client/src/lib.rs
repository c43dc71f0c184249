//! # tasks-client
//!
//! A client for MCP 2026-07-28 servers with the Tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663): call a tool and get one [`Execution`], whether the server answers at once,
//! asks for input first (an MRTR `input_required` round), or creates a task; then
//! [`TaskCall::settle`] it to an [`Outcome`].
//!
//! * **Wire shapes** come from `tasks-core` (the server's own types: [`DetailedTask`],
//!   [`CreateTaskResult`], [`ToolEntry`], input requests and answers), so client and server
//!   cannot drift apart.
//! * **Era:** [`Client::connect`] asks `server/discover` first; a server that does not serve
//!   2026-07-28 (for example one of the session-based 2025 revisions only) is
//!   [`ClientError::UnsupportedServerEra`].
//! * **Input:** an [`InputHandler`] answers elicitation (form and URL), sampling and roots
//!   requests, through MRTR retries or `tasks/update`. Only the capabilities it names are
//!   declared, so a server never asks for what the client cannot answer.
//! * **Waiting:** [`SettleOptions`]: `subscriptions/listen` with a fallback to polling, or
//!   polling at the server's `pollIntervalMs` with jitter; backoff on retryable errors, with
//!   a [`SettleOptions::on_retry`] hook to tell the user of an outage ([`RetryNotice`]); an
//!   optional deadline. [`TaskCall::updates`] is the same as a `Stream` of changes.
//! * **Progress:** [`DetailedTask::progress`] reads how far a task's work is ([`Progress`]),
//!   which a server of this project shows under the experimental `_meta` key
//!   `dev.mcp-tasks/progress` ([`tasks_core::Progress`]); each change of it is one of
//!   [`TaskCall::updates`].
//! * **Resuming:** [`TaskCall::handle`] is a serializable [`TaskHandle`]; after a restart,
//!   [`Client::resume`] finds the task again.
//! * **Prompts, resources, completion:** [`Client::list_prompts`], [`Client::get_prompt`]
//!   (its input rounds answered by the same [`InputHandler`] as a tool call's),
//!   [`Client::list_resources`], [`Client::list_resource_templates`],
//!   [`Client::read_resource`] (blobs decoded) and [`Client::complete`]; lists follow every
//!   page and keep the caching hints ([`Caching`]); a server without the feature is
//!   [`ClientError::MethodNotFound`].
//! * **Skills:** the Skills extension (`io.modelcontextprotocol/skills`, SEP-2640):
//!   [`Client::list_skills`], [`Client::get_skill`] ([`Skill`] entries: frontmatter and the
//!   files with their sizes and digests, or `"dynamic"`), [`Client::read_directory`], and
//!   [`Client::read_skill_file`], which verifies what it reads against the entry (listed, size,
//!   SHA-256 digest, the `SKILL.md`'s frontmatter) and fails with
//!   [`ClientError::Verification`] ([`VerificationFailure`]) when it does not match.
//! * **Errors** ([`ClientError`]) keep the JSON-RPC code ([`ClientError::code`]) and say
//!   whether a retry may help ([`ClientError::is_retryable`]).
//!
//! ## Example
//!
//! ```no_run
//! use async_trait::async_trait;
//! use serde_json::json;
//! use tasks_client::{
//!     ClientCapability, Client, ClientError, ElicitAnswer, Elicitation, InputHandler, Outcome,
//!     SettleOptions,
//! };
//!
//! /// Says yes to every confirmation form.
//! struct AlwaysYes;
//!
//! #[async_trait]
//! impl InputHandler for AlwaysYes {
//!     fn capabilities(&self) -> Vec<ClientCapability> {
//!         vec![ClientCapability::ElicitationForm]
//!     }
//!     async fn elicit(&self, _key: &str, _request: Elicitation) -> Result<ElicitAnswer, ClientError> {
//!         let content = json!({"confirm": true});
//!         Ok(ElicitAnswer::Accept(content.as_object().cloned().unwrap_or_default()))
//!     }
//! }
//!
//! # async fn run() -> Result<(), ClientError> {
//! let client = Client::builder("http://127.0.0.1:3000/mcp")
//!     .input_handler(AlwaysYes)
//!     .connect()
//!     .await?;
//! let execution = client.call_tool("confirm_delete", json!({"filename": "a.txt"})).await?;
//! if let Some(task) = execution.task() {
//!     println!("task {} created; resume it with {}", task.id(),
//!         serde_json::to_string(&task.handle()).unwrap_or_default());
//! }
//! match execution.settle(&SettleOptions::default()).await? {
//!     Outcome::Completed(result) => println!("{}", result.text()),
//!     Outcome::ToolError(result) => eprintln!("tool error: {}", result.text()),
//!     Outcome::Failed(error) => eprintln!("failed: {} ({})", error.message, error.code),
//!     Outcome::Cancelled => eprintln!("cancelled"),
//!     _ => {}
//! }
//! # Ok(())
//! # }
//! ```
//!
//! ## Modules
//!
//! One concept each, re-exported here; each uses only what its row names (checked by the
//! workspace's layering test):
//!
//! | module | uses |
//! |---|---|
//! | `skills` (the Skills extension) | `catalog`, `client`, `listing`, `error` |
//! | `catalog` (prompts, resources, completion) | `client`, `listing`, `error` |
//! | `client` ([`Client`], discovery, `tools/list`, `tools/call`) | `execution`, `task`, `outcome`, `listing`, `handler`, `shared`, `transport`, `error` |
//! | `execution` (a call's answer: a result or a task) | `task`, `settle`, `outcome`, `error` |
//! | `task` ([`TaskCall`]) | `settle`, `shared`, `handler`, `outcome`, `error` |
//! | `settle` (waiting for a task) | `shared`, `transport`, `error` |
//! | `shared` (what every handle of one endpoint shares) | `handler`, `transport`, `error` |
//! | `handler` ([`InputHandler`]), `transport` (one request over Streamable HTTP) | `error` |
//! | `listing` ([`Listing`], [`Caching`]), `outcome`, `error` ([`ClientError`]) | nothing of this crate |
//!
//! Sources: the MCP 2026-07-28 specification
//! (<https://modelcontextprotocol.io/specification/2026-07-28>), SEP-2663
//! (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>)
//! and SEP-2640, the Skills extension
//! (<https://github.com/modelcontextprotocol/ext-skills/blob/main/specification/stable/skills.mdx>).
#![forbid(unsafe_code)]

mod catalog;
mod client;
mod error;
mod execution;
mod handler;
mod listing;
mod outcome;
mod settle;
mod shared;
mod skills;
mod task;
mod transport;

pub use catalog::{
    Completion, Prompt, PromptArgument, PromptMessage, PromptResult, ReadResult, Resource,
    ResourceBody, ResourceContents, ResourceTemplate,
};
pub use client::{
    Client, ClientBuilder, CONNECT_TIMEOUT, MAX_INPUT_ROUNDS, MAX_TOOLS, MAX_TOOL_PAGES,
};
pub use error::{ClientError, FieldMismatch, VerificationFailure, MAX_BODY_CHARS};
pub use execution::Execution;
pub use handler::{Elicitation, ElicitationMode, InputHandler};
pub use listing::{Caching, Listing};
pub use outcome::{Outcome, ToolResult};
pub use settle::{
    FailureKind, RetryEvent, RetryNotice, SettleOptions, Wait, LISTEN_RECHECK, MAX_POLL, MIN_POLL,
};
pub use skills::{
    Skill, SkillFile, SkillResource, SkillResources, SkillResult, DIRECTORY_MIME_TYPE,
    SKILLS_EXTENSION,
};
pub use task::{TaskCall, TaskHandle};
pub use tasks_core::catalog::CompletionRef;
pub use tasks_core::wire::{CacheScope, CreateTaskResult, DetailedTask, DiscoverResult, ToolEntry};
/// The tasks-core types a client works with, so one dependency is enough.
pub use tasks_core::{
    input::{ClientCapability, ElicitAnswer, Role, Root, SamplingAnswer},
    InputRequests, JsonObject, JsonRpcError, Progress, TaskId, TaskState, TaskStatus,
};
pub use transport::MAX_MESSAGE_BYTES;
