//! One measured run of wrk or oha, and what no load generator reads around it: CPU clocks,
//! one response checked in full ([`Call::checked`]) and the fixture's request counters
//! (docs/benchmarks.md, "Load generators"). A [`Call`] is the exact request a generator repeats.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use tasks_core::protocol::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use tasks_core::protocol::{PROTOCOL_VERSION, TASKS_EXTENSION};

use crate::database::Database;
use crate::procfs;

/// The name (`comm`, cut to 15 bytes) of the SQLite store's writer thread.
const WRITER_THREAD: &str = "tasks-sqlite-wr";
/// Time a generator may run beyond its window before it is killed.
const GRACE: Duration = Duration::from_secs(60);
/// The oha release whose JSON summary this reads.
pub(crate) const OHA_VERSION: &str = "1.16.0";

/// Shape of one run: keep-alive connections (one request in flight each), the warm-up (not
/// counted), the measurement window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadSpec {
    pub connections: usize,
    pub warmup: Duration,
    pub duration: Duration,
}

/// wrk (closed loop), or the oha binary at a rate in requests per second (open loop).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Generator<'a> {
    Wrk,
    Oha(&'a Path, u32),
}

/// Whose CPU time a run reads: the server's process id, and for a PostgreSQL fixture the
/// database and its sessions' `application_name` ([`Database::sessions`]).
pub(crate) type Watch<'a> = (u32, Option<(&'a Database, &'a str)>);

/// What one run measured.
#[derive(Debug, Default)]
pub(crate) struct Run {
    /// Successful answers inside the window.
    pub requests: u64,
    /// Failed requests (a row with errors is invalid), and the first failure.
    pub errors: u64,
    pub first_error: Option<String>,
    pub window: Duration,
    /// Latency quantiles `(q, ms)` as the generator reports them, and the slowest.
    pub quantiles: Vec<(f64, f64)>,
    pub max_ms: Option<f64>,
    /// oha's fixed rate.
    pub rate: Option<u32>,
    /// CPU time during the window: the server, the generator, the server's SQLite writer
    /// thread and its database sessions (when it has them).
    pub server_cpu: Duration,
    pub client_cpu: Duration,
    pub writer_cpu: Option<Duration>,
    pub database_cpu: Option<Duration>,
    /// Busy time of each CPU during the window ([`procfs::per_cpu_busy`]).
    pub cores: Vec<Duration>,
}

/// `part` as a percentage of one core over `window`.
pub(crate) fn percent(part: Duration, window: Duration) -> f64 {
    100.0 * part.as_secs_f64() / window.as_secs_f64().max(1e-9)
}

impl Run {
    pub(crate) fn rps(&self) -> f64 {
        self.requests as f64 / self.window.as_secs_f64().max(1e-9)
    }

    /// Latency quantile `q` in milliseconds (the first reported at or above it).
    pub(crate) fn latency_ms(&self, q: f64) -> f64 {
        let found = self.quantiles.iter().find(|(at, _)| *at >= q - 1e-9);
        found.map_or(f64::NAN, |(_, ms)| *ms)
    }

    /// `cpu` per counted request, in microseconds.
    pub(crate) fn micros_per_request(&self, cpu: Duration) -> f64 {
        cpu.as_secs_f64() * 1e6 / self.requests.max(1) as f64
    }

    /// Whether an open-loop run answered at least 95 % of its rate (when it did not, requests
    /// due but never sent are in no quantile, so the upper ones are capped near the window).
    pub(crate) fn kept_rate(&self) -> bool {
        self.rate
            .is_none_or(|rate| self.rps() >= 0.95 * f64::from(rate))
    }

    /// CPU time, in percent of one core, that the pinned cores were busy beyond what the
    /// server, the generator and the fixture's database sessions used: other processes' work.
    /// `None` when unpinned.
    pub(crate) fn foreign_cpu_percent(&self, server: &[usize], client: &[usize]) -> Option<f64> {
        if server.is_empty() || client.is_empty() {
            return None;
        }
        let busy = |cpus: &[usize], own: Duration| {
            let on = |&cpu: &usize| self.cores.get(cpu).map_or(0.0, Duration::as_secs_f64);
            (cpus.iter().map(on).sum::<f64>() - own.as_secs_f64()).max(0.0)
        };
        let database = self.database_cpu.unwrap_or_default().as_secs_f64();
        let foreign = busy(server, self.server_cpu) + busy(client, self.client_cpu) - database;
        Some(percent(
            Duration::from_secs_f64(foreign.max(0.0)),
            self.window,
        ))
    }

