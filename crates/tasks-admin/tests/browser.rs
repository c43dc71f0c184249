//! The console in real headless Chromium, driven over WebDriver (fantoccini + chromedriver):
//! login, the list of tasks created over MCP, filtering, a stuck badge, a hostile status message shown as text with
//! nothing run, the Cancel button, 401 without login, 403 for a cross-site post.
//!
//! Needs `chromium` and `chromium-driver` (Debian packages: `/usr/bin/chromium`,
//! `/usr/bin/chromedriver`, or `CHROMEDRIVER=path`). Without them the test prints
//! `skipped: chromedriver not found` and passes, except under `CI=true`, where it fails.
//! With `ADMIN_SCREENSHOTS` set it saves the list, detail and nodes pages to
//! `/tmp/admin-shots/*.png`. Run it alone (it starts a browser): its binary is `browser`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use tasks_admin::{AdminConfig, AdminCredential};
use tasks_core::{TaskId, TaskStatus};
use tasks_runtime::store::inventory::StuckRules;
use tasks_runtime::{Scope, TaskRuntime, Tool, ToolError};

const TOKEN: &str = "browser-admin-token";
const XSS: &str = "<img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=1</script>";

fn chromedriver() -> Option<PathBuf> {
    let path = std::env::var_os("CHROMEDRIVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromedriver"));
    (path.exists() && std::path::Path::new("/usr/bin/chromium").exists()).then_some(path)
}

fn spin() -> Tool {
    Tool::new("spin", "Runs until cancelled", |ctx| async move {
        if let Some(message) = ctx.arguments().get("message").and_then(Value::as_str) {
            ctx.set_status_message(message.to_owned());
        }
        ctx.cancellation().cancelled().await;
        Err::<Value, _>(ToolError::Cancelled)
    })
    .with_policy(tasks_core::TaskPolicy::Required)
}

/// The MCP endpoint at `/mcp` and the console at `/admin` on 127.0.0.1: its base URL.
async fn serve() -> (String, TaskRuntime, tasks_http::McpHandle) {
    let (mcp, handle) = tasks_http::ServerBuilder::new("admin-browser", "0")
        .tool(spin())
        .stuck_rules(StuckRules {
            working_ms: 0,
            input_required_ms: 0,
        })
        .into_service()
        .await
        .expect("the MCP service starts");
    let runtime = handle.runtime().clone();
    let config = AdminConfig::new("/admin", AdminCredential::new(TOKEN).expect("non-empty"));
    let app = axum::Router::new()
        .route_service("/mcp", mcp)
        .nest("/admin", tasks_admin::router(runtime.clone(), config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("bound");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), runtime, handle)
}

/// Creates a `spin` task over MCP (`tools/call` through tasks-client, which declares the Tasks
/// extension) with `message` as its status message; its id once the message shows.
async fn create(base: &str, rt: &TaskRuntime, message: &str) -> TaskId {
    let mcp = tasks_client::Client::builder(format!("{base}/mcp")).build();
    let execution = mcp
        .call_tool("spin", json!({ "message": message }))
        .await
        .expect("tools/call");
    let tasks_client::Execution::Task(task) = execution else {
        panic!("spin created no task: {execution:?}");
    };
    let id = TaskId::parse(task.id().as_str()).expect("a task id");
    let scope = Scope::shared();
    let deadline = Instant::now() + Duration::from_secs(5);
    while rt.get(&scope, &id).await.expect("stored").status_message() != Some(message) {
        assert!(Instant::now() < deadline, "the status message never showed");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    id
}

async fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("bound").port()
}

