//! The PostgreSQL database of rows 8a–8d: whether it is reachable, a fresh schema per row
//! (dropped at the end of the run), and the server processes (sessions) that serve one
//! fixture, whose CPU time the throughput rows report.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio_postgres::{Client, NoTls};

/// How long connecting may take before the database counts as unreachable.
const CONNECT_LIMIT: Duration = Duration::from_secs(5);

/// A reachable database: its URL and an administrative session.
pub(crate) struct Database {
    url: String,
    admin: Client,
}

impl Database {
    /// Connects to `url`; the error says why the database is unreachable.
    pub(crate) async fn connect(url: &str) -> Result<Database, String> {
        let shown = tasks_store_postgres::redacted(url);
        let connecting = tokio_postgres::connect(url, NoTls);
        let (admin, connection) = match tokio::time::timeout(CONNECT_LIMIT, connecting).await {
            Ok(Ok(pair)) => pair,
            Ok(Err(error)) => {
                let cause = std::error::Error::source(&error).map(|c| format!(": {c}"));
                let cause = cause.unwrap_or_default();
                return Err(format!("no PostgreSQL at {shown} ({error}{cause})"));
            }
            Err(_) => return Err(format!("no PostgreSQL at {shown} (timed out)")),
        };
        tokio::spawn(connection);
        let url = url.to_owned();
        Ok(Database { url, admin })
    }

    /// The URL a fixture named `name` connects with: its sessions carry `application_name`
    /// `name` (and the store's listener and notifier `<name>-listen`, `<name>-notify`).
    pub(crate) fn url_for(&self, name: &str) -> String {
        let separator = if self.url.contains('?') { '&' } else { '?' };
        format!("{}{separator}application_name={name}", self.url)
    }

    /// The URL without its password, and the server version (`SHOW server_version`), for
    /// the report.
    pub(crate) async fn describe(&self) -> Result<String, String> {
        let row = self.admin.query_one("SHOW server_version", &[]).await;
        let version: String = row.map_err(|e| format!("server_version: {e}"))?.get(0);
        let shown = tasks_store_postgres::redacted(&self.url);
        Ok(format!("{shown}, PostgreSQL {version}"))
    }

    /// A fresh schema name for `row`, `tasks_bench_<pid>_<n>_<row>` (at most 63 bytes), for one
    /// row's fixtures (they create its tables); a schema of that name left by a killed earlier
    /// run is dropped first, and [`Database::drop_schemas`] drops it at the end of the run.
    pub(crate) async fn schema(&self, row: &str) -> Result<String, String> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let mut name = format!("{}{n}_{}", schema_prefix(), row.replace('-', "_"));
        name.truncate(63);
        drop_schema(&self.admin, &name).await?;
        Ok(name)
    }

    /// Drops every schema of this run ([`Database::schema`]) with everything in it; call it
    /// once their fixtures have stopped.
    pub(crate) async fn drop_schemas(&self) -> Result<(), String> {
        let query = "SELECT nspname::text FROM pg_namespace WHERE left(nspname, length($1)) = $1";
        let rows = self.admin.query(query, &[&schema_prefix()]).await;
        for row in rows.map_err(|e| format!("pg_namespace: {e}"))? {
            drop_schema(&self.admin, row.get(0)).await?;
        }
        Ok(())
    }

    /// The process ids of the sessions whose `application_name` is `name`, `<name>-listen` or
    /// `<name>-notify`: the database server processes working for that fixture.
    pub(crate) async fn sessions(&self, name: &str) -> Result<Vec<u32>, String> {
        let query = "SELECT pid FROM pg_stat_activity \
            WHERE application_name = $1 OR application_name IN ($1 || '-listen', $1 || '-notify')";
        let rows = self.admin.query(query, &[&name]).await;
        let rows = rows.map_err(|e| format!("pg_stat_activity: {e}"))?;
        Ok(rows
            .iter()
            .filter_map(|row| u32::try_from(row.get::<_, i32>(0)).ok())
            .collect())
    }
}

/// The start of this run's schema names: `tasks_bench_<pid>_`.
fn schema_prefix() -> String {
    format!("tasks_bench_{}_", std::process::id())
}

async fn drop_schema(client: &Client, name: &str) -> Result<(), String> {
    let sql = format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE");
    let dropped = client.batch_execute(&sql).await;
    dropped.map_err(|e| format!("drop schema {name}: {e}"))
}
