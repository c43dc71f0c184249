//! Base-wire tools for the runner's 2026-07-28 core server scenarios (`server-stateless`,
//! `tools-list`, `tools-call-*`, `json-schema-2020-12`, `http-custom-header-server-validation`)
//! and for the unreleased upstream scenarios `http-stream-cancellation`, `cancellation` and
//! `per-request-loglevel` (`test_tool_slow`, `test_tool_fast`; `conformance/README.md`).
//!
//! | tool | behaviour |
//! |---|---|
//! | `test_simple_text` | one text block |
//! | `test_image_content` | a 1×1 PNG image block |
//! | `test_audio_content` | a short silent `audio/wav` block |
//! | `test_embedded_resource` | an embedded `test://embedded-resource` text resource |
//! | `test_multiple_content_types` | text, image and embedded resource |
//! | `test_error_handling` | a tool error: `isError: true` with a message |
//! | `test_tool_with_progress` | progress 0, 50, 100 of 100 (with a `progressToken`), then text |
//! | `test_missing_capability` | needs `sampling`: -32021 without it, else asks the model once |
//! | `test_streaming_elicitation` | asks the user's name (an MRTR `input_required` round) |
//! | `test_logging_tool` | logs two `info` messages (only with a `logLevel`), then text |
//! | `test_trigger_tool_change` | announces `notifications/tools/list_changed` to listen streams |
//! | `json_schema_2020_12_tool` | publishes a JSON Schema 2020-12 `inputSchema` with `$defs`, `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else` |
//! | `test_custom_header` | `region` is mirrored in `Mcp-Param-Region` (`x-mcp-header`) |
//! | `word_stats` | a structured result (`structuredContent` with its `outputSchema`), at once or as a task |
//! | `test_tool_slow` | runs `durationMs` (0 to 60 000 ms, default 10 000) reporting progress once a second (with a `progressToken`), stops when its request is cancelled |
//! | `test_tool_fast` | one text block, at once |

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tasks_core::input::ClientCapability;
use tasks_core::{LogLevel, TaskPolicy};
use tasks_runtime::{text_result, Json, ListChanges, ListKind, Tool, ToolError};

use super::{sampling, str_arg, user_name};

/// A 1×1 transparent PNG, base64.
pub const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// A mono 8 kHz 8-bit WAV of 8 silent samples, base64.
pub const WAV_BASE64: &str =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

const EMBEDDED_URI: &str = "test://embedded-resource";

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn content_result(content: Value) -> Value {
    json!({"content": content, "isError": false})
}

fn image_block() -> Value {
    json!({"type": "image", "data": PNG_BASE64, "mimeType": "image/png"})
}

fn resource_block() -> Value {
    json!({"type": "resource", "resource": {
        "uri": EMBEDDED_URI,
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }})
}

fn fixed(name: &str, description: &str, result: Value) -> Tool {
    Tool::new(name, description, move |_ctx| {
        let result = result.clone();
        async move { Ok(result) }
    })
    .with_input_schema(no_arguments())
}

/// The base-wire tools, in listing order.
pub fn all(changes: &ListChanges) -> Vec<Tool> {
    vec![
        fixed(
            "test_simple_text",
            "Returns one text block.",
            text_result("This is a simple text response for testing."),
        ),
        fixed(
            "test_image_content",
            "Returns a 1x1 PNG image block.",
            content_result(json!([image_block()])),
        ),
        fixed(
            "test_audio_content",
            "Returns a short silent WAV audio block.",
            content_result(json!([{"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"}])),
        ),
        fixed(
            "test_embedded_resource",
            "Returns an embedded text resource.",
            content_result(json!([resource_block()])),
        ),
        fixed(
            "test_multiple_content_types",
            "Returns text, an image and an embedded resource.",
            content_result(json!([
                {"type": "text", "text": "Multiple content types test:"},
                image_block(),
                resource_block(),
            ])),
        ),
        fixed(
            "test_error_handling",
            "Always fails as a tool error (isError: true).",
            json!({"content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}],
                   "isError": true}),
        ),
        progress_tool(),
        missing_capability_tool(),
        streaming_elicitation_tool(),
        logging_tool(),
        trigger_tool_change(changes.clone()),
        json_schema_tool(),
        custom_header_tool(),
        word_stats_tool(),
        slow_tool(),
        fixed(
            "test_tool_fast",
            "Answers at once with one text block.",
            text_result("Fast tool completed"),
        ),
    ]
}

