//! [`Probe`]: counters a test tool updates so a test sees what the worker did, and the tools
//! that update one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tasks_runtime::{text_result, Tool, ToolError};

use crate::runtime::elicit;

/// Counters a tool updates so a test can see what the worker did.
#[derive(Debug, Default)]
pub struct Probe {
    /// Runs started.
    pub started: AtomicUsize,
    /// Handler futures dropped or finished (the worker stopped running the tool).
    pub stopped: AtomicUsize,
    /// Input answers the tool received.
    pub answers: Mutex<Vec<Value>>,
}

impl Probe {
    /// A fresh probe, shared.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
    /// Runs started so far.
    pub fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }
    /// Runs stopped so far.
    pub fn stopped(&self) -> usize {
        self.stopped.load(Ordering::SeqCst)
    }
    /// The input answers received so far.
    pub fn answers(&self) -> Vec<Value> {
        self.answers.lock().unwrap().clone()
    }
    /// Marks a start; the returned guard marks the stop when the handler future is dropped.
    pub fn enter(self: &Arc<Self>) -> StopGuard {
        self.started.fetch_add(1, Ordering::SeqCst);
        StopGuard(self.clone())
    }
}

/// Counts a stop when dropped (the tool returned or its future was dropped).
#[derive(Debug)]
pub struct StopGuard(Arc<Probe>);

impl Drop for StopGuard {
    fn drop(&mut self) {
        self.0.stopped.fetch_add(1, Ordering::SeqCst);
    }
}

/// `echo`: answers `text_result(arguments.text)`.
pub fn echo_tool() -> Tool {
    Tool::new("echo", "Echoes its text", |ctx| async move {
        let text = ctx
            .arguments()
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        Ok(text_result(text))
    })
}

/// `spin`: loops (yielding) until its cancellation token fires, then returns `Cancelled`.
pub fn spin_tool(probe: Arc<Probe>) -> Tool {
    Tool::new("spin", "Runs until cancelled", move |ctx| {
        let probe = probe.clone();
        async move {
            let _guard = probe.enter();
            while !ctx.cancellation().is_cancelled() {
                tokio::task::yield_now().await;
            }
            Err(ToolError::Cancelled)
        }
    })
}

/// `ask`: asks for input under `confirm` and answers with the response it got.
pub fn ask_tool(probe: Arc<Probe>) -> Tool {
    Tool::new("ask", "Asks for confirmation", move |ctx| {
        let probe = probe.clone();
        async move {
            let _guard = probe.enter();
            let answer = ctx.input("confirm", elicit("Proceed?")).await?;
            probe.answers.lock().unwrap().push(answer.to_value());
            Ok(text_result(format!("answer: {}", answer.to_value())))
        }
    })
}

/// `ask_two`: asks `first` and `second` concurrently and answers with both responses.
pub fn ask_two_tool(probe: Arc<Probe>) -> Tool {
    Tool::new("ask_two", "Asks two questions at once", move |ctx| {
        let probe = probe.clone();
        async move {
            let _guard = probe.enter();
            let (first, second) = tokio::join!(
                ctx.input("first", elicit("First?")),
                ctx.input("second", elicit("Second?"))
            );
            let (first, second) = (first?.to_value(), second?.to_value());
            probe
                .answers
                .lock()
                .unwrap()
                .extend([first.clone(), second.clone()]);
            Ok(json!({
                "content": [{"type": "text", "text": format!("{first} {second}")}],
                "isError": false,
                "structuredContent": {"first": first, "second": second}
            }))
        }
    })
}
