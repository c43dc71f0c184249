//! Running a tool synchronously (no task), turning its input requests into MRTR rounds.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;
use serde_json::Value;
use tasks_core::{JsonObject, JsonRpcError};
use tokio_util::sync::CancellationToken;

use crate::context::{CallInputs, InputMode, SyncInput, ToolContext, ToolError};
use crate::error::MESSAGE_PANIC;
use crate::notify::Notifier;
use crate::registry::{Tool, ToolHandler};
use crate::worker::MESSAGE_NOT_OBJECT;

/// How a synchronous call ended (defined in tasks-core, whose exchange turns it into the
/// response).
pub use tasks_core::exchange::SyncOutcome;

fn internal(message: &str) -> SyncOutcome {
    SyncOutcome::Error(JsonRpcError::internal(message))
}

/// What a synchronous `tools/call` hands its tool.
#[derive(Debug, Clone, Default)]
pub struct SyncCall {
    /// The tool arguments (`{}` when the request had none).
    pub arguments: JsonObject,
    /// The MRTR answers so far (earlier rounds and this request's `inputResponses`), if any.
    pub input_responses: Option<JsonObject>,
    /// The request's `clientCapabilities`.
    pub client_capabilities: JsonObject,
    /// Where progress and log notifications go, when the request opted into either.
    pub notifier: Option<Notifier>,
    /// Fires when the client goes away.
    pub cancel: CancellationToken,
    /// The caller ([`ToolContext::principal`]), when the request was authenticated.
    pub principal: Option<crate::scope::Principal>,
}

impl SyncCall {
    /// A call with `arguments` and nothing else.
    pub fn new(arguments: JsonObject) -> Self {
        SyncCall {
            arguments,
            ..SyncCall::default()
        }
    }

    /// Sets the MRTR answers.
    pub fn with_input_responses(mut self, responses: Option<JsonObject>) -> Self {
        self.input_responses = responses;
        self
    }

    /// Sets the declared client capabilities.
    pub fn with_client_capabilities(mut self, capabilities: JsonObject) -> Self {
        self.client_capabilities = capabilities;
        self
    }

    /// Sets the caller ([`SyncCall::principal`]); the empty principal (the shared scope) is
    /// none.
    pub fn with_principal(mut self, principal: Option<crate::scope::Principal>) -> Self {
        self.principal = principal.filter(|principal| !principal.as_str().is_empty());
        self
    }

    /// Sets the notification sink.
    pub fn with_notifier(mut self, notifier: Option<Notifier>) -> Self {
        self.notifier = notifier;
        self
    }

    /// Sets the cancellation token.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }
}

/// Runs `tool` once, now, for a synchronous `tools/call`.
///
/// `call.input_responses` are the MRTR answers; [`ToolContext::input`] returns them by key and
/// records every request it cannot answer. A panic, or a result that is not a JSON object, is
/// -32603 with a generic message (the panic text is never returned).
pub async fn run_sync(tool: &Tool, call: SyncCall) -> SyncOutcome {
    let run = Handler {
        name: tool.name(),
        handler: tool.handler().as_ref(),
        forms: &tool.forms,
        state: &tool.state,
    };
    match run.run(call).await {
        Ok(result) => SyncOutcome::Complete(tasks_core::wire::complete(result)),
        Err(HandlerEnd::Tool(message)) => SyncOutcome::Complete(tasks_core::wire::complete(
            crate::result::error_object(message),
        )),
        Err(HandlerEnd::Outcome(outcome)) => outcome,
    }
}

/// A handler run synchronously: a tool's, or a prompt's ([`crate::catalog::Prompt`]).
pub(crate) struct Handler<'a> {
    pub(crate) name: &'a str,
    pub(crate) handler: &'a dyn ToolHandler,
    pub(crate) forms: &'a Arc<crate::form::Forms>,
    pub(crate) state: &'a crate::state::ToolState,
}

/// How a handler run ended other than with a JSON object.
pub(crate) enum HandlerEnd {
    /// `ToolError::Tool(message)`: the handler's own failure, for its host to frame.
    Tool(String),
    /// Anything else, as the final outcome: an error, or the input rounds it asked for.
    Outcome(SyncOutcome),
}

impl Handler<'_> {
    /// Runs the handler once: its result object, or how it ended.
    pub(crate) async fn run(&self, call: SyncCall) -> Result<JsonObject, HandlerEnd> {
        let asked = Arc::new(SyncInput::default());
        let ctx = ToolContext {
            inputs: CallInputs::Sync {
                arguments: call.arguments,
                input_responses: call.input_responses,
                client_capabilities: call.client_capabilities,
            },
            notifier: call.notifier,
            cancel: call.cancel,
            mode: InputMode::Sync(asked.clone()),
            forms: self.forms.clone(),
            state: self.state.clone(),
            principal: call.principal,
        };
        let end = |outcome| Err(HandlerEnd::Outcome(outcome));
        match AssertUnwindSafe(self.handler.call(ctx))
            .catch_unwind()
            .await
        {
            Err(_panic) => {
                tracing::warn!(
                    handler = self.name,
                    "handler panicked in a synchronous call"
                );
                end(internal(MESSAGE_PANIC))
            }
            Ok(Ok(Value::Object(result))) => Ok(result),
            Ok(Ok(_)) => end(internal(MESSAGE_NOT_OBJECT)),
            Ok(Err(ToolError::Tool(message))) => Err(HandlerEnd::Tool(message)),
            Ok(Err(ToolError::Rpc(error))) => end(SyncOutcome::Error(error)),
            Ok(Err(ToolError::InputRequired)) => {
                let asked = std::mem::take(&mut *crate::lock::lock(&asked.asked));
                if asked.is_empty() {
                    end(internal("Tool asked for input without an input request"))
                } else {
                    end(SyncOutcome::InputRequired(asked))
                }
            }
            Ok(Err(ToolError::Cancelled)) => end(internal("Request cancelled")),
        }
    }
}
