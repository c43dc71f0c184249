//! Times as people read them ("3 min ago", "in 2 h"), with the exact RFC 3339 time beside.

use maud::{html, Markup};
use tasks_core::Timestamp;

/// `ms` milliseconds as a short duration: `42 s`, `3 min`, `2 h`, `5 d`.
pub(crate) fn span(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..=59 => format!("{secs} s"),
        60..=3599 => format!("{} min", secs / 60),
        3600..=86_399 => format!("{} h", secs / 3600),
        _ => format!("{} d", secs / 86_400),
    }
}

/// `at` relative to `now`: `3 min ago`, `in 2 h`, `just now`.
pub(crate) fn relative(now: Timestamp, at: Timestamp) -> String {
    let (now, at) = (now.unix_millis(), at.unix_millis());
    if now.abs_diff(at) < 1000 {
        "just now".to_owned()
    } else if at < now {
        format!("{} ago", span(now - at))
    } else {
        format!("in {}", span(at - now))
    }
}

/// A `<time>` element: the relative text, the exact time in `datetime` and `title`.
pub(crate) fn time(now: Timestamp, at: Timestamp) -> Markup {
    let exact = at.to_string();
    html! { time datetime=(exact) title=(exact) { (relative(now, at)) } }
}

/// The TTL left at `now` of a task expiring at `expires`: `12 min`, `expired`, `none`.
pub(crate) fn ttl_left(now: Timestamp, expires: Option<Timestamp>) -> Markup {
    match expires {
        None => html! { "none" },
        Some(at) if at.unix_millis() <= now.unix_millis() => html! { "expired" },
        Some(at) => {
            let exact = at.to_string();
            html! { time datetime=(exact) title=(exact) { (span(at.unix_millis() - now.unix_millis())) } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_relative() {
        let now = Timestamp::from_unix_millis(10_000_000);
        assert_eq!(relative(now, now), "just now");
        assert_eq!(
            relative(now, Timestamp::from_unix_millis(10_000_000 - 180_000)),
            "3 min ago"
        );
        assert_eq!(
            relative(now, Timestamp::from_unix_millis(10_000_000 + 7_200_000)),
            "in 2 h"
        );
        assert_eq!(span(42_500), "42 s");
        assert_eq!(span(5 * 86_400_000), "5 d");
        assert_eq!(ttl_left(now, None).into_string(), "none");
        assert_eq!(ttl_left(now, Some(now)).into_string(), "expired");
    }
}
