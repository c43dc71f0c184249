//! `slow_compute` as a task on tower-mcp: a tool with optional task support on a router with
//! tasks enabled (its in-memory task store answers `tasks/get`), served by its `HttpTransport`.

use std::sync::Arc;
use std::time::Duration;

use clap::Parser as _;
use tower_mcp::async_task::{MemoryTaskStore, MemoryTaskStoreConfig, TaskRetentionLimits};
use tower_mcp::protocol::TaskSupportMode;
use tower_mcp::{CallToolResult, HttpTransport, McpRouter, ToolBuilder};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The arguments of `slow_compute`.
#[derive(serde::Deserialize, tower_mcp::schemars::JsonSchema)]
#[schemars(crate = "tower_mcp::schemars")]
struct SlowCompute {
    /// Seconds to sleep.
    seconds: u64,
}

fn main() -> std::io::Result<()> {
    let args = peers::Args::parse();
    peers::serve(&args, || {
        let tool = ToolBuilder::new("slow_compute")
            .description("Sleeps for `seconds`, then answers \"Completed\".")
            .task_support(TaskSupportMode::Optional)
            .handler(|SlowCompute { seconds }| async move {
                Ok(CallToolResult::text(peers::compute(seconds).await))
            })
            .build();
        // As the fixture's flags: no retention limit refuses a creation (the default keeps
        // 1 024 tasks), and no task expires during a run (a day instead of 5 minutes).
        let config = MemoryTaskStoreConfig::new().default_ttl(Duration::from_secs(86_400));
        let limits = TaskRetentionLimits::unbounded();
        let store = MemoryTaskStore::with_config_and_retention(config, limits);
        let router = McpRouter::new()
            .server_info("peer-tower-mcp", env!("CARGO_PKG_VERSION"))
            .with_tasks()
            .task_store(Arc::new(store))
            .tool(tool);
        HttpTransport::new(router).into_router_at("/mcp")
    })
}
