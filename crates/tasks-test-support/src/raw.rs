//! One raw HTTP/1.1 exchange on a fresh TCP connection, for bytes no HTTP client would send.

use crate::wait::within;

/// Sends `request` as raw bytes on a fresh TCP connection to `addr` and returns everything
/// the server writes until it closes the connection (send `Connection: close`), within
/// [`WAIT_LIMIT`](crate::wait::WAIT_LIMIT).
///
/// # Panics
/// When the connection fails or the server stays silent too long.
pub async fn raw_exchange(addr: std::net::SocketAddr, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr)
            .await
            .expect("the server accepts");
        stream
            .write_all(request)
            .await
            .expect("the request is sent");
        let mut response = Vec::new();
        // A reset after the answer (the server closing a half-read request) ends the read too.
        let _ = stream.read_to_end(&mut response).await;
        String::from_utf8_lossy(&response).into_owned()
    };
    within("the server to answer and close", exchange).await
}
