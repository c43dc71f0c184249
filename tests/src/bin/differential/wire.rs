//! The client side of one run: raw requests, the 2026-07-28 and 2025 message builders, and
//! [`Run`], which sends them to one fixture and records each exchange (status, headers, body;
//! SSE bodies as their events).

use std::collections::{BTreeMap, BTreeSet};
use std::pin::Pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt as _};
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::Method;
use serde_json::{json, Map, Value};

/// The 2026-07-28 revision.
pub(crate) const VERSION: &str = "2026-07-28";
/// The 2025 session revision with tasks.
pub(crate) const V2025: &str = "2025-11-25";
/// The Tasks extension id.
pub(crate) const TASKS: &str = "io.modelcontextprotocol/tasks";
/// How long one answer, one SSE event or one wait for a task state may take.
pub(crate) const WAIT: Duration = Duration::from_secs(15);

/// One HTTP request, as raw as the corpus needs it (headers may repeat, bodies be any bytes).
#[derive(Clone, Debug)]
pub(crate) struct Req {
    pub(crate) method: Method,
    /// The path, when not the MCP endpoint.
    pub(crate) path: Option<&'static str>,
    pub(crate) headers: Vec<(String, Vec<u8>)>,
    pub(crate) body: Vec<u8>,
}

impl Req {
    pub(crate) fn new(method: Method) -> Req {
        Req {
            method,
            path: None,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Sets header `name` to `value`, replacing any earlier value.
    pub(crate) fn header(self, name: &str, value: impl AsRef<[u8]>) -> Req {
        self.without(name).add_header(name, value)
    }

    /// Adds one more `name` line.
    pub(crate) fn add_header(mut self, name: &str, value: impl AsRef<[u8]>) -> Req {
        self.headers
            .push((name.to_ascii_lowercase(), value.as_ref().to_vec()));
        self
    }

    /// Removes header `name`.
    pub(crate) fn without(mut self, name: &str) -> Req {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    pub(crate) fn body(mut self, body: impl Into<Vec<u8>>) -> Req {
        self.body = body.into();
        self
    }

    pub(crate) fn json(self, body: &Value) -> Req {
        self.body(serde_json::to_vec(body).expect("JSON"))
    }

    pub(crate) fn path(mut self, path: &'static str) -> Req {
        self.path = Some(path);
        self
    }
}

/// Client capabilities declaring the Tasks extension and form elicitation.
pub(crate) fn tasks_caps() -> Value {
    json!({"elicitation": {}, "extensions": {TASKS: {}}})
}

/// Every client capability the fixture's tools ask with, and Tasks.
pub(crate) fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {"listChanged": true},
           "extensions": {TASKS: {}}})
}

/// The conformance runner's capabilities: no Tasks.
pub(crate) fn runner_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {"listChanged": true}})
}

/// The `_meta` of a 2026-07-28 request declaring `caps`.
pub(crate) fn meta(caps: &Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": VERSION,
           "io.modelcontextprotocol/clientCapabilities": caps})
}

/// A correct 2026-07-28 request: the body with `params._meta` (merged into any `_meta` the
/// params carry), `Content-Type`, `Accept`, `MCP-Protocol-Version`, `Mcp-Method`, and
/// `Mcp-Name` for `tools/call` and `tasks/*`.
pub(crate) fn modern(id: Value, method: &str, params: Value, caps: &Value) -> Req {
    let mut params = match params {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let mut full_meta = meta(caps);
    if let Some(Value::Object(extra)) = params.remove("_meta") {
        full_meta.as_object_mut().unwrap().extend(extra);
    }
    params.insert("_meta".into(), full_meta);
    let name = match method {
        "tools/call" => params.get("name"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => params.get("taskId"),
        _ => None,
    }
    .and_then(Value::as_str)
    .map(str::to_owned);
    let mut body = json!({"jsonrpc": "2.0", "method": method, "params": params});
    if !id.is_null() {
        body["id"] = id;
    }
    let mut req = Req::new(Method::POST)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", method)
        .json(&body);
    if let Some(name) = name {
        req = req.header("mcp-name", name);
    }
    req
}

/// A 2025 session message: `body` as it is, `Content-Type`, `Accept`, and with a session its
/// id and `MCP-Protocol-Version: version`.
pub(crate) fn legacy(session: Option<&str>, version: &str, body: &Value) -> Req {
    let mut req = Req::new(Method::POST)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .json(body);
    if let Some(session) = session {
        req = req
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", version);
    }
    req
}

/// A GET or DELETE of session `session`.
pub(crate) fn session_request(method: Method, session: &str, version: &str) -> Req {
    Req::new(method)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", version)
}

/// A 2025 session of one side: its id, revision, and the bearer token its messages carry.
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) version: &'static str,
    pub(crate) bearer: Option<&'static str>,
}

