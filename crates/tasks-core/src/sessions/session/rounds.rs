//! The input rounds of a `tools/call` or `prompts/get` run now on a 2025 session: when the
//! request is answered, when the client is asked, and what a refusal or an endless handler
//! answers.
//!
//! MCP 2025-11-25 transports, "Sending Messages to the Server": on the SSE stream of a request
//! the server may send requests related to it before the response. The handler's input
//! requests (elicitation, sampling, roots) are asked as one round of the session's requests
//! ([`super::RequestSpace`]); the handler runs again with every answer so far (the same replay
//! as a 2026-07-28 MRTR round), until it completes. This server's choices:
//!
//! * At most [`MAX_INPUT_ROUNDS`] answered rounds: a handler that keeps asking is answered
//!   -32603 `Tool asked for input too many times` (`Prompt …` for a prompt).
//! * A client that answers an input request with a JSON-RPC error ([`Refused`]) gets, for a
//!   tool, a tool error result naming the error code; for a prompt, which has no error result,
//!   a -32603 error saying the same ([`Refused::message`]).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::call::tool_error_result;
use crate::exchange::SyncOutcome;
use crate::input::InputRequest;
use crate::sessions::wire::session_result;
use crate::{jsonrpc, JsonObject, JsonRpcError};

/// At most this many input rounds per call: a handler that keeps asking new questions is
/// stopped with -32603 rather than looping forever.
pub const MAX_INPUT_ROUNDS: usize = 32;

/// An input request the client answered with a JSON-RPC error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The input key.
    pub key: String,
    /// The error's code (0 when it had none).
    pub code: i64,
}

impl Refused {
    /// What the request's final answer says of it: `"The client refused input request <key>
    /// (JSON-RPC error <code>)"`.
    pub fn message(&self) -> String {
        format!(
            "The client refused input request {} (JSON-RPC error {})",
            self.key, self.code
        )
    }
}

/// The kind of request whose rounds these are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asker {
    /// A `tools/call`: a refusal is a tool error result.
    Tool,
    /// A `prompts/get`: a refusal is -32603.
    Prompt,
}

/// What the driver of a call's rounds does next.
#[derive(Debug, Clone, PartialEq)]
pub enum RoundStep {
    /// Send this frame (the JSON-RPC response to the request, serialized) and end.
    Final(Vec<u8>),
    /// Ask the client these input requests as one round, then feed its resolution to
    /// [`CallRounds::answered`].
    Ask(BTreeMap<String, InputRequest>),
    /// Run the handler again with [`CallRounds::input_responses`].
    Run,
}

/// The rounds of one request run now on a session.
#[derive(Debug)]
pub struct CallRounds {
    /// The request's JSON-RPC id.
    id: Value,
    asker: Asker,
    /// Every answer so far, by input key.
    answers: JsonObject,
    /// Rounds answered so far.
    answered: usize,
}

impl CallRounds {
    /// The rounds of request `id` of `asker`'s kind, before its first run.
    pub fn new(id: Value, asker: Asker) -> Self {
        CallRounds {
            id,
            asker,
            answers: JsonObject::new(),
            answered: 0,
        }
    }

    /// The input responses of the next run: every answer so far, `None` before the first.
    pub fn input_responses(&self) -> Option<JsonObject> {
        (!self.answers.is_empty()).then(|| self.answers.clone())
    }

    /// The handler's run ended with `outcome`: the answer (the result with `resultType`
    /// dropped, as 2025 shows it; or the error), or the round to ask.
    pub fn outcome(&mut self, outcome: SyncOutcome) -> RoundStep {
        match outcome {
            SyncOutcome::Complete(result) => {
                RoundStep::Final(jsonrpc::result(&self.id, &session_result(result)))
            }
            SyncOutcome::Error(error) => RoundStep::Final(jsonrpc::error(Some(&self.id), &error)),
            SyncOutcome::InputRequired(asked) => RoundStep::Ask(asked),
        }
    }

    /// The round asked resolved: answered (the handler runs again, unless that was round
    /// [`MAX_INPUT_ROUNDS`]), or refused (the request's answer says so).
    pub fn answered(&mut self, resolution: Result<JsonObject, Refused>) -> RoundStep {
        let answers = match resolution {
            Ok(answers) => answers,
            Err(refused) => {
                let frame = match self.asker {
                    Asker::Tool => jsonrpc::result(&self.id, &tool_error_result(refused.message())),
                    Asker::Prompt => {
                        jsonrpc::error(Some(&self.id), &JsonRpcError::internal(refused.message()))
                    }
                };
                return RoundStep::Final(frame);
            }
        };
        self.answers.extend(answers);
        self.answered += 1;
        if self.answered < MAX_INPUT_ROUNDS {
            return RoundStep::Run;
        }
        let what = match self.asker {
            Asker::Tool => "Tool",
            Asker::Prompt => "Prompt",
        };
        let error = JsonRpcError::internal(format!("{what} asked for input too many times"));
        RoundStep::Final(jsonrpc::error(Some(&self.id), &error))
    }
}
