//! Repeated runs of one throughput row, and which of them to believe.
//!
//! The machine is shared: another process may take CPU time from the server's or the load
//! generator's core during a run. Such a run is *disturbed*: the busy time of the pinned cores
//! exceeds the time the two processes themselves used by more than [`DISTURBED_PERCENT`] of
//! one core (on an otherwise idle machine the two agree within a few percent, since the
//! kernel's loopback work is charged to them). Rows are run in interleaved rounds (baseline,
//! get, creation, baseline, …), more rounds are added while rows lack clean runs, and the
//! report shows the median of the clean runs (of all runs when none is clean).

use crate::load::LoadResult;
use crate::pin::Pinning;

/// Foreign CPU time, in percent of one core, above which a run counts as disturbed.
pub(crate) const DISTURBED_PERCENT: f64 = 15.0;

/// The runs of one row, in order.
#[derive(Debug, Default)]
pub(crate) struct Series {
    runs: Vec<LoadResult>,
    disturbed: Vec<bool>,
}

impl Series {
    /// Adds a run, judging it with the CPU sets of `pinning` (never disturbed when unpinned).
    pub(crate) fn push(&mut self, run: LoadResult, pinning: &Pinning) {
        let foreign = run.foreign_cpu_percent(pinning.server_cpus(), pinning.client_cpus());
        self.disturbed
            .push(foreign.is_some_and(|percent| percent > DISTURBED_PERCENT));
        self.runs.push(run);
    }

    /// Whether another round is wanted after `done` rounds: fewer than `rounds` clean runs,
    /// and fewer than twice `rounds` runs in all.
    pub(crate) fn wants_more(&self, rounds: usize) -> bool {
        self.clean() < rounds && self.runs.len() < 2 * rounds
    }

    /// The runs the figures come from: the clean ones, or all when none is clean.
    fn used(&self) -> Vec<&LoadResult> {
        let clean: Vec<&LoadResult> = self
            .runs
            .iter()
            .zip(&self.disturbed)
            .filter(|(_, disturbed)| !**disturbed)
            .map(|(run, _)| run)
            .collect();
        if clean.is_empty() {
            self.runs.iter().collect()
        } else {
            clean
        }
    }

    /// The used run with the median requests/s (the lower middle one for an even count).
    pub(crate) fn median(&self) -> Option<&LoadResult> {
        let mut used = self.used();
        used.sort_by(|a, b| a.rps().total_cmp(&b.rps()));
        used.get(used.len().saturating_sub(1) / 2).copied()
    }

    /// The lowest and highest requests/s of the used runs.
    pub(crate) fn rps_range(&self) -> (f64, f64) {
        self.used()
            .iter()
            .map(|run| run.rps())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), rps| {
                (low.min(rps), high.max(rps))
            })
    }

    /// Number of runs.
    pub(crate) fn len(&self) -> usize {
        self.runs.len()
    }

    /// Number of clean (undisturbed) runs.
    pub(crate) fn clean(&self) -> usize {
        self.disturbed.iter().filter(|d| !**d).count()
    }

    /// Failed requests over every run, disturbed ones included.
    pub(crate) fn errors(&self) -> u64 {
        self.runs.iter().map(|run| run.errors).sum()
    }

    /// The first failure of any run.
    pub(crate) fn first_error(&self) -> Option<&str> {
        self.runs.iter().find_map(|run| run.first_error.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn run(requests: u64, errors: u64) -> LoadResult {
        LoadResult {
            requests,
            errors,
            first_error: (errors > 0).then(|| format!("error of {requests}")),
            window: Duration::from_secs(1),
            latency_quantiles: Vec::new(),
            server_cpu: Duration::ZERO,
            client_cpu: Duration::ZERO,
            writer_cpu: None,
            database_cpu: None,
            cores: Vec::new(),
        }
    }

    #[test]
    fn the_median_run_and_the_range() {
        let unpinned = Pinning::default();
        let mut series = Series::default();
        assert!(series.median().is_none());
        assert!(series.wants_more(3));
        for (requests, errors) in [(300, 0), (100, 1), (200, 0)] {
            series.push(run(requests, errors), &unpinned);
        }
        assert!(!series.wants_more(3));
        assert_eq!(series.median().map(|r| r.requests), Some(200));
        assert_eq!(series.rps_range(), (100.0, 300.0));
        assert_eq!(series.errors(), 1);
        assert_eq!(series.first_error(), Some("error of 100"));
        series.push(run(400, 0), &unpinned);
        assert_eq!(
            series.median().map(|r| r.requests),
            Some(200),
            "lower middle"
        );
        assert_eq!((series.len(), series.clean()), (4, 4));
    }

    #[test]
    fn disturbed_runs_are_set_aside_while_clean_ones_exist() {
        let mut series = Series {
            runs: vec![run(100, 0), run(500, 0), run(300, 0)],
            disturbed: vec![true, false, true],
        };
        assert_eq!(series.clean(), 1);
        assert_eq!(series.median().map(|r| r.requests), Some(500));
        assert_eq!(series.rps_range(), (500.0, 500.0));
        assert!(series.wants_more(2));
        series.disturbed = vec![true, true, true];
        assert_eq!(
            series.median().map(|r| r.requests),
            Some(300),
            "all, when none is clean"
        );
        series.runs.extend([run(1, 0), run(2, 0), run(3, 0)]);
        series.disturbed.extend([true, true, true]);
        assert!(!series.wants_more(3), "at most twice the rounds");
    }
}
