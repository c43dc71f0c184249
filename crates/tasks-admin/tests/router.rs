//! The console's router in process (`tower::ServiceExt::oneshot`) over a runtime on the memory
//! store: authentication, the JSON API, filters and paging, escaping, CSRF and Origin checks,
//! the operator's cancel, the security headers, the rate limit and a store without inventory.

use std::time::Duration;

use axum::body::Body;
use axum::Router;
use http::{header, Request, StatusCode};
use http_body_util::BodyExt as _;
use serde_json::{json, Value};
use tasks_admin::{AdminConfig, AdminCredential, RateLimit};
use tasks_core::{TaskId, TaskStatus};
use tasks_runtime::store::inventory::StuckRules;
use tasks_runtime::{RuntimeConfig, Scope, TaskRuntime, Tool, ToolError};
use tasks_test_support::runtime::{runtime, work_in, yielding_runtime};
use tower::ServiceExt as _;

const TOKEN: &str = "admin-token-for-tests";

/// `spin`: sets the statusMessage from its `message` argument, then runs until cancelled.
fn spin() -> Tool {
    Tool::new("spin", "Runs until cancelled", |ctx| async move {
        if let Some(message) = ctx.arguments().get("message").and_then(Value::as_str) {
            ctx.set_status_message(message.to_owned());
        }
        ctx.cancellation().cancelled().await;
        Err::<Value, _>(ToolError::Cancelled)
    })
}

fn config(limit: RateLimit) -> AdminConfig {
    let mut config = AdminConfig::new(
        "/admin",
        AdminCredential::new(TOKEN).expect("non-empty token"),
    );
    config.rate_limit = limit;
    config
}

fn wide() -> RateLimit {
    RateLimit {
        per_second: 10_000,
        burst: 10_000,
    }
}

fn app(rt: &TaskRuntime, limit: RateLimit) -> Router {
    Router::new().nest("/admin", tasks_admin::router(rt.clone(), config(limit)))
}

struct Answer {
    status: StatusCode,
    headers: http::HeaderMap,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

async fn send(app: &Router, request: Request<Body>) -> Answer {
    let response = app.clone().oneshot(request).await.expect("infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    Answer {
        status,
        headers,
        body: String::from_utf8(bytes.to_vec()).expect("UTF-8 body"),
    }
}

fn bearer(method: &str, uri: &str) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(uri)
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .expect("a request")
}

fn get(uri: &str) -> Request<Body> {
    Request::builder()
        .uri(uri)
        .body(Body::empty())
        .expect("a request")
}

