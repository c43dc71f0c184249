//! The connection loop ([`tasks_http::serve`]): a connection that never says which protocol it
//! speaks is closed after the header read timeout instead of being held forever, and one that
//! does is served.

use std::time::Duration;

use tasks_http::ServerBuilder;
use tasks_http::HEADER_READ_TIMEOUT;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// Reads until the server closes the connection; returns what it sent and how long that took.
async fn until_closed(stream: &mut TcpStream) -> (Vec<u8>, Duration) {
    let started = tokio::time::Instant::now();
    let mut received = Vec::new();
    let _ = stream.read_to_end(&mut received).await;
    (received, started.elapsed())
}

#[tokio::test(start_paused = true)]
async fn silent_and_half_preface_connections_are_closed_after_the_header_timeout() {
    let server = ServerBuilder::new("connections", "1")
        .bind("127.0.0.1:0")
        .await
        .expect("binds");
    for opening in [&b""[..], b"P", b"PRI * HTTP/2.0\r\n"] {
        let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
        stream.write_all(opening).await.unwrap();
        let (received, waited) = until_closed(&mut stream).await;
        assert!(received.is_empty(), "{opening:?}: {received:?}");
        assert!(
            waited >= HEADER_READ_TIMEOUT && waited < HEADER_READ_TIMEOUT * 2,
            "{opening:?}: closed after {waited:?}"
        );
    }
    // A connection that speaks HTTP/1 is served.
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let (received, _) = until_closed(&mut stream).await;
    let text = String::from_utf8_lossy(&received);
    assert!(text.starts_with("HTTP/1.1 404"), "{text}");
    assert!(
        text.ends_with("Not found: the MCP endpoint is /mcp\n"),
        "{text}"
    );
    server.shutdown().await;
}
