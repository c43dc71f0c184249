//! The fixture's own count of the requests an external load generator sent.
//!
//! wrk reads no bodies and oha only reads status codes, so neither can tell a JSON-RPC error
//! from a result. The fixture counts every request by method and outcome in
//! `mcp_requests_total{method,code}` (`GET /metrics`); reading it before and after a run
//! tells whether every request the generator counted was answered `ok`.

use bytes::Bytes;
use http_body_util::Full;

use crate::conn::{Connection, Endpoint};

/// A fixture's `mcp_requests_total` counters of one method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Requests answered with a result.
    ok: u64,
    /// Requests answered with any JSON-RPC error.
    other: u64,
}

impl Counts {
    /// Reads the counters of `method` from `endpoint`; `None` for a server without them (the
    /// baseline).
    pub(crate) async fn read(endpoint: &Endpoint, method: &str) -> Result<Option<Self>, String> {
        let mut request = http::Request::new(Full::new(Bytes::new()));
        *request.uri_mut() = "/metrics".parse().map_err(|e| format!("{e}"))?;
        request
            .headers_mut()
            .insert(http::header::HOST, endpoint.host.clone());
        let reply = Connection::open(endpoint)
            .await?
            .send(request)
            .await
            .map_err(|e| e.to_string())?;
        Ok(Self::parse(&String::from_utf8_lossy(&reply.body), method))
    }

    fn parse(text: &str, method: &str) -> Option<Self> {
        if !text.contains("mcp_requests_total") {
            return None;
        }
        let label = format!("method=\"{method}\"");
        let mut counts = Counts { ok: 0, other: 0 };
        for line in text
            .lines()
            .filter(|l| l.starts_with("mcp_requests_total{") && l.contains(&label))
        {
            let count: u64 = line
                .rsplit(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            if line.contains("code=\"ok\"") {
                counts.ok += count;
            } else {
                counts.other += count;
            }
        }
        Some(counts)
    }

    /// Compares the counters now (`after`) with these, taken before a run in which the
    /// generator counted `answered` successful requests and could have cut off up to
    /// `cut_off` at its end (the server may count those, the generator does not): the failed
    /// requests and a message when the server counted any error, or fewer `ok` answers than
    /// the generator.
    pub(crate) fn failures_until(
        self,
        after: Self,
        answered: u64,
        cut_off: u64,
    ) -> Option<(u64, String)> {
        let ok = after.ok.saturating_sub(self.ok);
        let other = after.other.saturating_sub(self.other);
        (other > 0 || ok.saturating_add(cut_off) < answered).then(|| {
            (
                other.max(1),
                format!("the server counted {ok} ok and {other} failed of the generator's {answered} requests"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const METRICS: &str = "# HELP mcp_requests_total Requests.\n\
        mcp_requests_total{method=\"tasks/get\",code=\"ok\"} 700\n\
        mcp_requests_total{method=\"tasks/get\",code=\"-32602\"} 2\n\
        mcp_requests_total{method=\"tools/call\",code=\"ok\"} 9\n";

    #[test]
    fn counters_are_read_by_method_and_outcome() {
        assert_eq!(
            Counts::parse(METRICS, "tasks/get"),
            Some(Counts { ok: 700, other: 2 })
        );
        assert_eq!(
            Counts::parse(METRICS, "tools/call"),
            Some(Counts { ok: 9, other: 0 })
        );
        assert_eq!(Counts::parse("hello", "tasks/get"), None);
    }

    #[test]
    fn a_run_passes_only_when_the_server_answered_what_the_generator_counted() {
        let before = Counts { ok: 10, other: 1 };
        let clean = Counts { ok: 1010, other: 1 };
        assert_eq!(before.failures_until(clean, 1000, 64), None);
        // Up to `cut_off` requests the server answered after the generator stopped counting.
        assert_eq!(before.failures_until(clean, 1064, 64), None);
        let (failed, message) = before.failures_until(clean, 1065, 64).unwrap();
        assert_eq!(failed, 1);
        assert!(message.contains("1000 ok and 0 failed of the generator's 1065"));
        let errors = Counts { ok: 1010, other: 4 };
        assert_eq!(before.failures_until(errors, 1000, 64).unwrap().0, 3);
    }
}