    fn fail(&mut self, failed: u64, why: String) {
        self.errors = self.errors.max(failed);
        self.first_error.get_or_insert(why);
    }
}

/// CPU clocks at one instant: a server's, its SQLite writer thread's, its database sessions',
/// and each CPU's busy time.
pub(crate) struct Clocks(
    Duration,
    Option<Duration>,
    Option<BTreeMap<u32, Duration>>,
    Vec<Duration>,
);

impl Clocks {
    pub(crate) fn read(pid: u32, sessions: Option<&[u32]>) -> Result<Self, String> {
        let (server, sessions) = (
            procfs::cpu_time(&pid.to_string())?,
            sessions.map(procfs::cpu_times),
        );
        let (writer, cores) = (
            procfs::thread_cpu_time(pid, WRITER_THREAD)?,
            procfs::per_cpu_busy()?,
        );
        Ok(Clocks(server, writer, sessions, cores))
    }

    /// Fills `run`'s CPU figures with the clocks since `before`.
    pub(crate) fn since(&self, before: &Clocks, run: &mut Run) {
        run.server_cpu = self.0.saturating_sub(before.0);
        run.writer_cpu = self.1.zip(before.1).map(|(a, b)| a.saturating_sub(b));
        let sessions = before.2.as_ref().zip(self.2.as_ref());
        run.database_cpu = sessions.map(|(b, a)| procfs::cpu_used(b, a));
        let start = |i| before.3.get(i).copied().unwrap_or_default();
        let cores = self.3.iter().enumerate();
        run.cores = cores.map(|(i, now)| now.saturating_sub(start(i))).collect();
    }
}

/// Sends `call` to `url` with `generator` under `spec`, checking one response first and the
/// fixture's counters around the window; reads what `watch` names. The generator's script or
/// body file goes to `logs`.
pub(crate) async fn measure(
    url: &str,
    call: &Call,
    spec: LoadSpec,
    generator: Generator<'_>,
    (pid, database): Watch<'_>,
    logs: &Path,
) -> Result<Run, String> {
    call.checked(url).await?;
    let stem = call.method.replace('/', "-");
    let (file, text) = match generator {
        Generator::Wrk => (logs.join(format!("wrk-{stem}.lua")), call.wrk_script()),
        Generator::Oha(..) => (logs.join(format!("oha-{stem}.json")), call.body.clone()),
    };
    std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    let once = |window| generate(generator, call, url, &file, spec.connections, window);
    if !spec.warmup.is_zero() {
        once(spec.warmup).await?;
    }
    let counted = Counts::read(url, call.method).await?;
    let sessions = match database {
        Some((database, name)) => Some(database.sessions(name).await?),
        None => None,
    };
    let before = Clocks::read(pid, sessions.as_deref())?;
    let mut run = once(spec.duration).await?;
    Clocks::read(pid, sessions.as_deref())?.since(&before, &mut run);
    if let Some(before) = counted {
        let after = Counts::read(url, call.method).await?.unwrap_or(before);
        // The generator's count leaves out up to one request per connection cut off at the end.
        let cut_off = u64::try_from(spec.connections).unwrap_or(u64::MAX);
        if let Some((failed, why)) = before.failures_until(after, run.requests, cut_off) {
            run.fail(failed, why);
        }
    }
    if run.requests == 0 || run.quantiles.iter().any(|(_, ms)| !ms.is_finite()) {
        let why = "the generator counted no answer, or no latency quantiles";
        run.fail(1, why.into());
    }
    Ok(run)
}

/// One run of the generator for `window`: its summary and own CPU time.
async fn generate(
    generator: Generator<'_>,
    call: &Call,
    url: &str,
    file: &Path,
    connections: usize,
    window: Duration,
) -> Result<Run, String> {
    let seconds = format!("{}s", window.as_secs_f64().ceil().max(1.0));
    let (program, rate) = match generator {
        Generator::Wrk => (Path::new("wrk"), None),
        Generator::Oha(oha, rate) => (oha, Some(rate)),
    };
    let args = match rate {
        None => format!("-c {connections} -t1 -d {seconds} -s"),
        Some(rate) => format!("-c {connections} --no-tui --output-format json --latency-correction -q {rate} -z {seconds} -m POST -D"),
    };
    let mut command = tokio::process::Command::new(program);
    command.args(args.split(' ')).arg(file).arg(url);
    for (name, value) in call.headers().iter().filter(|_| rate.is_some()) {
        command.arg("-H").arg(format!("{name}: {value}"));
    }
    let (name, limit) = (program.display().to_string(), window + GRACE);
    let before = procfs::children_cpu_time()?;
    let output = command.stdin(Stdio::null()).kill_on_drop(true).output();
    let output = match tokio::time::timeout(limit, output).await {
        Ok(output) => output.map_err(|e| format!("{name}: {e}"))?,
        Err(_) => return Err(format!("{name} still ran after {limit:?}: killed")),
    };
    let cpu = procfs::children_cpu_time()?.saturating_sub(before);
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "{name} failed ({}): {}",
            output.status,
            stderr.trim()
        ));
    }
    let mut run = parse_summary(&stdout, rate)?;
    run.client_cpu = cpu;
    Ok(run)
}

