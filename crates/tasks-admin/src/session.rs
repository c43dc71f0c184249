//! Browser sessions: a random session id in an `HttpOnly; SameSite=Strict` cookie, and the
//! CSRF token that goes with it, kept in memory (a restart logs every browser out).
//!
//! Sessions are looked up by the SHA-256 of their id, so the lookup's timing says nothing
//! about the ids held.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest as _, Sha256};
use tokio::time::Instant;

/// The session cookie's name.
pub(crate) const COOKIE: &str = "tasks_admin_session";

/// The most sessions held at once; a login past it drops the oldest.
const MAX_SESSIONS: usize = 256;

/// One logged-in browser.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// The per-session CSRF token, embedded in every state-changing form.
    pub(crate) csrf: String,
    expires: Instant,
}

/// The live sessions.
#[derive(Debug)]
pub(crate) struct Sessions {
    lifetime: Duration,
    held: Mutex<HashMap<[u8; 32], Session>>,
}

/// 32 random bytes as base64url text, or `None` when the OS has no randomness.
fn random_text() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(URL_SAFE_NO_PAD.encode(bytes))
}

fn key(id: &str) -> [u8; 32] {
    Sha256::digest(id.as_bytes()).into()
}

impl Sessions {
    /// No sessions; each new one lasts `lifetime`.
    pub(crate) fn new(lifetime: Duration) -> Self {
        Sessions {
            lifetime,
            held: Mutex::new(HashMap::new()),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Session>> {
        match self.held.lock() {
            Ok(held) => held,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// A new session: its id (the cookie's value). `None` when the OS has no randomness.
    pub(crate) fn open(&self) -> Option<String> {
        let id = random_text()?;
        let csrf = random_text()?;
        let now = Instant::now();
        let mut held = self.held();
        held.retain(|_, session| session.expires > now);
        if held.len() >= MAX_SESSIONS {
            if let Some(oldest) = held
                .iter()
                .min_by_key(|(_, session)| session.expires)
                .map(|(key, _)| *key)
            {
                held.remove(&oldest);
            }
        }
        held.insert(
            key(&id),
            Session {
                csrf,
                expires: now + self.lifetime,
            },
        );
        Some(id)
    }

    /// The live session of cookie value `id`.
    pub(crate) fn find(&self, id: &str) -> Option<Session> {
        let key = key(id);
        let mut held = self.held();
        match held.get(&key) {
            Some(session) if session.expires > Instant::now() => Some(session.clone()),
            Some(_) => {
                held.remove(&key);
                None
            }
            None => None,
        }
    }

    /// Ends the session of cookie value `id` (a logout).
    pub(crate) fn close(&self, id: &str) {
        self.held().remove(&key(id));
    }
}

/// The value of cookie `name` in a `Cookie` header.
pub(crate) fn cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_session_is_found_until_it_expires_or_closes() {
        let sessions = Sessions::new(Duration::from_secs(60));
        let id = sessions.open().expect("randomness");
        let csrf = sessions.find(&id).expect("live").csrf;
        assert_eq!(csrf.len(), 43);
        assert!(sessions.find("forged").is_none());
        tokio::time::advance(Duration::from_secs(61)).await;
        assert!(sessions.find(&id).is_none());
        let other = sessions.open().expect("randomness");
        sessions.close(&other);
        assert!(sessions.find(&other).is_none());
    }

    #[test]
    fn cookies_are_read_by_name() {
        let header = "a=1; tasks_admin_session=xyz; b=2";
        assert_eq!(cookie(header, COOKIE), Some("xyz"));
        assert_eq!(cookie(header, "c"), None);
    }
}
