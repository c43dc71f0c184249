//! The 2025-11-25 session machines of `tasks_core::sessions::session` driven by random event
//! sequences, without an async runtime: the `tasks/result` wait.

use crate::common;

use std::sync::Arc;

use common::{object, request, ts, T0};
use proptest::prelude::*;
use serde_json::json;
use tasks_core::raw::RawObject;
use tasks_core::sessions::session::{Delivered, ResultWait, WaitStep};
use tasks_core::sessions::tasks::payload;
use tasks_core::{apply, jsonrpc, Event, JsonRpcError, McpError, Task, TaskId, TaskState};

// ---------------------------------------------------------------------------------------------
// The `tasks/result` wait

/// What happens next, as the driver of a wait meets it.
#[derive(Debug, Clone)]
enum WaitOp {
    /// The task changes: 0 asks, 1 a status message, 2 completes, 3 fails, 4 is cancelled,
    /// 5 is gone (its TTL ran out).
    Change(u8),
    /// The running delivery ends: 0 done, 1 busy, 2 stopped, 3 failed.
    Outcome(u8),
    /// The request stops (its stream closed, a cancellation).
    Stop,
    /// Another stream's delivery of the task ends.
    Released,
}

fn wait_op() -> impl Strategy<Value = WaitOp> {
    prop_oneof![
        (0u8..6).prop_map(WaitOp::Change),
        (0u8..4).prop_map(WaitOp::Outcome),
        Just(WaitOp::Stop),
        Just(WaitOp::Released),
    ]
}

/// The task as the store has it.
struct Truth {
    task: Task,
    gone: bool,
    changes: u64,
}

impl Truth {
    fn change(&mut self, kind: u8) {
        if self.gone || self.task.is_terminal() {
            return;
        }
        self.changes += 1;
        let n = self.changes;
        let event = match kind {
            0 => Event::InputRequested {
                key: format!("k{n}"),
                request: request((n % 2) as u8),
            },
            1 => Event::StatusMessage {
                message: format!("step {n}"),
            },
            2 => Event::Completed {
                result: RawObject::from(object(json!({"content": [], "n": n}))),
            },
            3 => Event::Failed {
                error: JsonRpcError::internal(format!("failure {n}")),
            },
            4 => Event::Cancelled,
            _ => {
                self.gone = true;
                return;
            }
        };
        if let Ok(next) = apply(&self.task, event, ts(T0 + n)) {
            self.task = next.task;
        }
    }

    fn read(&self) -> Result<Arc<Task>, McpError> {
        if self.gone {
            Err(McpError::UnknownTask)
        } else {
            Ok(Arc::new(self.task.clone()))
        }
    }
}

fn asks(task: &Task) -> bool {
    matches!(task.state(), TaskState::InputRequired { .. })
}

/// The frame the wait must answer for a read that ends it.
fn expected_answer(id: &serde_json::Value, read: &Result<Arc<Task>, McpError>) -> Option<Vec<u8>> {
    match read {
        Err(error) => Some(jsonrpc::error(Some(id), &error.to_error_object())),
        Ok(task) => match payload(task)? {
            Ok(result) => Some(jsonrpc::result(id, &result)),
            Err(error) => Some(jsonrpc::error(Some(id), &error)),
        },
    }
}

