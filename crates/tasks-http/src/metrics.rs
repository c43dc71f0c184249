//! Request metrics and the server's metrics registry: the runtime's task-lifecycle metrics
//! ([`tasks_runtime::RuntimeMetrics`]) and these, in one `prometheus-client` registry the
//! server owns (prefix `mcp`), encoded as OpenMetrics text by [`Metrics::encode`].
//!
//! Label values are bounded: the method is one of the served methods, a `session/…` label of
//! a 2025 session message, or `other` (the client chooses it), the code is `ok`, a JSON-RPC
//! error code of the core's error table ([`McpError::CODES`]), or `other`.
//!
//! A store-unavailable refusal (`mcp_store_unavailable_refusals_total{outcome}`) is counted
//! where an error becomes a client's answer (with the request's code, once every answer is
//! made, or when a 2025 `tasks/result` stream ends with it), never where the runtime reads: a
//! read made for a stream's own bookkeeping that fails answers no one.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};
use tasks_core::plan::Message;
use tasks_core::sessions::{session_label_index, SESSION_LABELS};
use tasks_core::McpError;
use tasks_core::Method;
use tasks_runtime::TaskRuntime;

/// The content type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabel {
    method: &'static str,
}

/// The `code` label values: `ok` (a result), each JSON-RPC code of the core's error table
/// ([`McpError::CODES`], the codes this server answers with), then `other` (any other code, e.g.
/// one a tool chose). Made once per process; a label indexes it ([`code_index`]).
static CODES: LazyLock<Vec<String>> = LazyLock::new(|| {
    std::iter::once("ok".to_owned())
        .chain(McpError::CODES.iter().map(i64::to_string))
        .chain(std::iter::once("other".to_owned()))
        .collect()
});

/// How many `code` label values there are ([`CODES`]).
const CODE_COUNT: usize = McpError::CODES.len() + 2;

/// How many `method` label values there are: the served methods ([`Method::ALL`]), the labels
/// of 2025 session messages ([`SESSION_LABELS`]), then `other`.
const METHODS: usize = Method::ALL.len() + SESSION_LABELS.len() + 1;

/// The index of a request's `method` label: the served method named by its `Mcp-Method` header
/// (which admission checks against the body), at its place in [`Method::ALL`], else `other`.
pub(crate) fn method_index(headers: &http::HeaderMap) -> usize {
    headers
        .get(crate::head::mcp_method())
        .and_then(|value| value.to_str().ok())
        .and_then(Method::parse)
        .and_then(|method| Method::ALL.iter().position(|served| *served == method))
        .unwrap_or(METHODS - 1)
}

/// The index of the `method` label of a message of a 2025 session, which carries no
/// `Mcp-Method` header: `session/<method>` and the like ([`SESSION_LABELS`]).
pub(crate) fn session_method_index(message: &Message) -> usize {
    Method::ALL.len() + session_label_index(message)
}

/// The label of the method at `index` ([`method_index`], [`session_method_index`]).
pub(crate) fn method_name(index: usize) -> &'static str {
    match Method::ALL.get(index) {
        Some(method) => method.as_str(),
        None => SESSION_LABELS
            .get(index - Method::ALL.len())
            .copied()
            .unwrap_or("other"),
    }
}

/// The index in [`CODES`] of a JSON-RPC outcome (`None` for a result).
fn code_index(code: Option<i64>) -> usize {
    match code {
        None => 0,
        Some(code) => McpError::CODES
            .iter()
            .position(|known| *known == code)
            .map_or(CODE_COUNT - 1, |at| at + 1),
    }
}

