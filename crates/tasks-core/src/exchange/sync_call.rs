//! The exchange of a request answered now: [`SyncExchange`] (its docs state the rules).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::error::http_status_for_code;
use crate::input::InputRequest;
use crate::jsonrpc;
use crate::logging::LogLevel;
use crate::method::Method;
use crate::mrtr::{issue, Binding, RequestState, StateKey, NONCE_BYTES};
use crate::projection::ResultMeta;
use crate::time::Timestamp;
use crate::wire::{InputRequiredResult, LogParams, ProgressParams, ResultType};
use crate::{JsonObject, JsonRpcError};

/// How a request answered now ended: what its handler (a tool) returned.
#[derive(Debug, Clone, PartialEq)]
pub enum SyncOutcome {
    /// The result object (a `CallToolResult` for `tools/call`), with `resultType: "complete"`
    /// ([`crate::wire::complete`]).
    Complete(JsonObject),
    /// The handler needs input: answer with an MRTR `input_required` result carrying these
    /// requests (every request asked in this round, by key).
    InputRequired(BTreeMap<String, InputRequest>),
    /// A JSON-RPC error to answer with.
    Error(JsonRpcError),
}

/// One notification for the request's stream, before the progress token is added.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestNotification {
    /// `notifications/progress`: `progress` (strictly increasing), optional `total` and
    /// `message`.
    Progress {
        /// Work done so far, in the tool's own unit.
        progress: f64,
        /// Total work, in the same unit, when known.
        total: Option<f64>,
        /// A human-readable status line.
        message: Option<String>,
    },
    /// `notifications/message`: a log entry.
    Log {
        /// Severity.
        level: LogLevel,
        /// The logger name, if any.
        logger: Option<String>,
        /// Any JSON value.
        data: Value,
    },
}

/// The serialized JSON-RPC notification of `notification` on the stream of a request whose
/// `progressToken` is `progress_token` (`null` when it has none, which a progress notification
/// then never reaches: only a request with a token gets progress).
pub fn notification_message(
    notification: RequestNotification,
    progress_token: Option<&Value>,
) -> Vec<u8> {
    match notification {
        RequestNotification::Progress {
            progress,
            total,
            message,
        } => jsonrpc::notification(
            "notifications/progress",
            &ProgressParams {
                progress_token: progress_token.cloned().unwrap_or(Value::Null),
                progress,
                total,
                message,
            },
        ),
        RequestNotification::Log {
            level,
            logger,
            data,
        } => jsonrpc::notification(
            "notifications/message",
            &LogParams {
                level,
                logger,
                data,
            },
        ),
    }
}

/// The notifications a request may be sent (see [`SyncExchange::notifications`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotificationsWanted {
    /// Progress notifications (the request has a `progressToken`).
    pub progress: bool,
    /// Log messages at or above this level, when any.
    pub log_level: Option<LogLevel>,
}

/// What a [`SyncExchange`] needs of its request.
#[derive(Debug, Clone)]
pub struct SyncRequest {
    /// The request's JSON-RPC id, echoed by the response.
    pub id: Value,
    /// The request's method (`tools/call`), bound into an issued `requestState`.
    pub method: Method,
    /// The name the request addresses (the tool's), bound into an issued `requestState`.
    pub name: String,
    /// The request's arguments, bound into an issued `requestState` (by a digest of their
    /// canonical encoding).
    pub arguments: JsonObject,
    /// The caller's scope (its opaque string), bound into an issued `requestState`.
    pub scope: String,
    /// `_meta.progressToken`, when the request opts into progress.
    pub progress_token: Option<Value>,
    /// `_meta["io.modelcontextprotocol/logLevel"]`, when the request opts into log messages.
    pub log_level: Option<LogLevel>,
    /// The round of the verified `requestState` the request echoed ([`RequestState::round`]);
    /// `None` for a first call.
    pub previous_round: Option<u32>,
    /// The answers so far (earlier rounds' merged with this request's `inputResponses`), if
    /// any: what a next round's state carries.
    pub answers: Option<JsonObject>,
}

