//! The bounded label values a server counts requests under (the client chooses the method, so
//! the labels must not), each an index into a table derived from the core's own: the `method`
//! label is a served method ([`Method::ALL`]), a 2025 session message's label
//! ([`SESSION_LABELS`]) or `other`; the `code` label is `ok`, a JSON-RPC code of the error
//! table ([`McpError::CODES`]) or `other`; the `outcome` of a store-unavailable refusal is
//! `unchanged` or `unknown`.

use std::sync::LazyLock;

use crate::admission::Message;
use crate::error::McpError;
use crate::method::Method;
use crate::sessions::{session_label_index, SESSION_LABELS};

/// How many `method` label values there are: the served methods, the labels of 2025 session
/// messages, then `other`.
pub const METHOD_LABELS: usize = Method::ALL.len() + SESSION_LABELS.len() + 1;

/// How many `code` label values there are: `ok`, every code of the error table, then `other`.
pub const CODE_LABELS: usize = McpError::CODES.len() + 2;

/// The `outcome` label values of a store-unavailable refusal: [`McpError::StoreUnavailable`]
/// (`unchanged`), then [`McpError::StoreOutcomeUnknown`] (`unknown`).
pub const REFUSAL_OUTCOMES: [&str; 2] = ["unchanged", "unknown"];

/// The `code` label values, made once per process: `ok`, the codes in the table's order, `other`.
static CODES: LazyLock<Vec<String>> = LazyLock::new(|| {
    std::iter::once("ok".to_owned())
        .chain(McpError::CODES.iter().map(i64::to_string))
        .chain(std::iter::once("other".to_owned()))
        .collect()
});

/// The index of the `method` label of a served method (`None`: not one, `other`).
pub fn method_index(method: Option<Method>) -> usize {
    method
        .and_then(|method| Method::ALL.iter().position(|served| *served == method))
        .unwrap_or(METHOD_LABELS - 1)
}

/// The index of the `method` label of a message of a 2025 session, which carries no
/// `Mcp-Method` header: `session/<method>` and the like ([`SESSION_LABELS`]).
pub fn session_method_index(message: &Message) -> usize {
    Method::ALL.len() + session_label_index(message)
}

/// The `method` label at `index` ([`method_index`], [`session_method_index`]); `other` past
/// the end.
pub fn method_label(index: usize) -> &'static str {
    match Method::ALL.get(index) {
        Some(method) => method.as_str(),
        None => SESSION_LABELS
            .get(index - Method::ALL.len())
            .copied()
            .unwrap_or("other"),
    }
}

/// The index of the `code` label of a JSON-RPC outcome (`None` for a result).
pub fn code_index(code: Option<i64>) -> usize {
    match code {
        None => 0,
        Some(code) => McpError::CODES
            .iter()
            .position(|known| *known == code)
            .map_or(CODE_LABELS - 1, |at| at + 1),
    }
}

/// The `code` label at `index` ([`code_index`]); `other` past the end.
pub fn code_label(index: usize) -> &'static str {
    CODES.get(index).map_or("other", String::as_str)
}

/// The index in [`REFUSAL_OUTCOMES`] of `error`, when it is a store-unavailable refusal.
pub fn refusal_index(error: &McpError) -> Option<usize> {
    match error {
        McpError::StoreUnavailable => Some(0),
        McpError::StoreOutcomeUnknown => Some(1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_come_from_bounded_sets() {
        assert_eq!(
            method_label(method_index(Method::parse("tasks/get"))),
            "tasks/get"
        );
        assert_eq!(method_label(method_index(Method::parse("x/evil"))), "other");
        assert_eq!(method_label(method_index(None)), "other");
        for method in Method::ALL {
            assert_eq!(method_label(method_index(Some(method))), method.as_str());
        }
        for (index, label) in SESSION_LABELS.iter().enumerate() {
            assert_eq!(method_label(Method::ALL.len() + index), *label);
        }
        assert_eq!(method_label(METHOD_LABELS - 1), "other");
        assert_eq!(code_label(code_index(None)), "ok");
        assert_eq!(code_label(code_index(Some(-32602))), "-32602");
        assert_eq!(code_label(code_index(Some(-1))), "other");
        // Every code of the core's error table has its own label, in the table's order.
        assert_eq!(CODES.len(), CODE_LABELS);
        for (at, code) in McpError::CODES.iter().enumerate() {
            assert_eq!(code_label(code_index(Some(*code))), code.to_string());
            assert_eq!(code_index(Some(*code)), at + 1);
        }
        assert_eq!(code_label(code_index(Some(-32001))), "-32001");
        assert_eq!(refusal_index(&McpError::StoreUnavailable), Some(0));
        assert_eq!(refusal_index(&McpError::StoreOutcomeUnknown), Some(1));
        assert_eq!(refusal_index(&McpError::Parse), None);
    }
}
