//! The markdown report: run setup, one table per kind of row, and the targets; the
//! durable store's section is in [`sqlite`], PostgreSQL's in [`postgres`].

mod latency;
mod postgres;
mod sqlite;

use std::fmt::Write as _;
use std::time::Duration;

use crate::cli::RunArgs;
use crate::durable::StoredSqliteResult;
use crate::fsync::FsyncLatency;
use crate::latency::LatencyResult;
use crate::lifecycle::LifecycleResult;
use crate::load::LoadSpec;
use crate::memory::{Gets, MemoryResult, ParkedResult, StoredResult};
use crate::pin::Pinning;
use crate::procfs;
use crate::resume::ResumeResult;
use crate::series::Series;
use crate::suite::FIXTURE_LIMITS;
use crate::takeover::TakeoverResult;

/// Largest resident memory per stored small completed task, payload included (a target
/// since round 2 of docs/benchmarks.md, as are the two below).
const STORED_TARGET_BYTES: f64 = 512.0;
/// Least `tasks/get` requests/s against the baseline's.
const GET_TARGET_RATIO: f64 = 0.8;
/// Least creation requests/s against the baseline's.
const CREATE_TARGET_RATIO: f64 = 0.5;

/// How the run was set up: the report's header, and the CPU sets for the busy columns.
#[derive(Debug)]
pub(crate) struct Setup {
    lines: Vec<String>,
    pinning: Pinning,
}

impl Setup {
    /// Describes the machine and the settings of this run.
    pub(crate) fn describe(args: &RunArgs, pinning: &Pinning, spec: LoadSpec) -> Self {
        let (model, cpus) = procfs::cpu_model();
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0));
        let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let loadavg: Vec<&str> = loadavg.split_whitespace().take(3).collect();
        let lines = vec![
            format!("date: {}", tasks_core::Timestamp::from_unix_millis(now)),
            format!("machine: {model}, {cpus} logical CPUs, Linux {}", kernel.trim()),
            format!("load average at start (1, 5, 15 min): {}", loadavg.join(", ")),
            format!("pinning: {}", pinning.describe()),
            format!(
                "server runtime: {} tokio worker thread(s), fixture (`--worker-threads`) and baseline alike",
                args.server_threads
            ),
            format!(
                "throughput rows: {}, {} keep-alive HTTP/1.1 connections, one request in flight on each, {} ms warm-up, {} ms window, interleaved rounds until {} clean runs per row (at most {}; a run is disturbed when other processes took over {:.0} % of a core on the pinned CPUs), median of the clean runs shown; {}",
                "wrk (one thread; its CPU is the generator column)",
                spec.connections,
                spec.warmup.as_millis(),
                spec.duration.as_millis(),
                args.rounds,
                2 * args.rounds,
                crate::series::DISTURBED_PERCENT,
                "wrk reads no bodies: one response checked in full before each wrk run, then wrk's non-2xx and socket errors and the fixture's request counters by JSON-RPC code"
            ),
            format!("fixture flags: `{}`", FIXTURE_LIMITS.join(" ")),
        ];
        Setup {
            lines,
            pinning: pinning.clone(),
        }
    }

    /// Mean busy percentage of `cpus` over `window`, or `—` when unpinned.
    fn busy(&self, cores: &[Duration], cpus: &[usize], window: Duration) -> String {
        if cpus.is_empty() {
            return "—".to_owned();
        }
        let busy: f64 = cpus
            .iter()
            .map(|&cpu| cores.get(cpu).map_or(0.0, Duration::as_secs_f64))
            .sum();
        format!(
            "{:.0} %",
            100.0 * busy / (cpus.len() as f64 * window.as_secs_f64())
        )
    }
}

