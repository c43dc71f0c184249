//! The MCP endpoint as a tower service mounted in an axum application: the
//! fixture's own router (`/mcp`, `/healthz`, a 404 naming the endpoint, CORS), a mount under a
//! prefix, principals from the request extensions, and shutdown through the handle.

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Router;
use serde_json::json;
use tasks_fixture::Settings;
use tasks_http::{McpHandle, Principal};
use tasks_test_support::client::*;
use tasks_test_support::dispatcher::bearer_principal;
use tasks_test_support::fixture::*;
use tasks_test_support::protocol::*;
use tasks_test_support::sse::Sse;
use tasks_test_support::wait::WAIT_LIMIT;
use tokio_util::sync::CancellationToken;

/// Serves `app` on a loopback port; returns its address and the token that stops it.
async fn serve(app: Router, handle: &McpHandle) -> (SocketAddr, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = handle.shutdown_token();
    tokio::spawn(tasks_http::serve(listener, app, stop.clone()));
    (addr, stop)
}

/// The fixture's application with `settings`.
async fn fixture_app(settings: &Settings) -> (SocketAddr, McpHandle) {
    let (mcp, handle) = tasks_fixture::server(settings)
        .into_service()
        .await
        .unwrap();
    let (addr, _) = serve(tasks_fixture::app::router(mcp, settings), &handle).await;
    (addr, handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fixture_app_serves_mcp_healthz_and_names_its_endpoint_elsewhere() {
    let (addr, handle) = fixture_app(&settings()).await;
    let http = reqwest::Client::new();

    let health = http
        .get(format!("http://{addr}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap(), "ok\n");

    let client = Client::new(format!("http://{addr}/mcp"));
    let tools = client.request("tools/list", json!({}), json!({})).await;
    assert!(tools.result()["tools"].as_array().unwrap().len() > 10);

    for path in ["/", "/mcp/", "/other", "/MCP"] {
        let response = http
            .post(format!("http://{addr}{path}"))
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404, "{path}");
        assert_eq!(
            response.headers()["content-type"],
            "text/plain; charset=utf-8"
        );
        assert_eq!(
            response.text().await.unwrap(),
            "Not found: the MCP endpoint is /mcp\n"
        );
    }
    // GET on the endpoint reaches the service: 405 with a JSON-RPC body and `Allow: POST`.
    let get = client.http().get(client.url()).send().await.unwrap();
    assert_eq!(get.headers()["allow"], "POST");
    Client::send(client.http().get(client.url())).await.error(
        405,
        -32600,
        "Method not allowed: the MCP endpoint accepts POST",
    );
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bind_names_its_endpoint_on_other_paths() {
    let server = start(settings()).await;
    let url = format!("http://{}/other", server.local_addr());
    let response = reqwest::Client::new()
        .post(url)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.text().await.unwrap(),
        "Not found: the MCP endpoint is /mcp\n"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_origin_answers_preflights_and_joins_the_origin_allow_list() {
    let origin = "https://inspector.example.com";
    let mut settings = settings();
    settings.cors_origins = vec![origin.to_owned()];
    let (addr, handle) = fixture_app(&settings).await;
    let url = format!("http://{addr}/mcp");
    let http = reqwest::Client::new();

    let preflight = http
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,mcp-method,mcp-name,mcp-protocol-version,mcp-param-region",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 200);
    let headers = preflight.headers();
    assert_eq!(headers["access-control-allow-origin"], origin);
    assert_eq!(
        headers["access-control-allow-headers"],
        "content-type,mcp-method,mcp-name,mcp-protocol-version,mcp-param-region"
    );
    assert_eq!(headers["access-control-allow-methods"], "POST,GET,DELETE");

    // A 2025 browser client reads its session id across origins.
    let init = http
        .post(&url)
        .header("origin", origin)
        .header("content-type", "application/json")
        .body(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "browser", "version": "1"}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(init.status(), 200);
    assert_eq!(
        init.headers()["access-control-expose-headers"],
        "mcp-session-id"
    );
    assert!(init.headers().contains_key("mcp-session-id"));

    let client = Client::new(&url);
    let allowed = Client::send(
        client
            .post(json!(1), "tools/list", json!({}), json!({}))
            .header("origin", origin),
    )
    .await;
    assert!(allowed.result()["tools"].is_array());
    Client::send(
        client
            .post(json!(2), "tools/list", json!({}), json!({}))
            .header("origin", "https://evil.example.com"),
    )
    .await
    .error(403, -32600, "Forbidden: Host or Origin is not allowed");
    // A foreign origin gets no CORS headers on its preflight.
    let refused = http
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", "https://evil.example.com")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert!(refused
        .headers()
        .get("access-control-allow-origin")
        .is_none());
    handle.shutdown().await;
}

/// Test authentication: `X-User: <name>` is principal `<name>`; no header, no principal.
async fn user_principal(mut request: Request, next: Next) -> Response {
    let user = request
        .headers()
        .get("x-user")
        .and_then(|v| v.to_str().ok())
        .map(Principal::new);
    if let Some(user) = user {
        request.extensions_mut().insert(user);
    }
    next.run(request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_under_a_prefix_with_principals_from_a_layer() {
    let (mcp, handle) = tasks_fixture::server(&settings())
        .into_service()
        .await
        .unwrap();
    let app = Router::new()
        .route("/", axum::routing::get(|| async { "host app" }))
        .nest_service("/api/mcp", mcp)
        .layer(middleware::from_fn(user_principal));
    let (addr, _) = serve(app, &handle).await;
    let client = Client::new(format!("http://{addr}/api/mcp"));
    let as_user = |user: &'static str, method: &str, params: serde_json::Value| {
        client
            .post(client.next_id(), method, params, tasks_caps())
            .header("x-user", user)
    };

    let created = Client::send(as_user(
        "alice",
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 60, "label": "mine"}}),
    ))
    .await
    .result();
    let id = created["taskId"].as_str().unwrap().to_owned();
    let mine = Client::send(as_user("alice", "tasks/get", json!({"taskId": id})))
        .await
        .result();
    assert_eq!(mine["taskId"], id.as_str());
    for stranger in [
        as_user("bob", "tasks/get", json!({"taskId": id})),
        // No principal: the shared scope, which is not alice's either.
        client.post(json!(99), "tasks/get", json!({"taskId": id}), tasks_caps()),
    ] {
        Client::send(stranger)
            .await
            .error(400, -32602, "Unknown or inaccessible taskId");
    }
    // The host's own routes still work beside the mount.
    let root = reqwest::get(format!("http://{addr}/")).await.unwrap();
    assert_eq!(root.text().await.unwrap(), "host app");
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shutdown_token_closes_listen_streams_with_their_response() {
    let (addr, handle) = fixture_app(&settings()).await;
    let client = Client::new(format!("http://{addr}/mcp"));
    let response = client
        .post(
            json!("listen-1"),
            "subscriptions/listen",
            json!({"notifications": {}}),
            json!({}),
        )
        .send()
        .await
        .unwrap();
    let mut sse = Sse::of(response);
    assert_eq!(
        sse.next().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    handle.shutdown_token().cancel();
    let closing = sse.next().await;
    assert_eq!(closing["id"], "listen-1");
    assert!(closing.get("result").is_some(), "{closing}");
    tokio::time::timeout(Duration::from_secs(5), handle.shutdown())
        .await
        .expect("shutdown returns");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_principal_fn_refusal_carries_the_configured_challenge() {
    let challenge =
        r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp""#;
    let settings = settings();
    let server = tasks_fixture::server(&settings)
        .principal_fn(bearer_principal)
        .www_authenticate(challenge.parse().unwrap())
        .bind(settings.listen)
        .await
        .unwrap();
    let client = Client::of(&server);
    let refused = client
        .post(json!(1), "tools/list", json!({}), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert_eq!(refused.headers()["www-authenticate"], challenge);
    // Accepted requests carry no challenge.
    let accepted = client
        .post(json!(2), "tools/list", json!({}), json!({}))
        .bearer_auth("alice")
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 200);
    assert!(accepted.headers().get("www-authenticate").is_none());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_host_admits_that_host_only() {
    let mut settings = settings();
    settings.allowed_hosts = vec!["mcp.example.com".to_owned()];
    let (addr, handle) = fixture_app(&settings).await;
    let client = Client::new(format!("http://{addr}/mcp"));
    let named = Client::send_replacing(
        client.post(json!(1), "tools/list", json!({}), json!({})),
        &[("host", "mcp.example.com")],
    )
    .await;
    assert!(named.result()["tools"].is_array());
    Client::send_replacing(
        client.post(json!(2), "tools/list", json!({}), json!({})),
        &[("host", "other.example.com")],
    )
    .await
    .error(403, -32600, "Forbidden: Host or Origin is not allowed");
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_tasks_and_streams_without_task_data() {
    let (addr, handle) = fixture_app(&settings()).await;
    let client = Client::new(format!("http://{addr}/mcp"));
    let scrape = || async {
        let response = reqwest::get(format!("http://{addr}/metrics"))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"],
            "application/openmetrics-text; version=1.0.0; charset=utf-8"
        );
        response.text().await.unwrap()
    };

    client
        .request("tools/list", json!({}), json!({}))
        .await
        .result();
    let created = client
        .create_task("slow_compute", json!({"seconds": 0, "label": "metered"}))
        .await;
    let task_id = created["taskId"].as_str().unwrap().to_owned();
    let done = client.poll_until_terminal(&task_id).await;
    assert_eq!(done["status"], "completed");
    client
        .request("tasks/get", json!({"taskId": "no-such-task"}), tasks_caps())
        .await
        .error(400, -32602, "Unknown or inaccessible taskId");
    // A task that waits for input, watched on a listen stream, then answered.
    let asking = client
        .create_task("confirm_delete", json!({"filename": "metered.txt"}))
        .await;
    let asking_id = asking["taskId"].as_str().unwrap().to_owned();
    client
        .poll_task(&asking_id, None, |status| status == "input_required")
        .await;
    let listen = client
        .post(
            json!("metered-listen"),
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [asking_id]}}),
            tasks_caps(),
        )
        .send()
        .await
        .unwrap();
    let mut sse = Sse::of(listen);
    assert_eq!(
        sse.next().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    client
        .update_task(
            &asking_id,
            json!({"confirm-delete": {"action": "accept", "content": {"confirm": true}}}),
        )
        .await;
    // Every change until completion arrives (working, then completed).
    let mut notified = 0;
    loop {
        let notification = sse.next().await;
        assert_eq!(
            notification["method"], "notifications/tasks",
            "{notification}"
        );
        notified += 1;
        if notification["params"]["status"] == "completed" {
            break;
        }
    }

    let text = scrape().await;
    for line in [
        r#"mcp_requests_total{method="tools/list",code="ok"} 1"#,
        r#"mcp_requests_total{method="tools/call",code="ok"} 2"#,
        r#"mcp_requests_total{method="tasks/get",code="-32602"} 1"#,
        r#"mcp_tasks_created_total{tool="slow_compute",policy="optional"} 1"#,
        r#"mcp_tasks_created_total{tool="confirm_delete",policy="optional"} 1"#,
        r#"mcp_task_transitions_total{status="input_required"} 1"#,
        r#"mcp_task_transitions_total{status="completed"} 2"#,
        r#"mcp_task_duration_seconds_count{status="completed"} 2"#,
        "mcp_task_input_wait_seconds_count 1",
        // From the store at the scrape: both tasks, completed and not yet expired.
        r#"mcp_tasks_stored{status="completed"} 2"#,
        r#"mcp_tasks_stored{status="working"} 0"#,
        r#"mcp_tasks_stuck{reason="working_idle"} 0"#,
        r#"mcp_tasks_stuck{reason="holder_lost"} 0"#,
        r#"mcp_store_operation_duration_seconds_count{operation="create"} 2"#,
        "mcp_listen_streams 1",
        "mcp_worker_slots_busy 0",
        "mcp_worker_slots 32",
        "mcp_tasks_reaped_total 0",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in:\n{text}"
        );
    }
    let sent =
        format!(r#"mcp_listen_notifications_total{{method="notifications/tasks"}} {notified}"#);
    assert!(
        text.lines().any(|l| l == sent),
        "missing {sent:?} in:\n{text}"
    );
    assert!(!text.contains(&task_id), "no task id in metrics:\n{text}");
    assert!(
        !text.contains("metered"),
        "no arguments in metrics:\n{text}"
    );

    // The stream closed, the gauge is back to zero.
    drop(sse);
    let deadline = tokio::time::Instant::now() + WAIT_LIMIT;
    while !scrape().await.lines().any(|l| l == "mcp_listen_streams 0") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the listen gauge never fell"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    handle.shutdown().await;
}
