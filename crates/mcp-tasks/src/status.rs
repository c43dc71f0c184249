//! The live status line of a running task on a terminal, or plain lines when stderr is not a
//! terminal (one per change of status or of the message's wording, or per tenth of progress;
//! a message whose numbers alone move, as `Step 3 of 9`, at most every [`QUIET`]).
//!
//! * A task that reports no progress: a spinner with the task id, the elapsed time, the status
//!   and the server's `statusMessage`.
//! * A task whose server shows its progress (`tasks_client::DetailedTask::progress`, this
//!   project's experimental `_meta` key) with a total: the same line without the spinner, and
//!   under it a progress bar with how much is done of the total (in the task's own unit), the
//!   percentage, the rate (units per second since this client first saw the progress) and the
//!   time left at that rate. The unit is guessed from the status message when it names the
//!   progress's numbers with one (`Indexed 40 of 100 pages`: `2 pages/s`, [`guess_unit`]);
//!   else the amounts and the rate are plain numbers (`2/s`).
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
const BAR: &str = "{prefix} [{elapsed}] {wide_msg}\n  {bar:30} {done}/{total}{unit} ({percent}%) \
                   · {rate} · ETA {left}";
/// The spinner line with a progress of unknown total.
const COUNT: &str = "{spinner} {prefix} [{elapsed}] {done}{unit} done · {rate} · {wide_msg}";

/// The three lines while the server is unreachable: the outage first (it must not be cut at
/// 80 columns), no rate nor time left (the progress cannot move while it lasts).
const SPINNER_OUTAGE: &str = "{spinner} {outage} · {prefix} [{elapsed}] {wide_msg}";
const BAR_OUTAGE: &str = "{outage} · {prefix} [{elapsed}] {wide_msg}\n  {bar:30} \
                          {done}/{total}{unit} ({percent}%)";
const COUNT_OUTAGE: &str = "{spinner} {outage} · {prefix} [{elapsed}] {done}{unit} done · \
                            {wide_msg}";

/// An id longer than this is shortened on the live line (it was printed whole above it).
const SHORT_ID: usize = 12;

/// Without a terminal, how often a line whose numbers alone changed may be printed (when the
/// progress has no total to count tenths of).
const QUIET: Duration = Duration::from_secs(5);

/// The template of `shape`, during an outage or not.
fn template(shape: Shape, outage: bool) -> &'static str {
    match (shape, outage) {
        (Shape::Spinner, false) => SPINNER,
        (Shape::Bar, false) => BAR,
        (Shape::Count, false) => COUNT,
        (Shape::Spinner, true) => SPINNER_OUTAGE,
        (Shape::Bar, true) => BAR_OUTAGE,
        (Shape::Count, true) => COUNT_OUTAGE,
    }
}

/// What the line shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Spinner,
    Bar,
    Count,
}

/// What a plain line showed, and when.
#[derive(Debug, Clone, PartialEq)]
struct Printed {
    /// The status and message (`working: Step 2 of 5`).
    text: String,
    /// `text` with each number written `#`: lines of one shape differ in their numbers only.
    shape: String,
    /// The tenth of the total the progress reached.
    tenth: Option<u8>,
    at: Instant,
}

impl Printed {
    fn new(text: String, tenth: Option<u8>, at: Instant) -> Self {
        Printed {
            shape: shape(&text),
            text,
            tenth,
            at,
        }
    }
}

/// `text` with each run of digits (and the dots between them) written `#`.
fn shape(text: &str) -> String {
    let mut shaped = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        let numeric = c.is_ascii_digit() || (in_number && c == '.');
        if numeric {
            if !in_number {
                shaped.push('#');
            }
        } else {
            shaped.push(c);
        }
        in_number = numeric;
    }
    shaped
}

/// Whether a plain line for `next` is worth printing after `last`: the status or the
/// message's wording changed, the progress reached another tenth, or only the numbers moved
/// and, without a total to count tenths of, [`QUIET`] passed. A repeat is never printed.
fn worth_printing(last: Option<&Printed>, next: &Printed) -> bool {
    let Some(last) = last else {
        return true;
    };
    if last.shape != next.shape || last.tenth != next.tenth {
        return true;
    }
    last.text != next.text
        && next.tenth.is_none()
        && next.at.saturating_duration_since(last.at) >= QUIET
}

