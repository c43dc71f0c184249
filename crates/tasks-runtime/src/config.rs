//! Runtime configuration: limits, TTL and polling interval.
//!
//! The design notes are on [`RuntimeConfig`](crate::RuntimeConfig).

use std::num::NonZeroU64;
use std::time::Duration;

/// Capacity and size limits. The defaults are this server's choice: neither SEP-2663 nor the
/// conformance runner sets any.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
    /// Longest one task store call may take (a stalled database connection, a pool with no
    /// free connection): a call still unanswered then counts as failed
    /// ([`StoreError::Interrupted`](crate::store::StoreError::Interrupted)); a request is answered
    /// -32603 `Task store unavailable: …` (HTTP 503). A lease renewal gets at most half a
    /// [`LeaseConfig::tick`] instead ([`RuntimeConfig::renewal_deadline`]). Default 10 s.
    pub store_deadline: Duration,
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
            store_deadline: Duration::from_secs(10),
        }
    }
}

impl Limits {
    /// Sets [`Limits::max_workers`].
    #[must_use]
    pub fn with_max_workers(mut self, max_workers: usize) -> Self {
        self.max_workers = max_workers;
        self
    }

    /// Sets [`Limits::max_tasks`].
    #[must_use]
    pub fn with_max_tasks(mut self, max_tasks: usize) -> Self {
        self.max_tasks = max_tasks;
        self
    }

    /// Sets [`Limits::max_active_per_scope`].
    #[must_use]
    pub fn with_max_active_per_scope(mut self, max_active_per_scope: usize) -> Self {
        self.max_active_per_scope = max_active_per_scope;
        self
    }

    /// Sets [`Limits::max_runtime`].
    #[must_use]
    pub fn with_max_runtime(mut self, max_runtime: Duration) -> Self {
        self.max_runtime = max_runtime;
        self
    }

    /// Sets [`Limits::max_input_bytes`].
    #[must_use]
    pub fn with_max_input_bytes(mut self, max_input_bytes: usize) -> Self {
        self.max_input_bytes = max_input_bytes;
        self
    }

    /// Sets [`Limits::max_result_bytes`].
    #[must_use]
    pub fn with_max_result_bytes(mut self, max_result_bytes: usize) -> Self {
        self.max_result_bytes = max_result_bytes;
        self
    }

    /// Sets [`Limits::reap_interval`].
    #[must_use]
    pub fn with_reap_interval(mut self, reap_interval: Duration) -> Self {
        self.reap_interval = reap_interval;
        self
    }

    /// Sets [`Limits::store_deadline`].
    #[must_use]
    pub fn with_store_deadline(mut self, store_deadline: Duration) -> Self {
        self.store_deadline = store_deadline;
        self
    }
}

/// `duration` in whole milliseconds, as the wire's `*Ms` fields carry it: a non-zero duration
/// shorter than a millisecond is 1 ms (never 0, which some fields read as "unlimited" or
/// "absent"), and one beyond `u64::MAX` ms is `u64::MAX`.
pub fn duration_ms(duration: Duration) -> u64 {
    match u64::try_from(duration.as_millis()) {
        Ok(0) if !duration.is_zero() => 1,
        Ok(ms) => ms,
        Err(_) => u64::MAX,
    }
}

/// Node leases and recovery timing (see [`crate::store`] and `docs/durability.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseConfig {
    /// How long a node's lease lasts without renewal. Once it has expired, the node's
    /// unfinished tasks may be taken over. Default 30 s; at least two ticks are taken
    /// ([`LeaseConfig::effective_lease`]).
    pub lease: Duration,
    /// How often the node renews its lease and looks for orphaned tasks to take over.
    /// Default 2 s; keep it well under `lease`.
    pub tick: Duration,
    /// With a store shared by several nodes ([`crate::store::Store::changes`]): how often the node
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
    /// Sets [`LeaseConfig::lease`].
    #[must_use]
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Sets [`LeaseConfig::tick`].
    #[must_use]
    pub fn with_tick(mut self, tick: Duration) -> Self {
        self.tick = tick;
        self
    }

    /// Sets [`LeaseConfig::sweep`].
    #[must_use]
    pub fn with_sweep(mut self, sweep: Duration) -> Self {
        self.sweep = sweep;
        self
    }

    /// The lease a node takes: [`LeaseConfig::lease`], raised to two ticks when it is shorter
    /// (a lease must outlast the tick between two renewals, or it would run out before the
    /// next renewal is sent).
    pub fn effective_lease(&self) -> Duration {
        self.lease.max(self.tick.saturating_mul(2))
    }

    /// [`LeaseConfig::effective_lease`] in milliseconds, as the store takes it.
    pub fn lease_ms(&self) -> u64 {
        u64::try_from(self.effective_lease().as_millis()).unwrap_or(u64::MAX)
    }
}