impl SyncRequest {
    /// The request of a synchronous `tools/call` of tool `name` with `arguments` by `scope`:
    /// the notifications its `meta` opts into, the round of the verified state it answers
    /// (`previous`, from [`crate::call::CallPlan::RunSync`]) and the answers so far.
    pub fn tools_call(
        id: Value,
        name: &str,
        arguments: JsonObject,
        scope: &str,
        meta: &crate::negotiation::RequestMeta,
        previous: Option<&RequestState>,
        answers: Option<JsonObject>,
    ) -> Self {
        SyncRequest::named(
            Method::ToolsCall,
            id,
            name,
            arguments,
            scope,
            meta,
            previous,
            answers,
        )
    }

    /// The request of a synchronous `method` (`tools/call`, `prompts/get`) addressing `name`
    /// with `arguments`: as [`SyncRequest::tools_call`], for any method that takes input
    /// rounds.
    #[allow(clippy::too_many_arguments)]
    pub fn named(
        method: Method,
        id: Value,
        name: &str,
        arguments: JsonObject,
        scope: &str,
        meta: &crate::negotiation::RequestMeta,
        previous: Option<&RequestState>,
        answers: Option<JsonObject>,
    ) -> Self {
        SyncRequest {
            id,
            method,
            name: name.to_owned(),
            arguments,
            scope: scope.to_owned(),
            progress_token: meta.progress_token.clone(),
            log_level: meta.log_level,
            previous_round: previous.map(|state| state.round),
            answers,
        }
    }
}

/// What issuing a `requestState` needs: the key, how long the state lives, and the time now.
#[derive(Debug, Clone)]
pub struct StateIssuer {
    /// The HMAC key protecting the state.
    pub key: StateKey,
    /// How long an issued state stays valid, in milliseconds: [`crate::plan::STATE_LIFETIME_MS`],
    /// or the task TTL when shorter (so that a task a retry created outlives every state that
    /// could replay the retry).
    pub lifetime_ms: u64,
    /// The time the state is issued at (its expiry is `now + lifetime_ms`).
    pub now: Timestamp,
}

impl StateIssuer {
    /// An issuer with `key` at `now`, whose states live [`crate::plan::STATE_LIFETIME_MS`], or
    /// `task_ttl_ms` when shorter (`None`: tasks are kept without limit).
    pub fn new(key: StateKey, task_ttl_ms: Option<u64>, now: Timestamp) -> Self {
        StateIssuer {
            key,
            lifetime_ms: crate::mrtr::state_lifetime_ms(task_ttl_ms),
            now,
        }
    }
}

/// The response that ends a [`SyncExchange`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncResponse {
    /// The HTTP status of the response when it is the whole body (200, or the status of a
    /// JSON-RPC error: [`http_status_for_code`]); unused after notifications.
    pub status: u16,
    /// The serialized JSON-RPC response.
    pub message: Vec<u8>,
    /// Whether notifications went out before it: the response is then the last event of the
    /// stream they opened.
    pub streamed: bool,
}

/// The state machine of one request answered now (no task): its notifications, then its
/// response (MCP 2026-07-28 progress,
/// <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress>; logging,
/// <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging>;
/// streamable-http "Sending Messages",
/// <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>;
/// MRTR, <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>).
///
/// Generic over the request method: `tools/call` today; prompts and resources can take input
/// rounds the same way.
///
/// * Notifications go out only when the request opted into them (`progressToken`, or
///   `io.modelcontextprotocol/logLevel`, in its `_meta`) and the client accepts a stream
///   ([`SyncExchange::notifications`]). The first one makes the response a stream; each is one
///   frame, `notifications/progress` carrying the request's token or `notifications/message`.
/// * The response is the last frame ([`SyncExchange::finish`] consumes the exchange, so nothing
///   can follow it): the result with the server's `_meta`, the JSON-RPC error with its HTTP
///   status, or the next MRTR `input_required` round. That round's `requestState`
///   ([`crate::plan::RequestState`]) is issued here: bound to the method, name, arguments and scope of the
///   request, numbered one more than the round the request answered (1 for a first call),
///   carrying the answers so far and what this round asks, valid from the time given for the
///   lifetime given, and made unique by a nonce drawn only for such a round.
///
/// Feed it the handler's notifications ([`SyncExchange::on_notification`]), in order, and
/// finally its outcome ([`SyncExchange::finish`]); send each frame it returns as it comes.
#[derive(Debug)]
pub struct SyncExchange {
    request: SyncRequest,
    issuer: StateIssuer,
    server_meta: Arc<ResultMeta>,
    streamed: bool,
}

