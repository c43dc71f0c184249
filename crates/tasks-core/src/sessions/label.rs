//! The label a message of the session path is counted and logged under: a bounded set, since
//! the client chooses the method. A 2025 message carries no `Mcp-Method` header, so the label
//! comes from the body.
//!
//! Each label starts with `session/`, apart from the 2026-07-28 labels of the same methods
//! (this server's choice: a 2025 `tools/call` and a 2026 one are different exchanges).

use crate::admission::Message;

/// Every label, in a fixed order: the request methods the session planner serves
/// ([`super::plan_session`]; the prompts, resources and completion ones on a server offering
/// them), then `session/notification` (any notification),
/// `session/response` (the client's answer to a server request) and `session/other` (any
/// other method, -32601).
pub const SESSION_LABELS: [&str; 20] = [
    "session/initialize",
    "session/ping",
    "session/tools/list",
    "session/tools/call",
    "session/logging/setLevel",
    "session/tasks/get",
    "session/tasks/result",
    "session/tasks/cancel",
    "session/tasks/list",
    "session/prompts/list",
    "session/prompts/get",
    "session/resources/list",
    "session/resources/templates/list",
    "session/resources/read",
    "session/resources/subscribe",
    "session/resources/unsubscribe",
    "session/completion/complete",
    "session/notification",
    "session/response",
    "session/other",
];

/// How many labels name a request method (the first entries of [`SESSION_LABELS`]).
const REQUEST_LABELS: usize = 17;

/// The index in [`SESSION_LABELS`] of `message`'s label.
pub fn session_label_index(message: &Message) -> usize {
    let envelope = match message {
        Message::Response(_) => return REQUEST_LABELS + 1,
        Message::Envelope(envelope) => envelope,
    };
    if envelope.id.is_none() {
        return REQUEST_LABELS;
    }
    SESSION_LABELS[..REQUEST_LABELS]
        .iter()
        .position(|label| label["session/".len()..] == envelope.method)
        .unwrap_or(SESSION_LABELS.len() - 1)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::admission::{Envelope, Response};

    fn request(method: &str) -> Message {
        Message::Envelope(Envelope {
            id: Some(json!(1)),
            method: method.to_owned(),
            params: None,
        })
    }

    fn label(message: &Message) -> &'static str {
        SESSION_LABELS[session_label_index(message)]
    }

    #[test]
    fn each_message_has_its_bounded_label() {
        for method in [
            "initialize",
            "ping",
            "tools/list",
            "tools/call",
            "logging/setLevel",
            "tasks/get",
            "tasks/result",
            "tasks/cancel",
            "tasks/list",
        ] {
            assert_eq!(label(&request(method)), format!("session/{method}"));
        }
        for other in ["tasks/update", "TOOLS/CALL", "x/evil", "", "session/ping"] {
            assert_eq!(label(&request(other)), "session/other", "{other:?}");
        }
        let notification = Message::Envelope(Envelope {
            id: None,
            method: "tools/call".to_owned(),
            params: None,
        });
        assert_eq!(label(&notification), "session/notification");
        let response = Message::Response(Response {
            id: json!(3),
            outcome: Ok(Value::Null),
        });
        assert_eq!(label(&response), "session/response");
    }
}
