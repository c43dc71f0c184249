//! A fixed pool of keep-alive connections shared by many logical clients (the lifecycle and
//! memory rows): a call waits for a free connection, uses it, and gives it back.

use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

use crate::conn::{Connection, Endpoint, Reply};
use crate::mcp::{self, Call, TaskInfo};

/// Connections to one endpoint, at most one request in flight on each.
pub(crate) struct Pool {
    endpoint: Endpoint,
    idle: Mutex<Vec<Connection>>,
    permits: Semaphore,
    size: usize,
}

/// The results of [`Pool::run_indexed`].
#[derive(Debug)]
pub(crate) struct Outcomes<T> {
    /// The successful values, in completion order.
    pub values: Vec<T>,
    /// Failed calls.
    pub errors: u64,
    /// The first failure.
    pub first_error: Option<String>,
}

impl Pool {
    /// Opens `size` connections to `endpoint`.
    pub(crate) async fn open(endpoint: &Endpoint, size: usize) -> Result<Arc<Self>, String> {
        let mut idle = Vec::with_capacity(size);
        for _ in 0..size {
            idle.push(Connection::open(endpoint).await?);
        }
        Ok(Arc::new(Pool {
            endpoint: endpoint.clone(),
            idle: Mutex::new(idle),
            permits: Semaphore::new(size),
            size,
        }))
    }

    /// The endpoint the connections go to.
    pub(crate) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Sends `call` over a free connection and returns the task of its successful result.
    pub(crate) async fn call(&self, call: &Call) -> Result<TaskInfo, String> {
        let reply = self.call_raw(call).await?;
        mcp::summary_of(&reply)?.to_task()
    }

    /// Sends `call` over a free connection and returns the reply, whatever it is (a broken
    /// connection is replaced).
    pub(crate) async fn call_raw(&self, call: &Call) -> Result<Reply, String> {
        let permit = self
            .permits
            .acquire()
            .await
            .map_err(|e| format!("pool: {e}"))?;
        let taken = self.idle.lock().map_err(|_| "pool poisoned")?.pop();
        let mut connection = match taken {
            Some(connection) => connection,
            None => Connection::open(&self.endpoint).await?,
        };
        let sent = connection
            .send_or_reconnect(&self.endpoint, || call.request(&self.endpoint))
            .await
            .map_err(|e| e.to_string());
        let keep = match &sent {
            Ok(_) => Some(connection),
            Err(_) => Connection::open(&self.endpoint).await.ok(),
        };
        if let Some(connection) = keep {
            self.idle
                .lock()
                .map_err(|_| "pool poisoned")?
                .push(connection);
        }
        drop(permit);
        sent
    }

    /// Makes `count` calls, `make(i)` for `i` in `0..count`, as many at once as the pool has
    /// connections; `check` turns each result into a value or an error.
    pub(crate) async fn run_indexed<T, M, C>(
        self: &Arc<Self>,
        count: usize,
        make: M,
        check: C,
    ) -> Outcomes<T>
    where
        T: Send + 'static,
        M: Fn(usize) -> Result<Call, String> + Send + Sync + 'static,
        C: Fn(TaskInfo) -> Result<T, String> + Send + Sync + 'static,
    {
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (make, check) = (Arc::new(make), Arc::new(check));
        let workers: Vec<_> = (0..self.size)
            .map(|_| {
                let (pool, next) = (self.clone(), next.clone());
                let (make, check) = (make.clone(), check.clone());
                tokio::spawn(async move {
                    let mut out = Outcomes {
                        values: Vec::new(),
                        errors: 0,
                        first_error: None,
                    };
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= count {
                            break out;
                        }
                        let outcome = match make(i) {
                            Ok(call) => pool.call(&call).await.and_then(|v| check(v)),
                            Err(error) => Err(error),
                        };
                        match outcome {
                            Ok(value) => out.values.push(value),
                            Err(error) => {
                                out.errors += 1;
                                out.first_error.get_or_insert(error);
                            }
                        }
                    }
                })
            })
            .collect();
        let mut all = Outcomes {
            values: Vec::with_capacity(count),
            errors: 0,
            first_error: None,
        };
        for worker in workers {
            match worker.await {
                Ok(out) => {
                    all.values.extend(out.values);
                    all.errors += out.errors;
                    if all.first_error.is_none() {
                        all.first_error = out.first_error;
                    }
                }
                Err(error) => {
                    all.errors += 1;
                    all.first_error
                        .get_or_insert(format!("pool worker: {error}"));
                }
            }
        }
        all
    }
}
