//! A TCP proxy on loopback that can stall: while stalled it keeps every connection open and
//! accepts new ones, but moves no byte in either direction, as a database server that accepts
//! and never answers (or a network path that black-holes) does. A store or node pointed at it
//! ([`through`]) sees its calls hang, not fail.

use std::net::{SocketAddr, ToSocketAddrs as _};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A running proxy to one upstream address; stops with the test's runtime.
#[derive(Debug)]
pub struct StallProxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    stalled: watch::Sender<bool>,
}

impl StallProxy {
    /// A proxy to `upstream` on an ephemeral loopback port.
    pub async fn start(upstream: SocketAddr) -> StallProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let addr = listener.local_addr().expect("an address");
        let (stalled, watching) = watch::channel(false);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(upstream).await else {
                    continue;
                };
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(pipe(client_read, server_write, watching.clone()));
                tokio::spawn(pipe(server_read, client_write, watching.clone()));
            }
        });
        StallProxy { addr, stalled }
    }

    /// Stops moving bytes (connections stay open).
    pub fn stall(&self) {
        self.stalled.send_replace(true);
    }

    /// Moves bytes again.
    pub fn resume(&self) {
        self.stalled.send_replace(false);
    }
}

/// Copies `from` to `to`, holding each chunk while the proxy is stalled.
async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut stalled: watch::Receiver<bool>,
) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        if stalled.wait_for(|s| !*s).await.is_err() {
            return;
        }
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        if stalled.wait_for(|s| !*s).await.is_err() {
            return;
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}

/// The address of the database at `url` (a `postgres://` URL).
pub fn upstream(url: &str) -> SocketAddr {
    let config: tokio_postgres::Config = url.parse().expect("a valid DATABASE_URL");
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        _ => "127.0.0.1".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    (host.as_str(), port)
        .to_socket_addrs()
        .expect("the database host resolves")
        .next()
        .expect("an address")
}

/// `url` (a `postgres://` URL) reaching the database through `addr` instead: same user,
/// password and database.
pub fn through(url: &str, addr: SocketAddr) -> String {
    let config: tokio_postgres::Config = url.parse().expect("a valid DATABASE_URL");
    let user = config.get_user().unwrap_or("postgres");
    let password = config
        .get_password()
        .map(|p| format!(":{}", String::from_utf8_lossy(p)))
        .unwrap_or_default();
    let dbname = config.get_dbname().unwrap_or(user);
    format!("postgres://{user}{password}@{addr}/{dbname}")
}
