//! The request head as the core reads it.

use http::HeaderMap;
use tasks_core::admission::HeaderSource;

/// An HTTP header map seen as a [`HeaderSource`] (every value of a header, in order).
#[derive(Debug, Clone, Copy)]
pub struct Head<'a>(pub &'a HeaderMap);

impl HeaderSource for Head<'_> {
    fn values<'a, 'n>(&'a self, name: &'n str) -> impl Iterator<Item = &'a [u8]> + 'n
    where
        'a: 'n,
    {
        self.0.get_all(name).iter().map(|v| v.as_bytes())
    }
}
