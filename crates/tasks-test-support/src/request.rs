//! [`Req`]: one MCP request, correct by default and bent by each test where it needs: its
//! HTTP method, path, headers, `_meta`, id and body. It is sent to a dispatcher in process
//! ([`crate::dispatcher`]) or over HTTP ([`crate::client::Client::send_req`]).

use bytes::Bytes;
use http::Method;
use serde_json::{json, Map, Value};
use tasks_core::JsonObject;
use tasks_http::BodyError;

use crate::protocol::{mcp_name, meta, TASKS, VERSION};

/// The `Host` of an in-process request.
pub const HOST: &str = "127.0.0.1:3000";

#[derive(Debug)]
enum HeaderOp {
    Set(String, Vec<u8>),
    Append(String, Vec<u8>),
    Remove(String),
}

/// One HTTP exchange, correct by default: POST /mcp, `Host: 127.0.0.1:3000`,
/// `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (from `params.name`, `params.uri` or
/// `params.taskId`),
/// and `params._meta` with the protocol version and the client capabilities.
#[derive(Debug)]
pub struct Req {
    pub(crate) http_method: Method,
    path: String,
    pub(crate) id: Option<Value>,
    method: String,
    params: JsonObject,
    caps: JsonObject,
    version: String,
    meta: Option<Option<Value>>,
    ops: Vec<HeaderOp>,
    body: Option<Bytes>,
    pub(crate) body_error: Option<BodyError>,
}

impl Req {
    /// Request `method` with no params, id 1, declaring no capability.
    pub fn new(method: &str) -> Self {
        Req {
            http_method: Method::POST,
            path: "/mcp".into(),
            id: Some(json!(1)),
            method: method.into(),
            params: JsonObject::new(),
            caps: JsonObject::new(),
            version: VERSION.into(),
            meta: None,
            ops: Vec::new(),
            body: None,
            body_error: None,
        }
    }

    /// `tools/call` of `tool` with `arguments`.
    pub fn call(tool: &str, arguments: Value) -> Self {
        Req::new("tools/call")
            .param("name", json!(tool))
            .param("arguments", arguments)
    }

    /// `tasks/get` (also usable for `tasks/cancel` through `Req::task_method`).
    pub fn get(task_id: &str) -> Self {
        Req::task_method("tasks/get", task_id)
    }

    /// `tasks/cancel` of `task_id`.
    pub fn cancel(task_id: &str) -> Self {
        Req::task_method("tasks/cancel", task_id)
    }

    /// `tasks/update` answering `task_id` with `responses` (`inputResponses`).
    pub fn update(task_id: &str, responses: Value) -> Self {
        Req::task_method("tasks/update", task_id).param("inputResponses", responses)
    }

    /// Task method `method` on `task_id`.
    pub fn task_method(method: &str, task_id: &str) -> Self {
        Req::new(method).param("taskId", json!(task_id))
    }

    /// `subscriptions/listen` with `notifications`.
    pub fn listen(notifications: Value) -> Self {
        Req::new("subscriptions/listen").param("notifications", notifications)
    }

    /// Sets the request id.
    pub fn id(mut self, id: Value) -> Self {
        self.id = Some(id);
        self
    }

    /// A notification: no id.
    pub fn notification(mut self) -> Self {
        self.id = None;
        self
    }

    /// Sets one param.
    pub fn param(mut self, key: &str, value: Value) -> Self {
        self.params.insert(key.into(), value);
        self
    }

    /// Removes one param.
    pub fn remove_param(mut self, key: &str) -> Self {
        self.params.remove(key);
        self
    }

    /// Declares the Tasks extension on this request.
    pub fn tasks(self) -> Self {
        self.cap("extensions", json!({TASKS: {}}))
    }

    /// Declares `elicitation: {}`.
    pub fn elicitation(self) -> Self {
        self.cap("elicitation", json!({}))
    }

    /// Replaces every param with those of `params` (an object; anything else is none).
    pub fn params(mut self, params: Value) -> Self {
        self.params = match params {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        };
        self
    }

    /// Replaces the declared client capabilities with `caps` (an object; anything else is
    /// none).
    pub fn caps(mut self, caps: Value) -> Self {
        self.caps = match caps {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        };
        self
    }

    /// Declares one client capability.
    pub fn cap(mut self, key: &str, value: Value) -> Self {
        self.caps.insert(key.into(), value);
        self
    }

    /// Sets the version in both the header and `_meta`.
    pub fn version(mut self, version: &str) -> Self {
        self.version = version.into();
        self
    }

