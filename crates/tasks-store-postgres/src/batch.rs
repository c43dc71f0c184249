//! Group commit: calls queued by concurrent callers are run together, one statement (one
//! transaction, one WAL flush) per batch. Creates and compare-and-set transitions go this way;
//! see [Batches](crate#batches) for why.
//!
//! One collector task takes what is queued whenever a batch slot is free: a lone call goes at
//! once (a batch of one), and under load each batch takes what queued up while the previous
//! ones ran, so batches grow with the load by themselves. At most [`IN_FLIGHT`] batches of one
//! kind run at a time, each of at most [`MAX_BATCH`] calls.

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::sync::Arc;

use deadpool_postgres::Pool;
use tasks_core::TaskId;
use tasks_runtime::store::StoreError;

use crate::feed::Hinter;
use crate::sql::Sql;
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;

/// The most calls in one batch.
pub(crate) const MAX_BATCH: usize = 64;

/// The most batches of one kind running at once (each on its own pooled connection).
pub(crate) const IN_FLIGHT: usize = 2;

/// The queue of one kind of call; dropping it (with the store) stops its collector once the
/// queue is empty.
#[derive(Debug)]
pub(crate) struct Batcher<I> {
    queue: mpsc::UnboundedSender<I>,
}

impl<I: Send + 'static> Batcher<I> {
    /// Starts the collector on the current tokio runtime. `take` takes the next batch from the
    /// front of the queue (at least one item when the queue is not empty; what it leaves stays
    /// queued, in order); `run` runs a batch and answers each of its callers.
    pub(crate) fn start<T, R, F>(take: T, run: R, stop: CancellationToken) -> Batcher<I>
    where
        T: Fn(&mut VecDeque<I>) -> Vec<I> + Send + 'static,
        R: Fn(Vec<I>) -> F + Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let (queue, items) = mpsc::unbounded_channel();
        tokio::spawn(collect(items, take, run, stop));
        Batcher { queue }
    }

    /// Queues `item` for the next batch; gives it back when the collector has stopped (the
    /// tokio runtime it was started on has shut down), for the caller to run alone.
    pub(crate) fn submit(&self, item: I) -> Result<(), I> {
        self.queue.send(item).map_err(|error| error.0)
    }
}

/// What runs a batch: the pool, the statements, and the feed's hint queue (each committed
/// write is hinted by the batch that committed it, so also when its caller has gone).
#[derive(Clone)]
pub(crate) struct Writer {
    pub(crate) pool: Pool,
    pub(crate) sql: Arc<Sql>,
    pub(crate) hinter: Hinter,
}

/// One kind of batched call (creates, transitions): how a batch is stored and how each call
/// is answered.
pub(crate) trait Kind: 'static {
    /// A queued call.
    type Item: Queued + Send + 'static;
    /// What the statement answers for one call.
    type Answer: Send;
    /// One statement for `batch`: an answer per call, in order; or the error, and whether the
    /// database refused a value of the batch ([`refused_value`]).
    fn store(
        writer: &Writer,
        batch: &[Self::Item],
    ) -> impl Future<Output = Result<Vec<Self::Answer>, (bool, StoreError)>> + Send;
    /// Answers one call whose batch committed (and hints what it wrote).
    fn answer(writer: &Writer, item: Self::Item, answer: Self::Answer);
    /// Fails one call.
    fn fail(item: Self::Item, error: StoreError);
}

/// Starts the batcher of kind `K` (see [`Batcher::start`]).
pub(crate) fn batcher<K: Kind>(writer: Writer, stop: CancellationToken) -> Batcher<K::Item> {
    Batcher::start(
        take_batch,
        move |batch| {
            let writer = writer.clone();
            async move { run::<K>(&writer, batch).await }
        },
        stop,
    )
}

/// Runs `batch` and answers each call. When the database refused a value of a batch of
/// several ([`refused_value`]), each call is run alone, so only the call it refused fails;
/// any other failure fails every call of the batch.
pub(crate) async fn run<K: Kind>(writer: &Writer, batch: Vec<K::Item>) {
    match K::store(writer, &batch).await {
        Ok(answers) => {
            for (item, answer) in batch.into_iter().zip(answers) {
                K::answer(writer, item, answer);
            }
        }
        Err((refused, _)) if refused && batch.len() > 1 => {
            for item in batch {
                match K::store(writer, std::slice::from_ref(&item)).await {
                    Ok(answers) => match answers.into_iter().next() {
                        Some(answer) => K::answer(writer, item, answer),
                        None => K::fail(item, unanswered()),
                    },
                    Err((_, error)) => K::fail(item, error),
                }
            }
        }
        Err((_, error)) => {
            for item in batch {
                K::fail(item, error.clone());
            }
        }
    }
}

