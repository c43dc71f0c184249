//! The authenticated caller of a request, as an authentication layer hands it to the MCP
//! endpoint.

use std::sync::Arc;

/// The authenticated caller of a request, for scoping its tasks: an authentication layer in
/// front of [`McpService`](crate::McpService) inserts it into the request extensions
/// (`request.extensions_mut().insert(Principal::new(user_id))`). Tasks created under one
/// principal are invisible to every other (-32602 `Unknown or inaccessible taskId`).
///
/// The principal is hashed with the server's scope key
/// ([`ServerBuilder::scope_secret`](crate::ServerBuilder::scope_secret)) before anything
/// stores or logs it; the empty principal is the shared scope. Use a stable user or client id,
/// not a bearer token that rotates (the caller would lose its tasks at every rotation).
#[derive(Clone, PartialEq, Eq)]
pub struct Principal(Arc<str>);

impl Principal {
    /// The principal named `id`.
    pub fn new(id: impl AsRef<str>) -> Self {
        Principal(Arc::from(id.as_ref()))
    }

    /// The principal's id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A principal can identify a person: never print it.
        write!(f, "Principal(len={})", self.0.len())
    }
}
