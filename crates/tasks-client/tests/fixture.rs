//! The client against the fixture over real HTTP: every way a call can end, input answered
//! through MRTR and `tasks/update`, resuming a task after the client is dropped, listening
//! against polling, and the typed era error against a server of the session-based revisions.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt as _;
use serde_json::{json, Value};
use tasks_client::{
    Client, ClientError, Elicitation, ElicitationMode, Execution, InputHandler, Outcome,
    SettleOptions, TaskHandle, Wait,
};
use tasks_core::input::{ClientCapability, ElicitAnswer};
use tasks_core::{JsonObject, TaskStatus};
use tasks_http::RunningServer;

/// Every wait in these tests gives up after this long.
const LIMIT: Duration = Duration::from_secs(30);

async fn fixture(poll_interval_ms: u64) -> RunningServer {
    let settings = tasks_fixture::Settings {
        listen: "127.0.0.1:0".parse().expect("an address"),
        drain_ms: 0,
        poll_interval_ms,
        ..Default::default()
    };
    tasks_fixture::server(&settings)
        .bind(settings.listen)
        .await
        .expect("the fixture binds")
}

fn args(value: Value) -> JsonObject {
    value.as_object().cloned().expect("an object")
}

fn options() -> SettleOptions {
    SettleOptions::default().deadline(LIMIT)
}

/// Answers forms: every string field `name`, every boolean field `confirm`, or declines;
/// records the keys it was asked under.
#[derive(Clone)]
struct Forms {
    name: &'static str,
    confirm: Option<bool>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Forms {
    fn accepting(confirm: bool) -> Self {
        Forms {
            name: "Ada",
            confirm: Some(confirm),
            asked: Arc::default(),
        }
    }

    fn declining() -> Self {
        Forms {
            name: "Ada",
            confirm: None,
            asked: Arc::default(),
        }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().expect("lock").clone()
    }
}

#[async_trait]
impl InputHandler for Forms {
    fn capabilities(&self) -> Vec<ClientCapability> {
        vec![ClientCapability::ElicitationForm]
    }

    async fn elicit(&self, key: &str, request: Elicitation) -> Result<ElicitAnswer, ClientError> {
        self.asked.lock().expect("lock").push(key.to_owned());
        let Some(confirm) = self.confirm else {
            return Ok(ElicitAnswer::Decline);
        };
        let ElicitationMode::Form { requested_schema } = request.mode else {
            return Ok(ElicitAnswer::Cancel);
        };
        let mut content = JsonObject::new();
        for (field, schema) in requested_schema["properties"].as_object().expect("fields") {
            let value = match schema["type"].as_str() {
                Some("boolean") => json!(confirm),
                _ => json!(self.name),
            };
            content.insert(field.clone(), value);
        }
        Ok(ElicitAnswer::Accept(content))
    }
}

async fn settled(client: &Client, tool: &str, arguments: Value) -> Outcome {
    let execution = client.call_tool(tool, args(arguments)).await.expect("call");
    assert!(
        matches!(execution, Execution::Task(_)),
        "{tool} runs as a task"
    );
    execution.settle(&options()).await.expect("settles")
}

fn text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Completed(result) | Outcome::ToolError(result) => result.text(),
        other => panic!("no result: {other:?}"),
    }
}

