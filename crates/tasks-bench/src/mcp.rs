//! The MCP requests the benchmark sends (MCP 2026-07-28 over HTTP, declaring the Tasks
//! extension) and the checks applied to every response.

use bytes::Bytes;
use http::header::{HeaderName, HOST};
use http::{HeaderValue, Method, Request};
use http_body_util::Full;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};
use tasks_core::protocol::{
    META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, PROTOCOL_VERSION, TASKS_EXTENSION,
};

use crate::conn::{Connection, Endpoint, Reply};

/// One prepared request: routing headers and the serialized JSON-RPC body, sent unchanged as
/// often as needed (the protocol is stateless, so a repeated `tools/call` creates a new task).
#[derive(Debug, Clone)]
pub(crate) struct Call {
    method: HeaderValue,
    name: HeaderValue,
    body: Bytes,
}

impl Call {
    /// `tasks/get` of `task_id`.
    pub(crate) fn tasks_get(task_id: &str) -> Result<Self, String> {
        Call::new("tasks/get", task_id, json!({"taskId": task_id}))
    }

    /// `tools/call` of `tool` with `arguments`, declaring Tasks.
    pub(crate) fn tools_call(tool: &str, arguments: Value) -> Result<Self, String> {
        Call::new(
            "tools/call",
            tool,
            json!({"name": tool, "arguments": arguments}),
        )
    }

    /// `tools/call` of `tool` with `arguments`, declaring Tasks and form elicitation (which
    /// `confirm_delete` requires).
    pub(crate) fn tools_call_eliciting(tool: &str, arguments: Value) -> Result<Self, String> {
        let mut params = json!({"name": tool, "arguments": arguments});
        params["_meta"] = meta(json!({"elicitation": {"form": {}}}));
        Call::new("tools/call", tool, params)
    }

    /// `tasks/update` of `task_id` with `responses` (`inputResponses`).
    pub(crate) fn tasks_update(task_id: &str, responses: Value) -> Result<Self, String> {
        Call::new(
            "tasks/update",
            task_id,
            json!({"taskId": task_id, "inputResponses": responses}),
        )
    }

    /// `subscriptions/listen` for the tasks of `task_ids`.
    pub(crate) fn listen(task_ids: &[String]) -> Result<Self, String> {
        let name = task_ids.first().map_or("", String::as_str);
        Call::new(
            "subscriptions/listen",
            name,
            json!({"notifications": {"taskIds": task_ids}}),
        )
    }

    /// A call of `method` with `params`; `_meta` declares Tasks unless `params` has one.
    fn new(method: &'static str, name: &str, mut params: Value) -> Result<Self, String> {
        if params.get("_meta").is_none() {
            params["_meta"] = meta(json!({}));
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        Ok(Call {
            method: HeaderValue::from_static(method),
            name: HeaderValue::from_str(name).map_err(|e| format!("Mcp-Name {name:?}: {e}"))?,
            body: Bytes::from(body.to_string()),
        })
    }

    /// The headers of this call besides `Host` (name, value), as every generator sends them.
    pub(crate) fn headers(&self) -> [(&'static str, &str); 5] {
        [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", PROTOCOL_VERSION),
            ("Mcp-Method", self.method.to_str().unwrap_or_default()),
            ("Mcp-Name", self.name.to_str().unwrap_or_default()),
        ]
    }

    /// The serialized JSON-RPC request.
    pub(crate) fn body(&self) -> &[u8] {
        &self.body
    }

    /// A wrk Lua script sending this call on every request (wrk sets `Host` from the URL).
    pub(crate) fn wrk_script(&self) -> String {
        let mut script = format!(
            "wrk.method = \"POST\"\nwrk.body = [==[{}]==]\n",
            String::from_utf8_lossy(&self.body)
        );
        for (name, value) in self.headers() {
            script.push_str(&format!("wrk.headers[\"{name}\"] = \"{value}\"\n"));
        }
        script + WRK_DONE
    }

    /// The JSON-RPC method.
    pub(crate) fn method(&self) -> &str {
        self.method.to_str().unwrap_or_default()
    }

    /// The HTTP request for `endpoint`.
    pub(crate) fn request(&self, endpoint: &Endpoint) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(self.body.clone()));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = endpoint.path.parse().unwrap_or_default();
        let headers = request.headers_mut();
        headers.insert(HOST, endpoint.host.clone());
        for (name, value) in self.headers() {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                headers.insert(name, value);
            }
        }
        request
    }
}