/// A statement answered fewer rows than its batch has calls.
fn unanswered() -> StoreError {
    StoreError::Backend("postgres: a batch statement left a call unanswered".into())
}

/// A queued call was dropped unanswered: the batching task stopped (the tokio runtime it ran
/// on shut down) before running it. Whether it was made is unknown to the caller.
pub(crate) fn lost() -> StoreError {
    StoreError::Backend(
        "postgres: the store's batching task stopped before answering the call".into(),
    )
}

/// The most bytes of JSON (tasks and work descriptors) in one batch, unless a single call has
/// more: a batch's statement must finish well within the session's `statement_timeout` (5 s),
/// or every call of it fails.
pub(crate) const MAX_BATCH_BYTES: usize = 1 << 20;

/// A queued call, as [`take_batch`] sees it.
pub(crate) trait Queued {
    /// The task it writes.
    fn id(&self) -> &TaskId;
    /// The bytes of JSON it sends.
    fn bytes(&self) -> usize;
    /// Whether its caller has gone (its future was dropped): then it is not run at all.
    fn abandoned(&self) -> bool;
}

/// The next batch from the front of `queue`: in queue order, at most [`MAX_BATCH`] calls and
/// [`MAX_BATCH_BYTES`] (at least one call), and at most one call per task. A call whose task is
/// already in the batch stays queued (and so does what follows once the batch is full), so it
/// runs after the first one committed, as one at a time would. A call whose caller has gone is
/// dropped unrun, as a call dropped before it reached the database always was.
pub(crate) fn take_batch<I: Queued>(queue: &mut VecDeque<I>) -> Vec<I> {
    let mut ids: HashSet<TaskId> = HashSet::new();
    let mut batch = Vec::new();
    let mut bytes = 0;
    let mut kept = VecDeque::new();
    while batch.len() < MAX_BATCH {
        let Some(item) = queue.pop_front() else { break };
        if item.abandoned() {
            continue;
        }
        if ids.contains(item.id()) {
            kept.push_back(item);
            continue;
        }
        if !batch.is_empty() && bytes + item.bytes() > MAX_BATCH_BYTES {
            queue.push_front(item);
            break;
        }
        bytes += item.bytes();
        ids.insert(item.id().clone());
        batch.push(item);
    }
    kept.append(queue);
    *queue = kept;
    batch
}

async fn collect<I, T, R, F>(
    mut items: mpsc::UnboundedReceiver<I>,
    take: T,
    run: R,
    stop: CancellationToken,
) where
    I: Send + 'static,
    T: Fn(&mut VecDeque<I>) -> Vec<I>,
    R: Fn(Vec<I>) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut queued = VecDeque::new();
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        if queued.is_empty() {
            tokio::select! {
                () = stop.cancelled() => return,
                item = items.recv() => match item {
                    Some(item) => queued.push_back(item),
                    None => return,
                },
            }
        }
        while let Ok(item) = items.try_recv() {
            queued.push_back(item);
        }
        let batch = take(&mut queued);
        let running = run(batch);
        tokio::spawn(async move {
            running.await;
            drop(slot);
        });
    }
}

