//! State a tool's handler reads from its [`ToolContext`](crate::ToolContext) (a database pool,
//! an HTTP client, a configuration), given once with [`Tool::with_state`](crate::Tool::with_state)
//! instead of cloned into each closure: the way axum hands a router's state to its handlers.
//! It lives in the process, not in the store: a task re-run after a restart reads the state
//! the new process gave the tool.

use std::any::Any;
use std::sync::Arc;

/// A tool's state, if it has one: one value of any `Send + Sync` type, shared by every run.
#[derive(Clone, Default)]
pub(crate) struct ToolState(Option<Arc<dyn Any + Send + Sync>>);

impl ToolState {
    /// The state `value`.
    pub(crate) fn new<S: Send + Sync + 'static>(value: S) -> Self {
        ToolState(Some(Arc::new(value)))
    }

    /// The state, when it is an `S`.
    pub(crate) fn get<S: 'static>(&self) -> Option<&S> {
        self.0
            .as_deref()
            .and_then(|value| value.downcast_ref::<S>())
    }
}

impl std::fmt::Debug for ToolState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ToolState(..)"
        } else {
            "ToolState(none)"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::ToolState;

    #[test]
    fn the_state_is_found_by_its_type_only() {
        let state = ToolState::new(String::from("pool"));
        assert_eq!(state.get::<String>().map(String::as_str), Some("pool"));
        assert_eq!(state.get::<u32>(), None);
        assert_eq!(ToolState::default().get::<String>(), None);
        // Clones share the one value.
        let copy = state.clone();
        assert!(std::ptr::eq(
            copy.get::<String>().unwrap(),
            state.get::<String>().unwrap()
        ));
    }
}
