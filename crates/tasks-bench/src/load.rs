//! The load generator every throughput row uses: a fixed number of keep-alive connections,
//! each sending the same prepared request back to back (closed loop); a warm-up, then a fixed
//! measurement window. Latencies go into an HDR histogram (microseconds); every response is
//! checked, and any failure counts as an error.

use std::time::Duration;

use hdrhistogram::Histogram;
use tokio::time::Instant;

use crate::conn::{Connection, Endpoint};
use crate::database::Database;
use crate::mcp::{self, Call, Expect};
use crate::procfs;

/// The name (`comm`, cut to 15 bytes) of the SQLite store's writer thread,
/// `tasks-sqlite-writer`.
pub(crate) const WRITER_THREAD: &str = "tasks-sqlite-wr";

/// Which load generator drives the throughput rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Generator {
    /// wrk from Debian's package (see [`crate::wrk`]).
    Wrk,
    /// The in-process generator of this module.
    Builtin,
}

/// Shape of one run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadSpec {
    /// The load generator.
    pub generator: Generator,
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
    /// Latency of the counted requests, in microseconds (in-process generator).
    pub latency: Histogram<u64>,
    /// Latency quantiles `(q, µs)` as wrk reports them, when wrk drove the run.
    pub latency_quantiles: Option<Vec<(f64, f64)>>,
    /// CPU time the server used during the window.
    pub server_cpu: Duration,
    /// CPU time this process (the load generator) used during the window.
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

    /// Latency quantile `q` (0..=1) in milliseconds.
    pub(crate) fn latency_ms(&self, q: f64) -> f64 {
        if let Some(quantiles) = &self.latency_quantiles {
            // The smallest reported quantile at or above q (wrk reports the ones the report
            // asks for).
            return quantiles
                .iter()
                .find(|(at, _)| *at >= q - 1e-9)
                .or(quantiles.last())
                .map_or(0.0, |(_, micros)| micros / 1000.0);
        }
        self.latency.value_at_quantile(q) as f64 / 1000.0
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
    /// (on `server_cpus`), this process (on `client_cpus`) and the fixture's database sessions
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

struct WorkerStats {
    requests: u64,
    errors: u64,
    first_error: Option<String>,
    latency: Histogram<u64>,
}

pub(crate) fn histogram() -> Histogram<u64> {
    // 1 µs to 60 s at 3 significant digits.
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid histogram bounds")
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
    if spec.generator == Generator::Wrk {
        return crate::wrk::run(
            endpoint,
            call,
            expect,
            spec,
            watch,
            &crate::server::log_dir(),
        )
        .await;
    }
    let mut connections = Vec::with_capacity(spec.connections);
    for _ in 0..spec.connections {
        connections.push(Connection::open(endpoint).await?);
    }
    let measure_from = Instant::now() + spec.warmup;
    let until = measure_from + spec.duration;
    let workers: Vec<_> = connections
        .into_iter()
        .map(|connection| {
            let (endpoint, call) = (endpoint.clone(), call.clone());
            tokio::spawn(worker(
                connection,
                endpoint,
                call,
                expect,
                measure_from,
                until,
            ))
        })
        .collect();
    tokio::time::sleep_until(measure_from).await;
    let sessions = match watch.database {
        Some((database, name)) => Some(database.sessions(name).await?),
        None => None,
    };
    let before = CpuReading::take(watch.server_pid, sessions.as_deref())?;
    tokio::time::sleep_until(until).await;
    let after = CpuReading::take(watch.server_pid, sessions.as_deref())?;
    let mut result = LoadResult {
        requests: 0,
        errors: 0,
        first_error: None,
        window: spec.duration,
        latency: histogram(),
        latency_quantiles: None,
        server_cpu: after.server.saturating_sub(before.server),
        client_cpu: after.client.saturating_sub(before.client),
        writer_cpu: after.writer_since(&before),
        database_cpu: after.database_since(&before),
        cores: after.cores_since(&before),
    };
    for worker in workers {
        let stats = worker.await.map_err(|e| format!("load worker: {e}"))?;
        result.requests += stats.requests;
        result.errors += stats.errors;
        if result.first_error.is_none() {
            result.first_error = stats.first_error;
        }
        result
            .latency
            .add(&stats.latency)
            .map_err(|e| format!("histogram: {e}"))?;
    }
    Ok(result)
}

/// CPU times at one instant: the server's, this process's, and each CPU's busy time.
#[derive(Debug, Clone)]
pub(crate) struct CpuReading {
    /// The server process.
    pub server: Duration,
    /// This process (the load generator).
    pub client: Duration,
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
            client: procfs::own_cpu_time().map_err(|e| format!("own CPU time: {e}"))?,
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

async fn worker(
    mut connection: Connection,
    endpoint: Endpoint,
    call: Call,
    expect: Expect,
    measure_from: Instant,
    until: Instant,
) -> WorkerStats {
    let mut stats = WorkerStats {
        requests: 0,
        errors: 0,
        first_error: None,
        latency: histogram(),
    };
    loop {
        let sent = Instant::now();
        if sent >= until {
            break;
        }
        let reply = connection
            .send_or_reconnect(&endpoint, || call.request(&endpoint))
            .await
            .map_err(|e| e.to_string());
        let outcome = match reply {
            Ok(reply) => mcp::summary_of(&reply).and_then(|summary| expect.check(&summary)),
            Err(error) => {
                // The connection is gone: count it, then carry on over a new one.
                match Connection::open(&endpoint).await {
                    Ok(fresh) => connection = fresh,
                    Err(reopen) => {
                        stats.errors += 1;
                        stats
                            .first_error
                            .get_or_insert(format!("{error}; {reopen}"));
                        break;
                    }
                }
                Err(error)
            }
        };
        let done = Instant::now();
        match outcome {
            Ok(()) if done >= measure_from && done <= until => {
                stats.requests += 1;
                let micros = u64::try_from((done - sent).as_micros()).unwrap_or(u64::MAX);
                stats.latency.saturating_record(micros.max(1));
            }
            Ok(()) => {}
            Err(error) => {
                stats.errors += 1;
                stats.first_error.get_or_insert(error);
            }
        }
    }
    stats
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
            latency: histogram(),
            latency_quantiles: None,
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
