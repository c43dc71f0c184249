//! Starting the servers of a run: fixtures on the memory store, on a fresh SQLite database, or
//! as nodes on a fresh PostgreSQL schema, and the bare hyper baseline.
//!
//! Every fixture runs with [`FIXTURE_LIMITS`]: capacity limits far above what a row creates,
//! so no creation is refused, and unlimited TTL, so nothing is reaped during a row. A SQLite
//! fixture also gets `--store sqlite:<fresh dir>/tasks.db` and `--sqlite-synchronous`; the
//! directory is removed once it has stopped. PostgreSQL nodes get the database, a fresh schema
//! and a secret file shared by the nodes of a [`Cluster`] (as `docs/deployment.md` runs them);
//! the schema is dropped once they have stopped (fields drop in declaration order).

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::cli::RunArgs;
use crate::database::{Database, TempSchema};
use crate::generator::{LoadSpec, Watch};
use crate::pin::Pinning;
use crate::server::ServerProcess;

/// Fixture flags of every row.
pub(crate) const FIXTURE_LIMITS: &[&str] = &[
    "--max-tasks",
    "10000000",
    "--max-active-per-scope",
    "10000000",
    "--max-workers",
    "1000000",
    "--ttl-ms",
    "0",
];

/// What starts the servers of a run.
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

/// `--sqlite-synchronous` of a SQLite fixture: `full` (every acknowledged write fsynced, the
/// default) or `normal` (writes survive a crash of the process, not of the machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Synchronous {
    Full,
    Normal,
}

/// A fresh directory holding one fixture's database, removed with everything in it when
/// dropped.
#[derive(Debug)]
pub(crate) struct TempDb {
    pub dir: PathBuf,
}

impl TempDb {
    /// Sizes in bytes of `tasks.db` and `tasks.db-wal` (0 for a file that does not exist).
    pub(crate) fn sizes(&self) -> (u64, u64) {
        let size = |name| fs::metadata(self.dir.join(name)).map_or(0, |meta| meta.len());
        (size("tasks.db"), size("tasks.db-wal"))
    }

    /// Whether `tasks.db-wal` exists (SQLite deletes it when the last connection closes
    /// cleanly, after checkpointing it into the database).
    pub(crate) fn has_wal(&self) -> bool {
        self.dir.join("tasks.db-wal").exists()
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        if let Err(error) = fs::remove_dir_all(&self.dir) {
            eprintln!("cannot remove {}: {error}", self.dir.display());
        }
    }
}

/// A fixture on a SQLite store, stopped before its directory is removed.
pub(crate) struct SqliteFixture {
    pub server: ServerProcess,
    pub db: TempDb,
}

/// One fixture process of a cluster, and the `application_name` of its database sessions.
pub(crate) struct Node {
    pub server: ServerProcess,
    pub app: String,
}

/// Nodes on one schema, stopped before the schema is dropped and the secret file removed.
pub(crate) struct Cluster {
    pub nodes: Vec<Node>,
    schema: TempSchema,
    secret: SecretFile,
}

/// The nodes' shared secret file, removed when dropped.
struct SecretFile(PathBuf);

impl Drop for SecretFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

impl Cluster {
    /// Node `i` (in start order).
    pub(crate) fn node(&self, i: usize) -> Result<&Node, String> {
        self.nodes.get(i).ok_or_else(|| format!("no node {i}"))
    }

    /// What a throughput run of node `i` reads: its process and its database sessions.
    pub(crate) fn watch<'a>(
        &'a self,
        i: usize,
        database: &'a Database,
    ) -> Result<Watch<'a>, String> {
        let node = self.node(i)?;
        let database = Some((database, node.app.as_str()));
        Ok(Watch {
            server_pid: node.server.pid(),
            database,
        })
    }
}

