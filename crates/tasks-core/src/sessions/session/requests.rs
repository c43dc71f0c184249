//! A session's server-to-client requests: their id space and input rounds.
//!
//! MCP 2025-11-25 transports, "Sending Messages to the Server" and "Listening for Messages
//! from the Server" (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>):
//! the server sends JSON-RPC requests (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) on an SSE stream, and the client POSTs each answer back, matched by its id.
//! Basic protocol, "Requests" (<https://modelcontextprotocol.io/specification/2025-11-25/basic>):
//! an id MUST NOT have been used before by the requestor within the same session. Utilities,
//! "Cancellation" (<https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation>):
//! the sender withdraws a request with `notifications/cancelled`.
//!
//! A *round* is the questions one driver asks together: the input requests of a `tools/call`
//! run now, or of a 2025-11-25 task waiting for input (then each carries
//! `_meta["io.modelcontextprotocol/related-task"]`). Every question gets a fresh integer id
//! ([`RequestSpace::ask`]); an answer is matched to its round and key ([`RequestSpace::answer`]);
//! an answer to an id never sent, already answered, or of a round that ended is refused
//! (-32600). The round resolves as if its answers were awaited in key order: it waits until
//! every key before the first JSON-RPC error answer is answered, then refuses with that key;
//! or it is answered once every key is.
//!
//! | event | effect |
//! |---|---|
//! | [`RequestSpace::ask`] | the JSON-RPC requests to send, fresh ids |
//! | [`RequestSpace::answer`] | -32600, or the round: still waiting, answered, refused |
//! | [`RequestSpace::close`] (stream closed, call stopped, task stopped asking) | the `notifications/cancelled` of a task round's unanswered requests; its ids forgotten |

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

use crate::input::InputRequest;
use crate::input::METHOD_ELICIT;
use crate::protocol::META_RELATED_TASK;
use crate::{JsonObject, McpError, TaskId};

/// A round of questions of one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RoundId(u64);

/// How a round stands after an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    /// Questions are still unanswered.
    Waiting,
    /// Every question was answered with a result: the answers by input key (the round is
    /// over).
    Answered(JsonObject),
    /// The client answered the question of `key` with a JSON-RPC error whose `code` is
    /// given (0 when it had none); the round is over.
    Refused {
        /// The input key.
        key: String,
        /// The error's code.
        code: i64,
    },
}

#[derive(Debug)]
struct Round {
    task: Option<TaskId>,
    /// By input key: the request id, and the answer once it came (`Err(code)` for an error).
    slots: BTreeMap<String, (u64, Option<Result<Value, i64>>)>,
}

/// The server-to-client request ids of one session and the rounds they belong to.
#[derive(Debug, Default)]
pub struct RequestSpace {
    next_id: u64,
    next_round: u64,
    /// Outstanding request ids: their round and key.
    pending: HashMap<u64, (RoundId, String)>,
    rounds: HashMap<RoundId, Round>,
}

/// The JSON-RPC request asking `request` with id `id`: with `related-task` `_meta` when it is
/// for a task, and without the elicitation `mode` (which exists from 2025-11-25 on) when
/// `elicitation_mode` is false.
fn question(
    id: u64,
    request: InputRequest,
    task: Option<&TaskId>,
    elicitation_mode: bool,
) -> Value {
    let mut params = request.params.unwrap_or_default();
    if !elicitation_mode
        && request.method == METHOD_ELICIT
        && params.get("mode").and_then(Value::as_str) == Some("form")
    {
        params.remove("mode");
    }
    if let Some(task) = task {
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(meta)) => meta,
            _ => JsonObject::new(),
        };
        meta.insert(
            META_RELATED_TASK.into(),
            crate::sessions::tasks::related_task(task.as_str()),
        );
        params.insert("_meta".into(), Value::Object(meta));
    }
    json!({"jsonrpc": "2.0", "id": id, "method": request.method, "params": params})
}

/// `notifications/cancelled` withdrawing request `id`.
fn withdrawal(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "No longer needed"}})
}

impl RequestSpace {
    /// An empty space: the first request id is 0.
    pub fn new() -> Self {
        RequestSpace::default()
    }

    /// Opens a round asking `questions` (for `task`, when they are a task's): the round and
    /// the JSON-RPC requests to send, in key order, each with a fresh id.
    pub fn ask(
        &mut self,
        questions: BTreeMap<String, InputRequest>,
        task: Option<&TaskId>,
        elicitation_mode: bool,
    ) -> (RoundId, Vec<Value>) {
        let round = RoundId(self.next_round);
        self.next_round += 1;
        let mut slots = BTreeMap::new();
        let mut messages = Vec::with_capacity(questions.len());
        for (key, request) in questions {
            let id = self.next_id;
            self.next_id += 1;
            messages.push(question(id, request, task, elicitation_mode));
            self.pending.insert(id, (round, key.clone()));
            slots.insert(key, (id, None));
        }
        self.rounds.insert(
            round,
            Round {
                task: task.cloned(),
                slots,
            },
        );
        (round, messages)
    }

