//! The access scope of a request.

use std::fmt;
use std::sync::{Arc, LazyLock};

use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// An opaque, request-derived access scope (for example the keyed hash of an authenticated
/// principal, [`ScopeKey::scope_of`]).
///
/// Stores persist it (a durable store writes it to disk), so a server derives it with a
/// [`ScopeKey`] rather than passing a principal or bearer token through:
/// `tasks_http::ServerBuilder` does so for every scope its `principal_fn` names.
///
/// Every request-side store call carries one; a task created in one scope is indistinguishable
/// from an unknown id in every other scope (-32602 `Unknown or inaccessible taskId`).
/// [`Scope::shared`] is the single scope of a server without authentication.
///
/// A clone shares the text. The pointer is thin (8 bytes), since every stored task's entry
/// holds one.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Scope(Arc<Box<str>>);

/// The shared scope, made once: every task of a server without authentication holds it.
static SHARED: LazyLock<Scope> = LazyLock::new(|| Scope(Arc::new(Box::from(""))));

impl Scope {
    /// A scope named by `principal`.
    pub fn new(principal: impl AsRef<str>) -> Self {
        Scope(Arc::new(Box::from(principal.as_ref())))
    }

    /// The one shared scope (the empty principal).
    pub fn shared() -> Self {
        SHARED.clone()
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

/// The authenticated caller of a request, for scoping its tasks, as an authentication layer
/// hands it to an MCP host: it inserts it into the request extensions
/// (`request.extensions_mut().insert(Principal::new(user_id))`), and the host (tasks-http's
/// endpoint, tasks-rmcp's bridge) reads it there. Tasks created under one principal are
/// invisible to every other (-32602 `Unknown or inaccessible taskId`).
///
/// The host hashes the principal with its scope key ([`ScopeKey::scope_of`]) before anything
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

    /// The principal as a [`Scope`] naming it, before hashing (what [`ScopeKey::scope_of`]
    /// takes).
    pub fn to_scope(&self) -> Scope {
        Scope::new(&*self.0)
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A principal can identify a person: never print it.
        write!(f, "Principal(len={})", self.0.len())
    }
}

/// An admitted caller: the scope its tasks live in and, when the request was authenticated, its
/// [`Principal`] (what [`ToolContext::principal`](crate::ToolContext::principal) shows a tool).
/// A host makes one per request with [`ScopeKey::caller`], or [`Caller::shared`] for a server
/// without authentication.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Caller {
    /// The scope: the principal's keyed hash, or the shared scope.
    pub scope: Scope,
    /// The principal, `None` for the shared scope.
    pub principal: Option<Principal>,
}

impl Caller {
    /// The caller of a server without authentication: the shared scope, no principal.
    pub fn shared() -> Self {
        Caller::default()
    }
}

/// The key that turns principals into scopes: `HMAC-SHA256(key, principal)`, base64url
/// (43 characters). The shared scope (the empty principal) stays empty.
///
/// Keep it stable for as long as tasks are stored: with another key, the same principal maps to
/// another scope and no longer finds its tasks. It is never written to a store.
#[derive(Clone)]
pub struct ScopeKey([u8; 32]);

impl fmt::Debug for ScopeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ScopeKey(..)")
    }
}

impl ScopeKey {
    /// A key of 32 bytes (draw them from the OS CSPRNG).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        ScopeKey(bytes)
    }

    /// A key derived from secret bytes (any length), e.g. the contents of a secret file
    /// several processes share. Independent of the `requestState` key derived from the same
    /// secret.
    pub fn from_secret(secret: &[u8]) -> Self {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret)
            .expect("HMAC takes keys of any length");
        mac.update(b"mcp-tasks scope key v1");
        ScopeKey(mac.finalize().into_bytes().into())
    }

    /// The caller `principal` is: its scope ([`ScopeKey::scope_of`]) and, unless it is the
    /// empty principal (the shared scope), the principal itself.
    pub fn caller(&self, principal: &Principal) -> Caller {
        if principal.as_str().is_empty() {
            return Caller::shared();
        }
        Caller {
            scope: self.scope_of(&principal.to_scope()),
            principal: Some(principal.clone()),
        }
    }

    /// The scope of `principal` (a [`Scope`] naming the principal, e.g. from a bearer token).
    pub fn scope_of(&self, principal: &Scope) -> Scope {
        if principal.as_str().is_empty() {
            return Scope::shared();
        }
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0)
            .expect("HMAC takes keys of any length");
        mac.update(principal.as_str().as_bytes());
        let digest = mac.finalize().into_bytes();
        Scope::new(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_is_one_thin_pointer_and_the_shared_one_is_made_once() {
        assert_eq!(std::mem::size_of::<Scope>(), 8);
        assert!(Arc::ptr_eq(&Scope::shared().0, &Scope::shared().0));
        assert_eq!(Scope::shared(), Scope::new(""));
        assert_eq!(Scope::default().as_str(), "");
    }

    #[test]
    fn scopes_are_keyed_hashes_of_principals() {
        let key = ScopeKey::from_secret(b"secret");
        let alice = key.scope_of(&Scope::new("alice"));
        assert_eq!(alice.as_str().len(), 43);
        assert!(!alice.as_str().contains("alice"));
        assert_eq!(alice, key.scope_of(&Scope::new("alice")), "stable");
        assert_ne!(alice, key.scope_of(&Scope::new("bob")));
        let other = ScopeKey::from_secret(b"other secret");
        assert_ne!(alice, other.scope_of(&Scope::new("alice")), "keyed");
        assert_eq!(key.scope_of(&Scope::shared()), Scope::shared());
        let caller = key.caller(&Principal::new("alice"));
        assert_eq!(caller.scope, alice);
        assert_eq!(caller.principal, Some(Principal::new("alice")));
        assert_eq!(key.caller(&Principal::new("")), Caller::shared());
    }
}
