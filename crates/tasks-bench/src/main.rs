//! `tasks-bench`: the on-demand loopback benchmark of the MCP Tasks fixture server
//! (docs/benchmarks.md). Not part of the test command; no timed assertion.
//!
//! It keeps what no load generator does: server CPU per request from `/proc`, the disturbance
//! check, ratios to a baseline measured side by side, memory and database size per task, and
//! the rows that follow tasks to their end through `tasks-client`.
//!
//! ## Module layers
//!
//! A module may use only the modules listed below it (checked by `tests/tests/layering.rs`,
//! which fails on any cycle):
//!
//! | module | uses |
//! |---|---|
//! | `suite` (the run) | `throughput`, `memory`, `lifecycle`, `resume`, `takeover`, `report`, `fixtures`, `generator`, `database`, `pin`, `cli` |
//! | `report` (markdown) | `throughput`, `memory`, `lifecycle`, `resume`, `takeover` (their results), `series`, `generator`, `fixtures`, `mcp`, `pin`, `procfs`, `cli` |
//! | `throughput` (rows 1–3, also on the peers, 7a–7c, 8a, 8b, 9) | `fixtures`, `generator`, `series`, `mcp`, `cli` |
//! | `memory` (5a, 5b, 7d, fsync), `lifecycle` (4), `resume` (8c), `takeover` (8d) | `fixtures`, `generator`, `series`, `mcp` |
//! | `fixtures` (server processes, measuring one) | `series`, `generator`, `database`, `procfs`, `pin`, `cli` |
//! | `series` (clean runs, median) | `generator`, `pin` |
//! | `generator` (the request, wrk, oha, CPU clocks) | `database`, `procfs` |
//! | `mcp` (`tasks-client`), `database`, `procfs`, `pin`, `baseline`, `cli` | nothing of this crate |
//!
//! The binary `tasks-heap` (`src/bin/heap.rs`) counts heap bytes per stored task in process.

mod baseline;
mod cli;
mod database;
mod fixtures;
mod generator;
mod lifecycle;
mod mcp;
mod memory;
mod pin;
mod procfs;
mod report;
mod resume;
mod series;
mod suite;
mod takeover;
mod throughput;

use std::process::ExitCode;

use clap::Parser as _;

use crate::cli::{Cli, Command};

/// The fixture's allocator, so the baseline server (`baseline-server`, this binary) runs on
/// the same one.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("some rows had errors: their figures are invalid");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("tasks-bench: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The command; whether every row was free of errors.
fn run() -> Result<bool, String> {
    let args = match Cli::parse().command {
        Command::BaselineServer(args) => {
            let path = &args.body_file;
            let body = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            return baseline::serve(args.listen, args.worker_threads, body.into()).map(|()| true);
        }
        Command::Run(args) => args,
    };
    // Pin before the runtime exists, so every thread it makes inherits the CPU set.
    let pinning = match args.no_pin {
        true => pin::Pinning::default(),
        false => pin::Pinning::apply(&args.server_cpus, &args.client_cpus),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let runtime = runtime.map_err(|e| format!("cannot start the runtime: {e}"))?;
    let (text, valid) = runtime.block_on(suite::run(&args, &pinning))?.render();
    println!("{text}");
    if let Some(path) = &args.output {
        std::fs::write(path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(valid)
}
