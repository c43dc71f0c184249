//! Server text made safe to print on a terminal.

use std::borrow::Cow;
use std::fmt::Write as _;

use unicode_general_category::{get_general_category, GeneralCategory};

/// `text` with every character that acts on the terminal or hides what it shows written as
/// `\u{…}`:
/// * every control character other than line feed and tab (ESC and with it every escape
///   sequence, carriage return, backspace, the C1 controls, DEL), so a server cannot move the
///   cursor, recolour, retitle or clear the user's terminal, nor hide what it asks behind a
///   carriage return;
/// * every invisible format character (Unicode general category Cf: the bidirectional
///   overrides, embeddings and isolates U+202A–U+202E and U+2066–U+2069, the marks U+200E,
///   U+200F and U+061C, the zero-width characters U+200B–U+200D and U+2060, the byte order
///   mark, the soft hyphen, the tag characters) and the line and paragraph separators U+2028
///   and U+2029, so a server cannot reorder or hide the text the user reads (the "Trojan
///   Source" attack, CVE-2021-42574).
///
/// A zero-width joiner inside an emoji sequence is shown escaped too: safety over glyphs.
pub(crate) fn clean(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut cleaned = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            let _ = write!(cleaned, "\\u{{{:x}}}", u32::from(c));
        } else {
            cleaned.push(c);
        }
    }
    Cow::Owned(cleaned)
}

fn is_unsafe(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control() && c != '\n' && c != '\t';
    }
    c.is_control()
        || matches!(
            get_general_category(c),
            GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        )
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(clean("plain\ttext\nline"), "plain\ttext\nline");
        assert_eq!(
            clean("\u{1b}[2J\u{1b}]0;owned\u{7}ok\rfake\u{9b}\u{7f}"),
            "\\u{1b}[2J\\u{1b}]0;owned\\u{7}ok\\u{d}fake\\u{9b}\\u{7f}"
        );
    }

    #[test]
    fn invisible_format_characters_are_shown_not_obeyed() {
        // "Trojan Source": a right-to-left override makes `approve` read as `evorppa`.
        assert_eq!(
            clean("say \u{202e}evorppa\u{202c} now"),
            "say \\u{202e}evorppa\\u{202c} now"
        );
        for (c, shown) in [
            ('\u{202a}', "\\u{202a}"),
            ('\u{2066}', "\\u{2066}"),
            ('\u{2069}', "\\u{2069}"),
            ('\u{200e}', "\\u{200e}"),
            ('\u{061c}', "\\u{61c}"),
            ('\u{200b}', "\\u{200b}"),
            ('\u{2060}', "\\u{2060}"),
            ('\u{feff}', "\\u{feff}"),
            ('\u{ad}', "\\u{ad}"),
            ('\u{e0041}', "\\u{e0041}"),
            ('\u{2028}', "\\u{2028}"),
            ('\u{2029}', "\\u{2029}"),
        ] {
            assert_eq!(clean(&format!("a{c}b")), format!("a{shown}b"), "{shown}");
        }
        // Printable text of every script stays as it is, borrowed.
        for kept in ["résumé", "日本語", "مرحبا", "🙂", "naïve café"] {
            assert!(matches!(clean(kept), std::borrow::Cow::Borrowed(k) if k == kept));
        }
    }
}
