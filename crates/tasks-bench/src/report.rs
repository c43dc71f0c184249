//! The markdown report: the run's setup, one throughput table for every row driven by wrk
//! (each with its ratio to the baseline, and a durable row's to the memory store's), one table
//! per kind of row that no load generator drives, one targets table, and the first error of
//! each row that had errors (its figures are invalid).

use std::fmt::Write as _;
use std::time::Duration;

use crate::cli::Row;
use crate::generator::{percent, LoadSpec, Run};
use crate::lifecycle::{self, LifecycleResult};
use crate::memory::{self, MemoryResult, StoredSqliteResult};
use crate::pin::Pinning;
use crate::resume::ResumeLevel;
use crate::series::Series;
use crate::takeover::TakeoverResult;
use crate::throughput::{Throughput, PEERS, ROWS};

/// Largest resident memory per stored small completed task, payload included.
const STORED_TARGET_BYTES: f64 = 512.0;
/// Least median requests/s of a row: a share of the second row's when there is one, else
/// absolute; and whether it is a stretch target.
const THROUGHPUT_TARGETS: [(Row, Option<Row>, f64, bool); 8] = [
    (Row::Get, Some(Row::Baseline), 0.8, false),
    (Row::Create, Some(Row::Baseline), 0.5, false),
    (Row::GetSqlite, Some(Row::Get), 0.9, false),
    (Row::CreateSqlite, None, 10_000.0, false),
    (Row::GetPostgres, None, 10_000.0, false),
    (Row::GetPostgres, None, 15_000.0, true),
    (Row::CreatePostgres, None, 3_000.0, false),
    (Row::CreatePostgres, None, 5_000.0, true),
];
/// Largest p99 of cross-node update-to-resume latency; largest takeover beyond the lease.
const RESUME_P99: Duration = Duration::from_millis(50);
const TAKEOVER_MARGIN: Duration = Duration::from_secs(2);

/// Everything one run measured; rows not run stay empty.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// The setup lines of the header, and the CPU sets for the busy columns.
    pub setup: Vec<String>,
    pub pinning: Pinning,
    pub throughput: Throughput,
    pub lifecycle: Option<LifecycleResult>,
    pub stored: Option<MemoryResult>,
    pub parked: Option<MemoryResult>,
    /// The fsync latencies of the disk of the SQLite databases, shortest first.
    pub fsync: Option<Vec<Duration>>,
    pub stored_sqlite: Option<StoredSqliteResult>,
    /// The database of rows 8a–8d (without password, and its version).
    pub postgres: Option<String>,
    /// Rows left out (`8a–8d`, `9`) and why.
    pub skipped: Vec<(&'static str, String)>,
    pub resume: Option<Vec<ResumeLevel>>,
    pub takeover: Option<TakeoverResult>,
    /// Row 9: oha's version line and, per rate, the baseline's, `tasks/get`'s and creation's
    /// runs.
    pub latency: Option<(String, Vec<[Run; 3]>)>,
}

/// One table row: its name (the first cell, or cells), the other cells, and its failed
/// requests or tasks with the first failure.
struct Line(String, String, u64, Option<String>);

fn line(name: impl Into<String>, cells: String, failed: (u64, Option<&str>)) -> Line {
    Line(name.into(), cells, failed.0, failed.1.map(str::to_owned))
}

/// The report being written: its text, the failed requests or tasks of all its rows, and the
/// first error of each row that had one.
#[derive(Default)]
struct Out {
    text: String,
    errors: u64,
    first_errors: Vec<String>,
}

impl Out {
    /// `title` (a heading, maybe with a paragraph) and a markdown table whose `header` cells
    /// are joined by ` | `, the first column left-aligned, the others right-aligned; nothing
    /// without lines.
    fn table(&mut self, title: &str, header: &str, lines: Vec<Line>) {
        if lines.is_empty() {
            return;
        }
        let columns = header.matches(" | ").count();
        let align = "---:|".repeat(columns);
        let _ = writeln!(self.text, "\n{title}\n\n| {header} |\n|---|{align}");
        for Line(name, cells, errors, first_error) in lines {
            let _ = writeln!(self.text, "| {name} | {cells} |");
            self.errors += errors;
            if let Some(error) = first_error {
                let error: String = error.chars().take(300).collect();
                self.first_errors.push(format!("- {name}: `{error}`"));
            }
        }
    }
}

