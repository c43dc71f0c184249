//! The report's durable store section (rows 7a–7d): the disk's fsync latency, throughput and
//! latency on SQLite next to the memory store's rows 2 and 3, database size per stored task,
//! and the durable store's targets.

use std::fmt::Write as _;

use super::{mib, Report};
use crate::fsync;
use crate::series::Series;

/// Durable creation target with `synchronous=FULL`, tasks per second.
const CREATE_TARGET: f64 = 10_000.0;
/// Durable `tasks/get` target: at least this share of the memory store's requests/s.
const GET_TARGET: f64 = 0.9;

impl Report {
    /// Median requests/s of `series` over `reference`'s.
    pub(super) fn ratio_to(series: &Series, reference: &Series) -> Option<f64> {
        Some(series.median()?.rps() / reference.median()?.rps())
    }

    pub(super) fn render_sqlite(&self, out: &mut String) {
        let durable = [
            &self.get_sqlite,
            &self.create_sqlite,
            &self.create_sqlite_normal,
        ];
        if durable.iter().all(|s| s.len() == 0) && self.stored_sqlite.is_none() {
            return;
        }
        let _ = writeln!(out, "\n### Durable store, SQLite (rows 7a–7d)\n");
        let _ = writeln!(
            out,
            "- each SQLite fixture: `--store sqlite:<fresh directory>/tasks.db` (removed after the fixture stops), `--sqlite-synchronous full` unless the row says NORMAL"
        );
        if let Some(f) = &self.fsync {
            let _ = writeln!(
                out,
                "- fsync latency of that disk (append {} bytes + `sync_data`, {} times): p50 {} µs, p90 {} µs, p99 {} µs, max {} µs, mean {:.0} µs",
                fsync::APPEND_BYTES,
                fsync::SYNCS,
                f.p50,
                f.p90,
                f.p99,
                f.max,
                f.mean
            );
        }
        self.render_sqlite_throughput(out);
        self.render_sqlite_stored(out);
        self.render_sqlite_targets(out);
    }

    fn render_sqlite_throughput(&self, out: &mut String) {
        let rows: Vec<(&str, &Series, &Series)> = vec![
            ("2 `tasks/get`, memory store", &self.get, &self.get),
            ("7a `tasks/get`, SQLite (FULL)", &self.get_sqlite, &self.get),
            ("3 creation, memory store", &self.create, &self.create),
            (
                "7b creation, SQLite FULL",
                &self.create_sqlite,
                &self.create,
            ),
            (
                "7c creation, SQLite NORMAL",
                &self.create_sqlite_normal,
                &self.create,
            ),
        ];
        let rows: Vec<_> = rows.into_iter().filter(|(_, s, _)| s.len() > 0).collect();
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "\n| row | requests/s | range | clean runs | p50 ms | p90 ms | p99 ms | p99.9 ms | vs memory (row 2 / row 3) | vs baseline | server CPU µs/request | server process CPU | writer thread CPU | server core busy | generator core busy | errors |"
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        let pinning = &self.setup.pinning;
        for (name, series, reference) in rows {
            let Some(r) = series.median() else { continue };
            let (low, high) = series.rps_range();
            let vs_memory =
                Self::ratio_to(series, reference).map_or("—".to_owned(), |x| format!("{x:.2}"));
            let vs_baseline = self
                .ratio(series)
                .map_or("—".to_owned(), |x| format!("{x:.2}"));
            let writer = r
                .writer_cpu_percent()
                .map_or("—".to_owned(), |x| format!("{x:.0} %"));
            let _ = writeln!(
                out,
                "| {name} | {:.0} | {low:.0}–{high:.0} | {}/{} | {:.3} | {:.3} | {:.3} | {:.3} | {vs_memory} | {vs_baseline} | {:.1} | {:.0} % | {writer} | {} | {} | {} |",
                r.rps(),
                series.clean(),
                series.len(),
                r.latency_ms(0.5),
                r.latency_ms(0.9),
                r.latency_ms(0.99),
                r.latency_ms(0.999),
                r.server_micros_per_request(),
                r.server_cpu_percent(),
                self.setup.busy(&r.cores, pinning.server_cpus(), r.window),
                self.setup.busy(&r.cores, pinning.client_cpus(), r.window),
                series.errors()
            );
        }
    }

    fn render_sqlite_stored(&self, out: &mut String) {
        let Some(s) = &self.stored_sqlite else { return };
        let m = &s.stored.memory;
        let closed = s
            .closed_per_task()
            .map_or("— (WAL left behind)".to_owned(), |x| format!("{x:.0}"));
        let _ = writeln!(
            out,
            "\n| row | tasks in database | `tasks.db` MiB | `tasks.db-wal` MiB | (db + WAL) / task bytes | `tasks.db` after a clean stop / task bytes | RSS/task bytes | created/s | errors |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        let _ = writeln!(
            out,
            "| 7d stored completed (`slow_compute` `seconds: 0`), SQLite FULL | {} | {:.1} | {:.1} | {:.0} | {closed} | {:.0} | {:.0} | {} |",
            s.tasks,
            mib(s.db_bytes),
            mib(s.wal_bytes),
            s.running_per_task(),
            m.per_task(),
            m.count as f64 / m.create_time.as_secs_f64(),
            m.errors
        );
    }

    fn render_sqlite_targets(&self, out: &mut String) {
        let mut targets: Vec<(String, String, bool)> = Vec::new();
        if let Some(r) = self.create_sqlite.median() {
            targets.push((
                format!("durable creation (FULL) ≥ {CREATE_TARGET:.0} tasks/s"),
                format!("{:.0} tasks/s", r.rps()),
                r.rps() >= CREATE_TARGET && self.create_sqlite.errors() == 0,
            ));
        }
        if let Some(ratio) = Self::ratio_to(&self.get_sqlite, &self.get) {
            targets.push((
                "`tasks/get` on a durable task within 10 % of the memory store".into(),
                format!("{ratio:.2} of row 2"),
                ratio >= GET_TARGET && self.get_sqlite.errors() + self.get.errors() == 0,
            ));
        }
        if targets.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n| durable store target | reached | met |");
        let _ = writeln!(out, "|---|---:|---|");
        for (target, reached, met) in targets {
            let met = if met { "yes" } else { "**no**" };
            let _ = writeln!(out, "| {target} | {reached} | {met} |");
        }
    }
}