/// The parts of a JSON summary used here (times in seconds): oha's `--output-format json`, or
/// what the wrk script prints in the same shape after wrk's own text.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    summary: Totals,
    latency_percentiles: BTreeMap<String, Option<f64>>,
    status_code_distribution: BTreeMap<String, u64>,
    error_distribution: BTreeMap<String, u64>,
}

#[derive(Debug, Deserialize)]
struct Totals {
    total: f64,
    slowest: Option<f64>,
}

/// A summary as a run: 200 answers counted, other statuses and errors failed (except the
/// requests oha's deadline cut off at the end).
fn parse_summary(stdout: &str, rate: Option<u32>) -> Result<Run, String> {
    let json = stdout.find('{').map_or("", |start| &stdout[start..]);
    let summary: Summary = serde_json::from_str(json)
        .map_err(|e| format!("the generator's summary: {e}: {stdout}"))?;
    let mut run = Run {
        rate,
        window: Duration::from_secs_f64(summary.summary.total.max(0.0)),
        max_ms: summary.summary.slowest.map(|s| s * 1000.0),
        ..Run::default()
    };
    for (q, name) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99.9")] {
        let seconds = summary.latency_percentiles.get(name).copied().flatten();
        let ms = seconds.map_or(f64::NAN, |s| s * 1000.0);
        run.quantiles.push((q, ms));
    }
    for (status, count) in summary.status_code_distribution {
        match status.as_str() {
            "200" => run.requests += count,
            _ => run.fail(run.errors + count, format!("HTTP {status} {count} times")),
        }
    }
    for (error, count) in summary.error_distribution {
        if count > 0 && error != "aborted due to deadline" {
            run.fail(run.errors + count, format!("{error} ({count} times)"));
        }
    }
    Ok(run)
}

/// Whether `oha` runs, and its `--version` line (which must name oha).
pub(crate) fn oha_version(oha: &Path) -> Option<String> {
    let output = std::process::Command::new(oha)
        .arg("--version")
        .output()
        .ok()?;
    let line = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && line.starts_with("oha ")).then_some(line)
}

/// A fixture's `mcp_requests_total` counters of one method: answered with a result, and with
/// any JSON-RPC error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    ok: u64,
    other: u64,
}

impl Counts {
    /// The counters of `method` at the server of `url`; `None` for a server without them.
    async fn read(url: &str, method: &str) -> Result<Option<Self>, String> {
        let metrics = format!(
            "{}/metrics",
            url.rsplit_once('/').map_or(url, |(base, _)| base)
        );
        let text = async { reqwest::get(&metrics).await?.text().await };
        let text = text.await.map_err(|e| format!("{metrics}: {e}"))?;
        Ok(Self::parse(&text, method))
    }

    fn parse(text: &str, method: &str) -> Option<Self> {
        let label = format!("method=\"{method}\"");
        let mut counts = text
            .contains("mcp_requests_total")
            .then_some(Counts { ok: 0, other: 0 })?;
        for line in text
            .lines()
            .filter(|l| l.starts_with("mcp_requests_total{") && l.contains(&label))
        {
            let count: u64 = line
                .rsplit(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            match line.contains("code=\"ok\"") {
                true => counts.ok += count,
                false => counts.other += count,
            }
        }
        Some(counts)
    }

    /// Compared with `after`, for a run whose generator counted `answered` successes and may
    /// have cut off `cut_off` requests the server still counted: the failed requests and why,
    /// when the server counted any error or fewer `ok` answers than the generator.
    fn failures_until(self, after: Self, answered: u64, cut_off: u64) -> Option<(u64, String)> {
        let ok = after.ok.saturating_sub(self.ok);
        let other = after.other.saturating_sub(self.other);
        (other > 0 || ok.saturating_add(cut_off) < answered).then(|| {
            let why = format!("the server counted {ok} ok and {other} failed of the generator's {answered} requests");
            (other.max(1), why)
        })
    }
}

/// One prepared request, sent unchanged as often as needed (the protocol is stateless, so a
/// repeated `tools/call` creates a new task), and the `status` every answer must show (`None`:
/// a `CreateTaskResult`).
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub method: &'static str,
    name: String,
    pub body: String,
    expect: Option<&'static str>,
}

