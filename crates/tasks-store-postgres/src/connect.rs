//! Connecting: the connection settings, the pool, and the migration at start-up.

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use tokio_postgres::{Config, NoTls};

use crate::error::ConnectError;
use crate::options::{valid_schema, PostgresOptions};
use crate::schema::{self, Refusal};
use crate::sql::Sql;
use crate::store::PostgresStore;
use crate::target::describe;

/// How long opening one connection may take, when the connection string does not say.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Server settings for every connection: commits are durable (`synchronous_commit=on`, even
/// if the server's default is lower), and no statement or lock wait blocks a caller for long.
const SESSION_OPTIONS: &str =
    "-c synchronous_commit=on -c statement_timeout=5000 -c lock_timeout=2000";

/// The `application_name` of the store's connections, when the connection string sets none.
const APPLICATION_NAME: &str = "mcp-tasks";

pub(crate) async fn connect(
    url: &str,
    options: PostgresOptions,
) -> Result<PostgresStore, ConnectError> {
    if !valid_schema(&options.schema) {
        return Err(ConnectError::InvalidSchema(options.schema));
    }
    let mut config: Config = url
        .parse()
        .map_err(|e: tokio_postgres::Error| ConnectError::InvalidUrl(e.to_string()))?;
    let target = describe(&config);
    settle(&mut config);
    let manager = manager(config)?;
    let pool = Pool::builder(manager)
        .max_size(options.pool_size.max(1))
        .runtime(Runtime::Tokio1)
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
    drop(client);
    Ok(PostgresStore::new(
        pool,
        Arc::new(Sql::new(&options.schema)),
        target,
    ))
}

/// The connection manager: plain TCP (`NoTls`) without the `rustls` feature.
#[cfg(not(feature = "rustls"))]
fn manager(config: Config) -> Result<Manager, ConnectError> {
    Ok(Manager::from_config(config, NoTls, manager_config()))
}

/// The connection manager: with the `rustls` feature, TLS through rustls (ring provider,
/// the Mozilla roots of `webpki-roots`) as the connection string's `sslmode` asks (`prefer`,
/// the default, falls back to plain TCP when the server offers no TLS; `require` insists);
/// `sslmode=disable` connects without it.
#[cfg(feature = "rustls")]
fn manager(config: Config) -> Result<Manager, ConnectError> {
    if config.get_ssl_mode() == tokio_postgres::config::SslMode::Disable {
        return Ok(Manager::from_config(config, NoTls, manager_config()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ConnectError::InvalidUrl(format!("TLS setup: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Manager::from_config(
        config,
        tokio_postgres_rustls::MakeRustlsConnect::new(tls),
        manager_config(),
    ))
}

fn manager_config() -> ManagerConfig {
    ManagerConfig {
        recycling_method: RecyclingMethod::Fast,
    }
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
