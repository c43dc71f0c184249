//! The live status line of a running task (a spinner with the task id, the elapsed time, the
//! status and the server's `statusMessage`) on a terminal, or one plain line per change when
//! stderr is not a terminal.

use std::io::IsTerminal as _;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tasks_client::DetailedTask;
use tasks_core::TaskId;

/// The status line. Cheap to clone (one shared bar).
#[derive(Clone, Debug)]
pub(crate) struct Status {
    bar: ProgressBar,
    live: bool,
}

/// `working`, or `working: Step 2 of 5` with the status message.
pub(crate) fn describe(task: &DetailedTask) -> String {
    let status = task.state.status().as_str();
    match &task.task.status_message {
        Some(message) => format!("{status}: {}", crate::text::clean(message)),
        None => status.to_owned(),
    }
}

impl Status {
    /// A status line on stderr, live when stderr is a terminal.
    pub(crate) fn new() -> Self {
        let live = std::io::stderr().is_terminal();
        // Hidden until a task is shown (a prompt before then must not draw an empty line).
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {prefix} [{elapsed}] {wide_msg}")
        {
            bar.set_style(style);
        }
        Status { bar, live }
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

    /// Shows a change of the task.
    pub(crate) fn update(&self, task: &DetailedTask) {
        let text = describe(task);
        if !self.live {
            crate::say!(
                "task {}: {text}",
                crate::text::clean(task.task.task_id.as_str())
            );
        }
        self.bar.set_message(text);
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
