//! What both peer servers share: their command line (the flags `tasks-bench` gives every
//! server it starts), the runtime, and the loop that serves an axum router on it.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;

/// The flags `tasks-bench` passes to every server it starts.
#[derive(Debug, Parser)]
pub struct Args {
    /// Where to listen; port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Tokio worker threads (tokio's default when absent).
    #[arg(long)]
    pub worker_threads: Option<usize>,
}

/// How long `slow_compute` sleeps for its `seconds` argument (no sleep at all for 0, as
/// the fixture's tool does).
pub async fn compute(seconds: u64) -> &'static str {
    if seconds > 0 {
        tokio::time::sleep(Duration::from_secs(seconds)).await;
    }
    "Completed"
}

/// Serves `router` (which mounts the MCP endpoint at `/mcp`) on a multi-threaded tokio
/// runtime with `TCP_NODELAY`, after printing `http://<addr>/mcp` as the first stdout line.
pub fn serve(args: &Args, router: impl FnOnce() -> axum::Router) -> std::io::Result<()> {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(threads) = args.worker_threads {
        runtime.worker_threads(threads);
    }
    runtime.enable_all().build()?.block_on(async {
        use axum::serve::ListenerExt as _;
        let listener = tokio::net::TcpListener::bind(args.listen).await?;
        println!("http://{}/mcp", listener.local_addr()?);
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, router()).await
    })
}
