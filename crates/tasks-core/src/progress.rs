//! How far a task's work is: [`Progress`], and the experimental `_meta` key that shows it.
//!
//! MCP 2026-07-28 gives a task a `statusMessage` and nothing more: SEP-2663 "Task Status
//! Notifications" says `notifications/progress` "MUST NOT be sent on the `subscriptions/listen`
//! stream for a task, and are not supported on tasks in general"
//! (<https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md>).
//! This server adds a fraction a person can watch, as an **experimental vendor extension**: a
//! task whose work reported progress carries it in the `_meta` of its `tasks/get` result and
//! of its `notifications/tasks` under [`META_PROGRESS`]:
//!
//! ```json
//! "_meta": {"dev.mcp-tasks/progress": {"progress": 40, "total": 100}}
//! ```
//!
//! * `progress`: a number ≥ 0, how much is done, in the work's own unit (steps, bytes,
//!   seconds, …); it never goes down for one task, a re-run after a crash included;
//! * `total`: a number ≥ `progress` and > 0, how much there is in all, in the same unit;
//!   absent when the work does not know;
//! * whole numbers are written as JSON integers.
//!
//! Other clients ignore it: MCP 2026-07-28 basic, "`_meta`", lets an implementation carry its
//! own keys under a prefix of its own
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/index>), and the key's
//! prefix (`dev.mcp-tasks/`) names this project, none reserved for MCP. The key and its shape
//! may change in any minor release while they are experimental (docs/api-policy.md).
//!
//! On the 2025-11-25 session path the same progress goes out as that revision allows:
//! `notifications/progress` with the creating request's `progressToken`
//! ([`crate::sessions::tasks::progress_notification`]).

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use crate::number::Number;
use crate::JsonObject;

/// The `_meta` key of a task's [`Progress`] on `tasks/get` results and `notifications/tasks`
/// (experimental: this server's own, not part of MCP 2026-07-28 or SEP-2663). Its value is
/// `{"progress": <number>, "total"?: <number>}`.
pub const META_PROGRESS: &str = "dev.mcp-tasks/progress";

/// How far a task's work is: `done` of `total` (when known), in the work's own unit.
///
/// Always valid: `done` is finite and not negative; `total`, when present, is finite, above
/// zero and not below `done`. The serde form (on the wire and in stores) is
/// `{"progress": done, "total"?: total}`, and reading one checks the same rules.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "RawProgress")]
pub struct Progress {
    done: f64,
    total: Option<f64>,
}

impl Progress {
    /// `done` of `total`, or `None` when that is not a valid progress (see [`Progress`]).
    pub fn new(done: f64, total: Option<f64>) -> Option<Progress> {
        let done_ok = done.is_finite() && done >= 0.0;
        let total_ok = total.is_none_or(|t| t.is_finite() && t > 0.0 && t >= done);
        (done_ok && total_ok).then_some(Progress {
            // -0.0 is 0.
            done: done + 0.0,
            total,
        })
    }

    /// How much is done.
    pub fn done(&self) -> f64 {
        self.done
    }

    /// How much there is in all, when known.
    pub fn total(&self) -> Option<f64> {
        self.total
    }

    /// `done / total` in `0.0..=1.0`, when the total is known.
    pub fn fraction(&self) -> Option<f64> {
        self.total.map(|total| (self.done / total).clamp(0.0, 1.0))
    }

    /// Whether this progress is ahead of `previous`: `done` is greater (or there was none).
    /// Only such a progress is ever taken: a task's progress never moves backwards.
    pub fn advances(&self, previous: Option<&Progress>) -> bool {
        previous.is_none_or(|previous| self.done > previous.done)
    }

    /// The progress in `meta` under [`META_PROGRESS`], when present and valid (a client
    /// reading a `tasks/get` result or a `notifications/tasks`).
    pub fn from_meta(meta: &JsonObject) -> Option<Progress> {
        Progress::deserialize(meta.get(META_PROGRESS)?).ok()
    }
}

impl Serialize for Progress {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("progress", &Number(self.done))?;
        if let Some(total) = self.total {
            map.serialize_entry("total", &Number(total))?;
        }
        map.end()
    }
}

/// The serde form as read, before its rules are checked.
#[derive(Deserialize)]
struct RawProgress {
    progress: f64,
    #[serde(default)]
    total: Option<f64>,
}

impl TryFrom<RawProgress> for Progress {
    type Error = &'static str;

    fn try_from(raw: RawProgress) -> Result<Self, Self::Error> {
        Progress::new(raw.progress, raw.total)
            .ok_or("progress must be a number >= 0, and total (if any) a number > 0 not below it")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_valid_progress_is_made_or_read() {
        assert!(Progress::new(0.0, None).is_some());
        assert!(Progress::new(3.0, Some(3.0)).is_some());
        assert!(Progress::new(0.5, Some(1.0)).is_some());
        for (done, total) in [
            (-1.0, None),
            (f64::NAN, None),
            (f64::INFINITY, None),
            (2.0, Some(1.0)),
            (0.0, Some(0.0)),
            (1.0, Some(f64::NAN)),
            (1.0, Some(f64::INFINITY)),
        ] {
            assert_eq!(Progress::new(done, total), None, "{done} of {total:?}");
        }
        for bad in [
            json!({"progress": -1}),
            json!({"progress": 5, "total": 4}),
            json!({"progress": "1"}),
            json!({"total": 4}),
        ] {
            assert!(
                serde_json::from_value::<Progress>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_serde_form_writes_whole_numbers_as_integers() {
        let whole = Progress::new(40.0, Some(100.0)).unwrap();
        assert_eq!(
            serde_json::to_string(&whole).unwrap(),
            r#"{"progress":40,"total":100}"#
        );
        let part = Progress::new(1.5, None).unwrap();
        assert_eq!(serde_json::to_string(&part).unwrap(), r#"{"progress":1.5}"#);
        for progress in [whole, part, Progress::new(-0.0, None).unwrap()] {
            let text = serde_json::to_string(&progress).unwrap();
            assert_eq!(serde_json::from_str::<Progress>(&text).unwrap(), progress);
        }
        assert_eq!(whole.fraction(), Some(0.4));
        assert_eq!(part.fraction(), None);
    }

    #[test]
    fn progress_only_advances() {
        let two = Progress::new(2.0, Some(10.0)).unwrap();
        let three = Progress::new(3.0, None).unwrap();
        assert!(two.advances(None));
        assert!(three.advances(Some(&two)));
        assert!(!two.advances(Some(&three)));
        assert!(!two.advances(Some(&two)));
    }

    #[test]
    fn it_is_read_from_a_meta_object() {
        let meta = json!({META_PROGRESS: {"progress": 1, "total": 4}, "other": 1});
        let meta = meta.as_object().unwrap();
        assert_eq!(Progress::from_meta(meta), Progress::new(1.0, Some(4.0)));
        assert_eq!(Progress::from_meta(&JsonObject::new()), None);
        let bad = json!({META_PROGRESS: {"progress": 5, "total": 4}});
        assert_eq!(Progress::from_meta(bad.as_object().unwrap()), None);
    }
}
