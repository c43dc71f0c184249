//! Fixtures on PostgreSQL (rows 8a–8d): one or more nodes on a fresh schema, sharing a secret
//! file, as `docs/deployment.md` runs them. The nodes are stopped before the schema is dropped
//! and the secret file removed (fields drop in declaration order).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::database::{Database, TempSchema};
use crate::server::ServerProcess;

/// One fixture process of a cluster.
pub(crate) struct Node {
    /// The running fixture.
    pub server: ServerProcess,
    /// The `application_name` of its database sessions (see [`Database::sessions`]).
    pub app: String,
}

/// Nodes on one schema.
pub(crate) struct Cluster {
    /// The nodes, in start order (dropped first: stopped before the schema goes).
    pub nodes: Vec<Node>,
    schema: TempSchema,
    secret: SecretFile,
}

impl Cluster {
    /// A cluster with no node yet on `schema`, its secret file `<dir>/<name>-<pid>.secret`
    /// (created by the first node to start).
    pub(crate) fn new(schema: TempSchema, dir: &Path, name: &str) -> Cluster {
        let path = dir.join(format!("{name}-{}.secret", std::process::id()));
        let _ = std::fs::remove_file(&path); // a killed earlier run's
        Cluster {
            nodes: Vec::new(),
            schema,
            secret: SecretFile(path),
        }
    }

    /// The `application_name` of node `node`: unique to this process, so a concurrent run's
    /// sessions are never counted.
    pub(crate) fn app_name(node: &str) -> String {
        format!("tasks-bench-{}-{node}", std::process::id())
    }

    /// The fixture flags of a node whose sessions are named `app`: the shared database,
    /// schema and secret, `--drain-ms 0` (a stopping node hands its tasks over at once), and
    /// `--lease-ms` when given.
    pub(crate) fn flags(
        &self,
        database: &Database,
        app: &str,
        lease_ms: Option<u64>,
    ) -> Vec<OsString> {
        let mut flags: Vec<OsString> = vec![
            "--store".into(),
            database.url_for(app).into(),
            "--postgres-schema".into(),
            self.schema.name().into(),
            "--secret-file".into(),
            self.secret.0.clone().into(),
            "--drain-ms".into(),
            "0".into(),
        ];
        if let Some(lease_ms) = lease_ms {
            flags.extend(["--lease-ms".into(), lease_ms.to_string().into()]);
        }
        flags
    }

    /// Node `i` (in start order).
    pub(crate) fn node(&self, i: usize) -> Result<&Node, String> {
        self.nodes.get(i).ok_or_else(|| format!("no node {i}"))
    }
}

/// The shared secret file, removed when dropped.
struct SecretFile(PathBuf);

impl Drop for SecretFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_carry_this_process() {
        let app = Cluster::app_name("fixture-create-postgres-12");
        assert!(app.contains(&std::process::id().to_string()));
        assert!(app.len() + "-listen".len() <= 63, "fits application_name");
    }
}