async fn start_driver(path: &PathBuf) -> (tokio::process::Child, Client) {
    let port = free_port().await;
    let child = tokio::process::Command::new(path)
        .arg(format!("--port={port}"))
        .kill_on_drop(true)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match ClientBuilder::new(connector.clone())
            .capabilities(caps.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
        {
            Ok(client) => return (child, client),
            Err(error) => {
                assert!(Instant::now() < deadline, "no WebDriver session: {error}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

async fn shot(client: &Client, name: &str) {
    if std::env::var_os("ADMIN_SCREENSHOTS").is_none() {
        return;
    }
    let png = client.screenshot().await.expect("a screenshot");
    std::fs::create_dir_all("/tmp/admin-shots").expect("the folder");
    std::fs::write(format!("/tmp/admin-shots/{name}.png"), png).expect("written");
}

async fn body_text(client: &Client) -> String {
    client
        .find(Locator::Css("body"))
        .await
        .expect("a body")
        .text()
        .await
        .expect("its text")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_in_a_real_browser() {
    let Some(driver) = chromedriver() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromedriver or chromium not found under CI"
        );
        println!("skipped: chromedriver not found");
        return;
    };
    let started = Instant::now();
    let (base, rt, handle) = serve().await;
    let plain = create(&base, &rt, "plain work").await;
    let hostile = create(&base, &rt, XSS).await;
    let ended = create(&base, &rt, "ends early").await;
    rt.cancel(&Scope::shared(), &ended)
        .await
        .expect("cancelled");
    let (_driver, client) = start_driver(&driver).await;

    // Step 1: without login, 401 and nothing of the inventory.
    client
        .goto(&format!("{base}/admin"))
        .await
        .expect("navigates");
    let text = body_text(&client).await;
    assert!(text.contains("unauthorized"), "{text}");
    assert!(!text.contains(plain.as_str()));

    // Step 2: login with the token; the list shows the tasks.
    client
        .goto(&format!("{base}/admin/login"))
        .await
        .expect("navigates");
    client
        .find(Locator::Css("input[name=token]"))
        .await
        .expect("the token field")
        .send_keys(TOKEN)
        .await
        .expect("typed");
    client
        .find(Locator::Css("form.login button"))
        .await
        .expect("the button")
        .click()
        .await
        .expect("clicked");
    let list = body_text(&client).await;
    for id in [&plain, &hostile, &ended] {
        assert!(list.contains(id.as_str()), "{id} missing from {list}");
    }
    // Step 3: a working task is stuck at once under 0 ms rules.
    assert!(list.contains("stuck: working_idle"), "{list}");
    // Step 4: the hostile message is text, and nothing ran.
    assert!(list.contains("<img src=x onerror="), "{list}");
    let pwned = client
        .execute(
            "return window.__pwned === undefined && document.title;",
            vec![],
        )
        .await
        .expect("script runs");
    assert_eq!(pwned, json!("Tasks · tasks admin"));
    shot(&client, "list").await;

    // Step 5: filtering by status narrows the list.
    client
        .find(Locator::Css("select[name=status]"))
        .await
        .expect("the status filter")
        .select_by_value("cancelled")
        .await
        .expect("selected");
    client
        .find(Locator::Css("form.filters button"))
        .await
        .expect("the button")
        .click()
        .await
        .expect("clicked");
    let url = client.current_url().await.expect("a URL");
    assert!(url.as_str().contains("status=cancelled"), "{url}");
    let rows = client
        .find_all(Locator::Css("table.tasks tbody tr"))
        .await
        .expect("rows");
    assert_eq!(rows.len(), 1);
    assert!(body_text(&client).await.contains(ended.as_str()));

    // Step 6: the nodes page.
    client
        .goto(&format!("{base}/admin/nodes"))
        .await
        .expect("navigates");
    assert!(body_text(&client).await.contains(&rt.node().to_string()));
    shot(&client, "nodes").await;

    // Step 7: Cancel on the detail page ends the task.
    client
        .goto(&format!("{base}/admin/tasks/{plain}"))
        .await
        .expect("navigates");
    shot(&client, "detail").await;
    client
        .find(Locator::Id("cancel"))
        .await
        .expect("the Cancel button")
        .click()
        .await
        .expect("clicked");
    // The click submits the form; the browser's POST and its redirect take their time.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let task = rt.get(&Scope::shared(), &plain).await.expect("stored");
        if task.status() == TaskStatus::Cancelled {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the page's Cancel did not end the task: {:?}",
            task.status()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // An MCP client sees it cancelled, by the operator.
    let mcp = tasks_client::Client::builder(format!("{base}/mcp")).build();
    let seen = mcp
        .task(plain.clone())
        .get()
        .await
        .expect("tasks/get over MCP");
    assert_eq!(seen.state.status(), TaskStatus::Cancelled);
    assert_eq!(
        seen.task.status_message.as_deref(),
        Some(tasks_core::MESSAGE_CANCELLED_BY_OPERATOR)
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while !body_text(&client).await.contains("cancelled") {
        assert!(
            std::time::Instant::now() < deadline,
            "the detail page never showed the task cancelled"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    // Step 8: a cross-site post with the session cookie is refused.
    let cookie = client
        .get_named_cookie("tasks_admin_session")
        .await
        .expect("the session cookie");
    let answer = reqwest::Client::new()
        .post(format!("{base}/admin/tasks/{hostile}/cancel"))
        .header("cookie", format!("tasks_admin_session={}", cookie.value()))
        .header("origin", "http://evil.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("csrf=guess")
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), reqwest::StatusCode::FORBIDDEN);
    let task = rt.get(&Scope::shared(), &hostile).await.expect("stored");
    assert_eq!(task.status(), TaskStatus::Working);

    client.close().await.expect("the session closes");
    handle.shutdown().await;
    println!("browser test took {:?}", started.elapsed());
}
