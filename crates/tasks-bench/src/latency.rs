//! Row 9: open-loop latency at fixed request rates, driven by oha (see
//! [`crate::oha`]).
//!
//! For each rate of `--latency-rates`, in that order: the baseline, `tasks/get` on a completed
//! task, and creation, each for one run at that rate. The servers are this row's own (a
//! fixture, a baseline serving that fixture's `tasks/get` response, and a second fixture for
//! the creations, which stores every task it creates), started after the throughput rows have
//! stopped theirs. Every request goes over `--connections` keep-alive connections, so a rate
//! above what a server can answer shows as a growing queue in the upper quantiles.

use std::path::Path;

use serde_json::json;

use crate::conn::Endpoint;
use crate::load::LoadSpec;
use crate::mcp::{Call, Expect};
use crate::oha::{Oha, RateRun};
use crate::rounds::{capture, completed_task};
use crate::suite::Servers;

/// The servers of row 9, in the order the report shows them.
pub(crate) const TARGETS: [&str; 3] = [
    "1 baseline: bare hyper, fixed response",
    "2 `tasks/get`, completed task",
    "3 creation: `tools/call` `slow_compute` `seconds: 0`",
];

/// What row 9 measured.
#[derive(Debug)]
pub(crate) struct LatencyResult {
    /// oha's `--version` line.
    pub oha_version: String,
    /// Keep-alive connections oha sent over.
    pub connections: usize,
    /// Per rate, in `--latency-rates` order: one run of each of [`TARGETS`], in that order.
    pub runs: Vec<[RateRun; 3]>,
}

impl LatencyResult {
    /// Failed requests over every run.
    pub(crate) fn errors(&self) -> u64 {
        self.runs.iter().flatten().map(|run| run.errors).sum()
    }

    /// The first failure of any run.
    pub(crate) fn first_error(&self) -> Option<&str> {
        self.runs
            .iter()
            .flatten()
            .find_map(|run| run.first_error.as_deref())
    }
}

/// Runs row 9 with the oha binary `binary` at each of `rates` (requests per second).
pub(crate) async fn run(
    servers: &Servers<'_>,
    binary: &Path,
    oha_version: String,
    rates: &[u32],
    spec: LoadSpec,
) -> Result<LatencyResult, String> {
    let oha = Oha {
        binary,
        spec,
        logs: &servers.logs,
    };
    let fixture = servers.fixture("fixture-latency")?;
    let endpoint = Endpoint::parse(fixture.url())?;
    let get = completed_task(&endpoint).await?;
    let body = capture(&endpoint, &get).await?;
    let baseline = servers.baseline("baseline-latency", &body)?;
    let base = Endpoint::parse(baseline.url())?;
    let creator = servers.fixture("fixture-latency-create")?;
    let create_at = Endpoint::parse(creator.url())?;
    let create = Call::tools_call("slow_compute", json!({"seconds": 0}))?;
    let completed = Expect::Status("completed");
    let mut runs = Vec::with_capacity(rates.len());
    for &rate in rates {
        eprintln!("row 9: {rate} requests/s: baseline, tasks/get, creation");
        let b = oha
            .run(&base, &get, completed, rate, baseline.pid())
            .await?;
        let g = oha
            .run(&endpoint, &get, completed, rate, fixture.pid())
            .await?;
        let c = oha
            .run(&create_at, &create, Expect::Created, rate, creator.pid())
            .await?;
        runs.push([b, g, c]);
    }
    Ok(LatencyResult {
        oha_version,
        connections: spec.connections,
        runs,
    })
}
