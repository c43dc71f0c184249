//! How a store connects: the schema its tables live in and the connection pool size.

/// Options of [`crate::PostgresStore::connect`].
///
/// `#[non_exhaustive]`, so that an option can be added in a minor release: start from
/// `PostgresOptions::default()` and chain the `with_*` setters.
///
/// ```
/// use tasks_store_postgres::PostgresOptions;
///
/// let options = PostgresOptions::default().with_schema("tasks_staging").with_pool_size(32);
/// assert_eq!(options.schema, "tasks_staging");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PostgresOptions {
    /// The PostgreSQL schema (namespace) holding every table of the store; created if missing.
    /// Must match `[a-z_][a-z0-9_]{0,62}` and must not start with `pg_` (reserved by
    /// PostgreSQL). Default `mcp_tasks`. Nodes sharing tasks must use the same schema; separate
    /// deployments (or tests) in one database use different ones.
    pub schema: String,
    /// The most connections the store opens (default 16). Each store call holds one
    /// connection for its duration; calls beyond this many wait for a free one, up to 5 s,
    /// then fail with [`StoreError::Unavailable`](tasks_runtime::store::StoreError::Unavailable)
    /// (nothing was sent). `0` is treated as 1.
    pub pool_size: usize,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            schema: "mcp_tasks".into(),
            pool_size: 16,
        }
    }
}

impl PostgresOptions {
    /// Sets [`PostgresOptions::schema`] (checked by [`crate::PostgresStore::connect`]).
    #[must_use]
    pub fn with_schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = schema.into();
        self
    }

    /// Sets [`PostgresOptions::pool_size`].
    #[must_use]
    pub fn with_pool_size(mut self, pool_size: usize) -> Self {
        self.pool_size = pool_size;
        self
    }
}

/// Whether `name` is a valid schema name: `[a-z_][a-z0-9_]{0,62}`, not starting with `pg_`.
/// Such a name never needs escaping inside a quoted identifier.
pub(crate) fn valid_schema(name: &str) -> bool {
    let bytes = name.as_bytes();
    let Some((first, rest)) = bytes.split_first() else {
        return false;
    };
    (first.is_ascii_lowercase() || *first == b'_')
        && rest.len() <= 62
        && rest
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
        && !name.starts_with("pg_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_validated() {
        for good in ["mcp_tasks", "_x", "a", "t_0123abcd", &"a".repeat(63)] {
            assert!(valid_schema(good), "{good} is valid");
        }
        for bad in [
            "",
            "0abc",
            "Mcp",
            "a-b",
            "a b",
            "a\"b",
            "pg_tasks",
            "é",
            &"a".repeat(64),
        ] {
            assert!(!valid_schema(bad), "{bad:?} is invalid");
        }
    }
}
