//! The report's open-loop latency section (row 9): per rate, the latency quantiles of the
//! baseline, `tasks/get` and creation, corrected for coordinated omission, with the rate each
//! server kept up and the CPU both sides used.

use std::fmt::Write as _;

use super::Report;
use crate::latency::TARGETS;

impl Report {
    pub(super) fn render_latency(&self, out: &mut String) {
        if self.latency.is_none() && self.latency_skipped.is_none() {
            return;
        }
        let _ = writeln!(out, "\n### Open-loop latency (row 9)\n");
        if let Some(reason) = &self.latency_skipped {
            let _ = writeln!(out, "- skipped: {reason}");
        }
        let Some(r) = &self.latency else { return };
        let _ = writeln!(
            out,
            "- generator: {}, `-q <rate> --latency-correction -c {}`, on the load generator's CPU; one run per rate and server after a warm-up at that rate (`--warmup-ms`, then a `--duration-ms` window); a request's latency counts from when it was due to be sent; no disturbance check (one run each)\n- answered/s: HTTP 200 answers in the window over its length; server CPU: share of one core; µs/request: the server's CPU time (10 ms ticks of `/proc`) over the answers",
            r.oha_version, r.connections
        );
        let _ = writeln!(
            out,
            "\n| rate, requests/s | row | answered/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | server CPU | server CPU µs/request | oha CPU | errors |"
        );
        let _ = writeln!(
            out,
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        let mut saturated = false;
        for runs in &r.runs {
            for (name, run) in TARGETS.iter().zip(runs) {
                let mark = if run.kept_rate() { "" } else { " ‡" };
                saturated |= !run.kept_rate();
                let _ = writeln!(
                    out,
                    "| {} | {name} | {:.0}{mark} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.0} % | {:.1} | {:.0} % | {} |",
                    run.rate,
                    run.achieved(),
                    run.latency_ms(0.5),
                    run.latency_ms(0.9),
                    run.latency_ms(0.99),
                    run.latency_ms(0.999),
                    run.max_ms,
                    run.server_cpu_percent(),
                    run.server_micros_per_request(),
                    run.client_cpu_percent(),
                    run.errors
                );
            }
        }
        if saturated {
            let _ = writeln!(
                out,
                "\n‡ below 95 % of the rate: the server did not keep up, and requests that were due but never sent before the window closed are in no quantile, so the upper quantiles are capped near the window's length"
            );
        }
    }
}
