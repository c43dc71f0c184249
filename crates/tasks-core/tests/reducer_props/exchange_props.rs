//! The exchanges of `tasks_core::exchange` driven by random event sequences, without an async
//! runtime: the listen stream against a small reference model and its ordering and closing
//! rules, and the synchronous exchange's MRTR round numbering and state binding.

use crate::common;

use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use common::{object, request, ts, T0};
use proptest::prelude::*;
use serde_json::{json, Value};
use tasks_core::exchange::{Announces, ListKind};
use tasks_core::exchange::{
    ListenExchange, ListenFrame, ListenFrameKind, NotificationsWanted, RequestNotification,
    StateIssuer, SyncExchange, SyncOutcome, SyncRequest,
};
use tasks_core::http_status_for_code;
use tasks_core::input::InputRequest;
use tasks_core::plan::{verify, Binding, StateKey, NONCE_BYTES};
use tasks_core::wire::ResultMeta;
use tasks_core::RawObject;
use tasks_core::{apply, Event, JsonObject, JsonRpcError, LogLevel, Method, Task, TaskId};

// ---------------------------------------------------------------------------------------------
// Listen

/// Tasks 0..TASKS exist; the stream names those its opening accepted.
const TASKS: usize = 3;

/// The most revisions of one task.
const REVISIONS: usize = 6;

/// The caller's scope; `OTHER` is another caller's.
const SCOPE: &str = "alice";
const OTHER: &str = "mallory";