    /// The open round the outstanding request `id` belongs to.
    pub fn round_of(&self, id: &Value) -> Option<RoundId> {
        id.as_u64()
            .and_then(|id| self.pending.get(&id))
            .map(|(round, _)| *round)
    }

    /// The client's answer to request `id`: its `result`, or its `error` object. A round that
    /// resolves is over (its other requests are forgotten).
    ///
    /// # Errors
    /// -32600 `No outstanding request has this id`: never sent, already answered, or its round
    /// ended (closed or resolved).
    pub fn answer(
        &mut self,
        id: &Value,
        answer: Result<Value, Value>,
    ) -> Result<(RoundId, Resolution), McpError> {
        let refused = McpError::InvalidRequest("No outstanding request has this id");
        let Some((round_id, key)) = id.as_u64().and_then(|id| self.pending.remove(&id)) else {
            return Err(refused);
        };
        let Some(round) = self.rounds.get_mut(&round_id) else {
            return Err(refused);
        };
        let answer = answer.map_err(|e| e.get("code").and_then(Value::as_i64).unwrap_or(0));
        if let Some(slot) = round.slots.get_mut(&key) {
            slot.1 = Some(answer);
        }
        let mut resolution = None;
        for (key, (_, answer)) in &round.slots {
            match answer {
                None => {
                    resolution = Some(Resolution::Waiting);
                    break;
                }
                Some(Err(code)) => {
                    resolution = Some(Resolution::Refused {
                        key: key.clone(),
                        code: *code,
                    });
                    break;
                }
                Some(Ok(_)) => {}
            }
        }
        let resolution = match resolution {
            Some(resolution) => resolution,
            None => Resolution::Answered(
                round
                    .slots
                    .iter()
                    .filter_map(|(k, (_, a))| Some((k.clone(), a.clone()?.ok()?)))
                    .collect(),
            ),
        };
        if resolution != Resolution::Waiting {
            self.close(round_id, false);
        }
        Ok((round_id, resolution))
    }

    /// Ends `round` before it resolved (its stream closed, its call stopped, or the task no
    /// longer asks): its requests are forgotten, so a late answer is refused. With `withdraw`,
    /// the `notifications/cancelled` to send for a task round's unanswered requests (a call's
    /// requests are only forgotten: its stream ends with it).
    pub fn close(&mut self, round: RoundId, withdraw: bool) -> Vec<Value> {
        let Some(round) = self.rounds.remove(&round) else {
            return Vec::new();
        };
        let mut notices = Vec::new();
        for (id, answer) in round.slots.values() {
            if answer.is_none() {
                self.pending.remove(id);
                if withdraw && round.task.is_some() {
                    notices.push(withdrawal(*id));
                }
            }
        }
        notices
    }