/// The metric label of a JSON-RPC error code (`ok` for a result).
pub(crate) fn code_label(code: Option<i64>) -> &'static str {
    &CODES[code_index(code)]
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NotificationLabel {
    method: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

/// The `outcome` label values of a store-unavailable refusal: [`McpError::StoreUnavailable`]
/// (`unchanged`), then [`McpError::StoreOutcomeUnknown`] (`unknown`).
const REFUSAL_OUTCOMES: [&str; 2] = ["unchanged", "unknown"];

/// The index in [`REFUSAL_OUTCOMES`] of `error`, when it is a store-unavailable refusal.
fn refusal_index(error: &McpError) -> Option<usize> {
    match error {
        McpError::StoreUnavailable => Some(0),
        McpError::StoreOutcomeUnknown => Some(1),
        _ => None,
    }
}

/// The server's metrics: request counters and latencies, open listen streams, and the
/// runtime's task-lifecycle metrics, in one registry.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// One handle per (method, code), made up front: `requests[method * CODE_COUNT + code]`.
    requests: Vec<Counter>,
    /// One handle per method.
    latency: Vec<Histogram>,
    listen_streams: Gauge,
    notifications: Family<NotificationLabel, Counter>,
    skipped: Counter,
    /// One handle per [`REFUSAL_OUTCOMES`] value.
    store_refusals: [Counter; 2],
}

