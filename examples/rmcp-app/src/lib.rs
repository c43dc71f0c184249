//! An rmcp server with durable tasks: ordinary rmcp `#[tool]` tools beside the conformance
//! fixture's tools, which run on a `TaskRuntime` through [`tasks_rmcp::TasksBridge`] (as
//! tasks when the tool and the request say so, with any store).
//!
//! [`App`] is the `ServerHandler`; [`start`] opens the store, starts the runtime's node and
//! builds the handler; [`router`] is the HTTP application (rmcp's streamable HTTP service at
//! `/mcp`, behind [`tasks_rmcp::listen_layer`]); the `rmcp-app` binary serves it over HTTP or
//! the handler over stdio.

pub mod settings;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router, ErrorData, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;
use tasks_core::TaskPolicy;
use tasks_rmcp::{rmcp_tool, PrincipalSource, TasksBridge};
use tasks_runtime::{ListChanges, Node, Principal, TaskRuntime, ToolRegistry};
use tokio_util::sync::CancellationToken;

pub use settings::Settings;

/// The server's name in serverInfo.
pub const SERVER_NAME: &str = "rmcp-app";

/// The path [`router`] serves the MCP endpoint at.
pub const ENDPOINT_PATH: &str = "/mcp";

/// The arguments of `add`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AddArgs {
    /// The first addend.
    pub a: i64,
    /// The second addend.
    pub b: i64,
}

/// The arguments of `word_count`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WordCountArgs {
    /// The text whose words are counted.
    pub text: String,
}

/// The server: its own rmcp tools (`add`, `word_count`) and the runtime's tools behind the
/// bridge.
#[derive(Clone)]
pub struct App {
    tasks: TasksBridge,
    tool_router: ToolRouter<App>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("tasks", &self.tasks)
            .finish_non_exhaustive()
    }
}

#[tool_router]
impl App {
    /// A handler with `tasks` for the runtime's tools.
    pub fn new(tasks: TasksBridge) -> Self {
        App {
            tasks,
            tool_router: Self::tool_router(),
        }
    }

    /// The bridge.
    pub fn tasks(&self) -> &TasksBridge {
        &self.tasks
    }

    /// An ordinary rmcp tool, answered at once.
    #[tool(description = "Adds two integers")]
    async fn add(
        &self,
        Parameters(AddArgs { a, b }): Parameters<AddArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let sum = a
            .checked_add(b)
            .ok_or_else(|| ErrorData::invalid_params("the sum does not fit 64 bits", None))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(
            sum.to_string(),
        )]))
    }

    /// An rmcp tool whose function also runs as a durable task (`word_count_task`).
    #[tool(description = "Counts the words of a text")]
    async fn word_count(
        &self,
        Parameters(args): Parameters<WordCountArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        count_words(args).await
    }
}

/// The function of rmcp's `word_count` tool, which [`tasks_rmcp::rmcp_tool`] also runs as the
/// task tool `word_count_task`.
pub async fn count_words(args: WordCountArgs) -> Result<CallToolResult, ErrorData> {
    let words = args.text.split_whitespace().count();
    Ok(CallToolResult::success(vec![ContentBlock::text(
        words.to_string(),
    )]))
}

impl ServerHandler for App {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                // The runtime announces changes of its tool list; the bridge's listen passes
                // them on.
                .enable_tool_list_changed()
                .enable_tasks()
                .build(),
        )
        .with_server_info(server_info())
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(&[ProtocolVersion::V_2026_07_28])
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = self.tasks.tools();
        tools.extend(self.tool_router.list_all());
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.tasks.serves(&request.name) {
            return self.tasks.call_tool(self, request, &context).await;
        }
        self.tool_router
            .call(ToolCallContext::new(self, request, context))
            .await
    }

    tasks_rmcp::delegate_tasks!(tasks);
}

/// serverInfo.
pub fn server_info() -> Implementation {
    Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
}

/// The runtime's tools: the conformance fixture's, and `word_count_task`, rmcp's `word_count`
/// run as a task.
pub fn tools(changes: &ListChanges, settings: &Settings) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in tasks_conformance::tools::all(changes, settings.run_log.as_deref()) {
        registry.register(tool);
    }
    registry.register(
        rmcp_tool(
            "word_count_task",
            "Counts the words of a text, as a task",
            count_words,
        )
        .with_policy(TaskPolicy::Required),
    );
    registry
}

/// Opens the store of `settings`, starts the runtime's node (recovery of what a previous
/// process left, lease renewal, takeover of dead nodes' tasks, reaping) and builds the handler.
///
/// # Errors
/// A one-line reason the store or the secret file cannot be opened, or the node not started.
pub async fn start(settings: &Settings) -> Result<(App, Node), String> {
    let store = tasks_conformance::store::open(
        &settings.store,
        tasks_conformance::store::Synchronous::Full,
        &settings.postgres_schema,
    )
    .await?;
    let changes = ListChanges::new();
    let mut config = settings.runtime_config(changes.clone());
    let secret = match settings.secret_path() {
        Some(path) => Some(
            tasks_runtime::load_or_create_secret(&path)
                .map_err(|error| format!("cannot use secret file {}: {error}", path.display()))?,
        ),
        None => None,
    };
    if let Some(secret) = &secret {
        // The key a task's caller is sealed under: the same on every restart and node, so a
        // re-run after recovery still knows who called.
        config = config.with_principal_key(tasks_runtime::PrincipalKey::from_secret(secret));
    }
    let runtime = TaskRuntime::new(store, tools(&changes, settings), config);
    let node = runtime
        .start()
        .await
        .map_err(|error| format!("cannot start the node: {error}"))?;
    let mut bridge = TasksBridge::builder(runtime).server_info(server_info());
    if let Some(secret) = &secret {
        bridge = bridge.secret(secret);
    }
    if settings.stdio {
        bridge = bridge.principal(PrincipalSource::Fixed(Principal::new(&settings.principal)));
    }
    Ok((App::new(bridge.build()), node))
}

/// The HTTP application: [`tasks_rmcp::streamable_http_service`] for `handler` at
/// [`ENDPOINT_PATH`] (rmcp's stateless Streamable HTTP server behind the bridge's listen
/// layer). Its streams end when `stop` is cancelled.
pub fn router<H>(handler: H, stop: CancellationToken) -> axum::Router
where
    H: ServerHandler + Clone + Send + Sync + 'static,
{
    axum::Router::new().nest_service(
        ENDPOINT_PATH,
        tasks_rmcp::streamable_http_service(handler, stop),
    )
}
