//! `mcp-tasks`: a terminal client for MCP 2026-07-28 servers with the Tasks extension.
//!
//! ```text
//! mcp-tasks tools URL
//! mcp-tasks call URL TOOL [key=value | key:=json]... [--args JSON] [--answer key=json]...
//!                [--poll] [--timeout SECONDS] [--retry-for SECONDS]
//! mcp-tasks get URL TASK_ID
//! mcp-tasks cancel|watch URL TASK_ID [--poll] [--timeout SECONDS] [--retry-for SECONDS]
//! mcp-tasks prompts URL
//! mcp-tasks prompt URL NAME [key=value]... [--answer key=json]...
//! mcp-tasks resources URL
//! mcp-tasks read URL RESOURCE_URI [--output FILE]
//! mcp-tasks complete URL (--prompt NAME | --resource URI_TEMPLATE) ARGUMENT [VALUE]
//! mcp-tasks skills URL
//! mcp-tasks skill URL SKILL_URI [--read FILE [--output PATH]]
//! mcp-tasks dir URL DIRECTORY_URI
//! ```
//!
//! `--token` and `--json` go anywhere; the options that follow a task (`--poll`,
//! `--timeout`, `--retry-for`) only after `call`, `cancel` or `watch`.
//!
//! Exit codes: see [`exit::Exit`] (and `mcp-tasks --help`).
//!
//! # Modules
//!
//! Each module uses only what its row names (checked by the workspace's layering test):
//!
//! | module | uses |
//! |---|---|
//! | `run` (the commands) | `admin`, `args`, `prompt`, `output`, `status`, `interrupt`, `exit`, `text` |
//! | `admin` (the operator's console, through its JSON API) | `exit`, `text` |
//! | `prompt` ([`Terminal`](prompt::Terminal): the input handler) | `form`, `status`, `text` |
//! | `output` (results, tasks and lists for people, or raw JSON) | `status`, `text` |
//! | `interrupt` (Ctrl-C) | `exit` |
//! | `form`, `status` (the live status line), `exit` (exit codes) | `text` |
//! | `args` (arguments typed by the tool's schema), `text` (server text made safe to print) | nothing of this crate |
#![forbid(unsafe_code)]

/// `eprintln!` that ignores a closed stderr (`2>&1 | head -1` must not panic).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}
pub(crate) use say;

mod admin;
mod args;
mod exit;
mod form;
mod interrupt;
mod output;
mod prompt;
mod run;
mod status;
mod text;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// How much longer than `--timeout` the whole run may take (the task wait ends at
/// `--timeout` itself).
const TIMEOUT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The exit codes, as `--help` prints them.
const EXIT_CODES: &str = "\
Exit codes:
  0    the tool completed (also: it completed before a cancel reached it)
  1    the tool reported an error (isError), including arguments the server refused
  2    usage: a bad command line, URL or token, an unknown tool, an argument that does not
       parse as the type the tool declares
  3    the task failed (a JSON-RPC error)
  4    the task was cancelled
  5    input is needed and cannot be given (stdin is not a terminal and no --answer fits)
  6    the server refused a request (a JSON-RPC or HTTP error)
  7    the server cannot be reached, has no MCP endpoint at the URL, or does not serve
       MCP 2026-07-28; or, while a task was followed, it stayed unreachable (or kept
       answering HTTP 429/502/503/504) for --retry-for seconds (the task may still run)
  8    --timeout passed (a task keeps running on the server), or a cancelled task had not
       ended 30 s after the cancel
  9    `skill --read`: the file does not match the skill's entry (its size, SHA-256 digest or,
       for SKILL.md, frontmatter differ), so nothing of it is printed or written; the skill
       may have changed since its entry was fetched (`skill URL URI` fetches it again)
  130  interrupted: Ctrl-C where nothing is left to cancel (tools, get, watch, before the
       call is sent), or a second Ctrl-C
