//! One keep-alive HTTP/1.1 client connection (hyper's low-level client): requests go one at a
//! time, in order, over the same TCP connection.

use std::net::SocketAddr;

use bytes::Bytes;
use http::{HeaderValue, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Where requests go, parsed from a server's `http://host:port/path` URL.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// The socket address.
    pub addr: SocketAddr,
    /// The `Host` header value (`127.0.0.1:<port>`).
    pub host: HeaderValue,
    /// The request path (`/mcp`).
    pub path: String,
}

impl Endpoint {
    /// Parses `http://<ip>:<port><path>`.
    pub(crate) fn parse(url: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("not an http URL: {url}"))?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let addr: SocketAddr = authority
            .parse()
            .map_err(|e| format!("{url}: authority {authority:?}: {e}"))?;
        let host = HeaderValue::from_str(authority).map_err(|e| format!("{url}: {e}"))?;
        let path = if path.is_empty() { "/" } else { path };
        Ok(Endpoint {
            addr,
            host,
            path: path.to_owned(),
        })
    }
}

/// An open keep-alive connection.
pub(crate) struct Connection {
    sender: SendRequest<Full<Bytes>>,
}

/// Why [`Connection::send`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SendError {
    /// The connection was closed before the request was written (a server may close an idle
    /// keep-alive connection): nothing reached the server, so a retry on a new connection is
    /// safe even for `tools/call`.
    Closed(String),
    /// The request failed after it may have reached the server.
    Failed(String),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Closed(why) => write!(f, "connection closed before sending: {why}"),
            SendError::Failed(why) => f.write_str(why),
        }
    }
}

/// A response: status and the whole body.
pub(crate) struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body.
    pub body: Bytes,
}

impl Connection {
    /// Connects to `endpoint` (TCP_NODELAY, as the servers set it).
    pub(crate) async fn open(endpoint: &Endpoint) -> Result<Self, String> {
        let stream = TcpStream::connect(endpoint.addr)
            .await
            .map_err(|e| format!("connect {}: {e}", endpoint.addr))?;
        let _ = stream.set_nodelay(true);
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(connection);
        Ok(Connection { sender })
    }

    /// Sends `request` and reads the whole response.
    pub(crate) async fn send(
        &mut self,
        request: http::Request<Full<Bytes>>,
    ) -> Result<Reply, SendError> {
        self.sender
            .ready()
            .await
            .map_err(|e| SendError::Closed(e.to_string()))?;
        let response = match self.sender.try_send_request(request).await {
            Ok(response) => response,
            Err(mut error) => {
                let unsent = error.take_message().is_some();
                let why = format!("request: {}", error.into_error());
                return Err(if unsent {
                    SendError::Closed(why)
                } else {
                    SendError::Failed(why)
                });
            }
        };
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| SendError::Failed(format!("response body: {e}")))?
            .to_bytes();
        Ok(Reply { status, body })
    }

    /// Sends `request` and returns the response as soon as its head has arrived, its body
    /// still streaming (an SSE stream); the connection then serves only that response.
    pub(crate) async fn stream(
        mut self,
        request: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<hyper::body::Incoming>, String> {
        self.sender.ready().await.map_err(|e| e.to_string())?;
        self.sender
            .send_request(request)
            .await
            .map_err(|e| format!("request: {e}"))
    }

    /// Sends `request` on this connection or, if it was closed before the request went out, on
    /// a new one (which then replaces it).
    pub(crate) async fn send_or_reconnect(
        &mut self,
        endpoint: &Endpoint,
        request: impl Fn() -> http::Request<Full<Bytes>>,
    ) -> Result<Reply, SendError> {
        match self.send(request()).await {
            Err(SendError::Closed(_)) => {
                *self = Connection::open(endpoint)
                    .await
                    .map_err(SendError::Failed)?;
                self.send(request()).await
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_server_url() {
        let endpoint = Endpoint::parse("http://127.0.0.1:3000/mcp").unwrap();
        assert_eq!(endpoint.addr, "127.0.0.1:3000".parse().unwrap());
        assert_eq!(endpoint.host, "127.0.0.1:3000");
        assert_eq!(endpoint.path, "/mcp");
        assert_eq!(Endpoint::parse("http://127.0.0.1:1").unwrap().path, "/");
        assert!(Endpoint::parse("https://127.0.0.1:1/").is_err());
    }

    /// A server that closes every connection after one response (`keep_alive(false)`).
    async fn one_shot_server() -> Endpoint {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/x", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let service = hyper::service::service_fn(|_request| async {
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(
                        Bytes::from_static(b"ok"),
                    )))
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .keep_alive(false)
                        .serve_connection(TokioIo::new(stream), service),
                );
            }
        });
        Endpoint::parse(&url).unwrap()
    }

    #[tokio::test]
    async fn a_connection_closed_by_the_server_is_replaced_before_sending() {
        let endpoint = one_shot_server().await;
        let request = || {
            let mut request = http::Request::new(Full::new(Bytes::new()));
            *request.uri_mut() = endpoint.path.parse().unwrap();
            request
                .headers_mut()
                .insert(http::header::HOST, endpoint.host.clone());
            request
        };
        let mut connection = Connection::open(&endpoint).await.unwrap();
        for _ in 0..3 {
            let reply = connection
                .send_or_reconnect(&endpoint, request)
                .await
                .unwrap();
            assert_eq!(
                (reply.status, &reply.body[..]),
                (StatusCode::OK, &b"ok"[..])
            );
        }
    }
}