async fn create(rt: &TaskRuntime, scope: &str, message: &str) -> TaskId {
    let task = rt
        .create(work_in(
            &Scope::new(scope),
            "spin",
            json!({ "message": message }),
        ))
        .await
        .expect("created");
    let id = task.id().clone();
    // The worker sets its message once it runs.
    for _ in 0..200 {
        let seen = rt.get(&Scope::new(scope), &id).await.expect("stored");
        if seen.status_message() == Some(message) {
            return id;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the status message {message:?} never showed");
}

/// Logs in through the form: the session cookie (`name=value`).
async fn login(app: &Router) -> String {
    let answer = send(
        app,
        Request::builder()
            .method("POST")
            .uri("/admin/login")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(format!("token={TOKEN}")))
            .expect("a request"),
    )
    .await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    assert_eq!(answer.headers[header::LOCATION], "/admin");
    let cookie = answer.headers[header::SET_COOKIE]
        .to_str()
        .expect("ASCII")
        .to_owned();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(cookie.contains("Path=/admin;"), "{cookie}");
    cookie.split(';').next().expect("a pair").to_owned()
}

fn with_cookie(method: &str, uri: &str, cookie: &str) -> http::request::Builder {
    Request::builder()
        .method(method)
        .uri(uri)
        .header(header::COOKIE, cookie)
        .header(header::HOST, "admin.test")
}

/// The CSRF token in a page's forms.
fn csrf_of(page: &str) -> String {
    let start = page.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    let end = page[start..].find('"').expect("closing quote") + start;
    page[start..end].to_owned()
}

#[tokio::test(start_paused = true)]
async fn without_the_credential_nothing_of_the_inventory_is_served() {
    let rt = runtime(vec![spin()], RuntimeConfig::default());
    rt.recover().await.expect("node registered");
    let id = create(&rt, "alice", "hello").await;
    let app = app(&rt, wide());
    for uri in [
        "/admin",
        "/admin/nodes",
        "/admin/api/tasks",
        "/admin/api/counts",
    ] {
        for request in [
            get(uri),
            Request::builder()
                .uri(uri)
                .header(header::AUTHORIZATION, "Bearer alice")
                .body(Body::empty())
                .expect("a request"),
        ] {
            let answer = send(&app, request).await;
            assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{uri}");
            assert!(!answer.body.contains(id.as_str()), "{uri}: {}", answer.body);
        }
    }
    let detail = send(&app, get(&format!("/admin/tasks/{id}"))).await;
    assert_eq!(detail.status, StatusCode::UNAUTHORIZED);
    assert!(detail.body.contains("/admin/login"));
    let api = send(&app, get("/admin/api/tasks")).await;
    assert_eq!(
        api.json()["error"],
        "unauthorized: the admin credential is required"
    );
    // The login page is served without a credential.
    let page = send(&app, get("/admin/login")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("name=\"token\""));
}

#[tokio::test(start_paused = true)]
async fn the_json_api_lists_filters_and_pages() {
    let rt = runtime(vec![spin()], RuntimeConfig::default());
    rt.recover().await.expect("node registered");
    let first = create(&rt, "alice", "one").await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    let second = create(&rt, "bob", "two").await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    let third = create(&rt, "bob", "three").await;
    rt.cancel(&Scope::new("bob"), &third)
        .await
        .expect("cancelled");
    let app = app(&rt, wide());

    let all = send(&app, bearer("GET", "/admin/api/tasks")).await;
    assert_eq!(all.status, StatusCode::OK);
    let all = all.json();
    let ids: Vec<&str> = all["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["taskId"].as_str().expect("an id"))
        .collect();
    assert_eq!(ids, [third.as_str(), second.as_str(), first.as_str()]);
    assert_eq!(all["nextCursor"], Value::Null);
    let row = &all["tasks"][2];
    assert_eq!(row["tool"], "spin");
    assert_eq!(row["status"], "working");
    assert_eq!(row["statusMessage"], "one");
    assert_eq!(row["attempt"], 1);
    assert_eq!(row["generation"], 1);
    assert_eq!(row["node"], rt.node().to_string());
    assert_eq!(row["stuck"], Value::Null);
    assert!(row["createdAt"].as_str().expect("a time").ends_with('Z'));

    let working = send(
        &app,
        bearer("GET", "/admin/api/tasks?status=working&order=oldest"),
    )
    .await;
    let ids: Vec<String> = working.json()["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["taskId"].as_str().expect("an id").to_owned())
        .collect();
    assert_eq!(ids, [first.as_str(), second.as_str()]);
    let tool = send(&app, bearer("GET", "/admin/api/tasks?tool=other")).await;
    assert_eq!(tool.json()["tasks"], json!([]));

    // Paging one at a time visits every task once.
    let mut seen = Vec::new();
    let mut uri = "/admin/api/tasks?limit=1".to_owned();
    loop {
        let page = send(&app, bearer("GET", &uri)).await.json();
        seen.push(
            page["tasks"][0]["taskId"]
                .as_str()
                .expect("an id")
                .to_owned(),
        );
        match page["nextCursor"].as_str() {
            Some(next) => uri = format!("/admin/api/tasks?limit=1&after={next}"),
            None => break,
        }
    }
    assert_eq!(seen, [third.as_str(), second.as_str(), first.as_str()]);

    let bad = send(&app, bearer("GET", "/admin/api/tasks?after=not-a-cursor")).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.json()["error"], "bad request: after is not a cursor");
    let bad = send(&app, bearer("GET", "/admin/api/tasks?status=bogus")).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);

    let one = send(&app, bearer("GET", &format!("/admin/api/tasks/{second}"))).await;
    assert_eq!(one.json()["scope"], Scope::new("bob").as_str());
    let unknown = send(&app, bearer("GET", "/admin/api/tasks/nope")).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.json()["error"], "not found");

    let counts = send(&app, bearer("GET", "/admin/api/counts")).await.json();
    assert_eq!(counts["byStatus"]["working"], 2);
    assert_eq!(counts["byStatus"]["cancelled"], 1);
    assert_eq!(counts["stuck"]["total"], 0);
    let nodes = send(&app, bearer("GET", "/admin/api/nodes")).await.json();
    assert_eq!(nodes["nodes"][0]["id"], rt.node().to_string());
    assert_eq!(nodes["nodes"][0]["held"], 2);
}

