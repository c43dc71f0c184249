//! `subscriptions/listen` on the rmcp example (`examples/rmcp-app`: rmcp 3.11.0's streamable
//! HTTP server behind `tasks_rmcp::listen_layer()`, the listen in the handler), over loopback
//! HTTP with raw requests: a declaring listener hears its task up to terminal, a listener that
//! names `taskIds` without declaring the Tasks extension is refused by the layer before any
//! acknowledgement, and another caller's task is not followed; a tool behind the bridge sees its
//! caller's principal (synchronously and in a task). Callers are told apart by
//! `Authorization: Bearer <name>`, which a middleware turns into a `Principal`.

use std::time::Duration;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use rmcp_app::{App, Settings, ENDPOINT_PATH};
use serde_json::{json, Value};
use tasks_core::TaskStatus;
use tasks_runtime::{Node, Principal, StatusEvent};
use tasks_test_support::client::*;
use tasks_test_support::events::wait_status;
use tasks_test_support::protocol::*;
use tasks_test_support::sse::Sse;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// The example served on a loopback port.
struct Served {
    client: Client,
    app: App,
    node: Node,
    stop: CancellationToken,
}

impl Served {
    async fn start() -> Self {
        let settings = Settings {
            listen: "127.0.0.1:0".parse().unwrap(),
            drain_ms: 0,
            ..Settings::default()
        };
        let (app, node) = rmcp_app::start(&settings).await.unwrap();
        let stop = CancellationToken::new();
        let router =
            rmcp_app::router(app.clone(), stop.child_token()).layer(middleware::from_fn(bearer));
        let listener = tokio::net::TcpListener::bind(settings.listen)
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let stopped = stop.clone().cancelled_owned();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(stopped)
                .await;
        });
        Served {
            client: Client::new(format!("http://{addr}{ENDPOINT_PATH}")),
            app,
            node,
            stop,
        }
    }

    fn events(&self) -> broadcast::Receiver<StatusEvent> {
        self.app.tasks().runtime().subscribe()
    }

    /// `method` as caller `who`.
    fn post(
        &self,
        who: &str,
        id: Value,
        method: &str,
        params: Value,
        caps: Value,
    ) -> reqwest::RequestBuilder {
        self.client.post(id, method, params, caps).bearer_auth(who)
    }

    /// A `confirm_delete` task of caller `who`, once it waits for input.
    async fn task_waiting(
        &self,
        who: &str,
        events: &mut broadcast::Receiver<StatusEvent>,
    ) -> String {
        let created = Client::send(self.post(
            who,
            self.client.next_id(),
            "tools/call",
            json!({"name": "confirm_delete", "arguments": {"filename": format!("{who}.txt")}}),
            tasks_caps(),
        ))
        .await
        .result();
        assert_eq!(created["resultType"], "task", "{created}");
        let id = created["taskId"].as_str().unwrap().to_owned();
        wait_status(events, &id, TaskStatus::InputRequired).await;
        id
    }

    /// Answers the question of `who`'s task `id`.
    async fn confirm(&self, who: &str, id: &str, confirm: bool) {
        let answered = Client::send(self.post(
            who,
            self.client.next_id(),
            "tasks/update",
            json!({"taskId": id, "inputResponses": {
                "confirm-delete": {"action": "accept", "content": {"confirm": confirm}}}}),
            tasks_caps(),
        ))
        .await
        .result();
        assert_eq!(answered["resultType"], "complete", "{answered}");
    }

    /// `tasks/get` of `who`'s task `id`.
    async fn get(&self, who: &str, id: &str) -> Value {
        Client::send(self.post(
            who,
            self.client.next_id(),
            "tasks/get",
            json!({"taskId": id}),
            tasks_caps(),
        ))
        .await
        .result()
    }

    /// Opens a listen of `who` (request id `listen_id`) for `notifications`, declaring `caps`;
    /// asserts the SSE answer and that rmcp's acknowledgement echoes `acknowledged`.
    async fn listen(
        &self,
        who: &str,
        listen_id: Value,
        notifications: Value,
        caps: Value,
        acknowledged: Value,
    ) -> Sse {
        let response = self
            .post(
                who,
                listen_id.clone(),
                "subscriptions/listen",
                json!({"notifications": notifications}),
                caps,
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let mut sse = Sse::of(response);
        assert_eq!(
            sse.next().await,
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                   "params": {"_meta": {SUBSCRIPTION_ID: listen_id},
                              "notifications": acknowledged}})
        );
        sse
    }

    /// [`Served::listen`] for `task_ids`, declaring Tasks: rmcp 3.11.0 acknowledges its typed
    /// filter only, so the followed ids are not echoed.
    async fn listen_tasks(&self, who: &str, listen_id: &str, task_ids: Value) -> Sse {
        let filter = json!({"taskIds": task_ids});
        self.listen(who, json!(listen_id), filter, tasks_caps(), json!({}))
            .await
    }

    async fn stop(self) {
        self.stop.cancel();
        self.node.shutdown(Duration::ZERO).await;
    }
}

