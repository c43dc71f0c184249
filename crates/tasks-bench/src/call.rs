//! The exact request a load generator repeats (MCP 2026-07-28 over HTTP, declaring the Tasks
//! extension), and the one response of it checked in full before a run: wrk and oha read no
//! JSON-RPC bodies. Everything else the harness says to a fixture goes through `tasks-client`.

use serde_json::{json, Value};
use tasks_core::protocol::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use tasks_core::protocol::{PROTOCOL_VERSION, TASKS_EXTENSION};

/// One prepared request, sent unchanged as often as needed (the protocol is stateless, so a
/// repeated `tools/call` creates a new task), and the `status` every answer must show (`None`:
/// a `CreateTaskResult`).
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub method: &'static str,
    name: String,
    pub body: String,
    expect: Option<&'static str>,
}

impl Call {
    /// `tasks/get` of `task_id`, in `status`.
    pub(crate) fn tasks_get(task_id: &str, status: &'static str) -> Self {
        Call::new(
            "tasks/get",
            task_id,
            json!({"taskId": task_id}),
            Some(status),
        )
    }

    /// The creation request of rows 3, 7b, 7c, 8b and 9: `slow_compute` with `seconds: 0`.
    pub(crate) fn create() -> Self {
        let params = json!({"name": "slow_compute", "arguments": {"seconds": 0}});
        Call::new("tools/call", "slow_compute", params, None)
    }

    fn new(
        method: &'static str,
        name: &str,
        mut params: Value,
        expect: Option<&'static str>,
    ) -> Self {
        params["_meta"] = json!({
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: {"extensions": {TASKS_EXTENSION: {}}},
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let (name, body) = (name.to_owned(), body.to_string());
        Call {
            method,
            name,
            body,
            expect,
        }
    }

    /// The headers besides `Host`, as every generator sends them.
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
    /// `done` hook prints the summary in the shape of oha's JSON (times in seconds).
    pub(crate) fn wrk_script(&self) -> String {
        let mut script = format!("wrk.method = \"POST\"\nwrk.body = [==[{}]==]\n", self.body);
        for (name, value) in self.headers() {
            script.push_str(&format!("wrk.headers[\"{name}\"] = \"{value}\"\n"));
        }
        script
            + "function done(s, latency, requests)\n\
               local e, p = s.errors, function(q) return latency:percentile(q) / 1e6 end\n\
               io.write(string.format('{\"summary\": {\"total\": %f, \"slowest\": %f}, \
               \"latencyPercentiles\": {\"p50\": %f, \"p90\": %f, \"p99\": %f, \"p99.9\": %f}, \
               \"statusCodeDistribution\": {\"200\": %d}, \
               \"errorDistribution\": {\"wrk: non-2xx answers\": %d, \"wrk: socket errors\": %d}}\\n', \
               s.duration / 1e6, latency.max / 1e6, p(50), p(90), p(99), p(99.9), \
               s.requests - e.status, e.status, e.connect + e.read + e.write + e.timeout))\n\
             end\n"
    }

    /// Sends this call to `url` once and checks the answer in full (HTTP 200, a JSON-RPC
    /// `result` of the expected shape and no `error`); the raw body.
    pub(crate) async fn checked(&self, url: &str) -> Result<Vec<u8>, String> {
        let mut request = reqwest::Client::new().post(url).body(self.body.clone());
        for (name, value) in self.headers() {
            request = request.header(name, value);
        }
        let response = request.send().await.map_err(|e| format!("{url}: {e}"))?;
        let status = response.status().as_u16();
        let body = response.bytes().await.map_err(|e| format!("{url}: {e}"))?;
        let method = self.method;
        self.check(status, &body)
            .map_err(|why| format!("{method} {url}: {why}"))?;
        Ok(body.to_vec())
    }

    fn check(&self, http: u16, body: &[u8]) -> Result<(), String> {
        let reply: Value = serde_json::from_slice(body).unwrap_or_default();
        let result = &reply["result"];
        let shape = match self.expect {
            None => result["resultType"] == "task" && result["taskId"].is_string(),
            Some(status) => result["resultType"] == "complete" && result["status"] == status,
        };
        if http == 200 && reply.get("error").is_none() && shape {
            return Ok(());
        }
        let wanted = self.expect.unwrap_or("a created task");
        Err(format!(
            "HTTP {http}, wanted {wanted}: {}",
            String::from_utf8_lossy(body)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_carries_the_routing_headers_and_meta() {
        let body: Value = serde_json::from_str(&Call::create().body).unwrap();
        assert_eq!(body["params"]["name"], "slow_compute");
        let meta = &body["params"]["_meta"];
        assert_eq!(
            meta[META_CLIENT_CAPABILITIES]["extensions"][TASKS_EXTENSION],
            json!({})
        );
        let script = Call::tasks_get("abc", "completed").wrk_script();
        assert!(script.contains("wrk.headers[\"Mcp-Name\"] = \"abc\""));
        assert!(script.contains("wrk.headers[\"Mcp-Method\"] = \"tasks/get\""));
    }

    #[test]
    fn only_a_200_result_of_the_expected_shape_passes() {
        let (get, create) = (Call::tasks_get("t", "completed"), Call::create());
        let done = br#"{"result":{"resultType":"complete","taskId":"t","status":"completed"}}"#;
        assert!(get.check(200, done).is_ok() && get.check(400, done).is_err());
        assert!(create.check(200, done).is_err());
        let created = br#"{"result":{"resultType":"task","taskId":"t","status":"working"}}"#;
        assert!(create.check(200, created).is_ok());
        let error = br#"{"error":{"code":-32602,"message":"x"}}"#;
        assert!(get.check(200, error).is_err() && create.check(200, b"not json").is_err());
    }
}