/// Everything one run measured; rows not run stay empty.
#[derive(Debug)]
pub(crate) struct Report {
    setup: Setup,
    /// Size of the fixture's `tasks/get` response body, which the baseline serves.
    pub get_response_bytes: Option<usize>,
    /// Row 1.
    pub baseline: Series,
    /// Row 2.
    pub get: Series,
    /// Row 3.
    pub create: Series,
    /// Row 4.
    pub lifecycle: Option<LifecycleResult>,
    /// Row 5a.
    pub stored: Option<StoredResult>,
    /// Row 5b.
    pub parked: Option<ParkedResult>,
    /// The fsync latency of the disk the SQLite databases are on.
    pub fsync: Option<FsyncLatency>,
    /// Row 7a.
    pub get_sqlite: Series,
    /// Row 7b.
    pub create_sqlite: Series,
    /// Row 7c.
    pub create_sqlite_normal: Series,
    /// Row 7d.
    pub stored_sqlite: Option<StoredSqliteResult>,
    /// Why rows 8a–8d were skipped (the database was unreachable).
    pub postgres_skipped: Option<String>,
    /// The database of rows 8a–8d, without password.
    pub postgres_url: Option<String>,
    /// Its server version.
    pub postgres_version: Option<String>,
    /// Row 8a.
    pub get_postgres: Series,
    /// Row 8b.
    pub create_postgres: Series,
    /// Row 8c.
    pub resume: Option<ResumeResult>,
    /// Row 8d.
    pub takeover: Option<TakeoverResult>,
    /// Row 9.
    pub latency: Option<LatencyResult>,
    /// Why row 9 was skipped (oha does not run).
    pub latency_skipped: Option<String>,
}

impl Report {
    /// An empty report.
    pub(crate) fn new(setup: Setup) -> Self {
        Report {
            setup,
            get_response_bytes: None,
            baseline: Series::default(),
            get: Series::default(),
            create: Series::default(),
            lifecycle: None,
            stored: None,
            parked: None,
            fsync: None,
            get_sqlite: Series::default(),
            create_sqlite: Series::default(),
            create_sqlite_normal: Series::default(),
            stored_sqlite: None,
            postgres_skipped: None,
            postgres_url: None,
            postgres_version: None,
            get_postgres: Series::default(),
            create_postgres: Series::default(),
            resume: None,
            takeover: None,
            latency: None,
            latency_skipped: None,
        }
    }

    /// Whether no row had errors.
    pub(crate) fn valid(&self) -> bool {
        let series = [
            &self.baseline,
            &self.get,
            &self.create,
            &self.get_sqlite,
            &self.create_sqlite,
            &self.create_sqlite_normal,
        ];
        series.iter().all(|s| s.errors() == 0)
            && self.lifecycle.as_ref().is_none_or(|r| r.errors == 0)
            && self
                .stored
                .as_ref()
                .is_none_or(|r| r.memory.errors + r.gets.as_ref().map_or(0, Gets::errors) == 0)
            && self
                .parked
                .as_ref()
                .is_none_or(|r| r.memory.errors + r.gets.errors() == 0)
            && self
                .stored_sqlite
                .as_ref()
                .is_none_or(|r| r.stored.memory.errors == 0)
            && self.postgres_valid()
            && self.latency.as_ref().is_none_or(|r| r.errors() == 0)
    }

    /// Median requests/s of `series` over the baseline's.
    fn ratio(&self, series: &Series) -> Option<f64> {
        let base = self.baseline.median()?.rps();
        Some(series.median()?.rps() / base)
    }