impl Call {
    /// `tasks/get` of `task_id`, in `status`.
    pub(crate) fn tasks_get(task_id: &str, status: &'static str) -> Self {
        Call::new(
            "tasks/get",
            task_id,
            json!({"taskId": task_id}),
            Some(status),
        )
    }

    /// The creation request of rows 3, 7b, 7c, 8b and 9: `slow_compute` with `seconds: 0`.
    pub(crate) fn create() -> Self {
        let params = json!({"name": "slow_compute", "arguments": {"seconds": 0}});
        Call::new("tools/call", "slow_compute", params, None)
    }

    fn new(
        method: &'static str,
        name: &str,
        mut params: Value,
        expect: Option<&'static str>,
    ) -> Self {
        params["_meta"] = json!({
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: {"extensions": {TASKS_EXTENSION: {}}},
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let (name, body) = (name.to_owned(), body.to_string());
        Call {
            method,
            name,
            body,
            expect,
        }
    }

    /// The headers besides `Host`, as every generator sends them.
    pub(crate) fn headers(&self) -> [(&'static str, &str); 5] {
        [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", PROTOCOL_VERSION),
            ("Mcp-Method", self.method),
            ("Mcp-Name", &self.name),
        ]
    }

    /// A wrk Lua script sending this call on every request (wrk sets `Host` from the URL); its
    /// `done` hook prints the summary in the shape of oha's JSON (times in seconds).
    pub(crate) fn wrk_script(&self) -> String {
        let mut script = format!("wrk.method = \"POST\"\nwrk.body = [==[{}]==]\n", self.body);
        for (name, value) in self.headers() {
            script.push_str(&format!("wrk.headers[\"{name}\"] = \"{value}\"\n"));
        }
        script
            + "function done(s, latency, requests)\n\
               local e, p = s.errors, function(q) return latency:percentile(q) / 1e6 end\n\
               io.write(string.format('{\"summary\": {\"total\": %f, \"slowest\": %f}, \
               \"latencyPercentiles\": {\"p50\": %f, \"p90\": %f, \"p99\": %f, \"p99.9\": %f}, \
               \"statusCodeDistribution\": {\"200\": %d}, \
               \"errorDistribution\": {\"wrk: non-2xx answers\": %d, \"wrk: socket errors\": %d}}\\n', \
               s.duration / 1e6, latency.max / 1e6, p(50), p(90), p(99), p(99.9), \
               s.requests - e.status, e.status, e.connect + e.read + e.write + e.timeout))\n\
             end\n"
    }

    /// Sends this call to `url` once and checks the answer in full (HTTP 200, a JSON-RPC
    /// `result` of the expected shape and no `error`); the raw body.
    pub(crate) async fn checked(&self, url: &str) -> Result<Vec<u8>, String> {
        let mut request = reqwest::Client::new().post(url).body(self.body.clone());
        for (name, value) in self.headers() {
            request = request.header(name, value);
        }
        let response = request.send().await.map_err(|e| format!("{url}: {e}"))?;
        let status = response.status().as_u16();
        let body = response.bytes().await.map_err(|e| format!("{url}: {e}"))?;
        let method = self.method;
        self.check(status, &body)
            .map_err(|why| format!("{method} {url}: {why}"))?;
        Ok(body.to_vec())
    }

    fn check(&self, http: u16, body: &[u8]) -> Result<(), String> {
        let reply: Value = serde_json::from_slice(body).unwrap_or_default();
        let result = &reply["result"];
        let shape = match self.expect {
            None => result["resultType"] == "task" && result["taskId"].is_string(),
            Some(status) => result["resultType"] == "complete" && result["status"] == status,
        };
        if http == 200 && reply.get("error").is_none() && shape {
            return Ok(());
        }
        let wanted = self.expect.unwrap_or("a created task");
        Err(format!(
            "HTTP {http}, wanted {wanted}: {}",
            String::from_utf8_lossy(body)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_carries_the_routing_headers_and_meta() {
        let body: Value = serde_json::from_str(&Call::create().body).unwrap();
        assert_eq!(body["params"]["name"], "slow_compute");
        let meta = &body["params"]["_meta"];
        assert_eq!(
            meta[META_CLIENT_CAPABILITIES]["extensions"][TASKS_EXTENSION],
            json!({})
        );
        let script = Call::tasks_get("abc", "completed").wrk_script();
        assert!(script.contains("wrk.headers[\"Mcp-Name\"] = \"abc\""));
        assert!(script.contains("wrk.headers[\"Mcp-Method\"] = \"tasks/get\""));
    }

    #[test]
    fn only_a_200_result_of_the_expected_shape_passes() {
        let (get, create) = (Call::tasks_get("t", "completed"), Call::create());
        let done = br#"{"result":{"resultType":"complete","taskId":"t","status":"completed"}}"#;
        assert!(get.check(200, done).is_ok() && get.check(400, done).is_err());
        assert!(create.check(200, done).is_err());
        let created = br#"{"result":{"resultType":"task","taskId":"t","status":"working"}}"#;
        assert!(create.check(200, created).is_ok());
        let error = br#"{"error":{"code":-32602,"message":"x"}}"#;
        assert!(get.check(200, error).is_err() && create.check(200, b"not json").is_err());
    }

    #[test]
    fn json_summaries_are_read() {
        let printed = r#"{"summary": {"total": 5.0, "slowest": 0.0183},
            "latencyPercentiles": {"p50": 0.00041, "p90": 0.0007, "p99": 0.0021, "p99.9": 0.0093},
            "statusCodeDistribution": {"200": 99950, "503": 2},
            "errorDistribution": {"aborted due to deadline": 12, "connection closed": 1}}"#;
        let run = parse_summary(printed, Some(20_000)).unwrap();
        assert_eq!((run.requests, run.errors), (99_950, 3));
        assert_eq!(run.first_error.as_deref(), Some("HTTP 503 2 times"));
        assert!((run.latency_ms(0.999) - 9.3).abs() < 1e-9 && run.kept_rate());
        let wrk = "Running 5s test\n  Requests/sec: 1\n{\"summary\": {\"total\": 5.0, \"slowest\": 0.01}, \
            \"latencyPercentiles\": {\"p50\": 0.000263}, \"statusCodeDistribution\": {\"200\": 700000}, \
            \"errorDistribution\": {\"wrk: non-2xx answers\": 0, \"wrk: socket errors\": 3}}\n";
        let run = parse_summary(wrk, None).unwrap();
        assert_eq!(
            (run.requests, run.errors, run.latency_ms(0.5)),
            (700_000, 3, 0.263)
        );
        assert!(parse_summary("no summary", None).is_err());
    }

    #[test]
    fn the_server_s_counters_must_match_the_generator_s() {
        let text = "mcp_requests_total{method=\"tasks/get\",code=\"ok\"} 700\n\
                    mcp_requests_total{method=\"tasks/get\",code=\"-32602\"} 2\n";
        assert_eq!(
            Counts::parse(text, "tasks/get"),
            Some(Counts { ok: 700, other: 2 })
        );
        assert_eq!(Counts::parse("hello", "tasks/get"), None);
        let (before, after) = (Counts { ok: 10, other: 1 }, Counts { ok: 1010, other: 1 });
        assert_eq!(before.failures_until(after, 1064, 64), None);
        assert_eq!(before.failures_until(after, 1065, 64).map(|f| f.0), Some(1));
        let errors = Counts { ok: 1010, other: 4 };
        assert_eq!(
            before.failures_until(errors, 1000, 64).map(|f| f.0),
            Some(3)
        );
    }

    #[test]
    fn the_fixture_s_database_sessions_are_not_foreign() {
        let secs = Duration::from_secs_f64;
        let mut run = Run {
            requests: 100,
            window: secs(1.0),
            server_cpu: secs(0.5),
            client_cpu: secs(0.3),
            cores: vec![secs(0.6), secs(0.6)],
            ..Run::default()
        };
        let foreign = |run: &Run| run.foreign_cpu_percent(&[0], &[1]).unwrap();
        assert!((foreign(&run) - 40.0).abs() < 1e-6, "0.1 + 0.3 s foreign");
        run.database_cpu = Some(secs(0.35));
        assert!((foreign(&run) - 5.0).abs() < 1e-6);
        assert_eq!(run.foreign_cpu_percent(&[], &[1]), None, "unpinned");
    }
}