#[tokio::test(start_paused = true)]
async fn the_api_cancel_ends_a_task_once() {
    let rt = runtime(vec![spin()], RuntimeConfig::default());
    rt.recover().await.expect("node registered");
    let id = create(&rt, "alice", "busy").await;
    let app = app(&rt, wide());
    let uri = format!("/admin/api/tasks/{id}/cancel");
    let first = send(&app, bearer("POST", &uri)).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.json(), json!({"outcome": "cancelled"}));
    let task = rt.get(&Scope::new("alice"), &id).await.expect("stored");
    assert_eq!(task.status(), TaskStatus::Cancelled);
    let again = send(&app, bearer("POST", &uri)).await;
    assert_eq!(
        again.json(),
        json!({"outcome": "alreadyEnded", "status": "cancelled"})
    );
    let unknown = send(&app, bearer("POST", "/admin/api/tasks/nope/cancel")).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

#[tokio::test(start_paused = true)]
async fn pages_escape_what_tools_wrote_and_carry_the_security_headers() {
    let mut config = RuntimeConfig::default();
    config.stuck = StuckRules {
        working_ms: 0,
        input_required_ms: 0,
    };
    let rt = runtime(vec![spin()], config);
    rt.recover().await.expect("node registered");
    let id = create(&rt, "alice", "<script>alert(1)</script>").await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let app = app(&rt, wide());
    let cookie = login(&app).await;
    let list = send(
        &app,
        with_cookie("GET", "/admin?stuck=1", &cookie)
            .body(Body::empty())
            .expect("a request"),
    )
    .await;
    assert_eq!(list.status, StatusCode::OK);
    assert!(list.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!list.body.contains("<script>alert"));
    assert!(list.body.contains("stuck: working_idle"));
    assert!(list.body.contains(&format!("href=\"/admin/tasks/{id}\"")));
    assert!(list.body.contains("data-refresh=\"5\""));
    assert!(list.body.contains("src=\"/admin/assets/admin.js\""));
    assert_eq!(
        list.headers[header::CONTENT_SECURITY_POLICY],
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; \
         form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    );
    assert_eq!(list.headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(list.headers[header::REFERRER_POLICY], "no-referrer");
    assert_eq!(list.headers[header::CACHE_CONTROL], "no-store");
    let refused = send(&app, get("/admin")).await;
    assert_eq!(
        refused.headers[header::CONTENT_SECURITY_POLICY],
        tasks_admin::CSP
    );
    let css = send(&app, get("/admin/assets/admin.css")).await;
    assert_eq!(css.status, StatusCode::OK);
    assert!(css.headers[header::CONTENT_TYPE]
        .to_str()
        .expect("ASCII")
        .starts_with("text/css"));
    let bad = send(
        &app,
        with_cookie("GET", "/admin?after=%21%21", &cookie)
            .body(Body::empty())
            .expect("a request"),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("after is not a cursor"));
}

#[tokio::test(start_paused = true)]
async fn the_cancel_form_needs_the_csrf_token_and_the_same_origin() {
    let rt = runtime(vec![spin()], RuntimeConfig::default());
    rt.recover().await.expect("node registered");
    let id = create(&rt, "alice", "busy").await;
    let app = app(&rt, wide());
    let cookie = login(&app).await;
    let detail = send(
        &app,
        with_cookie("GET", &format!("/admin/tasks/{id}"), &cookie)
            .body(Body::empty())
            .expect("a request"),
    )
    .await;
    assert_eq!(detail.status, StatusCode::OK);
    assert!(detail.body.contains("Cancel task"));
    let csrf = csrf_of(&detail.body);
    let uri = format!("/admin/tasks/{id}/cancel");
    let post = |body: String, origin: Option<&'static str>| {
        let mut builder = with_cookie("POST", &uri, &cookie)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(origin) = origin {
            builder = builder.header(header::ORIGIN, origin);
        }
        builder.body(Body::from(body)).expect("a request")
    };
    let still_working = |rt: TaskRuntime, id: TaskId| async move {
        rt.get(&Scope::new("alice"), &id)
            .await
            .expect("stored")
            .status()
            == TaskStatus::Working
    };
    let evil = send(
        &app,
        post(format!("csrf={csrf}"), Some("https://evil.example")),
    )
    .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    assert!(still_working(rt.clone(), id.clone()).await);
    let missing = send(&app, post(String::new(), Some("http://admin.test"))).await;
    assert_eq!(missing.status, StatusCode::FORBIDDEN);
    let wrong = send(&app, post("csrf=forged".into(), Some("http://admin.test"))).await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);
    assert!(still_working(rt.clone(), id.clone()).await);
    // Without a session, a cross-site post is refused before anything else.
    let anonymous = send(
        &app,
        Request::builder()
            .method("POST")
            .uri(&uri)
            .header(header::HOST, "admin.test")
            .header(header::ORIGIN, "https://evil.example")
            .body(Body::empty())
            .expect("a request"),
    )
    .await;
    assert_eq!(anonymous.status, StatusCode::FORBIDDEN);

    let done = send(
        &app,
        post(format!("csrf={csrf}"), Some("http://admin.test")),
    )
    .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    assert_eq!(done.headers[header::LOCATION], format!("/admin/tasks/{id}"));
    let task = rt.get(&Scope::new("alice"), &id).await.expect("stored");
    assert_eq!(task.status(), TaskStatus::Cancelled);
    assert_eq!(
        task.status_message(),
        Some(tasks_core::MESSAGE_CANCELLED_BY_OPERATOR)
    );

    // Logging out needs the token too, and ends the session.
    let logout = |body: String| {
        with_cookie("POST", "/admin/logout", &cookie)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .expect("a request")
    };
    assert_eq!(
        send(&app, logout("csrf=x".into())).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        send(&app, logout(format!("csrf={csrf}"))).await.status,
        StatusCode::SEE_OTHER
    );
    let after = send(
        &app,
        with_cookie("GET", "/admin", &cookie)
            .body(Body::empty())
            .expect("a request"),
    )
    .await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test(start_paused = true)]