impl Session {
    /// Message `body` in this session.
    pub(crate) fn post(&self, body: &Value) -> Req {
        self.authorised(legacy(Some(&self.id), self.version, body))
    }

    /// Request `method` with `params` and `id` in this session.
    pub(crate) fn request(&self, id: impl Into<Value>, method: &str, params: Value) -> Req {
        let body = json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params});
        self.post(&body)
    }

    /// A GET or DELETE of this session.
    pub(crate) fn http(&self, method: Method) -> Req {
        self.authorised(session_request(method, &self.id, self.version))
    }

    fn authorised(&self, req: Req) -> Req {
        match self.bearer {
            Some(token) => req.header("authorization", format!("Bearer {token}")),
            None => req,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// One side's run: sends requests and records the exchanges.
// ---------------------------------------------------------------------------------------------

/// A whole response.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The body as JSON; for an SSE body, its last `data` message (a streamed call's answer).
    pub(crate) fn json(&self) -> Value {
        if self.content_type().starts_with("text/event-stream") {
            return parse_events(&self.body)
                .0
                .into_iter()
                .rev()
                .find_map(|e| e.get("data").cloned())
                .unwrap_or(Value::Null);
        }
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The `result` member, or a message naming what came instead.
    pub(crate) fn result(&self) -> Result<Value, String> {
        let body = self.json();
        match body.get("result") {
            Some(result) => Ok(result.clone()),
            None => Err(format!("no result (HTTP {}): {body}", self.status)),
        }
    }
}

/// The body chunks of a response.
pub(crate) type Chunks = Pin<Box<dyn Stream<Item = reqwest::Result<Vec<u8>>> + Send>>;

/// An open SSE response, read event by event.
pub(crate) struct Open {
    /// Where its record is in the log.
    pub(crate) slot: usize,
    pub(crate) stream: Option<Chunks>,
    pub(crate) buffer: Vec<u8>,
}

/// One side of the comparison: a fixture's URL and the log of the current scenario.
pub(crate) struct Run {
    pub(crate) http: reqwest::Client,
    /// `http://host:port`.
    pub(crate) origin: String,
    /// The MCP endpoint.
    pub(crate) url: String,
    pub(crate) log: Vec<Value>,
    pub(crate) next_id: i64,
}

pub(crate) type Step<T = ()> = Result<T, String>;

impl Run {
    pub(crate) fn new(url: &str) -> Run {
        let origin = url.trim_end_matches("/mcp").to_owned();
        Run {
            http: reqwest::Client::new(),
            origin,
            url: url.to_owned(),
            log: Vec::new(),
            next_id: 1,
        }
    }

    /// A fresh integer request id.
    pub(crate) fn id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id - 1)
    }

    pub(crate) async fn response(&self, req: &Req) -> Step<reqwest::Response> {
        let url = match req.path {
            Some(path) => format!("{}{path}", self.origin),
            None => self.url.clone(),
        };
        let mut builder = self.http.request(req.method.clone(), url);
        for (name, value) in &req.headers {
            let value = HeaderValue::from_bytes(value).map_err(|e| e.to_string())?;
            builder = builder.header(name.as_str(), value);
        }
        let send = builder.body(req.body.clone()).send();
        match tokio::time::timeout(WAIT, send).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => Err(format!("transport error: {e}")),
            Err(_) => Err("no answer within the wait limit".into()),
        }
    }

    /// Sends `req` and reads the whole response, without recording it.
    pub(crate) async fn quiet(&self, req: &Req) -> Step<Reply> {
        let response = self.response(req).await?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = match tokio::time::timeout(WAIT, response.bytes()).await {
            Ok(Ok(body)) => body.to_vec(),
            Ok(Err(e)) => return Err(format!("body error: {e}")),
            Err(_) => return Err("the body did not end within the wait limit".into()),
        };
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    /// Sends `req`, reads the whole response and records it under `label`.
    pub(crate) async fn send(&mut self, label: &str, req: Req) -> Step<Reply> {
        let reply = self.quiet(&req).await?;
        let body = record_body(reply.content_type(), &reply.body);
        self.log
            .push(record(label, reply.status, &reply.headers, body));
        Ok(reply)
    }

    /// Sends `req` and records it under `label`, with `body` in place of the body as read.
    pub(crate) async fn send_as(
        &mut self,
        label: &str,
        req: Req,
        body: fn(&[u8]) -> Value,
    ) -> Step<Reply> {
        let reply = self.quiet(&req).await?;
        let shown = body(&reply.body);
        self.log
            .push(record(label, reply.status, &reply.headers, shown));
        Ok(reply)
    }

    /// Sends `req` and keeps its SSE body open: the record gets each event read with
    /// [`Run::next_event`]. A response that is not SSE is read and recorded whole.
    pub(crate) async fn open(&mut self, label: &str, req: Req) -> Step<Open> {
        let response = self.response(&req).await?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let is_sse = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            let body = tokio::time::timeout(WAIT, response.bytes())
                .await
                .map_err(|_| "the body did not end within the wait limit".to_owned())?
                .map_err(|e| format!("body error: {e}"))?;
            let content_type = headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let shown = record_body(content_type, &body);
            self.log.push(record(label, status, &headers, shown));
            return Ok(Open {
                slot: self.log.len() - 1,
                stream: None,
                buffer: Vec::new(),
            });
        }
        self.log.push(record(
            label,
            status,
            &headers,
            json!({"events": [], "end": "left open by the client"}),
        ));
        Ok(Open {
            slot: self.log.len() - 1,
            stream: Some(Box::pin(
                response
                    .bytes_stream()
                    .map(|chunk| chunk.map(|b| b.to_vec())),
            )),
            buffer: Vec::new(),
        })
    }

    /// The next event of `open` (comments skipped), recorded; an error when the stream ends or
    /// stays silent for [`WAIT`].
    pub(crate) async fn next_event(&mut self, open: &mut Open) -> Step<Value> {
        let Some(stream) = open.stream.as_mut() else {
            return Err("the answer is not an open SSE stream".into());
        };
        loop {
            let (events, used) = parse_events(&open.buffer);
            if let Some(event) = events.into_iter().next() {
                // Drop the first complete event (and any comment blocks before it).
                let consumed = first_event_end(&open.buffer).unwrap_or(used);
                open.buffer.drain(..consumed);
                self.log[open.slot]["body"]["events"]
                    .as_array_mut()
                    .expect("an event list")
                    .push(event.clone());
                return Ok(event.get("data").cloned().unwrap_or(Value::Null));
            }
            open.buffer.drain(..used);
            match tokio::time::timeout(WAIT, stream.next()).await {
                Ok(Some(Ok(chunk))) => open.buffer.extend_from_slice(&chunk),
                Ok(Some(Err(e))) => {
                    self.log[open.slot]["body"]["end"] = json!("read error");
                    open.stream = None;
                    return Err(format!("stream error: {e}"));
                }
                Ok(None) => {
                    self.log[open.slot]["body"]["end"] = json!("ended by the server");
                    open.stream = None;
                    return Err("the stream ended".into());
                }
                Err(_) => return Err("no SSE event within the wait limit".into()),
            }
        }
    }

    /// Reads events of `open` until one satisfies `done`; returns it.
    pub(crate) async fn read_until(
        &mut self,
        open: &mut Open,
        done: impl Fn(&Value) -> bool,
    ) -> Step<Value> {
        loop {
            let event = self.next_event(open).await?;
            if done(&event) {
                return Ok(event);
            }
        }
    }

    /// Reads `open` to its end (the server closes it), recording every event.
    pub(crate) async fn read_to_end(&mut self, open: &mut Open) -> Step {
        loop {
            if open.stream.is_none() {
                return Ok(());
            }
            if let Err(e) = self.next_event(open).await {
                return if open.stream.is_none() {
                    Ok(())
                } else {
                    Err(e)
                };
            }
        }
    }

    // -- 2026-07-28 shorthands ----------------------------------------------------------------

    /// Records a 2026-07-28 request `method` with `params`, declaring `caps`.
    pub(crate) async fn rpc(
        &mut self,
        label: &str,
        method: &str,
        params: Value,
        caps: &Value,
    ) -> Step<Reply> {
        let id = self.id();
        self.send(label, modern(id, method, params, caps)).await
    }

    /// Records `tools/call` of `tool` with `arguments`, declaring `caps`.
    pub(crate) async fn call(
        &mut self,
        label: &str,
        tool: &str,
        arguments: Value,
        caps: &Value,
    ) -> Step<Reply> {
        self.rpc(
            label,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
            caps,
        )
        .await
    }

    /// Records a task-creating `tools/call`; returns the task id.
    pub(crate) async fn create(
        &mut self,
        label: &str,
        tool: &str,
        arguments: Value,
        caps: &Value,
    ) -> Step<String> {
        let result = self.call(label, tool, arguments, caps).await?.result()?;
        task_id(&result)
    }

    /// Records `tasks/get` of `task`.
    pub(crate) async fn get(&mut self, label: &str, task: &str) -> Step<Value> {
        self.rpc(label, "tasks/get", json!({"taskId": task}), &tasks_caps())
            .await?
            .result()
    }

    /// Sends `req` again and again, without recording, until its result satisfies `done` (or
    /// [`WAIT`] passes); returns that result. Give `req` a fixed id (`"poll"`): how often a
    /// poll runs varies, so it takes nothing from the id counter.
    pub(crate) async fn wait_until(&self, req: &Req, done: impl Fn(&Value) -> bool) -> Step<Value> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let result = self.quiet(req).await?.result()?;
            if done(&result) {
                return Ok(result);
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!("still {} after the wait limit", result["status"]));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Polls `tasks/get` of `task` without recording until `done` holds.
    pub(crate) async fn wait_task(&self, task: &str, done: impl Fn(&Value) -> bool) -> Step<Value> {
        let poll = modern(
            json!("poll"),
            "tasks/get",
            json!({"taskId": task}),
            &tasks_caps(),
        );
        self.wait_until(&poll, done).await
    }

    /// Polls `task` until terminal, then records one `tasks/get`.
    pub(crate) async fn get_when_terminal(&mut self, label: &str, task: &str) -> Step<Value> {
        self.wait_task(task, is_terminal).await?;
        self.get(label, task).await
    }

    /// Polls `task` until it waits for input, then records one `tasks/get`.
    pub(crate) async fn get_when_parked(&mut self, label: &str, task: &str) -> Step<Value> {
        self.wait_task(task, |t| t["status"] == "input_required")
            .await?;
        self.get(label, task).await
    }
}

