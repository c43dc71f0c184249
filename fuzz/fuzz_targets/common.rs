//! Shared by the fuzz targets: the input format of `envelope` and `dispatch`.
//!
//! An input is `<header lines> NUL <body>`: each header line (split on `\n`) starts with one
//! byte choosing the header (`v` MCP-Protocol-Version, `m` Mcp-Method, `n` Mcp-Name, anything
//! else `Mcp-Param-X`) followed by its raw value; lines whose value is not a legal header value
//! are skipped, as no HTTP stack would deliver them. Without a NUL the whole input is the body
//! and the headers are the correct ones for it (so the fuzzer starts deep in admission).

#![allow(dead_code)]

use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

pub fn split(data: &[u8]) -> (HeaderMap, &[u8]) {
    match data.iter().position(|b| *b == 0) {
        Some(at) => (explicit_headers(&data[..at]), &data[at + 1..]),
        None => (default_headers(data), data),
    }
}

fn explicit_headers(block: &[u8]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for line in block.split(|b| *b == b'\n') {
        let Some((&which, value)) = line.split_first() else {
            continue;
        };
        let name = match which {
            b'v' => "mcp-protocol-version",
            b'm' => "mcp-method",
            b'n' => "mcp-name",
            _ => "mcp-param-x",
        };
        if let Ok(value) = HeaderValue::from_bytes(value) {
            headers.append(HeaderName::from_static(name), value);
        }
    }
    headers
}

fn default_headers(body: &[u8]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let version = parsed
        .as_ref()
        .and_then(|v| v.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion"))
        .and_then(Value::as_str)
        .unwrap_or("2026-07-28");
    let method = parsed
        .as_ref()
        .and_then(|v| v.get("method"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let name = parsed.as_ref().and_then(|v| {
        ["/params/name", "/params/taskId"]
            .iter()
            .find_map(|p| v.pointer(p))
            .and_then(Value::as_str)
    });
    for (header, value) in [
        ("mcp-protocol-version", Some(version)),
        ("mcp-method", Some(method)),
        ("mcp-name", name),
    ] {
        if let Some(value) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(header, value);
        }
    }
    headers
}

/// A readable JSON-RPC id: a string or an integer.
pub fn readable_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}