/// The unit of `progress` named in `message`: the word after a number of the message equal to
/// the progress's total, or else to how much is done (`Indexed 40 of 100 pages`: `pages`;
/// `Computing: 1.2 of 5 s`: `s`). `None` when no such number is followed by a word (`Step 2
/// of 5`), or the word is a connective (`of`, `to`, …) or longer than 16 letters.
pub(crate) fn guess_unit(message: &str, progress: &Progress) -> Option<String> {
    const CONNECTIVES: &[&str] = &[
        "of",
        "and",
        "or",
        "to",
        "in",
        "at",
        "by",
        "from",
        "out",
        "per",
        "for",
        "more",
        "left",
        "done",
        "remaining",
        "x",
    ];
    let words: Vec<&str> = message.split_whitespace().collect();
    let unit_after = |target: f64| {
        words.windows(2).find_map(|pair| {
            let number: f64 = pair[0]
                .trim_matches(|c: char| !c.is_ascii_digit() && c != '.')
                .parse()
                .ok()?;
            let close = (number - target).abs() <= (target.abs() * 0.05).max(0.051);
            let word = pair[1].trim_end_matches(|c: char| ",.;:)!?".contains(c));
            let is_unit = !word.is_empty()
                && word.chars().count() <= 16
                && word.chars().all(char::is_alphabetic)
                && !CONNECTIVES.contains(&word.to_lowercase().as_str());
            (close && is_unit).then(|| word.to_owned())
        })
    };
    progress
        .total()
        .and_then(unit_after)
        .or_else(|| unit_after(progress.done()))
}

/// The status line. Cheap to clone (one shared bar).
#[derive(Clone, Debug)]
pub(crate) struct Status {
    bar: ProgressBar,
    live: bool,
    shape: Arc<Mutex<Shape>>,
    anchor: SharedAnchor,
    /// The unit of the progress, as last guessed from the status message ([`guess_unit`]).
    unit: SharedUnit,
    /// Without a terminal: what the last line printed showed.
    printed: Arc<Mutex<Option<Printed>>>,
    /// The outage under way, if the server is unreachable.
    outage: SharedOutage,
}

/// An outage the live line shows (from the watch's retry notices).
#[derive(Debug, Clone)]
pub(crate) struct OutageNote {
    /// `unreachable`, or `unavailable (HTTP 503)`.
    pub(crate) failure: String,
    /// When the first request failed.
    pub(crate) since: Instant,
    /// How long failures are retried (`--retry-for`).
    pub(crate) retry_for: Duration,
    /// The request being tried (2 after the first failure).
    pub(crate) attempt: u32,
}

/// Shared by the line's template keys and [`Status`].
type SharedOutage = Arc<Mutex<Option<OutageNote>>>;

/// `server unreachable · 7 s/300 s · attempt 3`: the outage as of `now` (the seconds count
/// on each redraw, not only at each retry).
fn outage_text(note: &OutageNote, now: Instant) -> String {
    format!(
        "server {} · {} s/{} s · attempt {}",
        note.failure,
        now.saturating_duration_since(note.since).as_secs(),
        note.retry_for.as_secs(),
        note.attempt
    )
}

/// `task LHESs0lD…`: the live line's prefix, a long id shortened.
fn prefix(id: &str) -> String {
    let id = crate::text::clean(id);
    if id.chars().count() > SHORT_ID {
        let short: String = id.chars().take(8).collect();
        format!("task {short}…")
    } else {
        format!("task {id}")
    }
}

/// The text of the live line: [`state_text`], but a task waiting for input says only the keys
/// it waits for (`input_required: confirm-delete`): the server's `Waiting for input: …` put
/// them past the end of an 80-column line.
fn live_text(task: &DetailedTask) -> String {
    let waiting = task
        .task
        .status_message
        .as_deref()
        .and_then(|m| m.strip_prefix(tasks_core::MESSAGE_WAITING_PREFIX));
    match (task.state.status(), waiting) {
        (tasks_core::TaskStatus::InputRequired, Some(keys)) => {
            format!("input_required: {}", crate::text::clean(keys))
        }
        _ => state_text(task),
    }
}

/// Shared by the line's template keys and [`Status`].
type SharedUnit = Arc<Mutex<Option<String>>>;