/// The longest `durationMs` of `test_tool_slow`, in milliseconds.
pub const SLOW_MAX_MS: u64 = 60_000;

/// What `test_tool_slow` logs (INFO, target `tasks_conformance::tools::content`, with
/// `elapsed_ms` and `duration_ms`) when it stops before its end: it saw its request's
/// cancellation, or its run was dropped (the session path drops a cancelled call's run).
pub const SLOW_CANCELLED_LOG: &str = "test_tool_slow stopped: its request was cancelled";

/// Logs [`SLOW_CANCELLED_LOG`] when dropped before `finished`.
struct SlowRun {
    started: tokio::time::Instant,
    duration_ms: u64,
    finished: bool,
}

impl Drop for SlowRun {
    fn drop(&mut self) {
        if !self.finished {
            tracing::info!(
                elapsed_ms = self.started.elapsed().as_millis() as u64,
                duration_ms = self.duration_ms,
                "{SLOW_CANCELLED_LOG}"
            );
        }
    }
}

fn slow_tool() -> Tool {
    Tool::new(
        "test_tool_slow",
        "Works for durationMs milliseconds (0 to 60000, default 10000), reporting progress in \
         seconds once a second (send a progressToken to receive it); stops when its request \
         is cancelled.",
        |ctx| async move {
            let duration_ms = match ctx.arguments().get("durationMs") {
                None => 10_000,
                // An integer, possibly written with a zero fraction (`60000.0` is one for
                // JSON Schema's `"type": "integer"`).
                Some(value) => match value.as_u64().or_else(|| {
                    value
                        .as_f64()
                        .filter(|ms| ms.fract() == 0.0 && (0.0..=SLOW_MAX_MS as f64).contains(ms))
                        .map(|ms| ms as u64)
                }) {
                    Some(ms) if ms <= SLOW_MAX_MS => ms,
                    _ => {
                        return Err(ToolError::Tool(format!(
                            "durationMs must be an integer from 0 to {SLOW_MAX_MS}"
                        )))
                    }
                },
            };
            let total_s = duration_ms as f64 / 1000.0;
            let started = tokio::time::Instant::now();
            let mut run = SlowRun {
                started,
                duration_ms,
                finished: false,
            };
            let end = started + Duration::from_millis(duration_ms);
            ctx.progress(0.0, Some(total_s), Some("Started"));
            let mut second = 0u64;
            loop {
                let tick = started + Duration::from_secs(second + 1);
                let wake = tick.min(end);
                tokio::select! {
                    () = tokio::time::sleep_until(wake) => {}
                    () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled),
                }
                if wake == end {
                    break;
                }
                second += 1;
                ctx.progress(second as f64, Some(total_s), None);
            }
            run.finished = true;
            Ok(text_result(format!(
                "Slow tool completed after {duration_ms} ms"
            )))
        },
    )
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "durationMs": {"type": "integer", "minimum": 0, "maximum": SLOW_MAX_MS,
                           "description": "How long to work, in milliseconds (default 10000)"},
        },
    }))
}

fn progress_tool() -> Tool {
    Tool::new(
        "test_tool_with_progress",
        "Reports progress 0, 50 and 100 of 100 (send a progressToken to receive it), then answers.",
        |ctx| async move {
            for (step, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if step > 0 {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(10)) => {}
                        _ = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled),
                    }
                }
                ctx.progress(
                    progress,
                    Some(100.0),
                    Some(&format!("Step {} of 3", step + 1)),
                );
            }
            Ok(text_result("Progress test completed"))
        },
    )
    .with_input_schema(no_arguments())
}

fn missing_capability_tool() -> Tool {
    Tool::new(
        "test_missing_capability",
        "Needs the client's sampling capability: -32021 without it; with it, asks the model once.",
        |ctx| async move {
            let answer = ctx.sample("model_reply", sampling("Say hello")).await?;
            let text = answer.text().unwrap_or("");
            Ok(text_result(format!("The model said: {text}")))
        },
    )
    .with_input_schema(no_arguments())
    .requires_client([ClientCapability::Sampling])
}

fn streaming_elicitation_tool() -> Tool {
    Tool::new(
        "test_streaming_elicitation",
        "Asks for the user's name through an input_required result (never a request on the \
         response stream), then greets them.",
        |ctx| async move {
            let name = user_name(&ctx).await?;
            Ok(text_result(format!("Hello, {name}!")))
        },
    )
    .with_input_schema(no_arguments())
}