/// The value at quantile `q` of `sorted` (nearest rank).
pub(crate) fn quantile(sorted: &[Duration], q: f64) -> Option<Duration> {
    let rank = (q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
    let last = sorted.len().checked_sub(1)?;
    sorted.get(rank.saturating_sub(1).min(last)).copied()
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

/// Median requests/s of `series` over `reference`'s.
fn ratio(series: Option<&Series>, reference: Option<&Series>) -> Option<f64> {
    Some(series?.median()?.rps() / reference?.median()?.rps())
}

/// The setup lines of a run's header.
pub(crate) fn describe(rounds: u64, threads: u16, pin: &Pinning, spec: LoadSpec) -> Vec<String> {
    let (model, cpus) = crate::procfs::cpu_model();
    let read = |path| std::fs::read_to_string(path).unwrap_or_default();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let now = now.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0));
    let loadavg = read("/proc/loadavg");
    let loadavg = loadavg
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(", ");
    let connections = spec.connections;
    let (warmup, window) = (spec.warmup.as_millis(), spec.duration.as_millis());
    vec![
        format!("date: {}", tasks_core::Timestamp::from_unix_millis(now)),
        format!("machine: {model}, {cpus} logical CPUs, Linux {}", read("/proc/sys/kernel/osrelease").trim()),
        format!("load average at start (1, 5, 15 min): {loadavg}"),
        format!("pinning: {}", pin.describe()),
        format!("server runtime: {threads} tokio worker thread(s), fixture (`--worker-threads`) and baseline alike"),
        format!(
            "throughput rows: wrk (one thread; its CPU is the generator column), {connections} keep-alive connections, {warmup} ms warm-up, {window} ms window, interleaved rounds until {rounds} clean runs per row (at most {}; a run is disturbed when other processes took over {:.0} % of a core on the pinned CPUs), median of the clean runs shown; one response checked in full before each run, then wrk's non-2xx and socket errors and the fixture's request counters by JSON-RPC code",
            2 * rounds,
            crate::series::DISTURBED_PERCENT,
        ),
        format!("fixture flags: `{}`", crate::fixtures::FIXTURE_LIMITS),
    ]
}

impl Report {
    /// Mean busy percentage of the server's (or the generator's) CPUs over `window`, or `—`
    /// when unpinned.
    fn busy(&self, cores: &[Duration], server: bool, window: Duration) -> String {
        let pinning = &self.pinning;
        let cpus = [pinning.client_cpus(), pinning.server_cpus()][usize::from(server)];
        if cpus.is_empty() {
            return "—".into();
        }
        let busy: Duration = cpus.iter().filter_map(|&cpu| cores.get(cpu)).sum();
        format!("{:.0} %", percent(busy, window) / cpus.len() as f64)
    }

    /// The report as markdown, and whether no row had errors.
    pub(crate) fn render(&self) -> (String, bool) {
        let mut out = Out::default();
        out.text.push_str("### Run\n\n");
        let text = &mut out.text;
        for line in &self.setup {
            let _ = writeln!(text, "- {line}");
        }
        if let Some(bytes) = self.throughput.get_response_bytes {
            let _ = writeln!(text, "- `tasks/get` response body: {bytes} bytes (the baseline answers with these bytes)");
        }
        if let Some(f) = &self.fsync {
            let [p50, p90, p99, max] =
                [0.5, 0.9, 0.99, 1.0].map(|q| quantile(f, q).map_or(0, |d| d.as_micros()));
            let (append, syncs) = (memory::APPEND_BYTES, memory::SYNCS);
            let _ = writeln!(text, "- SQLite fixtures: `--store sqlite:<fresh directory>/tasks.db`, `--sqlite-synchronous full` unless the row says NORMAL; fsync latency of that disk (append {append} bytes + `sync_data`, {syncs} times): p50 {p50} µs, p90 {p90} µs, p99 {p99} µs, max {max} µs");
        }
        if let Some(database) = &self.postgres {
            let _ = writeln!(text, "- PostgreSQL rows: {database}, not pinned; each row on a fresh schema, dropped at the end of the run; database CPU is the CPU time of the fixture's own sessions (found by `application_name` in `pg_stat_activity`), not counted as foreign when judging a run disturbed");
        }
        for (rows, reason) in &self.skipped {
            let _ = writeln!(text, "- rows {rows} skipped: {reason}");
        }
        self.render_throughput(&mut out);
        self.render_peers(&mut out);
        self.render_tasks(&mut out);
        self.render_cluster(&mut out);
        self.render_latency(&mut out);
        self.render_targets(&mut out);
        if !out.first_errors.is_empty() {
            let errors = out.first_errors.join("\n");
            let title = "### First errors (rows with errors are invalid)";
            let _ = writeln!(out.text, "\n{title}\n\n{errors}");
        }
        (out.text, out.errors == 0)
    }