/// Counts the server's `tasks/get` requests (from its metrics).
async fn gets(server: &RunningServer) -> u64 {
    let text = server.dispatcher().encode_metrics().await;
    text.lines()
        .filter(|line| line.starts_with("mcp_requests_total{") && line.contains("tasks/get"))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[tokio::test]
async fn a_synchronous_tool_completes_at_once() {
    let server = fixture(200).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let tools = client.list_tools().await.expect("tools");
    assert!(tools.iter().any(|t| t.name == "greet"));
    let execution = client
        .call_tool("greet", args(json!({"name": "Ada"})))
        .await
        .expect("call");
    let Execution::Complete(result) = execution else {
        panic!("greet is synchronous: {execution:?}");
    };
    assert_eq!(result.text(), "Hello, Ada!");
    assert!(!result.is_error());
}

#[tokio::test]
async fn tasks_end_completed_with_a_tool_error_failed_or_cancelled() {
    let server = fixture(100).await;
    let client = Client::connect(server.url()).await.expect("connects");

    let completed = settled(
        &client,
        "slow_compute",
        json!({"seconds": 0.3, "label": "x"}),
    )
    .await;
    assert!(matches!(completed, Outcome::Completed(_)), "{completed:?}");
    assert_eq!(text(&completed), "Completed x");

    let tool_error = settled(&client, "failing_job", json!({})).await;
    assert!(
        matches!(tool_error, Outcome::ToolError(_)),
        "{tool_error:?}"
    );
    assert_eq!(text(&tool_error), "The task job failed");

    let Outcome::Failed(error) = settled(&client, "protocol_error_job", json!({})).await else {
        panic!("protocol_error_job fails");
    };
    assert_eq!(
        (error.code, error.message.as_str()),
        (-32603, "Tool raised an exception")
    );

    let execution = client
        .call_tool("slow_compute", args(json!({"seconds": 60})))
        .await
        .expect("call");
    let task = execution.task().expect("a task");
    task.cancel().await.expect("cancel acknowledged");
    let outcome = task.settle(&options()).await.expect("settles");
    assert_eq!(outcome, Outcome::Cancelled);
    assert_eq!(
        task.get().await.expect("get").state.status(),
        TaskStatus::Cancelled
    );
}

#[tokio::test]
async fn input_is_accepted_or_declined_through_tasks_update() {
    let server = fixture(100).await;
    let yes = Forms::accepting(true);
    let client = Client::builder(server.url())
        .input_handler(yes.clone())
        .connect()
        .await
        .expect("connects");
    assert_eq!(
        Value::Object(client.capabilities().clone()),
        json!({"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
    );
    let accepted = settled(&client, "confirm_delete", json!({"filename": "a.txt"})).await;
    assert_eq!(text(&accepted), "Delete confirmed: true");
    assert_eq!(yes.asked(), ["confirm-delete"]);

    let no = Forms::declining();
    let client = Client::builder(server.url())
        .input_handler(no.clone())
        .connect()
        .await
        .expect("connects");
    let declined = settled(&client, "confirm_delete", json!({"filename": "a.txt"})).await;
    assert_eq!(text(&declined), "Delete declined: nothing deleted");
    assert_eq!(no.asked(), ["confirm-delete"]);
}

#[tokio::test]
async fn two_inputs_at_once_are_answered_together() {
    let server = fixture(100).await;
    let forms = Forms::accepting(true);
    let client = Client::builder(server.url())
        .input_handler(forms.clone())
        .build();
    let outcome = settled(&client, "multi_input", json!({})).await;
    assert_eq!(text(&outcome), "Inputs received: Ada, Ada");
    assert_eq!(forms.asked(), ["first-input", "second-input"]);
}

#[tokio::test]
async fn an_mrtr_round_is_answered_by_retrying_the_call() {
    let server = fixture(100).await;
    let forms = Forms::accepting(true);
    let client = Client::builder(server.url())
        .input_handler(forms.clone())
        .build();
    let outcome = settled(&client, "test_tool_with_task", json!({})).await;
    assert!(text(&outcome).contains("Ada"), "{outcome:?}");
    assert_eq!(forms.asked().len(), 1, "one MRTR round");
}

#[tokio::test]
async fn input_without_a_handler_is_refused_before_any_task_exists() {
    let server = fixture(100).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let error = client
        .call_tool("confirm_delete", args(json!({"filename": "a.txt"})))
        .await
        .expect_err("no elicitation declared");
    assert_eq!(error.code(), Some(-32021), "{error}");
    assert!(!error.is_retryable());
    // Sampling is not declared by a forms-only handler either.
    let client = Client::builder(server.url())
        .input_handler(Forms::accepting(true))
        .build();
    let error = client
        .call_tool("write_haiku", args(json!({"topic": "rain"})))
        .await
        .expect_err("no sampling declared");
    assert_eq!(error.code(), Some(-32021), "{error}");
}

#[tokio::test]
async fn a_task_resumes_from_its_handle_in_a_new_client() {
    let server = fixture(100).await;
    let saved = {
        let client = Client::connect(server.url()).await.expect("connects");
        let execution = client
            .call_tool("confirm_delete", args(json!({"filename": "b.txt"})))
            .await;
        // Without a handler the call is refused; create the task with one, then drop it
        // before answering.
        assert!(execution.is_err());
        let client = Client::builder(server.url())
            .input_handler(Forms::declining())
            .build();
        let execution = client
            .call_tool("confirm_delete", args(json!({"filename": "b.txt"})))
            .await
            .expect("call");
        serde_json::to_string(&execution.task().expect("a task").handle()).expect("JSON")
    };
    let handle: TaskHandle = serde_json::from_str(&saved).expect("handle");
    assert_eq!(handle.url, server.url());
    let yes = Forms::accepting(true);
    let client = Client::builder(server.url())
        .input_handler(yes.clone())
        .build();
    let task = client.resume(&handle).expect("same endpoint");
    let outcome = task.settle(&options()).await.expect("settles");
    assert_eq!(text(&outcome), "Delete confirmed: true");
    assert_eq!(yes.asked(), ["confirm-delete"]);

    let elsewhere = Client::builder("http://127.0.0.1:9/mcp").build();
    assert!(matches!(
        elsewhere.resume(&handle),
        Err(ClientError::InvalidArgument(_))
    ));
    let spelled_otherwise = handle.url.replacen("http://", "HTTP://", 1);
    let same = Client::builder(spelled_otherwise).build();
    assert_eq!(
        same.resume(&handle).expect("the same endpoint").id(),
        &handle.task_id
    );
    for (url, token) in [
        ("not a url", None),
        ("ftp://host/mcp", None),
        ("http://h/mcp", Some("a\nb")),
    ] {
        let mut builder = Client::builder(url);
        if let Some(token) = token {
            builder = builder.bearer(token);
        }
        let error = builder.connect().await.expect_err("refused before sending");
        assert!(matches!(error, ClientError::InvalidArgument(_)), "{error}");
        assert!(
            !error.to_string().contains("a\nb"),
            "never the token: {error}"
        );
    }
    let error = client
        .call_tool("greet", json!(["not", "an", "object"]))
        .await
        .expect_err("arguments are an object");
    assert!(matches!(error, ClientError::InvalidArgument(_)), "{error}");
}

#[tokio::test]
async fn listening_needs_fewer_polls_than_polling() {
    let server = fixture(100).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let run = |wait: Wait| {
        let client = client.clone();
        async move {
            let execution = client
                .call_tool("slow_compute", args(json!({"seconds": 1.2})))
                .await
                .expect("call");
            let task = execution.task().expect("a task");
            let mut seen = Vec::new();
            let outcome = task
                .settle_with(&options().wait(wait), |t| seen.push(t.state.status()))
                .await
                .expect("settles");
            assert_eq!(text(&outcome), "Completed");
            assert_eq!(seen.last(), Some(&TaskStatus::Completed), "{seen:?}");
        }
    };
    let before = gets(&server).await;
    run(Wait::Listen).await;
    let listening = gets(&server).await - before;
    run(Wait::Poll).await;
    let polling = gets(&server).await - before - listening;
    // Listening: one tasks/get after the acknowledgement; polling every ~100 ms for 1.2 s.
    assert!(listening <= 2, "listening made {listening} tasks/get");
    assert!(polling >= 5, "polling made {polling} tasks/get");
}

#[tokio::test]
async fn updates_stream_every_change_until_the_end() {
    let server = fixture(100).await;
    let client = Client::builder(server.url())
        .input_handler(Forms::accepting(false))
        .build();
    let execution = client
        .call_tool("confirm_delete", args(json!({"filename": "c.txt"})))
        .await
        .expect("call");
    let task = execution.task().expect("a task");
    let mut updates = Box::pin(task.updates(&options()));
    let first = updates.next().await.expect("an update").expect("ok");
    assert_eq!(first.state.status(), TaskStatus::InputRequired);
    let tasks_core::TaskState::InputRequired { input_requests } = &first.state else {
        unreachable!()
    };
    assert!(task.answer(input_requests).await.expect("answered"));
    assert!(
        !task.answer(input_requests).await.expect("nothing new"),
        "an answered key is not asked again"
    );
    let mut rest = Vec::new();
    while let Some(update) = updates.next().await {
        rest.push(update.expect("ok").state.status());
    }
    assert_eq!(rest.last(), Some(&TaskStatus::Completed), "{rest:?}");
    let Some(Outcome::Completed(result)) = Outcome::of_state(&task.get().await.expect("get").state)
    else {
        panic!("completed");
    };
    assert_eq!(result.text(), "Delete confirmed: false");
}

#[tokio::test]
async fn a_deadline_ends_the_wait_not_the_task() {
    let server = fixture(100).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let execution = client
        .call_tool("slow_compute", args(json!({"seconds": 60})))
        .await
        .expect("call");
    let task = execution.task().expect("a task");
    let error = task
        .settle(&SettleOptions::default().deadline(Duration::from_millis(300)))
        .await
        .expect_err("deadline");
    assert!(matches!(error, ClientError::Deadline), "{error}");
    assert_eq!(
        task.get().await.expect("get").state.status(),
        TaskStatus::Working
    );
    task.cancel().await.expect("cancel");
}

#[tokio::test]
async fn errors_keep_their_code_and_unknown_tasks_are_not_retryable() {
    let server = fixture(100).await;
    let client = Client::connect(server.url()).await.expect("connects");
    let error = client
        .call_tool("no_such_tool", JsonObject::new())
        .await
        .expect_err("unknown tool");
    assert_eq!(error.code(), Some(-32602), "{error}");
    let missing = client.task(tasks_core::TaskId::parse("nope").expect("an id"));
    let error = missing.get().await.expect_err("unknown task");
    assert_eq!(error.code(), Some(-32602), "{error}");
    assert!(!error.is_retryable());

    let nobody = Client::builder("http://127.0.0.1:9/mcp").build();
    let error = nobody.discover().await.expect_err("nothing listens");
    assert!(matches!(error, ClientError::Transport(_)), "{error}");
    assert!(error.is_retryable());
}

/// Serves `app` (a stand-in server) at `/mcp` on an ephemeral loopback port; its URL.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// A server of the session-based revisions: `server/discover` is unknown without a session
/// (400), or refused with -32022 naming its revisions.
async fn old_server(answer: (u16, Value)) -> String {
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move || {
            let (status, body) = answer.clone();
            async move {
                (
                    axum::http::StatusCode::from_u16(status).expect("a status"),
                    axum::Json(body),
                )
            }
        }),
    );
    let url = serve(app).await;
    url
}

#[tokio::test]
async fn a_server_of_another_era_is_a_typed_error() {
    let url = old_server((
        400,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}}),
    ))
    .await;
    let error = Client::connect(&url).await.expect_err("2025 server");
    assert!(
        matches!(&error, ClientError::UnsupportedServerEra { supported } if supported.is_empty()),
        "{error}"
    );
    let url = old_server((
        400,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2025-11-25", "2025-06-18"]}}}),
    ))
    .await;
    let error = Client::connect(&url).await.expect_err("2025 server");
    let ClientError::UnsupportedServerEra { supported } = &error else {
        panic!("{error}");
    };
    assert_eq!(supported, &["2025-11-25", "2025-06-18"]);
    assert!(error.to_string().contains("2025-11-25"), "{error}");
}

