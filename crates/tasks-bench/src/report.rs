//! The markdown report: the run's setup, one throughput table for every row driven by wrk
//! (each with its ratio to the baseline, and a durable row's to the memory store's), one table
//! per kind of row that no load generator drives, one targets table, and the first error of
//! each row that had errors (its figures are invalid).

use std::fmt::Write as _;
use std::time::Duration;

use crate::durable::{self, FsyncLatency, StoredSqliteResult};
use crate::generator::{percent, LoadSpec, Run};
use crate::lifecycle::LifecycleResult;
use crate::mcp::Tally;
use crate::memory::{MemoryResult, ParkedResult, StoredResult};
use crate::pin::Pinning;
use crate::resume::ResumeLevel;
use crate::series::Series;
use crate::takeover::TakeoverResult;
use crate::throughput::Throughput;

/// Largest resident memory per stored small completed task, payload included.
const STORED_TARGET_BYTES: f64 = 512.0;
/// Least `tasks/get` and creation requests/s against the baseline's.
const GET_TARGET_RATIO: f64 = 0.8;
const CREATE_TARGET_RATIO: f64 = 0.5;
/// Durable creation (FULL) target, tasks/s; durable `tasks/get` against the memory store's.
const SQLITE_CREATE_TARGET: f64 = 10_000.0;
const SQLITE_GET_TARGET: f64 = 0.9;
/// PostgreSQL `tasks/get` and creation targets and stretches, per second.
const POSTGRES_GET_TARGET: (f64, f64) = (10_000.0, 15_000.0);
const POSTGRES_CREATE_TARGET: (f64, f64) = (3_000.0, 5_000.0);
/// Largest p99 of cross-node update-to-resume latency; largest takeover beyond the lease.
const RESUME_P99: Duration = Duration::from_millis(50);
const TAKEOVER_MARGIN: Duration = Duration::from_secs(2);

/// Everything one run measured; rows not run stay empty.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// The setup lines of the header, and the CPU sets for the busy columns.
    pub setup: Vec<String>,
    pub pinning: Pinning,
    /// Rows 1, 2, 3, 7a–7c, 8a, 8b.
    pub throughput: Throughput,
    /// Rows 4, 5a, 5b.
    pub lifecycle: Option<LifecycleResult>,
    pub stored: Option<StoredResult>,
    pub parked: Option<ParkedResult>,
    /// The fsync latency of the disk of the SQLite databases, and row 7d.
    pub fsync: Option<FsyncLatency>,
    pub stored_sqlite: Option<StoredSqliteResult>,
    /// The database of rows 8a–8d (without password, and its version), or why they were
    /// skipped; rows 8c and 8d.
    pub postgres: Option<String>,
    pub postgres_skipped: Option<String>,
    pub resume: Option<Vec<ResumeLevel>>,
    pub takeover: Option<TakeoverResult>,
    /// Row 9: oha's version line and, per rate, the baseline's, `tasks/get`'s and creation's
    /// runs; or why it was skipped.
    pub latency: Option<(String, Vec<[Run; 3]>)>,
    pub latency_skipped: Option<String>,
}

/// A markdown table: `header` and each line are cells joined by ` | `; the first column
/// left-aligned, the others right-aligned.
fn table(out: &mut String, header: &str, lines: &[String]) {
    let columns = header.matches(" | ").count();
    let _ = writeln!(out, "\n| {header} |\n|---|{}", "---:|".repeat(columns));
    for line in lines {
        let _ = writeln!(out, "| {line} |");
    }
}

/// The value at quantile `q` of `sorted` (nearest rank).
pub(crate) fn quantile(sorted: &[Duration], q: f64) -> Option<Duration> {
    let rank = (q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
    sorted
        .get(rank.saturating_sub(1).min(sorted.len().checked_sub(1)?))
        .copied()
}

fn ms(sorted: &[Duration], q: f64) -> String {
    quantile(sorted, q).map_or("—".into(), |d| format!("{:.1}", d.as_secs_f64() * 1000.0))
}

fn secs(duration: Option<Duration>) -> String {
    duration.map_or("—".into(), |d| format!("{:.2}", d.as_secs_f64()))
}

/// `value` with `decimals`, or `—`.
fn or_dash(value: Option<f64>, decimals: usize) -> String {
    value.map_or("—".into(), |x| format!("{x:.decimals$}"))
}

fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

/// `1000000` as `1 000 000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(digit);
    }
    out
}

