//! The NOTIFY payload: a first line naming the sending store instance (its random tag), then
//! one line `<revision> <task id>` per hint, or `*` when the sender lost hints (receivers then
//! re-read everything). Task ids are escaped (`\` as `\\`, a line feed as `\n`) so that any id
//! fits on one line. Nothing else is sent: no scope, no status, no result, since any role that
//! may connect to the database may LISTEN.

use tasks_core::TaskId;
use tasks_runtime::store::Change;

use super::Hint;

/// The most bytes of one payload: PostgreSQL refuses payloads of 8000 bytes and more
/// (`NOTIFY_PAYLOAD_MAX_LENGTH` with the default 8 kB pages).
pub(super) const MAX_PAYLOAD: usize = 7_999;

/// The line that tells receivers to re-read everything.
const RESYNC: &str = "*";

/// The payloads for `hints` (in order), each starting with `tag`'s line and at most
/// [`MAX_PAYLOAD`] bytes; the first carries the resync line when `resync` holds. No payload at
/// all when there is nothing to say.
pub(super) fn encode(tag: &str, resync: bool, hints: &[Hint]) -> Vec<String> {
    let mut payloads = Vec::new();
    let header = format!("{tag}\n");
    let mut current = header.clone();
    if resync {
        current.push_str(RESYNC);
        current.push('\n');
    }
    for hint in hints {
        let line = format!("{} {}\n", hint.revision, escape(hint.id.as_str()));
        if current.len() + line.len() > MAX_PAYLOAD && current.len() > header.len() {
            payloads.push(std::mem::replace(&mut current, header.clone()));
        }
        current.push_str(&line);
    }
    if current.len() > header.len() {
        payloads.push(current);
    }
    payloads
}

/// The changes a payload announces, in order; nothing when it comes from `own_tag` (this
/// store instance's own commits). Lines that do not parse are skipped (logged at debug).
pub(super) fn decode(payload: &str, own_tag: &str) -> Vec<Change> {
    let mut lines = payload.split('\n');
    let Some(tag) = lines.next() else {
        return Vec::new();
    };
    if tag == own_tag {
        return Vec::new();
    }
    lines
        .filter(|line| !line.is_empty())
        .filter_map(|line| {
            let change = parse(line);
            if change.is_none() {
                tracing::debug!(line, "skipping an unparsable change hint");
            }
            change
        })
        .collect()
}

fn parse(line: &str) -> Option<Change> {
    if line == RESYNC {
        return Some(Change::Resync);
    }
    let (revision, id) = line.split_once(' ')?;
    let revision = revision.parse().ok()?;
    let id = TaskId::parse(&unescape(id)?).ok()?;
    Some(Change::Task { id, revision })
}

fn escape(id: &str) -> String {
    let mut escaped = String::with_capacity(id.len());
    for c in id.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '\n' => escaped.push_str("\\n"),
            c => escaped.push(c),
        }
    }
    escaped
}

fn unescape(escaped: &str) -> Option<String> {
    let mut id = String::with_capacity(escaped.len());
    let mut chars = escaped.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next()? {
                '\\' => id.push('\\'),
                'n' => id.push('\n'),
                _ => return None,
            }
        } else {
            id.push(c);
        }
    }
    Some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAG: &str = "0123456789abcdef";

    fn hint(id: &str, revision: u64) -> Hint {
        Hint {
            id: TaskId::parse(id).expect("valid id"),
            revision,
        }
    }

    fn task(id: &str, revision: u64) -> Change {
        Change::Task {
            id: TaskId::parse(id).expect("valid id"),
            revision,
        }
    }

    #[test]
    fn hints_round_trip_in_order_whatever_the_id() {
        let ids = [
            "plain",
            "with space",
            "line\nfeed",
            "back\\slash\\n",
            "€ ✓",
            "*",
        ];
        let hints: Vec<Hint> = ids.iter().zip(1..).map(|(id, r)| hint(id, r)).collect();
        let payloads = encode(TAG, false, &hints);
        assert_eq!(payloads.len(), 1);
        assert!(payloads[0].starts_with("0123456789abcdef\n1 plain\n2 with space\n"));
        let expected: Vec<Change> = ids.iter().zip(1..).map(|(id, r)| task(id, r)).collect();
        assert_eq!(decode(&payloads[0], "another"), expected);
    }

    #[test]
    fn a_stores_own_payloads_are_ignored() {
        let payloads = encode(TAG, true, &[hint("mine", 3)]);
        assert_eq!(decode(&payloads[0], TAG), Vec::new());
        assert_eq!(
            decode(&payloads[0], "fedcba9876543210"),
            vec![Change::Resync, task("mine", 3)]
        );
    }

    #[test]
    fn a_resync_alone_is_one_payload_and_nothing_is_none() {
        assert_eq!(encode(TAG, true, &[]), vec![format!("{TAG}\n*\n")]);
        assert!(encode(TAG, false, &[]).is_empty());
    }

    #[test]
    fn long_batches_are_split_under_the_payload_limit() {
        // 64 ids of 256 bytes, escaped to 512 bytes each: about 33 kB of lines.
        let hints: Vec<Hint> = (0..64u64)
            .map(|i| hint(&format!("{i:02}{}", "\n".repeat(254)), u64::MAX - i))
            .collect();
        let payloads = encode(TAG, true, &hints);
        assert!(payloads.len() >= 5, "{} payloads", payloads.len());
        let mut decoded = Vec::new();
        for payload in &payloads {
            assert!(payload.len() <= MAX_PAYLOAD, "{} bytes", payload.len());
            assert!(payload.starts_with("0123456789abcdef\n"));
            decoded.extend(decode(payload, "another"));
        }
        let mut expected = vec![Change::Resync];
        expected.extend(hints.iter().map(|h| task(h.id.as_str(), h.revision)));
        assert_eq!(decoded, expected);
    }

    #[test]
    fn unparsable_lines_are_skipped() {
        let payload = format!(
            "other\n1 ok\nnot-a-number x\n2\n3 bad\\escape\n4 \n{}\n5 fine\n",
            "9".repeat(30)
        );
        assert_eq!(decode(&payload, TAG), vec![task("ok", 1), task("fine", 5)]);
        assert_eq!(decode("", TAG), Vec::new());
    }
}
