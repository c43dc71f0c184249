//! The read model: every stored task in memory, changed only by the writer thread after the
//! change has committed, so readers never see a state the database could still lose.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tasks_core::{Task, TaskId, Timestamp};
use tasks_runtime::store::task_map::{task_map, TaskMap};
use tasks_runtime::store::Snapshot;
use tasks_runtime::{Scope, Work};

/// One stored task as readers see it.
pub(crate) struct Entry {
    pub(crate) task: Arc<Task>,
    pub(crate) scope: Scope,
    /// `None` once the task is terminal.
    pub(crate) work: Option<Arc<Work>>,
}

/// A committed change to apply to the model, in commit order.
pub(crate) enum Effect {
    /// A created task.
    Insert(TaskId, Entry),
    /// A committed transition; `drop_work` once the task became terminal.
    Update {
        id: TaskId,
        task: Arc<Task>,
        drop_work: bool,
    },
    /// Reaped tasks.
    Delete(Vec<TaskId>),
}

/// The committed tasks, sharded by id (`TaskMap`), and the committed task count.
pub(crate) struct Model {
    tasks: TaskMap<Entry>,
    total: AtomicUsize,
}

impl Default for Model {
    fn default() -> Self {
        Model {
            tasks: task_map(),
            total: AtomicUsize::new(0),
        }
    }
}

impl Model {
    /// The snapshot of `id` in `scope`, unless expired at `now`.
    pub(crate) fn get(&self, scope: &Scope, id: &TaskId, now: Timestamp) -> Option<Snapshot> {
        self.tasks.get(id).and_then(|entry| {
            (entry.scope == *scope && !entry.task.is_expired(now)).then(|| Snapshot {
                task: entry.task.clone(),
                scope: entry.scope.clone(),
            })
        })
    }

    /// Up to `limit` unexpired tasks of `scope` after `after`, in id order (a scan of the
    /// in-memory model).
    pub(crate) fn list(
        &self,
        scope: &Scope,
        after: Option<&TaskId>,
        limit: usize,
        now: Timestamp,
    ) -> Vec<Snapshot> {
        let tasks = self
            .tasks
            .iter()
            .filter(|entry| entry.scope == *scope && !entry.task.is_expired(now))
            .map(|entry| Snapshot {
                task: entry.task.clone(),
                scope: entry.scope.clone(),
            });
        tasks_runtime::store::list_page(tasks, after, limit)
    }

    /// The tasks among `ids` that exist and are unexpired at `now`, whatever their scope.
    pub(crate) fn snapshots(&self, ids: &[TaskId], now: Timestamp) -> Vec<Snapshot> {
        ids.iter()
            .filter_map(|id| self.tasks.get(id))
            .filter(|entry| !entry.task.is_expired(now))
            .map(|entry| Snapshot {
                task: entry.task.clone(),
                scope: entry.scope.clone(),
            })
            .collect()
    }

    /// The scope of committed task `id`, whatever it is (for the writer: a task's scope never
    /// changes).
    pub(crate) fn scope_of(&self, id: &TaskId) -> Option<Scope> {
        self.tasks.get(id).map(|entry| entry.scope.clone())
    }

    /// The work of `id` in `scope`, while the task is not terminal.
    pub(crate) fn work(&self, scope: &Scope, id: &TaskId) -> Option<Arc<Work>> {
        self.tasks.get(id).and_then(|entry| {
            (entry.scope == *scope)
                .then(|| entry.work.clone())
                .flatten()
        })
    }

    /// How many committed tasks unexpired at `now` are in each status.
    pub(crate) fn status_counts(&self, now: Timestamp) -> tasks_runtime::store::StatusCounts {
        let mut counts = tasks_runtime::store::StatusCounts::default();
        for entry in &self.tasks {
            if !entry.task.is_expired(now) {
                counts.add(entry.task.status(), 1);
            }
        }
        counts
    }

    /// The committed task count.
    pub(crate) fn total(&self) -> usize {
        self.total.load(Ordering::Acquire)
    }

    /// Publishes the committed task count (writer thread only).
    pub(crate) fn set_total(&self, total: usize) {
        self.total.store(total, Ordering::Release);
    }

    /// Adds a task as loaded at start-up.
    pub(crate) fn load(&self, id: TaskId, entry: Entry) {
        self.tasks.insert(id, entry);
    }

    /// Applies one committed change (writer thread only).
    pub(crate) fn apply(&self, effect: Effect) {
        match effect {
            Effect::Insert(id, entry) => {
                self.tasks.insert(id, entry);
            }
            Effect::Update {
                id,
                task,
                drop_work,
            } => {
                if let Some(mut entry) = self.tasks.get_mut(&id) {
                    entry.task = task;
                    if drop_work {
                        entry.work = None;
                    }
                }
            }
            Effect::Delete(ids) => {
                for id in ids {
                    self.tasks.remove(&id);
                }
            }
        }
    }
}
