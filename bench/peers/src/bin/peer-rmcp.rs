//! `slow_compute` as a task on rmcp: its `TaskManager` runs the tool and answers `tasks/get`,
//! served by its `StreamableHttpService` (stateless, JSON answers).

use std::sync::Arc;

use clap::Parser as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult,
    GetTaskParams, GetTaskResult, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The server: one task manager shared by every request's handler.
#[derive(Clone, Default)]
struct Peer {
    tasks: TaskManager,
}

impl ServerHandler for Peer {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "slow_compute" {
            return Err(ErrorData::invalid_params("unknown tool", None));
        }
        let arguments = request.arguments.unwrap_or_default();
        let seconds = arguments
            .get("seconds")
            .and_then(|s| s.as_u64())
            .unwrap_or(0);
        let run = async move {
            let text = peers::compute(seconds).await;
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        let tasks = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        if !tasks {
            return Ok(CallToolResponse::Complete(run.await));
        }
        // As the fixture's `--ttl-ms 0`: no task expires during a run.
        let options = TaskOptions::new().with_ttl_ms(None);
        let task = self
            .tasks
            .spawn(options, |_| Box::pin(async { Ok(run.await) }));
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_tasks();
        ServerConfig::new(capabilities.build())
    }
}

fn main() -> std::io::Result<()> {
    let args = peers::Args::parse();
    peers::serve(&args, || {
        let peer = Peer::default();
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true);
        let sessions = Arc::new(LocalSessionManager::default());
        let service = StreamableHttpService::new(move || Ok(peer.clone()), sessions, config);
        axum::Router::new().route_service("/mcp", service)
    })
}
