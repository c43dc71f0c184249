//! Throughput rows driven by wrk: the closed-loop load generator from Debian's `wrk` package,
//! one thread on the client CPU. It replaced the harness's own generator, which saturated
//! before the baseline did (docs/benchmarks.md, round 2).
//!
//! wrk reads no bodies, so correctness is checked apart from it: one response of the run's
//! call checked in full before wrk starts, wrk's own count of non-2xx
//! statuses and socket errors, and for a fixture its `mcp_requests_total{method,code}`
//! counters, read before and after the run: every request of the run must be counted `ok`.
//!
//! A run: a warm-up run of wrk (not counted), then the measured run, with the CPU clocks read
//! just before wrk starts and just after it ends; wrk's own CPU time is sampled every 20 ms
//! while it runs (the last sample counts), so the report can show that the generator had CPU
//! to spare (it must stay below its core for the ratios to mean anything).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::conn::Endpoint;
use crate::counted::Counts;
use crate::load::{CpuReading, LoadResult, LoadSpec, Watch};
use crate::mcp::{self, Call, Expect};
use crate::procfs;

/// The wrk binary (Debian's package puts it on the PATH).
const WRK: &str = "wrk";

/// Whether wrk can be run.
pub(crate) fn available() -> bool {
    Command::new(WRK)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// What wrk printed through the script's `done` hook.
#[derive(Debug, Default, PartialEq)]
struct Printed {
    quantiles: Vec<(f64, f64)>,
    requests: u64,
    errors: u64,
}

fn parse(stdout: &str) -> Result<Printed, String> {
    let mut printed = Printed::default();
    for line in stdout.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["quantile", q, micros] => printed.quantiles.push((
                q.parse::<f64>()
                    .map_err(|e| format!("wrk quantile {q}: {e}"))?
                    / 100.0,
                micros
                    .parse()
                    .map_err(|e| format!("wrk latency {micros}: {e}"))?,
            )),
            ["requests", n] => printed.requests = n.parse().map_err(|e| format!("wrk: {e}"))?,
            ["errors", n] => printed.errors = n.parse().map_err(|e| format!("wrk: {e}"))?,
            _ => {}
        }
    }
    if printed.quantiles.is_empty() {
        return Err(format!("wrk printed no summary:\n{stdout}"));
    }
    Ok(printed)
}

/// One wrk run of `duration` against `url`; its summary and its own CPU time.
async fn wrk(
    url: &str,
    script: &Path,
    connections: usize,
    duration: Duration,
) -> Result<(Printed, Duration), String> {
    let seconds = duration.as_secs_f64().ceil().max(1.0);
    let mut command = tokio::process::Command::new(WRK);
    command
        .args(["-t1", "-c"])
        .arg(connections.to_string())
        .arg("-d")
        .arg(format!("{seconds}s"))
        .arg("-s")
        .arg(script)
        .arg(url);
    let deadline = duration + crate::oha::GRACE;
    let (output, cpu) = procfs::run_timing_cpu(command, WRK, deadline).await?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    Ok((parse(&stdout)?, cpu))
}

/// Sends `call` to `endpoint` with wrk under `spec`: first one response checked in full
/// against `expect`, then the runs, checking the server's request counters when it has them;
/// reads the CPU clocks of what `watch` names. The script goes to `logs`.
pub(crate) async fn run(
    endpoint: &Endpoint,
    call: &Call,
    expect: Expect,
    spec: LoadSpec,
    watch: Watch<'_>,
    logs: &Path,
) -> Result<LoadResult, String> {
    mcp::checked(endpoint, call, expect).await?;
    let url = format!("http://{}{}", endpoint.addr, endpoint.path);
    let script = logs.join(format!("wrk-{}.lua", call.method().replace('/', "-")));
    std::fs::write(&script, call.wrk_script()).map_err(|e| format!("{}: {e}", script.display()))?;
    if !spec.warmup.is_zero() {
        wrk(&url, &script, spec.connections, spec.warmup).await?;
    }
    let counted_before = Counts::read(endpoint, call.method()).await?;
    let sessions = match watch.database {
        Some((database, name)) => Some(database.sessions(name).await?),
        None => None,
    };
    let before = CpuReading::take(watch.server_pid, sessions.as_deref())?;
    let started = tokio::time::Instant::now();
    let (printed, wrk_cpu) = wrk(&url, &script, spec.connections, spec.duration).await?;
    let window = started.elapsed();
    let after = CpuReading::take(watch.server_pid, sessions.as_deref())?;
    let mut errors = printed.errors;
    let mut first_error = (errors > 0).then(|| format!("wrk counted {errors} failed requests"));
    if let Some(before) = counted_before {
        let after = Counts::read(endpoint, call.method())
            .await?
            .unwrap_or(before);
        // wrk's count includes requests cut off when the run ends.
        let cut_off = u64::try_from(spec.connections).unwrap_or(u64::MAX);
        if let Some((failed, message)) = before.failures_until(after, printed.requests, cut_off) {
            // The same failed requests may be in both counts.
            errors = errors.max(failed);
            first_error.get_or_insert(message);
        }
    }
    Ok(LoadResult {
        requests: printed.requests,
        errors,
        first_error,
        window,
        latency_quantiles: printed.quantiles,
        server_cpu: after.server.saturating_sub(before.server),
        client_cpu: wrk_cpu,
        writer_cpu: after.writer_since(&before),
        database_cpu: after.database_since(&before),
        cores: after.cores_since(&before),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_done_hook_output_is_read() {
        let stdout = "Running 5s test @ http://127.0.0.1:1/mcp\n  1 threads and 64 connections\n\
                      quantile 50 263\nquantile 90 410\nquantile 99 980\nquantile 99.9 2100\n\
                      requests 700000\nerrors 3\n";
        assert_eq!(
            parse(stdout),
            Ok(Printed {
                quantiles: vec![
                    (0.5, 263.0),
                    (0.9, 410.0),
                    (0.99, 980.0),
                    (99.9 / 100.0, 2100.0)
                ],
                requests: 700_000,
                errors: 3,
            })
        );
        assert!(parse("no summary").is_err());
    }
}