    /// Replaces `params._meta` (any JSON value).
    pub fn meta(mut self, meta: Value) -> Self {
        self.meta = Some(Some(meta));
        self
    }

    /// Sends `params` without `_meta`.
    pub fn no_meta(mut self) -> Self {
        self.meta = Some(None);
        self
    }

    /// Sets (replaces) a header.
    pub fn header(mut self, name: &str, value: impl AsRef<[u8]>) -> Self {
        self.ops.push(HeaderOp::Set(
            name.to_ascii_lowercase(),
            value.as_ref().to_vec(),
        ));
        self
    }

    /// Adds one more value of a header.
    pub fn append(mut self, name: &str, value: impl AsRef<[u8]>) -> Self {
        self.ops.push(HeaderOp::Append(
            name.to_ascii_lowercase(),
            value.as_ref().to_vec(),
        ));
        self
    }

    /// Removes a header.
    pub fn without(mut self, name: &str) -> Self {
        self.ops.push(HeaderOp::Remove(name.to_ascii_lowercase()));
        self
    }

    /// Sets `Authorization: Bearer <token>`.
    pub fn bearer(self, token: &str) -> Self {
        self.header("authorization", format!("Bearer {token}"))
    }

    /// Sets the HTTP method (default POST).
    pub fn http_method(mut self, method: Method) -> Self {
        self.http_method = method;
        self
    }

    /// Sets the request path (default `/mcp`).
    pub fn path(mut self, path: &str) -> Self {
        self.path = path.into();
        self
    }

    /// Sends these raw bytes as the body instead of the built message.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Sends this JSON value as the body instead of the built message.
    pub fn body_json(self, body: Value) -> Self {
        let bytes = serde_json::to_vec(&body).unwrap();
        self.body(bytes)
    }

    /// Hands the dispatcher a body error instead of a body.
    pub fn body_error(mut self, error: BodyError) -> Self {
        self.body_error = Some(error);
        self
    }

    /// The `params` object as sent (with `_meta`).
    pub fn params_value(&self) -> Value {
        let mut params = self.params.clone();
        match &self.meta {
            None => {
                params.insert(
                    "_meta".into(),
                    meta(&self.version, Value::Object(self.caps.clone())),
                );
            }
            Some(Some(meta)) => {
                params.insert("_meta".into(), meta.clone());
            }
            Some(None) => {}
        }
        Value::Object(params)
    }

    /// The JSON-RPC message as sent.
    pub fn message(&self) -> Value {
        let mut message = Map::new();
        message.insert("jsonrpc".into(), json!("2.0"));
        if let Some(id) = &self.id {
            message.insert("id".into(), id.clone());
        }
        message.insert("method".into(), json!(self.method));
        message.insert("params".into(), self.params_value());
        Value::Object(message)
    }

    /// The headers as sent, in order (`Host` first unless removed).
    pub fn headers(&self) -> Vec<(String, Vec<u8>)> {
        let mut headers: Vec<(String, Vec<u8>)> = vec![
            ("host".into(), HOST.into()),
            ("content-type".into(), b"application/json".to_vec()),
            (
                "accept".into(),
                b"application/json, text/event-stream".to_vec(),
            ),
            ("mcp-protocol-version".into(), self.version.clone().into()),
            ("mcp-method".into(), self.method.clone().into()),
        ];
        if let Some(name) = mcp_name(&self.method, &self.params) {
            headers.push(("mcp-name".into(), name.as_bytes().to_vec()));
        }
        for op in &self.ops {
            match op {
                HeaderOp::Set(name, value) => {
                    headers.retain(|(n, _)| n != name);
                    headers.push((name.clone(), value.clone()));
                }
                HeaderOp::Append(name, value) => headers.push((name.clone(), value.clone())),
                HeaderOp::Remove(name) => headers.retain(|(n, _)| n != name),
            }
        }
        headers
    }

    /// The request head.
    pub fn parts(&self) -> http::request::Parts {
        let mut builder = http::Request::builder()
            .method(self.http_method.clone())
            .uri(self.path.as_str());
        for (name, value) in self.headers() {
            builder = builder.header(
                name.as_str(),
                http::HeaderValue::from_bytes(&value).expect("a valid header value"),
            );
        }
        builder.body(()).unwrap().into_parts().0
    }

    /// The body as sent.
    pub fn body_bytes(&self) -> Bytes {
        match &self.body {
            Some(body) => body.clone(),
            None => Bytes::from(serde_json::to_vec(&self.message()).unwrap()),
        }
    }
}
