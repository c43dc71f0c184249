//! Stream lifecycle: graceful closure of `subscriptions/listen` on shutdown
//! (MCP 2026-07-28 subscriptions, "Graceful Closure") and SSE keep-alive comments in the HTTP
//! adapter (streamable-http "Receiving Messages", the keep-alive note), and the `Retry-After` of
//! a 503.

use std::time::Duration;

use bytes::Bytes;
use futures_util::{stream, StreamExt as _};
use http_body_util::BodyExt as _;
use serde_json::json;
use tasks_core::McpError;
use tasks_http::McpResponse;
use tasks_http::{into_http, KEEP_ALIVE, KEEP_ALIVE_COMMENT};
use tasks_test_support::dispatcher::*;
use tasks_test_support::request::*;

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

#[tokio::test]
async fn listen_streams_end_with_their_closing_response_on_shutdown() {
    let (d, _) = dispatcher();
    let reply = Req::listen(json!({})).id(json!(41)).send(&d).await;
    let mut stream = reply.into_stream();
    assert_eq!(
        next_message(&mut stream).await["method"],
        "notifications/subscriptions/acknowledged"
    );
    d.close_streams();
    let closing = next_message(&mut stream).await;
    assert_eq!(closing["id"], json!(41));
    assert_eq!(closing["result"]["resultType"], "complete");
    assert_eq!(closing["result"]["_meta"][SUBSCRIPTION_ID], json!(41));
    assert_eq!(closing["result"]["_meta"], {
        let mut meta = server_meta();
        meta[SUBSCRIPTION_ID] = json!(41);
        meta
    });
    assert!(
        stream.next().await.is_none(),
        "the stream ends after closing"
    );

    // A listen arriving after shutdown is acknowledged, then closed at once.
    let mut late = Req::listen(json!({}))
        .id(json!("late"))
        .send(&d)
        .await
        .into_stream();
    assert_eq!(
        next_message(&mut late).await["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(next_message(&mut late).await["id"], "late");
    assert!(late.next().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn idle_sse_streams_get_keep_alive_comments_and_messages_stay_framed() {
    let messages =
        stream::once(async { Bytes::from_static(br#"{"a":1}"#) }).chain(stream::pending());
    let response = McpResponse::stream(Box::pin(messages));
    let http = into_http(response);
    assert_eq!(http.headers()["content-type"], "text/event-stream");
    assert_eq!(http.headers()["x-accel-buffering"], "no");
    let mut body = http.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(first, Bytes::from_static(b"data: {\"a\":1}\n\n"));
    let started = tokio::time::Instant::now();
    let idle = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(idle, Bytes::from_static(KEEP_ALIVE_COMMENT));
    assert_eq!(started.elapsed(), KEEP_ALIVE);
    let again = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(again, Bytes::from_static(KEEP_ALIVE_COMMENT));
    assert_eq!(started.elapsed(), KEEP_ALIVE * 2);
    assert!(KEEP_ALIVE >= Duration::from_secs(5));
}

/// A task store that is briefly unavailable is answered 503 with `Retry-After`, like any
/// retryable refusal; other errors carry no `Retry-After`.
#[test]
fn store_unavailable_answers_are_503_with_retry_after() {
    for error in [McpError::StoreUnavailable, McpError::StoreOutcomeUnknown] {
        let http = into_http(McpResponse::error(Some(&json!(1)), &error));
        assert_eq!(http.status().as_u16(), 503, "{error:?}");
        assert_eq!(http.headers()["retry-after"], "1", "{error:?}");
    }
    let http = into_http(McpResponse::error(
        Some(&json!(1)),
        &McpError::Internal("Task store failure"),
    ));
    assert_eq!(http.status().as_u16(), 500);
    assert!(http.headers().get("retry-after").is_none());
}
