//! The servers of a run as child processes (fixtures on the memory store, SQLite or PostgreSQL,
//! the baseline, the peers), each stopped when dropped, and measuring one. What a store leaves
//! is removed once its servers have stopped (fields drop in declaration order).

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::cli::{Row, RunArgs};
use crate::database::Database;
use crate::generator::{self, Call, Generator, LoadSpec, Run};
use crate::pin::Pinning;
use crate::procfs;
use crate::series::Series;

/// Fixture flags of every row.
pub(crate) const FIXTURE_LIMITS: &str =
    "--max-tasks 10000000 --max-active-per-scope 10000000 --max-workers 1000000 --ttl-ms 0";

pub(crate) struct Servers<'a> {
    pub args: &'a RunArgs,
    pub pinning: &'a Pinning,
    pub spec: LoadSpec,
    pub logs: PathBuf,
    pub fixture: PathBuf,
    /// Where SQLite fixtures get their fresh directories.
    pub sqlite_dir: PathBuf,
    /// The PostgreSQL database, when a PostgreSQL row runs.
    pub database: Option<Database>,
}

/// A running server child process (the fixture, or the baseline), its stdout kept open so it
/// never writes to a closed pipe, and what its store leaves, removed once it has stopped (the
/// fields drop after [`Fixture::stop`]).
pub(crate) struct Fixture {
    child: Child,
    _stdout: ChildStdout,
    url: String,
    name: String,
    /// The `application_name` of a PostgreSQL node's sessions.
    pub app: Option<String>,
    /// The fresh directory of a SQLite fixture's database, or of a lone PostgreSQL node's
    /// secret file.
    pub dir: Option<TempDir>,
}

/// Nodes on one schema, stopped before the directory of their secret file is removed.
pub(crate) struct Cluster {
    pub nodes: Vec<Fixture>,
    schema: String,
    secret: TempDir,
}

impl Cluster {
    /// The URL of node `i` (in start order).
    pub(crate) fn url(&self, i: usize) -> Result<&str, String> {
        let node = self.nodes.get(i).ok_or(format!("no node {i}"))?;
        Ok(node.url())
    }
}

impl Servers<'_> {
    /// A fixture on the store `row` measures: the memory store, SQLite (`--sqlite-synchronous
    /// normal` for row 7c, else `full`, every acknowledged write fsynced) or PostgreSQL.
    pub(crate) async fn for_row(&self, row: Row, name: &str) -> Result<Fixture, String> {
        if !row.is_sqlite() && !row.is_postgres() {
            return self.fixture(name);
        }
        if row.is_postgres() {
            let mut cluster = self.cluster(name).await?;
            self.add_node(&mut cluster, name, None)?;
            let mut node = cluster.nodes.pop().ok_or("no node")?;
            node.dir = Some(cluster.secret);
            return Ok(node);
        }
        let dir = temp_dir(&format!("sqlite-{name}-"), &self.sqlite_dir)?;
        let mut store = OsString::from("sqlite:");
        store.push(dir.path().join("tasks.db"));
        let sync = ["full", "normal"][usize::from(row == Row::CreateSqliteNormal)];
        let flags = format!("--sqlite-synchronous {sync}");
        let mut fixture = self.start(name, &self.fixture, &flags, vec![("--store", store)])?;
        fixture.dir = Some(dir);
        Ok(fixture)
    }

    pub(crate) fn fixture(&self, name: &str) -> Result<Fixture, String> {
        self.start(name, &self.fixture, "", Vec::new())
    }

    /// The bare hyper baseline, answering every request with `body`.
    pub(crate) fn baseline(&self, name: &str, body: &[u8]) -> Result<Fixture, String> {
        let file = self.logs.join(format!("{name}-body.json"));
        fs::write(&file, body).map_err(|e| format!("{}: {e}", file.display()))?;
        let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
        let body = vec![("--body-file", file.into())];
        self.start(name, &exe, "baseline-server", body)
    }

    /// The peer server `peer-<peer>` of the `--peers` directory, on its library's in-memory
    /// task store.
    pub(crate) fn peer(&self, peer: &str, name: &str) -> Result<Fixture, String> {
        let dir = self.args.peers.as_deref().ok_or("no --peers")?;
        self.start(name, &dir.join(format!("peer-{peer}")), "", Vec::new())
    }

    pub(crate) fn database(&self) -> Result<&Database, String> {
        let database = self.database.as_ref();
        database.ok_or("no PostgreSQL database".into())
    }

    /// A cluster with no node yet, on a fresh schema; its secret file is created by the first
    /// node to start, in a fresh directory.
    pub(crate) async fn cluster(&self, name: &str) -> Result<Cluster, String> {
        let schema = self.database()?.schema(name).await?;
        let secret = temp_dir(&format!("{name}-secret-"), &self.logs)?;
        Ok(Cluster {
            nodes: Vec::new(),
            schema,
            secret,
        })
    }

    /// Starts fixture `node` as one more node of `cluster`, with `--drain-ms 0` (a stopping
    /// node hands its tasks over at once) and `--lease-ms` when given. Its sessions'
    /// `application_name` carries this process's id, so a concurrent run's are never counted.
    pub(crate) fn add_node(
        &self,
        cluster: &mut Cluster,
        node: &str,
        lease: Option<u64>,
    ) -> Result<(), String> {
        let app = format!("tasks-bench-{}-{node}", std::process::id());
        let lease = lease.map_or(String::new(), |ms| format!(" --lease-ms {ms}"));
        let flags = format!("--postgres-schema {} --drain-ms 0{lease}", cluster.schema);
        let store = self.database()?.url_for(&app).into();
        let values = vec![
            ("--store", store),
            ("--secret-file", cluster.secret.path().join("secret").into()),
        ];
        let mut node = self.start(node, &self.fixture, &flags, values)?;
        node.app = Some(app);
        cluster.nodes.push(node);
        Ok(())
    }

    /// Starts `program` (the fixture, or this binary for the baseline) with `flags` (separated
    /// by spaces) and each flag of `values` with its value, listening on a free port, with
    /// `--server-threads` worker threads; its stderr goes to `<name>.log` in the log folder.
    fn start(
        &self,
        name: &str,
        program: &Path,
        flags: &str,
        values: Vec<(&str, OsString)>,
    ) -> Result<Fixture, String> {
        let mut command = self.pinning.server_command(program);
        command.args(flags.split_whitespace());
        for (flag, value) in values {
            command.arg(flag).arg(value);
        }
        let threads = self.args.server_threads;
        command.args(format!("--listen 127.0.0.1:0 --worker-threads {threads}").split(' '));
        if program == self.fixture.as_path() {
            command.args(FIXTURE_LIMITS.split(' '));
        }
        Fixture::start(name, command, &self.logs.join(format!("{name}.log")))
    }

    /// One run of `call` against `fixture` (reading its database sessions' CPU time too).
    pub(crate) async fn measure(
        &self,
        fixture: &Fixture,
        call: &Call,
        generator: Generator<'_>,
    ) -> Result<Run, String> {
        let app = fixture.app.as_deref();
        let sessions = app
            .map(|app| Ok::<_, String>((self.database()?, app)))
            .transpose()?;
        let (url, watch) = (fixture.url(), (fixture.pid(), sessions));
        generator::measure(url, call, self.spec, generator, watch, &self.logs).await
    }

    /// wrk runs of `call` against `fixture` until `--rounds` are clean (see [`Series::wants_more`]).
    pub(crate) async fn series(&self, fixture: &Fixture, call: &Call) -> Result<Series, String> {
        let mut series = Series::default();
        while series.wants_more(self.args.rounds) {
            let run = self.measure(fixture, call, Generator::Wrk).await?;
            series.push(run, self.pinning);
        }
        Ok(series)
    }
}

