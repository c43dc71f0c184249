//! The task list's query parameters (`?status=working&tool=x&node=…&stuck=1&order=oldest&
//! after=<cursor>&limit=50`), shared by the page and the JSON API, and the cursor's text form.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::Deserialize;
use tasks_core::{TaskId, TaskStatus, Timestamp};
use tasks_runtime::store::inventory::{InventoryCursor, InventoryOrder, InventoryQuery};
use tasks_runtime::store::NodeId;

use crate::error::AdminError;

/// Every status, in the order the console lists them.
pub(crate) const STATUSES: [TaskStatus; 5] = [
    TaskStatus::Working,
    TaskStatus::InputRequired,
    TaskStatus::Completed,
    TaskStatus::Failed,
    TaskStatus::Cancelled,
];

/// The most rows one page may ask for.
pub(crate) const MAX_LIMIT: usize = 200;

/// The list's parameters as sent; an empty value means "not given" (an HTML form sends
/// every field).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ListParams {
    /// A status, or several separated by commas.
    #[serde(default)]
    pub(crate) status: Option<String>,
    /// A tool name.
    #[serde(default)]
    pub(crate) tool: Option<String>,
    /// A node id (32 hex digits).
    #[serde(default)]
    pub(crate) node: Option<String>,
    /// `1`, `true` or `on`: stuck tasks only.
    #[serde(default)]
    pub(crate) stuck: Option<String>,
    /// `newest` (default) or `oldest`.
    #[serde(default)]
    pub(crate) order: Option<String>,
    /// A cursor from a previous page ([`encode_cursor`]).
    #[serde(default)]
    pub(crate) after: Option<String>,
    /// Rows per page, 1..=200 (default 50).
    #[serde(default)]
    pub(crate) limit: Option<String>,
}

fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// The status named `text` (its wire name, `input_required` and the like).
pub(crate) fn parse_status(text: &str) -> Option<TaskStatus> {
    STATUSES.into_iter().find(|status| status.as_str() == text)
}

/// A node id from its 32 lowercase or uppercase hex digits.
pub(crate) fn parse_node(text: &str) -> Option<NodeId> {
    let text = text.as_bytes();
    if text.len() != 32 {
        return None;
    }
    let mut bytes = [0u8; 16];
    for (byte, pair) in bytes.iter_mut().zip(text.chunks_exact(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(NodeId::from_bytes(bytes))
}

/// The cursor's text: base64url (no padding) of `"<createdAt ms>:<task id>"`.
pub(crate) fn encode_cursor(cursor: &InventoryCursor) -> String {
    let text = format!("{}:{}", cursor.created_at.unix_millis(), cursor.id.as_str());
    URL_SAFE_NO_PAD.encode(text)
}

/// The cursor of [`encode_cursor`]'s text, or `None` for anything else.
pub(crate) fn decode_cursor(text: &str) -> Option<InventoryCursor> {
    let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (ms, id) = text.split_once(':')?;
    Some(InventoryCursor {
        created_at: Timestamp::from_unix_millis(ms.parse().ok()?),
        id: TaskId::parse(id).ok()?,
    })
}

impl ListParams {
    /// The inventory query these parameters ask for.
    ///
    /// # Errors
    /// [`AdminError::BadRequest`] naming the first parameter that does not parse.
    pub(crate) fn to_query(&self) -> Result<InventoryQuery, AdminError> {
        let mut query = InventoryQuery::default();
        if let Some(statuses) = given(&self.status) {
            for name in statuses.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let status = parse_status(name)
                    .ok_or_else(|| AdminError::BadRequest("unknown status".into()))?;
                query.statuses.push(status);
            }
        }
        query.tool = given(&self.tool).map(str::to_owned);
        if let Some(node) = given(&self.node) {
            query.node = Some(
                parse_node(node)
                    .ok_or_else(|| AdminError::BadRequest("node is not a node id".into()))?,
            );
        }
        query.stuck_only = match given(&self.stuck) {
            None | Some("0" | "false" | "off") => false,
            Some("1" | "true" | "on") => true,
            Some(_) => return Err(AdminError::BadRequest("stuck is not 1 or 0".into())),
        };
        query.order = match given(&self.order) {
            None | Some("newest") => InventoryOrder::NewestFirst,
            Some("oldest") => InventoryOrder::OldestFirst,
            Some(_) => {
                return Err(AdminError::BadRequest(
                    "order is not newest or oldest".into(),
                ))
            }
        };
        if let Some(after) = given(&self.after) {
            query.after = Some(
                decode_cursor(after)
                    .ok_or_else(|| AdminError::BadRequest("after is not a cursor".into()))?,
            );
        }
        if let Some(limit) = given(&self.limit) {
            query.limit = limit
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_LIMIT).contains(n))
                .ok_or_else(|| AdminError::BadRequest("limit is not in 1..=200".into()))?;
        }
        Ok(query)
    }

    /// These parameters as a query string (`?…`, empty values left out), with `after`
    /// replaced by `next`: the link to the next page.
    pub(crate) fn with_after(&self, next: &str) -> String {
        let pairs = [
            ("status", given(&self.status)),
            ("tool", given(&self.tool)),
            ("node", given(&self.node)),
            ("stuck", given(&self.stuck)),
            ("order", given(&self.order)),
            ("limit", given(&self.limit)),
            ("after", Some(next)),
        ];
        let text: Vec<String> = pairs
            .iter()
            .filter_map(|(key, value)| value.map(|v| format!("{key}={}", percent_encode(v))))
            .collect();
        format!("?{}", text.join("&"))
    }
}

