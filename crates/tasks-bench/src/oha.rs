//! Open-loop runs driven by oha: requests sent at a fixed rate whatever the server's
//! answers do, with oha's latency correction, so a request's latency counts from when it was
//! due to be sent, not from when a free connection got round to it. A closed-loop generator
//! (wrk) waits for each answer before the next request on that connection, so a stall delays
//! the requests behind it without their latency showing (coordinated omission); an open loop
//! shows it in the upper quantiles.
//!
//! oha (`cargo install oha --locked --version 1.16.0`) reads status codes but not JSON-RPC
//! errors, so correctness is checked as for wrk: one response checked in full first, oha's
//! non-200 answers and transport errors (except the requests its deadline cut off) counted as
//! errors, and the fixture's `mcp_requests_total` counters read before and after.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::Deserialize;

use crate::conn::Endpoint;
use crate::counted::Counts;
use crate::load::LoadSpec;
use crate::mcp::{self, Call, Expect};
use crate::procfs;

/// The oha release the method was written against (its JSON summary's field names).
pub(crate) const VERSION: &str = "1.16.0";

/// The quantiles the report shows, with oha's names for them.
const QUANTILES: [(f64, &str); 4] = [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99.9")];

/// oha's name for the requests still in flight when its `-z` deadline ends a run.
const DEADLINE: &str = "aborted due to deadline";

/// Whether `oha` runs, and which version it is (its `--version` line, which must name oha).
pub(crate) fn version(oha: &Path) -> Option<String> {
    let output = Command::new(oha)
        .arg("--version")
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let line = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && line.starts_with("oha ")).then_some(line)
}

/// One open-loop run at a fixed rate.
#[derive(Debug)]
pub(crate) struct RateRun {
    /// The rate oha was asked to send at, requests per second.
    pub rate: u32,
    /// Answers with HTTP 200 inside the window.
    pub answered: u64,
    /// The run's length as oha measured it.
    pub window: Duration,
    /// Latency quantiles `(q, ms)`, corrected for coordinated omission.
    pub quantiles: Vec<(f64, f64)>,
    /// The slowest request, in milliseconds.
    pub max_ms: f64,
    /// Failed requests (a run with errors is invalid).
    pub errors: u64,
    /// The first failure, for the report.
    pub first_error: Option<String>,
    /// CPU time the server used during the run.
    pub server_cpu: Duration,
    /// CPU time oha used during the run.
    pub client_cpu: Duration,
}

impl RateRun {
    /// Answers per second.
    pub(crate) fn achieved(&self) -> f64 {
        self.answered as f64 / self.window.as_secs_f64().max(1e-9)
    }

    /// Whether the server kept up with the rate (answered at least 95 % of it). When it did
    /// not, requests due but never sent before the window closed are in no quantile, so the
    /// upper quantiles are capped near the window's length.
    pub(crate) fn kept_rate(&self) -> bool {
        self.achieved() >= 0.95 * f64::from(self.rate)
    }

    /// Latency quantile `q` in milliseconds (one of [`QUANTILES`]).
    pub(crate) fn latency_ms(&self, q: f64) -> f64 {
        self.quantiles
            .iter()
            .find(|(at, _)| (at - q).abs() < 1e-9)
            .map_or(f64::NAN, |(_, ms)| *ms)
    }

    /// Share of one core the server used, in percent.
    pub(crate) fn server_cpu_percent(&self) -> f64 {
        100.0 * self.server_cpu.as_secs_f64() / self.window.as_secs_f64().max(1e-9)
    }

    /// Server CPU time per answered request, in microseconds.
    pub(crate) fn server_micros_per_request(&self) -> f64 {
        self.server_cpu.as_secs_f64() * 1e6 / self.answered.max(1) as f64
    }

    /// Share of one core oha used, in percent.
    pub(crate) fn client_cpu_percent(&self) -> f64 {
        100.0 * self.client_cpu.as_secs_f64() / self.window.as_secs_f64().max(1e-9)
    }
}

/// The parts of oha's `--output-format json` summary the report uses (times in seconds).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    summary: Totals,
    /// `null` values when nothing was answered.
    latency_percentiles: BTreeMap<String, Option<f64>>,
    status_code_distribution: BTreeMap<String, u64>,
    error_distribution: BTreeMap<String, u64>,
}

#[derive(Debug, Deserialize)]
struct Totals {
    total: f64,
    slowest: Option<f64>,
}

/// What a run's summary says: (answered with 200, failed, first failure).
fn outcome(summary: &Summary) -> (u64, u64, Option<String>) {
    let mut answered = 0;
    let mut failed = 0;
    let mut first = None;
    for (status, &count) in &summary.status_code_distribution {
        if status == "200" {
            answered += count;
        } else {
            failed += count;
            first.get_or_insert(format!("oha got HTTP {status} {count} times"));
        }
    }
    for (error, &count) in &summary.error_distribution {
        if error != DEADLINE {
            failed += count;
            first.get_or_insert(format!("oha: {error} ({count} times)"));
        }
    }
    (answered, failed, first)
}

