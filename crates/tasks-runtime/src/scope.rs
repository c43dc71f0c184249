//! The access scope of a request.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// An opaque, request-derived access scope (for example an authenticated principal).
///
/// Every request-side store call carries one; a task created in one scope is indistinguishable
/// from an unknown id in every other scope (-32602 `Unknown or inaccessible taskId`).
/// [`Scope::shared`] is the single scope of a server without authentication.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Scope(Arc<str>);

impl Scope {
    /// A scope named by `principal`.
    pub fn new(principal: impl AsRef<str>) -> Self {
        Scope(Arc::from(principal.as_ref()))
    }

    /// The one shared scope (the empty principal).
    pub fn shared() -> Self {
        Scope(Arc::from(""))
    }

    /// The principal string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Scope {
    fn default() -> Self {
        Scope::shared()
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Principals can be sensitive: never print them in full.
        write!(f, "Scope(len={})", self.0.len())
    }
}
