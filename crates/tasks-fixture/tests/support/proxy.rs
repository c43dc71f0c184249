//! A TCP proxy on loopback that can stall: while stalled it keeps every connection open and
//! accepts new ones, but moves no byte in either direction, as a database server that accepts
//! and never answers (or a network path that black-holes) does. A node pointed at it sees its
//! store calls hang, not fail.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A running proxy to one upstream address; stops with the test's runtime.
pub(crate) struct StallProxy {
    /// Where clients connect.
    pub(crate) addr: SocketAddr,
    stalled: watch::Sender<bool>,
}

impl StallProxy {
    /// A proxy to `upstream` on an ephemeral loopback port.
    pub(crate) async fn start(upstream: SocketAddr) -> StallProxy {
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
    pub(crate) fn stall(&self) {
        self.stalled.send_replace(true);
    }

    /// Moves bytes again.
    pub(crate) fn resume(&self) {
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