impl Metrics {
    /// The metrics of a server over `runtime`, registered under the prefix `mcp`:
    /// `mcp_requests_total{method,code}`, `mcp_request_duration_seconds{method}` (until the
    /// response head: a stream's first byte), `mcp_listen_streams` (open
    /// `subscriptions/listen` streams), `mcp_listen_notifications_total{method}`,
    /// `mcp_listen_events_skipped_total`, `mcp_store_unavailable_refusals_total{outcome}`
    /// (requests answered -32603 `Task store unavailable: …`: `unchanged` or `unknown`) and
    /// the runtime's ([`RuntimeMetrics::register`](tasks_runtime::RuntimeMetrics::register)).
    pub fn new(runtime: &TaskRuntime) -> Self {
        let mut registry = Registry::with_prefix("mcp");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<MethodLabel, Histogram>::new_with_constructor(|| {
            // 1 ms to about 16 s.
            Histogram::new(exponential_buckets(0.001, 2.0, 15))
        });
        let listen_streams = Gauge::default();
        let notifications = Family::<NotificationLabel, Counter>::default();
        for method in ["notifications/tasks", "notifications/tools/list_changed"] {
            let _ = notifications.get_or_create(&NotificationLabel { method });
        }
        let skipped = Counter::default();
        registry.register(
            "requests",
            "MCP requests answered, by method and JSON-RPC outcome (ok or error code)",
            requests.clone(),
        );
        registry.register_with_unit(
            "request_duration",
            "Time to answer an MCP request (to the response head for a stream), by method",
            Unit::Seconds,
            latency.clone(),
        );
        // Every handle of the request path is made now: a request indexes, never looks up.
        let mut request_handles = Vec::with_capacity(METHODS * CODE_COUNT);
        for method in (0..METHODS).map(method_name) {
            for code in CODES.iter().map(String::as_str) {
                request_handles.push(
                    requests
                        .get_or_create(&RequestLabels { method, code })
                        .clone(),
                );
            }
        }
        let latency_handles = (0..METHODS)
            .map(|index| {
                latency
                    .get_or_create(&MethodLabel {
                        method: method_name(index),
                    })
                    .clone()
            })
            .collect();
        registry.register(
            "listen_streams",
            "Open subscriptions/listen streams",
            listen_streams.clone(),
        );
        registry.register(
            "listen_notifications",
            "Notifications sent on subscriptions/listen streams, by method",
            notifications.clone(),
        );
        registry.register(
            "listen_events_skipped",
            "Task status events listen streams skipped because they fell behind (each stream \
             counts every event it missed, of any task)",
            skipped.clone(),
        );
        let refusals = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "store_unavailable_refusals",
            "Requests answered -32603 Task store unavailable (HTTP 503) because the task store \
             was briefly unavailable, by outcome (unchanged: nothing was stored or changed; \
             unknown: a write may have taken effect)",
            refusals.clone(),
        );
        let store_refusals = REFUSAL_OUTCOMES
            .map(|outcome| refusals.get_or_create(&OutcomeLabel { outcome }).clone());
        runtime.metrics().register(&mut registry);
        Metrics {
            registry,
            requests: request_handles,
            latency: latency_handles,
            listen_streams,
            notifications,
            skipped,
            store_refusals,
        }
    }

    /// Counts one answered request of the method at `method` ([`method_index`]): `error` is
    /// the error it was answered with (`None` for a result, an accepted notification, or a
    /// stream, counted when it starts), which gives the `code` label and, for a
    /// store-unavailable refusal, counts it ([`Metrics::store_refusal`]).
    pub(crate) fn answered(&self, method: usize, error: Option<&McpError>, took: Duration) {
        let method = method.min(METHODS - 1);
        let code = error.map(McpError::code);
        self.requests[method * CODE_COUNT + code_index(code)].inc();
        self.latency[method].observe(took.as_secs_f64());
        if let Some(error) = error {
            self.store_refusal(error);
        }
    }

    /// A client was answered with `error`: counted in `mcp_store_unavailable_refusals_total`
    /// when it is a store-unavailable refusal ([`McpError::StoreUnavailable`],
    /// [`McpError::StoreOutcomeUnknown`]); other errors are not. [`Metrics::answered`] calls
    /// it for every request's answer; call it directly only for an answer that ends a stream
    /// (a 2025 `tasks/result`), which `answered` counted when the stream started.
    pub(crate) fn store_refusal(&self, error: &McpError) {
        if let Some(index) = refusal_index(error) {
            self.store_refusals[index].inc();
        }
    }

    /// A listen stream sent a notification of `method`.
    pub(crate) fn notification_sent(&self, method: &'static str) {
        self.notifications
            .get_or_create(&NotificationLabel { method })
            .inc();
    }

    /// A listen stream fell behind and skipped `count` status events.
    pub(crate) fn events_skipped(&self, count: u64) {
        self.skipped.inc_by(count);
    }

    /// A guard counting an open listen stream until it is dropped.
    pub(crate) fn listen_stream(self: &Arc<Self>) -> ListenStreamGuard {
        self.listen_streams.inc();
        ListenStreamGuard {
            gauge: self.listen_streams.clone(),
        }
    }

    /// Every metric as OpenMetrics text ([`CONTENT_TYPE`]), with the worker-slot gauges of
    /// `runtime` read now.
    pub fn encode(&self, runtime: &TaskRuntime) -> String {
        runtime
            .metrics()
            .set_workers(runtime.busy_workers(), runtime.config().limits.max_workers);
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// Counts an open listen stream; dropped with the stream.
#[derive(Debug)]
pub(crate) struct ListenStreamGuard {
    gauge: Gauge,
}

impl Drop for ListenStreamGuard {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_come_from_bounded_sets() {
        let headers = |method: &str| {
            let mut headers = http::HeaderMap::new();
            headers.insert("mcp-method", method.parse().unwrap());
            headers
        };
        assert_eq!(
            method_name(method_index(&headers("tasks/get"))),
            "tasks/get"
        );
        assert_eq!(method_name(method_index(&headers("x/evil"))), "other");
        assert_eq!(method_name(method_index(&http::HeaderMap::new())), "other");
        for method in Method::ALL {
            assert_eq!(
                method_name(method_index(&headers(method.as_str()))),
                method.as_str()
            );
        }
        for (index, label) in SESSION_LABELS.iter().enumerate() {
            assert_eq!(method_name(Method::ALL.len() + index), *label);
        }
        assert_eq!(method_name(METHODS - 1), "other");
        assert_eq!(code_label(None), "ok");
        assert_eq!(code_label(Some(-32602)), "-32602");
        assert_eq!(code_label(Some(-1)), "other");
        // Every code of the core's error table has its own label, in the table's order.
        assert_eq!(CODES.len(), CODE_COUNT);
        for (at, code) in McpError::CODES.iter().enumerate() {
            assert_eq!(code_label(Some(*code)), code.to_string());
            assert_eq!(code_index(Some(*code)), at + 1);
        }
        assert_eq!(code_label(Some(-32001)), "-32001");
    }
}
