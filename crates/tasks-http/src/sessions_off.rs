//! The 2025 session path compiled out (the `sessions` feature is off): no session is
//! ever opened, so a 2025 `initialize` is answered as with
//! [`ServerBuilder::sessions(None)`](crate::ServerBuilder::sessions) (-32022 naming the
//! supported versions), and a GET or DELETE is HTTP 405.

use http::request::Parts;
use tasks_core::plan::Message;
use tasks_core::McpError;
use tasks_runtime::Scope;
use tokio_util::sync::CancellationToken;

use crate::config::SessionConfig;
use crate::response::McpResponse;
use crate::shared::Sessions;
use crate::shared::{Shared, View};

/// No table, whatever the limits.
pub(crate) fn table(
    _: Option<SessionConfig>,
    _: &CancellationToken,
    _: &tasks_runtime::Randomness,
) -> Option<Sessions> {
    None
}

/// Never: no session exists.
pub(crate) fn may_name_session(_: &Shared, _: &Parts) -> bool {
    false
}

/// HTTP 405: no session exists.
pub(crate) fn get_or_delete(_: &Shared, _: &Parts, _: &Scope) -> McpResponse {
    McpResponse::error(None, &McpError::HttpMethodNotAllowed)
}

/// Unreachable: it takes a session table, which cannot exist.
pub(crate) async fn post(
    _: &Shared,
    sessions: &Sessions,
    _: &http::HeaderMap,
    _: Message,
    _: tasks_runtime::Caller,
    _: &View<'_>,
) -> (McpResponse, Option<McpError>) {
    match *sessions {}
}
