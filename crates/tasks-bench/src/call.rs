//! The exact request a load generator repeats (MCP 2026-07-28 over HTTP, declaring the Tasks
//! extension), and the one response of it checked in full before a run: wrk and oha read no
//! JSON-RPC bodies. Everything else the harness says to a fixture goes through `tasks-client`
//! ([`crate::mcp`]).

use serde_json::{json, Value};
use tasks_core::protocol::{
    META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, PROTOCOL_VERSION, TASKS_EXTENSION,
};

/// One prepared request: routing headers and the serialized JSON-RPC body, sent unchanged as
/// often as needed (the protocol is stateless, so a repeated `tools/call` creates a new task).
#[derive(Debug, Clone)]
pub(crate) struct Call {
    method: &'static str,
    name: String,
    body: String,
}

/// What a row expects of every result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// A `CreateTaskResult` (`resultType: "task"` with a `taskId`).
    Created,
    /// A `DetailedTask` with this `status`.
    Status(&'static str),
}

impl Call {
    /// `tasks/get` of `task_id`.
    pub(crate) fn tasks_get(task_id: &str) -> Self {
        Call::new("tasks/get", task_id, json!({"taskId": task_id}))
    }

    /// `tools/call` of `tool` with `arguments`, declaring Tasks.
    pub(crate) fn tools_call(tool: &str, arguments: Value) -> Self {
        Call::new(
            "tools/call",
            tool,
            json!({"name": tool, "arguments": arguments}),
        )
    }

    fn new(method: &'static str, name: &str, mut params: Value) -> Self {
        params["_meta"] = json!({
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: {"extensions": {TASKS_EXTENSION: {}}},
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        Call {
            method,
            name: name.to_owned(),
            body: body.to_string(),
        }
    }

    /// The JSON-RPC method.
    pub(crate) fn method(&self) -> &'static str {
        self.method
    }

    /// The serialized JSON-RPC request.
    pub(crate) fn body(&self) -> &str {
        &self.body
    }

    /// The headers of this call besides `Host`, as every generator sends them.
    pub(crate) fn headers(&self) -> [(&'static str, &str); 5] {
        [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", PROTOCOL_VERSION),
            ("Mcp-Method", self.method),
            ("Mcp-Name", &self.name),
        ]
    }

    /// A wrk Lua script sending this call on every request (wrk sets `Host` from the URL); its
    /// `done` hook prints the latency quantiles in microseconds (`quantile <q> <µs>`) and the
    /// request and error counts.
    pub(crate) fn wrk_script(&self) -> String {
        let mut script = format!("wrk.method = \"POST\"\nwrk.body = [==[{}]==]\n", self.body);
        for (name, value) in self.headers() {
            script.push_str(&format!("wrk.headers[\"{name}\"] = \"{value}\"\n"));
        }
        script
            + "function done(summary, latency, requests)\n\
               for _, q in ipairs({50, 90, 99, 99.9}) do\n\
                 io.write(string.format(\"quantile %g %d\\n\", q, latency:percentile(q)))\n\
               end\n\
               local e = summary.errors\n\
               io.write(string.format(\"requests %d\\n\", summary.requests))\n\
               io.write(string.format(\"errors %d\\n\", e.connect + e.read + e.write + e.status + e.timeout))\n\
             end\n"
    }

    /// Sends this call to `url` once and checks the answer against `expect` in full (HTTP 200,
    /// a JSON-RPC `result` and no `error`); the raw body.
    pub(crate) async fn checked(&self, url: &str, expect: Expect) -> Result<Vec<u8>, String> {
        let mut request = reqwest::Client::new().post(url).body(self.body.clone());
        for (name, value) in self.headers() {
            request = request.header(name, value);
        }
        let response = request.send().await.map_err(|e| format!("{url}: {e}"))?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| format!("{url}: {e}"))?;
        expect
            .check(status.as_u16(), &body)
            .map_err(|why| format!("{} {url}: {why}", self.method))?;
        Ok(body.to_vec())
    }
}

impl Expect {
    /// Checks a response: HTTP 200, a `result` with no `error`, of the expected shape.
    pub(crate) fn check(self, status: u16, body: &[u8]) -> Result<(), String> {
        let reply: Value = serde_json::from_slice(body).unwrap_or_default();
        let result = &reply["result"];
        let ok = status == 200
            && reply.get("error").is_none()
            && match self {
                Expect::Created => result["resultType"] == "task" && result["taskId"].is_string(),
                Expect::Status(status) => {
                    result["resultType"] == "complete" && result["status"] == status
                }
            };
        if ok {
            Ok(())
        } else {
            let body = String::from_utf8_lossy(body);
            Err(format!("HTTP {status}, wanted {self:?}: {body}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_carries_the_routing_headers_and_meta() {
        let call = Call::tools_call("slow_compute", json!({"seconds": 0}));
        let body: Value = serde_json::from_str(call.body()).unwrap();
        assert_eq!(body["params"]["name"], "slow_compute");
        let meta = &body["params"]["_meta"];
        assert_eq!(
            meta[META_CLIENT_CAPABILITIES]["extensions"][TASKS_EXTENSION],
            json!({})
        );
        let script = Call::tasks_get("abc").wrk_script();
        assert!(script.contains("wrk.headers[\"Mcp-Name\"] = \"abc\""));
        assert!(script.contains("wrk.headers[\"Mcp-Method\"] = \"tasks/get\""));
    }

    #[test]
    fn only_a_200_result_of_the_expected_shape_passes() {
        let done = br#"{"result":{"resultType":"complete","taskId":"t","status":"completed"}}"#;
        assert!(Expect::Status("completed").check(200, done).is_ok());
        assert!(Expect::Status("completed").check(400, done).is_err());
        assert!(Expect::Created.check(200, done).is_err());
        let created = br#"{"result":{"resultType":"task","taskId":"t","status":"working"}}"#;
        assert!(Expect::Created.check(200, created).is_ok());
        let error = br#"{"error":{"code":-32602,"message":"x"}}"#;
        assert!(Expect::Status("completed").check(200, error).is_err());
        assert!(Expect::Created.check(200, b"not json").is_err());
    }
}