/// Sends `call` to `endpoint` once on a new connection and checks the response against
/// `expect` in full (what a generator that reads no bodies cannot do); the response.
pub(crate) async fn checked(
    endpoint: &Endpoint,
    call: &Call,
    expect: Expect,
) -> Result<Reply, String> {
    let reply = Connection::open(endpoint)
        .await?
        .send(call.request(endpoint))
        .await
        .map_err(|e| e.to_string())?;
    expect.check(&summary_of(&reply)?)?;
    Ok(reply)
}

/// The end of every wrk script: the latency quantiles the report uses, in microseconds, one
/// `quantile <q> <µs>` line each, and the request and error counts.
const WRK_DONE: &str = "function done(summary, latency, requests)\n\
    for _, q in ipairs({50, 90, 99, 99.9}) do\n\
      io.write(string.format(\"quantile %g %d\\n\", q, latency:percentile(q)))\n\
    end\n\
    local e = summary.errors\n\
    io.write(string.format(\"requests %d\\n\", summary.requests))\n\
    io.write(string.format(\"errors %d\\n\", e.connect + e.read + e.write + e.status + e.timeout))\n\
  end\n";

/// Request `_meta`: the protocol version, and `capabilities` (client capabilities) plus the
/// Tasks extension.
fn meta(mut capabilities: Value) -> Value {
    capabilities["extensions"] = json!({TASKS_EXTENSION: {}});
    json!({
        META_PROTOCOL_VERSION: PROTOCOL_VERSION,
        META_CLIENT_CAPABILITIES: capabilities,
    })
}

/// The result fields the benchmark looks at, borrowed from the response body (other fields are
/// skipped without allocating, so checking a response stays cheap for the load generator).
#[derive(Debug, Deserialize)]
pub(crate) struct Summary<'a> {
    /// `resultType`.
    #[serde(rename = "resultType")]
    pub result_type: &'a str,
    /// `taskId`, when present.
    #[serde(rename = "taskId", default)]
    pub task_id: Option<&'a str>,
    /// `status`, when present.
    #[serde(default)]
    pub status: Option<&'a str>,
    /// `pollIntervalMs`, when present.
    #[serde(rename = "pollIntervalMs", default)]
    pub poll_interval_ms: Option<u64>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    result: Option<Summary<'a>>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

/// The owned form of a [`Summary`] of a task result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskInfo {
    /// `resultType`.
    pub result_type: String,
    /// `taskId`.
    pub task_id: String,
    /// `status`.
    pub status: String,
    /// `pollIntervalMs`, when present.
    pub poll_interval_ms: Option<u64>,
}

impl Summary<'_> {
    /// The owned form; every task result has `taskId` and `status`.
    pub(crate) fn to_task(&self) -> Result<TaskInfo, String> {
        match (self.task_id, self.status) {
            (Some(task_id), Some(status)) => Ok(TaskInfo {
                result_type: self.result_type.to_owned(),
                task_id: task_id.to_owned(),
                status: status.to_owned(),
                poll_interval_ms: self.poll_interval_ms,
            }),
            _ => Err(format!("not a task result: {self:?}")),
        }
    }
}

/// The [`Summary`] of a successful reply: HTTP 200 and a JSON-RPC body with a `result` object
/// and no `error`.
pub(crate) fn summary_of(reply: &Reply) -> Result<Summary<'_>, String> {
    let failed = |why: &str| {
        format!(
            "HTTP {}: {why}: {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        )
    };
    let envelope: Envelope<'_> =
        serde_json::from_slice(&reply.body).map_err(|e| failed(&e.to_string()))?;
    match envelope {
        Envelope {
            result: Some(summary),
            error: None,
        } if reply.status == http::StatusCode::OK => Ok(summary),
        _ => Err(failed("not a successful result")),
    }
}

/// What a row expects of every result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// A `CreateTaskResult` (`resultType: "task"` with a `taskId`).
    Created,
    /// A `DetailedTask` with this `status`.
    Status(&'static str),
}

impl Expect {
    /// Checks `summary`.
    pub(crate) fn check(self, summary: &Summary<'_>) -> Result<(), String> {
        let ok = match self {
            Expect::Created => summary.result_type == "task" && summary.task_id.is_some(),
            Expect::Status(status) => {
                summary.result_type == "complete" && summary.status == Some(status)
            }
        };
        if ok {
            Ok(())
        } else {
            Err(format!("unexpected result (wanted {self:?}): {summary:?}"))
        }
    }

