//! Runtime configuration: limits, TTL and polling interval.

use std::num::NonZeroU64;
use std::time::Duration;

/// Capacity and size limits. Defaults follow tasks-wire-reference §3.2 and §11.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Workers running at once (a task parked in `input_required` does not count). Creation
    /// beyond it is -32603 `Task capacity exhausted`, `data.limit = "max_jobs"`. Default 32.
    pub max_workers: usize,
    /// Tasks stored at once, every scope and status included (`"max_tasks"`). Default 100 000.
    pub max_tasks: usize,
    /// Non-terminal tasks of one scope (`"max_active_tasks_per_scope"`). Default 10 000.
    pub max_active_per_scope: usize,
    /// Longest a worker may run before the task fails with -32603. Default 1 hour.
    pub max_runtime: Duration,
    /// Largest serialized work descriptor, in bytes; larger is -32602
    /// `Task input is larger than 262144 bytes`. Default 262 144.
    pub max_input_bytes: usize,
    /// Largest serialized result a task may store, in bytes; a larger result fails the task
    /// with -32603 (never a silent truncation). Default 4 MiB.
    pub max_result_bytes: usize,
    /// How often the reaper deletes expired tasks. Default 60 s.
    pub reap_interval: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_workers: 32,
            max_tasks: 100_000,
            max_active_per_scope: 10_000,
            max_runtime: Duration::from_secs(3600),
            max_input_bytes: 262_144,
            max_result_bytes: 4 * 1024 * 1024,
            reap_interval: Duration::from_secs(60),
        }
    }
}

/// Node leases and recovery timing (see [`crate::store`] and `docs/durability.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// How long a node's lease lasts without renewal. Once it has expired, the node's
    /// unfinished tasks may be taken over. Default 30 s.
    pub lease: Duration,
    /// How often the node renews its lease and looks for orphaned tasks to take over.
    /// Default 2 s; keep it well under `lease`.
    pub tick: Duration,
    /// With a store shared by several nodes ([`crate::Store::changes`]): how often the node
    /// re-reads the tasks of its own workers, so that an answer or a cancellation made on
    /// another node whose hint was lost still reaches the worker. Default 5 s.
    pub sweep: Duration,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        LeaseConfig {
            lease: Duration::from_secs(30),
            tick: Duration::from_secs(2),
            sweep: Duration::from_secs(5),
        }
    }
}

impl LeaseConfig {
    /// The lease in milliseconds, as the store takes it.
    pub fn lease_ms(&self) -> u64 {
        u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX)
    }
}

/// Settings of a [`crate::TaskRuntime`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// Limits.
    pub limits: Limits,
    /// `ttlMs` of new tasks in milliseconds; `None` is unlimited (wire `null`). Default 1 hour.
    pub ttl_ms: Option<u64>,
    /// `pollIntervalMs` of new tasks in milliseconds. Default 250.
    pub poll_interval_ms: Option<NonZeroU64>,
    /// Node leases and recovery timing.
    pub leases: LeaseConfig,
    /// Where [`TaskRuntime::register_tool`](crate::TaskRuntime::register_tool) and
    /// [`TaskRuntime::remove_tool`](crate::TaskRuntime::remove_tool) announce a change of the
    /// tool list (`notifications/tools/list_changed`); `None` (the default) announces nothing.
    /// The HTTP server builder sets it with its own list-change handle.
    pub list_changes: Option<crate::ListChanges>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            limits: Limits::default(),
            ttl_ms: Some(3_600_000),
            poll_interval_ms: NonZeroU64::new(250),
            leases: LeaseConfig::default(),
            list_changes: None,
        }
    }
}
