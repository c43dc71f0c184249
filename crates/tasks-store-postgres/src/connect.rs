//! Connecting: the connection settings, the pool, and the migration at start-up.

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Pool, PoolError, Runtime};
use tokio_postgres::Config;
use tokio_util::sync::CancellationToken;

use crate::clock;
use crate::connector::Connector;
use crate::db::Db;
use crate::error::ConnectError;
use crate::feed::Feed;
use crate::options::{valid_schema, PostgresOptions};
use crate::schema::{self, Refusal};
use crate::sql::Sql;
use crate::target::describe;

/// How long opening one connection may take, when the connection string does not say.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a call may wait for a free pooled connection (every one busy, or stalled) before
/// it is refused with [`tasks_runtime::store::StoreError::Unavailable`]: nothing was sent, so a
/// request is told that nothing changed. Shorter than the runtime's default store deadline
/// (10 s), which would answer a write "outcome unknown".
const POOL_WAIT: Duration = Duration::from_secs(5);

/// Server settings for every connection: commits are durable (`synchronous_commit=on`, even
/// if the server's default is lower), and no statement or lock wait blocks a caller for long.
const SESSION_OPTIONS: &str = "-c synchronous_commit=on -c statement_timeout=5000 \
     -c lock_timeout=2000 -c idle_in_transaction_session_timeout=10000";

/// The `application_name` of the store's connections, when the connection string sets none.
const APPLICATION_NAME: &str = "mcp-tasks";

pub(crate) async fn connect(url: &str, options: PostgresOptions) -> Result<Db, ConnectError> {
    if !valid_schema(&options.schema) {
        return Err(ConnectError::InvalidSchema(options.schema));
    }
    let mut config: Config = url
        .parse()
        .map_err(|e: tokio_postgres::Error| ConnectError::InvalidUrl(e.to_string()))?;
    let target = describe(&config);
    settle(&mut config);
    let connector = Connector::new(&config)?;
    let pool = Pool::builder(connector.manager(config.clone()))
        .max_size(options.pool_size.max(1))
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(POOL_WAIT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .recycle_timeout(Some(CONNECT_TIMEOUT))
        .build()
        .map_err(|e| ConnectError::InvalidUrl(format!("connection pool: {e}")))?;

    let mut client = pool.get().await.map_err(|e| unreachable(&target, e))?;
    let database = |reason: String| ConnectError::Database {
        target: target.clone(),
        reason,
    };
    match schema::migrate(&mut client, &options.schema).await {
        Ok(()) => {}
        Err(Refusal::Newer(found)) => {
            return Err(ConnectError::NewerSchema {
                schema: options.schema,
                found,
                supported: schema::LATEST,
            })
        }
        Err(Refusal::Mismatch(reason)) => return Err(database(reason)),
        Err(Refusal::Sql(error)) => return Err(database(crate::backend::describe(&error))),
    }
    let clock = clock::measure(&client).await.map_err(|e| {
        database(format!(
            "reading the server's clock: {}",
            crate::backend::describe(&e)
        ))
    })?;
    drop(client);

    // Everything started here stops when the last clone of the store is dropped.
    let stop = CancellationToken::new();
    let clock = Arc::new(clock);
    clock::refresh(clock.clone(), pool.clone(), stop.clone());
    let feed = Feed::start(
        &config,
        connector,
        &options.schema,
        target.clone(),
        stop.clone(),
    )
    .await;
    Ok(Db::new(
        pool,
        Arc::new(Sql::new(&options.schema)),
        target,
        feed,
        clock,
        stop,
    ))
}

/// Adds the store's session settings, a connect timeout and an application name, keeping
/// whatever the connection string set.
fn settle(config: &mut Config) {
    let options = match config.get_options() {
        Some(given) if !given.trim().is_empty() => format!("{SESSION_OPTIONS} {given}"),
        _ => SESSION_OPTIONS.to_owned(),
    };
    config.options(&options);
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name(APPLICATION_NAME);
    }
}

/// The first connection failed: a refusal by the server is [`ConnectError::Database`],
/// anything else (refused, unresolvable, timed out) [`ConnectError::Unreachable`].
fn unreachable(target: &str, error: PoolError) -> ConnectError {
    match error {
        PoolError::Backend(error) if error.as_db_error().is_some() => ConnectError::Database {
            target: target.to_owned(),
            reason: crate::backend::describe(&error),
        },
        PoolError::Backend(error) => ConnectError::Unreachable {
            target: target.to_owned(),
            reason: crate::backend::describe(&error),
        },
        other => ConnectError::Unreachable {
            target: target.to_owned(),
            reason: crate::backend::chain(&other),
        },
    }
}