`call`, `watch` and `cancel` exit with the task's outcome (so `cancel` exits 4, or 0 when
the task had completed first); `get`, `tools`, `prompts`, `prompt`, `resources`, `read`,
`complete`, `skills`, `skill` and `dir` exit 0 when the server answered (6 when it refused,
also for a server without prompts, resources, completion or skills).";

/// A terminal client for MCP servers with the Tasks extension (MCP 2026-07-28): list tools,
/// call one and follow it as a task, answer its questions at the prompt, cancel it with
/// Ctrl-C.
#[derive(Debug, Parser)]
#[command(name = "mcp-tasks", version, after_help = EXIT_CODES)]
struct Cli {
    /// Bearer token sent as `Authorization: Bearer …`.
    #[arg(long, env = "MCP_TOKEN", global = true, hide_env_values = true)]
    token: Option<String>,
    /// Print raw JSON instead of text: the result object, the task, a list as an array of its
    /// entries (tools, prompts, skills), a skill's entry alone.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

/// How a task is followed: the options of `call`, `cancel` and `watch`.
#[derive(Debug, Clone, clap::Args)]
struct Follow {
    /// Poll with tasks/get instead of listening with subscriptions/listen.
    #[arg(long)]
    poll: bool,
    /// Stop waiting for a task after this many seconds (the task keeps running; exit 8).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// While following a task, keep retrying a server that cannot be reached (or answers
    /// HTTP 429/502/503/504) for this many seconds in a row, then give up (exit 7).
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    retry_for: f64,
}

/// Answers given up front, for runs without a terminal (or to skip a question).
#[derive(Debug, clap::Args)]
struct Answers {
    /// Answer the input request under KEY with JSON: a form's content (`confirm-delete={"confirm":true}`),
    /// `{"action":"decline"}`, or a sampling result. Repeatable.
    #[arg(long = "answer", value_name = "KEY=JSON")]
    answers: Vec<String>,
    /// Offer this root (a file:// URI) to a server that asks for roots. Repeatable.
    #[arg(long = "root", value_name = "URI")]
    roots: Vec<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the server's tools, each argument on its own line (type, required or optional,
    /// default, bounds, allowed values, description).
    Tools {
        /// The MCP endpoint, e.g. http://127.0.0.1:3000/mcp
        url: String,
    },
    /// Call a tool; follow it while it runs as a task (Ctrl-C cancels it).
    Call {
        /// The MCP endpoint, e.g. http://127.0.0.1:3000/mcp
        url: String,
        /// The tool name.
        tool: String,
        /// Arguments: `key=value` (read as the type the tool's schema declares, so
        /// `seconds=60` is a number) or `key:=json` (raw JSON).
        #[arg(value_name = "KEY=VALUE")]
        pairs: Vec<String>,
        /// All arguments as one JSON object; KEY=VALUE pairs override its members.
        #[arg(long = "args", value_name = "JSON")]
        args: Option<String>,
        #[command(flatten)]
        answers: Answers,
        #[command(flatten)]
        follow: Follow,
    },
    /// Show a task once.
    Get {
        /// The MCP endpoint.
        url: String,
        /// The task id (it may start with `-`, as server-minted ids can).
        #[arg(allow_hyphen_values = true)]
        task_id: String,
    },
    /// Cancel a task and wait for its final status.
    Cancel {
        /// The MCP endpoint.
        url: String,
        /// The task id (it may start with `-`, as server-minted ids can).
        #[arg(allow_hyphen_values = true)]
        task_id: String,
        #[command(flatten)]
        follow: Follow,
    },
    /// Follow a task until it ends, answering its questions; Ctrl-C stops watching (the task
    /// keeps running).
    Watch {
        /// The MCP endpoint.
        url: String,
        /// The task id (it may start with `-`, as server-minted ids can).
        #[arg(allow_hyphen_values = true)]
        task_id: String,
        #[command(flatten)]
        answers: Answers,
        #[command(flatten)]
        follow: Follow,
    },
    /// List the server's prompts, one a line: the name, the arguments as they are written
    /// (`arg=…`, optional ones in brackets) and the description.
    Prompts {
        /// The MCP endpoint, e.g. http://127.0.0.1:3000/mcp
        url: String,
    },
    /// Get a prompt rendered with its arguments and print its messages; a question the
    /// prompt asks first is answered at the prompt (or with --answer).
    Prompt {
        /// The MCP endpoint, e.g. http://127.0.0.1:3000/mcp
        url: String,
        /// The prompt name.
        name: String,
        /// Arguments, `key=value` (prompt arguments are text).
        #[arg(value_name = "KEY=VALUE")]
        pairs: Vec<String>,
        #[command(flatten)]
        answers: Answers,
    },
    /// List the server's resources, then its resource templates, one a line: the URI, the
    /// name, the MIME type and the description.
    Resources {
        /// The MCP endpoint, e.g. http://127.0.0.1:3000/mcp
        url: String,
    },
    /// Read a resource: text is printed; for binary contents the type and size are (write
    /// them with --output).
    Read {
        /// The MCP endpoint, e.g. http://127.0.0.1:3000/mcp
        url: String,
        /// The resource's URI (a listed one, or one a template covers).
        uri: String,
        /// Write the contents' bytes (text or binary) to FILE instead of printing them; `-`
        /// writes them to stdout as they are. --json does not apply.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
    /// Suggest values for a prompt's argument or a resource template's variable, one a line.
    #[command(group(clap::ArgGroup::new("reference").required(true)))]
    Complete {
        /// The MCP endpoint, e.g. http://127.0.0.1:3000/mcp
        url: String,
        /// Complete an argument of this prompt.
        #[arg(long, value_name = "NAME", group = "reference")]
        prompt: Option<String>,
        /// Complete a variable of this resource template (its uriTemplate).
        #[arg(long, value_name = "URI_TEMPLATE", group = "reference")]
        resource: Option<String>,
        /// The argument (or variable) name.
        argument: String,
        /// What is typed so far (default: nothing).
        #[arg(default_value = "")]
        value: String,
    },
    /// List the server's skills (the Skills extension), one a line: the SKILL.md's URI, the
    /// name, how many files and bytes, and the description. With --json, a JSON array of the
    /// skills' entries, each {"uri", "frontmatter", "resources"}.
    Skills {
        /// The MCP endpoint, e.g. http://127.0.0.1:3000/mcp
        url: String,
    },
    /// Show a skill: its frontmatter fields and its files (path, size, SHA-256 digest). With
    /// --read, read one of its files, verified against that list first (size, digest, and
    /// for SKILL.md its frontmatter): text is printed, binary contents described (write them
    /// with --output); a file that does not match is exit 9. With --json, the skill's entry
    /// alone ({"uri", "frontmatter", "resources"}), or for --read {"contents", "verified"}.
    Skill {
        /// The MCP endpoint, e.g. http://127.0.0.1:3000/mcp
        url: String,
        /// The skill's URI, its SKILL.md's as `skills` lists it (skill://git-workflow/SKILL.md).
        uri: String,
        /// Read this file of the skill: its URI, or its path below the skill's directory
        /// (references/style.md).
        #[arg(long, value_name = "FILE")]
        read: Option<String>,
        /// With --read: write the file's bytes (text or binary) to PATH instead of printing
        /// them; `-` writes them to stdout as they are. --json does not apply.
        #[arg(long, short = 'o', value_name = "PATH", requires = "read")]
        output: Option<std::path::PathBuf>,
    },
    /// The operator's console of a server (its JSON API, e.g. http://127.0.0.1:3000/admin):
    /// tasks across every caller, counts, nodes, and cancel as the operator. It sends the admin
    /// token (--admin-token or MCP_ADMIN_TOKEN), never the MCP token; exits 0 when the console
    /// answered, 6 when it refused (401, 404, 501 for a store without an inventory), 7 when it
    /// cannot be reached.
    Admin {
        /// The console's admin token.
        #[arg(long, env = "MCP_ADMIN_TOKEN", hide_env_values = true)]
        admin_token: Option<String>,
        #[command(subcommand)]
        action: admin::Action,
    },
    /// List a directory of skills (skill://git-workflow, or a directory below a skill's), one
    /// entry a line: the URI, the name, and the MIME type and size, or `directory`.
    Dir {
        /// The MCP endpoint, e.g. http://127.0.0.1:3000/mcp
        url: String,
        /// The directory's URI.
        uri: String,
    },
}

impl Command {
    /// The options that follow a task, for the commands that take them.
    fn follow(&self) -> Option<&Follow> {
        match self {
            Command::Call { follow, .. }
            | Command::Cancel { follow, .. }
            | Command::Watch { follow, .. } => Some(follow),
            Command::Tools { .. }
            | Command::Get { .. }
            | Command::Prompts { .. }
            | Command::Prompt { .. }
            | Command::Resources { .. }
            | Command::Read { .. }
            | Command::Complete { .. }
            | Command::Skills { .. }
            | Command::Skill { .. }
            | Command::Admin { .. }
            | Command::Dir { .. } => None,
        }
    }

