//! Rows 5a, 5b and 7d (docs/benchmarks.md): resident memory per stored or parked task,
//! `tasks/get` on one of them before and after, the database size per task; and the fsync
//! latency of the SQLite disk.

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use tasks_client::TaskStatus;

use crate::fixtures::{Fixture, Servers};
use crate::generator::Call;
use crate::mcp::{self, Tally};
use crate::series::Series;

/// Tasks created (and settled) before the first memory reading of the stored rows, so
/// allocator arenas, connection buffers and maps have their working size; with the task the
/// payload size is read from, the tasks stored besides the measured ones.
const WARMUP_TASKS: usize = 1000;
pub(crate) const TASKS_BEFORE: usize = WARMUP_TASKS + 1;

/// One memory measurement: tasks added between two readings of the server's RSS.
#[derive(Debug)]
pub(crate) struct MemoryResult {
    pub count: usize,
    pub rss_before: u64,
    pub rss_after: u64,
    /// How long creating the tasks took.
    pub create_time: Duration,
    /// Failed creations, or tasks that did not reach their status.
    pub tally: Tally,
    /// Serialized size of one stored task's `result` (its payload) in bytes; stored rows only.
    pub payload_bytes: Option<usize>,
    /// `tasks/get` on one task with no other task, and with the row's tasks stored.
    pub gets: Option<[Series; 2]>,
}

impl MemoryResult {
    /// RSS growth per task, in bytes.
    pub(crate) fn per_task(&self) -> f64 {
        self.rss_after.saturating_sub(self.rss_before) as f64 / self.count.max(1) as f64
    }
}

/// Stored (`parked` false): creates [`WARMUP_TASKS`], reads RSS, creates `count` small
/// completed tasks (`slow_compute`, `seconds: 0`), reads RSS again. Parked: parks one
/// `confirm_delete` task, reads RSS, parks `count - 1` more, reads RSS again. With `gets`,
/// measures `tasks/get` on the first task before and after.
pub(crate) async fn run(
    servers: &Servers<'_>,
    fixture: &Fixture,
    count: usize,
    parked: bool,
    gets: bool,
) -> Result<MemoryResult, String> {
    let (tool, arguments, status) = match parked {
        true => (
            "confirm_delete",
            json!({"filename": "a.txt"}),
            TaskStatus::InputRequired,
        ),
        false => ("slow_compute", json!({"seconds": 0}), TaskStatus::Completed),
    };
    let url = fixture.url();
    let client = mcp::connect(url, parked).await?;
    let (client, arguments) = (&client, &arguments);
    let populate = |count, connections| async move {
        let started = Instant::now();
        let (ids, mut tally) = mcp::create(client, tool, arguments, count, connections).await;
        let create_time = started.elapsed();
        tally.add(mcp::wait_all(client, &ids, status, connections).await);
        (ids, create_time, tally)
    };
    let connections = servers.args.connections;
    let (id, payload_bytes) = if parked {
        let (ids, _, tally) = populate(1, 1).await;
        tally.ok("parking a task")?;
        (ids.first().ok_or("no task")?.to_string(), None)
    } else {
        populate(WARMUP_TASKS, connections).await.2.ok("warm-up")?;
        let (id, payload) = mcp::completed_task(url).await?;
        (id, Some(payload))
    };
    let get = Call::tasks_get(&id, status.as_str());
    let idle = if gets {
        Some(servers.series(fixture, &get).await?)
    } else {
        None
    };
    let rss_before = fixture.rss()?;
    let count = count.saturating_sub(usize::from(parked));
    let (_, create_time, tally) = populate(count, connections).await;
    let rss_after = fixture.rss()?;
    let gets = match idle {
        Some(idle) => Some([idle, servers.series(fixture, &get).await?]),
        None => None,
    };
    Ok(MemoryResult {
        count,
        rss_before,
        rss_after,
        create_time,
        tally,
        payload_bytes,
        gets,
    })
}

/// Appends (and syncs) per probe, and the bytes appended before each sync: one SQLite page.
pub(crate) const SYNCS: usize = 1000;
pub(crate) const APPEND_BYTES: usize = 4096;

/// Appends 4 KiB to a scratch file under `dir` and `sync_data`s it, [`SYNCS`] times, as a WAL
/// commit under `synchronous=FULL` appends frames and syncs the log; the latencies, shortest
/// first. The file is removed.
pub(crate) fn fsync_latency(dir: &Path) -> Result<Vec<Duration>, String> {
    let path = dir.join(format!("fsync-probe-{}", std::process::id()));
    let probe = || -> std::io::Result<Vec<Duration>> {
        let mut file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)?;
        let mut took = Vec::with_capacity(SYNCS);
        for _ in 0..SYNCS {
            let started = Instant::now();
            file.write_all(&[0x5a; APPEND_BYTES])?;
            file.sync_data()?;
            took.push(started.elapsed());
        }
        took.sort();
        Ok(took)
    };
    let result = probe();
    let _ = fs::remove_file(&path);
    result.map_err(|e| format!("fsync probe in {}: {e}", dir.display()))
}

/// Row 7d's result.
#[derive(Debug)]
pub(crate) struct StoredSqliteResult {
    /// Resident memory per stored task, measured as in row 5a.
    pub stored: MemoryResult,
    /// Tasks in the database at the end (row 5a's warm-up and payload tasks included).
    pub tasks: usize,
    /// `tasks.db` and `tasks.db-wal` while the fixture runs, after every task completed.
    pub db_bytes: u64,
    pub wal_bytes: u64,
    /// `tasks.db` after a clean stop (SQLite checkpoints the WAL into it and deletes it when
    /// the last connection closes cleanly); `None` when the fixture left its WAL.
    pub closed_bytes: Option<u64>,
}

/// Row 7d: row 5a's procedure on a SQLite `fixture`, then the database size while it runs, and
/// again after stopping it.
pub(crate) async fn stored(
    servers: &Servers<'_>,
    mut fixture: Fixture,
    count: usize,
) -> Result<StoredSqliteResult, String> {
    let stored = run(servers, &fixture, count, false, false).await?;
    let dir = fixture
        .dir
        .as_ref()
        .ok_or("not a SQLite fixture")?
        .path()
        .to_owned();
    let size = |name| fs::metadata(dir.join(name)).map_or(0, |meta| meta.len());
    let (db_bytes, wal_bytes) = (size("tasks.db"), size("tasks.db-wal"));
    fixture.stop();
    let closed_bytes = (!dir.join("tasks.db-wal").exists()).then(|| size("tasks.db"));
    let tasks = count + TASKS_BEFORE;
    Ok(StoredSqliteResult {
        stored,
        tasks,
        db_bytes,
        wal_bytes,
        closed_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_measures_and_leaves_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("tasks-bench-fsync-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let latency = fsync_latency(&dir).unwrap();
        assert_eq!(latency.len(), SYNCS);
        assert!(latency.first() <= latency.last());
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        fs::remove_dir(&dir).unwrap();
    }
}
