//! `tasks-fixture`: run the conformance fixture server. See `tasks-fixture --help`.

use std::io::Write as _;

use clap::Parser as _;
use tasks_fixture::Settings;
use tracing_subscriber::filter::{FilterExt as _, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

/// mimalloc rather than glibc's allocator: a task server allocates and frees small objects
/// at a high rate while its stored tasks grow, and glibc spent about 30 % of the fixture's CPU
/// time on task creation in its free-chunk bookkeeping (`unlink_chunk`, `malloc_consolidate`;
/// docs/benchmarks.md, round 2).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let settings = Settings::parse();
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(threads) = settings.worker_threads {
        runtime.worker_threads(usize::from(threads));
    }
    match runtime.build() {
        Ok(runtime) => runtime.block_on(run(settings)),
        Err(error) => {
            eprintln!("cannot start the tokio runtime: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(settings: Settings) -> std::process::ExitCode {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // The PostgreSQL driver logs every statement's parameters at debug level: task arguments,
    // answers and results. Never, whatever RUST_LOG says (span-scoped directives included): a
    // filter of its own, outside the RUST_LOG one. Both are static filters joined into one,
    // so a disabled span or event (the per-request DEBUG span among them) is skipped at its
    // call site instead of being asked about on every request.
    let never_statements = Targets::new()
        .with_default(LevelFilter::TRACE)
        .with_target("tokio_postgres", LevelFilter::INFO);
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let logs = match settings.log_format {
        tasks_fixture::settings::LogFormat::Json => logs.json().boxed(),
        tasks_fixture::settings::LogFormat::Text => logs
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .boxed(),
    };
    tracing_subscriber::registry()
        .with(logs.with_filter(filter.and(never_statements)))
        .init();
    let admin = match settings.admin_credential() {
        Ok(admin) => admin,
        Err(error) => {
            tracing::error!("{error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let builder = match tasks_fixture::open_server(&settings).await {
        Ok(builder) => builder,
        Err(error) => {
            tracing::error!("{error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let listener = match tokio::net::TcpListener::bind(settings.listen).await {
        Ok(listener) => listener,
        Err(error) => {
            if error.kind() == std::io::ErrorKind::AddrInUse {
                tracing::error!(%error, listen = %settings.listen, "cannot bind (try --listen 127.0.0.1:0 for a free port)");
            } else {
                tracing::error!(%error, listen = %settings.listen, "cannot bind");
            }
            return std::process::ExitCode::FAILURE;
        }
    };
    let url = match listener.local_addr() {
        Ok(addr) => format!("http://{addr}{}", tasks_fixture::app::ENDPOINT_PATH),
        Err(error) => {
            tracing::error!(%error, "cannot read the bound address");
            return std::process::ExitCode::FAILURE;
        }
    };
    let (mcp, handle) = match builder.into_service().await {
        Ok(started) => started,
        Err(error) => {
            tracing::error!(%error, "cannot start serving");
            return std::process::ExitCode::FAILURE;
        }
    };
    let _trimmer = tasks_fixture::memory::spawn_trimmer(
        handle.runtime().clone(),
        settings.limits().reap_interval,
    );
    let mut app = tasks_fixture::app::app(mcp, &settings);
    if let Some(credential) = admin {
        app = app.with_admin(handle.runtime().clone(), credential);
        tracing::info!(
            path = tasks_fixture::app::ADMIN_PATH,
            "serving the operator's console"
        );
    }
    let store = settings.store.describe();
    // With PostgreSQL, the schema too (`schema=…`; absent for the other stores).
    let schema = settings.postgres_schema_in_use();
    tracing::info!(%url, %store, schema, "serving MCP 2026-07-28 with the Tasks and Skills extensions, and 2025-11-25 and 2025-06-18 sessions");
    // The one line a harness waits for.
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{url}");
    let _ = stdout.flush();
    drop(stdout);
    let stop = handle.shutdown_token();
    let store_kind = handle.runtime().store_kind();
    tokio::spawn({
        let stop = stop.clone();
        async move {
            tasks_http::shutdown_signal().await;
            tracing::info!("shutting down (a second Ctrl-C or SIGTERM stops at once)");
            stop.cancel();
            tasks_http::shutdown_signal().await;
            tracing::warn!(
                "stopping at once: running tasks are stopped: {}",
                tasks_runtime::unfinished_fate(store_kind)
            );
            std::process::exit(130);
        }
    });
    tasks_http::serve(listener, app, stop).await;
    handle.shutdown().await;
    tracing::info!(%store, "stopped");
    std::process::ExitCode::SUCCESS
}
