//! The table of live sessions: bounded, with an idle timeout, each session owned by the
//! caller that opened it.
//!
//! MCP 2025-11-25 transports, "Session Management"
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>): the server
//! MAY terminate a session at any time, after which requests naming it MUST get HTTP 404; the
//! client then starts a new session with a new `initialize`. When and which sessions end is
//! this server's choice, decided here:
//!
//! * a session is *busy* while it serves a request or has a GET stream open
//!   ([`Activity::begin`]); otherwise it is idle since the last of those ended;
//! * a session idle for at least the idle timeout ends the next time it is looked up, or when
//!   the table is full and a new session needs room;
//! * a full table of sessions within their idle time ends the one idle longest; only when
//!   every session is busy is the newcomer refused ([`McpError::SessionLimit`]);
//! * looked up under another owner a session does not exist (a leaked id is useless to
//!   another principal), and that lookup does not end it.
//!
//! Time is an argument: a monotonic [`Duration`] since an origin the caller fixes (the
//! driver's start), never read here.

use std::collections::HashMap;
use std::time::Duration;

use super::SessionId;
use crate::McpError;

/// When a session was last busy: the input of the table's expiry decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activity {
    busy: usize,
    last_seen: Duration,
}

impl Activity {
    /// A session opened at `now`, idle since then.
    pub fn new(now: Duration) -> Self {
        Activity {
            busy: 0,
            last_seen: now,
        }
    }

    /// A request started being served, or a GET stream opened: busy until the matching
    /// [`Activity::finish`].
    pub fn begin(&mut self) {
        self.busy += 1;
    }

    /// What [`Activity::begin`] started ended at `now`.
    pub fn finish(&mut self, now: Duration) {
        self.busy = self.busy.saturating_sub(1);
        self.last_seen = self.last_seen.max(now);
    }

    /// A request named the session at `now`.
    pub fn touch(&mut self, now: Duration) {
        self.last_seen = self.last_seen.max(now);
    }

    /// Since when the session is idle; `None` while it is busy.
    pub fn idle_since(&self) -> Option<Duration> {
        (self.busy == 0).then_some(self.last_seen)
    }
}

/// A value the table holds: whatever the driver keeps per session, able to say since when
/// it is idle (from its [`Activity`]).
pub trait Idle {
    /// Since when the session is idle; `None` while it is busy.
    fn idle_since(&self) -> Option<Duration>;
}

/// The live sessions, by id, each with its owner `O` (the caller's scope) and the driver's
/// value `V`.
#[derive(Debug)]
pub struct SessionTable<O, V> {
    max_sessions: usize,
    idle_timeout: Duration,
    live: HashMap<SessionId, (O, V)>,
}

/// What a lookup found ([`SessionTable::get`]).
#[derive(Debug)]
pub enum Lookup<'a, V> {
    /// The session is live (the caller touches its [`Activity`]).
    Live(&'a V),
    /// It was idle too long: it is removed now, and the caller ends it.
    Expired(V),
    /// No session of this owner has this id.
    Unknown,
}

impl<O: PartialEq, V: Idle> SessionTable<O, V> {
    /// An empty table of at most `max_sessions`, ending those idle for `idle_timeout`.
    pub fn new(max_sessions: usize, idle_timeout: Duration) -> Self {
        SessionTable {
            max_sessions,
            idle_timeout,
            live: HashMap::new(),
        }
    }

