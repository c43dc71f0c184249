//! Backend failures as [`StoreError`]s: text for logs only, never a password (the driver's
//! messages name servers and SQL states, not connection secrets).
//!
//! * No connection to be had from the pool, or a statement the server gave up on and rolled
//!   back (`statement_timeout`, `lock_timeout`, a serialization failure or deadlock), is
//!   [`StoreError::Unavailable`]: nothing was written, and the same call may succeed shortly.
//! * A connection lost while a call ran (terminated by the server, reset, closed) is
//!   [`StoreError::Interrupted`]: a write it carried may or may not have committed.
//! * Anything else (a constraint, data that does not decode) is [`StoreError::Backend`].

use deadpool_postgres::PoolError;
use tasks_runtime::store::StoreError;

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
    let text = format!("postgres: {}", describe(&error));
    if connection_lost(&error) {
        StoreError::Interrupted(text)
    } else if rolled_back(&error) {
        StoreError::Unavailable(text)
    } else {
        StoreError::Backend(text)
    }
}

/// Whether `error` is the connection going away under a statement: closed, an I/O failure,
/// a connection exception (SQLSTATE class 08) or the server shutting the session down
/// (57P01 `admin_shutdown`, which `pg_terminate_backend` sends, 57P02, 57P03).
pub(crate) fn connection_lost(error: &tokio_postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    match error.as_db_error() {
        Some(db) => {
            let code = db.code().code();
            code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03")
        }
        None => std::error::Error::source(error)
            .is_some_and(|source| source.downcast_ref::<std::io::Error>().is_some()),
    }
}

/// Whether the server refused `error`'s statement as a passing condition and rolled it back:
/// 57014 `query_canceled` (`statement_timeout`), 55P03 `lock_not_available` (`lock_timeout`),
/// 40001 `serialization_failure`, 40P01 `deadlock_detected`.
fn rolled_back(error: &tokio_postgres::Error) -> bool {
    error
        .as_db_error()
        .is_some_and(|db| matches!(db.code().code(), "57014" | "55P03" | "40001" | "40P01"))
}

/// No connection could be had from the pool (none could be opened in time, or the pool was
/// closed): nothing was sent.
pub(crate) fn pool(error: PoolError) -> StoreError {
    match error {
        PoolError::Backend(error) => {
            StoreError::Unavailable(format!("postgres: {}", describe(&error)))
        }
        other => StoreError::Unavailable(format!("postgres connection pool: {other}")),
    }
}

/// Stored data that does not decode.
pub(crate) fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("postgres: stored data does not decode: {what}"))
}
