//! The example application over loopback HTTP: its own routes and middleware beside the MCP
//! mount, and bearer authentication (401 with the challenge, the metadata document, tasks
//! scoped by user). The official runner's Tasks scenarios run against the binary in the
//! workspace's test command.

use std::collections::HashMap;
use std::net::SocketAddr;

use serde_json::{json, Value};
use tasks_example_axum::{app, mcp_server, Auth, MCP_PATH, METADATA_PATH};
use tasks_test_support::protocol::TASKS;
use tasks_test_support::request::Req;
use tasks_test_support::Client;

/// Serves the application on a loopback port, authenticated when `tokens` is not empty.
async fn start(tokens: &[(&str, &str)]) -> (SocketAddr, tasks_http::McpHandle) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let auth = (!tokens.is_empty()).then(|| Auth {
        tokens: tokens
            .iter()
            .map(|(token, user)| ((*token).to_owned(), (*user).to_owned()))
            .collect::<HashMap<_, _>>(),
        base_url: format!("http://{addr}"),
        authorization_servers: vec!["https://auth.example.com".to_owned()],
    });
    let (router, handle) = app(mcp_server(), auth).await.unwrap();
    tokio::spawn(tasks_http::serve(listener, router, handle.shutdown_token()));
    (addr, handle)
}

/// A POST of `method` to the MCP endpoint with the headers MCP 2026-07-28 asks for (the
/// shared request builder's), `Mcp-Name` only as given.
fn post(
    addr: SocketAddr,
    id: u32,
    method: &str,
    params: Value,
    name: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut request = Req::new(method)
        .id(json!(id))
        .params(params)
        .caps(json!({"extensions": {TASKS: {}}}))
        .without("mcp-name");
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    Client::new(format!("http://{addr}{MCP_PATH}")).req(&request)
}

async fn json_of(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn own_routes_and_middleware_beside_the_open_mount() {
    let (addr, handle) = start(&[]).await;
    let root = reqwest::get(format!("http://{addr}/")).await.unwrap();
    assert_eq!(root.headers()["x-served-by"], "axum-app");
    assert_eq!(root.text().await.unwrap(), "The example application.\n");
    let status = reqwest::get(format!("http://{addr}/api/status"))
        .await
        .unwrap();
    assert_eq!(status.json::<Value>().await.unwrap(), json!({"ok": true}));

    let response = post(addr, 1, "tools/list", json!({}), None)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-served-by"], "axum-app");
    let (code, body) = json_of(response).await;
    assert_eq!(code, 200);
    assert_eq!(
        body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "axum-app"
    );
    // The application's own typed tool, with its generated schema.
    let tool = &body["result"]["tools"][0];
    assert_eq!(tool["name"], "word_count");
    assert_eq!(tool["inputSchema"]["properties"]["text"]["type"], "string");
    assert_eq!(tool["inputSchema"]["required"], json!(["text"]));
    let call = json!({"name": "word_count", "arguments": {"text": "one two  three"}});
    let (code, counted) = json_of(
        post(addr, 2, "tools/call", call, Some("word_count"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(counted["result"]["content"][0]["text"], "3");
    // Without authentication there is no metadata document.
    let missing = reqwest::get(format!("http://{addr}{METADATA_PATH}"))
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_authentication_refuses_with_a_challenge_and_scopes_tasks_by_user() {
    let (addr, handle) = start(&[("alice-token", "alice"), ("bob-token", "bob")]).await;
    let challenge = format!(r#"Bearer resource_metadata="http://{addr}{METADATA_PATH}""#);

    // No token: 401 with the challenge and a JSON-RPC error body.
    let refused = post(addr, 1, "tools/list", json!({}), None)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.headers()["www-authenticate"], challenge.as_str());
    let (code, body) = json_of(refused).await;
    assert_eq!(code, 401);
    assert_eq!(
        body["error"],
        json!({"code": -32600, "message": "Unauthorized"})
    );
    // A wrong token: the same, marked invalid_token.
    let wrong = post(addr, 2, "tools/list", json!({}), None)
        .bearer_auth("stolen")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert_eq!(
        wrong.headers()["www-authenticate"],
        format!(r#"{challenge}, error="invalid_token""#).as_str()
    );

    // The scheme is case-insensitive; two Authorization headers are ambiguous: 400.
    let lower = post(addr, 5, "tools/list", json!({}), None)
        .header("authorization", "bearer alice-token")
        .send()
        .await
        .unwrap();
    assert_eq!(lower.status(), 200);
    let twice = post(addr, 6, "tools/list", json!({}), None)
        .header("authorization", "Bearer alice-token")
        .header("authorization", "Bearer bob-token")
        .send()
        .await
        .unwrap();
    assert_eq!(
        twice.headers()["www-authenticate"],
        format!(r#"{challenge}, error="invalid_request""#).as_str()
    );
    let (code, body) = json_of(twice).await;
    assert_eq!(code, 400);
    assert_eq!(
        body["error"],
        json!({"code": -32600, "message": "Only one Authorization header is allowed"})
    );

    // Other paths are not the endpoint: 404, not 401.
    let elsewhere = reqwest::get(format!("http://{addr}/nope")).await.unwrap();
    assert_eq!(elsewhere.status(), 404);
    assert!(elsewhere.headers().get("www-authenticate").is_none());

    // The metadata document the challenge points at.
    let metadata: Value = reqwest::get(format!("http://{addr}{METADATA_PATH}"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        metadata,
        json!({
            "resource": format!("http://{addr}{MCP_PATH}"),
            "authorization_servers": ["https://auth.example.com"],
            "bearer_methods_supported": ["header"],
        })
    );

    // Alice's task is hers alone.
    let call = json!({"name": "slow_compute", "arguments": {"seconds": 60, "label": "a"}});
    let (code, created) = json_of(
        post(addr, 3, "tools/call", call, Some("slow_compute"))
            .bearer_auth("alice-token")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(code, 200, "{created}");
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let get = |token: &'static str| {
        post(
            addr,
            4,
            "tasks/get",
            json!({"taskId": task_id}),
            Some(&task_id),
        )
        .bearer_auth(token)
    };
    let (code, mine) = json_of(get("alice-token").send().await.unwrap()).await;
    assert_eq!(code, 200);
    assert_eq!(mine["result"]["taskId"], task_id.as_str());
    let (code, theirs) = json_of(get("bob-token").send().await.unwrap()).await;
    assert_eq!(code, 400);
    assert_eq!(theirs["error"]["code"], -32602);
    assert_eq!(theirs["error"]["message"], "Unknown or inaccessible taskId");
    handle.shutdown().await;
}
