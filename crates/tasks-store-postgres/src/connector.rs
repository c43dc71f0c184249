//! How connections are opened: plain TCP, or TLS as the connection string's `sslmode` asks
//! (with the `rustls` feature). One choice, made at connect, for every connection.

use deadpool_postgres::{Manager, ManagerConfig, RecyclingMethod};
use tokio_postgres::{Config, NoTls};

use crate::error::ConnectError;

/// The TLS choice for every connection of a store.
#[derive(Clone)]
pub(crate) enum Connector {
    /// Plain TCP (`NoTls`).
    Plain,
    /// TLS through rustls (ring provider, the Mozilla roots of `webpki-roots`).
    #[cfg(feature = "rustls")]
    Rustls(tokio_postgres_rustls::MakeRustlsConnect),
}

impl Connector {
    /// Plain TCP: without the `rustls` feature there is no other choice.
    #[cfg(not(feature = "rustls"))]
    pub(crate) fn new(_config: &Config) -> Result<Connector, ConnectError> {
        Ok(Connector::Plain)
    }

    /// With the `rustls` feature: TLS as the connection string's `sslmode` asks (`prefer`, the
    /// default, falls back to plain TCP when the server offers no TLS; `require` insists);
    /// `sslmode=disable` connects without it.
    #[cfg(feature = "rustls")]
    pub(crate) fn new(config: &Config) -> Result<Connector, ConnectError> {
        use std::sync::Arc;

        if config.get_ssl_mode() == tokio_postgres::config::SslMode::Disable {
            return Ok(Connector::Plain);
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
        Ok(Connector::Rustls(
            tokio_postgres_rustls::MakeRustlsConnect::new(tls),
        ))
    }

    /// The pool's connection manager for `config`.
    pub(crate) fn manager(&self, config: Config) -> Manager {
        let settings = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        match self {
            Connector::Plain => Manager::from_config(config, NoTls, settings),
            #[cfg(feature = "rustls")]
            Connector::Rustls(tls) => Manager::from_config(config, tls.clone(), settings),
        }
    }
}
