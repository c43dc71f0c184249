//! `subscriptions/listen` filters (`notifications`), the acknowledgement and the closing
//! response (MCP 2026-07-28 "Subscriptions"; SEP-2663 "Task Status Notifications").
//!
//! Parsing order, each failure -32602 unless said otherwise:
//!
//! 1. `notifications` must be an object;
//! 2. the core keys must have their schema types (`SubscriptionFilter`): the three
//!    `*ListChanged` flags booleans, `resourceSubscriptions` an array of strings, whether or not
//!    the server honours them; unknown keys are ignored;
//! 3. `taskIds` needs the Tasks declaration (-32021), then must be an array of at most
//!    [`MAX_TASK_IDS`] task ids, each a non-empty string of at most 256 bytes; duplicates are
//!    dropped (first occurrence kept).
//!
//! Which of the requested ids the caller may see, and whether tool-list changes are announced,
//! is the server's to decide; the acknowledgement ([`acknowledgement`]) echoes only what is
//! honoured.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::McpError;
use crate::id::TaskId;
use crate::protocol::META_SUBSCRIPTION_ID;
use crate::JsonObject;

/// The most task ids one listen request may name.
pub const MAX_TASK_IDS: usize = 100;

/// Which list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListKind {
    /// `tools/list`: `notifications/tools/list_changed`, filter key `toolsListChanged`.
    Tools,
    /// `prompts/list`: `notifications/prompts/list_changed`, filter key `promptsListChanged`.
    Prompts,
    /// `resources/list`: `notifications/resources/list_changed`, filter key
    /// `resourcesListChanged`.
    Resources,
}

impl ListKind {
    /// Every kind.
    pub const ALL: [ListKind; 3] = [ListKind::Tools, ListKind::Prompts, ListKind::Resources];

    /// The notification method.
    pub fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
            ListKind::Resources => "notifications/resources/list_changed",
        }
    }

    /// The `subscriptions/listen` filter key that asks for it.
    pub fn filter_key(self) -> &'static str {
        match self {
            ListKind::Tools => "toolsListChanged",
            ListKind::Prompts => "promptsListChanged",
            ListKind::Resources => "resourcesListChanged",
        }
    }

    /// The `server/discover` capability whose `listChanged` it needs.
    pub fn capability(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Prompts => "prompts",
            ListKind::Resources => "resources",
        }
    }
}

/// A validated `notifications` filter.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListenFilter {
    /// `taskIds`, deduplicated in request order; `None` when absent.
    pub task_ids: Option<Vec<TaskId>>,
    /// `toolsListChanged: true`.
    pub tools_list_changed: bool,
    /// `promptsListChanged: true`.
    pub prompts_list_changed: bool,
    /// `resourcesListChanged: true`.
    pub resources_list_changed: bool,
    /// `resourceSubscriptions`: the URIs whose `notifications/resources/updated` the client
    /// wants, deduplicated in request order (at most [`MAX_RESOURCE_SUBSCRIPTIONS`]).
    pub resource_subscriptions: Vec<String>,
}

/// The most URIs one listen request may subscribe to.
pub const MAX_RESOURCE_SUBSCRIPTIONS: usize = 100;

impl ListenFilter {
    /// Whether the filter asks for changes of `kind`'s list.
    pub fn wants(&self, kind: ListKind) -> bool {
        match kind {
            ListKind::Tools => self.tools_list_changed,
            ListKind::Prompts => self.prompts_list_changed,
            ListKind::Resources => self.resources_list_changed,
        }
    }

    /// Reads `params.notifications` of a `subscriptions/listen` request.
    ///
    /// # Errors
    /// As in the module's parsing order: -32602 with a fixed message, or -32021 naming the
    /// Tasks extension for `taskIds` without the declaration.
    pub fn parse(params: &Value, tasks_declared: bool) -> Result<Self, McpError> {
        let filter = params
            .get("notifications")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                McpError::invalid_params("subscriptions/listen requires a notifications object")
            })?;
        check_filter_types(filter)?;
        let task_ids = match filter.get("taskIds") {
            None => None,
            Some(_) if !tasks_declared => return Err(McpError::missing_tasks_capability()),
            Some(ids) => Some(parse_task_ids(ids)?),
        };
        let flag = |kind: ListKind| filter.get(kind.filter_key()) == Some(&Value::Bool(true));
        let mut resource_subscriptions: Vec<String> = Vec::new();
        for uri in filter
            .get("resourceSubscriptions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if uri.is_empty() || uri.len() > crate::catalog::MAX_URI_BYTES {
                return Err(McpError::invalid_params(
                    "resourceSubscriptions must hold URIs of 1 to 2048 bytes",
                ));
            }
            if !resource_subscriptions.iter().any(|known| known == uri) {
                resource_subscriptions.push(uri.to_owned());
            }
        }
        if resource_subscriptions.len() > MAX_RESOURCE_SUBSCRIPTIONS {
            return Err(McpError::invalid_params(
                "resourceSubscriptions lists more than 100 URIs",
            ));
        }
        Ok(ListenFilter {
            task_ids,
            tools_list_changed: flag(ListKind::Tools),
            prompts_list_changed: flag(ListKind::Prompts),
            resources_list_changed: flag(ListKind::Resources),
            resource_subscriptions,
        })
    }
}