/// Median requests/s of `series` over `reference`'s.
fn ratio(series: &Series, reference: &Series) -> Option<f64> {
    Some(series.median()?.rps() / reference.median()?.rps())
}

/// The setup lines of a run's header.
pub(crate) fn describe(
    rounds: u64,
    threads: u16,
    pinning: &Pinning,
    spec: LoadSpec,
) -> Vec<String> {
    let (model, cpus) = crate::procfs::cpu_model();
    let read = |path| std::fs::read_to_string(path).unwrap_or_default();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let now = now.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0));
    let loadavg = read("/proc/loadavg");
    vec![
        format!("date: {}", tasks_core::Timestamp::from_unix_millis(now)),
        format!("machine: {model}, {cpus} logical CPUs, Linux {}", read("/proc/sys/kernel/osrelease").trim()),
        format!("load average at start (1, 5, 15 min): {}", loadavg.split_whitespace().take(3).collect::<Vec<_>>().join(", ")),
        format!("pinning: {}", pinning.describe()),
        format!("server runtime: {threads} tokio worker thread(s), fixture (`--worker-threads`) and baseline alike"),
        format!(
            "throughput rows: wrk (one thread; its CPU is the generator column), {} keep-alive connections, {} ms warm-up, {} ms window, interleaved rounds until {rounds} clean runs per row (at most {}; a run is disturbed when other processes took over {:.0} % of a core on the pinned CPUs), median of the clean runs shown; one response checked in full before each run, then wrk's non-2xx and socket errors and the fixture's request counters by JSON-RPC code",
            spec.connections,
            spec.warmup.as_millis(),
            spec.duration.as_millis(),
            2 * rounds,
            crate::series::DISTURBED_PERCENT,
        ),
        format!("fixture flags: `{}`", crate::fixtures::FIXTURE_LIMITS.join(" ")),
    ]
}