fn server_meta() -> JsonObject {
    object(json!({"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}))
}

/// The states of task `n`, revision 1 first: status-message changes, the last one completed
/// when `completes`.
fn chain(n: usize, completes: bool) -> Vec<Task> {
    let id = TaskId::parse(&format!("task-{n}")).unwrap();
    let mut states = vec![Task::new(id, ts(T0), None, None)];
    for step in 1..REVISIONS {
        let last = states.last().unwrap();
        let event = if completes && step == REVISIONS - 1 {
            Event::Completed {
                result: RawObject::from(&object(json!({"content": []}))),
            }
        } else {
            Event::StatusMessage {
                message: format!("step {step}"),
            }
        };
        let next = apply(last, event, ts(T0 + step as u64)).unwrap().task;
        assert_eq!(next.revision(), step as u64 + 1);
        states.push(next);
    }
    states
}

#[derive(Debug, Clone)]
enum Op {
    /// A committed state (revision index `rev`) of task `task`, of the caller's scope or not.
    Status {
        other_scope: bool,
        task: usize,
        rev: usize,
    },
    /// Task `task` is gone.
    Removed(usize),
    /// A re-read: what it finds of each task asked (`None`: not found).
    Reread([Option<usize>; TASKS]),
    ListChanged(usize),
    ListLagged,
    Shutdown,
    FeedEnd,
    /// The driver takes up to this many frames.
    Poll(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let found = proptest::array::uniform3(proptest::option::weighted(0.8, 0..REVISIONS));
    prop_oneof![
        8 => (any::<bool>(), 0..TASKS, 0..REVISIONS).prop_map(|(other_scope, task, rev)| {
            Op::Status { other_scope: other_scope && rev % 2 == 0, task, rev }
        }),
        1 => (0..TASKS).prop_map(Op::Removed),
        3 => found.prop_map(Op::Reread),
        1 => (0..3usize).prop_map(Op::ListChanged),
        1 => Just(Op::ListLagged),
        1 => Just(Op::Shutdown),
        1 => Just(Op::FeedEnd),
        6 => (0..4usize).prop_map(Op::Poll),
    ]
}

/// The reference model: the rules of the exchange written out plainly.
struct Model {
    /// Named task → (last revision seen, terminal).
    named: BTreeMap<usize, (u64, bool)>,
    queue: VecDeque<ListenFrameKind>,
    open: bool,
    tools: bool,
}

impl Model {
    fn observe(&mut self, task: usize, state: &Task) {
        if !self.open {
            return;
        }
        if let Some(seen) = self.named.get_mut(&task) {
            if state.revision() > seen.0 {
                *seen = (state.revision(), state.is_terminal());
                self.queue.push_back(ListenFrameKind::TaskStatus {
                    task_id: state.id().clone(),
                    revision: state.revision(),
                });
            }
        }
    }

    fn list(&mut self) {
        if self.open && self.tools {
            self.queue
                .push_back(ListenFrameKind::ListChanged(ListKind::Tools));
        }
    }

    /// Ends the stream (once): only an acknowledgement not taken yet is kept.
    fn end(&mut self) -> bool {
        if !self.open {
            return false;
        }
        self.open = false;
        self.queue
            .retain(|kind| *kind == ListenFrameKind::Acknowledgement);
        true
    }
}

/// Checks one message against its kind: JSON-RPC 2.0, the method, the subscription id.
fn check_message(frame: &ListenFrame, subscription_id: &Value) {
    let message: Value = serde_json::from_slice(&frame.message).expect("a JSON message");
    assert_eq!(message["jsonrpc"], "2.0");
    let meta_of = |v: &Value| v["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    match &frame.kind {
        ListenFrameKind::Closing => {
            assert_eq!(&message["id"], subscription_id);
            assert_eq!(message["result"]["resultType"], "complete");
            assert_eq!(&meta_of(&message["result"]), subscription_id);
            assert_eq!(
                message["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
                "s"
            );
        }
        kind => {
            let method = match kind {
                ListenFrameKind::Acknowledgement => "notifications/subscriptions/acknowledged",
                other => other.event_method().unwrap(),
            };
            assert_eq!(message["method"], method);
            assert_eq!(&meta_of(&message["params"]), subscription_id);
            if let ListenFrameKind::TaskStatus { task_id, .. } = kind {
                assert_eq!(message["params"]["taskId"], task_id.as_str());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever arrives in whatever order: the acknowledgement first and once, each task's
    /// revisions strictly increasing (each at most once, never an older after a newer) and
    /// newer than what the stream opened with, nothing of other scopes or of tasks not named
    /// or gone, the closing response last, nothing after either end; and every frame is the
    /// one the reference model expects.
    #[test]
    fn listen_frames_follow_the_model(
        opened in proptest::array::uniform3(proptest::option::weighted(0.7, 0..REVISIONS)),
        completes in proptest::array::uniform3(any::<bool>()),
        tools in any::<bool>(),
        numeric_id in any::<bool>(),
        ops in proptest::collection::vec(op(), 0..60),
    ) {
        let chains: Vec<Vec<Task>> = (0..TASKS).map(|n| chain(n, completes[n])).collect();
        let subscription_id = if numeric_id { json!(42) } else { json!("sub-1") };
        let accepted: Vec<&Task> = (0..TASKS)
            .filter_map(|n| opened[n].map(|rev| &chains[n][rev]))
            .collect();
        let mut exchange = ListenExchange::open(
            subscription_id.clone(),
            SCOPE,
            accepted.iter().copied(),
            Announces::tools(tools),
            &server_meta(),
        );
        prop_assert_eq!(exchange.announces_list_changes(), tools);
        let mut model = Model {
            named: (0..TASKS)
                .filter_map(|n| {
                    opened[n].map(|rev| (n, (chains[n][rev].revision(), chains[n][rev].is_terminal())))
                })
                .collect(),
            queue: VecDeque::from([ListenFrameKind::Acknowledgement]),
            open: true,
            tools,
        };
        let mut sent: Vec<ListenFrame> = Vec::new();
        let mut take = |exchange: &mut ListenExchange, model: &mut Model, n: usize| {
            for _ in 0..n {
                let frame = exchange.poll_frame();
                assert_eq!(frame.as_ref().map(|f| f.kind.clone()), model.queue.pop_front());
                match frame {
                    Some(frame) => sent.push(frame),
                    None => break,
                }
            }
        };
        for op in ops {
            match op {
                Op::Status { other_scope, task, rev } => {
                    let state = &chains[task][rev];
                    exchange.on_status(if other_scope { OTHER } else { SCOPE }, state);
                    if !other_scope {
                        model.observe(task, state);
                    }
                }
                Op::Removed(task) => {
                    exchange.on_removed(chains[task][0].id());
                    model.named.remove(&task);
                }
                Op::Reread(found) => {
                    let asked = exchange.to_reread();
                    let expected: Vec<TaskId> = if model.open {
                        model
                            .named
                            .iter()
                            .filter(|(_, (_, terminal))| !terminal)
                            .map(|(n, _)| chains[*n][0].id().clone())
                            .collect()
                    } else {
                        Vec::new()
                    };
                    prop_assert_eq!(&asked, &expected);
                    let mut states = Vec::new();
                    for n in 0..TASKS {
                        if !asked.contains(chains[n][0].id()) {
                            continue;
                        }
                        match found[n] {
                            Some(rev) => {
                                states.push(&chains[n][rev]);
                                model.observe(n, &chains[n][rev]);
                            }
                            None => {
                                model.named.remove(&n);
                            }
                        }
                    }
                    exchange.on_reread(&asked, states);
                }
                Op::ListChanged(kind) => {
                    let kind = ListKind::ALL[kind];
                    exchange.on_list_changed(kind);
                    if kind == ListKind::Tools {
                        model.list();
                    }
                }
                Op::ListLagged => {
                    exchange.on_list_lagged();
                    model.list();
                }
                Op::Shutdown => {
                    exchange.on_shutdown();
                    if model.end() {
                        model.queue.push_back(ListenFrameKind::Closing);
                    }
                }
                Op::FeedEnd => {
                    exchange.on_feed_end();
                    model.end();
                }
                Op::Poll(n) => take(&mut exchange, &mut model, n),
            }
            prop_assert_eq!(exchange.is_finished(), !model.open && model.queue.is_empty());
        }
        exchange.on_shutdown();
        if model.end() {
            model.queue.push_back(ListenFrameKind::Closing);
        }
        take(&mut exchange, &mut model, usize::MAX);
        prop_assert!(exchange.is_finished());
        prop_assert_eq!(exchange.poll_frame(), None);

        // The rules, checked on the output itself.
        prop_assert_eq!(&sent[0].kind, &ListenFrameKind::Acknowledgement);
        let ack: Value = serde_json::from_slice(&sent[0].message).unwrap();
        let honoured: Vec<Value> = accepted.iter().map(|t| json!(t.id().as_str())).collect();
        prop_assert_eq!(
            ack["params"]["notifications"].get("taskIds").cloned(),
            (!honoured.is_empty()).then_some(Value::Array(honoured))
        );
        prop_assert_eq!(
            ack["params"]["notifications"].get("toolsListChanged").cloned(),
            tools.then_some(json!(true))
        );
        let mut last: BTreeMap<TaskId, u64> = accepted
            .iter()
            .map(|t| (t.id().clone(), t.revision()))
            .collect();
        for (at, frame) in sent.iter().enumerate() {
            check_message(frame, &subscription_id);
            match &frame.kind {
                ListenFrameKind::Acknowledgement => prop_assert_eq!(at, 0),
                ListenFrameKind::TaskStatus { task_id, revision } => {
                    let seen = last.get_mut(task_id).expect("only named tasks");
                    prop_assert!(*revision > *seen, "revision {} after {}", revision, seen);
                    *seen = *revision;
                }
                ListenFrameKind::ListChanged(kind) => {
                    prop_assert!(tools);
                    prop_assert_eq!(*kind, ListKind::Tools);
                }
                ListenFrameKind::ResourceUpdated(uri) => {
                    prop_assert!(false, "no resource is subscribed, yet {} was sent", uri);
                }
                ListenFrameKind::Closing => prop_assert_eq!(at, sent.len() - 1),
            }
        }
    }
}

#[test]
fn a_task_gone_is_no_longer_named_and_other_scopes_are_dropped() {
    let states = chain(0, false);
    let mut exchange = ListenExchange::open(
        json!(1),
        SCOPE,
        [&states[0]],
        Announces::tools(false),
        &server_meta(),
    );
    assert_eq!(
        exchange.poll_frame().unwrap().kind,
        ListenFrameKind::Acknowledgement
    );
    exchange.on_status(OTHER, &states[1]);
    assert_eq!(exchange.poll_frame(), None, "another caller's state");
    exchange.on_status(SCOPE, &states[2]);
    exchange.on_status(SCOPE, &states[1]);
    exchange.on_status(SCOPE, &states[2]);
    let kinds: Vec<_> = std::iter::from_fn(|| exchange.poll_frame())
        .map(|f| f.kind)
        .collect();
    assert_eq!(
        kinds,
        [ListenFrameKind::TaskStatus {
            task_id: states[0].id().clone(),
            revision: 3
        }]
    );
    let asked = exchange.to_reread();
    assert_eq!(asked, [states[0].id().clone()]);
    exchange.on_reread(&asked, []);
    assert_eq!(exchange.to_reread(), Vec::<TaskId>::new());
    exchange.on_status(SCOPE, &states[4]);
    assert_eq!(
        exchange.poll_frame(),
        None,
        "a task a re-read did not find is gone"
    );
    exchange.on_feed_end();
    assert!(exchange.is_finished());
}

#[test]
fn a_shutdown_before_anything_was_taken_sends_the_ack_then_the_closing() {
    let states = chain(0, false);
    let mut exchange = ListenExchange::open(
        json!(1),
        SCOPE,
        [&states[0]],
        Announces::tools(true),
        &server_meta(),
    );
    exchange.on_status(SCOPE, &states[1]);
    exchange.on_list_changed(ListKind::Tools);
    exchange.on_shutdown();
    exchange.on_status(SCOPE, &states[2]);
    let kinds: Vec<_> = std::iter::from_fn(|| exchange.poll_frame())
        .map(|f| f.kind)
        .collect();
    assert_eq!(
        kinds,
        [ListenFrameKind::Acknowledgement, ListenFrameKind::Closing]
    );
    assert!(exchange.is_finished());
}

// ---------------------------------------------------------------------------------------------
// The synchronous exchange

fn key() -> StateKey {
    StateKey::from_bytes([9; 32])
}

const LIFETIME_MS: u64 = 60_000;

#[derive(Debug, Clone)]
struct Call {
    method: Method,
    name: String,
    arguments: JsonObject,
    scope: String,
}

impl Call {
    fn binding(&self) -> Binding<'_> {
        Binding {
            method: self.method,
            name: &self.name,
            arguments: &self.arguments,
            scope: &self.scope,
        }
    }

    fn exchange(
        &self,
        previous_round: Option<u32>,
        answers: Option<JsonObject>,
        progress_token: Option<Value>,
        log_level: Option<LogLevel>,
    ) -> SyncExchange {
        SyncExchange::new(
            SyncRequest {
                id: json!(5),
                method: self.method,
                name: self.name.clone(),
                arguments: self.arguments.clone(),
                scope: self.scope.clone(),
                progress_token,
                log_level,
                previous_round,
                answers,
            },
            StateIssuer {
                key: key(),
                lifetime_ms: LIFETIME_MS,
                now: ts(T0),
            },
            Arc::new(ResultMeta::new(server_meta())),
        )
    }
}

fn asked(n: u8) -> BTreeMap<String, InputRequest> {
    BTreeMap::from([(format!("k{n}"), request(n % 2))])
}

fn call_strategy() -> impl Strategy<Value = Call> {
    (
        prop::sample::select(vec![Method::ToolsCall, Method::TasksGet]),
        "[a-z_]{1,8}",
        proptest::collection::btree_map("[a-c]", 0..100i64, 0..3),
        "[a-z]{0,4}",
    )
        .prop_map(|(method, name, arguments, scope)| Call {
            method,
            name,
            arguments: arguments.into_iter().map(|(k, v)| (k, json!(v))).collect(),
            scope,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Round n+1 follows round n: each `input_required` answer's state verifies for its own
    /// request, carries the next round number, the answers so far and what it asks, and
    /// verifies for no request that differs in method, name, arguments or scope. The nonce is
    /// drawn once per round, and never for another outcome.
    #[test]
    fn rounds_count_up_and_states_bind_the_request(
        call in call_strategy(),
        rounds in 1..6u8,
        complete_at_end in any::<bool>(),
    ) {
        let mut previous_round = None;
        let mut answers: Option<JsonObject> = None;
        for n in 0..rounds {
            let draws = Cell::new(0u32);
            let exchange = call.exchange(previous_round, answers.clone(), None, None);
            prop_assert_eq!(exchange.next_round(), u32::from(n) + 1);
            let response = exchange.finish(SyncOutcome::InputRequired(asked(n)), || {
                draws.set(draws.get() + 1);
                [n; NONCE_BYTES]
            });
            prop_assert_eq!(draws.get(), 1);
            prop_assert_eq!(response.status, 200);
            prop_assert!(!response.streamed);
            let message: Value = serde_json::from_slice(&response.message).unwrap();
            prop_assert_eq!(&message["id"], &json!(5));
            let result = &message["result"];
            prop_assert_eq!(&result["resultType"], "input_required");
            prop_assert_eq!(&result["_meta"], &Value::Object(server_meta()));
            prop_assert_eq!(
                &result["inputRequests"],
                &serde_json::to_value(asked(n)).unwrap()
            );
            let text = result["requestState"].as_str().unwrap();
            let state = verify(&key(), call.binding(), text, ts(T0)).unwrap();
            prop_assert_eq!(state.round, u32::from(n) + 1);
            prop_assert_eq!(&state.asked, &asked(n));
            prop_assert_eq!(&state.answers, &answers.clone().unwrap_or_default());
            prop_assert!(verify(&key(), call.binding(), text, ts(T0 + LIFETIME_MS)).is_err());
            let other_method = if call.method == Method::ToolsCall {
                Method::TasksGet
            } else {
                Method::ToolsCall
            };
            let other_name = format!("{}x", call.name);
            let mut other_arguments = call.arguments.clone();
            other_arguments.insert("z".into(), json!(1));
            let other_scope = format!("{}x", call.scope);
            for binding in [
                Binding { method: other_method, ..call.binding() },
                Binding { name: &other_name, ..call.binding() },
                Binding { arguments: &other_arguments, ..call.binding() },
                Binding { scope: &other_scope, ..call.binding() },
            ] {
                prop_assert!(verify(&key(), binding, text, ts(T0)).is_err());
            }
            // The client answers; the next request carries every answer so far.
            let mut merged = answers.take().unwrap_or_default();
            merged.insert(format!("k{n}"), json!({"action": "accept", "content": {"n": n}}));
            answers = Some(merged);
            previous_round = Some(state.round);
        }
        if complete_at_end {
            let exchange = call.exchange(previous_round, answers, None, None);
            let response = exchange.finish(
                SyncOutcome::Complete(object(json!({"content": [], "resultType": "complete"}))),
                || panic!("no nonce for a result"),
            );
            let message: Value = serde_json::from_slice(&response.message).unwrap();
            prop_assert_eq!(response.status, 200);
            prop_assert_eq!(
                &message["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
                "s"
            );
        }
    }

    /// The notifications go out, each once and in order, only when the request opted in and the
    /// client accepts a stream; the response comes last and says whether it ends a stream.
    #[test]
    fn notifications_then_the_response(
        token in proptest::option::of(prop_oneof![Just(json!("tok")), Just(json!(7))]),
        level in proptest::option::of(0..8usize),
        accepts in any::<bool>(),
        sent in proptest::collection::vec((any::<bool>(), 0..1000u32), 0..5),
        error_code in prop::sample::select(vec![-32602i64, -32603, -32021]),
    ) {
        let call = Call {
            method: Method::ToolsCall,
            name: "t".into(),
            arguments: JsonObject::new(),
            scope: String::new(),
        };
        let level = level.map(|n| LogLevel::ALL[n]);
        let mut exchange = call.exchange(None, None, token.clone(), level);
        let wanted = exchange.notifications(accepts);
        prop_assert_eq!(
            wanted,
            (accepts && (token.is_some() || level.is_some())).then_some(NotificationsWanted {
                progress: token.is_some(),
                log_level: level,
            })
        );
        for (progress, n) in &sent {
            let notification = if *progress {
                RequestNotification::Progress { progress: f64::from(*n), total: None, message: None }
            } else {
                RequestNotification::Log { level: LogLevel::Info, logger: None, data: json!(n) }
            };
            let message: Value =
                serde_json::from_slice(&exchange.on_notification(notification)).unwrap();
            if *progress {
                prop_assert_eq!(&message["method"], "notifications/progress");
                prop_assert_eq!(&message["params"]["progress"], &json!(n));
                prop_assert_eq!(
                    &message["params"]["progressToken"],
                    &token.clone().unwrap_or(Value::Null)
                );
            } else {
                prop_assert_eq!(&message["method"], "notifications/message");
                prop_assert_eq!(&message["params"]["data"], &json!(n));
            }
            prop_assert!(message.get("id").is_none());
        }
        let error = JsonRpcError { code: error_code, message: "no".into(), data: None };
        let response = exchange.finish(SyncOutcome::Error(error), || panic!("no nonce"));
        prop_assert_eq!(response.streamed, !sent.is_empty());
        prop_assert_eq!(response.status, http_status_for_code(error_code));
        let message: Value = serde_json::from_slice(&response.message).unwrap();
        prop_assert_eq!(message, json!({"jsonrpc": "2.0", "id": 5,
            "error": {"code": error_code, "message": "no"}}));
    }
}

#[test]
fn the_round_number_saturates() {
    let call = Call {
        method: Method::ToolsCall,
        name: "t".into(),
        arguments: JsonObject::new(),
        scope: String::new(),
    };
    let exchange = call.exchange(Some(u32::MAX), None, None, None);
    assert_eq!(exchange.next_round(), u32::MAX);
    let response = exchange.finish(SyncOutcome::InputRequired(asked(0)), || [0; NONCE_BYTES]);
    let message: Value = serde_json::from_slice(&response.message).unwrap();
    let text = message["result"]["requestState"].as_str().unwrap();
    assert_eq!(
        verify(&key(), call.binding(), text, ts(T0)).unwrap().round,
        u32::MAX
    );
}