/// Why a summary cannot be a real run's, if it cannot: nothing answered, a quantile the report
/// shows missing, or no window.
fn implausible(summary: &Summary, answered: u64, quantiles: &[(f64, f64)]) -> Option<String> {
    if answered == 0 {
        Some("oha counted no answer with HTTP 200".into())
    } else if let Some((q, _)) = quantiles.iter().find(|(_, ms)| !ms.is_finite()) {
        Some(format!("oha's summary has no {} quantile", q * 100.0))
    } else if summary.summary.total <= 0.0 || !summary.summary.total.is_finite() {
        Some(format!(
            "oha's summary gives a window of {} s",
            summary.summary.total
        ))
    } else {
        None
    }
}

/// oha's arguments for `call` to `url` at `rate` for `duration`, the body read from
/// `body_file`.
fn arguments(
    call: &Call,
    url: &str,
    body_file: &Path,
    rate: u32,
    spec: LoadSpec,
    duration: Duration,
) -> Vec<String> {
    let seconds = duration.as_secs_f64().ceil().max(1.0);
    let mut args: Vec<String> = [
        "--no-tui",
        "--output-format",
        "json",
        "--latency-correction",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.extend([
        "-q".into(),
        rate.to_string(),
        "-z".into(),
        format!("{seconds}s"),
        "-c".into(),
        spec.connections.to_string(),
        "-m".into(),
        "POST".into(),
        "-D".into(),
        body_file.display().to_string(),
    ]);
    for (name, value) in call.headers() {
        args.push("-H".into());
        args.push(format!("{name}: {value}"));
    }
    args.push(url.to_owned());
    args
}

/// Time an oha or wrk run may take beyond its window before it is killed.
pub(crate) const GRACE: Duration = Duration::from_secs(60);

/// One oha run of `window`; its summary and its own CPU time (sampled every 20 ms while it
/// runs).
async fn oha(oha: &Path, args: &[String], window: Duration) -> Result<(Summary, Duration), String> {
    let mut command = tokio::process::Command::new(oha);
    command.args(args);
    let name = oha.display().to_string();
    let (output, cpu) = procfs::run_timing_cpu(command, &name, window + GRACE).await?;
    if !output.status.success() {
        return Err(format!(
            "oha failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let summary = serde_json::from_slice(&output.stdout).map_err(|e| {
        format!(
            "oha's summary: {e}: {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })?;
    Ok((summary, cpu))
}

/// How row 9 runs oha.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Oha<'a> {
    /// The oha binary.
    pub binary: &'a Path,
    /// Connections, warm-up and window of each run.
    pub spec: LoadSpec,
    /// Where the request body files go.
    pub logs: &'a Path,
}

impl Oha<'_> {
    /// Sends `call` to `endpoint` at `rate` requests per second: one response checked in full
    /// first, a warm-up run at the same rate (not counted), then the measured run, with the
    /// server's CPU time (process `server_pid`) and its request counters read around it.
    pub(crate) async fn run(
        &self,
        endpoint: &Endpoint,
        call: &Call,
        expect: Expect,
        rate: u32,
        server_pid: u32,
    ) -> Result<RateRun, String> {
        let Oha { binary, spec, logs } = *self;
        mcp::checked(endpoint, call, expect).await?;
        let url = format!("http://{}{}", endpoint.addr, endpoint.path);
        let body_file = logs.join(format!("oha-{}.json", call.method().replace('/', "-")));
        std::fs::write(&body_file, call.body())
            .map_err(|e| format!("{}: {e}", body_file.display()))?;
        if !spec.warmup.is_zero() {
            let args = arguments(call, &url, &body_file, rate, spec, spec.warmup);
            oha(binary, &args, spec.warmup).await?;
        }
        let counted_before = Counts::read(endpoint, call.method()).await?;
        let before = procfs::cpu_time(server_pid).map_err(|e| format!("server CPU time: {e}"))?;
        let args = arguments(call, &url, &body_file, rate, spec, spec.duration);
        let (summary, client_cpu) = oha(binary, &args, spec.duration).await?;
        let after = procfs::cpu_time(server_pid).map_err(|e| format!("server CPU time: {e}"))?;
        let (answered, mut errors, mut first_error) = outcome(&summary);
        if let Some(before) = counted_before {
            let now = Counts::read(endpoint, call.method())
                .await?
                .unwrap_or(before);
            // The requests oha's deadline cut off may have been answered after it stopped counting.
            let cut_off = u64::try_from(spec.connections).unwrap_or(u64::MAX);
            if let Some((failed, message)) = before.failures_until(now, answered, cut_off) {
                // The same failed requests may be in both counts.
                errors = errors.max(failed);
                first_error.get_or_insert(message);
            }
        }
        let quantiles: Vec<(f64, f64)> = QUANTILES
            .iter()
            .map(|&(q, name)| {
                let seconds = summary.latency_percentiles.get(name).copied().flatten();
                (q, seconds.map_or(f64::NAN, |s| s * 1000.0))
            })
            .collect();
        if let Some(why) = implausible(&summary, answered, &quantiles) {
            errors = errors.max(1);
            first_error.get_or_insert(why);
        }
        Ok(RateRun {
            rate,
            answered,
            window: Duration::from_secs_f64(summary.summary.total.max(0.0)),
            quantiles,
            max_ms: summary.summary.slowest.map_or(f64::NAN, |s| s * 1000.0),
            errors,
            first_error,
            server_cpu: after.saturating_sub(before),
            client_cpu,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape oha 1.16.0 prints with `--output-format json` (fields the report does not
    /// read left out).
    const PRINTED: &str = r#"{
        "summary": {"successRate": 1.0, "total": 5.0012, "slowest": 0.0183, "fastest": 0.0001,
                    "average": 0.0004, "requestsPerSec": 19990.1},
        "latencyPercentiles": {"p10": 0.0002, "p50": 0.00041, "p90": 0.0007, "p99": 0.0021,
                               "p99.9": 0.0093, "p99.99": 0.015},
        "statusCodeDistribution": {"200": 99950, "503": 2},
        "errorDistribution": {"aborted due to deadline": 12, "connection closed": 1}
    }"#;

    #[test]
    fn the_json_summary_is_read() {
        let summary: Summary = serde_json::from_str(PRINTED).unwrap();
        let (answered, failed, first) = outcome(&summary);
        assert_eq!(answered, 99_950);
        // Two 503s and one closed connection; the deadline's cut-offs are not failures.
        assert_eq!(failed, 3);
        assert_eq!(first.as_deref(), Some("oha got HTTP 503 2 times"));
        assert_eq!(summary.latency_percentiles["p99.9"], Some(0.0093));
        let quantiles = [(0.5, 0.41), (0.9, 0.7), (0.99, 2.1), (0.999, 9.3)];
        assert_eq!(implausible(&summary, answered, &quantiles), None);
        assert!((summary.summary.total - 5.0012).abs() < 1e-9);
    }

    #[test]
    fn a_rate_the_server_did_not_keep_is_marked() {
        let run = |answered| RateRun {
            rate: 1_000,
            answered,
            window: Duration::from_secs(2),
            quantiles: Vec::new(),
            max_ms: 1.0,
            errors: 0,
            first_error: None,
            server_cpu: Duration::ZERO,
            client_cpu: Duration::ZERO,
        };
        assert!(run(1_990).kept_rate());
        assert!(run(1_900).kept_rate());
        assert!(!run(1_899).kept_rate());
    }

    #[test]
    fn a_summary_of_nothing_is_an_error() {
        // What oha prints when no request was answered (and shapes that are not a real run).
        let empty: Summary = serde_json::from_str(
            r#"{"summary": {"total": 1.0, "slowest": null},
                "latencyPercentiles": {"p50": null, "p99": null},
                "statusCodeDistribution": {}, "errorDistribution": {}}"#,
        )
        .unwrap();
        let (answered, failed, _) = outcome(&empty);
        assert_eq!((answered, failed), (0, 0));
        let missing = [(0.5, f64::NAN)];
        assert!(implausible(&empty, answered, &missing)
            .unwrap()
            .contains("no answer"));
        assert!(implausible(&empty, 10, &missing).unwrap().contains("50"));
        let mut no_window = empty;
        no_window.summary.total = -5.0;
        assert!(implausible(&no_window, 10, &[(0.5, 1.0)])
            .unwrap()
            .contains("-5"));
    }

    #[test]
    fn the_arguments_fix_the_rate_and_correct_latency() {
        let call = Call::tasks_get("abc").unwrap();
        let spec = LoadSpec {
            connections: 64,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(4500),
        };
        let args = arguments(
            &call,
            "http://127.0.0.1:1/mcp",
            Path::new("b.json"),
            20_000,
            spec,
            spec.duration,
        );
        let joined = args.join(" ");
        for part in [
            "--latency-correction",
            "-q 20000",
            "-z 5s",
            "-c 64",
            "-m POST",
            "-D b.json",
            "-H Mcp-Method: tasks/get",
            "-H Mcp-Name: abc",
            "--output-format json",
        ] {
            assert!(joined.contains(part), "{part} missing from {joined}");
        }
        assert_eq!(
            args.last().map(String::as_str),
            Some("http://127.0.0.1:1/mcp")
        );
    }
}