/// Settings of a [`crate::TaskRuntime`].
///
/// # Settings
///
/// Runtime configuration: limits, TTL and polling interval.
///
/// The structs here are `#[non_exhaustive]`, so that a setting can be added in a minor release:
/// outside this crate, start from `Default::default()` and change what you need with the
/// chainable `with_*` setters (the fields stay public to read).
///
/// ```
/// use std::time::Duration;
/// use tasks_runtime::{LeaseConfig, Limits, RuntimeConfig};
///
/// let config = RuntimeConfig::default()
///     .with_limits(Limits::default().with_max_workers(8).with_max_runtime(Duration::from_secs(600)))
///     .with_leases(LeaseConfig::default().with_lease(Duration::from_secs(10)))
///     .with_ttl_ms(Some(60_000));
/// assert_eq!(config.limits.max_workers, 8);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
    /// How long a waiter (a 2025-11-25 `tasks/result`, a session's GET stream, a
    /// `subscriptions/listen` stream, [`TaskRuntime::wait_task`](crate::TaskRuntime::wait_task))
    /// goes without hearing of its tasks before it re-reads them anyway: the guard that ends a
    /// wait whose notification was lost (see [`TaskWait`](crate::TaskWait)). Each open waiter then costs
    /// one store read per interval (of its unfinished tasks, 256 ids per read). Default 5 s;
    /// this server's choice.
    pub wait_recheck: Duration,
    /// Where the runtime draws every task id, node id, key, nonce and session id, its own
    /// and its transport's ([`Randomness`](crate::Randomness)). Default: the operating system's CSPRNG.
    pub entropy: crate::entropy::Randomness,
    /// The clock the runtime reads, when set; `None` (the default): the store's clock
    /// ([`Store::clock`](crate::store::Store::clock)) when it has one, else the wall clock
    /// ([`TokioClock`](crate::TokioClock)). Unless the store brings its own clock, the runtime
    /// makes it [`Monotonic`](crate::Monotonic) from the store's
    /// [`Store::time_floor`](crate::store::Store::time_floor).
    pub clock: Option<crate::clock::SharedClock>,
    /// The key that seals each task's caller into its stored work
    /// ([`Creation::caller`](crate::Creation::caller)). `None` (the
    /// default): a key drawn at random when the runtime is made, so a task re-run by another
    /// process (after a restart, on another node) sees no principal. Servers with a durable
    /// store derive it from their secret ([`crate::PrincipalKey::from_secret`]); the HTTP server
    /// builder's `secret` does so.
    pub principal_key: Option<crate::seal::PrincipalKey>,
    /// When a task counts as stuck in the operator's inventory and the `tasks_stuck{reason}`
    /// gauge ([`StuckRules`](crate::store::inventory::StuckRules)). Default: 15 minutes
    /// `working` or 1 hour `input_required` without a change, or a holder whose lease ran out.
    pub stuck: crate::store::inventory::StuckRules,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            limits: Limits::default(),
            ttl_ms: Some(3_600_000),
            poll_interval_ms: NonZeroU64::new(250),
            leases: LeaseConfig::default(),
            list_changes: None,
            wait_recheck: Duration::from_secs(5),
            entropy: crate::entropy::Randomness::default(),
            clock: None,
            principal_key: None,
            stuck: crate::store::inventory::StuckRules::default(),
        }
    }
}

impl RuntimeConfig {
    /// Sets [`RuntimeConfig::stuck`]: when a task counts as stuck in the operator's inventory.
    #[must_use]
    pub fn with_stuck(mut self, stuck: crate::store::inventory::StuckRules) -> Self {
        self.stuck = stuck;
        self
    }

    /// Sets [`RuntimeConfig::limits`].
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets [`RuntimeConfig::ttl_ms`]: the `ttlMs` of new tasks in milliseconds, `None` for
    /// unlimited.
    #[must_use]
    pub fn with_ttl_ms(mut self, ttl_ms: Option<u64>) -> Self {
        self.ttl_ms = ttl_ms;
        self
    }

