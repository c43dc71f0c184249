//! Resource templates: which URIs a `uriTemplate` covers, and the values of its variables
//! (MCP 2026-07-28 resources, "Resource Templates":
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/resources>; RFC 6570).
//!
//! RFC 6570 defines only expansion; reading a URI back into variables is this server's rule,
//! for the templates a resource server needs, RFC 6570 levels 1 and 2:
//!
//! * `{name}` (simple) matches one or more characters up to the next literal, never `/`, `?`
//!   or `#`; its value is percent-decoded, so `%2F` and `%2e%2e` arrive as `/` and `..`: a
//!   reader that uses a value as a path segment (a file name, a key in a store laid out as a
//!   tree) checks it with [`is_segment`] first;
//! * `{+name}` (reserved) and `{#name}` (fragment, the `#` a literal) match one or more of any
//!   character, `/` included, and are not decoded.
//!
//! Literals match exactly. A variable takes the shortest value with which the rest of the
//! template matches (a lazy capture of a regular expression), so `a/{x}/b/{y}` is
//! unambiguous.
//! Other operators (`{?x}`, `{/x}`, `{.x}`, `{;x}`, `{&x}`), variable lists (`{x,y}`) and
//! modifiers (`{x:3}`, `{x*}`) are refused when the template is built.

use std::collections::BTreeMap;

/// A parsed `uriTemplate`.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
    /// The template as an anchored regular expression, one capture group per variable.
    pattern: regex::Regex,
}

impl PartialEq for UriTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for UriTemplate {}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var { name: String, reserved: bool },
}

/// Why a template was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid uriTemplate {template:?}: {reason}")]
pub struct TemplateError {
    /// The template text.
    pub template: String,
    /// What is wrong.
    pub reason: &'static str,
}

impl UriTemplate {
    /// Parses `text`.
    ///
    /// # Errors
    /// A [`TemplateError`] for an unclosed or empty expression, an operator or modifier outside
    /// levels 1–2, two variables with nothing between them, or a repeated variable name.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let fail = |reason| TemplateError {
            template: text.to_owned(),
            reason,
        };
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let (literal, after) = rest.split_at(open);
            if literal.contains('}') {
                return Err(fail("unmatched '}'"));
            }
            if !literal.is_empty() {
                parts.push(Part::Literal(literal.to_owned()));
            }
            let close = after.find('}').ok_or_else(|| fail("unclosed '{'"))?;
            let expression = &after[1..close];
            let (reserved, name) = match expression.as_bytes().first() {
                Some(b'+') => (true, &expression[1..]),
                Some(b'#') => {
                    parts.push(Part::Literal("#".into()));
                    (true, &expression[1..])
                }
                _ => (false, expression),
            };
            if name.is_empty() {
                return Err(fail("empty expression"));
            }
            if !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
            {
                return Err(fail("only {name}, {+name} and {#name} are supported"));
            }
            if matches!(parts.last(), Some(Part::Var { .. })) {
                return Err(fail("two variables need a literal between them"));
            }
            if parts
                .iter()
                .any(|p| matches!(p, Part::Var { name: n, .. } if n == name))
            {
                return Err(fail("a variable appears twice"));
            }
            parts.push(Part::Var {
                name: name.to_owned(),
                reserved,
            });
            rest = &after[close + 1..];
        }
        if rest.contains('}') {
            return Err(fail("unmatched '}'"));
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        let mut pattern = String::from("^");
        for part in &parts {
            match part {
                Part::Literal(literal) => pattern.push_str(&regex::escape(literal)),
                Part::Var {
                    reserved: false, ..
                } => pattern.push_str("([^/?#]+?)"),
                Part::Var { reserved: true, .. } => pattern.push_str("(.+?)"),
            }
        }
        pattern.push('$');
        let pattern = regex::Regex::new(&pattern).map_err(|_| fail("not a usable template"))?;
        Ok(UriTemplate {
            text: text.to_owned(),
            parts,
            pattern,
        })
    }

    /// The template text, as listed in `resources/templates/list`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The variable names, in template order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables' values when `uri` is covered by this template, else `None`. The
    /// template is matched as a regular expression (the `regex` crate: time linear in the
    /// URI's length, whatever the template).
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let captures = self.pattern.captures(uri)?;
        let mut values = BTreeMap::new();
        let variables = self.parts.iter().filter_map(|p| match p {
            Part::Var { name, reserved } => Some((name, *reserved)),
            Part::Literal(_) => None,
        });
        for ((name, reserved), found) in variables.zip(captures.iter().skip(1)) {
            let raw = found?.as_str();
            let value = if reserved {
                raw.to_owned()
            } else {
                percent_decode(raw)?
            };
            values.insert(name.clone(), value);
        }
        Some(values)
    }
}

