//! The notifier: takes this store instance's hints from its queue and sends them with
//! `pg_notify` on one dedicated connection (`synchronous_commit=off`), batched: a batch is
//! what arrives within [`BATCH_WINDOW`] of its first hint, at most [`BATCH_MAX`] hints, sent in
//! one statement (one payload per ~8 kB). A data transaction never takes the NOTIFY lock nor
//! fails on a full NOTIFY queue: only this connection notifies.
//!
//! Hints lost on the way (queue full, a statement refused, the connection lost) are followed by
//! a resync line (at most one per [`RESYNC_EVERY`]), so the listeners re-read everything.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio::time::{timeout, timeout_at, Instant};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};

use super::backoff::Backoff;
use super::{payload, received, Hint, Link};
use crate::backend;

/// How long a batch waits for more hints after its first.
const BATCH_WINDOW: Duration = Duration::from_millis(2);

/// The most hints per batch.
const BATCH_MAX: usize = 64;

/// The fewest time between two resync lines.
const RESYNC_EVERY: Duration = Duration::from_secs(1);

/// How long opening the connection or sending one batch may take.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// One statement for a whole batch: `$1` holds its payloads, notified in order. The channel
/// (`mcp_tasks_` and 12 hex digits, so no quoting issue) is written into the text, so that
/// `pg_stat_activity.query` tells which schema a notifying connection serves.
fn notify_sql(channel: &str) -> String {
    format!("SELECT pg_notify('{channel}', p) FROM unnest($1::text[]) AS p")
}

/// Sends the hints of `queue` until it is closed (the store is gone) and drained, or
/// `link.stop` is cancelled while no connection is open. `dropped` counts the hints the store
/// could not queue. `pid` holds the connection's server process id while it is open.
pub(super) async fn run(
    link: Link,
    mut queue: mpsc::Receiver<Hint>,
    dropped: Arc<AtomicU64>,
    pid: Arc<AtomicI32>,
) {
    let mut losses = Losses {
        pending: false,
        last_resync: None,
        seen_dropped: 0,
        dropped,
    };
    let mut backoff = Backoff::new();
    loop {
        let opened = tokio::select! {
            () = link.stop.cancelled() => return,
            opened = timeout(SEND_TIMEOUT, open(&link)) => opened,
        };
        let reason = match opened {
            Ok(Ok(connection)) => {
                backoff.reset();
                pid.store(connection.pid, Ordering::Release);
                let served = serve(&link, &connection, &mut queue, &mut losses).await;
                pid.store(0, Ordering::Release);
                match served {
                    None => return,
                    Some(reason) => {
                        losses.pending = true;
                        reason
                    }
                }
            }
            Ok(Err(reason)) => reason,
            Err(_) => "connecting took too long".into(),
        };
        tracing::warn!(
            target = %link.target,
            %reason,
            "change feed: the notifying connection failed; reconnecting"
        );
        if !backoff.wait(&link.stop).await {
            return;
        }
    }
}

/// An open notifying connection.
struct Connection {
    client: Client,
    notify: Statement,
    /// The server process id.
    pid: i32,
}

async fn open(link: &Link) -> Result<Connection, String> {
    let (client, mut messages) = link
        .connector
        .dedicated(&link.config)
        .await
        .map_err(|e| backend::describe(&e))?;
    // Drives the connection; it ends when the client is dropped or the connection fails.
    tokio::spawn(async move {
        while let Some(message) = messages.next().await {
            match message {
                Ok(message) => received(message, &mut |_| {}),
                Err(error) => {
                    tracing::debug!(error = %backend::describe(&error), "change feed: notifying connection ended");
                    break;
                }
            }
        }
    });
    let setup = async {
        client.batch_execute("SET synchronous_commit = off").await?;
        let pid = client.query_one("SELECT pg_backend_pid()", &[]).await?;
        let notify = client.prepare(&notify_sql(&link.channel)).await?;
        Ok::<_, tokio_postgres::Error>((pid.try_get(0)?, notify))
    };
    let (pid, notify) = setup.await.map_err(|e| backend::describe(&e))?;
    Ok(Connection {
        client,
        notify,
        pid,
    })
}

/// Sends batches until the queue is closed and drained (`None`) or the connection fails
/// (`Some(reason)`; the batch in hand is lost).
async fn serve(
    link: &Link,
    connection: &Connection,
    queue: &mut mpsc::Receiver<Hint>,
    losses: &mut Losses,
) -> Option<String> {
    loop {
        let batch = collect(queue, losses.resync_due()).await?;
        losses.count_dropped();
        let resync = losses.resync_due().is_some_and(|at| at <= Instant::now());
        let payloads = payload::encode(&link.tag, resync, &batch);
        if payloads.is_empty() {
            continue;
        }
        let params: [&(dyn ToSql + Sync); 1] = [&payloads];
        let sent = connection.client.execute(&connection.notify, &params);
        match timeout(SEND_TIMEOUT, sent).await {
            Ok(Ok(_)) if resync => losses.resynced(),
            Ok(Ok(_)) => {}
            Ok(Err(error)) if error.as_db_error().is_some() && !connection.client.is_closed() => {
                // Refused (a full NOTIFY queue, say) on a working connection: keep it.
                tracing::warn!(
                    target = %link.target,
                    error = %backend::describe(&error),
                    hints = batch.len(),
                    "change feed: NOTIFY failed; the listeners will resync"
                );
                losses.pending = true;
            }
            Ok(Err(error)) => return Some(backend::describe(&error)),
            Err(_) => return Some("NOTIFY was not answered in time".into()),
        }
    }
}

/// The next batch: the first hint (waiting for it, but only until `resync_due` when a resync
/// line is due, then an empty batch) and what follows within [`BATCH_WINDOW`], up to
/// [`BATCH_MAX`]. `None` once the queue is closed and empty.
async fn collect(
    queue: &mut mpsc::Receiver<Hint>,
    resync_due: Option<Instant>,
) -> Option<Vec<Hint>> {
    let first = match resync_due {
        Some(due) => match timeout_at(due, queue.recv()).await {
            Ok(first) => first?,
            Err(_) => return Some(Vec::new()),
        },
        None => queue.recv().await?,
    };
    let mut batch = vec![first];
    let deadline = Instant::now() + BATCH_WINDOW;
    while batch.len() < BATCH_MAX {
        match timeout_at(deadline, queue.recv()).await {
            Ok(Some(hint)) => batch.push(hint),
            Ok(None) | Err(_) => break,
        }
    }
    Some(batch)
}

/// Whether hints were lost since the last resync line, and when that was.
struct Losses {
    pending: bool,
    last_resync: Option<Instant>,
    /// The store's drop count when last looked at.
    seen_dropped: u64,
    dropped: Arc<AtomicU64>,
}

impl Losses {
    /// When a resync line is due, if one is: at once, or [`RESYNC_EVERY`] after the last.
    fn resync_due(&self) -> Option<Instant> {
        self.pending.then(|| {
            self.last_resync
                .map_or_else(Instant::now, |last| last + RESYNC_EVERY)
        })
    }

    /// Logs and marks the hints the store dropped since the last look.
    fn count_dropped(&mut self) {
        let dropped = self.dropped.load(Ordering::Relaxed);
        if dropped > self.seen_dropped {
            tracing::warn!(
                dropped = dropped - self.seen_dropped,
                total = dropped,
                "change feed: hints dropped (the notifier fell behind); the listeners will resync"
            );
            self.seen_dropped = dropped;
            self.pending = true;
        }
    }

    fn resynced(&mut self) {
        self.pending = false;
        self.last_resync = Some(Instant::now());
    }
}
