//! The server's metrics: [`Metrics`] is the runtime's
//! [`ServerMetrics`](tasks_runtime::server_metrics::ServerMetrics) (requests by method and JSON-RPC outcome,
//! their latency, listen streams, store-unavailable refusals and the task lifecycle, in one
//! `prometheus-client` registry with the prefix `mcp`); this module adds how a request's
//! `method` label is read from its head.

use tasks_core::labels;
use tasks_core::Method;
pub use tasks_runtime::server_metrics::ServerMetrics as Metrics;
pub use tasks_runtime::server_metrics::CONTENT_TYPE;

/// The index of a request's `method` label: the served method named by its `Mcp-Method` header
/// (which admission checks against the body), else `other` ([`labels::method_index`]).
pub(crate) fn method_index(headers: &http::HeaderMap) -> usize {
    let method = headers
        .get(crate::head::mcp_method())
        .and_then(|value| value.to_str().ok())
        .and_then(Method::parse);
    labels::method_index(method)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tasks_core::labels::method_label;

    #[test]
    fn the_method_label_comes_from_the_mcp_method_header() {
        let headers = |method: &str| {
            let mut headers = http::HeaderMap::new();
            headers.insert("mcp-method", method.parse().unwrap());
            headers
        };
        assert_eq!(
            method_label(method_index(&headers("tasks/get"))),
            "tasks/get"
        );
        assert_eq!(method_label(method_index(&headers("x/evil"))), "other");
        assert_eq!(method_label(method_index(&http::HeaderMap::new())), "other");
        for method in Method::ALL {
            let label = method_label(method_index(&headers(method.as_str())));
            assert_eq!(label, method.as_str());
        }
    }
}