    /// Requests awaiting an answer.
    pub fn outstanding(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn questions(keys: &[&str]) -> BTreeMap<String, InputRequest> {
        keys.iter()
            .map(|k| {
                let request = InputRequest {
                    method: METHOD_ELICIT.into(),
                    params: Some(
                        json!({"mode": "form", "message": k})
                            .as_object()
                            .cloned()
                            .unwrap_or_default(),
                    ),
                };
                ((*k).to_owned(), request)
            })
            .collect()
    }

    #[test]
    fn a_task_question_carries_its_task_and_an_old_session_loses_mode() {
        let mut space = RequestSpace::new();
        let task = TaskId::parse("t1").unwrap();
        let (_, asked) = space.ask(questions(&["a"]), Some(&task), true);
        assert_eq!(
            asked[0],
            json!({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create",
                   "params": {"mode": "form", "message": "a",
                              "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}}})
        );
        let (_, asked) = space.ask(questions(&["a"]), None, false);
        assert_eq!(
            asked[0],
            json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
                   "params": {"message": "a"}})
        );
    }

    #[test]
    fn an_error_answer_refuses_once_the_keys_before_it_are_answered() {
        let mut space = RequestSpace::new();
        let (round, _) = space.ask(questions(&["a", "b", "c"]), None, true);
        let error = Err(json!({"code": -1, "message": "no"}));
        assert_eq!(
            space.answer(&json!(1), error),
            Ok((round, Resolution::Waiting))
        );
        assert_eq!(
            space.answer(&json!(0), Ok(json!({}))),
            Ok((
                round,
                Resolution::Refused {
                    key: "b".into(),
                    code: -1
                }
            ))
        );
        // The round is over: the third question is no longer outstanding.
        assert!(space.answer(&json!(2), Ok(json!({}))).is_err());
        assert_eq!(space.outstanding(), 0);
    }

    #[test]
    fn closing_a_task_round_withdraws_only_what_is_unanswered() {
        let mut space = RequestSpace::new();
        let task = TaskId::parse("t").unwrap();
        let (round, _) = space.ask(questions(&["a", "b"]), Some(&task), true);
        assert!(space.answer(&json!(1), Ok(json!({}))).is_ok());
        let notices = space.close(round, true);
        assert_eq!(
            notices,
            vec![
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 0, "reason": "No longer needed"}})
            ]
        );
        assert!(space.answer(&json!(0), Ok(json!({}))).is_err());
        // A call round is only forgotten.
        let (round, _) = space.ask(questions(&["a"]), None, true);
        assert!(space.close(round, true).is_empty());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Ask(Vec<u8>),
        /// Answer the n-th id ever sent (modulo), with a result or an error.
        Answer(usize, bool),
        /// An id never sent, or not an integer.
        Stranger(i64),
        Close(usize, bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            proptest::collection::vec(0u8..4, 1..4).prop_map(Op::Ask),
            (any::<usize>(), any::<bool>()).prop_map(|(n, ok)| Op::Answer(n, ok)),
            (-3i64..0).prop_map(Op::Stranger),
            (any::<usize>(), any::<bool>()).prop_map(|(n, w)| Op::Close(n, w)),
        ]
    }

    proptest! {
        /// Ids are never reused within a session; an answer is matched to the round and key
        /// it was asked under, once; an answer to an id never sent, answered, or of a round
        /// that ended is refused; a round resolves as awaiting its answers in key order would.
        #[test]
        fn the_request_id_space_model(ops in proptest::collection::vec(op(), 1..50)) {
            let mut space = RequestSpace::new();
            let mut sent: Vec<(u64, RoundId, String)> = Vec::new();
            let mut seen_ids = HashSet::new();
            // Model: open rounds, by round, key → answer.
            let mut open: HashMap<RoundId, BTreeMap<String, Option<Result<(), i64>>>> = HashMap::new();
            let mut outstanding: HashSet<u64> = HashSet::new();
            for op in ops {
                match op {
                    Op::Ask(keys) => {
                        let keys: Vec<String> = keys.iter().map(|k| format!("k{k}")).collect();
                        let names: Vec<&str> = keys.iter().map(String::as_str).collect();
                        let (round, messages) = space.ask(questions(&names), None, true);
                        prop_assert!(!open.contains_key(&round));
                        let model: BTreeMap<_, _> = questions(&names).into_keys().map(|k| (k, None)).collect();
                        prop_assert_eq!(messages.len(), model.len());
                        for (message, key) in messages.iter().zip(model.keys()) {
                            let id = message["id"].as_u64().unwrap();
                            prop_assert!(seen_ids.insert(id), "id {} reused", id);
                            sent.push((id, round, key.clone()));
                            outstanding.insert(id);
                        }
                        open.insert(round, model);
                    }
                    Op::Answer(n, ok) => {
                        if sent.is_empty() { continue; }
                        let (id, round, key) = sent[n % sent.len()].clone();
                        let answer = if ok { Ok(json!({"key": key})) } else { Err(json!({"code": 7})) };
                        let result = space.answer(&json!(id), answer);
                        if !outstanding.remove(&id) {
                            prop_assert!(result.is_err(), "a late answer was taken");
                            continue;
                        }
                        let (at, resolution) = result.expect("an outstanding id is answered");
                        prop_assert_eq!(at, round);
                        let model = open.get_mut(&round).unwrap();
                        model.insert(key, Some(if ok { Ok(()) } else { Err(7) }));
                        let expected = model.iter().find_map(|(k, a)| match a {
                            None => Some(Resolution::Waiting),
                            Some(Err(code)) => Some(Resolution::Refused { key: k.clone(), code: *code }),
                            Some(Ok(())) => None,
                        });
                        match (&resolution, expected) {
                            (Resolution::Answered(answers), None) => {
                                for (k, v) in answers {
                                    // Each answer is the one given to its own key's question.
                                    prop_assert_eq!(&v["key"], &json!(k));
                                }
                                prop_assert_eq!(answers.len(), model.len());
                            }
                            (got, Some(expected)) => prop_assert_eq!(got, &expected),
                            (got, None) => prop_assert!(false, "{:?} for a fully answered round", got),
                        }
                        if resolution != Resolution::Waiting {
                            open.remove(&round);
                            outstanding.retain(|id| sent.iter().any(|(i, r, _)| i == id && *r != round));
                        }
                    }
                    Op::Stranger(n) => {
                        let stranger = space.answer(&json!(n), Ok(Value::Null));
                        prop_assert!(stranger.is_err());
                        let text = space.answer(&json!("0"), Ok(Value::Null));
                        prop_assert!(text.is_err());
                    }
                    Op::Close(n, withdraw) => {
                        if sent.is_empty() { continue; }
                        let (_, round, _) = sent[n % sent.len()].clone();
                        prop_assert!(space.close(round, withdraw).is_empty(), "a call round withdrew");
                        open.remove(&round);
                        outstanding.retain(|id| sent.iter().any(|(i, r, _)| i == id && *r != round));
                    }
                }
                prop_assert_eq!(space.outstanding(), outstanding.len());
            }
        }
    }
}
