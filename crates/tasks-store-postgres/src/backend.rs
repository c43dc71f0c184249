//! Backend failures as [`StoreError::Backend`]: text for logs only, never a password (the
//! driver's messages name servers and SQL states, not connection secrets).

use deadpool_postgres::PoolError;
use tasks_runtime::StoreError;

/// A driver error as one line: the server's message and SQLSTATE when it is a database
/// error, the driver's description and its causes otherwise.
pub(crate) fn describe(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!(
            "{}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        ),
        None => chain(error),
    }
}

/// An error and its sources, `: `-separated (the driver's own text omits the cause).
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
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