    /// [`RuntimeConfig::with_ttl_ms`] as a [`Duration`] (rounded to whole milliseconds, a
    /// non-zero duration to at least 1 ms): `None` for unlimited.
    #[must_use]
    pub fn with_ttl(self, ttl: Option<Duration>) -> Self {
        self.with_ttl_ms(ttl.map(duration_ms))
    }

    /// [`RuntimeConfig::with_poll_interval_ms`] as a [`Duration`] (rounded as
    /// [`duration_ms`] does): `None` or zero leaves `pollIntervalMs` out of new tasks.
    #[must_use]
    pub fn with_poll_interval(self, poll_interval: Option<Duration>) -> Self {
        self.with_poll_interval_ms(poll_interval.and_then(|d| NonZeroU64::new(duration_ms(d))))
    }

    /// Sets [`RuntimeConfig::poll_interval_ms`]: the `pollIntervalMs` of new tasks in
    /// milliseconds, `None` to leave it out of new tasks.
    #[must_use]
    pub fn with_poll_interval_ms(mut self, poll_interval_ms: Option<NonZeroU64>) -> Self {
        self.poll_interval_ms = poll_interval_ms;
        self
    }

    /// Sets [`RuntimeConfig::leases`].
    #[must_use]
    pub fn with_leases(mut self, leases: LeaseConfig) -> Self {
        self.leases = leases;
        self
    }

    /// Sets [`RuntimeConfig::wait_recheck`]: how often a waiter re-reads what it waits on when
    /// it has heard nothing.
    #[must_use]
    pub fn with_wait_recheck(mut self, wait_recheck: Duration) -> Self {
        self.wait_recheck = wait_recheck;
        self
    }

    /// Sets [`RuntimeConfig::entropy`]: where ids, keys and nonces are drawn (a
    /// [`SeededEntropy`](crate::entropy::SeededEntropy) makes a test repeatable).
    #[must_use]
    pub fn with_entropy(mut self, entropy: impl crate::entropy::Entropy) -> Self {
        self.entropy = crate::entropy::Randomness::new(entropy);
        self
    }

    /// Sets [`RuntimeConfig::principal_key`].
    #[must_use]
    pub fn with_principal_key(mut self, key: crate::seal::PrincipalKey) -> Self {
        self.principal_key = Some(key);
        self
    }

    /// Sets [`RuntimeConfig::clock`]: the clock the runtime reads (tests drive a
    /// [`TokioClock`](crate::TokioClock) with tokio's paused time).
    #[must_use]
    pub fn with_clock(mut self, clock: std::sync::Arc<dyn crate::Clock>) -> Self {
        self.clock = Some(crate::clock::SharedClock::new(clock));
        self
    }

    /// Longest a lease renewal may take before it counts as failed: half a
    /// [`LeaseConfig::tick`], or [`Limits::store_deadline`] when that is shorter. A renewal
    /// that does not answer in time never delays the next one, and the node reports the store
    /// unwritable ([`TaskRuntime::store_writable`](crate::TaskRuntime::store_writable)).
    pub fn renewal_deadline(&self) -> Duration {
        (self.leases.tick / 2).min(self.limits.store_deadline)
    }

    /// Sets [`RuntimeConfig::list_changes`]: where tool-list changes are announced.
    #[must_use]
    pub fn with_list_changes(mut self, list_changes: crate::ListChanges) -> Self {
        self.list_changes = Some(list_changes);
        self
    }
}

#[cfg(test)]
mod duration_tests {
    use super::*;

    #[test]
    fn durations_become_whole_milliseconds_never_zero_unless_zero() {
        assert_eq!(duration_ms(Duration::ZERO), 0);
        assert_eq!(duration_ms(Duration::from_micros(1)), 1);
        assert_eq!(duration_ms(Duration::from_micros(2_500)), 2);
        assert_eq!(duration_ms(Duration::from_secs(90)), 90_000);
        assert_eq!(duration_ms(Duration::MAX), u64::MAX);
    }

    #[test]
    fn duration_setters_set_the_millisecond_fields() {
        let config = RuntimeConfig::default()
            .with_ttl(Some(Duration::from_secs(60)))
            .with_poll_interval(Some(Duration::from_millis(750)));
        assert_eq!(config.ttl_ms, Some(60_000));
        assert_eq!(config.poll_interval_ms, NonZeroU64::new(750));
        let config = config
            .with_ttl(None)
            .with_poll_interval(Some(Duration::ZERO));
        assert_eq!(config.ttl_ms, None);
        assert_eq!(config.poll_interval_ms, None);
    }
}
