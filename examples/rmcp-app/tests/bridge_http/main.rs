//! The bridge's error paths over rmcp's streamable HTTP server, with raw requests (the exact
//! JSON-RPC code, message and HTTP status of each): malformed task requests, the removed task
//! methods, tasks scoped by the `Principal` an axum layer inserts, and a handler that does not
//! advertise the Tasks extension.
//!
//! rmcp 3.11.0 picks the HTTP status: 400 for -32020 and -32021, 404 for -32601, and 200 for
//! every other error, -32602 included (this project's own server answers 400 there).

// Modules rather than binaries of their own (each integration-test binary links the
// whole stack, and linking is slow): their tests are named `<module>::<test>`.
mod rmcp_client_stdio;

use std::future::IntoFuture as _;
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use rmcp_app::{App, Settings, ENDPOINT_PATH};
use serde_json::{json, Value};
use tasks_rmcp::TasksBridge;
use tasks_runtime::{Node, Principal, Scope};
use tasks_test_support::protocol::TASKS;
use tasks_test_support::request::Req;
use tasks_test_support::wait::WAIT_LIMIT;
use tasks_test_support::Client;
use tokio_util::sync::CancellationToken;

/// The header the test's authentication layer reads the caller from.
const USER_HEADER: &str = "x-user";

/// A server on a loopback port; stops when dropped.
struct Server {
    client: Client,
    node: Option<Node>,
    stop: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Server {
    /// Serves `handler` as `rmcp-app` does, behind a layer that makes the `x-user` header the
    /// request's [`Principal`] (a stand-in for real authentication).
    async fn start<H>(handler: H, node: Node) -> Server
    where
        H: ServerHandler + Clone + Send + Sync + 'static,
    {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let router = rmcp_app::router(handler, stop.child_token())
            .layer(axum::middleware::from_fn(principal_from_header));
        tokio::spawn(
            axum::serve(listener, router)
                .with_graceful_shutdown(stop.clone().cancelled_owned())
                .into_future(),
        );
        Server {
            client: Client::with_timeout(&format!("http://{addr}{ENDPOINT_PATH}"), WAIT_LIMIT),
            node: Some(node),
            stop,
        }
    }

    /// A POST of `method` with the MCP 2026-07-28 routing headers (`Mcp-Name` when given) and
    /// `_meta`; `declare` adds the Tasks extension to the client capabilities.
    fn post(
        &self,
        method: &str,
        params: Value,
        name: Option<&str>,
        declare: bool,
    ) -> reqwest::RequestBuilder {
        let capabilities = if declare {
            json!({"extensions": {TASKS: {}}, "elicitation": {"form": {}}})
        } else {
            json!({})
        };
        // `Mcp-Name` only as given, whatever the params hold.
        let mut request = Req::new(method)
            .params(params)
            .caps(capabilities)
            .without("mcp-name");
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        self.client.req(&request)
    }

    /// Drains the node's tasks and stops serving.
    async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(node) = self.node.take() {
            node.shutdown(Duration::ZERO).await;
        }
    }
}

/// The test's authentication layer: `x-user: NAME` makes NAME the request's principal.
async fn principal_from_header(mut request: Request, next: Next) -> Response {
    let user = request
        .headers()
        .get(USER_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(Principal::new);
    if let Some(user) = user {
        request.extensions_mut().insert(user);
    }
    next.run(request).await
}

/// `rmcp-app`'s handler on an in-memory store.
async fn app() -> (App, Node) {
    rmcp_app::start(&Settings::default())
        .await
        .expect("rmcp-app starts")
}

/// The HTTP status and the JSON body of `request`'s answer.
async fn send(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("application/json"),
        "a JSON answer, not {content_type}"
    );
    (status, response.json().await.expect("a JSON body"))
}

/// The HTTP status and the `error` object of `request`'s answer.
async fn error_of(request: reqwest::RequestBuilder) -> (u16, Value) {
    let (status, body) = send(request).await;
    assert_eq!(body["id"], 1, "{body}");
    assert!(body.get("result").is_none(), "an error, not {body}");
    (status, body["error"].clone())
}

