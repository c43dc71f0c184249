//! Test support: the database to test against (or a clear skip), a fresh schema per store,
//! dropped when the test ends (also when it panics), and (from [`crate::store`]) tasks, work
//! and reducer updates.

pub mod proxy;

use std::sync::Mutex;

pub use crate::store::{
    at, complete_with, id, new_task, next, object, work, NODE_A, NODE_B, ROOMY, T0,
};
use tasks_store_postgres::{redacted, PostgresOptions, PostgresStore};
use tokio_postgres::NoTls;

/// The database the tests use when `DATABASE_URL` is unset.
pub const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// `DATABASE_URL`, or [`DEFAULT_URL`].
pub fn url() -> String {
    std::env::var("DATABASE_URL").unwrap_or_else(|_| DEFAULT_URL.to_owned())
}

/// Whether this is a CI run (`CI` set, and not `false` or `0`): there a missing database
/// fails the test instead of skipping it.
pub fn in_ci() -> bool {
    std::env::var("CI")
        .map(|value| !matches!(value.trim(), "" | "false" | "0"))
        .unwrap_or(false)
}

/// The test database, and every schema the test made in it (dropped on drop).
#[derive(Debug)]
pub struct Database {
    /// Its connection URL.
    pub url: String,
    schemas: Mutex<Vec<String>>,
}

impl Database {
    /// The database at [`url`], or `None` (after printing why) when there is none and this is
    /// not CI.
    ///
    /// # Panics
    /// In CI, when the database is unreachable.
    pub async fn open() -> Option<Database> {
        let url = url();
        match tokio_postgres::connect(&url, NoTls).await {
            Ok((client, connection)) => {
                drop(client);
                let _ = connection.await;
                Some(Database {
                    url,
                    schemas: Mutex::new(Vec::new()),
                })
            }
            Err(error) if in_ci() => panic!(
                "no PostgreSQL at {} ({error}: {}); CI must provide one (set DATABASE_URL)",
                redacted(&url),
                std::error::Error::source(&error).map_or_else(String::new, |e| e.to_string())
            ),
            Err(_) => {
                println!(
                    "skipped: no PostgreSQL at {} (set DATABASE_URL)",
                    redacted(&url)
                );
                None
            }
        }
    }

    /// A new schema name, `t_<16 random hex digits>`, dropped with this value.
    pub fn schema(&self) -> String {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("random bytes");
        let name = format!(
            "t_{}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        self.schemas
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(name.clone());
        name
    }

    /// Options for `schema` with a small pool (the machine has 2 cores).
    pub fn options(schema: &str) -> PostgresOptions {
        PostgresOptions::default()
            .with_schema(schema)
            .with_pool_size(8)
    }

    /// A store on `schema`.
    pub async fn connect(&self, schema: &str) -> PostgresStore {
        PostgresStore::connect(&self.url, Self::options(schema))
            .await
            .expect("connect to the test database")
    }

    /// A store on a fresh schema.
    pub async fn store(&self) -> PostgresStore {
        let schema = self.schema();
        self.connect(&schema).await
    }

    /// An administrative connection (its driver task runs on the current runtime).
    pub async fn admin(&self) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(&self.url, NoTls)
            .await
            .expect("admin connection");
        tokio::spawn(connection);
        client
    }
}

impl Drop for Database {
    /// Drops every schema the test made, on a thread of its own (this may run while a
    /// runtime is shutting down, or during a panic).
    fn drop(&mut self) {
        let schemas = std::mem::take(&mut *self.schemas.lock().unwrap_or_else(|p| p.into_inner()));
        if schemas.is_empty() {
            return;
        }
        let url = self.url.clone();
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async move {
                let (client, connection) = tokio_postgres::connect(&url, NoTls)
                    .await
                    .map_err(|e| e.to_string())?;
                tokio::spawn(connection);
                for schema in schemas {
                    client
                        .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
                        .await
                        .map_err(|e| e.to_string())?;
                }
                Ok::<(), String>(())
            })
        })
        .join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(error)) => eprintln!("could not drop the test schemas: {error}"),
            Err(_) => eprintln!("dropping the test schemas panicked"),
        }
    }
}