pub(crate) fn is_terminal(task: &Value) -> bool {
    matches!(
        task["status"].as_str(),
        Some("completed" | "failed" | "cancelled")
    )
}

pub(crate) fn task_id(result: &Value) -> Step<String> {
    result["taskId"]
        .as_str()
        .or_else(|| result["task"]["taskId"].as_str())
        .map(str::to_owned)
        .ok_or_else(|| format!("no taskId in {result}"))
}

/// The record of one exchange.
pub(crate) fn record(label: &str, status: u16, headers: &HeaderMap, body: Value) -> Value {
    let mut shown = BTreeMap::new();
    for name in headers.keys() {
        let name = name.as_str();
        if name == "date" {
            continue;
        }
        let values: Vec<String> = headers
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        let value = if name == "content-length" {
            "<present>".to_owned()
        } else {
            values.join(", ")
        };
        shown.insert(name.to_owned(), value);
    }
    let mut entry = json!({"exchange": label, "status": status, "headers": shown, "body": body});
    // A `tasks/list` page is in task-id order, and task ids are random: record that it is in
    // order here, and compare the tasks in creation order (see `normalise`).
    if let Some(tasks) = entry["body"]["result"]["tasks"].as_array() {
        let ids: Vec<&str> = tasks.iter().filter_map(|t| t["taskId"].as_str()).collect();
        entry["listed in task-id order"] = json!(ids.windows(2).all(|w| w[0] < w[1]));
    }
    entry
}

