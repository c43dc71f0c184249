//! Protocol constants of MCP 2026-07-28 and the Tasks extension.
//!
//! Sources: MCP 2026-07-28 basic, "`_meta`" (reserved keys, per-request and per-response protocol
//! fields: <https://modelcontextprotocol.io/specification/2026-07-28/basic/index>); SEP-2663
//! "Extension Identifier"
//! (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).

/// The only protocol revision this implementation serves.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// Every revision listed in `server/discover` `supportedVersions` and in -32022 `data.supported`.
pub const SUPPORTED_VERSIONS: &[&str] = &[PROTOCOL_VERSION];

/// The 2025 revisions served on the session path ([`crate::sessions`]), newest first. Tasks
/// (the 2025-11-25 design) exist only in the first.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18"];

/// The Tasks extension identifier, used under `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Request `_meta` key naming the protocol revision (required).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// Request `_meta` key holding the client's capabilities for this request (required).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// Request `_meta` key holding client identification (optional, never required).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Request `_meta` key opting the request into `notifications/message` at a level.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Request `_meta` key opting the request into `notifications/progress`.
pub const META_PROGRESS_TOKEN: &str = "progressToken";
/// The 2025-11-25 `_meta` key tying a message to a task (`{"taskId": …}`): required on a
/// 2025 `tasks/result` and on the input requests of a 2025 task, never on a 2026-07-28 task
/// result.
pub const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Result `_meta` key carrying `{name, version}` of the server.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Notification `_meta` key carrying the id of the `subscriptions/listen` request.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Maximum length of a task id, in bytes (this server's choice: SEP-2663 sets no limit).
pub const MAX_TASK_ID_BYTES: usize = 256;

/// The 2025-era handshake method. It opens a session on the session path ([`crate::sessions`])
/// for a revision in [`LEGACY_VERSIONS`], else gets -32022 naming the supported versions; one
/// carrying 2026-07-28 headers and `_meta` gets -32601 (the method does not exist in
/// 2026-07-28).
pub const METHOD_INITIALIZE: &str = "initialize";
