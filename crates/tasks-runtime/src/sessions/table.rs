//! The table of a process's live sessions: opening (the id drawn from the runtime's
//! randomness), lookup by id and owner, idle expiry and the limit ([`SessionTable`] decides).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tasks_core::plan::HeaderSource;
use tasks_core::sessions::session::{Lookup, SessionTable};
use tasks_core::sessions::session::{SessionId, SESSION_ID_RANDOM_BYTES};
use tasks_core::sessions::{SessionView, SESSION_HEADER};
use tasks_core::{JsonObject, McpError};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::live::{Entry, Session};
use super::SessionConfig;
use crate::entropy::Randomness;
use crate::lock::lock;
use crate::scope::{Caller, Scope};

/// The table of live sessions.
#[derive(Debug)]
pub struct Sessions {
    table: Mutex<SessionTable<Scope, Entry>>,
    /// The server's shutdown: every session ends with it (its calls stop, its streams close).
    shutdown: CancellationToken,
    /// Where session ids are drawn: the runtime's randomness.
    entropy: Randomness,
    /// The origin of the table's time.
    origin: Instant,
}

impl Sessions {
    /// An empty table with `config`'s limits; every session ends with `shutdown`; ids are
    /// drawn from `entropy`.
    pub fn new(config: SessionConfig, shutdown: CancellationToken, entropy: Randomness) -> Self {
        Sessions {
            table: Mutex::new(SessionTable::new(config.max_sessions, config.idle_timeout)),
            shutdown,
            entropy,
            origin: Instant::now(),
        }
    }

    fn now(&self) -> Duration {
        Instant::now().saturating_duration_since(self.origin)
    }

    /// Opens a session for `scope`.
    ///
    /// # Errors
    /// -32603 `Too many sessions` (HTTP 503) when the table is full of busy sessions (an idle
    /// one is ended to make room first); -32603 when no random id can be drawn.
    pub fn open(
        &self,
        version: &'static str,
        caller: Caller,
        client_capabilities: JsonObject,
    ) -> Result<Arc<Session>, McpError> {
        let bytes: [u8; SESSION_ID_RANDOM_BYTES] = self
            .entropy
            .bytes()
            .map_err(|_| McpError::Internal("Could not draw a session id"))?;
        let scope = caller.scope.clone();
        let now = self.now();
        let session = Arc::new(Session::new(
            SessionId::from_random_bytes(bytes),
            version,
            caller,
            client_capabilities,
            &self.shutdown,
            (self.origin, now),
        ));
        let mut table = lock(&self.table);
        let ended = table.open(session.id.clone(), scope, Entry(session.clone()), now)?;
        for Entry(ended) in ended {
            ended.ended.cancel();
        }
        tracing::debug!(
            version = session.version,
            live = table.len(),
            "2025 session opened"
        );
        Ok(session)
    }

    /// The live session `id` of `scope`; `None` when unknown, idle too long (it ends now), or
    /// opened by another scope.
    pub fn get(&self, id: &SessionId, scope: &Scope) -> Option<Arc<Session>> {
        let now = self.now();
        match lock(&self.table).get(id, scope, now) {
            Lookup::Live(Entry(session)) => {
                session.touch(now);
                Some(session.clone())
            }
            Lookup::Expired(Entry(session)) => {
                session.ended.cancel();
                None
            }
            Lookup::Unknown => None,
        }
    }

    /// The session a request's `Mcp-Session-Id` names ([`SessionId::of`]) for `scope`, as the
    /// session planner sees it ([`SessionView`]), with the live session if any.
    pub fn lookup(
        &self,
        head: &(impl HeaderSource + ?Sized),
        scope: &Scope,
    ) -> (SessionView, Option<Arc<Session>>) {
        if head.values(SESSION_HEADER).next().is_none() {
            return (SessionView::Absent, None);
        }
        match SessionId::of(head).and_then(|id| self.get(&id, scope)) {
            Some(session) => {
                let (phase, tasks, list) = (session.phase(), session.tasks, session.list);
                (SessionView::Live { phase, tasks, list }, Some(session))
            }
            None => (SessionView::Unknown, None),
        }
    }

    /// Ends session `id` of `scope` (DELETE); `false` when there is none.
    pub fn end(&self, id: &SessionId, scope: &Scope) -> bool {
        let ended = lock(&self.table).end(id, scope);
        ended.map(|Entry(session)| session.ended.cancel()).is_some()
    }
}
