//! The client's requests of a session being served: their ids, and the
//! `notifications/cancelled` that stops one.
//!
//! Basic protocol, "Requests" (<https://modelcontextprotocol.io/specification/2025-11-25/basic>):
//! a request id MUST NOT have been used before by the requestor within the same session; this
//! server refuses a request whose id is the id of one of the session's requests still being
//! served (-32600 `A request with this id is still being served`), and takes an id again once
//! its request was answered. Utilities, "Cancellation"
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation>):
//! `notifications/cancelled` names the request by its id; a request that is not being served
//! (unknown, or answered already) is ignored. Ids are compared as JSON values: `1` and `"1"`
//! are two ids.

use std::collections::HashMap;

use serde_json::Value;

use crate::McpError;

/// The key of a request id: its JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestKey(String);

impl RequestKey {
    /// The key of `id`.
    pub fn of(id: &Value) -> Self {
        RequestKey(id.to_string())
    }
}

/// The requests of one session being served, each with the handle (`T`, the driver's: a
/// token that stops it) that a cancellation reaches.
#[derive(Debug)]
pub struct ClientRequests<T> {
    serving: HashMap<RequestKey, T>,
}

impl<T> Default for ClientRequests<T> {
    fn default() -> Self {
        ClientRequests {
            serving: HashMap::new(),
        }
    }
}

impl<T> ClientRequests<T> {
    /// No request being served.
    pub fn new() -> Self {
        ClientRequests::default()
    }

    /// Request `id` is being served, stopped through `handle`: its key, to [`end`] it with.
    ///
    /// # Errors
    /// -32600 `A request with this id is still being served`.
    ///
    /// [`end`]: ClientRequests::end
    pub fn begin(&mut self, id: &Value, handle: T) -> Result<RequestKey, McpError> {
        let key = RequestKey::of(id);
        if self.serving.contains_key(&key) {
            return Err(McpError::InvalidRequest(
                "A request with this id is still being served",
            ));
        }
        self.serving.insert(key.clone(), handle);
        Ok(key)
    }

    /// `notifications/cancelled` for request `id`: the handle that stops it, if it is being
    /// served.
    pub fn cancelled(&self, id: &Value) -> Option<&T> {
        self.serving.get(&RequestKey::of(id))
    }

    /// The request of `key` was answered (or stopped): its id is free again.
    pub fn end(&mut self, key: &RequestKey) {
        self.serving.remove(key);
    }

    /// Requests being served.
    pub fn len(&self) -> usize {
        self.serving.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.serving.is_empty()
    }
}
