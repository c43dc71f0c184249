//! The schema: embedded migrations, versioned by `PRAGMA user_version` and marked by
//! `PRAGMA application_id`, and the check that an existing file is ours.

use rusqlite::Connection;

/// The migrations, in order; migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_init.sql"),
    include_str!("../migrations/0002_clock.sql"),
    include_str!("../migrations/0003_status_check.sql"),
    include_str!("../migrations/0004_quarantine.sql"),
    include_str!("../migrations/0005_task_origin.sql"),
    include_str!("../migrations/0006_inventory.sql"),
];

/// The newest schema version this build knows.
pub(crate) const LATEST: i64 = MIGRATIONS.len() as i64;

/// `PRAGMA application_id` of a task database ("MCPT").
pub(crate) const APPLICATION_ID: i64 = 0x4d43_5054;

/// The columns each table must have, in order.
const TABLES: &[(&str, &[&str])] = &[
    (
        "tasks",
        &[
            "id",
            "scope",
            "revision",
            "status",
            "created_at_ms",
            "expires_at_ms",
            "task",
            "work",
            "owner_node",
            "generation",
            "attempt",
            "tool",
            "updated_at_ms",
        ],
    ),
    (
        "nodes",
        &[
            "node_id",
            "lease_expires_at_ms",
            "started_at_ms",
            "renewed_at_ms",
        ],
    ),
    ("clock", &["id", "high_water_ms"]),
    (
        "quarantined_tasks",
        &[
            "id",
            "scope",
            "revision",
            "status",
            "task",
            "work",
            "reason",
            "quarantined_at_ms",
        ],
    ),
];

/// What an opened file holds, judged without writing to it.
pub(crate) enum Found {
    /// An empty database: migrate from scratch.
    Empty,
    /// A task database at this schema version (at most [`LATEST`]).
    Ours(i64),
    /// A database of a newer build.
    Newer(i64),
    /// Not a task database; the reason.
    Foreign(String),
}

/// Reads the file's identity. Reads only, so a refused file stays byte for byte unchanged.
pub(crate) fn inspect(conn: &Connection) -> rusqlite::Result<Found> {
    let application_id: i64 = conn.query_row("PRAGMA application_id", [], |row| row.get(0))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if application_id != 0 && application_id != APPLICATION_ID {
        return Ok(Found::Foreign(format!(
            "application id {application_id:#x} belongs to another program"
        )));
    }
    if version > LATEST {
        return Ok(Found::Newer(version));
    }
    if version < 0 {
        return Ok(Found::Foreign(format!(
            "schema version {version} is invalid"
        )));
    }
    if version == 0 {
        let objects: i64 =
            conn.query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))?;
        return Ok(if objects == 0 {
            Found::Empty
        } else {
            Found::Foreign("it has tables but no task schema version".into())
        });
    }
    if application_id != APPLICATION_ID {
        return Ok(Found::Foreign("it has no task store application id".into()));
    }
    Ok(Found::Ours(version))
}

/// Runs the migrations after `from` in one transaction.
pub(crate) fn migrate(conn: &mut Connection, from: i64) -> rusqlite::Result<()> {
    let start = usize::try_from(from).unwrap_or(usize::MAX);
    if start >= MIGRATIONS.len() {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for migration in &MIGRATIONS[start..] {
        tx.execute_batch(migration)?;
    }
    tx.pragma_update(None, "user_version", LATEST)?;
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.commit()
}

/// Checks that the tables have the columns of the current schema; the first mismatch.
pub(crate) fn verify(conn: &Connection) -> rusqlite::Result<Option<String>> {
    for (table, expected) in TABLES {
        let mut statement = conn.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?;
        let columns = statement
            .query_map([table], |row| row.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        if columns != *expected {
            return Ok(Some(format!(
                "table {table} has columns {columns:?}, expected {expected:?}"
            )));
        }
    }
    Ok(None)
}
