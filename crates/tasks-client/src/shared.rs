//! The state every handle of one endpoint shares: the connection, the input handler, the
//! declared capabilities and the cached tool list; one request or stream at a time.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{json, Value};
use tasks_core::plan::ParamHeader;
use tasks_core::wire::DetailedTask;
use tasks_core::{JsonObject, TaskId};

use crate::error::ClientError;
use crate::handler::InputHandler;
use crate::transport::{Connection, MessageStream, Request};

/// A tool as far as calls need it: its `Mcp-Param-*` headers.
pub(crate) struct KnownTool {
    pub(crate) name: String,
    pub(crate) headers: Vec<ParamHeader>,
}

/// The tool list, once fetched.
pub(crate) type Tools = Option<Arc<Vec<KnownTool>>>;

pub(crate) struct Shared {
    pub(crate) connection: Connection,
    pub(crate) handler: Option<Arc<dyn InputHandler>>,
    pub(crate) capabilities: JsonObject,
    pub(crate) tools: Mutex<Tools>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.url())
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

impl Shared {
    pub(crate) fn url(&self) -> &str {
        self.connection.url()
    }

    pub(crate) fn handler(&self) -> Option<&dyn InputHandler> {
        self.handler.as_deref()
    }

    pub(crate) fn lock_tools(&self) -> MutexGuard<'_, Tools> {
        self.tools.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends one request and returns its result object.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: JsonObject,
        param_headers: Vec<(String, String)>,
    ) -> Result<JsonObject, ClientError> {
        self.connection
            .call(Request {
                method,
                params,
                capabilities: &self.capabilities,
                param_headers,
            })
            .await
    }

    /// Sends one request whose answer is a stream.
    pub(crate) async fn stream(
        &self,
        method: &str,
        params: JsonObject,
    ) -> Result<MessageStream, ClientError> {
        self.connection
            .stream(Request {
                method,
                params,
                capabilities: &self.capabilities,
                param_headers: Vec::new(),
            })
            .await
    }

    /// `tasks/get` of `task_id`.
    pub(crate) async fn get_task(&self, task_id: &TaskId) -> Result<DetailedTask, ClientError> {
        let result = self
            .request("tasks/get", task_params(task_id), Vec::new())
            .await?;
        let task: DetailedTask = serde_json::from_value(Value::Object(result))
            .map_err(|_| ClientError::malformed("not a DetailedTask"))?;
        if &task.task.task_id != task_id {
            return Err(ClientError::malformed(
                "tasks/get answered about another task",
            ));
        }
        Ok(task)
    }
}

/// `{"taskId": …}`.
pub(crate) fn task_params(task_id: &TaskId) -> JsonObject {
    let mut params = JsonObject::new();
    params.insert("taskId".into(), json!(task_id));
    params
}
