//! Tool names of terminal tasks, interned: a finished task drops its work descriptor (and the
//! tool name in it), so its entry keeps a 4-byte index into this table instead, for the
//! operator's inventory. Names come from the server's catalog (only a known tool creates a
//! task), so the table stays as small as the catalog.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// An index into [`Tools`]; [`ToolIndex::UNKNOWN`] for a running task (its tool is in its
/// work descriptor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ToolIndex(u32);

impl ToolIndex {
    /// No name recorded.
    pub(super) const UNKNOWN: ToolIndex = ToolIndex(u32::MAX);
}

/// The interned names.
#[derive(Debug, Default)]
pub(super) struct Tools(Mutex<Table>);

#[derive(Debug, Default)]
struct Table {
    names: Vec<Arc<str>>,
    index: HashMap<Arc<str>, u32>,
}

impl Tools {
    /// The index of `name`, added when new ([`ToolIndex::UNKNOWN`] once 2³²−1 names are held).
    pub(super) fn intern(&self, name: &str) -> ToolIndex {
        let mut table = crate::lock::lock(&self.0);
        if let Some(&i) = table.index.get(name) {
            return ToolIndex(i);
        }
        let Ok(i) = u32::try_from(table.names.len()) else {
            return ToolIndex::UNKNOWN;
        };
        if i == u32::MAX {
            return ToolIndex::UNKNOWN;
        }
        let name: Arc<str> = Arc::from(name);
        table.names.push(name.clone());
        table.index.insert(name, i);
        ToolIndex(i)
    }

    /// The name at `index`, if any.
    pub(super) fn name(&self, index: ToolIndex) -> Option<Arc<str>> {
        let table = crate::lock::lock(&self.0);
        usize::try_from(index.0)
            .ok()
            .and_then(|i| table.names.get(i).cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_interned_once_and_read_back() {
        let tools = Tools::default();
        let a = tools.intern("slow");
        let b = tools.intern("fast");
        assert_eq!(tools.intern("slow"), a);
        assert_ne!(a, b);
        assert_eq!(tools.name(a).as_deref(), Some("slow"));
        assert_eq!(tools.name(b).as_deref(), Some("fast"));
        assert_eq!(tools.name(ToolIndex::UNKNOWN), None);
    }
}
