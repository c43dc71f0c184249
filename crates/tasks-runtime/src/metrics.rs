//! Task-lifecycle metrics of one process, kept with `prometheus-client` handles that are made
//!
//! The design notes are on [`RuntimeMetrics`](crate::RuntimeMetrics).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use tasks_core::{CapacityLimit, Task, TaskStatus};

/// The labels of a creation: a registered tool's name and its task policy.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabel {
    tool: String,
    policy: &'static str,
}

/// The `status` label: a task status as on the wire (`working`, `input_required`, …).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabel {
    status: &'static str,
}

/// The `limit` label: a capacity limit as in `data.limit` (`max_jobs`, …).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabel {
    limit: &'static str,
}

/// The `outcome` label of a lease renewal: `ok`, `lost` (another node took the lease over) or
/// `failed` (the store did not answer).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

/// The `operation` label of a store call: the [`Store`](crate::store::Store) method's name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabel {
    operation: &'static str,
}

/// The `reason` label of a change-feed resync (`feed`: the store's feed said hints may have
/// been lost, its listening connection (re)connected or a sender lost hints; `lagged`: this
/// node fell behind the feed) and of a self-fence (`lost`: the store said the lease had
/// expired; `stalled`: no renewal had succeeded for the lease minus one tick, by the node's
/// own clock).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

/// Bucket bounds of task durations, in seconds: 10 ms to about 3 hours.
fn duration_buckets() -> impl Iterator<Item = f64> {
    prometheus_client::metrics::histogram::exponential_buckets(0.01, 4.0, 10)
}

/// The task-lifecycle metrics of a [`TaskRuntime`](crate::TaskRuntime). Cheap to clone (the
/// handles are shared).
///
/// # Metrics
///
/// Task-lifecycle metrics of one process, kept with `prometheus-client` handles that are made
/// once (no lookup by name per event) and registered into a registry the server owns
/// ([`RuntimeMetrics::register`]), never a global one.
///
/// Label values come from bounded sets only: registered tool names, the five task statuses,
/// the three capacity limits. Names follow the Prometheus conventions (`_total` counters,
/// `_seconds` in base units); `docs/observability.md` lists each with its meaning.
#[derive(Clone, Debug)]
pub struct RuntimeMetrics {
    created: Family<ToolLabel, Counter>,
    transitions: Family<StatusLabel, Counter>,
    duration: Family<StatusLabel, Histogram>,
    refusals: Family<LimitLabel, Counter>,
    reaped: Counter,
    workers_busy: Gauge,
    workers_total: Gauge,
    renewals: Family<OutcomeLabel, Counter>,
    takeovers: Counter,
    fenced: Counter,
    store_latency: Family<OperationLabel, Histogram>,
    store_failures: Family<OperationLabel, Counter>,
    store_deadlines: Family<OperationLabel, Counter>,
    self_fences: Family<ReasonLabel, Counter>,
    parked: Histogram,
    stored: Family<StatusLabel, Gauge>,
    quarantined: Gauge,
    stuck: Family<ReasonLabel, Gauge>,
    feed_resyncs: Family<ReasonLabel, Counter>,
}

impl Default for RuntimeMetrics {
    fn default() -> Self {
        let metrics = RuntimeMetrics::empty();
        // Series of closed label sets exist from the start, at 0, so that the first event
        // after a restart shows in `rate()` and `increase()`.
        for status in TaskStatus::ALL {
            let _ = metrics.transitions.get_or_create(&StatusLabel {
                status: status.as_str(),
            });
        }
        for limit in CapacityLimit::ALL {
            let _ = metrics.refusals.get_or_create(&LimitLabel {
                limit: limit.as_str(),
            });
        }
        for outcome in ["ok", "lost", "failed"] {
            let _ = metrics.renewals.get_or_create(&OutcomeLabel { outcome });
        }
        for reason in ["feed", "lagged"] {
            let _ = metrics.feed_resyncs.get_or_create(&ReasonLabel { reason });
        }
        for reason in ["lost", "stalled"] {
            let _ = metrics.self_fences.get_or_create(&ReasonLabel { reason });
        }
        metrics
    }
}

