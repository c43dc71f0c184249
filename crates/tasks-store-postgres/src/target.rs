//! A connection string described without its secrets, for messages and logs.

use tokio_postgres::config::Host;
use tokio_postgres::Config;

/// `user@host:port/database` for a parsed configuration: never the password, nor any other
/// option. Several hosts are joined with commas; a Unix socket shows its directory.
pub(crate) fn describe(config: &Config) -> String {
    let ports = config.get_ports();
    let hosts = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = ports
                .get(i)
                .or_else(|| ports.first())
                .copied()
                .unwrap_or(5432);
            match host {
                Host::Tcp(name) => format!("{name}:{port}"),
                Host::Unix(dir) => format!("{}:{port}", dir.display()),
            }
        })
        .collect::<Vec<_>>();
    let hosts = if hosts.is_empty() {
        "localhost".to_owned()
    } else {
        hosts.join(",")
    };
    let user = config.get_user().unwrap_or("(default user)");
    let database = config.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{hosts}/{database}")
}

/// The connection string `url` described without its password (or any option other than the
/// user, hosts, ports and database); `"(unparsable connection string)"` when it does not parse.
/// For messages such as "no PostgreSQL at …".
pub fn redacted(url: &str) -> String {
    url.parse::<Config>()
        .map(|config| describe(&config))
        .unwrap_or_else(|_| "(unparsable connection string)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_never_shows() {
        let url = "postgres://alice:s3cret@db.example:6543/tasks?sslmode=disable";
        let shown = redacted(url);
        assert_eq!(shown, "postgres://alice@db.example:6543/tasks");
        let libpq = "host=127.0.0.1 port=5432 user=bob password=s3cret dbname=test";
        assert_eq!(redacted(libpq), "postgres://bob@127.0.0.1:5432/test");
        assert!(!redacted("postgres://x:s3cret@[").contains("s3cret"));
    }
}