/// The unit, if known.
fn unit_of(unit: &SharedUnit) -> Option<String> {
    unit.lock().unwrap_or_else(|e| e.into_inner()).clone()
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

/// `2 pages/s`, or `2/s` without a unit.
fn rate_text(rate: Option<f64>, unit: Option<&str>) -> String {
    let rate = rate.map_or_else(|| "…".to_owned(), amount);
    match unit {
        Some(unit) => format!("{rate} {unit}/s"),
        None => format!("{rate}/s"),
    }
}

fn style(
    template: &str,
    anchor: &SharedAnchor,
    unit: &SharedUnit,
    outage: &SharedOutage,
) -> Option<ProgressStyle> {
    let style = ProgressStyle::with_template(template).ok()?;
    let outage = outage.clone();
    let (for_rate, for_left) = (anchor.clone(), anchor.clone());
    let (unit_for_rate, unit_for_amount) = (unit.clone(), unit.clone());
    Some(
        style
            .with_key("done", done_key)
            .with_key("total", total_key)
            .with_key(
                "outage",
                move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let note = outage.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    if let Some(note) = note {
                        let _ = w.write_str(&outage_text(&note, Instant::now()));
                    }
                },
            )
            // `unit`: ` pages` after an amount, when the unit is known.
            .with_key(
                "unit",
                move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    if let Some(unit) = unit_of(&unit_for_amount) {
                        let _ = write!(w, " {unit}");
                    }
                },
            )
            // `rate`: units per second; `left`: the estimated time to the total at that rate.
            .with_key(
                "rate",
                move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let unit = unit_of(&unit_for_rate);
                    let _ = w.write_str(&rate_text(rate(&for_rate, state), unit.as_deref()));
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
        let unit = SharedUnit::default();
        let outage = SharedOutage::default();
        if let Some(style) = style(SPINNER, &anchor, &unit, &outage) {
            bar.set_style(style);
        }
        Status {
            bar,
            live,
            shape: Arc::new(Mutex::new(Shape::Spinner)),
            anchor,
            unit,
            printed: Arc::default(),
            outage,
        }
    }

    /// Starts showing task `id`.
    pub(crate) fn start(&self, id: &TaskId) {
        self.bar.set_prefix(prefix(id.as_str()));
        self.bar.set_message("working");
        if self.live {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(Duration::from_millis(120));
        }
    }

    /// Shows a change of the task. Without a terminal, a line is printed only when it is
    /// worth it ([`worth_printing`]: a long task does not print a line per report).
    pub(crate) fn update(&self, task: &DetailedTask) {
        if let (Some(progress), Some(message)) = (task.progress(), &task.task.status_message) {
            if let Some(unit) = guess_unit(message, &progress) {
                *self.unit.lock().unwrap_or_else(|e| e.into_inner()) = Some(unit);
            }
        }
        if !self.live {
            let tenth = task
                .progress()
                .and_then(|p| p.fraction())
                .map(|f| (f * 10.0).floor() as u8);
            let shown = Printed::new(state_text(task), tenth, Instant::now());
            let mut printed = self.printed.lock().unwrap_or_else(|e| e.into_inner());
            if worth_printing(printed.as_ref(), &shown) {
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
        self.bar.set_message(live_text(task));
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
        self.restyle(shape);
        true
    }

    /// Sets the template of `shape`, in its outage form while there is one.
    fn restyle(&self, shape: Shape) {
        let outage = self
            .outage
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        if let Some(style) = style(
            template(shape, outage),
            &self.anchor,
            &self.unit,
            &self.outage,
        ) {
            self.bar.set_style(style);
        }
    }

    /// Shows an outage first on the live line (counting its seconds, without the rate and
    /// time left), or with `None` ends it: the rate is then measured as if the outage had
    /// not been (the progress could not move during it).
    pub(crate) fn outage(&self, note: Option<OutageNote>) {
        let ended = {
            let mut current = self.outage.lock().unwrap_or_else(|e| e.into_inner());
            let was = current.take();
            let began = was.is_none() && note.is_some();
            *current = note;
            match (&was, &*current) {
                (Some(was), None) => Some(was.since.elapsed()),
                _ if began => Some(Duration::ZERO),
                _ => None,
            }
        };
        let Some(lasted) = ended else {
            return;
        };
        if let Some(anchor) = self
            .anchor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            anchor.at = anchor.at.checked_add(lasted).unwrap_or(anchor.at);
        }
        let shape = *self.shape.lock().unwrap_or_else(|e| e.into_inner());
        self.restyle(shape);
    }

    /// Shows a note in place of the status.
    pub(crate) fn note(&self, text: &str) {
        if !self.live {
            crate::say!("{text}");
        }
        self.bar.set_message(text.to_owned());
    }

    /// Prints `text` as a line of its own, above the live line (which stays).
    pub(crate) fn line(&self, text: &str) {
        self.bar.suspend(|| crate::say!("{text}"));
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
    fn units_are_guessed_from_numbers_the_message_shares_with_the_progress() {
        let of = |done, total| Progress::new(done, total).unwrap();
        let guess = |message: &str, progress: Progress| guess_unit(message, &progress);
        assert_eq!(
            guess("Indexed 40 of 100 pages", of(40.0, Some(100.0))).as_deref(),
            Some("pages")
        );
        assert_eq!(
            guess("Computing: 1.2 of 5 s", of(1.234, Some(5.0))).as_deref(),
            Some("s")
        );
        assert_eq!(
            guess("Downloaded 3 MB, still going", of(3.0, None)).as_deref(),
            Some("MB")
        );
        assert_eq!(guess("12 files.", of(12.0, None)).as_deref(), Some("files"));
        for (message, progress) in [
            ("Step 2 of 5", of(2.0, Some(5.0))),
            ("Step 2 of 5 (attempt 1)", of(2.0, Some(5.0))),
            ("Working on 7 items", of(40.0, Some(100.0))),
            ("Task accepted", of(1.0, Some(2.0))),
            ("3 to go", of(3.0, None)),
        ] {
            assert_eq!(guess(message, progress), None, "{message}");
        }
    }

    #[test]
    fn rates_carry_the_unit_when_known() {
        assert_eq!(rate_text(Some(2.0), Some("pages")), "2 pages/s");
        assert_eq!(rate_text(Some(1.5), None), "1.5/s");
        assert_eq!(rate_text(None, Some("s")), "… s/s");
        assert_eq!(rate_text(None, None), "…/s");
    }

    #[test]
    fn plain_lines_skip_repeats_and_numbers_that_alone_move() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let line = |text: &str, tenth, ms| Printed::new(text.to_owned(), tenth, at(ms));
        let first = line("working: Computing: 0.1 of 5 s", Some(0), 0);
        assert!(worth_printing(None, &first));
        // The same tenth: the moving seconds are not worth a line, however long.
        assert!(!worth_printing(
            Some(&first),
            &line("working: Computing: 0.4 of 5 s", Some(0), 400)
        ));
        assert!(worth_printing(
            Some(&first),
            &line("working: Computing: 0.5 of 5 s", Some(1), 500)
        ));
        // Another wording or status is.
        assert!(worth_printing(
            Some(&first),
            &line("working: Finishing", Some(0), 450)
        ));
        assert!(worth_printing(
            Some(&first),
            &line("input_required: Computing: 0.1 of 5 s", Some(0), 450)
        ));
        // Without a total: numbers alone print once per QUIET, a repeat never.
        let step = line("working: Step 2 of 9", None, 0);
        assert!(!worth_printing(
            Some(&step),
            &line("working: Step 3 of 9", None, 4_000)
        ));
        assert!(worth_printing(
            Some(&step),
            &line("working: Step 3 of 9", None, 5_000)
        ));
        assert!(!worth_printing(
            Some(&step),
            &line("working: Step 2 of 9", None, 60_000)
        ));
        assert_eq!(shape("Step 12 of 1.5 s."), "Step # of # s.");
    }

    #[test]
    fn progress_is_described_with_its_share() {
        let of = |done, total| Progress::new(done, total).unwrap();
        assert_eq!(progress_text(&of(40.0, Some(100.0))), "40 of 100, 40%");
        assert_eq!(progress_text(&of(1.5, Some(4.0))), "1.5 of 4, 38%");
        assert_eq!(progress_text(&of(7.0, None)), "7 done");
    }

    /// A task as the server shows it, from JSON.
    fn task(status: &str, message: &str, extra: serde_json::Value) -> DetailedTask {
        let mut task = serde_json::json!({
            "taskId": "LHESs0lDzitu0uylXbRiAOauBS-JyYmc",
            "status": status,
            "statusMessage": message,
            "createdAt": "2026-12-03T17:12:34Z",
            "lastUpdatedAt": "2026-12-03T17:12:34Z",
            "ttlMs": 60000,
        });
        if let (Some(task), Some(extra)) = (task.as_object_mut(), extra.as_object()) {
            task.extend(extra.clone());
        }
        serde_json::from_value(task).expect("a task")
    }

    #[test]
    fn the_live_line_of_a_task_waiting_for_input_names_its_key_within_80_columns() {
        let waiting = task(
            "input_required",
            "Waiting for input: confirm-delete",
            serde_json::json!({"inputRequests": {"confirm-delete": {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "Delete b.txt?", "requestedSchema":
                    {"type": "object", "properties": {"confirm": {"type": "boolean"}}}}
            }}}),
        );
        assert_eq!(live_text(&waiting), "input_required: confirm-delete");
        // The spinner, the prefix, the elapsed time and the text: all of it fits.
        let line = format!(
            "⠁ {} [12s] {}",
            prefix(waiting.task.task_id.as_str()),
            live_text(&waiting)
        );
        assert!(line.chars().count() <= 80, "{line}");
        assert!(line.ends_with("confirm-delete"), "{line}");
        assert_eq!(prefix("LHESs0lDzitu0uylXbRiAOauBS-JyYmc"), "task LHESs0lD…");
        assert_eq!(prefix("t1"), "task t1");
        // Other statuses read as without a terminal.
        let working = task("working", "Step 2 of 5", serde_json::json!({}));
        assert_eq!(live_text(&working), "working: Step 2 of 5");
    }

    #[test]
    fn an_outage_counts_its_seconds_at_each_redraw_and_fits_80_columns() {
        let t0 = Instant::now();
        let note = OutageNote {
            failure: "unreachable".into(),
            since: t0,
            retry_for: Duration::from_secs(300),
            attempt: 3,
        };
        assert_eq!(
            outage_text(&note, t0 + Duration::from_secs(3)),
            "server unreachable · 3 s/300 s · attempt 3"
        );
        // No new notice, a later redraw: the seconds moved on.
        assert_eq!(
            outage_text(&note, t0 + Duration::from_secs(8)),
            "server unreachable · 8 s/300 s · attempt 3"
        );
        // The longest: unavailable, hundreds of seconds, tens of attempts; the attempt count
        // is not cut at 80 columns.
        let long = OutageNote {
            failure: "unavailable (HTTP 503)".into(),
            attempt: 42,
            ..note
        };
        let text = outage_text(&long, t0 + Duration::from_secs(299));
        for template in [SPINNER_OUTAGE, COUNT_OUTAGE, BAR_OUTAGE] {
            let head = template.split("{outage}").next().unwrap_or_default();
            let line = format!(
                "{}{text} · {} [1h]",
                head.replace("{spinner}", "⠁"),
                prefix("LHESs0lDzitu0uylXbRiAOauBS-JyYmc")
            );
            assert!(line.chars().count() <= 80, "{line}");
        }
        // While the server is away, neither the rate nor the time left is shown.
        for shape in [Shape::Spinner, Shape::Bar, Shape::Count] {
            let template = template(shape, true);
            assert!(template.contains("{outage}"), "{template}");
            assert!(!template.contains("{rate}") && !template.contains("{left}"));
        }
        assert!(template(Shape::Bar, false).contains("{rate}"));
    }

    #[test]
    fn the_rate_leaves_out_the_time_the_server_was_away() {
        let status = Status::new();
        let anchor_at = Instant::now()
            .checked_sub(Duration::from_secs(20))
            .expect("an instant 20 s ago");
        *status.anchor.lock().expect("anchor") = Some(Anchor {
            at: anchor_at,
            done: 0.0,
        });
        status.outage(Some(OutageNote {
            failure: "unreachable".into(),
            since: Instant::now()
                .checked_sub(Duration::from_secs(10))
                .expect("10 s ago"),
            retry_for: Duration::from_secs(300),
            attempt: 2,
        }));
        status.outage(None);
        let shifted = status.anchor.lock().expect("anchor").expect("an anchor").at;
        let moved = shifted.saturating_duration_since(anchor_at);
        assert!(
            moved >= Duration::from_secs(10) && moved < Duration::from_secs(11),
            "{moved:?}"
        );
    }
}
