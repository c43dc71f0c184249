//! Why a store could not be connected.

/// Why [`crate::PostgresStore::connect`] failed. No message ever contains the password of the
/// connection string. When a migration fails it is rolled back whole: the schema is left as
/// it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The connection string does not parse (neither a `postgres://` URL nor a libpq
    /// `key=value` string).
    #[error("invalid PostgreSQL connection string: {0}")]
    InvalidUrl(String),
    /// [`crate::PostgresOptions::schema`] is not a valid schema name.
    #[error(
        "invalid schema name {0:?}: use 1 to 63 characters of [a-z0-9_], not starting with a \
         digit or with pg_"
    )]
    InvalidSchema(String),
    /// No connection could be opened (the server is down, the host does not resolve, the
    /// port is closed, a timeout).
    #[error("no PostgreSQL server reachable at {target}: {reason}")]
    Unreachable {
        /// The server, database and user tried, without the password.
        target: String,
        /// What failed.
        reason: String,
    },
    /// The schema was written by a newer build of this store; it was left unchanged.
    #[error(
        "schema {schema:?} has task store version {found}, newer than the {supported} this \
         build supports; run a newer build, or use another schema"
    )]
    NewerSchema {
        /// The schema name.
        schema: String,
        /// The version found in its `schema_version` table.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The server refused a connection or a statement (authentication, a missing database,
    /// missing privileges, a table of another program in the schema, ...).
    #[error("PostgreSQL at {target} refused to set up the task store: {reason}")]
    Database {
        /// The server, database and user, without the password.
        target: String,
        /// The server's error.
        reason: String,
    },
}
