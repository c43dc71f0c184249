//! `mcp-tasks admin`: the operator's console of a server from the terminal, through its JSON
//! API (`<base>/api/…`, where `<base>` is the console's URL, e.g. `http://127.0.0.1:3000/admin`).
//! It sends the admin token (`--admin-token`, or `MCP_ADMIN_TOKEN`), never the MCP token.

use std::time::Duration;

use serde_json::Value;

use crate::exit::Exit;

/// What to ask the console.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Action {
    /// List tasks across every caller, newest first: id, status, tool, node, age, stuck
    /// reason, status message. Prints the cursor of the next page when there is one.
    Tasks {
        /// The console's URL, e.g. http://127.0.0.1:3000/admin
        url: String,
        /// Only tasks in this status (working, input_required, completed, failed, cancelled).
        #[arg(long)]
        status: Option<String>,
        /// Only tasks of this tool.
        #[arg(long)]
        tool: Option<String>,
        /// Only tasks this node holds (its id, 32 hex digits).
        #[arg(long)]
        node: Option<String>,
        /// Only stuck tasks.
        #[arg(long)]
        stuck: bool,
        /// Oldest first.
        #[arg(long)]
        oldest: bool,
        /// At most this many tasks.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Start after this cursor (printed by the previous page).
        #[arg(long)]
        after: Option<String>,
    },
    /// Show one task's metadata.
    Task {
        /// The console's URL.
        url: String,
        /// The task id.
        #[arg(allow_hyphen_values = true)]
        task_id: String,
    },
    /// Count tasks by status, by tool, and the stuck ones by reason.
    Counts {
        /// The console's URL.
        url: String,
    },
    /// List the nodes: id, live or lease run out, tasks held, last renewal.
    Nodes {
        /// The console's URL.
        url: String,
    },
    /// Cancel a task as the operator (whoever created it).
    Cancel {
        /// The console's URL.
        url: String,
        /// The task id.
        #[arg(allow_hyphen_values = true)]
        task_id: String,
    },
}

/// Runs `action` with `token`; prints JSON as received with `json`, else text.
pub(crate) async fn run(action: Action, token: Option<String>, json: bool) -> Exit {
    let Some(token) = token.filter(|t| !t.is_empty()) else {
        crate::say!("error: the console needs the admin token: --admin-token or MCP_ADMIN_TOKEN");
        return Exit::Usage;
    };
    let client = match reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
    {
        Ok(client) => client,
        Err(error) => {
            crate::say!("error: cannot start an HTTP client: {error}");
            return Exit::Unreachable;
        }
    };
    let (request, print): (_, fn(&Value)) = match &action {
        Action::Tasks {
            url,
            status,
            tool,
            node,
            stuck,
            oldest,
            limit,
            after,
        } => {
            let mut query: Vec<(&str, String)> = vec![("limit", limit.to_string())];
            let options = [
                ("status", status),
                ("tool", tool),
                ("node", node),
                ("after", after),
            ];
            for (name, value) in options {
                if let Some(value) = value {
                    query.push((name, value.clone()));
                }
            }
            if *stuck {
                query.push(("stuck", "1".into()));
            }
            if *oldest {
                query.push(("order", "oldest".into()));
            }
            (
                client.get(endpoint(url, "api/tasks")).query(&query),
                print_tasks,
            )
        }
        Action::Task { url, task_id } => (
            client.get(endpoint(url, &format!("api/tasks/{}", segment(task_id)))),
            print_task,
        ),
        Action::Counts { url } => (client.get(endpoint(url, "api/counts")), print_counts),
        Action::Nodes { url } => (client.get(endpoint(url, "api/nodes")), print_nodes),
        Action::Cancel { url, task_id } => (
            client.post(endpoint(
                url,
                &format!("api/tasks/{}/cancel", segment(task_id)),
            )),
            print_cancel,
        ),
    };
    let response = match request.bearer_auth(token).send().await {
        Ok(response) => response,
        Err(error) => {
            crate::say!("error: cannot reach the console: {error}");
            return Exit::Unreachable;
        }
    };
    let status = response.status();
    let body: Value = match response.json().await {
        Ok(body) => body,
        Err(_) => {
            crate::say!("error: the console answered HTTP {status} without JSON");
            return Exit::Refused;
        }
    };
    if !status.is_success() {
        let reason = body
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("refused");
        crate::say!(
            "error: the console answered HTTP {}: {}",
            status.as_u16(),
            crate::text::clean(reason)
        );
        return Exit::Refused;
    }
    if json {
        println!("{body}");
    } else {
        print(&body);
    }
    Exit::Completed
}