    /// Live sessions.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether no session is live.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    fn expired(&self, value: &V, now: Duration) -> bool {
        value
            .idle_since()
            .is_some_and(|since| now.saturating_sub(since) >= self.idle_timeout)
    }

    /// Admits session `id` of `owner` at `now`: the sessions ended to make room (the caller
    /// ends each: its streams close, its requests stop).
    ///
    /// # Errors
    /// [`McpError::SessionLimit`] (-32603 `Too many sessions`, HTTP 503) when the table is
    /// full of busy sessions; nothing is ended then.
    pub fn open(
        &mut self,
        id: SessionId,
        owner: O,
        value: V,
        now: Duration,
    ) -> Result<Vec<V>, McpError> {
        let mut ended = Vec::new();
        if self.live.len() >= self.max_sessions {
            let expired: Vec<SessionId> = self
                .live
                .iter()
                .filter(|(_, (_, v))| self.expired(v, now))
                .map(|(id, _)| id.clone())
                .collect();
            ended.extend(
                expired
                    .iter()
                    .filter_map(|id| self.live.remove(id))
                    .map(|e| e.1),
            );
        }
        if self.live.len() >= self.max_sessions {
            // The one idle longest makes room (its client gets 404 and starts a new
            // session), so a flood of `initialize` cannot lock new clients out.
            let oldest = self
                .live
                .iter()
                .filter_map(|(id, (_, v))| Some((v.idle_since()?, id)))
                .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.as_str().cmp(b.1.as_str())))
                .map(|(_, id)| id.clone());
            // Still full after the expired ones ended means none had expired.
            match oldest.and_then(|id| self.live.remove(&id)) {
                Some((_, evicted)) => ended.push(evicted),
                None => return Err(McpError::SessionLimit),
            }
        }
        self.live.insert(id, (owner, value));
        Ok(ended)
    }

    /// Session `id` of `owner` at `now`: live, expired (removed now), or unknown (never
    /// opened, ended, or another owner's: that lookup changes nothing).
    pub fn get(&mut self, id: &SessionId, owner: &O, now: Duration) -> Lookup<'_, V> {
        match self.live.get(id) {
            Some((o, v)) if o == owner => {
                if self.expired(v, now) {
                    match self.live.remove(id) {
                        Some((_, v)) => Lookup::Expired(v),
                        None => Lookup::Unknown,
                    }
                } else {
                    match self.live.get(id) {
                        Some((_, v)) => Lookup::Live(v),
                        None => Lookup::Unknown,
                    }
                }
            }
            _ => Lookup::Unknown,
        }
    }

    /// Ends session `id` of `owner` (DELETE): the removed value, `None` when there is none.
    pub fn end(&mut self, id: &SessionId, owner: &O) -> Option<V> {
        match self.live.get(id) {
            Some((o, _)) if o == owner => self.live.remove(id).map(|(_, v)| v),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Fake {
        n: u8,
        activity: Activity,
    }

    impl Idle for Fake {
        fn idle_since(&self) -> Option<Duration> {
            self.activity.idle_since()
        }
    }

    fn id(n: u8) -> SessionId {
        SessionId::from_random_bytes([n; 16])
    }

    const TIMEOUT: Duration = Duration::from_secs(60);

    #[derive(Debug, Clone)]
    enum Op {
        Open { n: u8, owner: u8, busy: bool },
        Get { n: u8, owner: u8 },
        End { n: u8, owner: u8 },
        Wait(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..12, 0u8..2, any::<bool>()).prop_map(|(n, owner, busy)| Op::Open {
                n,
                owner,
                busy
            }),
            (0u8..12, 0u8..2).prop_map(|(n, owner)| Op::Get { n, owner }),
            (0u8..12, 0u8..2).prop_map(|(n, owner)| Op::End { n, owner }),
            (0u64..90).prop_map(Op::Wait),
        ]
    }

    proptest! {
        /// The table never holds more than its limit, never ends a busy session, refuses a
        /// newcomer only when every session is busy, ends a session only once, and never
        /// shows one owner's session to another.
        #[test]
        fn the_table_model(ops in proptest::collection::vec(op(), 1..60), max in 1usize..5) {
            let mut table: SessionTable<u8, Fake> = SessionTable::new(max, TIMEOUT);
            let mut model: HashMap<u8, (u8, Fake)> = HashMap::new();
            let mut now = Duration::ZERO;
            for op in ops {
                match op {
                    Op::Open { n, owner, busy } => {
                        if model.contains_key(&n) {
                            continue;
                        }
                        let mut activity = Activity::new(now);
                        if busy {
                            activity.begin();
                        }
                        let all_busy = model.values().all(|(_, f)| f.idle_since().is_none());
                        let full = model.len() >= max;
                        match table.open(id(n), owner, Fake { n, activity }, now) {
                            Ok(ended) => {
                                prop_assert!(!(full && all_busy));
                                prop_assert_eq!(ended.is_empty(), !full);
                                for e in &ended {
                                    prop_assert!(e.idle_since().is_some(), "a busy session ended");
                                    prop_assert!(model.remove(&e.n).is_some(), "ended twice");
                                }
                                model.insert(n, (owner, Fake { n, activity }));
                            }
                            Err(error) => {
                                prop_assert_eq!(error, McpError::SessionLimit);
                                prop_assert!(full && all_busy);
                            }
                        }
                    }
                    Op::Get { n, owner } => match table.get(&id(n), &owner, now) {
                        Lookup::Live(v) => {
                            prop_assert_eq!(model.get(&n).map(|m| (m.0, m.1.n)), Some((owner, v.n)));
                            let since = v.idle_since();
                            prop_assert!(since.is_none_or(|s| now - s < TIMEOUT));
                        }
                        Lookup::Expired(v) => {
                            prop_assert_eq!(v.n, n);
                            prop_assert_eq!(model.remove(&n).map(|m| m.0), Some(owner));
                        }
                        Lookup::Unknown => {
                            prop_assert!(model.get(&n).is_none_or(|m| m.0 != owner));
                        }
                    },
                    Op::End { n, owner } => {
                        let ended = table.end(&id(n), &owner).map(|v| v.n);
                        let expected = match model.get(&n) {
                            Some((o, _)) if *o == owner => model.remove(&n).map(|m| m.1.n),
                            _ => None,
                        };
                        prop_assert_eq!(ended, expected);
                    }
                    Op::Wait(secs) => now += Duration::from_secs(secs),
                }
                prop_assert!(table.len() <= max);
                prop_assert_eq!(table.len(), model.len());
            }
        }
    }

    #[test]
    fn activity_is_idle_only_when_nothing_runs() {
        let mut a = Activity::new(Duration::from_secs(1));
        assert_eq!(a.idle_since(), Some(Duration::from_secs(1)));
        a.begin();
        a.begin();
        a.finish(Duration::from_secs(5));
        assert_eq!(a.idle_since(), None);
        a.finish(Duration::from_secs(7));
        assert_eq!(a.idle_since(), Some(Duration::from_secs(7)));
        a.touch(Duration::from_secs(3));
        assert_eq!(a.idle_since(), Some(Duration::from_secs(7)));
    }
}
