//! A 2025 session: its id, the phase machine of its lifecycle, and the pure state machines of
//! what outlives one message of it.
//!
//! | module | concept |
//! |---|---|
//! | `table` | [`SessionTable`]: the live sessions, their owners, idle expiry and the limit |
//! | `requests` | [`RequestSpace`]: server-to-client request ids and input rounds, answers matched or refused |
//! | `rounds` | [`CallRounds`]: a call run now: when it answers, asks a round, gives up; what a refusal answers |
//! | `client` | [`ClientRequests`]: the client's requests being served: duplicate ids, `notifications/cancelled` |
//! | `delivery` | [`TaskBook`] and [`GetStream`]: which stream delivers a task's questions, and GET-stream re-delivery |
//! | `stream` | [`SessionStream`]: a session's GET stream: which notifications go out, which deliveries run |
//! | `wait` | [`ResultWait`]: a 2025-11-25 `tasks/result` waiting for its task: when it answers, delivers, re-reads |
//!
//! Each is events in, decisions out: no IO, no clock (time is an argument), no randomness (the
//! session id comes from the caller's random bytes). The transport keeps the async part: the
//! streams, the tokens that stop them, and the channels the answers travel on.
//!
//! MCP 2025-11-25 transports, "Session Management": the server assigns `Mcp-Session-Id` on the
//! response carrying the `InitializeResult`; the id is visible ASCII and cryptographically
//! random; later requests carry it; a request without it (other than `initialize`) SHOULD get
//! HTTP 400; an unknown or ended session MUST get HTTP 404. Lifecycle, "Initialization": the
//! client sends `notifications/initialized` once it has the result.
//!
//! | phase | `initialize` | `notifications/initialized` | other requests |
//! |---|---|---|---|
//! | [`Phase::Initializing`] (the result was sent) | -32600 `Server already initialized` | → [`Phase::Ready`] | served (this server's leniency: clients that do not wait are not refused) |
//! | [`Phase::Ready`] | -32600 `Server already initialized` | stays | served |
//!
//! An ended session (DELETE, idle timeout, the session limit) no longer exists: its id is
//! unknown (HTTP 404).

use std::fmt;

use crate::admission::HeaderSource;

mod client;
mod delivery;
mod requests;
mod rounds;
mod stream;
mod table;
mod wait;

pub use client::{ClientRequests, RequestKey};
pub use delivery::{GetStream, Seen, Step, TaskBook, MAX_SESSION_TASKS, RESCAN_LIMIT};
pub use requests::{RequestSpace, Resolution, RoundId};
pub use rounds::{Asker, CallRounds, Refused, RoundStep, MAX_INPUT_ROUNDS};
pub use stream::{Effect, SessionStream};
pub use table::{Activity, Idle, Lookup, SessionTable};
pub use wait::{Delivered, ResultWait, WaitStep};

/// Random bytes in a session id: 128 bits, written as 32 lowercase hex digits.
pub const SESSION_ID_RANDOM_BYTES: usize = 16;

/// A session id: 32 lowercase hex digits (visible ASCII), minted from random bytes the caller
/// draws from a CSPRNG.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SessionId(Box<str>);

impl SessionId {
    /// Mints an id from `bytes`.
    pub fn from_random_bytes(bytes: [u8; SESSION_ID_RANDOM_BYTES]) -> Self {
        let mut text = String::with_capacity(SESSION_ID_RANDOM_BYTES * 2);
        for byte in bytes {
            text.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
            text.push(char::from(b"0123456789abcdef"[usize::from(byte & 0x0f)]));
        }
        SessionId(text.into())
    }

    /// Reads a `Mcp-Session-Id` header value: `None` unless it has the minted shape, so a
    /// malformed id is simply unknown (HTTP 404) and never reaches a lookup as arbitrary bytes.
    pub fn parse(raw: &[u8]) -> Option<Self> {
        let trimmed = raw.trim_ascii();
        let valid = trimmed.len() == SESSION_ID_RANDOM_BYTES * 2
            && trimmed
                .iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b));
        // Only ASCII hex digits passed: the conversion cannot fail.
        valid
            .then(|| std::str::from_utf8(trimmed).ok())
            .flatten()
            .map(|text| SessionId(text.into()))
    }

    /// The one `Mcp-Session-Id` of a request, when it has the minted shape; `None` when the
    /// header is absent, repeated, or malformed (so the session is unknown).
    pub fn of(head: &(impl HeaderSource + ?Sized)) -> Option<Self> {
        let mut values = head.values(super::SESSION_HEADER);
        let raw = values.next()?;
        values
            .next()
            .is_none()
            .then(|| SessionId::parse(raw))
            .flatten()
    }

    /// The id as sent in the header.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SessionId {
    // Only a prefix: the id is the session's only credential when there is no authentication.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({}…)", &self.0[..6])
    }
}

/// Where a live session is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The `InitializeResult` was sent; `notifications/initialized` has not arrived.
    Initializing,
    /// The client confirmed initialization.
    Ready,
}

impl Phase {
    /// The phase after `notifications/initialized`.
    pub fn initialized(self) -> Phase {
        Phase::Ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_request_names_a_session_with_exactly_one_minted_header() {
        let id = SessionId::from_random_bytes([7; SESSION_ID_RANDOM_BYTES]);
        let one: &[(&str, &[u8])] = &[("mcp-session-id", id.as_str().as_bytes())];
        assert_eq!(SessionId::of(one), Some(id.clone()));
        let two: &[(&str, &[u8])] = &[
            ("Mcp-Session-Id", id.as_str().as_bytes()),
            ("Mcp-Session-Id", id.as_str().as_bytes()),
        ];
        assert_eq!(SessionId::of(two), None);
        let malformed: &[(&str, &[u8])] = &[("Mcp-Session-Id", b"not-an-id")];
        assert_eq!(SessionId::of(malformed), None);
        assert_eq!(SessionId::of(&[] as &[(&str, &[u8])]), None);
    }

    proptest! {
        #[test]
        fn minted_ids_parse_back_and_are_visible_ascii(bytes in any::<[u8; 16]>()) {
            let id = SessionId::from_random_bytes(bytes);
            prop_assert_eq!(id.as_str().len(), 32);
            prop_assert!(id.as_str().bytes().all(|b| b.is_ascii_graphic()));
            prop_assert_eq!(SessionId::parse(id.as_str().as_bytes()), Some(id.clone()));
            prop_assert_eq!(SessionId::parse(format!(" {} ", id.as_str()).as_bytes()), Some(id));
        }

        #[test]
        fn anything_else_is_no_session(raw in proptest::collection::vec(any::<u8>(), 0..40)) {
            let minted = raw.len() == 32 && raw.iter().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b));
            prop_assert_eq!(SessionId::parse(&raw).is_some(), minted);
        }
    }

    #[test]
    fn debug_shows_only_a_prefix() {
        let id = SessionId::from_random_bytes([0xab; 16]);
        assert_eq!(format!("{id:?}"), "SessionId(ababab…)");
    }
}