fn check_filter_types(filter: &JsonObject) -> Result<(), McpError> {
    for kind in ListKind::ALL {
        if filter
            .get(kind.filter_key())
            .is_some_and(|v| !v.is_boolean())
        {
            return Err(McpError::invalid_params(
                "notifications list-changed flags must be booleans",
            ));
        }
    }
    if let Some(uris) = filter.get("resourceSubscriptions") {
        if !uris
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string))
        {
            return Err(McpError::invalid_params(
                "resourceSubscriptions must be an array of strings",
            ));
        }
    }
    Ok(())
}

fn parse_task_ids(value: &Value) -> Result<Vec<TaskId>, McpError> {
    let invalid = || McpError::invalid_params("taskIds must be an array of task ids");
    let ids = value.as_array().ok_or_else(invalid)?;
    if ids.len() > MAX_TASK_IDS {
        return Err(McpError::invalid_params("taskIds lists more than 100 ids"));
    }
    let mut unique: Vec<TaskId> = Vec::with_capacity(ids.len());
    for id in ids {
        let id = id
            .as_str()
            .and_then(|s| TaskId::parse(s).ok())
            .ok_or_else(invalid)?;
        if !unique.contains(&id) {
            unique.push(id);
        }
    }
    Ok(unique)
}

/// The `_meta` of a listen stream's messages: the id of the `subscriptions/listen` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionMeta {
    /// `io.modelcontextprotocol/subscriptionId`, with the request id's JSON type.
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub subscription_id: Value,
}

/// What a listen stream announces besides task states: the lists whose changes it sends and
/// the resources whose updates it sends (what the client asked for and the server offers).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Announces {
    /// `true` when tool-list changes will be announced; left out otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_list_changed: bool,
    /// `true` when prompt-list changes will be announced; left out otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prompts_list_changed: bool,
    /// `true` when resource-list changes will be announced; left out otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resources_list_changed: bool,
    /// The URIs whose `notifications/resources/updated` will be sent; left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_subscriptions: Vec<String>,
}

impl Announces {
    /// Tool-list changes only, when `tools_list_changed`.
    pub fn tools(tools_list_changed: bool) -> Self {
        Announces {
            tools_list_changed,
            ..Announces::default()
        }
    }

    /// What `filter` asks for, less what the server does not offer: list changes of the kinds
    /// `lists` accepts, resource updates when `subscribe` (the `resources.subscribe`
    /// capability).
    pub fn honour(
        filter: &ListenFilter,
        lists: impl Fn(ListKind) -> bool,
        subscribe: bool,
    ) -> Self {
        let kind = |k: ListKind| filter.wants(k) && lists(k);
        Announces {
            tools_list_changed: kind(ListKind::Tools),
            prompts_list_changed: kind(ListKind::Prompts),
            resources_list_changed: kind(ListKind::Resources),
            resource_subscriptions: if subscribe {
                filter.resource_subscriptions.clone()
            } else {
                Vec::new()
            },
        }
    }

    /// Whether changes of `kind`'s list are announced.
    pub fn list(&self, kind: ListKind) -> bool {
        match kind {
            ListKind::Tools => self.tools_list_changed,
            ListKind::Prompts => self.prompts_list_changed,
            ListKind::Resources => self.resources_list_changed,
        }
    }

    /// Whether any list change is announced.
    pub fn any_list(&self) -> bool {
        ListKind::ALL.into_iter().any(|kind| self.list(kind))
    }
}

/// What a listen stream honours, echoed in its acknowledgement.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Honoured {
    /// The requested task ids the caller may see; left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_ids: Vec<TaskId>,
    /// The list changes and resource updates announced.
    #[serde(flatten)]
    pub announces: Announces,
}

/// The params of `notifications/subscriptions/acknowledged`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Acknowledgement {
    /// The subscription id.
    #[serde(rename = "_meta")]
    pub meta: SubscriptionMeta,
    /// Only what is honoured.
    pub notifications: Honoured,
}

/// The acknowledgement of the listen request `subscription_id`: the subscription id in
/// `_meta` and only what is honoured: each `*ListChanged: true` announced,
/// `resourceSubscriptions` when any is honoured, `taskIds` when any is left.
pub fn acknowledgement(
    subscription_id: &Value,
    task_ids: &[TaskId],
    announces: &Announces,
) -> Acknowledgement {
    Acknowledgement {
        meta: SubscriptionMeta {
            subscription_id: subscription_id.clone(),
        },
        notifications: Honoured {
            task_ids: task_ids.to_vec(),
            announces: announces.clone(),
        },
    }
}

/// The params of `notifications/resources/updated` for `uri` on a listen stream: the URI and
/// the subscription id in `_meta` (MCP 2026-07-28 resources, "Subscriptions").
pub fn resource_updated_params(subscription_id: &Value, uri: &str) -> Value {
    json!({"uri": uri, "_meta": SubscriptionMeta { subscription_id: subscription_id.clone() }})
}

/// The params of a list-change notification on a listen stream: the subscription id in
/// `_meta`.
pub fn list_changed_params(subscription_id: &Value) -> Value {
    json!({"_meta": SubscriptionMeta { subscription_id: subscription_id.clone() }})
}

/// The graceful-closure result of a listen stream the server ends (on shutdown):
/// `{"resultType": "complete", "_meta": {subscriptionId}}`, the server's `_meta` to be added.
pub fn closing(subscription_id: &Value) -> JsonObject {
    let mut meta = JsonObject::new();
    meta.insert(META_SUBSCRIPTION_ID.into(), subscription_id.clone());
    let mut result = JsonObject::new();
    result.insert("resultType".into(), Value::from("complete"));
    result.insert("_meta".into(), Value::Object(meta));
    result
}
