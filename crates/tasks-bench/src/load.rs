//! A throughput run: its shape (connections, warm-up, window), what it measured, and the CPU
//! clocks read around it. wrk sends the requests (see [`crate::wrk`]); rows that need what no
//! load generator does (creating tasks and following each to its end: the lifecycle, memory
//! and parked rows) use the harness's own connection pool instead (see [`crate::pool`]).

use std::time::Duration;

use crate::conn::Endpoint;
use crate::database::Database;
use crate::mcp::{Call, Expect};
use crate::procfs;

/// The name (`comm`, cut to 15 bytes) of the SQLite store's writer thread,
/// `tasks-sqlite-writer`.
pub(crate) const WRITER_THREAD: &str = "tasks-sqlite-wr";

/// Shape of one run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadSpec {
    /// Keep-alive connections, each with one request in flight.
    pub connections: usize,
    /// Time before measuring (not counted).
    pub warmup: Duration,
    /// The measurement window.
    pub duration: Duration,
}

/// What one run measured.
#[derive(Debug)]
pub(crate) struct LoadResult {
    /// Successful responses completed inside the window.
    pub requests: u64,
    /// Failed requests, warm-up included (a row with errors is invalid).
    pub errors: u64,
    /// The first failure, for the report.
    pub first_error: Option<String>,
    /// The measurement window.
    pub window: Duration,
    /// Latency quantiles `(q, µs)` as wrk reports them.
    pub latency_quantiles: Vec<(f64, f64)>,
    /// CPU time the server used during the window.
    pub server_cpu: Duration,
    /// CPU time the load generator (wrk) used during the window.
    pub client_cpu: Duration,
    /// CPU time the server's SQLite writer thread used during the window (`None` without one).
    pub writer_cpu: Option<Duration>,
    /// CPU time the database server processes serving the fixture (its PostgreSQL sessions)
    /// used during the window (`None` when the fixture has no database).
    pub database_cpu: Option<Duration>,
    /// Busy time of each CPU during the window (index = CPU number; see
    /// [`procfs::per_cpu_busy`]).
    pub cores: Vec<Duration>,
}

impl LoadResult {
    /// Requests per second.
    pub(crate) fn rps(&self) -> f64 {
        self.requests as f64 / self.window.as_secs_f64()
    }

    /// Latency quantile `q` (0..=1) in milliseconds: the smallest reported quantile at or
    /// above `q` (wrk reports the ones the report asks for).
    pub(crate) fn latency_ms(&self, q: f64) -> f64 {
        self.latency_quantiles
            .iter()
            .find(|(at, _)| *at >= q - 1e-9)
            .or(self.latency_quantiles.last())
            .map_or(0.0, |(_, micros)| micros / 1000.0)
    }

    /// Server CPU use during the window, in percent of one core.
    pub(crate) fn server_cpu_percent(&self) -> f64 {
        100.0 * self.server_cpu.as_secs_f64() / self.window.as_secs_f64()
    }

    /// Load generator CPU use during the window, in percent of one core.
    pub(crate) fn client_cpu_percent(&self) -> f64 {
        100.0 * self.client_cpu.as_secs_f64() / self.window.as_secs_f64()
    }

    /// CPU time, in percent of one core, that the pinned cores were busy beyond what the server
    /// (on `server_cpus`), the load generator (on `client_cpus`) and the fixture's database sessions
    /// (unpinned: on either) used: other processes' work. `None` when unpinned.
    pub(crate) fn foreign_cpu_percent(
        &self,
        server_cpus: &[usize],
        client_cpus: &[usize],
    ) -> Option<f64> {
        if server_cpus.is_empty() || client_cpus.is_empty() {
            return None;
        }
        let busy = |cpus: &[usize]| -> f64 {
            cpus.iter()
                .map(|&cpu| self.cores.get(cpu).map_or(0.0, |d| d.as_secs_f64()))
                .sum()
        };
        let server = (busy(server_cpus) - self.server_cpu.as_secs_f64()).max(0.0);
        let client = (busy(client_cpus) - self.client_cpu.as_secs_f64()).max(0.0);
        let database = self.database_cpu.map_or(0.0, |cpu| cpu.as_secs_f64());
        Some(100.0 * (server + client - database).max(0.0) / self.window.as_secs_f64())
    }

    /// The SQLite writer thread's CPU use during the window, in percent of one core.
    pub(crate) fn writer_cpu_percent(&self) -> Option<f64> {
        self.writer_cpu
            .map(|cpu| 100.0 * cpu.as_secs_f64() / self.window.as_secs_f64())
    }

    /// Server CPU time per counted request, in microseconds.
    pub(crate) fn server_micros_per_request(&self) -> f64 {
        self.server_cpu.as_secs_f64() * 1e6 / self.requests.max(1) as f64
    }

    /// Database CPU time (the fixture's sessions) per counted request, in microseconds.
    pub(crate) fn database_micros_per_request(&self) -> Option<f64> {
        self.database_cpu
            .map(|cpu| cpu.as_secs_f64() * 1e6 / self.requests.max(1) as f64)
    }