/// `text` with every byte but the unreserved ones (RFC 3986) percent-encoded.
pub(crate) fn percent_encode(text: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn params(f: impl FnOnce(&mut ListParams)) -> ListParams {
        let mut params = ListParams::default();
        f(&mut params);
        params
    }

    #[test]
    fn a_cursor_survives_its_text_form() {
        let cursor = InventoryCursor {
            created_at: Timestamp::from_unix_millis(1_793_729_045_123),
            id: TaskId::parse("task-1").expect("valid id"),
        };
        let text = encode_cursor(&cursor);
        assert!(text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(decode_cursor(&text), Some(cursor));
        assert_eq!(decode_cursor("!!"), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("x:task")), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("12")), None);
    }

    #[test]
    fn parameters_become_the_query() {
        let query = params(|p| {
            p.status = Some("working,input_required".into());
            p.tool = Some("slow".into());
            p.stuck = Some("1".into());
            p.order = Some("oldest".into());
            p.limit = Some("7".into());
            p.node = Some("ab".repeat(16));
        })
        .to_query()
        .expect("valid");
        assert_eq!(
            query.statuses,
            vec![TaskStatus::Working, TaskStatus::InputRequired]
        );
        assert_eq!(query.tool.as_deref(), Some("slow"));
        assert!(query.stuck_only);
        assert_eq!(query.order, InventoryOrder::OldestFirst);
        assert_eq!(query.limit, 7);
        assert_eq!(query.node, Some(NodeId::from_bytes([0xab; 16])));
        let empty = params(|p| p.status = Some(String::new())).to_query();
        assert_eq!(empty.map(|q| q.statuses.len()), Ok(0));
    }

    #[test]
    fn bad_parameters_are_400s() {
        for bad in [
            params(|p| p.status = Some("done".into())),
            params(|p| p.order = Some("random".into())),
            params(|p| p.after = Some("%%%".into())),
            params(|p| p.limit = Some("0".into())),
            params(|p| p.limit = Some("100000".into())),
            params(|p| p.node = Some("xyz".into())),
            params(|p| p.stuck = Some("maybe".into())),
        ] {
            assert!(
                matches!(bad.to_query(), Err(AdminError::BadRequest(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_next_link_keeps_the_filters() {
        let link = params(|p| {
            p.tool = Some("a b&c".into());
            p.status = Some(String::new());
        })
        .with_after("Q1");
        assert_eq!(link, "?tool=a%20b%26c&after=Q1");
    }
}