    fn render_throughput(&self, out: &mut Out) {
        let t = |row| self.throughput.series.get(&row);
        let mut rows: Vec<(String, Option<&Series>, Option<&Series>)> = Vec::new();
        for &row in &ROWS[..3] {
            rows.push((row.title(), t(row), None));
        }
        let stored = ("5a", &self.stored, "completed", "stored");
        for (row, m, task, done) in [stored, ("5b", &self.parked, "parked", "parked")] {
            let Some((m, [idle, loaded])) = m.as_ref().and_then(|m| Some((m, m.gets.as_ref()?)))
            else {
                continue;
            };
            let count = m.count + usize::from(row == "5b");
            let name = format!("{row} `tasks/get`, {task} task, no other task");
            rows.push((name, Some(idle), None));
            let name = format!("{row} `tasks/get`, same task, {count} {done}");
            rows.push((name, Some(loaded), None));
        }
        for &row in &ROWS[3..] {
            let reference = [Row::Create, Row::Get][usize::from(row.name().starts_with("get"))];
            rows.push((row.title(), t(row), t(reference)));
        }
        let mut lines = Vec::new();
        for (name, series, reference) in rows {
            let Some(r) = series.and_then(Series::median) else {
                continue;
            };
            let Some(series) = series else { continue };
            let ((low, high), w) = (series.rps_range(), r.window);
            let (rps, clean, runs, errors) =
                (r.rps(), series.clean(), series.len(), series.errors());
            let (p50, p99, p999) = (r.latency_ms(0.5), r.latency_ms(0.99), r.latency_ms(0.999));
            let vs_base = or_dash(ratio(Some(series), t(Row::Baseline)), 2);
            let vs_memory = or_dash(ratio(Some(series), reference), 2);
            let cpu_us = r.micros_per_request(r.server_cpu);
            let db_us = or_dash(r.database_cpu.map(|cpu| r.micros_per_request(cpu)), 1);
            let (cpu, client) = (percent(r.server_cpu, w), percent(r.client_cpu, w));
            let writer = or_dash(r.writer_cpu.map(|cpu| percent(cpu, w)), 0);
            let (busy, client_busy) = (self.busy(&r.cores, true, w), self.busy(&r.cores, false, w));
            let cells = format!("{rps:.0} | {low:.0}–{high:.0} | {clean}/{runs} | {p50:.3} | {p99:.3} | {p999:.3} | {vs_base} | {vs_memory} | {cpu_us:.1} | {db_us} | {cpu:.0} % | {writer} | {busy} | {client:.0} % | {client_busy} | {errors}");
            lines.push(line(name, cells, (errors, series.first_error())));
        }
        let title = "### Throughput (wrk: rows 1–3, 5a, 5b, 7a–7c, 8a, 8b)";
        out.table(title, "row | requests/s | range | clean runs | p50 ms | p99 ms | p99.9 ms | vs baseline | vs memory (row 2 / row 3) | server CPU µs/request | database CPU µs/request | server process CPU | writer thread CPU % | server core busy | generator process CPU | generator core busy | errors", lines);
    }