#[tokio::test]
async fn a_url_without_the_endpoint_says_what_the_server_said_and_where_the_endpoint_is() {
    let server = fixture(100).await;
    let root = server.url().trim_end_matches("/mcp").to_owned();
    let error = Client::connect(&format!("{root}/"))
        .await
        .expect_err("no endpoint at /");
    assert!(
        matches!(&error, ClientError::NoEndpoint { status: 404, body }
            if body == "Not found: the MCP endpoint is /mcp"),
        "{error:?}"
    );
    assert_eq!(error.endpoint_hint(), Some("/mcp"));
    assert_eq!(
        error.to_string(),
        "no MCP endpoint at this URL: the server answered HTTP 404: Not found: the MCP endpoint \
         is /mcp"
    );
    // Another web server's 404 keeps its first line, and names no endpoint.
    let other =
        serve(axum::Router::new().route("/elsewhere", axum::routing::get(|| async { "unused" })))
            .await;
    let error = Client::connect(&other).await.expect_err("no endpoint");
    assert!(
        matches!(&error, ClientError::NoEndpoint { status: 404, .. }),
        "{error:?}"
    );
    assert_eq!(error.endpoint_hint(), None);
    assert!(!error.is_retryable());

    // A path of the fixture's application that takes GET only (its health check): a 405, not
    // MCP at all (not a server of another era), naming the endpoint as the 404 does.
    let settings = tasks_fixture::Settings::default();
    let (mcp, _handle) = tasks_fixture::server(&settings)
        .into_service()
        .await
        .expect("the fixture starts");
    let app = serve(tasks_fixture::app::router(mcp, &settings)).await;
    let error = Client::connect(&app.replace("/mcp", "/healthz"))
        .await
        .expect_err("no endpoint at /healthz");
    assert!(
        matches!(&error, ClientError::NoEndpoint { status: 405, body }
            if body == "Method not allowed: this path takes GET; the MCP endpoint is /mcp"),
        "{error:?}"
    );
    assert_eq!(error.endpoint_hint(), Some("/mcp"));
    // Another web server's 405 without a body: the status, with its reason.
    let error = Client::connect(&format!("{}elsewhere", other.trim_end_matches("mcp")))
        .await
        .expect_err("no endpoint at a GET route");
    assert_eq!(
        error.to_string(),
        "no MCP endpoint at this URL: the server answered HTTP 405 (Method Not Allowed)"
    );
    assert_eq!(error.endpoint_hint(), None);
}