    /// Checks an owned task result.
    pub(crate) fn check_task(self, task: &TaskInfo) -> Result<(), String> {
        self.check(&Summary {
            result_type: &task.result_type,
            task_id: Some(&task.task_id),
            status: Some(&task.status),
            poll_interval_ms: task.poll_interval_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, body: &str) -> Reply {
        Reply {
            status: http::StatusCode::from_u16(status).unwrap(),
            body: Bytes::from(body.to_owned()),
        }
    }

    #[test]
    fn a_request_carries_the_routing_headers_and_meta() {
        let endpoint = Endpoint::parse("http://127.0.0.1:9/mcp").unwrap();
        let request = Call::tasks_get("abc").unwrap().request(&endpoint);
        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.uri(), "/mcp");
        let headers = request.headers();
        assert_eq!(headers["mcp-method"], "tasks/get");
        assert_eq!(headers["mcp-name"], "abc");
        assert_eq!(headers["mcp-protocol-version"], PROTOCOL_VERSION);
        assert_eq!(headers["host"], "127.0.0.1:9");
        let call = Call::tools_call("slow_compute", json!({"seconds": 0})).unwrap();
        let body: Value = serde_json::from_slice(&call.body).unwrap();
        assert_eq!(body["params"]["name"], "slow_compute");
        assert_eq!(
            body["params"]["_meta"][META_CLIENT_CAPABILITIES]["extensions"][TASKS_EXTENSION],
            json!({})
        );
    }

    #[test]
    fn an_eliciting_call_declares_form_elicitation_and_tasks() {
        let call = Call::tools_call_eliciting("confirm_delete", json!({})).unwrap();
        let call: Value = serde_json::from_slice(&call.body).unwrap();
        let capabilities = &call["params"]["_meta"][META_CLIENT_CAPABILITIES];
        assert_eq!(capabilities["elicitation"], json!({"form": {}}));
        assert_eq!(capabilities["extensions"][TASKS_EXTENSION], json!({}));
        assert_eq!(
            call["params"]["_meta"][META_PROTOCOL_VERSION],
            PROTOCOL_VERSION
        );
    }

    #[test]
    fn updates_and_listens() {
        let body = |call: Call| serde_json::from_slice::<Value>(&call.body).unwrap();
        let update = Call::tasks_update("t1", json!({"k": {"action": "decline"}})).unwrap();
        assert_eq!(update.name, "t1");
        let update = body(update);
        assert_eq!(update["method"], "tasks/update");
        assert_eq!(update["params"]["inputResponses"]["k"]["action"], "decline");
        let listen = body(Call::listen(&["t1".into(), "t2".into()]).unwrap());
        assert_eq!(
            listen["params"]["notifications"]["taskIds"],
            json!(["t1", "t2"])
        );
    }

    #[test]
    fn only_a_200_result_is_a_success() {
        let body = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","taskId":"t","status":"completed","pollIntervalMs":100,"result":{"resultType":"complete","content":[]}}}"#;
        let ok = reply(200, body);
        let summary = summary_of(&ok).unwrap();
        assert_eq!(summary.result_type, "complete");
        assert_eq!(summary.status, Some("completed"));
        assert_eq!(summary.poll_interval_ms, Some(100));
        assert!(Expect::Status("completed").check(&summary).is_ok());
        assert_eq!(summary.to_task().unwrap().task_id, "t");
        assert!(summary_of(&reply(400, body)).is_err());
        let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}"#;
        assert!(summary_of(&reply(200, error)).is_err());
        assert!(summary_of(&reply(200, "not json")).is_err());
    }

    #[test]
    fn expectations() {
        let body = r#"{"result":{"resultType":"task","taskId":"t","status":"working"}}"#;
        let created_reply = reply(200, body);
        let created = summary_of(&created_reply).unwrap();
        assert!(Expect::Created.check(&created).is_ok());
        assert!(Expect::Status("completed").check(&created).is_err());
        let parked = created.to_task().map(|mut t| {
            t.result_type = "complete".into();
            t.status = "input_required".into();
            t
        });
        assert!(Expect::Status("input_required")
            .check_task(&parked.unwrap())
            .is_ok());
    }
}