/// `Authorization: Bearer <name>` is principal `<name>`.
async fn bearer(mut request: Request, next: Next) -> Response {
    let principal = request
        .headers()
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(Principal::new);
    if let Some(principal) = principal {
        request.extensions_mut().insert(principal);
    }
    next.run(request).await
}

/// What a `notifications/tasks` of listen `listen_id` carries for a task whose `tasks/get`
/// answered `get`: the same `DetailedTask`, with the subscription id as its `_meta`.
fn as_notification(get: &Value, listen_id: &str) -> Value {
    let mut params = get.clone();
    let object = params.as_object_mut().unwrap();
    object.remove("resultType");
    object.insert("_meta".into(), json!({SUBSCRIPTION_ID: listen_id}));
    json!({"jsonrpc": "2.0", "method": "notifications/tasks", "params": params})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declaring_listener_hears_its_task_up_to_terminal() {
    let served = Served::start().await;
    let mut events = served.events();
    let id = served.task_waiting("alice", &mut events).await;

    let mut sse = served
        .listen_tasks("alice", "listen-1", json!([id, "no-such-task", id]))
        .await;
    served.confirm("alice", &id, false).await;

    let working = sse.next().await;
    assert_eq!(working["params"]["status"], "working", "{working}");
    assert_eq!(working["params"]["taskId"], id.as_str());
    let completed = sse.next().await;
    let get = served.get("alice", &id).await;
    assert_eq!(get["status"], "completed");
    assert_eq!(
        get["result"]["content"],
        json!([{"type": "text", "text": "Delete confirmed: false"}])
    );
    assert_eq!(completed, as_notification(&get, "listen-1"));
    // As on this project's own server, the stream stays open after the task is terminal.
    assert_eq!(sse.next_within(Duration::from_millis(500)).await, None);

    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_refuses_task_ids_without_the_declaration_before_any_ack() {
    let served = Served::start().await;
    let mut events = served.events();
    let id = served.task_waiting("alice", &mut events).await;

    let refused = Client::send(served.post(
        "alice",
        json!(7),
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [id]}}),
        json!({"elicitation": {}}),
    ))
    .await;
    assert_eq!(
        refused.body,
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32021,
               "message": "Missing required client capability",
               "data": {"requiredCapabilities": {"extensions": {TASKS: {}}}}}})
    );
    refused.error(400, -32021, "Missing required client capability");

    let malformed = Client::send(served.post(
        "alice",
        json!(8),
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [id, 5]}}),
        tasks_caps(),
    ))
    .await;
    assert_eq!(
        malformed.body,
        json!({"jsonrpc": "2.0", "id": 8, "error": {"code": -32602,
               "message": "taskIds must be an array of task ids"}})
    );
    malformed.error(400, -32602, "taskIds must be an array of task ids");

    // Without taskIds the request is rmcp's: acknowledged, whatever it declared.
    let acknowledged = json!({});
    served
        .listen("alice", json!(9), json!({}), json!({}), acknowledged)
        .await;

    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_refuses_serde_json_marker_names_before_rmcp_reads_them() {
    let served = Served::start().await;
    let mut events = served.events();
    let id = served.task_waiting("alice", &mut events).await;
    let marker = "$serde_json::private::RawValue";
    // rmcp reads `{"<marker>": "<text>"}` as the JSON text in its string: here a task id, a
    // request id and (nested) a listen filter. The layer refuses each before rmcp parses it.
    let refusals = [
        (
            "tasks/get",
            json!(1),
            json!({"taskId": {marker: format!("\"{id}\"")}}),
        ),
        ("tasks/get", json!({marker: "2"}), json!({ "taskId": id })),
        (
            "subscriptions/listen",
            json!(3),
            json!({"notifications": {"taskIds": [{"deep": {marker: "1"}}]}}),
        ),
    ];
    for (method, request_id, params) in refusals {
        let refused =
            Client::send(served.post("alice", request_id, method, params, tasks_caps())).await;
        assert_eq!(
            refused.body,
            json!({"jsonrpc": "2.0", "error": {"code": -32600,
                   "message": "A member name is reserved: $serde_json::private::..."}}),
            "{method}"
        );
        refused.error(
            400,
            -32600,
            "A member name is reserved: $serde_json::private::...",
        );
    }
    // The task is untouched and still served by its plain id.
    assert_eq!(served.get("alice", &id).await["status"], "input_required");
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_callers_task_is_not_followed() {
    let served = Served::start().await;
    let mut events = served.events();
    let alices = served.task_waiting("alice", &mut events).await;
    let bobs = served.task_waiting("bob", &mut events).await;

    let mut sse = served
        .listen_tasks("bob", "listen-bob", json!([alices, bobs]))
        .await;
    // Alice's task finishes first: had bob's stream followed it, its notifications would come
    // before any of bob's.
    served.confirm("alice", &alices, true).await;
    wait_status(&mut events, &alices, TaskStatus::Completed).await;
    served.confirm("bob", &bobs, false).await;

    let working = sse.next().await;
    assert_eq!(
        (&working["params"]["taskId"], &working["params"]["status"]),
        (&json!(bobs), &json!("working")),
        "{working}"
    );
    let completed = sse.next().await;
    assert_eq!(
        completed,
        as_notification(&served.get("bob", &bobs).await, "listen-bob")
    );
    assert_eq!(sse.next_within(Duration::from_millis(300)).await, None);

    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtimes_tool_list_changes_reach_a_listener_that_asked() {
    let served = Served::start().await;
    // rmcp-app advertises tools.listChanged and no prompts: rmcp keeps the tools only.
    let asked = json!({"toolsListChanged": true, "promptsListChanged": true});
    let mut sse = served
        .listen(
            "carol",
            json!("tools-1"),
            asked,
            json!({}),
            json!({"toolsListChanged": true}),
        )
        .await;
    // rmcp sends the ack before the handler's `listen` runs, so a change announced in that
    // moment reaches no one (docs/guides/rmcp-limits.md): announce again until one arrives.
    let mut heard = None;
    for _ in 0..10 {
        let triggered = Client::send(served.post(
            "carol",
            served.client.next_id(),
            "tools/call",
            json!({"name": "test_trigger_tool_change", "arguments": {}}),
            json!({}),
        ))
        .await
        .result();
        assert_eq!(triggered["isError"], json!(false), "{triggered}");
        heard = sse.next_within(Duration::from_secs(1)).await;
        if heard.is_some() {
            break;
        }
    }
    assert_eq!(
        heard,
        Some(
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                    "params": {"_meta": {SUBSCRIPTION_ID: "tools-1"}}})
        )
    );

    served.stop().await;
}

/// The bridge hands the caller's principal to the tool: in a synchronous call and in a task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_behind_the_bridge_sees_its_callers_principal() {
    let served = Served::start().await;
    let whoami = tasks_runtime::Tool::new("whoami", "Names its caller", |ctx| async move {
        let caller = ctx.principal().map_or("nobody", |p| p.as_str()).to_owned();
        Ok(tasks_runtime::text_result(caller))
    })
    .with_policy(tasks_core::TaskPolicy::Optional);
    served.app.tasks().runtime().register_tool(whoami);
    let call = |who: &'static str, caps: Value| {
        let served = &served;
        async move {
            Client::send(served.post(
                who,
                served.client.next_id(),
                "tools/call",
                json!({"name": "whoami", "arguments": {}}),
                caps,
            ))
            .await
            .result()
        }
    };
    let sync = call("alice", json!({})).await;
    assert_eq!(sync["content"][0]["text"], "alice", "{sync}");

    let mut events = served.events();
    let created = call("bob", tasks_caps()).await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    wait_status(&mut events, &id, TaskStatus::Completed).await;
    let task = served.get("bob", &id).await;
    assert_eq!(task["result"]["content"][0]["text"], "bob", "{task}");
    served.stop().await;
}
