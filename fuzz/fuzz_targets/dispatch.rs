//! The whole `Dispatcher::dispatch` on a current-thread runtime: arbitrary headers and body in,
//! always one well-formed answer out (a JSON-RPC object, 202 for a notification, or a stream
//! whose first message is JSON).
#![no_main]

mod common;

use std::sync::OnceLock;

use futures_util::StreamExt as _;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tasks_core::TaskPolicy;
use tasks_core::input::InputRequest;
use tasks_http::{Dispatcher, ResponseBody, ServerBuilder};
use tasks_runtime::{text_result, Limits, Caller, Tool, ToolContext, ToolError};

struct World {
    rt: tokio::runtime::Runtime,
    d: Dispatcher,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let ask = |ctx: ToolContext| async move {
            let request = InputRequest {
                method: "elicitation/create".into(),
                params: json!({"message": "ok?", "requestedSchema": {"type": "object"}})
                    .as_object()
                    .cloned(),
            };
            ctx.input("confirm", request).await?;
            Ok::<_, ToolError>(text_result("confirmed"))
        };
        let d = ServerBuilder::new("fuzz", "0")
            .limits(Limits::default().with_max_tasks(2_000))
            .tool(Tool::new("echo", "Echo", |ctx: ToolContext| async move {
                Ok::<_, ToolError>(text_result(ctx.arguments().len().to_string()))
            }))
            .tool(
                Tool::new("job", "A task", |_ctx: ToolContext| async {
                    Ok::<_, ToolError>(text_result("done"))
                })
                .with_policy(TaskPolicy::Optional),
            )
            .tool(Tool::new("ask", "Asks", ask).with_policy(TaskPolicy::Optional))
            .tool(
                Tool::new("typed", "Typed", |_ctx: ToolContext| async {
                    Ok::<_, ToolError>(text_result("typed"))
                })
                .with_input_schema(json!({"type": "object",
                    "properties": {"n": {"type": "integer"}}, "required": ["n"]})),
            )
            .build();
        World { rt, d }
    })
}

fuzz_target!(|data: &[u8]| {
    let w = world();
    let (headers, body) = common::split(data);
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let id = parsed
        .as_ref()
        .and_then(|v| v.get("id"))
        .filter(|id| common::readable_id(id))
        .cloned();
    let response = w.rt.block_on(w.d.dispatch(&headers, body, Caller::shared()));
    assert!(
        [200, 202, 400, 401, 403, 404, 405, 413, 415, 500].contains(&response.status),
        "{}",
        response.status
    );
    match response.body {
        ResponseBody::Empty => assert_eq!(response.status, 202),
        ResponseBody::Json(bytes) => {
            let message: Value = serde_json::from_slice(&bytes).expect("a JSON body");
            assert_eq!(message["jsonrpc"], "2.0");
            let (result, error) = (message.get("result"), message.get("error"));
            assert!(result.is_some() != error.is_some(), "{message}");
            assert_eq!(message.get("id"), id.as_ref(), "{message}");
            if let Some(error) = error {
                assert!(error["code"].is_i64() && error["message"].is_string());
                assert_ne!(response.status, 200);
            } else {
                assert_eq!(response.status, 200);
                assert!(result.unwrap()["resultType"].is_string());
            }
        }
        ResponseBody::Stream(mut stream) => {
            assert_eq!(response.status, 200);
            let first = w.rt.block_on(stream.next()).expect("a first message");
            let _: Value = serde_json::from_slice(&first).expect("JSON on the stream");
        }
    }
});
