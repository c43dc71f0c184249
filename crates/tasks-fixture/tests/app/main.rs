//! The binary's [`App`](tasks_fixture::app::App) answers exactly as the axum router it skips for
//! the endpoint: the same requests, sent over HTTP to one server serving the router and one
//! serving the app (both in front of the same MCP service), get the same status, headers and
//! body; and with `--bearer-scope` the endpoint's layer still applies.

// Modules rather than binaries of their own (each integration-test binary links the
// whole stack, and linking is slow): their tests are named `<module>::<test>`.
mod health;

use serde_json::json;
use tasks_fixture::Settings;

/// Serves `service` on a fresh loopback port until the test ends; returns its address.
async fn serve<S, B>(service: S, stop: tokio_util::sync::CancellationToken) -> std::net::SocketAddr
where
    S: tower_service::Service<
            http::Request<hyper::body::Incoming>,
            Response = http::Response<B>,
            Error = std::convert::Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(tasks_http::serve(listener, service, stop));
    addr
}

/// What is compared of an answer: status, the headers a client reads, and the body.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

async fn send(
    client: &reqwest::Client,
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = client.request(method, format!("http://{addr}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.body(body.to_owned()).send().await.unwrap();
    let status = response.status().as_u16();
    let mut headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .filter(|(name, _)| *name != "date")
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                value.to_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    headers.sort();
    let body = response.text().await.unwrap();
    Answer {
        status,
        headers,
        body,
    }
}

/// One request: method, path, headers and body.
type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, &'a str);

const MCP: [(&str, &str); 3] = [
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
    ("mcp-protocol-version", "2026-07-28"),
];

fn with<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut headers = MCP.to_vec();
    headers.extend_from_slice(extra);
    headers
}

fn message(method: &str, params: serde_json::Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_answers_as_the_router_does() {
    let settings = Settings::default();
    let (mcp, handle) = tasks_fixture::server(&settings)
        .into_service()
        .await
        .unwrap();
    let stop = handle.shutdown_token();
    let routed = serve(
        tasks_fixture::app::router(mcp.clone(), &settings),
        stop.clone(),
    )
    .await;
    let direct = serve(tasks_fixture::app::app(mcp, &settings), stop.clone()).await;
    let client = reqwest::Client::new();

    let list = message("tools/list", json!({}));
    let discover = message("server/discover", json!({}));
    let unknown = message("tasks/get", json!({"taskId": "no-such-task"}));
    let notification =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}).to_string();
    let cases: Vec<Case> = vec![
        ("POST", "/mcp", with(&[("mcp-method", "tools/list")]), &list),
        (
            "POST",
            "/mcp?x=1",
            with(&[("mcp-method", "tools/list")]),
            &list,
        ),
        (
            "POST",
            "/mcp",
            with(&[("mcp-method", "server/discover")]),
            &discover,
        ),
        (
            "POST",
            "/mcp",
            with(&[("mcp-method", "tasks/get"), ("mcp-name", "no-such-task")]),
            &unknown,
        ),
        ("POST", "/mcp", with(&[]), &notification),
        (
            "POST",
            "/mcp",
            with(&[("mcp-method", "tools/list")]),
            "{not json",
        ),
        ("POST", "/mcp", vec![("content-type", "text/plain")], &list),
        ("POST", "/mcp", with(&[("host", "evil.example")]), &list),
        ("GET", "/mcp", vec![], ""),
        ("DELETE", "/mcp", vec![], ""),
        ("PUT", "/mcp", with(&[]), &list),
        ("HEAD", "/mcp", vec![], ""),
        (
            "POST",
            "/mcp/",
            with(&[("mcp-method", "tools/list")]),
            &list,
        ),
        ("POST", "/MCP", with(&[("mcp-method", "tools/list")]), &list),
        ("GET", "/healthz", vec![], ""),
        ("GET", "/elsewhere", vec![], ""),
    ];
    for (method, path, headers, body) in &cases {
        let want = send(&client, routed, method, path, headers, body).await;
        let got = send(&client, direct, method, path, headers, body).await;
        assert_eq!(got, want, "{method} {path} {headers:?}");
    }
    // The cases reach the endpoint, its refusals and the router's own routes.
    let statuses: Vec<u16> = {
        let mut statuses = Vec::new();
        for (method, path, headers, body) in &cases {
            statuses.push(
                send(&client, direct, method, path, headers, body)
                    .await
                    .status,
            );
        }
        statuses
    };
    assert_eq!(
        statuses,
        [200, 200, 200, 400, 202, 400, 415, 403, 405, 405, 405, 405, 404, 404, 200, 404]
    );
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_bearer_scope_the_endpoint_keeps_its_layer() {
    let settings = Settings {
        bearer_scope: true,
        ..Settings::default()
    };
    let (mcp, handle) = tasks_fixture::server(&settings)
        .into_service()
        .await
        .unwrap();
    let stop = handle.shutdown_token();
    let direct = serve(tasks_fixture::app::app(mcp, &settings), stop.clone()).await;
    let client = reqwest::Client::new();
    let list = message("tools/list", json!({}));
    let refused = send(
        &client,
        direct,
        "POST",
        "/mcp",
        &with(&[("mcp-method", "tools/list")]),
        &list,
    )
    .await;
    assert_eq!(refused.status, 401);
    assert!(refused
        .headers
        .contains(&("www-authenticate".to_owned(), "Bearer".to_owned())));
    let served = send(
        &client,
        direct,
        "POST",
        "/mcp",
        &with(&[
            ("mcp-method", "tools/list"),
            ("authorization", "Bearer t-1"),
        ]),
        &list,
    )
    .await;
    assert_eq!(served.status, 200);
    stop.cancel();
}