impl Servers<'_> {
    /// A fixture on the memory store.
    pub(crate) fn fixture(&self, name: &str) -> Result<ServerProcess, String> {
        self.start_fixture(name, Vec::new())
    }

    /// A fixture on a fresh SQLite database, `<sqlite dir>/sqlite-<name>-<pid>`.
    pub(crate) fn sqlite(&self, name: &str, sync: Synchronous) -> Result<SqliteFixture, String> {
        let dir = self
            .sqlite_dir
            .join(format!("sqlite-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir); // a killed earlier run's
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let db = TempDb { dir };
        let mut store = OsString::from("sqlite:");
        store.push(db.dir.join("tasks.db"));
        let sync = if sync == Synchronous::Full {
            "full"
        } else {
            "normal"
        };
        let flags = vec![
            "--store".into(),
            store,
            "--sqlite-synchronous".into(),
            sync.into(),
        ];
        let server = self.start_fixture(name, flags)?;
        Ok(SqliteFixture { server, db })
    }

    /// The PostgreSQL database.
    pub(crate) fn database(&self) -> Result<&Database, String> {
        self.database
            .as_ref()
            .ok_or_else(|| "no PostgreSQL database".to_owned())
    }

    /// A cluster with no node yet, on a fresh schema; its secret file is created by the first
    /// node to start.
    pub(crate) async fn cluster(&self, name: &str) -> Result<Cluster, String> {
        let schema = self.database()?.schema(name).await?;
        let path = self
            .logs
            .join(format!("{name}-{}.secret", std::process::id()));
        let _ = fs::remove_file(&path); // a killed earlier run's
        Ok(Cluster {
            nodes: Vec::new(),
            schema,
            secret: SecretFile(path),
        })
    }

    /// Starts fixture `node` as one more node of `cluster`, with `--drain-ms 0` (a stopping
    /// node hands its tasks over at once) and `--lease-ms` when given. Its sessions'
    /// `application_name` carries this process's id, so a concurrent run's are never counted.
    pub(crate) fn add_node(
        &self,
        cluster: &mut Cluster,
        node: &str,
        lease_ms: Option<u64>,
    ) -> Result<(), String> {
        let app = format!("tasks-bench-{}-{node}", std::process::id());
        let mut flags: Vec<OsString> = vec![
            "--store".into(),
            self.database()?.url_for(&app).into(),
            "--postgres-schema".into(),
            cluster.schema.name().into(),
            "--secret-file".into(),
            cluster.secret.0.clone().into(),
            "--drain-ms".into(),
            "0".into(),
        ];
        if let Some(lease_ms) = lease_ms {
            flags.extend(["--lease-ms".into(), lease_ms.to_string().into()]);
        }
        let server = self.start_fixture(node, flags)?;
        cluster.nodes.push(Node { server, app });
        Ok(())
    }

    /// A cluster of one node named `name`.
    pub(crate) async fn postgres(&self, name: &str) -> Result<Cluster, String> {
        let mut cluster = self.cluster(name).await?;
        self.add_node(&mut cluster, name, None)?;
        Ok(cluster)
    }

    fn start_fixture(&self, name: &str, extra: Vec<OsString>) -> Result<ServerProcess, String> {
        let mut command = self.pinning.server_command(&self.fixture);
        command
            .args(["--listen", "127.0.0.1:0", "--worker-threads"])
            .arg(self.args.server_threads.to_string())
            .args(FIXTURE_LIMITS)
            .args(extra);
        ServerProcess::start(name, command, &self.log(name))
    }

    fn log(&self, name: &str) -> PathBuf {
        self.logs.join(format!("{name}.log"))
    }

    /// The bare hyper baseline named `name`, answering every request with `body` (written to
    /// `<name>-body.json` in the log folder).
    pub(crate) fn baseline(&self, name: &str, body: &[u8]) -> Result<ServerProcess, String> {
        let body_file = self.logs.join(format!("{name}-body.json"));
        fs::write(&body_file, body).map_err(|e| format!("{}: {e}", body_file.display()))?;
        let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
        let mut command = self.pinning.server_command(&exe);
        command
            .args([
                "baseline-server",
                "--listen",
                "127.0.0.1:0",
                "--worker-threads",
            ])
            .arg(self.args.server_threads.to_string())
            .arg("--body-file")
            .arg(body_file);
        ServerProcess::start(name, command, &self.log(name))
    }
}

/// Where server logs go: `<target dir>/<profile>/tasks-bench-logs/`, next to this binary.
pub(crate) fn log_dir() -> PathBuf {
    let exe = std::env::current_exe().ok();
    let base = exe.as_deref().and_then(Path::parent).map(Path::to_path_buf);
    base.unwrap_or_else(std::env::temp_dir)
        .join("tasks-bench-logs")
}
