//! The schema: embedded migrations, the `schema_version` table, and the check that the tables
//! are ours. Migrations run in one transaction under an advisory lock keyed on the schema
//! name, so nodes starting together migrate once and the others wait, then find it done.

use tokio_postgres::{Client, Transaction};

use crate::sql::quote;

/// The migrations, in order; migration `i` takes the schema from version `i` to `i + 1`.
/// `{schema}` stands for the quoted schema name.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_init.sql"),
    include_str!("../migrations/0002_pending_counts.sql"),
    include_str!("../migrations/0003_batches.sql"),
    include_str!("../migrations/0004_list_index.sql"),
    include_str!("../migrations/0005_create_leased.sql"),
    include_str!("../migrations/0006_quarantine.sql"),
    include_str!("../migrations/0007_task_origin.sql"),
    include_str!("../migrations/0008_inventory.sql"),
];

/// The newest schema version this build knows.
pub(crate) const LATEST: i64 = MIGRATIONS.len() as i64;

/// The columns each table must have, in order.
const TABLES: &[(&str, &str)] = &[
    (
        "tasks",
        "id,scope,revision,status,created_at_ms,expires_at_ms,task,work,owner_node,generation,\
         attempt,tool,updated_at_ms",
    ),
    (
        "nodes",
        "node_id,lease_expires_at_ms,started_at_ms,renewed_at_ms",
    ),
    ("counts", "id,total"),
    ("scope_counts", "scope,active"),
    ("pending_counts", "token,scope,total,active,since"),
    ("schema_version", "singleton,version"),
    (
        "quarantined_tasks",
        "id,scope,task,work,reason,quarantined_at_ms",
    ),
];

/// Why a schema could not be made current.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// A newer build wrote it (the version found).
    Newer(i64),
    /// Its tables are not the ones this build expects.
    Mismatch(String),
    /// The server refused a statement.
    Sql(tokio_postgres::Error),
}

impl From<tokio_postgres::Error> for Refusal {
    fn from(error: tokio_postgres::Error) -> Self {
        Refusal::Sql(error)
    }
}

/// The advisory lock key of `schema`: FNV-1a (64 bit) of `"mcp-tasks:" + schema`, the same
/// on every node.
fn lock_key(schema: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in "mcp-tasks:".bytes().chain(schema.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(hash.to_ne_bytes())
}

/// Creates the schema if missing and runs the migrations it lacks, in one transaction; then
/// checks the tables. A schema of a newer version is left untouched.
pub(crate) async fn migrate(client: &mut Client, schema: &str) -> Result<(), Refusal> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&lock_key(schema)])
        .await?;
    let version = current_version(&tx, schema).await?;
    if version > LATEST {
        tx.rollback().await?;
        return Err(Refusal::Newer(version));
    }
    let quoted = quote(schema);
    if version < LATEST {
        if version == 0 {
            let exists: bool = tx
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)",
                    &[&schema],
                )
                .await?
                .try_get(0)?;
            if !exists {
                tx.batch_execute(&format!("CREATE SCHEMA {quoted}")).await?;
            }
            tx.batch_execute(&format!(
                "CREATE TABLE IF NOT EXISTS {quoted}.schema_version ( \
                   singleton boolean PRIMARY KEY CHECK (singleton), \
                   version integer NOT NULL CHECK (version >= 0))"
            ))
            .await?;
        }
        let start = usize::try_from(version).unwrap_or(0);
        for migration in &MIGRATIONS[start..] {
            tx.batch_execute(&migration.replace("{schema}", &quoted))
                .await?;
        }
        let latest = i32::try_from(LATEST).unwrap_or(i32::MAX);
        tx.execute(
            &format!(
                "INSERT INTO {quoted}.schema_version (singleton, version) VALUES (true, $1) \
                 ON CONFLICT (singleton) DO UPDATE SET version = excluded.version"
            ),
            &[&latest],
        )
        .await?;
    }
    if let Some(reason) = mismatch(&tx, schema).await? {
        tx.rollback().await?;
        return Err(Refusal::Mismatch(reason));
    }
    tx.commit().await?;
    Ok(())
}

/// The version recorded in the schema; 0 when the schema or its version table is missing.
async fn current_version(tx: &Transaction<'_>, schema: &str) -> Result<i64, Refusal> {
    let table = format!("{}.schema_version", quote(schema));
    let exists: bool = tx
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
        .await?
        .try_get(0)?;
    if !exists {
        return Ok(0);
    }
    let row = tx
        .query_opt(&format!("SELECT version FROM {table} WHERE singleton"), &[])
        .await?;
    Ok(match row {
        Some(row) => i64::from(row.try_get::<_, i32>(0)?),
        None => 0,
    })
}

/// The first table whose columns differ from this build's schema, described.
async fn mismatch(tx: &Transaction<'_>, schema: &str) -> Result<Option<String>, Refusal> {
    for (table, expected) in TABLES {
        let row = tx
            .query_one(
                "SELECT coalesce(string_agg(column_name::text, ',' ORDER BY ordinal_position), '') \
                 FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2",
                &[&schema, table],
            )
            .await?;
        let columns: String = row.try_get(0)?;
        if columns != *expected {
            return Ok(Some(format!(
                "table {table} of schema {schema:?} has columns ({columns}), expected ({expected})"
            )));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_keys_are_stable_and_differ_per_schema() {
        assert_eq!(lock_key("mcp_tasks"), lock_key("mcp_tasks"));
        assert_ne!(lock_key("mcp_tasks"), lock_key("other"));
    }
}