async fn a_wrong_login_is_a_401_and_sets_no_cookie() {
    let rt = runtime(vec![spin()], RuntimeConfig::default());
    rt.recover().await.expect("node registered");
    let app = app(&rt, wide());
    let answer = send(
        &app,
        Request::builder()
            .method("POST")
            .uri("/admin/login")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from("token=guess"))
            .expect("a request"),
    )
    .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert!(answer.headers.get(header::SET_COOKIE).is_none());
    assert!(answer.body.contains("wrong token"));
    let forged = send(
        &app,
        with_cookie("GET", "/admin", "tasks_admin_session=forged")
            .body(Body::empty())
            .expect("a request"),
    )
    .await;
    assert_eq!(forged.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test(start_paused = true)]
async fn past_the_burst_the_console_answers_429_until_time_refills_it() {
    let rt = runtime(vec![spin()], RuntimeConfig::default());
    rt.recover().await.expect("node registered");
    let app = app(
        &rt,
        RateLimit {
            per_second: 1,
            burst: 3,
        },
    );
    for _ in 0..3 {
        assert_eq!(
            send(&app, bearer("GET", "/admin/api/counts")).await.status,
            StatusCode::OK
        );
    }
    let limited = send(&app, bearer("GET", "/admin/api/counts")).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(limited.headers[header::RETRY_AFTER], "1");
    assert_eq!(limited.json()["error"], "too many requests");
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(
        send(&app, bearer("GET", "/admin/api/counts")).await.status,
        StatusCode::OK
    );
}

#[tokio::test(start_paused = true)]
async fn a_store_without_inventory_is_not_supported() {
    let rt = yielding_runtime(vec![spin()], RuntimeConfig::default());
    let app = app(&rt, wide());
    let api = send(&app, bearer("GET", "/admin/api/tasks")).await;
    assert_eq!(api.status, StatusCode::NOT_IMPLEMENTED);
    assert_eq!(
        api.json()["error"],
        "the operator's inventory is not supported by this store"
    );
    for uri in ["/admin", "/admin/nodes", "/admin/tasks/x"] {
        let page = send(&app, bearer("GET", uri)).await;
        assert_eq!(page.status, StatusCode::NOT_IMPLEMENTED, "{uri}");
        assert!(page.body.contains("not supported by this store"), "{uri}");
    }
}