    /// Rows 2 and 3 on the fixture and on each peer: their median requests/s, server CPU per
    /// request and ratio to the baseline of the same run.
    fn render_peers(&self, out: &mut Out) {
        let t = &self.throughput;
        if t.peers.is_empty() {
            return;
        }
        let [get, create] = [Row::Get, Row::Create].map(|row| t.series.get(&row));
        let ours = ("ours (`tasks-fixture`)", get, create);
        let theirs = PEERS.map(|p| {
            (
                p,
                t.peers.get(&(p, Row::Get)),
                t.peers.get(&(p, Row::Create)),
            )
        });
        let mut lines = Vec::new();
        for (name, get, create) in [ours].into_iter().chain(theirs) {
            let (mut cells, mut errors, mut first) = (Vec::new(), 0, None);
            for series in [get, create] {
                let r = series.and_then(Series::median);
                cells.push(or_dash(r.map(Run::rps), 0));
                cells.push(or_dash(r.map(|r| r.micros_per_request(r.server_cpu)), 1));
                cells.push(or_dash(ratio(series, t.series.get(&Row::Baseline)), 2));
                cells.push(series.map_or("—".into(), |s| format!("{}/{}", s.clean(), s.len())));
                errors += series.map_or(0, Series::errors);
                first = first.or(series.and_then(Series::first_error));
            }
            cells.push(errors.to_string());
            // Our rows' errors are counted in the throughput table already.
            let failed = [(errors, first), (0, None)][usize::from(name == ours.0)];
            lines.push(line(name, cells.join(" | "), failed));
        }
        let title = "### Ours vs theirs (rows 2 and 3 on the peers)\n\nThe same `slow_compute` task and `tasks/get` on rmcp and tower-mcp (`bench/peers`, versions pinned in its Cargo.toml), each on its library's in-memory task store (no limit refuses a creation, no task expires during a run), started with the fixture's worker threads and pinning, driven in the same rounds with the same load; ratios to the baseline of this run";
        out.table(title, "server | `tasks/get` requests/s | server CPU µs/request | vs baseline | clean runs | creation requests/s | server CPU µs/request | vs baseline | clean runs | errors", lines);
    }

    /// Rows 4, 5a, 5b, 7d: what the harness's own MCP client drives.
    fn render_tasks(&self, out: &mut Out) {
        if let Some(r) = &self.lifecycle {
            let (tasks, seconds) = (lifecycle::TASKS, lifecycle::SECONDS);
            let (total, errors) = (r.total.as_secs_f64(), r.tally.errors);
            let per_second = (tasks as u64).saturating_sub(errors) as f64 / total;
            let polls = r.polls as f64 / tasks as f64;
            let cpu_us = r.cpu.server_cpu.as_secs_f64() * 1e6 / tasks as f64;
            let cpu = percent(r.cpu.server_cpu, r.total);
            let busy = self.busy(&r.cpu.cores, true, r.total);
            let header = format!("tasks (`slow_compute` `seconds: {seconds}`), all started at once | total s | tasks/s | polls/task | server CPU/task µs | server process CPU | server core busy | errors");
            let cells = format!("{total:.2} | {per_second:.0} | {polls:.2} | {cpu_us:.1} | {cpu:.0} % | {busy} | {errors}");
            let lines = vec![line(tasks.to_string(), cells, r.tally.failed())];
            out.table("### Lifecycle (row 4)", &header, lines);
        }
        let mut lines = Vec::new();
        let stored = "5a stored completed (`slow_compute` `seconds: 0`)";
        let parked = "5b parked in `input_required` (`confirm_delete`)";
        for (name, m) in [(stored, &self.stored), (parked, &self.parked)] {
            let Some(m) = m else { continue };
            let (count, before, after) = (m.count, mib(m.rss_before), mib(m.rss_after));
            let per_task = m.per_task();
            let beyond = or_dash(m.payload_bytes.map(|p| per_task - p as f64), 0);
            let payload = or_dash(m.payload_bytes.map(|p| p as f64), 0);
            let (created, errors) = (count as f64 / m.create_time.as_secs_f64(), m.tally.errors);
            let cells = format!("{count} | {before} | {after} | {per_task:.0} | {payload} | {beyond} | {created:.0} | {errors}");
            lines.push(line(name, cells, m.tally.failed()));
        }
        out.table("### Memory (row 5)", "row | tasks added | RSS before MiB | RSS after MiB | RSS/task bytes | payload bytes | beyond payload bytes | created/s | errors", lines);
        if let Some(s) = &self.stored_sqlite {
            let per_task = |bytes: u64| format!("{:.0}", bytes as f64 / s.tasks.max(1) as f64);
            let (db, wal) = (mib(s.db_bytes), mib(s.wal_bytes));
            let running = per_task(s.db_bytes + s.wal_bytes);
            let closed = s
                .closed_bytes
                .map_or("— (WAL left behind)".into(), per_task);
            let (tasks, m) = (s.tasks, &s.stored);
            let (rss, errors) = (m.per_task(), m.tally.errors);
            let created = m.count as f64 / m.create_time.as_secs_f64();
            let cells = format!("{tasks} | {db} | {wal} | {running} | {closed} | {rss:.0} | {created:.0} | {errors}");
            let name = "7d stored completed (`slow_compute` `seconds: 0`), SQLite FULL";
            let lines = vec![line(name, cells, m.tally.failed())];
            out.table("### Database size (row 7d)", "row | tasks in database | `tasks.db` MiB | `tasks.db-wal` MiB | (db + WAL) / task bytes | `tasks.db` after a clean stop / task bytes | RSS/task bytes | created/s | errors", lines);
        }
    }

