//! Pagination of list results: opaque cursors and pages (MCP 2026-07-28 pagination,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination>).
//!
//! A cursor this server issues is the unpadded base64url encoding of `o<offset>`, the index of
//! the first item of the next page; clients must treat it as opaque. Any cursor that does not
//! decode to an offset inside the list is -32602 `Invalid cursor` (the page "Error Handling":
//! invalid cursors SHOULD be -32602). A list that changes between two pages may skip or repeat
//! an item at the page boundary; the list-changed notification tells the client to start over.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::Value;

use crate::error::McpError;

/// The default number of items on one page.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// One page of a list of `len` items: the index range to return and the cursor of the next
/// page (`None` on the last page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The items to return.
    pub range: std::ops::Range<usize>,
    /// `nextCursor`, when more items follow.
    pub next_cursor: Option<String>,
}

/// Reads `params.cursor`: absent or `null` is the first page; otherwise it must be a string.
///
/// # Errors
/// -32602 `Invalid cursor` for a cursor that is not a string.
pub fn parse_cursor(params: &Value) -> Result<Option<String>, McpError> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(cursor)) => Ok(Some(cursor.clone())),
        Some(_) => Err(invalid()),
    }
}

/// The page of a list of `len` items that `cursor` starts, `page_size` items long (at least 1).
///
/// # Errors
/// -32602 `Invalid cursor` for a cursor this server did not issue for this list, or past its
/// end.
pub fn page(len: usize, cursor: Option<&str>, page_size: usize) -> Result<Page, McpError> {
    let start = match cursor {
        None => 0,
        Some(cursor) => decode(cursor)
            .filter(|&offset| offset < len)
            .ok_or_else(invalid)?,
    };
    let end = start.saturating_add(page_size.max(1)).min(len);
    Ok(Page {
        range: start..end,
        next_cursor: (end < len).then(|| encode(end)),
    })
}

fn encode(offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("o{offset}"))
}

fn decode(cursor: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let digits = text.strip_prefix('o')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn invalid() -> McpError {
    McpError::invalid_params("Invalid cursor")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn pages_walk_the_list_once_and_end_without_a_cursor() {
        let first = page(5, None, 2).unwrap();
        assert_eq!(first.range, 0..2);
        let second = page(5, first.next_cursor.as_deref(), 2).unwrap();
        assert_eq!(second.range, 2..4);
        let third = page(5, second.next_cursor.as_deref(), 2).unwrap();
        assert_eq!(third.range, 4..5);
        assert_eq!(third.next_cursor, None);
        assert_eq!(page(0, None, 2).unwrap().range, 0..0);
    }

    #[test]
    fn foreign_or_stale_cursors_are_invalid_params() {
        for bad in ["", "abc", "o1", &encode(7), &URL_SAFE_NO_PAD.encode("o-1")] {
            let error = page(5, Some(bad), 2).unwrap_err();
            assert_eq!(error, McpError::invalid_params("Invalid cursor"), "{bad}");
        }
        assert!(parse_cursor(&json!({"cursor": 3})).is_err());
        assert_eq!(parse_cursor(&json!({"cursor": null})).unwrap(), None);
    }

    proptest! {
        #[test]
        fn every_item_is_on_exactly_one_page(len in 0usize..50, size in 1usize..10) {
            let mut seen = Vec::new();
            let mut cursor = None;
            loop {
                let p = page(len, cursor.as_deref(), size).unwrap();
                prop_assert!(p.range.len() <= size);
                seen.extend(p.range.clone());
                match p.next_cursor { Some(next) => cursor = Some(next), None => break }
            }
            prop_assert_eq!(seen, (0..len).collect::<Vec<_>>());
        }
    }
}
