//! The router's shared state.

use std::sync::Arc;
use std::time::Duration;

use tasks_runtime::TaskRuntime;

use crate::config::AdminConfig;
use crate::limit::Bucket;
use crate::session::Sessions;

/// What every handler reads: the runtime, the configuration, the sessions and the bucket.
#[derive(Debug)]
pub(crate) struct AdminState {
    pub(crate) runtime: TaskRuntime,
    pub(crate) config: AdminConfig,
    pub(crate) sessions: Sessions,
    pub(crate) bucket: Bucket,
}

/// The state as handlers receive it.
pub(crate) type Shared = Arc<AdminState>;

impl AdminState {
    pub(crate) fn new(runtime: TaskRuntime, config: AdminConfig) -> Shared {
        Arc::new(AdminState {
            sessions: Sessions::new(Duration::from_secs(config.session_secs.max(1))),
            bucket: Bucket::new(config.rate_limit),
            runtime,
            config,
        })
    }
}

/// How a request proved it is the operator (put in its extensions by [`crate::auth`]).
#[derive(Debug, Clone)]
pub(crate) enum Auth {
    /// `Authorization: Bearer` with the admin token: no ambient credential, no CSRF token.
    Bearer,
    /// A browser session's cookie.
    Session {
        /// The cookie's value.
        id: String,
        /// The session's CSRF token.
        csrf: String,
    },
}

impl Auth {
    /// The CSRF token forms must carry (none for a bearer).
    pub(crate) fn csrf(&self) -> Option<&str> {
        match self {
            Auth::Bearer => None,
            Auth::Session { csrf, .. } => Some(csrf),
        }
    }
}
