//! A started node: what a host, with or without HTTP, starts once and stops once.
//!
//! The design notes are on [`Node`](crate::Node).

use std::time::Duration;

use tasks_core::McpError;
use tokio::task::JoinHandle;

use crate::runtime::TaskRuntime;

/// A started node of a [`TaskRuntime`]: registered, its
/// inherited tasks taken over, its liveness loop and reaper running. From
/// [`TaskRuntime::start`].
///
/// Dropping it stops the background work without ending the lease: to other nodes that is a
/// crash, and they take its tasks over once the lease runs out. [`Node::shutdown`] ends it
/// gracefully.
///
/// [`TaskRuntime::start`] registers the node with the store, takes over the tasks a previous
/// process left unfinished, and starts the node's background work: the liveness loop (lease
/// renewal, claims of orphaned tasks, following the commits of other nodes) and the TTL
/// reaper. [`Node::shutdown`] is the graceful end: running tasks get a drain period, then the
/// background work stops and the lease ends, so another node (or the next start of this one)
/// takes over what is left at once.
///
/// A durable node without any transport, in a few lines (a memory store here; a SQLite or
/// PostgreSQL store from their crates is started the same way):
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use tasks_runtime::{text_result, RuntimeConfig, Scope, TaskRuntime, Tool, ToolRegistry, Work};
/// use tasks_runtime::store::MemoryStore;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), tasks_core::McpError> {
/// let mut tools = ToolRegistry::new();
/// tools.register(Tool::new("hello", "Says hello", |_ctx| async { Ok(text_result("hello")) }));
/// let runtime = TaskRuntime::new(Arc::new(MemoryStore::new()), tools, RuntimeConfig::default());
/// let node = runtime.start().await?; // register, recover, renew, claim, reap
///
/// let work = Work::new(Scope::shared(), "hello", Default::default());
/// let task = runtime.create(work).await?;
/// let mut wait = runtime.wait_task(&Scope::shared(), task.id());
/// let mut seen = wait.current().await?;
/// while !seen.is_terminal() {
///     seen = wait.next().await?;
/// }
/// assert_eq!(seen.status(), tasks_core::TaskStatus::Completed);
///
/// node.shutdown(Duration::from_secs(5)).await; // drain, stop, end the lease
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping the node stops its lease renewal and reaper at once"]
pub struct Node {
    runtime: TaskRuntime,
    liveness: JoinHandle<()>,
    reaper: JoinHandle<()>,
    recovered: usize,
}

impl TaskRuntime {
    /// Starts this runtime's node: starts the liveness loop first (taking over many tasks may
    /// outlast a lease), registers the node and takes over every orphaned task
    /// ([`TaskRuntime::recover`]), then starts the reaper. Call it once, before serving.
    ///
    /// # Errors
    /// -32603 when the store fails during recovery (nothing keeps running then).
    pub async fn start(&self) -> Result<Node, McpError> {
        let liveness = self.spawn_liveness();
        let recovered = match self.recover().await {
            Ok(recovered) => recovered,
            Err(error) => {
                liveness.abort();
                return Err(error);
            }
        };
        if recovered > 0 {
            tracing::info!(recovered, "took over unfinished tasks");
        }
        Ok(Node {
            runtime: self.clone(),
            liveness,
            reaper: self.spawn_reaper(),
            recovered,
        })
    }
}

impl Node {
    /// The runtime this node runs.
    pub fn runtime(&self) -> &TaskRuntime {
        &self.runtime
    }

    /// How many unfinished tasks the start took over.
    pub fn recovered(&self) -> usize {
        self.recovered
    }

    /// Shuts the node down: lets running tasks finish for up to `drain_timeout` (zero: not at
    /// all), then stops every local worker still running or parked (each task stays as
    /// stored: it is neither failed nor cancelled), stops the liveness loop and the reaper,
    /// and ends the node's lease ([`TaskRuntime::retire`]), so its unfinished tasks can be
    /// taken over at once, by another node or the next start of this one. Answers
    /// whether every running task finished within the drain. Requests the runtime still
    /// serves afterwards are answered, but nothing reaps their tasks any more.
    pub async fn shutdown(&self, drain_timeout: Duration) -> bool {
        let runtime = &self.runtime;
        let running = runtime.busy_workers();
        let drained = if drain_timeout.is_zero() {
            running == 0
        } else {
            if running > 0 {
                tracing::info!(
                    running,
                    wait_ms = u64::try_from(drain_timeout.as_millis()).unwrap_or(u64::MAX),
                    "waiting for running tasks to finish"
                );
            }
            runtime.drain(drain_timeout).await
        };
        if !drained {
            tracing::warn!(
                running = runtime.busy_workers(),
                store = runtime.store_kind(),
                "tasks still running after the drain timeout are stopped: {}",
                unfinished_fate(runtime.store_kind())
            );
        }
        runtime.stop_workers();
        self.liveness.abort();
        self.reaper.abort();
        if let Err(error) = runtime.retire().await {
            tracing::warn!(%error, "ending the node lease failed");
        }
        drained
    }
}

/// What becomes of tasks a shutdown stops, by the kind of store ([`TaskRuntime::store_kind`]):
/// a memory store forgets them with the process; a durable one keeps them for the next holder
/// of their lease, which recovers each by its tool's policy ([`crate::Recovery`]).
pub fn unfinished_fate(store_kind: &str) -> &'static str {
    match store_kind {
        "memory" => "they are lost (the memory store keeps nothing after the process ends)",
        "sqlite" => {
            "the next start on this database recovers them, each by its tool's recovery policy"
        }
        "postgresql" => {
            "another node, or the next start, recovers them at once, each by its tool's \
             recovery policy"
        }
        _ => {
            "they stay as stored: the next node holding them recovers them by their tools' \
             recovery policies if the store keeps them"
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.liveness.abort();
        self.reaper.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::unfinished_fate;

    #[test]
    fn the_fate_of_stopped_tasks_follows_the_store() {
        assert!(unfinished_fate("memory").contains("lost"));
        for durable in ["sqlite", "postgresql", "custom"] {
            let fate = unfinished_fate(durable);
            assert!(fate.contains("recover") && !fate.contains("lost"), "{fate}");
        }
    }
}