    /// Rows 8c and 8d.
    fn render_cluster(&self, out: &mut Out) {
        let spread = |d: &[Duration]| [0.5, 0.9, 0.99, 1.0].map(|q| ms(d, q)).join(" / ");
        let levels = self.resume.iter().flatten().map(|l| {
            let (tasks, errors) = (l.tasks, l.tally.errors);
            let [acknowledged, on_runner, on_answerer] = &l.latencies;
            let ack = [0.5, 0.99].map(|q| ms(acknowledged, q)).join(" / ");
            let (runner, answerer) = (spread(on_runner), spread(on_answerer));
            let per_second = l.tasks as f64 / l.total.as_secs_f64();
            let cells = [
                tasks.to_string(),
                ack,
                runner,
                answerer,
                format!("{per_second:.0}"),
            ];
            let cells = format!("{} | {errors}", cells.join(" | "));
            line(l.concurrency.to_string(), cells, l.tally.failed())
        });
        let title = "### Cross-node resume (row 8c)\n\n`confirm_delete` created on node A and parked (not measured), then answered with `tasks/update` on node B, so many at once; latency from sending the update to the terminal view of a `subscriptions/listen` watch opened beforehand on A (which runs the task) and on B (one more hint)";
        out.table(title, "tasks at once | tasks | update acknowledged p50 / p99 ms | completed, seen on A: p50 / p90 / p99 / max ms | completed, seen on B: p50 / p90 / p99 / max ms | answers/s | errors", levels.collect());
        let Some(t) = &self.takeover else { return };
        let lease = t.lease.as_secs_f64();
        // The offsets, tasks, takeover times and errors of a kill, or of all (no offsets).
        let cells = |offsets: [Option<Duration>; 2], tasks: usize, sorted: &[Duration], errors| {
            let ([start_b, kill], rerun) = (offsets.map(secs), sorted.len());
            let [min, p50, max] = [0.0, 0.5, 1.0].map(|q| secs(quantile(sorted, q)));
            let beyond = |max: Duration| format!("{:+.2}", max.as_secs_f64() - lease);
            let beyond = quantile(sorted, 1.0).map_or("—".into(), beyond);
            format!("{start_b} | {kill} | {tasks} | {rerun} | {min} | {p50} | {max} | {lease:.2} | {beyond} | {errors}")
        };
        let mut lines = Vec::new();
        for (i, r) in t.rounds.iter().enumerate() {
            let offsets = [Some(r.offsets.start_b), Some(r.offsets.kill)];
            let row = cells(offsets, r.tasks, &r.taken_over, r.tally.errors);
            lines.push(line((i + 1).to_string(), row, r.tally.failed()));
        }
        let tasks = t.rounds.iter().map(|r| r.tasks).sum();
        let errors: u64 = t.rounds.iter().map(|r| r.tally.errors).sum();
        // Each kill's errors are counted on its own line.
        let all = cells([None; 2], tasks, &t.all(), errors);
        lines.push(line("all", all, (0, None)));
        let (steps, step_ms) = t.steps;
        let title = format!("### Takeover (row 8d)\n\nTwo nodes with `--lease-ms {}`; `resumable_job` (`steps: {steps}`, `stepMs: {step_ms}`) tasks started on A; A killed with SIGKILL once B's watches showed them all running; time from the kill to each task's first `(attempt 2)` status on B. Each kill starts B and kills A at its own offsets (shares of a tick, a third of the lease, at most 2 s); the worst case is the lease plus one tick", t.lease.as_millis());
        out.table(&title, "kill | B started after A s | kill after tasks seen s | tasks | re-run on B | min s | p50 s | max s | lease s | max − lease s | errors", lines);
    }

