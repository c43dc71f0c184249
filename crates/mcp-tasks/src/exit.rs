//! The exit codes of `mcp-tasks` (printed by `--help`).

use tasks_client::{ClientError, Outcome};

/// How the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Exit {
    /// The tool completed.
    Completed = 0,
    /// The tool reported an error (`isError`).
    ToolError = 1,
    /// A bad command line (clap also exits 2).
    Usage = 2,
    /// The task failed.
    Failed = 3,
    /// The task was cancelled.
    Cancelled = 4,
    /// Input is needed and cannot be given.
    InputNeeded = 5,
    /// The server refused a request.
    Refused = 6,
    /// The server cannot be reached or is of another era.
    Unreachable = 7,
    /// `--timeout` passed.
    Timeout = 8,
    /// A skill's file did not match the skill's entry (Skills extension, "Integrity and
    /// Verification").
    Unverified = 9,
    /// A second Ctrl-C while waiting.
    Interrupted = 130,
}

impl Exit {
    /// The code of an outcome.
    pub(crate) fn of(outcome: &Outcome) -> Exit {
        match outcome {
            Outcome::Completed(_) => Exit::Completed,
            Outcome::ToolError(_) => Exit::ToolError,
            Outcome::Failed(_) => Exit::Failed,
            _ => Exit::Cancelled,
        }
    }

    /// Reports `error` on stderr; its code.
    /// A usage error (`invalid argument`, such as an `--answer` that does not fit) reads as
    /// the program's own usage errors do: `error: --answer key: …`.
    pub(crate) fn report(error: &ClientError) -> Exit {
        let text = match error {
            ClientError::InvalidArgument(message) => message.clone(),
            // A refusal naming the URI it concerns (`Resource not found`, data.uri): with it.
            ClientError::Rpc { error: rpc, .. } => {
                match rpc
                    .data
                    .as_ref()
                    .and_then(|d| d.get("uri"))
                    .and_then(|u| u.as_str())
                {
                    Some(uri) => format!("{error}: {uri}"),
                    None => error.to_string(),
                }
            }
            other => other.to_string(),
        };
        crate::say!("error: {}", crate::text::clean(&text));
        match error {
            ClientError::Rpc { .. }
            | ClientError::MethodNotFound { .. }
            | ClientError::Http { .. }
            | ClientError::UnknownTask { .. } => Exit::Refused,
            ClientError::Deadline => Exit::Timeout,
            ClientError::InvalidArgument(_) => Exit::Usage,
            ClientError::NoHandler { .. } | ClientError::Input(_) => Exit::InputNeeded,
            ClientError::Verification { .. } => Exit::Unverified,
            _ => Exit::Unreachable,
        }
    }
}