/// Answers everything: forms as [`Forms`] does, sampling with a fixed text, two roots.
struct Everything(Forms);

#[async_trait]
impl InputHandler for Everything {
    fn capabilities(&self) -> Vec<ClientCapability> {
        vec![
            ClientCapability::ElicitationForm,
            ClientCapability::Sampling,
            ClientCapability::Roots,
        ]
    }

    async fn elicit(&self, key: &str, request: Elicitation) -> Result<ElicitAnswer, ClientError> {
        self.0.elicit(key, request).await
    }

    async fn sample(
        &self,
        key: &str,
        params: JsonObject,
    ) -> Result<tasks_core::input::SamplingAnswer, ClientError> {
        self.0.asked.lock().expect("lock").push(key.to_owned());
        assert!(params.contains_key("messages"), "{params:?}");
        Ok(tasks_core::input::SamplingAnswer {
            role: tasks_core::input::Role::Assistant,
            content: json!({"type": "text", "text": "rain on the roof"}),
            model: "test-model".into(),
            stop_reason: Some("endTurn".into()),
        })
    }

    async fn list_roots(&self, key: &str) -> Result<Vec<tasks_core::input::Root>, ClientError> {
        self.0.asked.lock().expect("lock").push(key.to_owned());
        Ok(["file:///a", "file:///b"]
            .map(|uri| tasks_core::input::Root {
                uri: uri.into(),
                name: None,
            })
            .to_vec())
    }
}