    fn render_latency(&self, out: &mut Out) {
        let Some((version, runs)) = &self.latency else {
            return;
        };
        let names = [Row::Baseline, Row::Get, Row::Create].map(Row::title);
        let mut lines = Vec::new();
        for (name, r) in runs.iter().flat_map(|three| names.iter().zip(three)) {
            let (rate, rps, max) = (r.rate.unwrap_or_default(), r.rps(), or_dash(r.max_ms, 3));
            let mark = if r.kept_rate() { "" } else { " ‡" };
            let quantiles = [0.5, 0.9, 0.99, 0.999].map(|q| format!("{:.3}", r.latency_ms(q)));
            let (cpu, client) = (
                percent(r.server_cpu, r.window),
                percent(r.client_cpu, r.window),
            );
            let (cpu_us, quantiles) = (r.micros_per_request(r.server_cpu), quantiles.join(" | "));
            let cells = format!("{rps:.0}{mark} | {quantiles} | {max} | {cpu:.0} % | {cpu_us:.1} | {client:.0} % | {}", r.errors);
            lines.push(line(
                format!("{rate} | {name}"),
                cells,
                (r.errors, r.first_error.as_deref()),
            ));
        }
        let title = format!("### Open-loop latency (row 9)\n\n{version}, `-q <rate> --latency-correction`, on the load generator's CPU; one run per rate and server after a warm-up at that rate; a request's latency counts from when it was due to be sent; no disturbance check (one run each). answered/s: HTTP 200 answers in the window over its length; server CPU: share of one core, and per answer (10 ms ticks of `/proc`). ‡: below 95 % of the rate, the server did not keep up, and requests due but never sent are in no quantile");
        out.table(&title, "rate, requests/s | row | answered/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | server CPU | server CPU µs/request | oha CPU | errors", lines);
    }

