//! Test support for the multi-process tests: a server binary as a child process (its URL
//! read from its first stdout line, signals sent with `kill`), and a small JSON-RPC client
//! with an SSE reader for `subscriptions/listen`.
//!
//! Shared by the fixture's tests (`tasks-fixture`) and `examples/rmcp-app`'s (`rmcp-app`, which
//! includes this folder with `#[path]`): each passes its binary, `env!("CARGO_BIN_EXE_…")`, to
//! [`Fixture::start`]. Both print their URL first and take the same store flags.
#![allow(dead_code)] // each test binary uses a different subset

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures_util::{Stream, StreamExt as _};
use serde_json::{json, Value};

pub(crate) const VERSION: &str = "2026-07-28";

/// A running server process (the fixture or `rmcp-app`); killed (SIGKILL) when dropped.
pub(crate) struct Fixture {
    pub child: Child,
    pub url: String,
    pub log: PathBuf,
}

impl Fixture {
    /// Starts `binary` with `args` (plus `--listen 127.0.0.1:0`), its stderr into `log`, and
    /// waits (up to 60 s) for the URL it prints.
    ///
    /// # Panics
    /// When it does not start; the panic shows its log.
    pub(crate) fn start(binary: &str, args: &[String], log: &Path) -> Fixture {
        let stderr = std::fs::File::create(log).expect("a log file");
        let mut child = Command::new(binary)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|error| panic!("{binary} does not start: {error}"));
        let stdout = child.stdout.take().expect("stdout");
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        match receiver.recv_timeout(Duration::from_secs(60)) {
            Ok(line) if line.starts_with("http://") => Fixture {
                child,
                url: line.trim().to_owned(),
                log: log.to_owned(),
            },
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{binary} printed no URL; its log:\n{}",
                    std::fs::read_to_string(log).unwrap_or_default()
                );
            }
        }
    }

    /// Sends `signal` (e.g. `KILL`, `STOP`, `CONT`, `TERM`) to the process.
    pub(crate) fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} failed");
    }

    /// Waits (up to `limit`) for the process to exit; whether it did.
    pub(crate) fn wait_exit(&mut self, limit: Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        while std::time::Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The log so far.
    pub(crate) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A client of this node.
    pub(crate) fn client(&self) -> Client {
        Client::new(&self.url)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return; // already reaped: its pid may belong to another process by now
        }
        // A stopped process must be continued to die promptly.
        let _ = Command::new("kill")
            .arg("-CONT")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A JSON-RPC client of one node, declaring the Tasks extension and form elicitation.
#[derive(Clone)]
pub(crate) struct Client {
    http: reqwest::Client,
    url: String,
}

impl Client {
    pub(crate) fn new(url: &str) -> Self {
        Client::with_timeout(url, Duration::from_secs(20))
    }

    /// A client whose every request gives up after `timeout` (a node that is stopped or
    /// stalled does not hold it longer).
    pub(crate) fn with_timeout(url: &str, timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .expect("a reqwest client");
        Client {
            http,
            url: url.to_owned(),
        }
    }

    fn post(&self, method: &str, mut params: Value) -> reqwest::RequestBuilder {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities":
                {"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        });
        let name = params
            .get("name")
            .or_else(|| params.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-method", method)
            .body(body.to_string());
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        request
    }

    /// The node's endpoint URL.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The whole JSON-RPC response body, or `None` when no answer came (the node is down).
    pub(crate) async fn try_request(&self, method: &str, params: Value) -> Option<Value> {
        let response = self.post(method, params).send().await.ok()?;
        response.json().await.ok()
    }

    /// The `result` of a JSON-RPC success.
    ///
    /// # Panics
    /// On no answer or an error answer.
    pub(crate) async fn result(&self, method: &str, params: Value) -> Value {
        let body = self
            .try_request(method, params.clone())
            .await
            .unwrap_or_else(|| panic!("{method} {params} got no answer from {}", self.url));
        match body.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} {params} failed: {body}"),
        }
    }

    /// Creates a task of `tool`; its id.
    pub(crate) async fn create(&self, tool: &str, arguments: Value) -> String {
        let result = self
            .result("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert_eq!(result["resultType"], "task", "{result}");
        result["taskId"].as_str().expect("a taskId").to_owned()
    }

    pub(crate) async fn get(&self, id: &str) -> Value {
        self.result("tasks/get", json!({"taskId": id})).await
    }

    pub(crate) async fn update(&self, id: &str, responses: Value) -> Value {
        self.result(
            "tasks/update",
            json!({"taskId": id, "inputResponses": responses}),
        )
        .await
    }

    pub(crate) async fn cancel(&self, id: &str) -> Value {
        self.result("tasks/cancel", json!({"taskId": id})).await
    }

    /// Polls `tasks/get` every 50 ms until `done` holds (up to `limit`); the task then.
    ///
    /// # Panics
    /// When `limit` passes first; the panic shows the task as last read.
    pub(crate) async fn wait_until(
        &self,
        id: &str,
        limit: Duration,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let task = self.try_request("tasks/get", json!({"taskId": id})).await;
            if let Some(task) = task.as_ref().and_then(|body| body.get("result")) {
                if done(task) {
                    return task.clone();
                }
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out after {limit:?} waiting for {what}; the task is {task:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Opens a `subscriptions/listen` stream for `task_ids` and reads its acknowledgement.
    pub(crate) async fn listen(&self, task_ids: &[&str]) -> Sse {
        let response = self
            .post(
                "subscriptions/listen",
                json!({"notifications": {"taskIds": task_ids}}),
            )
            .send()
            .await
            .expect("listen answers");
        assert_eq!(response.status(), 200);
        let mut sse = Sse {
            stream: Box::pin(response.bytes_stream()),
            buffer: Vec::new(),
        };
        let ack = sse.next(Duration::from_secs(10)).await.expect("an ack");
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        sse
    }
}

type Bytes = Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

/// The JSON messages of an SSE response, one per `data:` event.
pub(crate) struct Sse {
    stream: Bytes,
    buffer: Vec<u8>,
}

impl Sse {
    /// The next message, or `None` when `limit` passes or the stream ends first.
    pub(crate) async fn next(&mut self, limit: Duration) -> Option<Value> {
        let read = async {
            loop {
                if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                    let event: Vec<u8> = self.buffer.drain(..end + 2).collect();
                    let text = String::from_utf8_lossy(&event);
                    let data: String = text
                        .lines()
                        .filter_map(|line| line.strip_prefix("data:"))
                        .map(str::trim_start)
                        .collect();
                    if data.is_empty() {
                        continue; // a comment or keep-alive
                    }
                    return serde_json::from_str(&data).ok();
                }
                match self.stream.next().await {
                    Some(Ok(chunk)) => self.buffer.extend_from_slice(&chunk),
                    _ => return None,
                }
            }
        };
        tokio::time::timeout(limit, read).await.ok().flatten()
    }
}

/// The text of a completed task's first content block.
pub(crate) fn result_text(task: &Value) -> &str {
    task["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}
