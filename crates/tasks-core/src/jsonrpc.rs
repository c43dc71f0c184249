//! JSON-RPC 2.0 framing of what the server sends: a result, an error, a notification, each one
//! serialized JSON object (JSON-RPC 2.0 §5; MCP 2026-07-28 "Base protocol").
//!
//! The HTTP status of an error answer is [`McpError::http_status`] for the server's own errors
//! and [`crate::error::http_status_for_code`] for an error a tool returned.

use serde::Serialize;
use serde_json::Value;

use crate::error::McpError;
use crate::JsonObject;

#[derive(Serialize)]
struct ResultEnvelope<'a, T> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: &'a T,
}

#[derive(Serialize)]
struct ErrorEnvelope<'a, E> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
    error: &'a E,
}

#[derive(Serialize)]
struct NotificationEnvelope<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

/// The room a message's buffer starts with: a `tasks/get` answer of a small completed task is
/// about 430 bytes and a `CreateTaskResult` about 330, so most answers are written without the
/// buffer growing (from empty, it would be moved 6 times on the way to 512 bytes).
const START_CAPACITY: usize = 512;

fn to_vec<T: Serialize>(value: &T) -> Vec<u8> {
    let mut buffer = Vec::with_capacity(START_CAPACITY);
    // Serializing the server's own types cannot fail (string keys, no non-finite floats).
    match serde_json::to_writer(&mut buffer, value) {
        Ok(()) => buffer,
        Err(_) => Vec::new(),
    }
}

/// `{"jsonrpc":"2.0","id":…,"result":…}`.
pub fn result<T: Serialize>(id: &Value, result: &T) -> Vec<u8> {
    to_vec(&ResultEnvelope {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// `{"jsonrpc":"2.0","id"?:…,"error":…}`: the id is left out when it could not be read.
pub fn error<E: Serialize>(id: Option<&Value>, error: &E) -> Vec<u8> {
    to_vec(&ErrorEnvelope {
        jsonrpc: "2.0",
        id,
        error,
    })
}

/// The answer to a request refused with `error`: its HTTP status and the error message.
pub fn refusal(id: Option<&Value>, error: &McpError) -> (u16, Vec<u8>) {
    (
        error.http_status(),
        self::error(id, &error.to_error_object()),
    )
}

/// `{"jsonrpc":"2.0","method":…,"params":…}`.
pub fn notification<P: Serialize>(method: &str, params: &P) -> Vec<u8> {
    to_vec(&NotificationEnvelope {
        jsonrpc: "2.0",
        method,
        params,
    })
}

/// `result` with the entries of `server_meta` added to its `_meta` (existing keys kept; a
/// `_meta` that is not an object is replaced): every result carries the serverInfo `_meta`.
pub fn with_server_meta(server_meta: &JsonObject, mut result: JsonObject) -> JsonObject {
    match result.get_mut("_meta") {
        Some(Value::Object(meta)) => {
            for (key, value) in server_meta {
                meta.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        _ => {
            result.insert("_meta".into(), Value::Object(server_meta.clone()));
        }
    }
    result
}