fn logging_tool() -> Tool {
    Tool::new(
        "test_logging_tool",
        "Logs two info messages (sent only when the request carries a logLevel), then answers.",
        |ctx| async move {
            ctx.log(
                LogLevel::Info,
                Some("test_logging_tool"),
                json!("Tool execution started"),
            );
            ctx.log(
                LogLevel::Info,
                Some("test_logging_tool"),
                json!("Tool execution completed"),
            );
            Ok(text_result("Logging test completed"))
        },
    )
    .with_input_schema(no_arguments())
}

fn trigger_tool_change(changes: ListChanges) -> Tool {
    Tool::new(
        "test_trigger_tool_change",
        "Announces notifications/tools/list_changed to every subscriptions/listen stream that \
         asked for toolsListChanged.",
        move |_ctx| {
            let open = changes.announce(ListKind::Tools);
            async move { Ok(text_result(format!("Announced to {open} open streams"))) }
        },
    )
    .with_input_schema(no_arguments())
}

fn json_schema_tool() -> Tool {
    Tool::new(
        "json_schema_2020_12_tool",
        "Takes a contact record described with JSON Schema 2020-12 keywords and echoes its name.",
        |ctx| async move {
            let name = str_arg(&ctx, "name").unwrap_or("anonymous");
            Ok(text_result(format!("Contact saved: {name}")))
        },
    )
    .with_input_schema(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            },
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
    }))
}

fn custom_header_tool() -> Tool {
    Tool::new(
        "test_custom_header",
        "Echoes `region`, which clients also send in the Mcp-Param-Region header.",
        |ctx| async move {
            let region = str_arg(&ctx, "region").unwrap_or("");
            Ok(text_result(format!("Region: {region}")))
        },
    )
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region", "description": "Where to run"},
        },
        "required": ["region"],
    }))
}

/// The arguments of `word_stats`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WordStatsArgs {
    /// The text to count.
    pub text: String,
}

/// The counts of a text.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WordStats {
    /// Whitespace-separated words.
    pub words: usize,
    /// Unicode scalar values.
    pub characters: usize,
    /// Lines (a text without a line break is one line; the empty text none).
    pub lines: usize,
}

fn word_stats_tool() -> Tool {
    Tool::typed(
        "word_stats",
        "Counts the words, characters and lines of `text`, as structured content. Runs as a \
         task when the client declares Tasks.",
        |_ctx, args: WordStatsArgs| async move {
            Ok(Json(WordStats {
                words: args.text.split_whitespace().count(),
                characters: args.text.chars().count(),
                lines: args.text.lines().count(),
            }))
        },
    )
    .with_title("Word statistics")
    .with_policy(TaskPolicy::Optional)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};
    use tasks_core::exchange::SyncOutcome;
    use tasks_runtime::{run_sync, SyncCall};

    /// `test_tool_slow`'s `durationMs`: an integer from 0 to 60 000 (a zero fraction allowed,
    /// as JSON Schema's `integer` allows it); anything else is a tool error, at once.
    #[tokio::test(start_paused = true)]
    async fn the_slow_tool_takes_its_duration_within_its_bounds() {
        let tool = super::slow_tool();
        let run = |arguments: Value| {
            let tool = &tool;
            async move {
                let call = SyncCall::new(arguments.as_object().cloned().unwrap_or_default());
                match run_sync(tool, call).await {
                    SyncOutcome::Complete(result) => {
                        serde_json::to_value(result).expect("a result")
                    }
                    other => panic!("{other:?}"),
                }
            }
        };
        for (ms, text) in [
            (json!(0), "Slow tool completed after 0 ms"),
            (json!(1500), "Slow tool completed after 1500 ms"),
            (json!(60000.0), "Slow tool completed after 60000 ms"),
        ] {
            let result = run(json!({"durationMs": ms})).await;
            assert_eq!(result["content"][0]["text"], text, "{ms}");
            assert_eq!(result["isError"], false);
        }
        for bad in [
            json!(60001),
            json!(-1),
            json!(1.5),
            json!("10"),
            json!(true),
        ] {
            let result = run(json!({"durationMs": bad})).await;
            assert_eq!(result["isError"], true, "{bad}: {result}");
        }
    }
}
