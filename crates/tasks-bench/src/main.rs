//! `tasks-bench`: the on-demand loopback benchmark of the MCP Tasks fixture server
//! (docs/benchmarks.md).
//!
//! `tasks-bench run` starts a bare hyper baseline and the real `tasks-fixture` binary as child
//! processes pinned to one CPU, drives the throughput rows with wrk and the open-loop latency
//! row with oha on the other (and the lifecycle, memory and parked rows with its own
//! connections, since no load generator follows tasks to their end), and prints a markdown
//! report. Not part of the test command; no timed assertion. See docs/benchmarks.md.

mod baseline;
mod cli;
mod cluster;
mod conn;
mod counted;
mod database;
mod durable;
mod fsync;
mod latency;
mod lifecycle;
mod listen;
mod load;
mod mcp;
mod memory;
mod oha;
mod pin;
mod pool;
mod procfs;
mod report;
mod resume;
mod rounds;
mod series;
mod server;
mod settle;
mod suite;
mod takeover;
mod wrk;

use std::process::ExitCode;

use clap::Parser as _;

use crate::cli::{Cli, Command};

/// The fixture's allocator, so the baseline server (`baseline-server`, this binary) runs on
/// the same one.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::BaselineServer(args) => match std::fs::read(&args.body_file) {
            Ok(body) => baseline::serve(args.listen, args.worker_threads, body.into()),
            Err(error) => {
                eprintln!("{}: {error}", args.body_file.display());
                ExitCode::FAILURE
            }
        },
        Command::Run(args) => {
            // Pin before the runtime exists, so every thread it makes inherits the CPU set.
            let pinning = if args.no_pin {
                pin::Pinning::default()
            } else {
                pin::Pinning::apply(&args.server_cpus, &args.client_cpus)
            };
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(error) => {
                    eprintln!("cannot start the runtime: {error}");
                    return ExitCode::FAILURE;
                }
            };
            match runtime.block_on(suite::run(&args, &pinning)) {
                Ok(report) => {
                    let text = report.render();
                    println!("{text}");
                    if let Some(path) = &args.output {
                        if let Err(error) = std::fs::write(path, &text) {
                            eprintln!("{}: {error}", path.display());
                            return ExitCode::FAILURE;
                        }
                    }
                    if report.valid() {
                        ExitCode::SUCCESS
                    } else {
                        eprintln!("some rows had errors: their figures are invalid");
                        ExitCode::FAILURE
                    }
                }
                Err(error) => {
                    eprintln!("tasks-bench: {error}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