    fn render_targets(&self, out: &mut Out) {
        let t = |row| self.throughput.series.get(&row);
        let rps = |row| t(row).and_then(Series::median).map(Run::rps);
        let clean = |row| t(row).is_none_or(|s| s.errors() == 0);
        let mut lines = Vec::new();
        // `cells`: the target and what was reached.
        let mut add = |cells: String, met: bool| {
            let (what, reached) = cells.split_once(" | ").unwrap_or_default();
            let met = if met { "yes" } else { "**no**" };
            lines.push(line(what, format!("{reached} | {met}"), (0, None)));
        };
        for (row, of, goal, stretch) in THROUGHPUT_TARGETS {
            let (x, what, reached) = match of {
                Some(of) => (ratio(t(row), t(of)), format!("{goal} × `{}`", of.name()), 2),
                None => (rps(row), format!("{goal:.0}"), 0),
            };
            let Some(x) = x else { continue };
            let stretch = if stretch { " (stretch)" } else { "" };
            let cells = format!(
                "`{}` ≥ {what} requests/s{stretch} | {x:.reached$}",
                row.name()
            );
            add(cells, x >= goal && clean(row) && of.is_none_or(clean));
        }
        if let Some(m) = &self.stored {
            let (per_task, bound) = (m.per_task(), STORED_TARGET_BYTES);
            let what = "bytes RSS per stored small completed task";
            let met = per_task <= bound && m.tally.errors == 0;
            add(format!("≤ {bound} {what} | {per_task:.0} bytes"), met);
        }
        if let Some(m) = &self.parked {
            let (count, errors) = (m.count + 1, m.tally.errors);
            let cells = format!("{count} parked tasks without errors | {errors} errors");
            add(cells, errors == 0);
        }
        let stored = self
            .stored
            .iter()
            .map(|m| (format!("with {} stored", m.count), m));
        let parked = self.parked.iter().map(|m| ("on a parked task".into(), m));
        for (what, m) in stored.chain(parked) {
            let Some([idle, loaded]) = &m.gets else {
                continue;
            };
            let Some(x) = ratio(Some(loaded), Some(idle)) else {
                continue;
            };
            let cells = format!("`tasks/get` {what} within 20 % of idle | {x:.2} of idle");
            add(cells, x >= 0.8 && idle.errors() + loaded.errors() == 0);
        }
        for level in self.resume.iter().flatten() {
            let p99 = quantile(&level.latencies[1], 0.99).unwrap_or(Duration::MAX);
            let (bound, at_once) = (RESUME_P99.as_millis(), level.concurrency);
            let what = format!("cross-node update-to-resume p99 < {bound} ms, {at_once} at once");
            let p99_ms = ms(&level.latencies[1], 0.99);
            let met = level.tally.errors == 0 && p99 < RESUME_P99;
            add(format!("{what} | {p99_ms} ms"), met);
        }
        if let Some((t, Some(max))) = self.takeover.as_ref().map(|t| (t, quantile(&t.all(), 1.0))) {
            let errors: u64 = t.rounds.iter().map(|r| r.tally.errors).sum();
            let (bound, margin) = (t.lease + TAKEOVER_MARGIN, TAKEOVER_MARGIN.as_secs());
            let (bound_s, max_s) = (bound.as_secs_f64(), max.as_secs_f64());
            let cells =
                format!("takeover ≤ lease + {margin} s ({bound_s:.1} s) | {max_s:.2} s at most");
            add(cells, errors == 0 && max <= bound);
        }
        out.table("### Targets", "target | reached | met", lines);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::Tally;
    use crate::takeover::{Offsets, TakeoverRound};

    #[test]
    fn quantiles_by_nearest_rank() {
        let s = Duration::from_secs;
        assert_eq!(quantile(&[], 0.5), None);
        let sorted = [s(1), s(2), s(3), s(4)];
        assert_eq!(quantile(&sorted, 0.0), Some(s(1)));
        assert_eq!(quantile(&sorted, 0.5), Some(s(2)));
        assert_eq!(quantile(&sorted, 0.99), Some(s(4)));
    }

    #[test]
    fn cluster_tables_targets_and_errors() {
        let ms = |v: &[u64]| v.iter().map(|&m| Duration::from_millis(m)).collect();
        let s = Duration::from_secs;
        let mut failed = Tally::default();
        failed.fail("1 tasks not re-run");
        let level = ResumeLevel {
            concurrency: 4,
            tasks: 3,
            latencies: [ms(&[2, 2, 3]), ms(&[10, 11, 60]), ms(&[14, 15, 70])],
            total: s(1),
            tally: Tally::default(),
        };
        let offsets = Offsets {
            start_b: Duration::ZERO,
            kill: Duration::from_millis(500),
        };
        let round = TakeoverRound {
            tasks: 2,
            offsets,
            taken_over: vec![s(5), s(7)],
            tally: failed,
        };
        let mut throughput = Throughput::default();
        for (row, requests) in [(Row::Baseline, 1000), (Row::Get, 500)] {
            let run = Run {
                requests,
                window: s(1),
                ..Run::default()
            };
            let series = throughput.series.entry(row).or_default();
            series.push(run, &Pinning::default());
        }
        let mut rmcp = Series::default();
        let run = Run {
            requests: 250,
            window: s(1),
            ..Run::default()
        };
        rmcp.push(run, &Pinning::default());
        throughput.peers.insert(("rmcp", Row::Get), rmcp);
        let report = Report {
            throughput,
            resume: Some(vec![level]),
            takeover: Some(TakeoverResult {
                lease: s(6),
                steps: (40, 500),
                rounds: vec![round],
            }),
            skipped: vec![("8a–8d", "no PostgreSQL".into())],
            ..Report::default()
        };
        let (text, valid) = report.render();
        assert!(
            text.contains("| 4 | 3 | 2.0 / 3.0 | 11.0 / 60.0 / 60.0 / 60.0 |"),
            "{text}"
        );
        assert!(
            text.contains("| 1 | 0.00 | 0.50 | 2 | 2 | 5.00 | 5.00 | 7.00 | 6.00 | +1.00 | 1 |"),
            "{text}"
        );
        assert!(
            text.contains("| all | — | — | 2 | 2 | 5.00 | 5.00 | 7.00 | 6.00 | +1.00 | 1 |"),
            "{text}"
        );
        assert!(text
            .contains("| cross-node update-to-resume p99 < 50 ms, 4 at once | 60.0 ms | **no** |"));
        assert!(text.contains("| takeover ≤ lease + 2 s (8.0 s) | 7.00 s at most | **no** |"));
        assert!(text.contains("- 1: `1 tasks not re-run`"), "{text}");
        assert!(text.contains("- rows 8a–8d skipped: no PostgreSQL"));
        assert!(text.contains("| `get` ≥ 0.8 × `baseline` requests/s | 0.50 | **no** |"));
        assert!(text.contains("| 2 `tasks/get`, completed task | 500 | 500–500 | 1/1 |"));
        assert!(text.contains("| ours (`tasks-fixture`) | 500 | 0.0 | 0.50 | 1/1 | — |"));
        assert!(text.contains("| rmcp | 250 | 0.0 | 0.25 | 1/1 | — | — | — | — | 0 |"));
        assert!(!valid);
    }
}
