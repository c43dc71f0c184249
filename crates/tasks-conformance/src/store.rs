//! The `--store` choice: in memory, or a durable SQLite database.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tasks_runtime::store::{MemoryStore, Store};
use tasks_store_postgres::{PostgresOptions, PostgresStore};
use tasks_store_sqlite::{SqliteOptions, SqliteStore};

/// Where the fixture keeps tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// The in-memory store: nothing survives the process.
    Memory,
    /// A SQLite database at this path.
    Sqlite(PathBuf),
    /// A PostgreSQL database at this URL (`postgres://…`).
    Postgres(String),
}

impl StoreSpec {
    /// Parses `memory`, `sqlite:PATH`, or `postgres://…` / `postgresql://…`.
    ///
    /// # Errors
    /// Anything else, with what is accepted.
    pub fn parse(text: &str) -> Result<StoreSpec, String> {
        match text.split_once(':') {
            None if text == "memory" => Ok(StoreSpec::Memory),
            Some(("sqlite", path)) if !path.is_empty() => Ok(StoreSpec::Sqlite(path.into())),
            Some(("postgres" | "postgresql", rest)) if rest.starts_with("//") => {
                Ok(StoreSpec::Postgres(text.to_owned()))
            }
            _ => Err(format!(
                "unknown store {:?}: use `memory`, `sqlite:PATH` or `postgres://…`",
                tasks_store_postgres::redacted(text)
            )),
        }
    }

    /// The secret file a server on this store uses unless told otherwise: `PATH.secret`
    /// beside a SQLite database; none for the memory store or PostgreSQL (every node of one
    /// PostgreSQL database must be given the same file).
    pub fn default_secret_path(&self) -> Option<PathBuf> {
        match self {
            StoreSpec::Sqlite(path) => {
                let mut name = path.as_os_str().to_owned();
                name.push(".secret");
                Some(PathBuf::from(name))
            }
            StoreSpec::Memory | StoreSpec::Postgres(_) => None,
        }
    }

    /// How the store is named in logs (a PostgreSQL URL without its password).
    pub fn describe(&self) -> String {
        match self {
            StoreSpec::Memory => "memory".to_owned(),
            StoreSpec::Sqlite(path) => format!("sqlite:{}", path.display()),
            StoreSpec::Postgres(url) => tasks_store_postgres::redacted(url),
        }
    }
}

/// The clap parser of `--store`: [`StoreSpec::parse`], whose error names the value with its
/// password removed. (A plain value-parser function would have clap repeat the raw value,
/// password included, in its error.)
#[derive(Debug, Clone, Copy)]
pub struct StoreParser;

impl clap::builder::TypedValueParser for StoreParser {
    type Value = StoreSpec;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<StoreSpec, clap::Error> {
        let invalid = |reason: String| {
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value for '--store <STORE>': {reason}\n"),
            )
        };
        let text = value
            .to_str()
            .ok_or_else(|| invalid("the value is not UTF-8".to_owned()))?;
        StoreSpec::parse(text).map_err(invalid)
    }
}

/// `synchronous` of a SQLite store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Synchronous {
    /// Every acknowledged change survives power loss.
    Full,
    /// Acknowledged changes survive a crash of the process, not of the machine.
    Normal,
}

/// Opens the store `spec` names; `schema` is the PostgreSQL schema.
///
/// # Errors
/// A clear, one-line reason the store cannot be opened (locked, corrupt, newer schema,
/// unwritable, unreachable); nothing is changed then.
pub async fn open(
    spec: &StoreSpec,
    synchronous: Synchronous,
    schema: &str,
) -> Result<Arc<dyn Store>, String> {
    match spec {
        StoreSpec::Memory => Ok(Arc::new(MemoryStore::new())),
        StoreSpec::Sqlite(path) => open_sqlite(path, synchronous),
        StoreSpec::Postgres(url) => {
            let options = PostgresOptions::default().with_schema(schema);
            PostgresStore::connect(url, options)
                .await
                .map(|store| Arc::new(store) as Arc<dyn Store>)
                .map_err(|error| error.to_string())
        }
    }
}

fn open_sqlite(path: &Path, synchronous: Synchronous) -> Result<Arc<dyn Store>, String> {
    let options = SqliteOptions::default().with_synchronous(match synchronous {
        Synchronous::Full => tasks_store_sqlite::Synchronous::Full,
        Synchronous::Normal => tasks_store_sqlite::Synchronous::Normal,
    });
    SqliteStore::open(path, options)
        .map(|store| Arc::new(store) as Arc<dyn Store>)
        .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_memory_and_sqlite_paths() {
        assert_eq!(StoreSpec::parse("memory"), Ok(StoreSpec::Memory));
        assert_eq!(
            StoreSpec::parse("sqlite:/tmp/tasks.db"),
            Ok(StoreSpec::Sqlite("/tmp/tasks.db".into()))
        );
        assert_eq!(
            StoreSpec::parse("sqlite:a:b"),
            Ok(StoreSpec::Sqlite("a:b".into()))
        );
        assert_eq!(
            StoreSpec::parse("postgres://u@h/db"),
            Ok(StoreSpec::Postgres("postgres://u@h/db".into()))
        );
        for bad in ["", "sqlite:", "sqlite", "postgres:x", "Memory", "mysql://x"] {
            let error = StoreSpec::parse(bad).unwrap_err();
            assert!(
                error.contains("`sqlite:PATH` or `postgres://…`"),
                "{bad}: {error}"
            );
        }
        let error = StoreSpec::parse("postgres:u:secret@h/db").unwrap_err();
        assert!(!error.contains("secret"), "{error}");
    }
}