    /// The report as markdown.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "### Run\n");
        for line in &self.setup.lines {
            let _ = writeln!(out, "- {line}");
        }
        if let Some(bytes) = self.get_response_bytes {
            let _ = writeln!(
                out,
                "- `tasks/get` response body: {bytes} bytes (the baseline answers with these bytes)"
            );
        }
        self.render_throughput(&mut out);
        self.render_lifecycle(&mut out);
        self.render_memory(&mut out);
        self.render_targets(&mut out);
        self.render_sqlite(&mut out);
        self.render_postgres(&mut out);
        self.render_latency(&mut out);
        self.render_errors(&mut out);
        out
    }

    fn throughput_rows(&self) -> Vec<(String, &Series)> {
        let mut rows = vec![
            (
                "1 baseline: bare hyper, fixed response".into(),
                &self.baseline,
            ),
            ("2 `tasks/get`, completed task".into(), &self.get),
            (
                "3 creation: `tools/call` `slow_compute` `seconds: 0`".into(),
                &self.create,
            ),
        ];
        if let Some(gets) = self.stored.as_ref().and_then(|s| s.gets.as_ref()) {
            let count = self.stored.as_ref().map_or(0, |s| s.memory.count);
            rows.push((
                "5a `tasks/get`, completed task, no other task".into(),
                &gets.idle,
            ));
            rows.push((
                format!("5a `tasks/get`, same task, {} stored", thousands(count)),
                &gets.loaded,
            ));
        }
        if let Some(p) = &self.parked {
            rows.push((
                "5b `tasks/get`, parked task, no other task".into(),
                &p.gets.idle,
            ));
            rows.push((
                format!(
                    "5b `tasks/get`, same task, {} parked",
                    thousands(p.memory.count + 1)
                ),
                &p.gets.loaded,
            ));
        }
        rows.retain(|(_, series)| series.len() > 0);
        rows
    }

    fn render_throughput(&self, out: &mut String) {
        let rows = self.throughput_rows();
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n### Throughput (rows 1, 2, 3, 5a, 5b)\n");
        let _ = writeln!(
            out,
            "| row | requests/s | range | clean runs | p50 ms | p99 ms | vs baseline | server CPU µs/request | server process CPU | server core busy | generator process CPU | generator core busy | errors |"
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for (name, series) in rows {
            let Some(r) = series.median() else { continue };
            let (low, high) = series.rps_range();
            let ratio = self
                .ratio(series)
                .map_or("—".to_owned(), |x| format!("{x:.2}"));
            let pinning = &self.setup.pinning;
            let _ = writeln!(
                out,
                "| {name} | {:.0} | {low:.0}–{high:.0} | {}/{} | {:.3} | {:.3} | {ratio} | {:.1} | {:.0} % | {} | {:.0} % | {} | {} |",
                r.rps(),
                series.clean(),
                series.len(),
                r.latency_ms(0.5),
                r.latency_ms(0.99),
                r.server_micros_per_request(),
                r.server_cpu_percent(),
                self.setup.busy(&r.cores, pinning.server_cpus(), r.window),
                r.client_cpu_percent(),
                self.setup.busy(&r.cores, pinning.client_cpus(), r.window),
                series.errors()
            );
        }
    }

    fn render_lifecycle(&self, out: &mut String) {
        let Some(r) = &self.lifecycle else { return };
        let _ = writeln!(out, "\n### Lifecycle (row 4)\n");
        let _ = writeln!(
            out,
            "| tasks (`slow_compute` `seconds: {}`), all started at once | total s | tasks/s | polls/task | server CPU/task µs | server process CPU | server core busy | errors |",
            r.seconds
        );
        let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|---:|");
        let _ = writeln!(
            out,
            "| {} | {:.2} | {:.0} | {:.2} | {:.1} | {:.0} % | {} | {} |",
            r.tasks,
            r.total.as_secs_f64(),
            r.tasks_per_second(),
            r.polls_per_task(),
            r.cpu_per_task_micros(),
            100.0 * r.server_cpu.as_secs_f64() / r.total.as_secs_f64(),
            self.setup
                .busy(&r.cores, self.setup.pinning.server_cpus(), r.total),
            r.errors
        );
    }

    fn render_memory(&self, out: &mut String) {
        if self.stored.is_none() && self.parked.is_none() {
            return;
        }
        let _ = writeln!(out, "\n### Memory (row 5)\n");
        let _ = writeln!(out, "| row | tasks added | RSS before MiB | RSS after MiB | RSS/task bytes | payload bytes | beyond payload bytes | created/s | errors |");
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        if let Some(s) = &self.stored {
            memory_line(
                out,
                "5a stored completed (`slow_compute` `seconds: 0`)",
                &s.memory,
                Some(s.payload_bytes),
            );
        }
        if let Some(p) = &self.parked {
            memory_line(
                out,
                "5b parked in `input_required` (`confirm_delete`)",
                &p.memory,
                None,
            );
        }
    }

    fn render_targets(&self, out: &mut String) {
        let mut targets: Vec<(String, String, bool)> = Vec::new();
        if let Some(ratio) = self.ratio(&self.get) {
            let ok = ratio >= GET_TARGET_RATIO && self.get.errors() + self.baseline.errors() == 0;
            targets.push((
                format!("`tasks/get` ≥ {GET_TARGET_RATIO} × baseline requests/s"),
                format!("{ratio:.2}"),
                ok,
            ));
        }
        if let Some(ratio) = self.ratio(&self.create) {
            let ok =
                ratio >= CREATE_TARGET_RATIO && self.create.errors() + self.baseline.errors() == 0;
            targets.push((
                format!("creation ≥ {CREATE_TARGET_RATIO} × baseline requests/s"),
                format!("{ratio:.2}"),
                ok,
            ));
        }
        if let Some(s) = &self.stored {
            let per_task = s.memory.per_task();
            targets.push((
                format!("≤ {STORED_TARGET_BYTES} bytes RSS per stored small completed task"),
                format!("{per_task:.0} bytes"),
                per_task <= STORED_TARGET_BYTES && s.memory.errors == 0,
            ));
            if let Some(gets) = &s.gets {
                if let (Some(idle), Some(loaded)) = (gets.idle.median(), gets.loaded.median()) {
                    let ratio = loaded.rps() / idle.rps();
                    targets.push((
                        format!(
                            "`tasks/get` with {} stored within 20 % of idle",
                            thousands(s.memory.count)
                        ),
                        format!("{ratio:.2} of idle"),
                        ratio >= 0.8 && gets.errors() == 0,
                    ));
                }
            }
        }
        if let Some(p) = &self.parked {
            targets.push((
                format!("{} parked tasks without errors", p.memory.count + 1),
                format!("{} errors", p.memory.errors),
                p.memory.errors == 0,
            ));
            if let (Some(idle), Some(loaded)) = (p.gets.idle.median(), p.gets.loaded.median()) {
                let ratio = loaded.rps() / idle.rps();
                targets.push((
                    "`tasks/get` on a parked task within 20 % of idle".into(),
                    format!("{ratio:.2} of idle"),
                    ratio >= 0.8 && p.gets.errors() == 0,
                ));
            }
        }
        if targets.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n### Targets\n");
        let _ = writeln!(out, "| target | reached | met |");
        let _ = writeln!(out, "|---|---:|---|");
        for (target, reached, met) in targets {
            let met = if met { "yes" } else { "**no**" };
            let _ = writeln!(out, "| {target} | {reached} | {met} |");
        }
    }

    fn render_errors(&self, out: &mut String) {
        let mut all: Vec<(&str, Option<&str>)> = vec![
            ("baseline", self.baseline.first_error()),
            ("tasks/get", self.get.first_error()),
            ("creation", self.create.first_error()),
        ];
        if let Some(r) = &self.lifecycle {
            all.push(("lifecycle", r.first_error.as_deref()));
        }
        if let Some(r) = &self.stored {
            all.push(("stored", r.memory.first_error.as_deref()));
            if let Some(gets) = &r.gets {
                all.push(("stored tasks/get idle", gets.idle.first_error()));
                all.push(("stored tasks/get loaded", gets.loaded.first_error()));
            }
        }
        if let Some(r) = &self.parked {
            all.push(("parked", r.memory.first_error.as_deref()));
            all.push(("parked tasks/get idle", r.gets.idle.first_error()));
            all.push(("parked tasks/get loaded", r.gets.loaded.first_error()));
        }
        all.push(("tasks/get, SQLite", self.get_sqlite.first_error()));
        all.push(("creation, SQLite FULL", self.create_sqlite.first_error()));
        all.push((
            "creation, SQLite NORMAL",
            self.create_sqlite_normal.first_error(),
        ));
        if let Some(r) = &self.stored_sqlite {
            all.push(("stored, SQLite", r.stored.memory.first_error.as_deref()));
        }
        all.extend(self.postgres_errors());
        if let Some(r) = &self.latency {
            all.push(("open-loop latency", r.first_error()));
        }
        let firsts: Vec<(&str, &str)> = all
            .into_iter()
            .filter_map(|(name, error)| error.map(|e| (name, e)))
            .collect();
        if firsts.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n### First errors (rows with errors are invalid)\n");
        for (name, error) in firsts {
            let short: String = error.chars().take(300).collect();
            let _ = writeln!(out, "- {name}: `{short}`");
        }
    }
}

fn memory_line(out: &mut String, name: &str, m: &MemoryResult, payload: Option<usize>) {
    let per_task = m.per_task();
    let (payload, beyond) = match payload {
        Some(p) => (p.to_string(), format!("{:.0}", per_task - p as f64)),
        None => ("—".to_owned(), "—".to_owned()),
    };
    let _ = writeln!(
        out,
        "| {name} | {} | {:.1} | {:.1} | {per_task:.0} | {payload} | {beyond} | {:.0} | {} |",
        m.count,
        mib(m.rss_before),
        mib(m.rss_after),
        m.count as f64 / m.create_time.as_secs_f64(),
        m.errors
    );
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
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
