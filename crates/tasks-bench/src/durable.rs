//! What only the durable SQLite store has: the fsync latency of the disk its databases live
//! on, and row 7d, the database size per stored small completed task.

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::fixtures::{Fixture, Servers};
use crate::memory::{self, MemoryResult};

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
    fixture: Fixture,
    count: usize,
) -> Result<StoredSqliteResult, String> {
    let stored = memory::run(servers, &fixture, count, false, false).await?;
    let Fixture {
        server,
        dir: Some(dir),
        ..
    } = fixture
    else {
        return Err("not a SQLite fixture".into());
    };
    let size = |name| fs::metadata(dir.0.join(name)).map_or(0, |meta| meta.len());
    let (db_bytes, wal_bytes) = (size("tasks.db"), size("tasks.db-wal"));
    drop(server);
    let closed_bytes = (!dir.0.join("tasks.db-wal").exists()).then(|| size("tasks.db"));
    let tasks = count + memory::TASKS_BEFORE;
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
