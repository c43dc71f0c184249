//! `axum-app`: the example application. Prints the MCP endpoint's URL on stdout once it
//! accepts requests; stops on Ctrl-C or SIGTERM.
//!
//! ```text
//! axum-app [--listen 127.0.0.1:8080] [--token TOKEN=USER]...
//! ```

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;

use clap::Parser;
use tasks_example_axum::{app, mcp_server, Auth, MCP_PATH};

/// An axum application with the MCP Tasks endpoint mounted at /api/mcp.
#[derive(Debug, Parser)]
#[command(name = "axum-app")]
struct Args {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Require `Authorization: Bearer TOKEN` on the MCP endpoint, authenticating USER
    /// (repeatable; without it the endpoint is open and every caller shares one scope).
    #[arg(long = "token", value_name = "TOKEN=USER", value_parser = token_user)]
    tokens: Vec<(String, String)>,
}

fn token_user(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((token, user)) if !token.is_empty() && !user.is_empty() => {
            Ok((token.to_owned(), user.to_owned()))
        }
        _ => Err("expected TOKEN=USER".to_owned()),
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let addr = listener.local_addr()?;
    let auth = (!args.tokens.is_empty()).then(|| Auth {
        tokens: args.tokens.into_iter().collect::<HashMap<_, _>>(),
        base_url: format!("http://{addr}"),
        authorization_servers: vec!["https://auth.example.com".to_owned()],
    });
    let (router, handle) = app(mcp_server(), auth).await?;
    let stop = handle.shutdown_token();
    tokio::spawn({
        let stop = stop.clone();
        async move {
            tasks_http::shutdown_signal().await;
            stop.cancel();
        }
    });
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "http://{addr}{MCP_PATH}")?;
    stdout.flush()?;
    drop(stdout);
    // `tasks_http::serve` rather than `axum::serve`: it also times out silent connections and
    // request heads, and bounds the graceful shutdown (a long synchronous call cannot hold
    // it up for more than 5 s).
    tasks_http::serve(listener, router, stop).await;
    handle.shutdown().await;
    Ok(())
}
