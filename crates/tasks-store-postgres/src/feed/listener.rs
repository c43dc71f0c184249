//! The listener: one dedicated connection that LISTENs on the schema's channel and turns the
//! other store instances' payloads into [`Change`]s. Each session: connect, `LISTEN`, send
//! [`Change::Resync`] (anything committed before is then re-read, anything after is
//! hinted), forward hints; a `SELECT 1` every [`PING_EVERY`] finds a dead connection. Any
//! failure ends the session; the next one starts after a backoff.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tasks_runtime::store::Change;
use tokio::sync::broadcast;
use tokio::time::{interval_at, timeout, Instant, MissedTickBehavior};
use tokio_postgres::Notification;

use super::backoff::Backoff;
use super::{drive, payload, received, Link};
use crate::backend;
use crate::sql::quote;

/// How often the connection is pinged.
const PING_EVERY: Duration = Duration::from_secs(5);

/// How long a ping (or the setup of a session) may take before the connection counts as dead.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs sessions until `link.stop` is cancelled.
pub(super) async fn run(link: Link, changes: broadcast::Sender<Change>, pid: Arc<AtomicI32>) {
    let listener = Listener { link, changes, pid };
    let mut backoff = Backoff::new();
    loop {
        let ended = tokio::select! {
            () = listener.link.stop.cancelled() => return,
            ended = listener.session(&mut backoff) => ended,
        };
        listener.pid.store(0, Ordering::Release);
        tracing::warn!(
            target = %listener.link.target,
            reason = %ended,
            "change feed: the listening connection failed; reconnecting"
        );
        if !backoff.wait(&listener.link.stop).await {
            return;
        }
    }
}

struct Listener {
    link: Link,
    changes: broadcast::Sender<Change>,
    pid: Arc<AtomicI32>,
}

impl Listener {
    /// One connection, from connect to failure; returns why it ended.
    async fn session(&self, backoff: &mut Backoff) -> String {
        let (client, mut messages) = match self.link.connector.dedicated(&self.link.config).await {
            Ok(opened) => opened,
            Err(error) => return backend::describe(&error),
        };
        // Hints that arrive before the Resync is sent wait for it.
        let mut early = Vec::new();
        let listen = format!("LISTEN {}", quote(&self.link.channel));
        let setup = async {
            client.batch_execute(&listen).await?;
            client.query_one("SELECT pg_backend_pid()", &[]).await
        };
        let row = match timeout(PING_TIMEOUT, drive(&mut messages, setup, |n| early.push(n))).await
        {
            Err(_) => return "LISTEN was not answered in time".into(),
            Ok(Err(closed)) => return closed,
            Ok(Ok(Err(error))) => return backend::describe(&error),
            Ok(Ok(Ok(row))) => row,
        };
        self.pid
            .store(row.try_get(0).unwrap_or(0), Ordering::Release);
        backoff.reset();
        tracing::debug!(target = %self.link.target, channel = %self.link.channel, "change feed: listening");
        let _ = self.changes.send(Change::Resync);
        for notification in &early {
            self.forward(notification);
        }

        let mut ping = interval_at(Instant::now() + PING_EVERY, PING_EVERY);
        ping.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                message = messages.next() => match message {
                    Some(Ok(message)) => received(message, &mut |n| self.forward(&n)),
                    Some(Err(error)) => return backend::describe(&error),
                    None => return "the connection closed".into(),
                },
                _ = ping.tick() => {
                    let pinged = drive(
                        &mut messages,
                        client.batch_execute("SELECT 1"),
                        |n| self.forward(&n),
                    );
                    match timeout(PING_TIMEOUT, pinged).await {
                        Err(_) => return "a ping was not answered in time".into(),
                        Ok(Err(closed)) => return closed,
                        Ok(Ok(Err(error))) => return backend::describe(&error),
                        Ok(Ok(Ok(()))) => {}
                    }
                }
            }
        }
    }

    /// Sends the changes of another store instance's payload (none for this instance's own).
    fn forward(&self, notification: &Notification) {
        for change in payload::decode(notification.payload(), &self.link.tag) {
            // No receiver at the moment is fine: hints are only for those listening.
            let _ = self.changes.send(change);
        }
    }
}