/// A fresh directory in `parent` whose name starts with `prefix`, removed with everything in it
/// when dropped.
fn temp_dir(prefix: &str, parent: &Path) -> Result<TempDir, String> {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir_in(parent);
    dir.map_err(|e| format!("{}: {e}", parent.display()))
}

/// Where server logs go: `<target dir>/<profile>/tasks-bench-logs/`, next to this binary.
pub(crate) fn log_dir() -> PathBuf {
    let exe = std::env::current_exe().ok();
    let base = exe.as_deref().and_then(Path::parent).map(Path::to_path_buf);
    base.unwrap_or_else(std::env::temp_dir)
        .join("tasks-bench-logs")
}

/// How long a server may take to print its URL, and to stop after SIGTERM.
const START_LIMIT: Duration = Duration::from_secs(30);
const STOP_LIMIT: Duration = Duration::from_secs(10);

impl Fixture {
    /// Starts `command` (its stderr goes to `log`) and waits for its first stdout line, the URL.
    fn start(name: &str, mut command: Command, log: &Path) -> Result<Self, String> {
        let log_file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let command = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        let stdout = child.stdout.take().ok_or(format!("{name}: no stdout"))?;
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let (mut reader, mut line) = (BufReader::new(stdout), String::new());
            let read = reader.read_line(&mut line).map(|_| line.trim().to_owned());
            let _ = sender.send((read, reader.into_inner()));
        });
        let seen = match receiver.recv_timeout(START_LIMIT) {
            Ok((Ok(url), _stdout)) if url.starts_with("http://") => {
                let name = name.to_owned();
                return Ok(Fixture {
                    child,
                    _stdout,
                    url,
                    name,
                    app: None,
                    dir: None,
                });
            }
            Ok((Ok(line), _)) => format!("printed {line:?}"),
            Ok((Err(e), _)) => e.to_string(),
            Err(_) => "timed out".to_owned(),
        };
        let _ = child.kill();
        let _ = child.wait();
        Err(format!(
            "{name} did not print its URL ({seen}); see {}",
            log.display()
        ))
    }

    /// The URL the server printed (`http://127.0.0.1:<port>/mcp`).
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The process id (of the server itself: `taskset -c` execs it in place).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server at once (SIGKILL: no graceful stop, no hand-over) and reaps it; the
    /// instant just before the signal was sent.
    pub(crate) fn kill(&mut self) -> Result<tokio::time::Instant, String> {
        let at = tokio::time::Instant::now();
        let name = &self.name;
        self.child
            .kill()
            .map_err(|e| format!("kill -9 {name}: {e}"))?;
        self.child.wait().map_err(|e| format!("reap {name}: {e}"))?;
        Ok(at)
    }

    /// Its resident memory (`VmRSS`) in bytes.
    pub(crate) fn rss(&self) -> Result<u64, String> {
        procfs::rss_bytes(self.pid()).map_err(|e| format!("{}: {e}", self.name))
    }

    /// Asks the server to stop (SIGTERM, so it shuts down gracefully and tools such as
    /// valgrind wrapped around it write their reports), kills it after [`STOP_LIMIT`], and
    /// reaps it; nothing once it has been reaped.
    pub(crate) fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return; // already reaped (killed): its pid may be another process's by now
        }
        let term = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status();
        let deadline = Instant::now() + STOP_LIMIT;
        while term.as_ref().is_ok_and(|s| s.success()) && Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.stop();
    }
}
