//! The metrics of a server process, in one `prometheus-client` registry (prefix `mcp`):
//! requests by method and JSON-RPC outcome, their latency, open listen streams and their
//! notifications, store-unavailable refusals, and the runtime's task-lifecycle metrics
//! ([`RuntimeMetrics`](crate::RuntimeMetrics)), encoded as OpenMetrics text by
//! [`ServerMetrics::encode`]. Any host counts its requests here: the HTTP adapter, an rmcp
//! server.
//!
//! Label values are bounded, the core's tables ([`tasks_core::labels`]): the method is one of
//! the served methods, a `session/…` label of a 2025 session message, or `other` (the client
//! chooses it), the code is `ok`, a JSON-RPC error code of the core's error table
//! ([`McpError::CODES`]), or `other`.
//!
//! A store-unavailable refusal (`mcp_store_unavailable_refusals_total{outcome}`) is counted
//! where an error becomes a client's answer (with the request's code, once every answer is
//! made, or when a 2025 `tasks/result` stream ends with it), never where the runtime reads: a
//! read made for a stream's own bookkeeping that fails answers no one.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};
use tasks_core::labels::{
    code_index, code_label, method_label, refusal_index, CODE_LABELS, METHOD_LABELS,
    REFUSAL_OUTCOMES,
};
use tasks_core::McpError;

use crate::TaskRuntime;

/// The content type of [`ServerMetrics::encode`]'s text.
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

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NotificationLabel {
    method: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

/// The server's metrics: request counters and latencies, open listen streams, and the
/// runtime's task-lifecycle metrics, in one registry.
#[derive(Debug)]
pub struct ServerMetrics {
    registry: Registry,
    /// One handle per (method, code), made up front: `requests[method * CODE_LABELS + code]`.
    requests: Vec<Counter>,
    /// One handle per method.
    latency: Vec<Histogram>,
    listen_streams: Gauge,
    notifications: Family<NotificationLabel, Counter>,
    skipped: Counter,
    /// One handle per [`REFUSAL_OUTCOMES`] value.
    store_refusals: [Counter; 2],
}

impl ServerMetrics {
    /// The metrics of a server over `runtime`, registered under the prefix `mcp`:
    /// `mcp_requests_total{method,code}`, `mcp_request_duration_seconds{method}` (until the
    /// response head: a stream's first byte), `mcp_listen_streams` (open
    /// `subscriptions/listen` streams), `mcp_listen_notifications_total{method}`,
    /// `mcp_listen_events_skipped_total`, `mcp_store_unavailable_refusals_total{outcome}`
    /// (requests answered -32603 `Task store unavailable: …`: `unchanged` or `unknown`) and
    /// the runtime's ([`RuntimeMetrics::register`](crate::RuntimeMetrics::register)).
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
        let mut request_handles = Vec::with_capacity(METHOD_LABELS * CODE_LABELS);
        for method in (0..METHOD_LABELS).map(method_label) {
            for code in (0..CODE_LABELS).map(code_label) {
                request_handles.push(
                    requests
                        .get_or_create(&RequestLabels { method, code })
                        .clone(),
                );
            }
        }
        let latency_handles = (0..METHOD_LABELS)
            .map(|index| {
                let method = method_label(index);
                latency.get_or_create(&MethodLabel { method }).clone()
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
        ServerMetrics {
            registry,
            requests: request_handles,
            latency: latency_handles,
            listen_streams,
            notifications,
            skipped,
            store_refusals,
        }
    }

    /// Counts one answered request of the method at `method` (an index of [`tasks_core::labels`]: [`labels::method_index`](tasks_core::labels::method_index) or [`labels::session_method_index`](tasks_core::labels::session_method_index)): `error` is
    /// the error it was answered with (`None` for a result, an accepted notification, or a
    /// stream, counted when it starts), which gives the `code` label and, for a
    /// store-unavailable refusal, counts it ([`ServerMetrics::store_refusal`]).
    pub fn answered(&self, method: usize, error: Option<&McpError>, took: Duration) {
        let method = method.min(METHOD_LABELS - 1);
        let code = error.map(McpError::code);
        self.requests[method * CODE_LABELS + code_index(code)].inc();
        self.latency[method].observe(took.as_secs_f64());
        if let Some(error) = error {
            self.store_refusal(error);
        }
    }

    /// A client was answered with `error`: counted in `mcp_store_unavailable_refusals_total`
    /// when it is a store-unavailable refusal ([`McpError::StoreUnavailable`],
    /// [`McpError::StoreOutcomeUnknown`]); other errors are not. [`ServerMetrics::answered`] calls
    /// it for every request's answer; call it directly only for an answer that ends a stream
    /// (a 2025 `tasks/result`), which `answered` counted when the stream started.
    pub fn store_refusal(&self, error: &McpError) {
        if let Some(index) = refusal_index(error) {
            self.store_refusals[index].inc();
        }
    }

    /// A listen stream sent a notification of `method`.
    pub fn notification_sent(&self, method: &'static str) {
        self.notifications
            .get_or_create(&NotificationLabel { method })
            .inc();
    }

    /// A listen stream fell behind and skipped `count` status events.
    pub fn events_skipped(&self, count: u64) {
        self.skipped.inc_by(count);
    }

    /// A guard counting an open listen stream until it is dropped.
    pub fn listen_stream(self: &Arc<Self>) -> ListenStreamGuard {
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
pub struct ListenStreamGuard {
    gauge: Gauge,
}

impl Drop for ListenStreamGuard {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}