    /// The MCP endpoint the command talks to.
    fn url(&self) -> &str {
        match self {
            Command::Tools { url }
            | Command::Call { url, .. }
            | Command::Get { url, .. }
            | Command::Cancel { url, .. }
            | Command::Watch { url, .. }
            | Command::Prompts { url }
            | Command::Prompt { url, .. }
            | Command::Resources { url }
            | Command::Read { url, .. }
            | Command::Complete { url, .. }
            | Command::Skills { url }
            | Command::Skill { url, .. }
            | Command::Dir { url, .. } => url,
            Command::Admin { .. } => "",
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            say!("error: cannot start: {error}");
            return ExitCode::from(exit::Exit::Unreachable as u8);
        }
    };
    // --timeout bounds the whole run, requests in flight and the call included. The wait for
    // a task has the same deadline and ends first, saying how to reach the task again; this
    // outer bound, a little later, catches the rest (a hung request, an open prompt).
    let limit = cli
        .command
        .follow()
        .and_then(|follow| follow.timeout)
        .and_then(|seconds| std::time::Duration::try_from_secs_f64(seconds).ok())
        .map(|limit| limit.saturating_add(TIMEOUT_GRACE));
    let code = runtime.block_on(async move {
        match limit {
            None => run::run(cli).await,
            Some(limit) => tokio::time::timeout(limit, run::run(cli))
                .await
                .unwrap_or_else(|_| {
                    // A prompt may still hold the terminal in raw mode.
                    let _ = crossterm::terminal::disable_raw_mode();
                    say!("\nerror: --timeout passed");
                    exit::Exit::Timeout
                }),
        }
    });
    // Do not wait for a prompt thread still blocked on the terminal.
    runtime.shutdown_background();
    ExitCode::from(code as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Server-minted task ids may start with `-` (base64url): such an id is the id, while the
    /// options around it are still options.
    #[test]
    fn a_task_id_may_start_with_a_hyphen() {
        for words in [
            vec!["mcp-tasks", "get", "http://h/mcp", "-dAbC"],
            vec![
                "mcp-tasks",
                "cancel",
                "http://h/mcp",
                "--timeout",
                "5",
                "-dAbC",
            ],
            vec![
                "mcp-tasks",
                "cancel",
                "http://h/mcp",
                "-dAbC",
                "--timeout",
                "5",
            ],
        ] {
            let cli = Cli::try_parse_from(&words).expect("parses");
            let (Command::Get { task_id, .. } | Command::Cancel { task_id, .. }) = cli.command
            else {
                panic!("a get or cancel: {words:?}");
            };
            assert_eq!(task_id, "-dAbC", "{words:?}");
        }
        let cli = Cli::try_parse_from([
            "mcp-tasks",
            "watch",
            "http://h/mcp",
            "-_x",
            "--answer",
            "k={}",
        ])
        .expect("parses");
        assert!(matches!(cli.command, Command::Watch { ref task_id, .. } if task_id == "-_x"));
    }

    /// Each command takes the options it uses: `--poll`, `--timeout` and `--retry-for` only
    /// where a task is followed (and after the command's name); `--token` and `--json`
    /// anywhere.
    #[test]
    fn each_command_takes_only_its_options() {
        let parses = |words: &[&str]| Cli::try_parse_from(words).is_ok();
        for command in ["call", "cancel", "watch"] {
            let mut words = vec!["mcp-tasks", command, "http://h/mcp", "x"];
            words.extend(["--poll", "--timeout", "5", "--retry-for", "10", "--json"]);
            assert!(parses(&words), "{words:?}");
        }
        assert!(parses(&["mcp-tasks", "--json", "tools", "http://h/mcp"]));
        assert!(parses(&[
            "mcp-tasks",
            "get",
            "http://h/mcp",
            "x",
            "--token",
            "t"
        ]));
        for words in [
            &["mcp-tasks", "tools", "http://h/mcp", "--poll"][..],
            &["mcp-tasks", "tools", "http://h/mcp", "--timeout", "5"][..],
            &["mcp-tasks", "get", "http://h/mcp", "x", "--retry-for", "5"][..],
            &["mcp-tasks", "--poll", "watch", "http://h/mcp", "x"][..],
        ] {
            assert!(!parses(words), "{words:?}");
        }
        let help = |command: &str| {
            let mut cli = <Cli as clap::CommandFactory>::command();
            cli.build();
            cli.find_subcommand_mut(command)
                .expect("a subcommand")
                .render_long_help()
                .to_string()
        };
        for command in [
            "tools",
            "get",
            "prompts",
            "prompt",
            "resources",
            "read",
            "complete",
            "skills",
            "skill",
            "dir",
        ] {
            let text = help(command);
            assert!(
                !text.contains("--poll")
                    && !text.contains("--timeout")
                    && !text.contains("--retry-for"),
                "{text}"
            );
            assert!(
                text.contains("--json") && text.contains("--token"),
                "{text}"
            );
        }
        let text = help("read");
        assert!(
            text.contains("--output") && !text.contains("--answer"),
            "{text}"
        );
        let text = help("skill");
        assert!(
            text.contains("--read") && text.contains("--output") && !text.contains("--answer"),
            "{text}"
        );
        // What --json prints, as it is printed (docs/guides/call.md says the same).
        assert!(
            text.contains(
                "With --json, the skill's entry alone ({\"uri\", \"frontmatter\", \"resources\"}), \
                 or for --read {\"contents\", \"verified\"}"
            ),
            "{text}"
        );
        assert!(
            help("skills").contains(
                "With --json, a JSON array of the skills' entries, each {\"uri\", \"frontmatter\", \
                 \"resources\"}"
            ),
            "{}",
            help("skills")
        );
        for command in ["read", "skill"] {
            assert!(
                help(command)
                    .contains("`-` writes them to stdout as they are. --json does not apply"),
                "{}",
                help(command)
            );
        }
        assert!(parses(&[
            "mcp-tasks",
            "skill",
            "http://h/mcp",
            "skill://a/SKILL.md",
            "--read",
            "SKILL.md",
            "-o",
            "f"
        ]));
        assert!(
            !parses(&[
                "mcp-tasks",
                "skill",
                "http://h/mcp",
                "skill://a/SKILL.md",
                "--output",
                "f"
            ]),
            "--output only with --read"
        );
        let text = help("prompt");
        assert!(
            text.contains("--answer") && !text.contains("--output"),
            "{text}"
        );
        assert!(parses(&[
            "mcp-tasks",
            "complete",
            "http://h/mcp",
            "--prompt",
            "p",
            "arg1"
        ]));
        assert!(!parses(&["mcp-tasks", "complete", "http://h/mcp", "arg1"]));
        assert!(!parses(&[
            "mcp-tasks",
            "read",
            "http://h/mcp",
            "test://x",
            "--answer",
            "k={}"
        ]));
        let text = help("watch");
        assert!(
            text.contains("--retry-for") && text.contains("[default: 300]"),
            "{text}"
        );
    }
}