impl RuntimeMetrics {
    fn empty() -> Self {
        RuntimeMetrics {
            created: Family::default(),
            transitions: Family::default(),
            duration: Family::new_with_constructor(|| Histogram::new(duration_buckets())),
            refusals: Family::default(),
            reaped: Counter::default(),
            workers_busy: Gauge::default(),
            workers_total: Gauge::default(),
            renewals: Family::default(),
            takeovers: Counter::default(),
            fenced: Counter::default(),
            // 100 µs to about 3 s.
            store_latency: Family::new_with_constructor(|| {
                Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
                    0.0001, 2.0, 15,
                ))
            }),
            store_failures: Family::default(),
            store_deadlines: Family::default(),
            self_fences: Family::default(),
            parked: Histogram::new(duration_buckets()),
            stored: Family::default(),
            quarantined: Gauge::default(),
            stuck: Family::default(),
            feed_resyncs: Family::default(),
        }
    }

    /// Registers every metric into `registry` (names below its prefix):
    /// `tasks_created_total{tool,policy}`, `task_transitions_total{status}`,
    /// `task_duration_seconds{status}` (creation to terminal state),
    /// `task_capacity_refusals_total{limit}`, `tasks_reaped_total`, `worker_slots_busy` and
    /// `worker_slots` (set by [`RuntimeMetrics::set_workers`] before each scrape),
    /// `lease_renewals_total{outcome}`, `task_takeovers_total`, `fenced_writes_total`,
    /// `store_operation_duration_seconds{operation}`, `store_failures_total{operation}`,
    /// `store_deadline_exceeded_total{operation}`, `node_self_fences_total{reason}`,
    /// `task_input_wait_seconds`, `tasks_stored{status}`, `tasks_stuck{reason}` and `tasks_quarantined` (set by
    /// [`TaskRuntime::refresh_status_counts`](crate::TaskRuntime::refresh_status_counts)) and
    /// `change_feed_resyncs_total{reason}`. Refusals answered because the store was briefly
    /// unavailable are a request metric, counted where an error becomes a client's answer
    /// (`tasks_http`'s `mcp_store_unavailable_refusals_total{outcome}`).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "tasks_created",
            "Tasks created by this process, by tool and its task policy",
            self.created.clone(),
        );
        registry.register(
            "task_transitions",
            "Task states committed by this process, by the status entered",
            self.transitions.clone(),
        );
        registry.register_with_unit(
            "task_duration",
            "Time from a task's creation to its terminal state, by that state (committed by this process)",
            Unit::Seconds,
            self.duration.clone(),
        );
        registry.register(
            "task_capacity_refusals",
            "Task creations refused for capacity, by the limit reached",
            self.refusals.clone(),
        );
        registry.register(
            "tasks_reaped",
            "Expired tasks deleted by this process's reaper",
            self.reaped.clone(),
        );
        registry.register(
            "worker_slots_busy",
            "Worker slots in use (running tasks; parked ones hold none)",
            self.workers_busy.clone(),
        );
        registry.register(
            "worker_slots",
            "Worker slots of this process (Limits::max_workers)",
            self.workers_total.clone(),
        );
        registry.register(
            "lease_renewals",
            "Node lease renewals, by outcome (ok, lost to another node, failed: the store did not answer)",
            self.renewals.clone(),
        );
        registry.register(
            "task_takeovers",
            "Orphaned tasks (of a node whose lease ran out, or of an earlier run) this process took over",
            self.takeovers.clone(),
        );
        registry.register(
            "fenced_writes",
            "Task writes the store refused because another node had taken the task over",
            self.fenced.clone(),
        );
        registry.register_with_unit(
            "store_operation_duration",
            "Time of each task store call, by operation (the Store method)",
            Unit::Seconds,
            self.store_latency.clone(),
        );
        registry.register(
            "store_failures",
            "Task store calls that failed in the backend, by operation",
            self.store_failures.clone(),
        );
        registry.register(
            "store_deadline_exceeded",
            "Task store calls that did not answer within their deadline (Limits::store_deadline; half a tick for a lease renewal), by operation",
            self.store_deadlines.clone(),
        );
        registry.register(
            "node_self_fences",
            "Times this process stopped every local worker and re-registered under a new node id, by reason (lost: the store said the lease had expired; stalled: no renewal had succeeded for the lease minus one tick)",
            self.self_fences.clone(),
        );
        registry.register(
            "tasks_stored",
            "Unexpired tasks in the store by status, across every node sharing it (read from the store at each scrape)",
            self.stored.clone(),
        );
        registry.register(
            "tasks_stuck",
            "Unexpired tasks in the store that are stuck, by reason (holder_lost: held by a registered node whose lease ran out, not yet claimed; working_idle: working with no change past the threshold; input_unanswered: input_required unanswered past the threshold), across every node sharing it (read from the store at each scrape; absent when the store has no inventory)",
            self.stuck.clone(),
        );
        registry.register(
            "tasks_quarantined",
            "Stored tasks this process's store could not read back and quarantined since it was opened (each now reads failed)",
            self.quarantined.clone(),
        );
        registry.register_with_unit(
            "task_input_wait",
            "Time a task spent in input_required before it moved on (answered, cancelled or failed), committed by this process",
            Unit::Seconds,
            self.parked.clone(),
        );
        registry.register(
            "change_feed_resyncs",
            "Re-reads after the store's change feed may have lost hints, by reason (feed: its connection reconnected or a sender lost hints; lagged: this node fell behind)",
            self.feed_resyncs.clone(),
        );
    }

    /// A task of `tool` (whose policy label is `policy`) was created.
    pub(crate) fn created(&self, tool: &str, policy: &'static str, task: &Task) {
        self.created
            .get_or_create(&ToolLabel {
                tool: tool.to_owned(),
                policy,
            })
            .inc();
        self.entered(task);
    }

    /// `task` entered its current status (a committed transition).
    pub(crate) fn entered(&self, task: &Task) {
        let status = StatusLabel {
            status: task.status().as_str(),
        };
        self.transitions.get_or_create(&status).inc();
        if task.status().is_terminal() {
            let millis = task
                .last_updated_at()
                .unix_millis()
                .saturating_sub(task.created_at().unix_millis());
            #[allow(clippy::cast_precision_loss)] // milliseconds: exact far beyond any task's life
            self.duration
                .get_or_create(&status)
                .observe(millis as f64 / 1000.0);
        }
    }

    /// A creation was refused at `limit`.
    pub(crate) fn refused(&self, limit: CapacityLimit) {
        self.refusals
            .get_or_create(&LimitLabel {
                limit: limit.as_str(),
            })
            .inc();
    }

    /// The change feed may have lost hints (`reason`: `feed` or `lagged`).
    pub(crate) fn feed_resync(&self, reason: &'static str) {
        self.feed_resyncs
            .get_or_create(&ReasonLabel { reason })
            .inc();
    }

    /// `count` expired tasks were deleted.
    pub(crate) fn reaped(&self, count: usize) {
        self.reaped.inc_by(u64::try_from(count).unwrap_or(u64::MAX));
    }

    /// A store call of `operation` took `took` (and failed in the backend when `failed`).
    pub(crate) fn store_call(
        &self,
        operation: &'static str,
        took: std::time::Duration,
        failed: bool,
    ) {
        let label = OperationLabel { operation };
        self.store_latency
            .get_or_create(&label)
            .observe(took.as_secs_f64());
        if failed {
            self.store_failures.get_or_create(&label).inc();
        }
    }

    /// A store call of `operation` did not answer within its deadline.
    pub(crate) fn deadline_exceeded(&self, operation: &'static str) {
        self.store_deadlines
            .get_or_create(&OperationLabel { operation })
            .inc();
    }

    /// The node fenced itself for `reason` (`lost`, `stalled` or `claim_unknown`).
    pub(crate) fn self_fenced(&self, reason: &'static str) {
        self.self_fences
            .get_or_create(&ReasonLabel { reason })
            .inc();
    }

    /// `task` left `input_required` (it was `before`): the time it waited, measured from the
    /// last write while it waited (a status message written meanwhile shortens it).
    pub(crate) fn left_input(&self, before: &Task, task: &Task) {
        if before.status() == TaskStatus::InputRequired
            && task.status() != TaskStatus::InputRequired
        {
            let millis = task
                .last_updated_at()
                .unix_millis()
                .saturating_sub(before.last_updated_at().unix_millis());
            #[allow(clippy::cast_precision_loss)] // milliseconds: exact far beyond any wait
            self.parked.observe(millis as f64 / 1000.0);
        }
    }

    /// Sets the quarantined-task gauge from the store's count ([`crate::store::Store::quarantined`]).
    pub(crate) fn set_quarantined(&self, count: u64) {
        self.quarantined
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    /// Sets the stored-task gauges from the store's counts.
    pub(crate) fn set_status_counts(&self, counts: &crate::store::StatusCounts) {
        for status in TaskStatus::ALL {
            self.stored
                .get_or_create(&StatusLabel {
                    status: status.as_str(),
                })
                .set(i64::try_from(counts.get(status)).unwrap_or(i64::MAX));
        }
    }

    /// Sets the stuck-task gauges from the store's inventory counts.
    pub(crate) fn set_stuck(&self, stuck: &crate::store::inventory::StuckCounts) {
        for (reason, count) in [
            ("holder_lost", stuck.holder_lost),
            ("working_idle", stuck.working_idle),
            ("input_unanswered", stuck.input_unanswered),
        ] {
            self.stuck
                .get_or_create(&ReasonLabel { reason })
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
    }

    /// A lease renewal ended with `outcome` (`ok`, `lost` or `failed`).
    pub(crate) fn renewal(&self, outcome: &'static str) {
        self.renewals.get_or_create(&OutcomeLabel { outcome }).inc();
    }

    /// `count` orphaned tasks were taken over.
    pub(crate) fn took_over(&self, count: usize) {
        self.takeovers
            .inc_by(u64::try_from(count).unwrap_or(u64::MAX));
    }

    /// A write was refused because the task was taken over.
    pub(crate) fn fenced(&self) {
        self.fenced.inc();
    }

    /// Sets the worker-slot gauges (called before each scrape).
    pub fn set_workers(&self, busy: usize, total: usize) {
        self.workers_busy
            .set(i64::try_from(busy).unwrap_or(i64::MAX));
        self.workers_total
            .set(i64::try_from(total).unwrap_or(i64::MAX));
    }
}