    /// The database sessions' CPU use during the window, in percent of one core.
    pub(crate) fn database_cpu_percent(&self) -> Option<f64> {
        self.database_cpu
            .map(|cpu| 100.0 * cpu.as_secs_f64() / self.window.as_secs_f64())
    }
}

/// Whose CPU time a run reads: the server process, and the database sessions of a fixture on
/// PostgreSQL.
#[derive(Clone, Copy)]
pub(crate) struct Watch<'a> {
    /// The server process.
    pub server_pid: u32,
    /// The database and the fixture's `application_name` (see [`Database::sessions`]); its
    /// sessions are looked up when the window opens, after the warm-up has opened them.
    pub database: Option<(&'a Database, &'a str)>,
}

impl Watch<'_> {
    /// Only the server process.
    pub(crate) fn server(server_pid: u32) -> Watch<'static> {
        Watch {
            server_pid,
            database: None,
        }
    }
}

/// Sends `call` to `endpoint` under `spec`, checking each result against `expect`; reads the
/// CPU time of process `server_pid` around the window.
pub(crate) async fn run(
    endpoint: &Endpoint,
    call: &Call,
    expect: Expect,
    spec: LoadSpec,
    server_pid: u32,
) -> Result<LoadResult, String> {
    run_watched(endpoint, call, expect, spec, Watch::server(server_pid)).await
}

/// [`run`], reading the CPU time of what `watch` names around the window.
pub(crate) async fn run_watched(
    endpoint: &Endpoint,
    call: &Call,
    expect: Expect,
    spec: LoadSpec,
    watch: Watch<'_>,
) -> Result<LoadResult, String> {
    crate::wrk::run(
        endpoint,
        call,
        expect,
        spec,
        watch,
        &crate::server::log_dir(),
    )
    .await
}

/// CPU times at one instant: the server's, its SQLite writer's and database sessions', and each
/// CPU's busy time.
#[derive(Debug, Clone)]
pub(crate) struct CpuReading {
    /// The server process.
    pub server: Duration,
    /// The server's SQLite writer thread, if it has one.
    pub writer: Option<Duration>,
    /// Each database session of the server, if it has a database.
    pub database: Option<Vec<(u32, Duration)>>,
    /// Each CPU of the machine.
    pub cores: Vec<Duration>,
}

impl CpuReading {
    /// Reads the clocks; `sessions` are the server's database sessions, if it has a database.
    pub(crate) fn take(server_pid: u32, sessions: Option<&[u32]>) -> Result<Self, String> {
        Ok(CpuReading {
            server: procfs::cpu_time(server_pid).map_err(|e| format!("server CPU time: {e}"))?,
            writer: procfs::thread_cpu_time(server_pid, WRITER_THREAD)
                .map_err(|e| format!("writer thread CPU time: {e}"))?,
            database: sessions.map(procfs::cpu_times),
            cores: procfs::per_cpu_busy().map_err(|e| format!("CPU busy time: {e}"))?,
        })
    }

    /// CPU time the SQLite writer thread used since `before` (`None` without one).
    pub(crate) fn writer_since(&self, before: &CpuReading) -> Option<Duration> {
        self.writer
            .zip(before.writer)
            .map(|(after, before)| after.saturating_sub(before))
    }

    /// CPU time the database sessions used since `before`.
    pub(crate) fn database_since(&self, before: &CpuReading) -> Option<Duration> {
        Some(procfs::cpu_used(
            before.database.as_deref()?,
            self.database.as_deref()?,
        ))
    }

    /// Each CPU's busy time since `before`.
    pub(crate) fn cores_since(&self, before: &CpuReading) -> Vec<Duration> {
        self.cores
            .iter()
            .enumerate()
            .map(|(i, now)| now.saturating_sub(before.cores.get(i).copied().unwrap_or_default()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_s_database_sessions_are_not_foreign() {
        let secs = Duration::from_secs_f64;
        let mut run = LoadResult {
            requests: 100,
            errors: 0,
            first_error: None,
            window: secs(1.0),
            latency_quantiles: Vec::new(),
            server_cpu: secs(0.5),
            client_cpu: secs(0.3),
            writer_cpu: None,
            database_cpu: None,
            cores: vec![secs(0.6), secs(0.6)],
        };
        let foreign = |run: &LoadResult| run.foreign_cpu_percent(&[0], &[1]).unwrap();
        assert!((foreign(&run) - 40.0).abs() < 1e-9, "0.1 + 0.3 s foreign");
        assert_eq!(run.database_micros_per_request(), None);
        run.database_cpu = Some(secs(0.35));
        assert!((foreign(&run) - 5.0).abs() < 1e-9);
        assert!((run.database_micros_per_request().unwrap() - 3500.0).abs() < 1e-6);
        assert!((run.database_cpu_percent().unwrap() - 35.0).abs() < 1e-9);
        run.database_cpu = Some(secs(0.9));
        assert_eq!(foreign(&run), 0.0, "never below zero");
        assert_eq!(run.foreign_cpu_percent(&[], &[1]), None, "unpinned");
    }
}
