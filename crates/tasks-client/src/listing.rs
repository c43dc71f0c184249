//! Whole lists and their caching hints: what [`Client::list_tools`](crate::Client::list_tools)
//! and the catalog lists ([`crate::Client::list_prompts`] and the like) answer.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tasks_core::wire::CacheScope;
use tasks_core::JsonObject;

/// How long a list or read result may be reused, as the server said (`ttlMs` and
/// `cacheScope`, MCP 2026-07-28 "Caching").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Caching {
    /// `ttlMs`: for how many milliseconds the result may be reused; `None` when the server
    /// said nothing (for a list of several pages: when one page said nothing; else the
    /// smallest of the pages').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// `cacheScope`: who may reuse it; [`CacheScope::Private`] when the server said nothing
    /// (for a list of several pages: when any page is private).
    #[serde(default, rename = "cacheScope")]
    pub scope: CacheScope,
}

impl Caching {
    /// The hints of one result object.
    pub(crate) fn of(result: &JsonObject) -> Self {
        Caching {
            ttl_ms: result.get("ttlMs").and_then(Value::as_u64),
            scope: result
                .get("cacheScope")
                .and_then(|scope| serde_json::from_value(scope.clone()).ok())
                .unwrap_or_default(),
        }
    }

    /// The hints of a list made of a page with `self` and a page with `other`: what holds for
    /// both (the shorter `ttlMs`, `private` unless both are `public`).
    pub fn merge(self, other: Caching) -> Caching {
        Caching {
            ttl_ms: self.ttl_ms.zip(other.ttl_ms).map(|(a, b)| a.min(b)),
            scope: if self.scope == CacheScope::Public && other.scope == CacheScope::Public {
                CacheScope::Public
            } else {
                CacheScope::Private
            },
        }
    }
}

/// A whole list (every page) and its caching hints.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Listing<T> {
    /// The items of every page, in the server's order.
    pub items: Vec<T>,
    /// The caching hints of the pages together ([`Caching::merge`]).
    pub caching: Caching,
}

impl<T> Default for Listing<T> {
    /// An empty list, without caching hints.
    fn default() -> Self {
        Listing {
            items: Vec::new(),
            caching: Caching::default(),
        }
    }
}
