//! A session's standalone stream (the 2025 transports' GET stream): the async driver of the
//! core's [`SessionStream`] machine. It yields the messages to send; the transport frames them
//! (the HTTP adapter as SSE).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::{stream, Stream};
use tasks_core::sessions::session::{Effect, SessionStream};
use tasks_core::TaskId;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{deliver, Frame, Session, StreamClaim};
use crate::{Feed, FeedEvent, ListChanges, TaskRuntime, Wake};

/// The messages of the standalone stream `claim` opened ([`Session::open_stream`]):
/// `lists` is where tool-list changes are announced (`None` when the server announces none);
/// the stream ends when `shutdown` is cancelled, with the session, or when a newer stream of
/// the session replaces it.
pub fn standalone_stream(
    runtime: &TaskRuntime,
    claim: StreamClaim,
    lists: Option<&ListChanges>,
    shutdown: &CancellationToken,
) -> impl Stream<Item = Bytes> + Send + 'static {
    let (frames_tx, frames) = mpsc::channel(16);
    let stop = claim.token.child_token();
    // Subscribed before the first read of the session's tasks (in the first `next`).
    let changes = claim.session().tasks.then(|| runtime.changes());
    let stream = GetStream {
        feed: Feed::new(changes, lists, true, true),
        shutdown: shutdown.clone(),
        runtime: runtime.clone(),
        frames,
        frames_tx,
        session: claim.session().clone(),
        claim,
        machine: SessionStream::new(),
        deliveries: HashMap::new(),
        primed: false,
        _stop: stop.clone().drop_guard(),
        stop,
    };
    stream::unfold(stream, |mut stream| async move {
        let frame = stream.next().await?;
        Some((frame, stream))
    })
}

/// A session's standalone GET stream: the driver of the core's [`SessionStream`], which decides
/// what goes out (`notifications/tasks/status` and `notifications/progress` of the tasks this
/// session created, list changes, updates of subscribed resources) and when the input requests
/// of those tasks are delivered here ([`deliver`]: while no `tasks/result` delivers them, so a
/// client that polls `tasks/get` until the task ends is asked too) or withdrawn (the task is
/// gone, ended, or answered elsewhere). It follows the runtime's changes ([`Feed`]): after a
/// feed resync, after falling behind, and on the guard interval it re-reads the session's
/// unfinished tasks, so no single lost notification keeps a status or an input request from
/// it. Ends with the session, a newer GET stream, or the server.
///
/// A task's questions go out here only once the client has named the task in a request
/// (`tasks/get` or `tasks/result`, [`TaskBook::named`](tasks_core::sessions::session::TaskBook::named)):
/// a question sent as soon as the task asks could reach the client before the
/// `CreateTaskResult` that tells it the task exists, and a client cannot match it to anything
/// (the official Tasks client library answers it with an error). A poll that finds its task
/// waiting for input asks this stream to deliver ([`Session::nudge`]).
struct GetStream {
    claim: StreamClaim,
    session: Arc<Session>,
    /// Task changes (in a session offered tasks), list announcements, and resource updates.
    feed: Feed,
    shutdown: CancellationToken,
    runtime: TaskRuntime,
    /// Server-to-client requests of the deliveries this stream runs.
    frames: mpsc::Receiver<Frame>,
    frames_tx: mpsc::Sender<Frame>,
    /// The core's decisions.
    machine: SessionStream,
    /// The token stopping each task's delivery on this stream.
    deliveries: HashMap<TaskId, CancellationToken>,
    /// Whether the session's tasks waiting for input when the stream opened were delivered.
    primed: bool,
    /// The parent of this stream's deliveries, stopped when the stream is dropped.
    stop: CancellationToken,
    _stop: DropGuard,
}

