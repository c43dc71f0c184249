//! Server text made safe to print on a terminal.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character other than line feed and tab (ESC and with it every
/// escape sequence, carriage return, backspace, the C1 controls, DEL) written as `\u{…}`, so
/// a server cannot move the cursor, recolour, retitle or clear the user's terminal, nor hide
/// what it asks behind a carriage return.
pub(crate) fn clean(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut cleaned = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            let _ = write!(cleaned, "\\u{{{:x}}}", u32::from(c));
        } else {
            cleaned.push(c);
        }
    }
    Cow::Owned(cleaned)
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
}