/// A JSON-RPC error object without `data`.
fn error(code: i64, message: &str) -> Value {
    json!({"code": code, "message": message})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_task_requests_meet_the_error_a_well_formed_one_would() {
    let (app, node) = app().await;
    let server = Server::start(app, node).await;
    let no_id = json!({});

    // Without taskId rmcp cannot parse the params and hands the request to the custom-request
    // fallback, where the bridge applies the checks a well-formed one meets, in order: the
    // Mcp-Name header first...
    assert_eq!(
        error_of(server.post("tasks/get", no_id.clone(), None, true)).await,
        (400, error(-32020, "Missing Mcp-Name header"))
    );
    // ... then the extension's declaration...
    assert_eq!(
        error_of(server.post("tasks/get", no_id.clone(), Some("t"), false)).await,
        (
            400,
            json!({"code": -32021, "message": "Missing required client capability",
                   "data": {"requiredCapabilities":
                            {"extensions": {"io.modelcontextprotocol/tasks": {}}}}})
        )
    );
    // ... then the params.
    let required = error(-32602, "A non-empty taskId is required");
    assert_eq!(
        error_of(server.post("tasks/get", no_id.clone(), Some("t"), true)).await,
        (200, required.clone())
    );
    for method in ["tasks/update", "tasks/cancel"] {
        assert_eq!(
            error_of(server.post(method, no_id.clone(), Some("t"), true)).await,
            (200, required.clone()),
            "{method}"
        );
    }
    // A taskId that is not a string.
    assert_eq!(
        error_of(server.post("tasks/get", json!({"taskId": 7}), Some("7"), true)).await,
        (200, required.clone())
    );
    // A well-formed request for a task nobody created, for comparison.
    assert_eq!(
        error_of(server.post("tasks/get", json!({"taskId": "t"}), Some("t"), true)).await,
        (200, error(-32602, "Unknown or inaccessible taskId"))
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_task_methods_are_not_found() {
    let (app, node) = app().await;
    let server = Server::start(app, node).await;
    // SEP-2663 on 2026-07-28 has no tasks/result or tasks/list: rmcp's -32601 naming the
    // method, declared or not, with or without a taskId.
    for method in ["tasks/result", "tasks/list"] {
        for (params, declare) in [(json!({"taskId": "t"}), true), (json!({}), false)] {
            assert_eq!(
                error_of(server.post(method, params, Some("t"), declare)).await,
                (404, error(-32601, method)),
                "{method}"
            );
        }
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_scoped_to_the_principal_a_layer_inserts() {
    let (app, node) = app().await;
    let server = Server::start(app, node).await;

    // alice's task waits for her answer, so it stays put while others try it.
    let call = json!({"name": "confirm_delete", "arguments": {"filename": "plan.txt"}});
    let (status, created) = send(
        server
            .post("tools/call", call, Some("confirm_delete"), true)
            .header(USER_HEADER, "alice"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert_eq!(created["result"]["status"], "working", "{created}");
    let task_id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task id: {created}"))
        .to_owned();
    let get = json!({"taskId": task_id});

    let unknown = (200, error(-32602, "Unknown or inaccessible taskId"));
    let answer = json!({"taskId": task_id,
                        "inputResponses": {"confirm-delete": {"action": "accept",
                                                              "content": {"confirm": true}}}});
    for (method, params) in [
        ("tasks/get", &get),
        ("tasks/update", &answer),
        ("tasks/cancel", &get),
    ] {
        // bob, and a caller without a principal (the shared scope), do not see it.
        let as_bob = server
            .post(method, params.clone(), Some(&task_id), true)
            .header(USER_HEADER, "bob");
        assert_eq!(error_of(as_bob).await, unknown, "bob's {method}");
        let anonymous = server.post(method, params.clone(), Some(&task_id), true);
        assert_eq!(error_of(anonymous).await, unknown, "an anonymous {method}");
    }

    // alice does: her task is untouched by their update and cancel, still waiting for her.
    let (status, got) = send(
        server
            .post("tasks/get", get.clone(), Some(&task_id), true)
            .header(USER_HEADER, "alice"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(got["result"]["taskId"], task_id.as_str(), "{got}");
    assert_eq!(got["result"]["status"], "input_required", "{got}");
    assert_eq!(
        got["result"]["inputRequests"]["confirm-delete"]["params"]["message"],
        "Delete plan.txt?"
    );
    server.shutdown().await;
}

/// A handler that serves the runtime's tools through the bridge but whose `get_info()` does
/// not advertise the Tasks extension (a server author's mistake).
#[derive(Clone)]
struct Unadvertised {
    tasks: TasksBridge,
}

impl ServerHandler for Unadvertised {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tasks.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.tasks.call_tool(self, request, &cx).await
    }

    tasks_rmcp::delegate_tasks!(tasks);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_not_advertising_tasks_creates_none() {
    let (app, node) = app().await;
    let tasks = app.tasks().clone();
    let server = Server::start(
        Unadvertised {
            tasks: tasks.clone(),
        },
        node,
    )
    .await;

    // A task-required tool, called by a client that declares the extension: the bridge
    // refuses to create a task the server never advertised.
    let call = json!({"name": "word_count_task", "arguments": {"text": "a b"}});
    assert_eq!(
        error_of(server.post("tools/call", call, Some("word_count_task"), true)).await,
        (200, error(-32603, "Internal error"))
    );
    let stored = tasks
        .runtime()
        .list(&Scope::shared(), None, 10)
        .await
        .expect("the memory store lists");
    assert_eq!(stored.map(|page| page.len()), Some(0), "no task was stored");
    // A task-capable tool runs at once, whether or not the request declares the extension:
    // the server serves no tasks.
    for declared in [false, true] {
        let call = json!({"name": "slow_compute", "arguments": {"label": "now"}});
        let (status, body) =
            send(server.post("tools/call", call, Some("slow_compute"), declared)).await;
        assert_eq!(status, 200);
        assert_eq!(
            body["result"]["content"],
            json!([{"type": "text", "text": "Completed now"}]),
            "declared {declared}: {body}"
        );
        assert_eq!(body["result"]["resultType"], json!("complete"), "{body}");
    }
    // The task methods are rmcp's -32601, asked before the handler.
    assert_eq!(
        error_of(server.post("tasks/get", json!({"taskId": "t"}), Some("t"), true)).await,
        (404, error(-32601, "tasks/get"))
    );
    server.shutdown().await;
}
