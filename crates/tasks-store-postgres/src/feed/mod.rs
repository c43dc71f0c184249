//! The change feed: this store instance's commits announced to the other processes sharing
//! the schema, theirs received, through PostgreSQL `LISTEN`/`NOTIFY` on two dedicated
//! connections, never inside a data transaction. See the [crate documentation](crate#change-feed).

mod backoff;
mod listener;
mod notifier;
mod payload;

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tasks_core::TaskId;
use tasks_runtime::store::Change;
use tokio::sync::{broadcast, mpsc};
use tokio_postgres::{Config, Notification};
use tokio_util::sync::CancellationToken;

use crate::connector::{Connector, Messages};

/// Hints queued for the notifier at most; more are dropped (and counted) rather than making a
/// write wait.
const QUEUE: usize = 4_096;

/// Changes buffered per subscriber of [`Feed::subscribe`]; one that falls further behind
/// receives `RecvError::Lagged`, which means the same as [`Change::Resync`].
const SUBSCRIBER_BUFFER: usize = 4_096;

/// How long [`Feed::start`] waits for the listener's first `LISTEN`.
const FIRST_LISTEN: Duration = Duration::from_secs(5);

/// The `application_name` of the connection that sends NOTIFY: the pool's name (the
/// connection string's `application_name`, by default `mcp-tasks`) and `-notify`.
fn notify_application(config: &Config) -> String {
    format!(
        "{}-notify",
        config.get_application_name().unwrap_or("mcp-tasks")
    )
}

/// The `application_name` of the connection that LISTENs: the pool's name and `-listen`.
fn listen_application(config: &Config) -> String {
    format!(
        "{}-listen",
        config.get_application_name().unwrap_or("mcp-tasks")
    )
}

/// "Task `id` was committed at `revision` by this store instance."
#[derive(Debug, Clone)]
pub(crate) struct Hint {
    pub(crate) id: TaskId,
    pub(crate) revision: u64,
}

/// The feed of one store instance: the queue to its notifier, the sender its listener feeds,
/// and the counters. Its background tasks stop once `stop` is cancelled (when the last clone of
/// the store is dropped) and, for the notifier, once the queue is closed and sent.
pub(crate) struct Feed {
    hinter: Hinter,
    changes: broadcast::Sender<Change>,
    listener_pid: Arc<AtomicI32>,
    notifier_pid: Arc<AtomicI32>,
}

/// Queues hints for the notifier of one store instance; cloned into whatever commits.
#[derive(Clone)]
pub(crate) struct Hinter {
    hints: mpsc::Sender<Hint>,
    dropped: Arc<AtomicU64>,
}

