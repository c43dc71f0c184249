//! The 2025-11-25 `tasks/result` wait of a session: the driver of the core's [`ResultWait`].

use std::sync::Arc;

use bytes::Bytes;
use tasks_core::sessions::session::{ResultWait, WaitStep};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{deliver, Frame, Session};
use crate::server_metrics::ServerMetrics;
use crate::{TaskRuntime, TaskWait};

/// The driver of a 2025-11-25 `tasks/result` waiting for its task: reads, the delivery of
/// the task's input requests on the request's stream, and the waits for a change or for
/// another stream to release the task.
#[derive(Debug)]
pub struct ResultDriver {
    /// The runtime the task lives on.
    pub runtime: TaskRuntime,
    /// Counts the answer that ends the stream when it is a store-unavailable refusal.
    pub metrics: Arc<ServerMetrics>,
    /// The session the request belongs to.
    pub session: Arc<Session>,
    /// Where the request's frames go.
    pub tx: mpsc::Sender<Frame>,
    /// Stops the wait (the stream closed, a cancellation, the session ended).
    pub cancel: CancellationToken,
}

impl ResultDriver {
    /// Carries out `machine`'s steps from `step` until it answers or the request stops.
    /// Every wait follows [`TaskWait`], so none depends on one notification.
    pub async fn run(self, mut machine: ResultWait, mut step: WaitStep, mut wait: TaskWait) {
        let session = self.session.clone();
        let mut released = Box::pin(session.released.notified());
        loop {
            step = match step {
                WaitStep::Answer { frame, error } => {
                    // The request was counted when its stream started; a store-unavailable
                    // refusal is counted here, once it is on its way.
                    let sent = self.tx.send(Frame::Final(Bytes::from(frame))).await;
                    if let (Ok(()), Some(error)) = (sent, error) {
                        self.metrics.store_refusal(&error);
                    }
                    return;
                }
                WaitStep::End => return,
                WaitStep::Read => machine.seen(wait.current().await),
                WaitStep::Await { or_released } => tokio::select! {
                    () = self.cancel.cancelled() => return,
                    next = wait.next() => machine.seen(next),
                    () = released.as_mut(), if or_released => machine.released(),
                },
                WaitStep::Deliver(task) => {
                    let stop = self.cancel.child_token();
                    // Armed before the delivery is tried: a delivery of another stream that
                    // ends after this one found it busy still wakes this wait.
                    released.set(session.released.notified());
                    released.as_mut().enable();
                    let delivery = deliver(&self.runtime, &self.session, &task, &self.tx, &stop);
                    tokio::pin!(delivery);
                    let delivered = loop {
                        tokio::select! {
                            delivered = &mut delivery => break delivered,
                            next = wait.next(), if machine.follows() => {
                                if machine.changed(next) {
                                    stop.cancel();
                                }
                            }
                        }
                    };
                    machine.delivered(delivered, self.cancel.is_cancelled())
                }
            };
        }
    }
}
