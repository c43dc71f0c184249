//! Normalisation of a scenario's log (identifiers the server draws become placeholders) and
//! the comparison of two logs.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

/// The members whose string values are identifiers the server draws, by placeholder kind.
const ID_KEYS: &[(&str, &str)] = &[
    ("taskId", "task"),
    ("requestState", "state"),
    ("idempotencyKey", "key"),
    ("io.modelcontextprotocol/subscriptionId", "subscription"),
    ("mcp-session-id", "session"),
    ("sessionId", "session"),
    ("nextCursor", "cursor"),
];

/// Placeholders for one scenario's log: every identifier found under an [`ID_KEYS`] member gets
/// `<kind-n>`, numbered in order of first appearance; every occurrence of it (whole string,
/// inside a longer one, or as an object key) is replaced; RFC 3339 timestamps become
/// `<timestamp>`.
pub(crate) fn normalise(log: &[Value]) -> Vec<Value> {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    for entry in log {
        collect_ids(entry, &mut |kind, value| {
            if value.is_empty() || seen.contains_key(value) {
                return;
            }
            let n = counts.entry(kind).or_default();
            *n += 1;
            let placeholder = format!("<{kind}-{n}>");
            seen.insert(value.to_owned(), placeholder.clone());
            found.push((value.to_owned(), placeholder));
        });
    }
    // Longer ids first, so that an id containing another is replaced whole.
    found.sort_by_key(|(id, _)| std::cmp::Reverse(id.len()));
    log.iter()
        .map(|entry| {
            let mut entry = replace(entry, &found);
            if let Some(tasks) = entry
                .pointer_mut("/body/result/tasks")
                .and_then(Value::as_array_mut)
            {
                tasks.sort_by_key(|t| placeholder_number(t["taskId"].as_str().unwrap_or("")));
            }
            entry
        })
        .collect()
}

/// `n` of a placeholder `<kind-n>`.
fn placeholder_number(text: &str) -> usize {
    text.trim_end_matches('>')
        .rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX)
}

fn collect_ids<'a>(value: &'a Value, found: &mut impl FnMut(&'static str, &'a str)) {
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                if let Some((_, kind)) = ID_KEYS.iter().find(|(k, _)| k == key) {
                    if let Value::String(id) = member {
                        found(kind, id);
                    }
                }
                collect_ids(member, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_ids(item, found)),
        _ => {}
    }
}

fn replace(value: &Value, found: &[(String, String)]) -> Value {
    match value {
        Value::String(text) => Value::String(replace_text(text, found)),
        Value::Array(items) => Value::Array(items.iter().map(|v| replace(v, found)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (replace_text(k, found), replace(v, found)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn replace_text(text: &str, found: &[(String, String)]) -> String {
    if is_timestamp(text) {
        return "<timestamp>".into();
    }
    let mut text = text.to_owned();
    for (id, placeholder) in found {
        // Short values (a numeric subscription id, "1") are replaced only whole.
        if text == *id || (id.len() >= 8 && text.contains(id.as_str())) {
            text = text.replace(id.as_str(), placeholder);
        }
    }
    text
}

/// `YYYY-MM-DDTHH:MM:SS…`.
fn is_timestamp(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 19
        && b.len() <= 40
        && [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
            .iter()
            .all(|&i| b[i].is_ascii_digit())
        && b[4] == b'-'
        && b[7] == b'-'
        && (b[10] == b'T' || b[10] == b't')
        && b[13] == b':'
        && b[16] == b':'
}

/// The differences between `base` and `candidate` at `path`, at most `limit`.
pub(crate) fn differences(
    base: &Value,
    candidate: &Value,
    path: &str,
    out: &mut Vec<String>,
    limit: usize,
) {
    if out.len() >= limit || base == candidate {
        return;
    }
    match (base, candidate) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let at = format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"));
                match (a.get(key.as_str()), b.get(key.as_str())) {
                    (Some(x), Some(y)) => differences(x, y, &at, out, limit),
                    (x, y) => out.push(format!("{at}: base {}, candidate {}", shown(x), shown(y))),
                }
                if out.len() >= limit {
                    return;
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(x, y, &format!("{path}/{i}"), out, limit);
            }
        }
        // Lists of different lengths (events, metric lines): the items only one side has.
        (Value::Array(a), Value::Array(b)) => {
            let only = |from: &[Value], other: &[Value]| -> Vec<Value> {
                from.iter()
                    .filter(|x| !other.contains(x))
                    .cloned()
                    .collect()
            };
            let (base_only, candidate_only) = (only(a, b), only(b, a));
            out.push(format!(
                "{path}: {} items in base, {} in candidate",
                a.len(),
                b.len()
            ));
            for (side, items) in [("base", base_only), ("candidate", candidate_only)] {
                for item in items {
                    if out.len() >= limit {
                        out.push(format!("{path}: … (more)"));
                        return;
                    }
                    out.push(format!("{path}: only in {side}: {}", shown(Some(&item))));
                }
            }
        }
        _ => out.push(format!(
            "{path}: base {}, candidate {}",
            shown(Some(base)),
            shown(Some(candidate))
        )),
    }
}

pub(crate) fn shown(value: Option<&Value>) -> String {
    match value {
        None => "(absent)".into(),
        Some(v) => {
            let text = v.to_string();
            if text.chars().count() > 300 {
                format!(
                    "{}… ({} bytes)",
                    text.chars().take(300).collect::<String>(),
                    text.len()
                )
            } else {
                text
            }
        }
    }
}
