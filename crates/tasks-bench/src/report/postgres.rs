//! The report's PostgreSQL section (rows 8a–8d): throughput and latency next to the memory
//! store's rows 2 and 3, with the database sessions' CPU time; cross-node resume latency;
//! takeover time against the lease; the targets. When the database was unreachable, the reason
//! the rows were skipped.

use std::fmt::Write as _;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::Report;
use crate::resume::ResumeLevel;
use crate::series::Series;
use crate::takeover::{quantile, Offsets};

/// `tasks/get` target on PostgreSQL, and its stretch, requests per second.
const GET_TARGET: (f64, f64) = (10_000.0, 15_000.0);
/// Creation target on PostgreSQL, and its stretch, tasks per second.
const CREATE_TARGET: (f64, f64) = (3_000.0, 5_000.0);
/// Largest p99 of update-to-resume latency across nodes, milliseconds.
const RESUME_P99_MS: f64 = 50.0;
/// Largest takeover time beyond the lease.
const TAKEOVER_MARGIN: Duration = Duration::from_secs(2);

fn ms(histogram: &Histogram<u64>, q: f64) -> f64 {
    histogram.value_at_quantile(q) as f64 / 1000.0
}

fn secs(duration: Option<Duration>) -> String {
    duration.map_or("—".to_owned(), |d| format!("{:.2}", d.as_secs_f64()))
}

fn percent(value: Option<f64>) -> String {
    value.map_or("—".to_owned(), |x| format!("{x:.0} %"))
}

impl Report {
    pub(super) fn render_postgres(&self, out: &mut String) {
        if let Some(reason) = &self.postgres_skipped {
            let _ = writeln!(out, "\n### PostgreSQL store (rows 8a–8d)\n");
            let _ = writeln!(out, "- skipped: {reason}");
            return;
        }
        let ran = self.get_postgres.len() + self.create_postgres.len() > 0
            || self.resume.is_some()
            || self.takeover.is_some();
        if !ran {
            return;
        }
        let _ = writeln!(out, "\n### PostgreSQL store (rows 8a–8d)\n");
        if let (Some(url), Some(version)) = (&self.postgres_url, &self.postgres_version) {
            let _ = writeln!(
                out,
                "- database: {url}, PostgreSQL {version}, not pinned (its processes run on either CPU); each row on a fresh schema, dropped afterwards"
            );
        }
        let _ = writeln!(
            out,
            "- database CPU: the CPU time of the fixture's own sessions (pool, listener, notifier; found by `application_name` in `pg_stat_activity`); it is not counted as foreign when judging a run disturbed, the walwriter and checkpointer are"
        );
        self.render_postgres_throughput(out);
        self.render_resume(out);
        self.render_takeover(out);
        self.render_postgres_targets(out);
    }