impl Hinter {
    /// Queues a hint for the notifier without waiting: when the queue is full the hint is
    /// dropped and counted (the notifier logs the count and tells the listeners to resync).
    pub(crate) fn hint(&self, id: &TaskId, revision: u64) {
        let hint = Hint {
            id: id.clone(),
            revision,
        };
        if let Err(mpsc::error::TrySendError::Full(_)) = self.hints.try_send(hint) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// What both background tasks need to open their connections.
#[derive(Clone)]
struct Link {
    config: Config,
    connector: Connector,
    /// The NOTIFY channel of the schema.
    channel: String,
    /// This store instance's random tag, the first line of each of its payloads.
    tag: String,
    /// The server, user and database, for logs (never the password).
    target: String,
    stop: CancellationToken,
}

impl Feed {
    /// Starts the notifier and the listener for `schema`, on connections configured like
    /// `config` and opened through `connector`, and waits (up to [`FIRST_LISTEN`]) until the
    /// listener listens, so that every commit of another process after this returns is hinted.
    /// The connections retry with backoff in the background, so this never fails; `stop` ends
    /// them.
    pub(crate) async fn start(
        config: &Config,
        connector: Connector,
        schema: &str,
        target: String,
        stop: CancellationToken,
    ) -> Feed {
        let link = Link {
            config: config.clone(),
            connector,
            channel: channel(schema),
            tag: tag(),
            target: target.clone(),
            stop,
        };
        let (hints, queue) = mpsc::channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let (changes, mut first) = broadcast::channel(SUBSCRIBER_BUFFER);
        let listener_pid = Arc::new(AtomicI32::new(0));
        let notifier_pid = Arc::new(AtomicI32::new(0));

        let mut notify = link.clone();
        notify.config.application_name(notify_application(config));
        tokio::spawn(notifier::run(
            notify,
            queue,
            dropped.clone(),
            notifier_pid.clone(),
        ));

        let mut listen = link;
        listen.config.application_name(listen_application(config));
        listen.config.keepalives(true);
        tokio::spawn(listener::run(listen, changes.clone(), listener_pid.clone()));
        if tokio::time::timeout(FIRST_LISTEN, first.recv())
            .await
            .is_err()
        {
            tracing::warn!(
                target = %target,
                "change feed: not listening yet; other processes' commits are hinted once it is \
                 (a Resync follows)"
            );
        }

        Feed {
            hinter: Hinter { hints, dropped },
            changes,
            listener_pid,
            notifier_pid,
        }
    }

    /// The handle that queues hints for the notifier.
    pub(crate) fn hinter(&self) -> Hinter {
        self.hinter.clone()
    }

    /// A new receiver of the other processes' changes.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// The server process id of the listening connection, while it is listening.
    pub(crate) fn listener_pid(&self) -> Option<i32> {
        pid(&self.listener_pid)
    }

    /// The server process id of the notifying connection, while it is open.
    pub(crate) fn notifier_pid(&self) -> Option<i32> {
        pid(&self.notifier_pid)
    }
}

fn pid(stored: &AtomicI32) -> Option<i32> {
    match stored.load(Ordering::Acquire) {
        0 => None,
        pid => Some(pid),
    }
}

/// The NOTIFY channel of `schema`: `mcp_tasks_` and the first 12 hex digits of the schema
/// name's SHA-256 (22 characters, well under the 63 of an identifier, whatever the schema).
fn channel(schema: &str) -> String {
    let digest = Sha256::digest(schema.as_bytes());
    format!("mcp_tasks_{}", &hex(&digest)[..12])
}

/// 16 random hex digits naming this store instance in its payloads.
fn tag() -> String {
    let mut bytes = [0u8; 8];
    if let Err(error) = getrandom::fill(&mut bytes) {
        // Practically impossible; a tag still differs per process and instance.
        tracing::warn!(%error, "no OS randomness for the change feed's tag");
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        bytes = hasher.finish().to_be_bytes();
    }
    hex(&bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Drives a dedicated connection until `work` (a query on its client) is done, handing each
/// notification that arrives meanwhile to `note`. `Err` with the reason when the connection
/// closes first.
async fn drive<F: std::future::Future>(
    messages: &mut Messages,
    work: F,
    mut note: impl FnMut(Notification),
) -> Result<F::Output, String> {
    use futures_util::StreamExt;

    tokio::pin!(work);
    loop {
        tokio::select! {
            biased;
            output = &mut work => return Ok(output),
            message = messages.next() => match message {
                Some(Ok(message)) => received(message, &mut note),
                Some(Err(error)) => return Err(crate::backend::describe(&error)),
                None => return Err("the connection closed".into()),
            },
        }
    }
}

/// One asynchronous message: a notification goes to `note`, a notice to the debug log.
fn received(message: tokio_postgres::AsyncMessage, note: &mut impl FnMut(Notification)) {
    match message {
        tokio_postgres::AsyncMessage::Notification(notification) => note(notification),
        tokio_postgres::AsyncMessage::Notice(notice) => {
            tracing::debug!(
                message = notice.message(),
                "notice on a change feed connection"
            );
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_channel_is_a_short_hash_of_the_schema() {
        // sha256("mcp_tasks") = 59df56f6428a…, per `printf mcp_tasks | sha256sum`.
        assert_eq!(channel("mcp_tasks"), "mcp_tasks_59df56f6428a");
        assert_ne!(channel("a"), channel("b"));
        assert_eq!(channel(&"x".repeat(63)).len(), 22);
    }

    #[test]
    fn tags_are_16_hex_digits_and_differ() {
        let (a, b) = (tag(), tag());
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
