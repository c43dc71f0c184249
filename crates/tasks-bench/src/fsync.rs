//! The fsync latency of the disk the SQLite databases live on: append 4 KiB to a scratch file
//! and `File::sync_data` it ([`SYNCS`] times in a run), as a SQLite WAL commit under
//! `synchronous=FULL` appends frames and syncs the log.

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use hdrhistogram::Histogram;

/// Appends (and syncs) per measurement.
pub(crate) const SYNCS: usize = 1000;
/// Bytes appended before each sync: one SQLite page.
pub(crate) const APPEND_BYTES: usize = 4096;

/// Latency of append + `sync_data`, in microseconds.
#[derive(Debug)]
pub(crate) struct FsyncLatency {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Slowest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
}

/// Measures `syncs` appends in a scratch file under `dir`, which is removed afterwards.
pub(crate) fn measure(dir: &Path, syncs: usize) -> Result<FsyncLatency, String> {
    let path = dir.join(format!("fsync-probe-{}", std::process::id()));
    let result = probe(&path, syncs);
    let _ = fs::remove_file(&path);
    result.map_err(|e| format!("fsync probe in {}: {e}", dir.display()))
}

fn probe(path: &Path, syncs: usize) -> std::io::Result<FsyncLatency> {
    let mut file = OpenOptions::new()
        .create_new(true)
        .append(true)
        .open(path)?;
    let page = vec![0x5a_u8; APPEND_BYTES];
    let mut micros = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    for _ in 0..syncs.max(1) {
        let started = Instant::now();
        file.write_all(&page)?;
        file.sync_data()?;
        let elapsed = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        micros.saturating_record(elapsed.max(1));
    }
    Ok(FsyncLatency {
        p50: micros.value_at_quantile(0.5),
        p90: micros.value_at_quantile(0.9),
        p99: micros.value_at_quantile(0.99),
        max: micros.max(),
        mean: micros.mean(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_and_leaves_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("tasks-bench-fsync-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let latency = measure(&dir, 20).unwrap();
        assert!(latency.p50 >= 1 && latency.p50 <= latency.p99 && latency.p99 <= latency.max);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        fs::remove_dir(&dir).unwrap();
    }
}