    fn render_postgres_throughput(&self, out: &mut String) {
        let rows: Vec<(&str, &Series, &Series)> = vec![
            ("2 `tasks/get`, memory store", &self.get, &self.get),
            ("8a `tasks/get`, PostgreSQL", &self.get_postgres, &self.get),
            ("3 creation, memory store", &self.create, &self.create),
            (
                "8b creation, PostgreSQL",
                &self.create_postgres,
                &self.create,
            ),
        ];
        let rows: Vec<_> = rows.into_iter().filter(|(_, s, _)| s.len() > 0).collect();
        if rows.iter().all(|(name, _, _)| !name.starts_with('8')) {
            return;
        }
        let _ = writeln!(
            out,
            "\n| row | requests/s | range | clean runs | p50 ms | p90 ms | p99 ms | p99.9 ms | vs memory (row 2 / row 3) | server CPU µs/request | database CPU µs/request | server process CPU | database sessions CPU | server core busy | generator core busy | errors |"
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        let pinning = &self.setup.pinning;
        for (name, series, reference) in rows {
            let Some(r) = series.median() else { continue };
            let (low, high) = series.rps_range();
            let vs_memory =
                Self::ratio_to(series, reference).map_or("—".to_owned(), |x| format!("{x:.2}"));
            let database = r
                .database_micros_per_request()
                .map_or("—".to_owned(), |x| format!("{x:.1}"));
            let _ = writeln!(
                out,
                "| {name} | {:.0} | {low:.0}–{high:.0} | {}/{} | {:.3} | {:.3} | {:.3} | {:.3} | {vs_memory} | {:.1} | {database} | {:.0} % | {} | {} | {} | {} |",
                r.rps(),
                series.clean(),
                series.len(),
                r.latency_ms(0.5),
                r.latency_ms(0.9),
                r.latency_ms(0.99),
                r.latency_ms(0.999),
                r.server_micros_per_request(),
                r.server_cpu_percent(),
                percent(r.database_cpu_percent()),
                self.setup.busy(&r.cores, pinning.server_cpus(), r.window),
                self.setup.busy(&r.cores, pinning.client_cpus(), r.window),
                series.errors()
            );
        }
    }

    fn render_resume(&self, out: &mut String) {
        let Some(resume) = &self.resume else { return };
        let _ = writeln!(
            out,
            "\n8c: `confirm_delete` created on node A and parked (not measured), then answered with `tasks/update` on node B, so many at once; latency from sending the update to the terminal `notifications/tasks` on a `subscriptions/listen` stream opened beforehand on A (which runs the task) and on B (one more hint)\n"
        );
        let _ = writeln!(
            out,
            "| tasks at once | tasks | update acknowledged p50 / p99 ms | completed, seen on A: p50 / p90 / p99 / max ms | completed, seen on B: p50 / p90 / p99 / max ms | answers/s | errors |"
        );
        let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|");
        for level in &resume.levels {
            let spread = |h: &Histogram<u64>| {
                format!(
                    "{:.1} / {:.1} / {:.1} / {:.1}",
                    ms(h, 0.5),
                    ms(h, 0.9),
                    ms(h, 0.99),
                    h.max() as f64 / 1000.0
                )
            };
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} / {:.1} | {} | {} | {:.0} | {} |",
                level.concurrency,
                level.tasks,
                ms(&level.acknowledged, 0.5),
                ms(&level.acknowledged, 0.99),
                spread(&level.on_runner),
                spread(&level.on_answerer),
                level.tasks as f64 / level.total.as_secs_f64(),
                level.errors
            );
        }
    }

    fn render_takeover(&self, out: &mut String) {
        let Some(t) = &self.takeover else { return };
        let _ = writeln!(
            out,
            "\n8d: two nodes with `--lease-ms {}`; `resumable_job` (`steps: {}`, `stepMs: {}`) tasks started on A; A killed with SIGKILL once B's listen stream showed them all running; time from the kill to each task's first `(attempt 2)` status on B's stream. Each kill starts B and kills A at its own offsets (shares of a tick, a third of the lease, at most 2 s) to spread the kills over A's renewal cycle and B's checks; the worst case is the lease plus one tick\n",
            t.lease.as_millis(),
            t.steps.0,
            t.steps.1
        );
        let _ = writeln!(
            out,
            "| kill | B started after A s | kill after tasks seen s | tasks | re-run on B | min s | p50 s | max s | lease s | max − lease s | errors |"
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        let lease = t.lease.as_secs_f64();
        let line = |out: &mut String,
                    name: &str,
                    offsets: Option<Offsets>,
                    tasks: usize,
                    sorted: &[Duration],
                    errors| {
            let beyond = quantile(sorted, 1.0).map_or("—".to_owned(), |max| {
                format!("{:+.2}", max.as_secs_f64() - lease)
            });
            let (start_b, kill) = offsets.map_or(("—".to_owned(), "—".to_owned()), |o| {
                (secs(Some(o.start_b)), secs(Some(o.kill)))
            });
            let _ = writeln!(
                out,
                "| {name} | {start_b} | {kill} | {tasks} | {} | {} | {} | {} | {lease:.2} | {beyond} | {errors} |",
                sorted.len(),
                secs(quantile(sorted, 0.0)),
                secs(quantile(sorted, 0.5)),
                secs(quantile(sorted, 1.0)),
            );
        };
        for (i, round) in t.rounds.iter().enumerate() {
            line(
                out,
                &(i + 1).to_string(),
                Some(round.offsets),
                round.tasks,
                &round.taken_over,
                round.errors,
            );
        }
        let tasks = t.rounds.iter().map(|round| round.tasks).sum();
        line(out, "all", None, tasks, &t.all(), t.errors());
    }

    fn render_postgres_targets(&self, out: &mut String) {
        let mut targets: Vec<(String, String, bool)> = Vec::new();
        let throughput = [
            ("`tasks/get`", &self.get_postgres, GET_TARGET, "requests/s"),
            ("creation", &self.create_postgres, CREATE_TARGET, "tasks/s"),
        ];
        for (what, series, (target, stretch), unit) in throughput {
            let Some(r) = series.median() else { continue };
            let clean = series.errors() == 0;
            targets.push((
                format!("{what} on PostgreSQL ≥ {target:.0} {unit}"),
                format!("{:.0} {unit}", r.rps()),
                clean && r.rps() >= target,
            ));
            targets.push((
                format!("{what} on PostgreSQL ≥ {stretch:.0} {unit} (stretch)"),
                format!("{:.0} {unit}", r.rps()),
                clean && r.rps() >= stretch,
            ));
        }
        if let Some(resume) = &self.resume {
            for level in &resume.levels {
                let p99 = ms(&level.on_runner, 0.99);
                targets.push((
                    format!(
                        "cross-node update-to-resume p99 < {RESUME_P99_MS:.0} ms, {} at once",
                        level.concurrency
                    ),
                    format!("{p99:.1} ms"),
                    level.errors == 0 && p99 < RESUME_P99_MS,
                ));
            }
        }
        if let Some(t) = &self.takeover {
            if let Some(max) = quantile(&t.all(), 1.0) {
                targets.push((
                    format!(
                        "takeover ≤ lease + {} s ({:.1} s)",
                        TAKEOVER_MARGIN.as_secs(),
                        (t.lease + TAKEOVER_MARGIN).as_secs_f64()
                    ),
                    format!("{:.2} s at most", max.as_secs_f64()),
                    t.errors() == 0 && max <= t.lease + TAKEOVER_MARGIN,
                ));
            }
        }
        if targets.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n| PostgreSQL target | reached | met |");
        let _ = writeln!(out, "|---|---:|---|");
        for (target, reached, met) in targets {
            let met = if met { "yes" } else { "**no**" };
            let _ = writeln!(out, "| {target} | {reached} | {met} |");
        }
    }

    /// The first failure of each PostgreSQL row.
    pub(super) fn postgres_errors(&self) -> Vec<(&'static str, Option<&str>)> {
        let mut all = vec![
            ("tasks/get, PostgreSQL", self.get_postgres.first_error()),
            ("creation, PostgreSQL", self.create_postgres.first_error()),
        ];
        if let Some(resume) = &self.resume {
            let first = resume
                .levels
                .iter()
                .find_map(|level: &ResumeLevel| level.first_error.as_deref());
            all.push(("resume, PostgreSQL", first));
        }
        if let Some(t) = &self.takeover {
            let first = t.rounds.iter().find_map(|r| r.first_error.as_deref());
            all.push(("takeover, PostgreSQL", first));
        }
        all
    }

    /// Whether no PostgreSQL row had errors.
    pub(super) fn postgres_valid(&self) -> bool {
        self.get_postgres.errors() + self.create_postgres.errors() == 0
            && self
                .resume
                .as_ref()
                .is_none_or(|r| r.levels.iter().all(|level| level.errors == 0))
            && self.takeover.as_ref().is_none_or(|t| t.errors() == 0)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::cli::{Cli, Command};
    use crate::pin::Pinning;
    use crate::report::Setup;
    use crate::resume::ResumeResult;
    use crate::takeover::{TakeoverResult, TakeoverRound};

    fn report() -> Report {
        let Command::Run(args) = Cli::parse_from(["tasks-bench", "run"]).command else {
            panic!("run");
        };
        let spec = crate::load::LoadSpec {
            connections: 1,
            warmup: Duration::ZERO,
            duration: Duration::from_secs(1),
        };
        Report::new(Setup::describe(&args, &Pinning::default(), spec))
    }

    #[test]
    fn skipped_rows_say_why() {
        let mut report = report();
        report.postgres_skipped = Some("no PostgreSQL at postgres://x@h:1/db (refused)".into());
        let text = report.render();
        assert!(text.contains("### PostgreSQL store (rows 8a–8d)"));
        assert!(text.contains("- skipped: no PostgreSQL at postgres://x@h:1/db (refused)"));
        assert!(report.valid());
    }

    #[test]
    fn resume_and_takeover_tables_and_targets() {
        let mut report = report();
        let histogram = |ms: &[u64]| {
            let mut h = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
            for v in ms {
                h.record(v * 1000).unwrap();
            }
            h
        };
        report.resume = Some(ResumeResult {
            levels: vec![ResumeLevel {
                concurrency: 4,
                tasks: 3,
                errors: 0,
                first_error: None,
                acknowledged: histogram(&[2, 2, 3]),
                on_runner: histogram(&[10, 11, 60]),
                on_answerer: histogram(&[14, 15, 70]),
                total: Duration::from_secs(1),
            }],
        });
        let s = Duration::from_secs;
        report.takeover = Some(TakeoverResult {
            lease: s(6),
            steps: (40, 500),
            rounds: vec![
                TakeoverRound {
                    tasks: 2,
                    offsets: Offsets {
                        start_b: Duration::ZERO,
                        kill: Duration::from_millis(500),
                    },
                    taken_over: vec![s(5), s(7)],
                    errors: 0,
                    first_error: None,
                },
                TakeoverRound {
                    tasks: 1,
                    offsets: Offsets {
                        start_b: Duration::from_secs(1),
                        kill: Duration::ZERO,
                    },
                    taken_over: vec![],
                    errors: 1,
                    first_error: Some("1 tasks not re-run".into()),
                },
            ],
        });
        let text = report.render();
        assert!(
            text.contains("| 4 | 3 | 2.0 / 3.0 | 11.0 / 60.0 / 60.0 / 60.0 |"),
            "{text}"
        );
        assert!(
            text.contains("| 1 | 0.00 | 0.50 | 2 | 2 | 5.00 | 5.00 | 7.00 | 6.00 | +1.00 | 0 |"),
            "{text}"
        );
        assert!(
            text.contains("| all | — | — | 3 | 2 | 5.00 | 5.00 | 7.00 | 6.00 | +1.00 | 1 |"),
            "{text}"
        );
        assert!(text
            .contains("| cross-node update-to-resume p99 < 50 ms, 4 at once | 60.0 ms | **no** |"));
        assert!(
            text.contains("| takeover ≤ lease + 2 s (8.0 s) | 7.00 s at most | **no** |"),
            "an error"
        );
        assert!(text.contains("- takeover, PostgreSQL: `1 tasks not re-run`"));
        assert!(!report.valid());
    }
}