/// `<base>/<path>`, with or without a trailing `/` on the base.
fn endpoint(base: &str, path: &str) -> String {
    format!("{}/{path}", base.trim_end_matches('/'))
}

/// `text` as one path segment (percent-encoded where it must be).
fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("-")
}

/// The stuck reason of a task as one word, or `-`.
fn stuck(task: &Value) -> String {
    task.get("stuck")
        .and_then(|s| s.get("reason"))
        .and_then(Value::as_str)
        .map_or_else(|| "-".to_owned(), str::to_owned)
}

fn print_tasks(body: &Value) {
    let tasks = body.get("tasks").and_then(Value::as_array);
    println!(
        "{:<34} {:<15} {:<20} {:<17} {:<24} MESSAGE",
        "TASK", "STATUS", "TOOL", "STUCK", "CREATED"
    );
    for task in tasks.into_iter().flatten() {
        println!(
            "{:<34} {:<15} {:<20} {:<17} {:<24} {}",
            crate::text::clean(text(task, "taskId")),
            text(task, "status"),
            crate::text::clean(text(task, "tool")),
            stuck(task),
            text(task, "createdAt"),
            crate::text::clean(text(task, "statusMessage")),
        );
    }
    if let Some(cursor) = body.get("nextCursor").and_then(Value::as_str) {
        println!("next page: --after {}", crate::text::clean(cursor));
    }
}

fn print_task(task: &Value) {
    for key in [
        "taskId",
        "scope",
        "tool",
        "status",
        "statusMessage",
        "createdAt",
        "lastUpdatedAt",
        "expiresAt",
        "node",
    ] {
        println!("{key:<14} {}", crate::text::clean(text(task, key)));
    }
    for key in ["attempt", "generation"] {
        let value = task
            .get(key)
            .map_or_else(|| "-".to_owned(), Value::to_string);
        println!("{key:<14} {value}");
    }
    if let Some(progress) = task.get("progress").filter(|p| !p.is_null()) {
        println!("{:<14} {progress}", "progress");
    }
    println!("{:<14} {}", "stuck", stuck(task));
}

fn print_counts(body: &Value) {
    let counts = |value: Option<&Value>| {
        [
            "working",
            "input_required",
            "completed",
            "failed",
            "cancelled",
        ]
        .iter()
        .map(|status| {
            let n = value
                .and_then(|v| v.get(status))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            format!("{status}={n}")
        })
        .collect::<Vec<_>>()
        .join(" ")
    };
    println!("all      {}", counts(body.get("byStatus")));
    if let Some(stuck) = body.get("stuck") {
        println!("stuck    {stuck}");
    }
    for entry in body
        .get("byTool")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let tool = entry
            .get("tool")
            .and_then(Value::as_str)
            .unwrap_or("(unknown)");
        println!(
            "tool {} {}",
            crate::text::clean(tool),
            counts(entry.get("counts"))
        );
    }
}

fn print_nodes(body: &Value) {
    println!(
        "{:<34} {:<6} {:>6} {:<24} LEASE EXPIRES",
        "NODE", "LIVE", "HELD", "RENEWED"
    );
    let nodes = body.get("nodes").and_then(Value::as_array);
    for node in nodes.into_iter().flatten() {
        let live = node.get("live").and_then(Value::as_bool).unwrap_or(false);
        println!(
            "{:<34} {:<6} {:>6} {:<24} {}",
            text(node, "nodeId"),
            if live { "yes" } else { "no" },
            node.get("held").and_then(Value::as_u64).unwrap_or(0),
            text(node, "renewedAt"),
            text(node, "leaseExpiresAt"),
        );
    }
}

fn print_cancel(body: &Value) {
    match text(body, "outcome") {
        "cancelled" => println!("cancelled"),
        "alreadyEnded" => println!("already ended: {}", text(body, "status")),
        other => println!("{}", crate::text::clean(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_id_is_one_path_segment() {
        assert_eq!(segment("-dA_b.c~"), "-dA_b.c~");
        assert_eq!(segment("a/b c"), "a%2Fb%20c");
        assert_eq!(
            endpoint("http://h/admin/", "api/counts"),
            "http://h/admin/api/counts"
        );
        assert_eq!(
            endpoint("http://h/admin", "api/counts"),
            "http://h/admin/api/counts"
        );
    }
}
