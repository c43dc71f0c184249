//! How connections are opened: plain TCP, or TLS as the connection string's `sslmode` asks
//! (with the `rustls` feature). One choice, made at connect, serves the pool and the change
//! feed's dedicated connections alike.

use std::pin::Pin;

use deadpool_postgres::{Manager, ManagerConfig, RecyclingMethod};
use futures_util::Stream;
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{AsyncMessage, Client, Config, NoTls, Socket};

use crate::error::ConnectError;

/// What a dedicated connection receives outside of its queries (notifications and notices),
/// ending with `None` or an error when the connection closes. Polling it is what drives the
/// connection: a query on its [`Client`] progresses only while this stream is polled.
pub(crate) type Messages =
    Pin<Box<dyn Stream<Item = Result<AsyncMessage, tokio_postgres::Error>> + Send>>;

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

    /// Opens one connection outside the pool. The caller drives it by polling the returned
    /// [`Messages`].
    pub(crate) async fn dedicated(
        &self,
        config: &Config,
    ) -> Result<(Client, Messages), tokio_postgres::Error> {
        match self {
            Connector::Plain => open(config, NoTls).await,
            #[cfg(feature = "rustls")]
            Connector::Rustls(tls) => open(config, tls.clone()).await,
        }
    }
}

async fn open<T>(config: &Config, tls: T) -> Result<(Client, Messages), tokio_postgres::Error>
where
    T: MakeTlsConnect<Socket>,
    T::Stream: Send + 'static,
{
    let (client, mut connection) = config.connect(tls).await?;
    let messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
    Ok((client, Box::pin(messages)))
}
