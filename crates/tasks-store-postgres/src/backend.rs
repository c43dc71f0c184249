//! Backend failures as [`StoreError::Backend`]: text for logs only, never a password (the
//! driver's messages name servers and SQL states, not connection secrets).

use deadpool_postgres::PoolError;
use tasks_runtime::StoreError;

/// A driver error as one line: the server's message and SQLSTATE when it is a database
/// error, the driver's description otherwise.
pub(crate) fn describe(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!(
            "{}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        ),
        None => error.to_string(),
    }
}

/// A failed statement.
pub(crate) fn sql(error: tokio_postgres::Error) -> StoreError {
    StoreError::Backend(format!("postgres: {}", describe(&error)))
}

/// No connection could be had from the pool.
pub(crate) fn pool(error: PoolError) -> StoreError {
    match error {
        PoolError::Backend(error) => sql(error),
        other => StoreError::Backend(format!("postgres connection pool: {other}")),
    }
}

/// Stored data that does not decode.
pub(crate) fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("postgres: stored data does not decode: {what}"))
}