/// Whether a decoded variable `value` is safe to use as one segment of a path: not empty, not
/// `.` or `..`, and free of `/`, `\`, NUL and every other control character. A template's
/// simple variable is percent-decoded ([`UriTemplate::matches`]), so without this check a URI
/// holding `%2F` or `%2e%2e` hands a reader a separator or a dot segment (RFC 3986, section
/// 3.3; the path traversal of CWE-22).
pub fn is_segment(value: &str) -> bool {
    !value.is_empty()
        && value != "."
        && value != ".."
        && !value
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control())
}

/// Percent-decodes `text` (`%41` → `A`); `None` for a malformed escape or bytes that are not
/// UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn simple_variables_take_one_segment_and_are_decoded() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(t.variables().collect::<Vec<_>>(), ["id"]);
        assert_eq!(
            t.matches("test://template/123/data"),
            Some(vars(&[("id", "123")]))
        );
        assert_eq!(
            t.matches("test://template/a%20b/data"),
            Some(vars(&[("id", "a b")]))
        );
        for miss in [
            "test://template//data",
            "test://template/1/2/data",
            "test://template/123/datax",
            "test://template/123",
            "test://template/%zz/data",
        ] {
            assert_eq!(t.matches(miss), None, "{miss}");
        }
    }

    #[test]
    fn decoded_separators_and_dot_segments_are_not_segments() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        for (uri, decoded) in [
            ("test://template/%2F/data", "/"),
            ("test://template/%2e%2e/data", ".."),
            ("test://template/..%2Fetc/data", "../etc"),
            ("test://template/a%5Cb/data", "a\\b"),
            ("test://template/a%00/data", "a\0"),
        ] {
            let values = t.matches(uri).unwrap();
            assert_eq!(values["id"], decoded);
            assert!(!is_segment(&values["id"]), "{uri}");
        }
        for good in ["123", "a b", "r\u{e9}sum\u{e9}", "...", ".hidden", "a.b"] {
            assert!(is_segment(good), "{good}");
        }
        for bad in ["", ".", "..", "a/b", "a\\b", "\u{1b}[2J", "a\u{85}"] {
            assert!(!is_segment(bad), "{bad:?}");
        }
    }

    #[test]
    fn reserved_and_fragment_variables_cross_slashes() {
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(
            t.matches("file:///a/b/c.txt"),
            Some(vars(&[("path", "a/b/c.txt")]))
        );
        // `{#x}` brings its own `#` literal.
        let t = UriTemplate::parse("doc://{id}{#section}").unwrap();
        assert_eq!(
            t.matches("doc://7#a/b"),
            Some(vars(&[("id", "7"), ("section", "a/b")]))
        );
        assert_eq!(t.matches("doc://7"), None);
    }

    #[test]
    fn templates_outside_levels_one_and_two_are_refused() {
        for bad in [
            "x://{",
            "x://}",
            "x://{}",
            "x://{?q}",
            "x://{a,b}",
            "x://{a*}",
            "x://{a:3}",
            "x://{a}{b}",
            "x://{a}/{a}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_long_uri_against_many_variables_is_decided_without_backtracking_blowup() {
        // Without the memo of failed positions this is O(n^4) for n = 2000.
        let t = UriTemplate::parse("x://{a}-{b}-{c}-{d}!").unwrap();
        let uri = format!("x://{}", "a-".repeat(1000));
        assert_eq!(t.matches(&uri), None);
        let t = UriTemplate::parse("x://{+a}/{+b}/{+c}!").unwrap();
        assert_eq!(t.matches(&format!("x://{}", "/".repeat(2000))), None);
    }

    proptest! {
        #[test]
        fn expansion_of_simple_values_matches_back(a in "[a-zA-Z0-9_.-]{1,12}", b in "[a-z0-9/]{1,12}") {
            let t = UriTemplate::parse("s://{a}/k/{+b}").unwrap();
            let uri = format!("s://{a}/k/{b}");
            prop_assert_eq!(t.matches(&uri), Some(vars(&[("a", &a), ("b", &b)])));
        }
    }
}