#[tokio::test]
async fn sampling_and_roots_are_answered_in_mrtr_rounds_and_tasks() {
    let server = fixture(100).await;
    let forms = Forms::accepting(true);
    let client = Client::builder(server.url())
        .input_handler(Everything(forms.clone()))
        .build();
    let call = |tool: &'static str, arguments: Value| {
        let client = client.clone();
        async move {
            let execution = client.call_tool(tool, args(arguments)).await.expect("call");
            execution.settle(&options()).await.expect("settles")
        }
    };
    let all = call("test_input_required_result_multiple_inputs", json!({})).await;
    assert_eq!(text(&all), "Name: Ada; model: rain on the roof; roots: 2");
    let rounds = call("test_input_required_result_multi_round", json!({})).await;
    assert_eq!(text(&rounds), "Ada likes Ada");
    let haiku = call("write_haiku", json!({"topic": "rain"})).await;
    assert_eq!(text(&haiku), "rain on the roof");
    assert_eq!(
        forms.asked(),
        [
            "client_roots",
            "model_reply",
            "user_name",
            "name",
            "color",
            "haiku"
        ]
    );
}

/// A server whose `tasks/get` answers 503 `failures` times, then a completed task; it
/// records the `Authorization` header of every request.
async fn flaky_server(failures: usize) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let log = log.clone();
            async move {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                let calls = {
                    let mut log = log.lock().expect("lock");
                    log.push(auth);
                    log.len()
                };
                let request: Value = serde_json::from_str(&body).expect("JSON");
                let status = if calls <= failures { 503 } else { 200 };
                let task = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                    "resultType": "complete", "taskId": "t1", "status": "completed",
                    "createdAt": "2026-12-01T00:00:00Z", "lastUpdatedAt": "2026-12-01T00:00:01Z",
                    "ttlMs": null, "pollIntervalMs": 50,
                    "result": {"content": [{"type": "text", "text": "done"}]}}});
                (
                    axum::http::StatusCode::from_u16(status).expect("a status"),
                    axum::Json(task),
                )
            }
        }),
    );
    let url = serve(app).await;
    (url, seen)
}