/// A body as recorded: SSE as its events, JSON parsed, anything else as text.
pub(crate) fn record_body(content_type: &str, body: &[u8]) -> Value {
    if body.is_empty() {
        return Value::Null;
    }
    if content_type.starts_with("text/event-stream") {
        let (events, used) = parse_events(body);
        let mut shown = json!({"events": events, "end": "ended by the server"});
        if used < body.len() {
            shown["trailing"] = json!(String::from_utf8_lossy(&body[used..]));
        }
        return shown;
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => value,
        Err(_) => json!({"text": String::from_utf8_lossy(body)}),
    }
}

/// An OpenMetrics body as its metric families and series (names and labels, values left out:
/// counts and timings vary from run to run).
pub(crate) fn metric_series(body: &[u8]) -> Value {
    let text = String::from_utf8_lossy(body);
    let lines: BTreeSet<String> = text
        .lines()
        .map(|line| {
            if line.starts_with('#') {
                line.to_owned()
            } else {
                match line.rfind('}') {
                    Some(end) => line[..=end].to_owned(),
                    None => line.split(' ').next().unwrap_or("").to_owned(),
                }
            }
        })
        .collect();
    json!(lines)
}

/// The complete events at the start of `buffer` (comment-only blocks skipped) and how many
/// bytes they span. An event: `{"data": <JSON or text>, "event": …, "id": …, "retry": …}`
/// with the fields it has.
pub(crate) fn parse_events(buffer: &[u8]) -> (Vec<Value>, usize) {
    let mut events = Vec::new();
    let mut used = 0;
    while let Some(end) = block_end(&buffer[used..]) {
        let block = String::from_utf8_lossy(&buffer[used..used + end.0]).into_owned();
        used += end.1;
        let mut event = Map::new();
        let mut data: Vec<&str> = Vec::new();
        for line in block.lines() {
            if line.starts_with(':') || line.is_empty() {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            if field == "data" {
                data.push(value);
            } else {
                event.insert(field.to_owned(), json!(value));
            }
        }
        if !data.is_empty() {
            let text = data.join("\n");
            let parsed = serde_json::from_str(&text).unwrap_or(Value::String(text));
            event.insert("data".into(), parsed);
        }
        if !event.is_empty() {
            events.push(Value::Object(event));
        }
    }
    (events, used)
}

/// The end of the first block of `buffer`: (its length without the blank line, with it).
pub(crate) fn block_end(buffer: &[u8]) -> Option<(usize, usize)> {
    let lf = buffer
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|i| (i, i + 2));
    let crlf = buffer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, i + 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// The end of the first block of `buffer` that holds an event (comment blocks before it are
/// consumed with it).
pub(crate) fn first_event_end(buffer: &[u8]) -> Option<usize> {
    let mut used = 0;
    while let Some((_, end)) = block_end(&buffer[used..]) {
        let (events, _) = parse_events(&buffer[used..used + end]);
        used += end;
        if !events.is_empty() {
            return Some(used);
        }
    }
    None
}
