//! Completions of prompt arguments and resource template variables (MCP 2026-07-28
//! utilities, "Completion":
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/completion>).

use std::fmt;
use std::sync::Arc;

use serde_json::{json, Value};
use tasks_core::catalog::{CompletionRequest, MAX_COMPLETION_VALUES};

/// The suggestions for one partial value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    /// The suggestions, best first; at most [`MAX_COMPLETION_VALUES`] are sent.
    pub values: Vec<String>,
    /// How many suggestions exist in all, when known.
    pub total: Option<u64>,
    /// Whether more exist than were sent.
    pub has_more: bool,
}

impl Completion {
    /// The `completion/complete` result body: `{"completion": {"values", "total"?,
    /// "hasMore"}}`, cut to [`MAX_COMPLETION_VALUES`] values (`hasMore` then true and `total`
    /// at least the number found).
    pub fn to_json(&self) -> Value {
        let cut = self.values.len() > MAX_COMPLETION_VALUES;
        let values = &self.values[..self.values.len().min(MAX_COMPLETION_VALUES)];
        let total = match (self.total, cut) {
            (Some(total), _) => Some(total.max(self.values.len() as u64)),
            (None, true) => Some(self.values.len() as u64),
            (None, false) => None,
        };
        let mut completion = json!({"values": values, "hasMore": self.has_more || cut});
        if let Some(total) = total {
            completion["total"] = json!(total);
        }
        json!({ "completion": completion })
    }
}

/// What completes one argument: a function of the request (the partial value in
/// [`CompletionRequest::value`], the other arguments in [`CompletionRequest::context`]).
#[derive(Clone)]
pub struct Completer(Arc<dyn Fn(&CompletionRequest) -> Completion + Send + Sync>);

impl fmt::Debug for Completer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Completer(..)")
    }
}

impl Completer {
    /// A completer calling `complete`.
    pub fn new(
        complete: impl Fn(&CompletionRequest) -> Completion + Send + Sync + 'static,
    ) -> Self {
        Completer(Arc::new(complete))
    }

    /// A completer offering the values of `choices` that start with the partial value
    /// (compared case-insensitively), in their order.
    ///
    /// ```
    /// use tasks_core::catalog::{CompletionRef, CompletionRequest};
    /// use tasks_runtime::catalog::Completer;
    ///
    /// let cities = Completer::from_values(["paris", "park", "rome"]);
    /// let request = CompletionRequest {
    ///     reference: CompletionRef::Prompt("trip".into()),
    ///     argument: "city".into(),
    ///     value: "Par".into(),
    ///     context: Default::default(),
    /// };
    /// assert_eq!(cities.complete(&request).values, ["paris", "park"]);
    /// ```
    pub fn from_values<I, S>(choices: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let choices: Vec<String> = choices.into_iter().map(Into::into).collect();
        Completer::new(move |request| {
            let prefix = request.value.to_lowercase();
            let values: Vec<String> = choices
                .iter()
                .filter(|choice| choice.to_lowercase().starts_with(&prefix))
                .cloned()
                .collect();
            Completion {
                total: Some(values.len() as u64),
                values,
                has_more: false,
            }
        })
    }

    /// The suggestions for `request`.
    pub fn complete(&self, request: &CompletionRequest) -> Completion {
        (self.0)(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_cut_to_the_schema_limit() {
        let many = Completion {
            values: (0..150).map(|i| i.to_string()).collect(),
            total: None,
            has_more: false,
        };
        let wire = many.to_json();
        assert_eq!(wire["completion"]["values"].as_array().unwrap().len(), 100);
        assert_eq!(wire["completion"]["hasMore"], json!(true));
        assert_eq!(wire["completion"]["total"], json!(150));
        assert_eq!(
            Completion::default().to_json(),
            json!({"completion": {"values": [], "hasMore": false}})
        );
    }
}