impl SyncExchange {
    /// The exchange of `request`, which issues a next round's state with `issuer` and adds
    /// `server_meta` (serverInfo) to its result.
    pub fn new(request: SyncRequest, issuer: StateIssuer, server_meta: Arc<ResultMeta>) -> Self {
        SyncExchange {
            request,
            issuer,
            server_meta,
            streamed: false,
        }
    }

    /// The notifications the request's handler may send: `None` when the request opted into
    /// none or the client does not accept a stream (`accepts_event_stream`: its `Accept`
    /// header covers `text/event-stream`); the response is then one message.
    pub fn notifications(&self, accepts_event_stream: bool) -> Option<NotificationsWanted> {
        let wanted = NotificationsWanted {
            progress: self.request.progress_token.is_some(),
            log_level: self.request.log_level,
        };
        (accepts_event_stream && (wanted.progress || wanted.log_level.is_some())).then_some(wanted)
    }

    /// The frame of one notification of the handler (the response is a stream from the first
    /// one on).
    pub fn on_notification(&mut self, notification: RequestNotification) -> Vec<u8> {
        self.streamed = true;
        notification_message(notification, self.request.progress_token.as_ref())
    }

    /// The round number an `input_required` answer would carry: one more than the round the
    /// request answered (saturating), 1 for a first call.
    pub fn next_round(&self) -> u32 {
        self.request
            .previous_round
            .map_or(1, |round| round.saturating_add(1))
    }

    /// The response for the handler's `outcome`: the last frame. `nonce` is called only when
    /// the outcome asks for input, to make the issued state unique (draw it from a CSPRNG; a
    /// failed draw may give zeros, the round number still changes every state of one call).
    pub fn finish(
        self,
        outcome: SyncOutcome,
        nonce: impl FnOnce() -> [u8; NONCE_BYTES],
    ) -> SyncResponse {
        let round = self.next_round();
        let SyncExchange {
            request,
            issuer,
            server_meta,
            streamed,
        } = self;
        let id = &request.id;
        let (status, message) = match outcome {
            SyncOutcome::Complete(result) => (
                200,
                jsonrpc::result(id, &jsonrpc::with_server_meta(&server_meta, result)),
            ),
            SyncOutcome::Error(error) => (
                http_status_for_code(error.code),
                jsonrpc::error(Some(id), &error),
            ),
            SyncOutcome::InputRequired(asked) => {
                let binding = Binding {
                    method: request.method,
                    name: &request.name,
                    arguments: &request.arguments,
                    scope: &request.scope,
                };
                let state = RequestState {
                    round,
                    answers: request.answers.unwrap_or_default(),
                    asked: asked.clone(),
                };
                let request_state = issue(
                    &issuer.key,
                    binding,
                    state,
                    issuer.now,
                    issuer.lifetime_ms,
                    nonce(),
                );
                let result = InputRequiredResult {
                    result_type: ResultType::InputRequired,
                    input_requests: asked,
                    request_state,
                    meta: JsonObject::clone(&server_meta),
                };
                (200, jsonrpc::result(&request.id, &result))
            }
        };
        SyncResponse {
            status,
            message,
            streamed,
        }
    }
}
