//! Answering the server's input requests: the [`InputHandler`] trait and the dispatch from a
//! bare `InputRequest` to the handler method for its kind.
//!
//! The same handler answers an MRTR `input_required` result (by retrying the call with
//! `inputResponses`) and a task in `input_required` (with `tasks/update`). Only the
//! capabilities a handler names ([`InputHandler::capabilities`]) are declared to the server, so
//! a server never asks for input this client cannot give (it refuses the call with -32021
//! instead). Sources: MCP 2026-07-28 MRTR
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/utilities/mrtr>), elicitation
//! (<https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation>), SEP-2663
//! "Input Requests".

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::Value;
use tasks_core::input::{
    ClientCapability, ElicitAnswer, InputKind, InputRequest, InputResponse, Root, SamplingAnswer,
};
use tasks_core::JsonObject;

use crate::error::ClientError;

/// An `elicitation/create` request.
#[derive(Debug, Clone, PartialEq)]
pub struct Elicitation {
    /// What to ask the user.
    pub message: String,
    /// A form, or a URL to visit.
    pub mode: ElicitationMode,
}

/// How the user answers an [`Elicitation`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitationMode {
    /// Fill in a form: `requestedSchema` is a flat JSON Schema object of strings, numbers,
    /// booleans and enums; an [`ElicitAnswer::Accept`] must carry content matching it.
    Form {
        /// The `requestedSchema`.
        requested_schema: JsonObject,
    },
    /// Go to `url` (out of band); an [`ElicitAnswer::Accept`] carries no content.
    Url {
        /// The URL to open.
        url: String,
        /// The server's id for this elicitation, if given.
        elicitation_id: Option<String>,
    },
}

impl Elicitation {
    fn read(params: Option<&JsonObject>) -> Self {
        let text = |name: &str| {
            params
                .and_then(|p| p.get(name))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let mode = match text("mode").as_deref() {
            Some("url") => ElicitationMode::Url {
                url: text("url").unwrap_or_default(),
                elicitation_id: text("elicitationId"),
            },
            _ => ElicitationMode::Form {
                requested_schema: params
                    .and_then(|p| p.get("requestedSchema"))
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default(),
            },
        };
        Elicitation {
            message: text("message").unwrap_or_default(),
            mode,
        }
    }
}

/// Answers the server's input requests. Implement the methods for the kinds you name in
/// [`InputHandler::capabilities`]; the others are never called (their defaults refuse with
/// [`ClientError::NoHandler`]).
///
/// `key` is the server's key of the request in `inputRequests`, stable for one call.
#[async_trait]
pub trait InputHandler: Send + Sync + 'static {
    /// The capabilities to declare: [`ClientCapability::ElicitationForm`],
    /// [`ClientCapability::ElicitationUrl`], [`ClientCapability::Sampling`] (and its
    /// `SamplingTools`/`SamplingContext`), [`ClientCapability::Roots`]. The Tasks extension is
    /// always declared.
    fn capabilities(&self) -> Vec<ClientCapability>;

    /// Answers an `elicitation/create`.
    async fn elicit(&self, key: &str, request: Elicitation) -> Result<ElicitAnswer, ClientError> {
        let _ = (key, request);
        Err(ClientError::NoHandler {
            method: tasks_core::input::METHOD_ELICIT.into(),
        })
    }

    /// Answers a `sampling/createMessage` (`params` is its `CreateMessageRequestParams`).
    async fn sample(&self, key: &str, params: JsonObject) -> Result<SamplingAnswer, ClientError> {
        let _ = (key, params);
        Err(ClientError::NoHandler {
            method: tasks_core::input::METHOD_SAMPLE.into(),
        })
    }

    /// Answers a `roots/list`.
    async fn list_roots(&self, key: &str) -> Result<Vec<Root>, ClientError> {
        let _ = key;
        Err(ClientError::NoHandler {
            method: tasks_core::input::METHOD_LIST_ROOTS.into(),
        })
    }
}

/// The `clientCapabilities` of every request: the handler's, plus the Tasks extension.
pub(crate) fn declared(handler: Option<&dyn InputHandler>) -> JsonObject {
    let mut capabilities = handler.map(|h| h.capabilities()).unwrap_or_default();
    capabilities.push(ClientCapability::Tasks);
    tasks_core::input::declare(capabilities)
}

/// Answers every request in key order, one at a time: the `inputResponses` object.
///
/// # Errors
/// [`ClientError::NoHandler`] when there is no handler for a request, [`ClientError::Malformed`]
/// for a malformed one,
/// the handler's own error, or [`ClientError::Input`] when its answer does not fit the request
/// (e.g. form content that does not match `requestedSchema`).
pub(crate) async fn answer_all(
    handler: Option<&dyn InputHandler>,
    requests: &BTreeMap<String, InputRequest>,
) -> Result<JsonObject, ClientError> {
    let mut responses = JsonObject::new();
    for (key, request) in requests {
        let no_handler = || ClientError::NoHandler {
            method: request.method.clone(),
        };
        let handler = handler.ok_or_else(no_handler)?;
        let kind = request.kind().map_err(|error| {
            ClientError::malformed(format!("the input request {key:?} is malformed: {error}"))
        })?;
        let response = match kind {
            InputKind::ElicitForm | InputKind::ElicitUrl => InputResponse::Elicit(
                handler
                    .elicit(key, Elicitation::read(request.params.as_ref()))
                    .await?,
            ),
            InputKind::Sampling => InputResponse::Sampling(
                handler
                    .sample(key, request.params.clone().unwrap_or_default())
                    .await?,
            ),
            InputKind::Roots => InputResponse::Roots(handler.list_roots(key).await?),
        };
        let value = response.to_value();
        request
            .check_response(&value)
            .map_err(|error| ClientError::Input(format!("answer to {key:?}: {error}")))?;
        responses.insert(key.clone(), value);
    }
    Ok(responses)
}
