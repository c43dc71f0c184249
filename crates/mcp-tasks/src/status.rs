//! The live status line of a running task on a terminal, or plain lines when stderr is not a
//! terminal (one per change of status or message, or per tenth of progress).
//!
//! * A task that reports no progress: a spinner with the task id, the elapsed time, the status
//!   and the server's `statusMessage`.
//! * A task whose server shows its progress (`tasks_client::DetailedTask::progress`, this
//!   project's experimental `_meta` key) with a total: the same line without the spinner, and
//!   under it a progress bar with how much is done of the total (in the task's own unit), the
//!   percentage, the rate (units per second since this client first saw the progress) and the
//!   time left at that rate.
//! * Progress without a total: the spinner line, with how much is done and the rate.

use std::io::IsTerminal as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use tasks_client::{DetailedTask, Progress};
use tasks_core::TaskId;

/// Bar positions per unit of the task's progress: the bar counts thousandths, so a fractional
/// progress (seconds slept, say) moves it smoothly.
const SCALE: f64 = 1000.0;

/// The spinner line.
const SPINNER: &str = "{spinner} {prefix} [{elapsed}] {wide_msg}";
/// The line and the bar under it.
const BAR: &str = "{prefix} [{elapsed}] {wide_msg}\n  {bar:30} {done}/{total} ({percent}%) \
                   · {rate} · ETA {left}";
/// The spinner line with a progress of unknown total.
const COUNT: &str = "{spinner} {prefix} [{elapsed}] {done} done · {rate} · {wide_msg}";

/// What the line shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Spinner,
    Bar,
    Count,
}

/// What a plain line showed: the status text, and the tenth of the total the progress reached.
type Printed = (String, Option<u8>);

/// The status line. Cheap to clone (one shared bar).
#[derive(Clone, Debug)]
pub(crate) struct Status {
    bar: ProgressBar,
    live: bool,
    shape: Arc<Mutex<Shape>>,
    anchor: SharedAnchor,
    /// Without a terminal: what the last line printed showed.
    printed: Arc<Mutex<Option<Printed>>>,
}

/// `working`, or `working: Step 2 of 5` with the status message.
fn state_text(task: &DetailedTask) -> String {
    let status = task.state.status().as_str();
    match &task.task.status_message {
        Some(message) => format!("{status}: {}", crate::text::clean(message)),
        None => status.to_owned(),
    }
}

/// `working: Step 2 of 5`, and the progress when the server shows it: `(40 of 100, 40%)`.
pub(crate) fn describe(task: &DetailedTask) -> String {
    let state = state_text(task);
    match task.progress() {
        Some(progress) => format!("{state} ({})", progress_text(&progress)),
        None => state,
    }
}

/// `40 of 100, 40%`, or `40 done` without a total.
fn progress_text(progress: &Progress) -> String {
    match (progress.total(), progress.fraction()) {
        (Some(total), Some(fraction)) => format!(
            "{} of {}, {:.0}%",
            amount(progress.done()),
            amount(total),
            fraction * 100.0
        ),
        _ => format!("{} done", amount(progress.done())),
    }
}

/// A number as a person reads it: `3`, `1.5`, `0.25` (at most two decimals).
fn amount(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Template key `done`: the bar's position, in the task's unit.
fn done_key(state: &ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = w.write_str(&amount(state.pos() as f64 / SCALE));
}

/// Template key `total`: the bar's length, in the task's unit.
fn total_key(state: &ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = w.write_str(&amount(state.len().unwrap_or_default() as f64 / SCALE));
}

/// Where this client first saw the task's progress: the rate and the time left are measured
/// from there (the work may have run long before a `watch` began).
#[derive(Debug, Clone, Copy)]
struct Anchor {
    at: Instant,
    done: f64,
}

/// Shared by the line's template keys and [`Status`].
type SharedAnchor = Arc<Mutex<Option<Anchor>>>;

/// Units of progress per second since the anchor, once at least [`MEASURE_FROM`] has passed
/// and the progress moved.
fn rate(anchor: &SharedAnchor, state: &ProgressState) -> Option<f64> {
    let anchor = (*anchor.lock().unwrap_or_else(|e| e.into_inner()))?;
    let elapsed = anchor.at.elapsed();
    let moved = state.pos() as f64 / SCALE - anchor.done;
    (elapsed >= MEASURE_FROM && moved > 0.0).then(|| moved / elapsed.as_secs_f64())
}

/// How long the progress must be watched before a rate is shown.
const MEASURE_FROM: Duration = Duration::from_millis(500);

fn style(template: &str, anchor: &SharedAnchor) -> Option<ProgressStyle> {
    let style = ProgressStyle::with_template(template).ok()?;
    let (for_rate, for_left) = (anchor.clone(), anchor.clone());
    Some(
        style
            .with_key("done", done_key)
            .with_key("total", total_key)
            // `rate`: units per second; `left`: the estimated time to the total at that rate.
            .with_key(
                "rate",
                move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = match rate(&for_rate, state) {
                        Some(rate) => write!(w, "{}/s", amount(rate)),
                        None => w.write_str("…/s"),
                    };
                },
            )
            .with_key(
                "left",
                move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let left = state
                        .len()
                        .map(|len| len.saturating_sub(state.pos()) as f64 / SCALE);
                    let _ = match (rate(&for_left, state), left) {
                        (Some(rate), Some(left)) => {
                            let seconds = Duration::from_secs_f64((left / rate).min(1e9));
                            write!(w, "{:#}", indicatif::HumanDuration(seconds))
                        }
                        _ => w.write_str("…"),
                    };
                },
            ),
    )
}