impl Report {
    /// Each row's failed requests or tasks and its first failure.
    fn failures(&self) -> Vec<(&'static str, u64, Option<&str>)> {
        let t = &self.throughput;
        let mut all: Vec<(&str, &Series)> = vec![
            ("baseline", &t.baseline),
            ("tasks/get", &t.get),
            ("creation", &t.create),
            ("tasks/get, SQLite", &t.get_sqlite),
            ("creation, SQLite FULL", &t.create_sqlite),
            ("creation, SQLite NORMAL", &t.create_sqlite_normal),
            ("tasks/get, PostgreSQL", &t.get_postgres),
            ("creation, PostgreSQL", &t.create_postgres),
        ];
        let gets = self.stored.as_ref().and_then(|s| s.gets.as_ref());
        let parked = self.parked.as_ref().map(|p| &p.gets);
        for (name, gets) in [("stored tasks/get", gets), ("parked tasks/get", parked)] {
            if let Some(gets) = gets {
                all.push((name, &gets.idle));
                all.push((name, &gets.loaded));
            }
        }
        let mut tallies: Vec<(&'static str, &Tally)> = Vec::new();
        tallies.extend(self.lifecycle.iter().map(|r| ("lifecycle", &r.tally)));
        tallies.extend(self.stored.iter().map(|r| ("stored", &r.memory.tally)));
        tallies.extend(self.parked.iter().map(|r| ("parked", &r.memory.tally)));
        let sqlite = self.stored_sqlite.iter();
        tallies.extend(sqlite.map(|r| ("stored, SQLite", &r.stored.memory.tally)));
        let resume = self.resume.iter().flatten();
        tallies.extend(resume.map(|level| ("resume, PostgreSQL", &level.tally)));
        let takeover = self.takeover.iter().flat_map(|t| &t.rounds);
        tallies.extend(takeover.map(|round| ("takeover, PostgreSQL", &round.tally)));
        let series = all
            .into_iter()
            .map(|(n, s)| (n, s.errors(), s.first_error()));
        let tallies = tallies
            .into_iter()
            .map(|(n, t)| (n, t.errors, t.first_error.as_deref()));
        let mut out: Vec<_> = series.chain(tallies).collect();
        for run in self
            .latency
            .iter()
            .flat_map(|(_, runs)| runs.iter().flatten())
        {
            out.push(("open-loop latency", run.errors, run.first_error.as_deref()));
        }
        out
    }

    /// Whether no row had errors.
    pub(crate) fn valid(&self) -> bool {
        self.failures().iter().all(|(_, errors, _)| *errors == 0)
    }

    /// Mean busy percentage of `cpus` over `window`, or `—` when unpinned.
    fn busy(&self, cores: &[Duration], server: bool, window: Duration) -> String {
        let cpus = match server {
            true => self.pinning.server_cpus(),
            false => self.pinning.client_cpus(),
        };
        if cpus.is_empty() {
            return "—".into();
        }
        let busy: Duration = cpus
            .iter()
            .map(|&cpu| cores.get(cpu).copied().unwrap_or_default())
            .sum();
        format!("{:.0} %", percent(busy, window) / cpus.len() as f64)
    }

    /// The report as markdown.
    pub(crate) fn render(&self) -> String {
        let mut out = String::from("### Run\n\n");
        for line in &self.setup {
            let _ = writeln!(out, "- {line}");
        }
        if let Some(bytes) = self.throughput.get_response_bytes {
            let _ = writeln!(out, "- `tasks/get` response body: {bytes} bytes (the baseline answers with these bytes)");
        }
        if let Some(f) = &self.fsync {
            let us = |q| quantile(&f.0, q).map_or(0, |d| d.as_micros());
            let _ = writeln!(
                out,
                "- SQLite fixtures: `--store sqlite:<fresh directory>/tasks.db`, `--sqlite-synchronous full` unless the row says NORMAL; fsync latency of that disk (append {} bytes + `sync_data`, {} times): p50 {} µs, p90 {} µs, p99 {} µs, max {} µs",
                durable::APPEND_BYTES, durable::SYNCS, us(0.5), us(0.9), us(0.99), us(1.0)
            );
        }
        if let Some(database) = &self.postgres {
            let _ = writeln!(out, "- PostgreSQL rows: {database}, not pinned; each row on a fresh schema, dropped afterwards; database CPU is the CPU time of the fixture's own sessions (found by `application_name` in `pg_stat_activity`), not counted as foreign when judging a run disturbed");
        }
        for (rows, reason) in [
            ("8a–8d", &self.postgres_skipped),
            ("9", &self.latency_skipped),
        ] {
            if let Some(reason) = reason {
                let _ = writeln!(out, "- rows {rows} skipped: {reason}");
            }
        }
        self.render_throughput(&mut out);
        self.render_tasks(&mut out);
        self.render_cluster(&mut out);
        self.render_latency(&mut out);
        self.render_targets(&mut out);
        let failures: Vec<_> = self
            .failures()
            .into_iter()
            .filter_map(|(n, _, e)| e.map(|e| (n, e)))
            .collect();
        if !failures.is_empty() {
            let _ = writeln!(out, "\n### First errors (rows with errors are invalid)\n");
            for (name, error) in failures {
                let _ = writeln!(
                    out,
                    "- {name}: `{}`",
                    error.chars().take(300).collect::<String>()
                );
            }
        }
        out
    }

    fn render_throughput(&self, out: &mut String) {
        let t = &self.throughput;
        let mut rows: Vec<(String, &Series, Option<&Series>)> = vec![
            (
                "1 baseline: bare hyper, fixed response".into(),
                &t.baseline,
                None,
            ),
            ("2 `tasks/get`, completed task".into(), &t.get, None),
            (
                "3 creation: `tools/call` `slow_compute` `seconds: 0`".into(),
                &t.create,
                None,
            ),
        ];
        let stored = self
            .stored
            .as_ref()
            .and_then(|s| Some((s.memory.count, s.gets.as_ref()?)));
        let parked = self.parked.as_ref().map(|p| (p.memory.count + 1, &p.gets));
        for (row, what, task, done) in [
            ("5a", stored, "completed", "stored"),
            ("5b", parked, "parked", "parked"),
        ] {
            if let Some((count, gets)) = what {
                rows.push((
                    format!("{row} `tasks/get`, {task} task, no other task"),
                    &gets.idle,
                    None,
                ));
                let name = format!("{row} `tasks/get`, same task, {} {done}", thousands(count));
                rows.push((name, &gets.loaded, None));
            }
        }
        rows.extend([
            (
                "7a `tasks/get`, SQLite (FULL)".into(),
                &t.get_sqlite,
                Some(&t.get),
            ),
            (
                "7b creation, SQLite FULL".into(),
                &t.create_sqlite,
                Some(&t.create),
            ),
            (
                "7c creation, SQLite NORMAL".into(),
                &t.create_sqlite_normal,
                Some(&t.create),
            ),
            (
                "8a `tasks/get`, PostgreSQL".into(),
                &t.get_postgres,
                Some(&t.get),
            ),
            (
                "8b creation, PostgreSQL".into(),
                &t.create_postgres,
                Some(&t.create),
            ),
        ]);
        let mut lines = Vec::new();
        for (name, series, reference) in rows {
            let Some(r) = series.median() else { continue };
            let ((low, high), w) = (series.rps_range(), r.window);
            let (rps, clean, runs, errors) =
                (r.rps(), series.clean(), series.len(), series.errors());
            let (p50, p99, p999) = (r.latency_ms(0.5), r.latency_ms(0.99), r.latency_ms(0.999));
            let vs_base = or_dash(ratio(series, &t.baseline), 2);
            let vs_memory = or_dash(reference.and_then(|reference| ratio(series, reference)), 2);
            let cpu_us = r.micros_per_request(r.server_cpu);
            let db_us = or_dash(r.database_cpu.map(|cpu| r.micros_per_request(cpu)), 1);
            let (cpu, client) = (percent(r.server_cpu, w), percent(r.client_cpu, w));
            let writer = or_dash(r.writer_cpu.map(|cpu| percent(cpu, w)), 0);
            let (busy, client_busy) = (self.busy(&r.cores, true, w), self.busy(&r.cores, false, w));
            lines.push(format!("{name} | {rps:.0} | {low:.0}–{high:.0} | {clean}/{runs} | {p50:.3} | {p99:.3} | {p999:.3} | {vs_base} | {vs_memory} | {cpu_us:.1} | {db_us} | {cpu:.0} % | {writer} | {busy} | {client:.0} % | {client_busy} | {errors}"));
        }
        if !lines.is_empty() {
            let _ = writeln!(
                out,
                "\n### Throughput (wrk: rows 1–3, 5a, 5b, 7a–7c, 8a, 8b)"
            );
            table(out, "row | requests/s | range | clean runs | p50 ms | p99 ms | p99.9 ms | vs baseline | vs memory (row 2 / row 3) | server CPU µs/request | database CPU µs/request | server process CPU | writer thread CPU % | server core busy | generator process CPU | generator core busy | errors", &lines);
        }
    }

    /// Rows 4, 5a, 5b, 7d: what the harness's own MCP client drives.
    fn render_tasks(&self, out: &mut String) {
        if let Some(r) = &self.lifecycle {
            let _ = writeln!(out, "\n### Lifecycle (row 4)");
            let (tasks, total, errors) = (r.tasks, r.total.as_secs_f64(), r.tally.errors);
            let per_second = (tasks as u64).saturating_sub(errors) as f64 / total;
            let polls = r.polls as f64 / tasks.max(1) as f64;
            let cpu_us = r.server_cpu.as_secs_f64() * 1e6 / tasks.max(1) as f64;
            let (cpu, busy) = (
                percent(r.server_cpu, r.total),
                self.busy(&r.cores, true, r.total),
            );
            let header = format!("tasks (`slow_compute` `seconds: {}`), all started at once | total s | tasks/s | polls/task | server CPU/task µs | server process CPU | server core busy | errors", r.seconds);
            let line = format!("{tasks} | {total:.2} | {per_second:.0} | {polls:.2} | {cpu_us:.1} | {cpu:.0} % | {busy} | {errors}");
            table(out, &header, &[line]);
        }
        let memory_line = |name: &str, m: &MemoryResult, payload: Option<usize>| {
            let (count, before, after, per_task) =
                (m.count, mib(m.rss_before), mib(m.rss_after), m.per_task());
            let beyond = or_dash(payload.map(|p| per_task - p as f64), 0);
            let payload = or_dash(payload.map(|p| p as f64), 0);
            let (created, errors) = (count as f64 / m.create_time.as_secs_f64(), m.tally.errors);
            format!("{name} | {count} | {before} | {after} | {per_task:.0} | {payload} | {beyond} | {created:.0} | {errors}")
        };
        let mut lines = Vec::new();
        if let Some(s) = &self.stored {
            lines.push(memory_line(
                "5a stored completed (`slow_compute` `seconds: 0`)",
                &s.memory,
                Some(s.payload_bytes),
            ));
        }
        if let Some(p) = &self.parked {
            lines.push(memory_line(
                "5b parked in `input_required` (`confirm_delete`)",
                &p.memory,
                None,
            ));
        }
        if !lines.is_empty() {
            let _ = writeln!(out, "\n### Memory (row 5)");
            table(out, "row | tasks added | RSS before MiB | RSS after MiB | RSS/task bytes | payload bytes | beyond payload bytes | created/s | errors", &lines);
        }
        if let Some(s) = &self.stored_sqlite {
            let _ = writeln!(out, "\n### Database size (row 7d)");
            let per_task = |bytes: u64| format!("{:.0}", bytes as f64 / s.tasks.max(1) as f64);
            let (db, wal, running) = (
                mib(s.db_bytes),
                mib(s.wal_bytes),
                per_task(s.db_bytes + s.wal_bytes),
            );
            let closed = s
                .closed_bytes
                .map_or("— (WAL left behind)".into(), per_task);
            let (tasks, m) = (s.tasks, &s.stored.memory);
            let (rss, errors) = (m.per_task(), m.tally.errors);
            let created = m.count as f64 / m.create_time.as_secs_f64();
            let line = format!("7d stored completed (`slow_compute` `seconds: 0`), SQLite FULL | {tasks} | {db} | {wal} | {running} | {closed} | {rss:.0} | {created:.0} | {errors}");
            table(out, "row | tasks in database | `tasks.db` MiB | `tasks.db-wal` MiB | (db + WAL) / task bytes | `tasks.db` after a clean stop / task bytes | RSS/task bytes | created/s | errors", &[line]);
        }
    }

    /// Rows 8c and 8d.
    fn render_cluster(&self, out: &mut String) {
        if let Some(levels) = &self.resume {
            let _ = writeln!(out, "\n### Cross-node resume (row 8c)\n\n`confirm_delete` created on node A and parked (not measured), then answered with `tasks/update` on node B, so many at once; latency from sending the update to the terminal view of a `subscriptions/listen` watch opened beforehand on A (which runs the task) and on B (one more hint)");
            let spread = |d: &[Duration]| [0.5, 0.9, 0.99, 1.0].map(|q| ms(d, q)).join(" / ");
            let lines: Vec<_> = levels.iter().map(|l| {
                let (at_once, tasks, errors) = (l.concurrency, l.tasks, l.tally.errors);
                let ack = format!("{} / {}", ms(&l.acknowledged, 0.5), ms(&l.acknowledged, 0.99));
                let (runner, answerer) = (spread(&l.on_runner), spread(&l.on_answerer));
                let per_second = l.tasks as f64 / l.total.as_secs_f64();
                format!("{at_once} | {tasks} | {ack} | {runner} | {answerer} | {per_second:.0} | {errors}")
            }).collect();
            table(out, "tasks at once | tasks | update acknowledged p50 / p99 ms | completed, seen on A: p50 / p90 / p99 / max ms | completed, seen on B: p50 / p90 / p99 / max ms | answers/s | errors", &lines);
        }
        if let Some(t) = &self.takeover {
            let (lease, (steps, step_ms)) = (t.lease.as_millis(), t.steps);
            let _ = writeln!(out, "\n### Takeover (row 8d)\n\nTwo nodes with `--lease-ms {lease}`; `resumable_job` (`steps: {steps}`, `stepMs: {step_ms}`) tasks started on A; A killed with SIGKILL once B's watches showed them all running; time from the kill to each task's first `(attempt 2)` status on B. Each kill starts B and kills A at its own offsets (shares of a tick, a third of the lease, at most 2 s); the worst case is the lease plus one tick");
            let lease = t.lease.as_secs_f64();
            let line = |name: String,
                        offsets: Option<(Duration, Duration)>,
                        tasks: usize,
                        sorted: &[Duration],
                        errors: u64| {
                let (start_b, kill) = (secs(offsets.map(|o| o.0)), secs(offsets.map(|o| o.1)));
                let (rerun, min, p50) = (
                    sorted.len(),
                    secs(quantile(sorted, 0.0)),
                    secs(quantile(sorted, 0.5)),
                );
                let max = quantile(sorted, 1.0);
                let beyond = max.map_or("—".into(), |max| {
                    format!("{:+.2}", max.as_secs_f64() - lease)
                });
                let max = secs(max);
                format!("{name} | {start_b} | {kill} | {tasks} | {rerun} | {min} | {p50} | {max} | {lease:.2} | {beyond} | {errors}")
            };
            let mut lines = Vec::new();
            for (i, r) in t.rounds.iter().enumerate() {
                let offsets = Some((r.offsets.start_b, r.offsets.kill));
                lines.push(line(
                    (i + 1).to_string(),
                    offsets,
                    r.tasks,
                    &r.taken_over,
                    r.tally.errors,
                ));
            }
            let tasks = t.rounds.iter().map(|r| r.tasks).sum();
            lines.push(line(
                "all".into(),
                None,
                tasks,
                &t.all(),
                t.rounds.iter().map(|r| r.tally.errors).sum(),
            ));
            table(out, "kill | B started after A s | kill after tasks seen s | tasks | re-run on B | min s | p50 s | max s | lease s | max − lease s | errors", &lines);
        }
    }

    fn render_latency(&self, out: &mut String) {
        let Some((version, runs)) = &self.latency else {
            return;
        };
        let _ = writeln!(out, "\n### Open-loop latency (row 9)\n\n{version}, `-q <rate> --latency-correction`, on the load generator's CPU; one run per rate and server after a warm-up at that rate; a request's latency counts from when it was due to be sent; no disturbance check (one run each). answered/s: HTTP 200 answers in the window over its length; server CPU: share of one core, and per answer (10 ms ticks of `/proc`). ‡: below 95 % of the rate, the server did not keep up, and requests due but never sent are in no quantile");
        let names = ["1 baseline", "2 `tasks/get`, completed task", "3 creation"];
        let mut lines = Vec::new();
        for (name, r) in runs.iter().flat_map(|three| names.iter().zip(three)) {
            let (rate, rps, mark) = (
                r.rate.unwrap_or_default(),
                r.rps(),
                if r.kept_rate() { "" } else { " ‡" },
            );
            let quantiles = [0.5, 0.9, 0.99, 0.999]
                .map(|q| format!("{:.3}", r.latency_ms(q)))
                .join(" | ");
            let max = or_dash(r.max_ms, 3);
            let (cpu, client, errors) = (
                percent(r.server_cpu, r.window),
                percent(r.client_cpu, r.window),
                r.errors,
            );
            let cpu_us = r.micros_per_request(r.server_cpu);
            lines.push(format!("{rate} | {name} | {rps:.0}{mark} | {quantiles} | {max} | {cpu:.0} % | {cpu_us:.1} | {client:.0} % | {errors}"));
        }
        table(out, "rate, requests/s | row | answered/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | server CPU | server CPU µs/request | oha CPU | errors", &lines);
    }

    fn render_targets(&self, out: &mut String) {
        let t = &self.throughput;
        let mut lines = Vec::new();
        let mut add = |what: String, reached: String, met: bool| {
            let met = if met { "yes" } else { "**no**" };
            lines.push(format!("{what} | {reached} | {met}"));
        };
        let clean = |series: &[&Series]| series.iter().all(|s| s.errors() == 0);
        let (get, create) = (GET_TARGET_RATIO, CREATE_TARGET_RATIO);
        for (what, series, goal) in [
            ("`tasks/get`", &t.get, get),
            ("creation", &t.create, create),
        ] {
            if let Some(x) = ratio(series, &t.baseline) {
                let met = x >= goal && clean(&[series, &t.baseline]);
                add(
                    format!("{what} ≥ {goal} × baseline requests/s"),
                    format!("{x:.2}"),
                    met,
                );
            }
        }
        if let Some(m) = self.stored.as_ref().map(|s| &s.memory) {
            let (per_task, bound) = (m.per_task(), STORED_TARGET_BYTES);
            let what = format!("≤ {bound} bytes RSS per stored small completed task");
            add(
                what,
                format!("{per_task:.0} bytes"),
                per_task <= bound && m.tally.errors == 0,
            );
        }
        if let Some(m) = self.parked.as_ref().map(|p| &p.memory) {
            let (count, errors) = (m.count + 1, m.tally.errors);
            add(
                format!("{count} parked tasks without errors"),
                format!("{errors} errors"),
                errors == 0,
            );
        }
        let stored = self.stored.as_ref().and_then(|s| {
            Some((
                format!("with {} stored", thousands(s.memory.count)),
                s.gets.as_ref()?,
            ))
        });
        let parked = self
            .parked
            .as_ref()
            .map(|p| ("on a parked task".to_owned(), &p.gets));
        for (what, gets) in stored.into_iter().chain(parked) {
            if let Some(x) = ratio(&gets.loaded, &gets.idle) {
                let met = x >= 0.8 && clean(&[&gets.idle, &gets.loaded]);
                add(
                    format!("`tasks/get` {what} within 20 % of idle"),
                    format!("{x:.2} of idle"),
                    met,
                );
            }
        }
        if let Some(rps) = t.create_sqlite.median().map(Run::rps) {
            let (goal, met) = (SQLITE_CREATE_TARGET, clean(&[&t.create_sqlite]));
            let what = format!("durable creation (FULL) ≥ {goal:.0} tasks/s");
            add(what, format!("{rps:.0} tasks/s"), rps >= goal && met);
        }
        if let Some(x) = ratio(&t.get_sqlite, &t.get) {
            let met = x >= SQLITE_GET_TARGET && clean(&[&t.get_sqlite, &t.get]);
            let what = "`tasks/get` on a durable task within 10 % of the memory store";
            add(what.into(), format!("{x:.2} of row 2"), met);
        }
        for (what, series, (target, stretch), unit) in [
            (
                "`tasks/get`",
                &t.get_postgres,
                POSTGRES_GET_TARGET,
                "requests/s",
            ),
            (
                "creation",
                &t.create_postgres,
                POSTGRES_CREATE_TARGET,
                "tasks/s",
            ),
        ] {
            let Some(rps) = series.median().map(Run::rps) else {
                continue;
            };
            for (goal, note) in [(target, ""), (stretch, " (stretch)")] {
                let what = format!("{what} on PostgreSQL ≥ {goal:.0} {unit}{note}");
                add(
                    what,
                    format!("{rps:.0} {unit}"),
                    rps >= goal && clean(&[series]),
                );
            }
        }
        for level in self.resume.iter().flatten() {
            let p99 = quantile(&level.on_runner, 0.99).unwrap_or(Duration::MAX);
            let (bound, at_once) = (RESUME_P99.as_millis(), level.concurrency);
            let what = format!("cross-node update-to-resume p99 < {bound} ms, {at_once} at once");
            let met = level.tally.errors == 0 && p99 < RESUME_P99;
            add(what, format!("{} ms", ms(&level.on_runner, 0.99)), met);
        }
        if let Some(t) = &self.takeover {
            if let Some(max) = quantile(&t.all(), 1.0) {
                let errors: u64 = t.rounds.iter().map(|r| r.tally.errors).sum();
                let (bound, margin) = (t.lease + TAKEOVER_MARGIN, TAKEOVER_MARGIN.as_secs());
                let what = format!(
                    "takeover ≤ lease + {margin} s ({:.1} s)",
                    bound.as_secs_f64()
                );
                add(
                    what,
                    format!("{:.2} s at most", max.as_secs_f64()),
                    errors == 0 && max <= bound,
                );
            }
        }
        if !lines.is_empty() {
            let _ = writeln!(out, "\n### Targets");
            table(out, "target | reached | met", &lines);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::takeover::{Offsets, TakeoverRound};

    #[test]
    fn quantiles_by_nearest_rank() {
        let s = Duration::from_secs;
        assert_eq!(quantile(&[], 0.5), None);
        let sorted = [s(1), s(2), s(3), s(4)];
        assert_eq!(quantile(&sorted, 0.0), Some(s(1)));
        assert_eq!(quantile(&sorted, 0.5), Some(s(2)));
        assert_eq!(quantile(&sorted, 0.99), Some(s(4)));
        assert_eq!(thousands(1_000_000), "1 000 000");
    }

    #[test]
    fn cluster_tables_targets_and_errors() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&m| Duration::from_millis(m))
                .collect::<Vec<_>>()
        };
        let s = Duration::from_secs;
        let mut failed = Tally::default();
        failed.fail("1 tasks not re-run");
        let report = Report {
            resume: Some(vec![ResumeLevel {
                concurrency: 4,
                tasks: 3,
                acknowledged: ms(&[2, 2, 3]),
                on_runner: ms(&[10, 11, 60]),
                on_answerer: ms(&[14, 15, 70]),
                total: s(1),
                tally: Tally::default(),
            }]),
            takeover: Some(TakeoverResult {
                lease: s(6),
                steps: (40, 500),
                rounds: vec![TakeoverRound {
                    tasks: 2,
                    offsets: Offsets {
                        start_b: Duration::ZERO,
                        kill: Duration::from_millis(500),
                    },
                    taken_over: vec![s(5), s(7)],
                    tally: failed,
                }],
            }),
            postgres_skipped: Some("no PostgreSQL".into()),
            ..Report::default()
        };
        let text = report.render();
        assert!(
            text.contains("| 4 | 3 | 2.0 / 3.0 | 11.0 / 60.0 / 60.0 / 60.0 |"),
            "{text}"
        );
        assert!(
            text.contains("| 1 | 0.00 | 0.50 | 2 | 2 | 5.00 | 5.00 | 7.00 | 6.00 | +1.00 | 1 |"),
            "{text}"
        );
        assert!(text
            .contains("| cross-node update-to-resume p99 < 50 ms, 4 at once | 60.0 ms | **no** |"));
        assert!(text.contains("| takeover ≤ lease + 2 s (8.0 s) | 7.00 s at most | **no** |"));
        assert!(text.contains("- takeover, PostgreSQL: `1 tasks not re-run`"));
        assert!(text.contains("- rows 8a–8d skipped: no PostgreSQL"));
        assert!(!report.valid());
    }
}
