//! Pagination of list results: opaque cursors and pages (MCP 2026-07-28 pagination,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination>).
//!
//! A cursor this server issues is the unpadded base64url encoding of `o<offset>`, the index of
//! the first item of the next page; clients must treat it as opaque. One rule holds for every
//! paged list: a cursor is valid only if this server could have issued it for that list, that
//! is the canonical encoding of a whole number of pages (`o<k × page size>`, k ≥ 1) that is
//! still inside the list. Anything else is -32602 `Invalid cursor` (the page "Error Handling":
//! invalid cursors SHOULD be -32602), and a list served whole on one page (`tools/list`)
//! refuses every cursor ([`refuse_cursor`]). A list that changes between two pages may skip or
//! repeat an item at the page boundary; the list-changed notification tells the client to
//! start over.

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
        Some(_) => Err(invalid_cursor()),
    }
}

/// Reads `params.cursor` of a list this server serves whole on one page: absent or `null`
/// only, since it never issues a cursor for such a list.
///
/// # Errors
/// -32602 `Invalid cursor` for any other value.
pub fn refuse_cursor(params: &Value) -> Result<(), McpError> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(invalid_cursor()),
    }
}

/// -32602 `Invalid cursor`: the answer to any cursor this server did not issue.
pub fn invalid_cursor() -> McpError {
    McpError::invalid_params("Invalid cursor")
}

/// The page of a list of `len` items that `cursor` starts, `page_size` items long (at least 1).
///
/// # Errors
/// -32602 `Invalid cursor` for a cursor this server could not have issued for this list (not
/// the canonical encoding of a whole number of pages), or one past its end.
pub fn page(len: usize, cursor: Option<&str>, page_size: usize) -> Result<Page, McpError> {
    let page_size = page_size.max(1);
    let start = match cursor {
        None => 0,
        Some(cursor) => decode(cursor)
            .filter(|&offset| offset > 0 && offset % page_size == 0 && offset < len)
            .filter(|&offset| encode(offset) == cursor)
            .ok_or_else(invalid_cursor)?,
    };
    let end = start.saturating_add(page_size).min(len);
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
        // Inside the list but never issued: not a whole number of pages, the first page's
        // offset, a non-canonical spelling of an issued offset, padding.
        let issued = encode(2);
        let padded = format!("{issued}=");
        for bad in [
            &encode(1),
            &encode(3),
            &encode(0),
            &URL_SAFE_NO_PAD.encode("o02"),
            &padded,
        ] {
            let error = page(5, Some(bad), 2).unwrap_err();
            assert_eq!(error, McpError::invalid_params("Invalid cursor"), "{bad}");
        }
        assert!(page(5, Some(&issued), 2).is_ok());
        assert!(parse_cursor(&json!({"cursor": 3})).is_err());
        assert_eq!(refuse_cursor(&json!({"cursor": null})), Ok(()));
        assert_eq!(refuse_cursor(&json!({})), Ok(()));
        for cursor in [json!(""), json!("o0"), json!(encode(100)), json!(1)] {
            assert_eq!(
                refuse_cursor(&json!({ "cursor": cursor })),
                Err(invalid_cursor())
            );
        }
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

        /// Every cursor is refused but the ones the walk above issues.
        #[test]
        fn only_issued_cursors_are_served(
            len in 0usize..50,
            size in 1usize..10,
            offset in 0usize..60,
            spelling in prop_oneof![
                Just(String::new()),
                Just("0".to_owned()),
                Just("00".to_owned()),
                Just("+".to_owned()),
            ],
        ) {
            let cursor = URL_SAFE_NO_PAD.encode(format!("o{spelling}{offset}"));
            let issued = spelling.is_empty() && offset > 0 && offset % size == 0 && offset < len;
            prop_assert_eq!(page(len, Some(&cursor), size).is_ok(), issued);
        }
    }
}