#[tokio::test]
async fn retryable_errors_are_retried_and_the_bearer_token_is_sent() {
    let (url, seen) = flaky_server(2).await;
    let client = Client::builder(&url).bearer("s3cret-token").build();
    assert!(
        !format!("{client:?}").contains("s3cret"),
        "Debug never shows the token"
    );
    let task = client.task(tasks_core::TaskId::parse("t1").expect("an id"));
    let outcome = task
        .settle(&options().wait(Wait::Poll))
        .await
        .expect("settles after two 503s");
    assert_eq!(text(&outcome), "done");
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 3, "two refusals, then the answer");
    assert!(
        seen.iter().all(|auth| auth == "Bearer s3cret-token"),
        "{seen:?}"
    );

    let (url, _) = flaky_server(usize::MAX).await;
    let client = Client::builder(&url).build();
    let error = client
        .task(tasks_core::TaskId::parse("t1").expect("an id"))
        .settle(
            &SettleOptions::default()
                .wait(Wait::Poll)
                .deadline(Duration::from_millis(800)),
        )
        .await
        .expect_err("503 forever");
    assert!(matches!(error, ClientError::Deadline), "{error}");
}

/// With the default `rustls` feature an `https://` endpoint is spoken to over TLS: against
/// the plain-HTTP fixture the TLS handshake fails (rather than the URL scheme being refused).
#[tokio::test]
async fn https_endpoints_speak_tls() {
    let server = fixture(100).await;
    let url = server.url().replacen("http://", "https://", 1);
    let error = Client::connect(url)
        .await
        .expect_err("no TLS on the fixture");
    assert!(matches!(error, ClientError::Transport(_)), "{error}");
    let text = error.to_string();
    assert!(text.contains("corrupt message"), "{text}");
}

/// A deadline and a request timeout bound a server that accepts connections and never
/// answers.
#[tokio::test]
async fn a_silent_server_cannot_hold_a_wait_past_its_deadline() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let client = Client::builder(&url).build();
    let task = client.task(tasks_core::TaskId::parse("t1").expect("an id"));
    let started = std::time::Instant::now();
    let error = task
        .settle(&SettleOptions::default().deadline(Duration::from_millis(400)))
        .await
        .expect_err("never answered");
    assert!(matches!(error, ClientError::Deadline), "{error}");
    assert!(started.elapsed() < LIMIT, "bounded by the deadline");

    let client = Client::builder(&url)
        .request_timeout(Duration::from_millis(300))
        .build();
    let error = client.list_tools().await.expect_err("never answered");
    assert!(
        matches!(&error, ClientError::Transport(e) if e.is_timeout()),
        "{error}"
    );
    assert!(error.is_retryable());
}

#[tokio::test]
async fn a_reply_larger_than_the_limit_is_refused() {
    let huge = "x".repeat(tasks_client::MAX_MESSAGE_BYTES + 1);
    let url = old_server((
        200,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"padding": huge}}),
    ))
    .await;
    let error = Client::builder(&url)
        .build()
        .list_tools()
        .await
        .expect_err("too large");
    assert!(matches!(error, ClientError::Malformed(_)), "{error}");
}

#[tokio::test]
async fn retrying_gives_up_after_retry_for_and_huge_deadlines_are_none() {
    let (url, seen) = flaky_server(usize::MAX).await;
    let client = Client::builder(&url).build();
    let task = client.task(tasks_core::TaskId::parse("t1").expect("an id"));
    let error = task
        .settle(
            &SettleOptions::default()
                .wait(Wait::Poll)
                .deadline(Duration::MAX)
                .retry_for(Duration::from_millis(600)),
        )
        .await
        .expect_err("503 for longer than retry_for");
    assert!(
        matches!(
            error,
            ClientError::Http { status: 503, .. }
                | ClientError::Rpc {
                    http_status: 503,
                    ..
                }
        ),
        "{error}"
    );
    assert!(
        seen.lock().expect("lock").len() >= 2,
        "retried before giving up"
    );
}

