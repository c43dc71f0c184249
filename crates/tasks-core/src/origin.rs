//! Which task design created a task: this extension (`io.modelcontextprotocol/tasks` on
//! 2026-07-28) or the experimental tasks of MCP 2025-11-25, which a dual-era server serves on
//! its session path.
//!
//! SEP-2663's version table ("Backward Compatibility",
//! <https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2663>): a 2026-07-28
//! client that declares only the legacy `tasks` capability is non-declaring for this extension,
//! yet a server serving both designs SHOULD still let it `tasks/get` and `tasks/cancel` the
//! tasks created under the 2025 flow. The origin is what tells those tasks apart; it is set
//! once, at creation, and never changes.

use serde::{Deserialize, Serialize};

/// The task design that created a task. Stored with the task (the member `origin`, present
/// only for [`TaskOrigin::Experimental2025`], as `"2025-11-25"`), never shown on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskOrigin {
    /// Created by a task-creating `tools/call` of this extension (2026-07-28), or by a host
    /// through the runtime directly. Every task stored before origins were recorded reads so,
    /// unless its store's migration found it to be a 2025 one.
    #[default]
    #[serde(rename = "2026-07-28")]
    Extension,
    /// Created by a `tools/call` with a `task` hint on a 2025-11-25 session (MCP 2025-11-25
    /// tasks, "Creating Tasks":
    /// <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks>).
    #[serde(rename = "2025-11-25")]
    Experimental2025,
}

impl TaskOrigin {
    /// Whether this is the default, [`TaskOrigin::Extension`] (what storage leaves out).
    pub fn is_extension(&self) -> bool {
        *self == TaskOrigin::Extension
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_origin_is_stored_under_its_revision() {
        for (origin, text) in [
            (TaskOrigin::Extension, "\"2026-07-28\""),
            (TaskOrigin::Experimental2025, "\"2025-11-25\""),
        ] {
            assert_eq!(serde_json::to_string(&origin).unwrap(), text);
            assert_eq!(serde_json::from_str::<TaskOrigin>(text).unwrap(), origin);
        }
        assert!(serde_json::from_str::<TaskOrigin>("\"2025-06-18\"").is_err());
    }
}