impl GetStream {
    /// Carries out the machine's effects: a delivery of a task's input requests runs in the
    /// background under the task's delivery token (a new one when it has none running); a
    /// withdrawal stops it.
    fn apply(&mut self) {
        while let Some(effect) = self.machine.poll_effect() {
            match effect {
                Effect::Deliver(task) => {
                    let stop = match self.deliveries.get(task.id()) {
                        Some(stop) if !stop.is_cancelled() => stop.clone(),
                        _ => {
                            let stop = self.stop.child_token();
                            self.deliveries.insert(task.id().clone(), stop.clone());
                            stop
                        }
                    };
                    let (runtime, session) = (self.runtime.clone(), self.session.clone());
                    let tx = self.frames_tx.clone();
                    tokio::spawn(async move {
                        deliver(&runtime, &session, &task, &tx, &stop).await;
                    });
                }
                Effect::Withdraw(id) => {
                    if let Some(stop) = self.deliveries.remove(&id) {
                        stop.cancel();
                    }
                }
            }
        }
    }

    /// A change from the runtime's feed.
    async fn wake(&mut self, wake: Wake) {
        let (session, machine) = (&self.session, &mut self.machine);
        match wake {
            Wake::Status(event) => session.book(|book| {
                machine.on_status(book, event.scope == session.scope, &event.task);
            }),
            Wake::Removed(id) => session.book(|book| machine.on_removed(book, &id)),
            // Changes may have been missed: the unfinished tasks are read again.
            Wake::Reread { .. } => self.reread(true).await,
        }
    }

    /// When the stream opens: the changes already queued are handled (announced), then the
    /// session's tasks are read once, their states taken as known and those waiting for input
    /// delivered (a reconnecting client's tasks stay answerable). A change made while that
    /// read runs may go unannounced; a status notification is optional, and the task's input
    /// requests are delivered either way.
    async fn prime(&mut self) {
        while let Some(wake) = self.feed.queued() {
            if !matches!(wake, Wake::Reread { .. }) {
                self.wake(wake).await;
            }
        }
        self.reread(false).await;
    }

    /// Re-reads the session's tasks the machine asks for.
    async fn reread(&mut self, announce: bool) {
        let ids = self.session.book(|book| self.machine.to_reread(book));
        if ids.is_empty() {
            return;
        }
        match self.runtime.read_many(&self.session.scope, &ids).await {
            Ok(tasks) => {
                let machine = &mut self.machine;
                self.session
                    .book(|book| machine.on_read(book, &ids, &tasks, announce));
            }
            Err(error) => tracing::warn!(%error, "re-reading a session's tasks failed"),
        }
    }

    async fn next(&mut self) -> Option<Bytes> {
        let ended = self.claim.token.clone();
        if !self.primed {
            self.primed = true;
            if self.session.tasks {
                self.prime().await;
            }
        }
        loop {
            self.apply();
            if let Some(frame) = self.machine.poll_frame() {
                return Some(Bytes::from(frame));
            }
            let event = tokio::select! {
                biased;
                () = ended.cancelled() => return None,
                () = self.shutdown.cancelled() => return None,
                Some(frame) = self.frames.recv() => match frame {
                    Frame::Message(bytes) | Frame::Final(bytes) => return Some(bytes),
                },
                // A poll read the task (waiting for input) after the client named it.
                Some(task) = self.claim.nudges.recv() => {
                    self.machine.on_nudge(&task);
                    continue;
                }
                event = self.feed.next() => event,
            };
            let catalog = self.runtime.catalog();
            match event {
                FeedEvent::Task(wake) => self.wake(wake).await,
                FeedEvent::TasksEnded => {}
                FeedEvent::ListChanged(kind) => {
                    self.machine.on_list_changed(kind, catalog.has_list(kind));
                }
                FeedEvent::ListsLagged => self.machine.on_lists_lagged(|k| catalog.has_list(k)),
                FeedEvent::ResourceUpdated(uri) => {
                    let subscribed = self.session.subscribed(&uri);
                    self.machine.on_resource_updated(&uri, subscribed);
                }
            }
        }
    }
}