impl Status {
    /// A status line on stderr, live when stderr is a terminal.
    pub(crate) fn new() -> Self {
        let live = std::io::stderr().is_terminal();
        // Hidden until a task is shown (a prompt before then must not draw an empty line).
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        let anchor = SharedAnchor::default();
        if let Some(style) = style(SPINNER, &anchor) {
            bar.set_style(style);
        }
        Status {
            bar,
            live,
            shape: Arc::new(Mutex::new(Shape::Spinner)),
            anchor,
            printed: Arc::default(),
        }
    }

    /// Starts showing task `id`.
    pub(crate) fn start(&self, id: &TaskId) {
        self.bar
            .set_prefix(format!("task {}", crate::text::clean(id.as_str())));
        self.bar.set_message("working");
        if self.live {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(Duration::from_millis(120));
        }
    }

    /// Shows a change of the task. Without a terminal, a line is printed when the status or
    /// message changes, or the progress reaches another tenth of its total (a long task does
    /// not print a line per report).
    pub(crate) fn update(&self, task: &DetailedTask) {
        if !self.live {
            let tenth = task
                .progress()
                .and_then(|p| p.fraction())
                .map(|f| (f * 10.0).floor() as u8);
            let shown = (state_text(task), tenth);
            let mut printed = self.printed.lock().unwrap_or_else(|e| e.into_inner());
            if printed.as_ref() != Some(&shown) {
                crate::say!(
                    "task {}: {}",
                    crate::text::clean(task.task.task_id.as_str()),
                    describe(task)
                );
                *printed = Some(shown);
            }
        }
        match task.progress() {
            Some(progress) => self.show_progress(&progress),
            None => {
                self.reshape(Shape::Spinner);
            }
        }
        self.bar.set_message(state_text(task));
    }

    /// Moves the bar to `progress`, switching to the bar (or the count) on the first one.
    fn show_progress(&self, progress: &Progress) {
        let positions = |value: f64| (value * SCALE).round() as u64;
        let shape = if progress.total().is_some() {
            Shape::Bar
        } else {
            Shape::Count
        };
        let first = self.reshape(shape);
        match progress.total() {
            Some(total) => self.bar.set_length(positions(total)),
            None => self.bar.unset_length(),
        }
        self.bar.set_position(positions(progress.done()));
        let mut anchor = self.anchor.lock().unwrap_or_else(|e| e.into_inner());
        if first || anchor.is_none() {
            *anchor = Some(Anchor {
                at: Instant::now(),
                done: progress.done(),
            });
        }
    }

    /// Switches the line to `shape`; whether it changed.
    fn reshape(&self, shape: Shape) -> bool {
        let mut current = self.shape.lock().unwrap_or_else(|e| e.into_inner());
        if *current == shape {
            return false;
        }
        *current = shape;
        let template = match shape {
            Shape::Spinner => SPINNER,
            Shape::Bar => BAR,
            Shape::Count => COUNT,
        };
        if let Some(style) = style(template, &self.anchor) {
            self.bar.set_style(style);
        }
        true
    }

    /// Shows a note in place of the status.
    pub(crate) fn note(&self, text: &str) {
        if !self.live {
            crate::say!("{text}");
        }
        self.bar.set_message(text.to_owned());
    }

    /// Runs `f` (a prompt) with the line hidden.
    pub(crate) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Removes the line.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_like_numbers() {
        assert_eq!(amount(3.0), "3");
        assert_eq!(amount(1.5), "1.5");
        assert_eq!(amount(0.25), "0.25");
        assert_eq!(amount(0.0), "0");
        assert_eq!(amount(2.004), "2");
        assert_eq!(amount(60.0), "60");
    }

    #[test]
    fn progress_is_described_with_its_share() {
        let of = |done, total| Progress::new(done, total).unwrap();
        assert_eq!(progress_text(&of(40.0, Some(100.0))), "40 of 100, 40%");
        assert_eq!(progress_text(&of(1.5, Some(4.0))), "1.5 of 4, 38%");
        assert_eq!(progress_text(&of(7.0, None)), "7 done");
    }
}