proptest! {
    /// A `tasks/result` answers exactly the payload of a terminal state it was fed, or the
    /// error of a failed read or delivery, and nothing else; delivers only states that are not
    /// terminal; withdraws a delivery once the task stops asking or is gone; after answers were
    /// committed it reads the task afresh (never a state seen meanwhile, which may predate
    /// them); ends without an answer when the request stopped during a delivery that it stopped;
    /// waits for another stream's release only when that stream held the delivery.
    #[test]
    fn the_result_wait_model(ops in proptest::collection::vec(wait_op(), 1..60)) {
        let id = json!(7);
        let mut truth = Truth {
            task: Task::new(TaskId::parse("t").unwrap(), ts(T0), None, None),
            gone: false,
            changes: 0,
        };
        let mut machine = ResultWait::new(id.clone());
        let mut fed = truth.read();
        let mut step = machine.seen(fed.clone());
        let mut stopped = false;
        // Whether a delivery runs, and whether it was withdrawn.
        let mut delivering: Option<(Arc<Task>, bool)> = None;
        let mut newer = false;
        // Whether `step` is new (not yet met by the driver).
        let mut fresh = true;
        let mut ops = ops.into_iter();
        loop {
            match &step {
                WaitStep::Answer { frame, error } => {
                    match error {
                        None => prop_assert_eq!(Some(frame.clone()), expected_answer(&id, &fed)),
                        Some(error) => prop_assert_eq!(
                            frame,
                            &jsonrpc::error(Some(&id), &error.to_error_object())
                        ),
                    }
                    break;
                }
                WaitStep::End => {
                    prop_assert!(stopped, "ended while the request goes on");
                    break;
                }
                WaitStep::Read => {
                    fed = truth.read();
                    step = machine.seen(fed.clone());
                    fresh = true;
                    continue;
                }
                WaitStep::Deliver(task) if fresh => {
                    prop_assert!(!task.is_terminal(), "delivered a terminal task");
                    prop_assert_eq!(Some(task), fed.as_ref().ok());
                    prop_assert!(machine.follows());
                    delivering = Some((task.clone(), false));
                    newer = false;
                }
                WaitStep::Deliver(_) => {}
                WaitStep::Await { .. } => {
                    prop_assert!(delivering.is_none());
                }
            }
            fresh = false;
            let Some(op) = ops.next() else { break };
            match (op, &step) {
                (WaitOp::Change(kind), WaitStep::Deliver(_)) => {
                    truth.change(kind);
                    if machine.follows() {
                        fed = truth.read();
                        let withdraw = machine.changed(fed.clone());
                        prop_assert_eq!(withdraw, fed.as_ref().map_or(true, |t| !asks(t)));
                        newer = true;
                        if let Some((_, withdrawn)) = &mut delivering {
                            *withdrawn |= withdraw;
                        }
                    }
                }
                (WaitOp::Outcome(kind), WaitStep::Deliver(_)) => {
                    let (task, withdrawn) = delivering.take().unwrap();
                    // A withdrawn delivery ends stopped unless it had already ended.
                    let outcome = match kind {
                        _ if withdrawn && kind != 3 => Delivered::Stopped,
                        0 => Delivered::Done,
                        1 => Delivered::Busy,
                        2 => Delivered::Stopped,
                        _ => Delivered::Failed(McpError::Internal("store unavailable")),
                    };
                    let next = machine.delivered(outcome.clone(), stopped);
                    match &outcome {
                        Delivered::Done if asks(&task) => prop_assert_eq!(&next, &WaitStep::Read),
                        Delivered::Stopped if stopped => prop_assert_eq!(&next, &WaitStep::End),
                        Delivered::Failed(error) => prop_assert_eq!(&next, &WaitStep::Answer {
                            frame: jsonrpc::error(Some(&id), &error.to_error_object()),
                            error: Some(error.clone()),
                        }),
                        _ if !newer => prop_assert_eq!(&next, &WaitStep::Await {
                            or_released: outcome == Delivered::Busy,
                        }),
                        // The newest change seen meanwhile is taken (`fed`).
                        _ => {
                            let settled = matches!(next, WaitStep::Await { .. } | WaitStep::Read);
                            prop_assert!(!settled, "a change seen meanwhile was dropped");
                        }
                    }
                    step = next;
                    fresh = true;
                }
                (WaitOp::Stop, WaitStep::Deliver(_)) => stopped = true,
                (WaitOp::Stop, WaitStep::Await { .. }) => break,
                (WaitOp::Change(kind), WaitStep::Await { .. }) => {
                    truth.change(kind);
                    fed = truth.read();
                    step = machine.seen(fed.clone());
                    fresh = true;
                }
                (WaitOp::Released, WaitStep::Await { or_released: true }) => {
                    step = machine.released();
                    fresh = true;
                    prop_assert_eq!(&step, &WaitStep::Read);
                }
                _ => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A call's input rounds

/// What a call's driver meets: the handler's outcome, then the round's resolution.
#[derive(Debug, Clone)]
enum RoundOp {
    /// The handler completes (0), fails (1), or asks `n` keys (2..).
    Outcome(u8),
    /// The round is answered (`true`) or refused with this code.
    Resolved(Result<(), i64>),
}

fn round_op() -> impl Strategy<Value = RoundOp> {
    prop_oneof![
        1 => (0u8..2).prop_map(RoundOp::Outcome),
        8 => (2u8..5).prop_map(RoundOp::Outcome),
        8 => Just(RoundOp::Resolved(Ok(()))),
        1 => (-3i64..3).prop_map(|code| RoundOp::Resolved(Err(code))),
    ]
}

proptest! {
    /// A call run now on a session answers its handler's result (without `resultType`) or
    /// error; asks exactly what the handler asked; runs again with every answer so far after
    /// an answered round; answers a refusal with a tool error result (a tool) or -32603 (a
    /// prompt) naming the key and code; and gives up with -32603 after the 32nd answered round.
    #[test]
    fn the_call_rounds_model(
        prompt in any::<bool>(),
        ops in proptest::collection::vec(round_op(), 1..120),
    ) {
        use tasks_core::exchange::SyncOutcome;
        use tasks_core::sessions::session::{Asker, CallRounds, Refused, RoundStep, MAX_INPUT_ROUNDS};
        let id = json!("call-1");
        let asker = if prompt { Asker::Prompt } else { Asker::Tool };
        let mut rounds = CallRounds::new(id.clone(), asker);
        let mut step = RoundStep::Run;
        let mut answers = tasks_core::JsonObject::new();
        let mut answered = 0usize;
        let mut asked: Vec<String> = Vec::new();
        for (n, op) in ops.into_iter().enumerate() {
            match (&step, op) {
                (RoundStep::Final(_), _) => break,
                (RoundStep::Run, RoundOp::Outcome(kind)) => {
                    prop_assert_eq!(
                        rounds.input_responses(),
                        (!answers.is_empty()).then(|| answers.clone())
                    );
                    let outcome = match kind {
                        0 => SyncOutcome::Complete(object(json!({"content": [], "resultType": "complete"}))),
                        1 => SyncOutcome::Error(JsonRpcError::internal("boom")),
                        k => SyncOutcome::InputRequired(
                            (0..k).map(|i| (format!("r{n}-{i}"), request(i % 2))).collect(),
                        ),
                    };
                    step = rounds.outcome(outcome.clone());
                    match outcome {
                        SyncOutcome::Complete(_) => prop_assert_eq!(
                            &step,
                            &RoundStep::Final(jsonrpc::result(&id, &json!({"content": []})))
                        ),
                        SyncOutcome::Error(error) => prop_assert_eq!(
                            &step,
                            &RoundStep::Final(jsonrpc::error(Some(&id), &error))
                        ),
                        SyncOutcome::InputRequired(questions) => {
                            prop_assert_eq!(&step, &RoundStep::Ask(questions.clone()));
                            asked = questions.into_keys().collect();
                        }
                    }
                }
                (RoundStep::Ask(_), RoundOp::Resolved(resolution)) => {
                    let resolution = match resolution {
                        Ok(()) => Ok(asked.iter().map(|k| (k.clone(), json!({"for": k}))).collect()),
                        Err(code) => Err(Refused { key: asked[0].clone(), code }),
                    };
                    step = rounds.answered(resolution.clone());
                    match resolution {
                        Err(refused) => {
                            let text = format!(
                                "The client refused input request {} (JSON-RPC error {})",
                                refused.key, refused.code
                            );
                            let frame = if prompt {
                                jsonrpc::error(Some(&id), &JsonRpcError::internal(text))
                            } else {
                                jsonrpc::result(&id, &json!({"content": [{"type": "text", "text": text}], "isError": true}))
                            };
                            prop_assert_eq!(&step, &RoundStep::Final(frame));
                        }
                        Ok(given) => {
                            answers.extend(given);
                            answered += 1;
                            if answered == MAX_INPUT_ROUNDS {
                                let what = if prompt { "Prompt" } else { "Tool" };
                                let error = JsonRpcError::internal(format!("{what} asked for input too many times"));
                                prop_assert_eq!(&step, &RoundStep::Final(jsonrpc::error(Some(&id), &error)));
                            } else {
                                prop_assert_eq!(&step, &RoundStep::Run);
                            }
                        }
                    }
                }
                // An op that does not fit the step: the driver meets the other kind.
                _ => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The client's requests being served

proptest! {
    /// A request id is refused (-32600) while a request with the same id (as a JSON value) is
    /// served, and free again once it ends; a cancellation reaches exactly the request served
    /// under its id.
    #[test]
    fn the_client_requests_model(ops in proptest::collection::vec((0u8..3, 0usize..4), 1..60)) {
        use std::collections::HashMap;
        use tasks_core::sessions::session::{ClientRequests, RequestKey};
        let ids = [json!(1), json!("1"), json!(2), json!({"a": 1})];
        let mut requests: ClientRequests<usize> = ClientRequests::new();
        let mut model: HashMap<String, usize> = HashMap::new();
        for (handle, (kind, which)) in ops.into_iter().enumerate() {
            let id = &ids[which];
            let text = id.to_string();
            match kind {
                0 => {
                    let begun = requests.begin(id, handle);
                    match model.entry(text) {
                        std::collections::hash_map::Entry::Occupied(_) => {
                            prop_assert_eq!(begun, Err(McpError::InvalidRequest(
                                "A request with this id is still being served"
                            )));
                        }
                        std::collections::hash_map::Entry::Vacant(vacant) => {
                            prop_assert_eq!(begun, Ok(RequestKey::of(id)));
                            vacant.insert(handle);
                        }
                    }
                }
                1 => prop_assert_eq!(requests.cancelled(id), model.get(&text)),
                _ => {
                    requests.end(&RequestKey::of(id));
                    model.remove(&text);
                }
            }
            prop_assert_eq!(requests.len(), model.len());
        }
    }
}
