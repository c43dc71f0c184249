//! Repeated runs of one throughput row, and which of them to believe (docs/benchmarks.md,
//! "Noise control"): a run is *disturbed* when the pinned cores were busy beyond what the
//! processes themselves used by more than [`DISTURBED_PERCENT`] of one core; the report shows
//! the median of the clean runs (of all runs when none is clean).

use crate::generator::Run;
use crate::pin::Pinning;

/// Foreign CPU time, in percent of one core, above which a run counts as disturbed.
pub(crate) const DISTURBED_PERCENT: f64 = 15.0;

/// The runs of one row, in order, each with whether it was disturbed.
#[derive(Debug, Default)]
pub(crate) struct Series {
    runs: Vec<(Run, bool)>,
}

impl Series {
    /// Adds a run, judging it with the CPU sets of `pinning` (never disturbed when unpinned).
    pub(crate) fn push(&mut self, run: Run, pinning: &Pinning) {
        let foreign = run.foreign_cpu_percent(pinning.server_cpus(), pinning.client_cpus());
        let disturbed = foreign.is_some_and(|percent| percent > DISTURBED_PERCENT);
        self.runs.push((run, disturbed));
    }

    /// Whether another run is wanted: fewer than `rounds` clean runs, and fewer than twice
    /// `rounds` runs in all.
    pub(crate) fn wants_more(&self, rounds: u64) -> bool {
        let (clean, all) = (self.clean() as u64, self.runs.len() as u64);
        clean < rounds && all < 2 * rounds
    }

    /// The runs the figures come from, by requests/s: the clean ones, or all when none is.
    fn used(&self) -> Vec<&Run> {
        let clean = self.clean() > 0;
        let runs = self
            .runs
            .iter()
            .filter(|(_, disturbed)| !(clean && *disturbed));
        let mut used: Vec<&Run> = runs.map(|(run, _)| run).collect();
        used.sort_by(|a, b| a.rps().total_cmp(&b.rps()));
        used
    }

    /// The used run with the median requests/s (the lower middle one for an even count).
    pub(crate) fn median(&self) -> Option<&Run> {
        let used = self.used();
        used.get(used.len().saturating_sub(1) / 2).copied()
    }

    /// The lowest and highest requests/s of the used runs.
    pub(crate) fn rps_range(&self) -> (f64, f64) {
        let used = self.used();
        let rps = |run: Option<&&Run>| run.map_or(0.0, |run| run.rps());
        (rps(used.first()), rps(used.last()))
    }

    pub(crate) fn len(&self) -> usize {
        self.runs.len()
    }

    /// Number of undisturbed runs.
    pub(crate) fn clean(&self) -> usize {
        self.runs.iter().filter(|(_, disturbed)| !disturbed).count()
    }

    /// Failed requests over every run, disturbed ones included.
    pub(crate) fn errors(&self) -> u64 {
        self.runs.iter().map(|(run, _)| run.errors).sum()
    }

    pub(crate) fn first_error(&self) -> Option<&str> {
        self.runs
            .iter()
            .find_map(|(run, _)| run.first_error.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn run(requests: u64) -> Run {
        Run {
            requests,
            window: Duration::from_secs(1),
            ..Run::default()
        }
    }

    #[test]
    fn the_median_of_the_clean_runs() {
        let mut series = Series::default();
        assert!(series.median().is_none() && series.wants_more(3));
        for requests in [300, 100, 200] {
            series.push(run(requests), &Pinning::default());
        }
        assert!(!series.wants_more(3));
        assert_eq!(series.median().map(|r| r.requests), Some(200));
        assert_eq!(series.rps_range(), (100.0, 300.0));
        series.runs = vec![(run(100), true), (run(500), false), (run(300), true)];
        assert_eq!(series.median().map(|r| r.requests), Some(500));
        assert!(series.wants_more(2));
        series
            .runs
            .iter_mut()
            .for_each(|(_, disturbed)| *disturbed = true);
        assert_eq!(
            series.median().map(|r| r.requests),
            Some(300),
            "all, when none is clean"
        );
    }
}