/// Whether the database refused a value of a batch (SQLSTATE class 22, data exception; 23,
/// integrity constraint; 54, program limit): the statement ran and rolled back, and running
/// each call alone tells which one it was. Any other failure (a lost connection, a timeout)
/// fails the whole batch.
pub(crate) fn refused_value(error: &tokio_postgres::Error) -> bool {
    error
        .as_db_error()
        .is_some_and(|db| matches!(db.code().code().get(..2), Some("22" | "23" | "54")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call of task `t<n % 100>` with `n / 1000` KiB of JSON.
    struct Call(usize, TaskId);

    impl Queued for Call {
        fn id(&self) -> &TaskId {
            &self.1
        }
        fn bytes(&self) -> usize {
            self.0 / 1000 * 1024
        }
        fn abandoned(&self) -> bool {
            self.0 == 666
        }
    }

    fn take(queue: &mut VecDeque<usize>) -> Vec<usize> {
        let mut calls: VecDeque<Call> = queue
            .drain(..)
            .map(|n| Call(n, TaskId::parse(&format!("t{}", n % 100)).unwrap()))
            .collect();
        let batch = take_batch(&mut calls).into_iter().map(|c| c.0).collect();
        queue.extend(calls.into_iter().map(|c| c.0));
        batch
    }

    #[test]
    fn batches_take_distinct_tasks_in_order_up_to_the_batch_size() {
        let mut queue: VecDeque<usize> = (0..MAX_BATCH + 3).collect();
        assert_eq!(take(&mut queue), (0..MAX_BATCH).collect::<Vec<_>>());
        assert_eq!(
            queue,
            VecDeque::from(vec![MAX_BATCH, MAX_BATCH + 1, MAX_BATCH + 2])
        );
        assert_eq!(take(&mut queue).len(), 3);
        assert!(take(&mut queue).is_empty());
        // Tasks 1 and 2 twice: the second call of each waits for the next batch, in order.
        let mut queue = VecDeque::from(vec![1, 101, 2, 3, 201, 102]);
        assert_eq!(take(&mut queue), vec![1, 2, 3]);
        assert_eq!(queue, VecDeque::from(vec![101, 201, 102]));
        assert_eq!(take(&mut queue), vec![101, 102]);
        assert_eq!(take(&mut queue), vec![201]);
    }

    #[test]
    fn batches_stop_at_the_byte_budget_but_take_one_big_call_alone() {
        // 600 KiB, 500 KiB, 2 MiB, 1 KiB.
        let mut queue = VecDeque::from(vec![600_001, 500_002, 2_048_003, 1_004]);
        assert_eq!(take(&mut queue), vec![600_001]);
        assert_eq!(take(&mut queue), vec![500_002]);
        assert_eq!(take(&mut queue), vec![2_048_003]);
        assert_eq!(take(&mut queue), vec![1_004]);
        let mut queue = VecDeque::from(vec![500_001, 500_002, 20_003]);
        assert_eq!(take(&mut queue), vec![500_001, 500_002, 20_003]);
        // A call whose caller has gone is dropped.
        let mut queue = VecDeque::from(vec![1, 666, 2]);
        assert_eq!(take(&mut queue), vec![1, 2]);
        assert!(queue.is_empty());
    }

    #[tokio::test]
    async fn at_most_in_flight_batches_run_and_the_rest_queue_into_one() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        const CALLS: usize = IN_FLIGHT + 10;
        let gate = Arc::new(Semaphore::new(0));
        let (running, most, batches) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
        );
        let batcher = {
            let (gate, running, most, batches) =
                (gate.clone(), running.clone(), most.clone(), batches.clone());
            Batcher::start(
                |queue: &mut VecDeque<_>| queue.drain(..queue.len().min(MAX_BATCH)).collect(),
                move |batch: Vec<tokio::sync::oneshot::Sender<usize>>| {
                    let (gate, running, most) = (gate.clone(), running.clone(), most.clone());
                    batches.fetch_add(1, Ordering::SeqCst);
                    async move {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        gate.acquire().await.unwrap().forget();
                        running.fetch_sub(1, Ordering::SeqCst);
                        let n = batch.len();
                        for reply in batch {
                            let _ = reply.send(n);
                        }
                    }
                },
                CancellationToken::new(),
            )
        };
        let mut answers = Vec::new();
        for _ in 0..CALLS {
            let (reply, answer) = tokio::sync::oneshot::channel();
            batcher.submit(reply).unwrap();
            answers.push(answer);
            tokio::task::yield_now().await;
        }
        gate.add_permits(CALLS);
        let mut sizes = Vec::new();
        for answer in answers {
            sizes.push(answer.await.unwrap());
        }
        assert_eq!(most.load(Ordering::SeqCst), IN_FLIGHT);
        // The first IN_FLIGHT batches held every slot while the others queued up; those went
        // as one batch once a slot was free.
        assert_eq!(batches.load(Ordering::SeqCst), IN_FLIGHT + 1);
        assert_eq!(
            sizes.iter().filter(|&&n| n == CALLS - IN_FLIGHT).count(),
            CALLS - IN_FLIGHT
        );
    }
}