/// The notices an `on_retry` hook heard.
type Heard = Arc<Mutex<Vec<tasks_client::RetryNotice>>>;

fn listening(options: SettleOptions) -> (SettleOptions, Heard) {
    let heard: Heard = Arc::default();
    let log = heard.clone();
    let options = options.on_retry(move |notice| log.lock().expect("lock").push(notice.clone()));
    (options, heard)
}

/// The hook hears each retried failure (its kind, attempt and time), the success that ends
/// the outage, and giving up. The backoff waits pass on tokio's paused clock.
#[tokio::test(start_paused = true)]
async fn the_retry_hook_hears_an_outage_begin_last_and_end() {
    use tasks_client::{FailureKind, RetryEvent};
    let (url, _) = flaky_server(3).await;
    let client = Client::builder(&url).build();
    let task = client.task(tasks_core::TaskId::parse("t1").expect("an id"));
    let (options, heard) = listening(options().wait(Wait::Poll));
    let outcome = task
        .settle(&options)
        .await
        .expect("settles after three 503s");
    assert_eq!(text(&outcome), "done");
    let heard = heard.lock().expect("lock").clone();
    let events: Vec<(bool, u32)> = heard
        .iter()
        .map(|n| (matches!(n.event, RetryEvent::Retrying { .. }), n.attempt))
        .collect();
    assert_eq!(
        events,
        [(true, 1), (true, 2), (true, 3), (false, 3)],
        "three retries, then back: {heard:?}"
    );
    assert_eq!(heard[3].event, RetryEvent::Recovered);
    assert!(heard
        .iter()
        .all(|n| n.kind == FailureKind::Unavailable { status: 503 }
            && n.retry_for == Duration::from_secs(300)
            && n.error.contains("503")));
    assert_eq!(
        heard[0].elapsed,
        Duration::ZERO,
        "counted from the first failure"
    );
    assert!(
        heard[3].elapsed >= Duration::from_millis(750),
        "the backoff waited: {:?}",
        heard[3].elapsed
    );
    assert_eq!(
        heard[0].remaining(),
        Duration::from_secs(300),
        "the whole retry_for is left at the first failure"
    );

    // A server that never comes back: retries, then gives up with the last failure.
    let (url, _) = flaky_server(usize::MAX).await;
    let client = Client::builder(&url).build();
    let (options, heard) = listening(
        SettleOptions::default()
            .wait(Wait::Poll)
            .retry_for(Duration::from_secs(20)),
    );
    let error = client
        .task(tasks_core::TaskId::parse("t1").expect("an id"))
        .settle(&options)
        .await
        .expect_err("503 for longer than retry_for");
    assert!(error.is_retryable(), "{error}");
    let heard = heard.lock().expect("lock").clone();
    let last = heard.last().expect("notices");
    assert_eq!(last.event, RetryEvent::GaveUp);
    assert!(last.elapsed >= Duration::from_secs(20), "{last:?}");
    assert_eq!(last.remaining(), Duration::ZERO);
    // The backoff: up to 10 s, plus as much again at most in jitter.
    assert!(
        heard[..heard.len() - 1].iter().all(|n| matches!(
            n.event,
            RetryEvent::Retrying { next_in } if next_in <= Duration::from_secs(20)
        )),
        "{heard:?}"
    );
    assert_eq!(last.attempt as usize, heard.len(), "one notice per failure");
}

/// A server that cannot be reached at all is [`tasks_client::FailureKind::Unreachable`].
#[tokio::test]
async fn an_unreachable_server_is_told_as_such() {
    // A port nothing listens on: bound, then closed.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    drop(listener);
    let client = Client::builder(&url).build();
    let (options, heard) = listening(
        SettleOptions::default()
            .wait(Wait::Poll)
            .retry_for(Duration::from_millis(300)),
    );
    let error = client
        .task(tasks_core::TaskId::parse("t1").expect("an id"))
        .settle(&options)
        .await
        .expect_err("nothing listens");
    assert!(matches!(error, ClientError::Transport(_)), "{error}");
    let heard = heard.lock().expect("lock").clone();
    assert!(
        heard
            .iter()
            .all(|n| n.kind == tasks_client::FailureKind::Unreachable),
        "{heard:?}"
    );
    assert_eq!(
        heard.last().map(|n| n.event),
        Some(tasks_client::RetryEvent::GaveUp)
    );
}

