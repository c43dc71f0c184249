//! One module per method family.

pub(crate) mod catalog;
pub(crate) mod discover;
pub(crate) mod listen;
pub(crate) mod sync_call;
pub(crate) mod tasks;
pub(crate) mod tools;