#[tokio::test]
async fn lenient_reading_of_other_servers_tool_lists() {
    // Two pages, a tool without description, no cacheScope or ttlMs.
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(|body: String| async move {
            let request: Value = serde_json::from_str(&body).expect("JSON");
            let result = match request["params"].get("cursor").and_then(Value::as_str) {
                None => json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}],
                    "nextCursor": "page-2"}),
                Some("page-2") => json!({"tools": [{"name": "b", "description": "B",
                    "inputSchema": {"type": "object"}}]}),
                Some(other) => panic!("unknown cursor {other}"),
            };
            axum::Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
        }),
    );
    let url = serve(app).await;
    let tools = Client::builder(&url)
        .build()
        .list_tools()
        .await
        .expect("two pages");
    let names: Vec<(&str, &str)> = tools
        .iter()
        .map(|t| (t.name.as_str(), t.description.as_str()))
        .collect();
    assert_eq!(names, [("a", ""), ("b", "B")]);
}

/// A server whose `subscriptions/listen` never answers and whose `tasks/get` says `completed`;
/// or, with `endless_pages`, whose `tools/list` always has a next page.
async fn stalling_server(endless_pages: bool) -> String {
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |body: String| async move {
            let request: Value = serde_json::from_str(&body).expect("JSON");
            let result = match request["method"].as_str() {
                Some("subscriptions/listen") => std::future::pending().await,
                Some("tools/list") if endless_pages => json!({"tools": [], "nextCursor": "again"}),
                _ => json!({"resultType": "complete", "taskId": "t1", "status": "completed",
                    "createdAt": "2026-12-01T00:00:00Z", "lastUpdatedAt": "2026-12-01T00:00:01Z",
                    "ttlMs": null, "result": {"content": [{"type": "text", "text": "done"}]}}),
            };
            axum::Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
        }),
    );
    let url = serve(app).await;
    url
}

#[tokio::test]
async fn a_listen_request_that_never_answers_falls_back_to_polling() {
    let url = stalling_server(false).await;
    let task = Client::builder(&url)
        .build()
        .task(tasks_core::TaskId::parse("t1").expect("an id"));
    let outcome = task.settle(&options()).await.expect("settles by polling");
    assert_eq!(text(&outcome), "done");
}

#[tokio::test]
async fn an_endless_tool_list_is_refused() {
    let url = stalling_server(true).await;
    let error = Client::builder(&url)
        .build()
        .list_tools()
        .await
        .expect_err("endless pages");
    assert!(
        matches!(&error, ClientError::Malformed(m) if m.contains("more than 20 pages")),
        "{error}"
    );
}

#[tokio::test]
async fn settling_a_task_whose_ttl_runs_out_ends_with_unknown_task() {
    // Tasks live 1 s and the reaper runs every 100 ms: the task expires while settle waits.
    let settings = tasks_fixture::Settings {
        listen: "127.0.0.1:0".parse().expect("an address"),
        drain_ms: 0,
        poll_interval_ms: 50,
        ttl_ms: 1_000,
        reap_interval_ms: 100,
        ..Default::default()
    };
    let server = tasks_fixture::server(&settings)
        .bind(settings.listen)
        .await
        .expect("the fixture binds");
    let client = Client::connect(server.url()).await.expect("connects");
    let execution = client
        .call_tool("slow_compute", args(json!({"seconds": 60})))
        .await
        .expect("call");
    let task = execution.task().expect("a task");
    let started = std::time::Instant::now();
    let error = task
        .settle(&options().wait(Wait::Poll))
        .await
        .expect_err("a task that expires never settles");
    match error {
        ClientError::UnknownTask { task_id } => assert_eq!(task_id, task.id().as_str()),
        other => panic!("expected UnknownTask, got {other:?}"),
    }
    // Polling every 50 ms: it ends right after the TTL, never waits on.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}
