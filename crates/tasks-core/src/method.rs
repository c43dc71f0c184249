//! The methods this server serves, in one place.
//!
//! Every other method is -32601 (HTTP 404): the removed `tasks/result` and `tasks/list`, the
//! 2025-era `initialize`, `ping` and `logging/setLevel` (MCP 2026-07-28 streamable-http
//! "Protocol Version Header": an unimplemented method is 404 with -32601; step 10 of
//! [`crate::admission`]). The prompts, resources and completion methods are -32601 too on a
//! server that offers none of that [`Feature`] (the planner asks [`crate::plan::ServerView`]);
//! so are the Skills extension's methods on a server that serves no skill.

/// A served method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `server/discover`.
    ServerDiscover,
    /// `tools/list`.
    ToolsList,
    /// `tools/call`.
    ToolsCall,
    /// `tasks/get`.
    TasksGet,
    /// `tasks/update`.
    TasksUpdate,
    /// `tasks/cancel`.
    TasksCancel,
    /// `subscriptions/listen`.
    SubscriptionsListen,
    /// `prompts/list`.
    PromptsList,
    /// `prompts/get`.
    PromptsGet,
    /// `resources/list`.
    ResourcesList,
    /// `resources/templates/list`.
    ResourcesTemplatesList,
    /// `resources/read`.
    ResourcesRead,
    /// `completion/complete`.
    CompletionComplete,
    /// `skills/list` (Skills extension).
    SkillsList,
    /// `skills/get` (Skills extension).
    SkillsGet,
    /// `resources/directory/read` (Skills extension, `directoryRead`).
    ResourcesDirectoryRead,
}

/// A server feature beside tools whose methods exist only on a server that offers it
/// (MCP 2026-07-28 server features: prompts, resources; utilities: completion).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// `prompts/list`, `prompts/get`; capability `prompts`.
    Prompts,
    /// `resources/list`, `resources/templates/list`, `resources/read`; capability `resources`.
    Resources,
    /// `completion/complete`; capability `completions`.
    Completions,
    /// `skills/list`, `skills/get`, `resources/directory/read`; the Skills extension
    /// (`io.modelcontextprotocol/skills` with `directoryRead: true`, [`crate::skill`]).
    Skills,
}

impl Method {
    /// Every served method.
    pub const ALL: [Method; 16] = [
        Method::ServerDiscover,
        Method::ToolsList,
        Method::ToolsCall,
        Method::TasksGet,
        Method::TasksUpdate,
        Method::TasksCancel,
        Method::SubscriptionsListen,
        Method::PromptsList,
        Method::PromptsGet,
        Method::ResourcesList,
        Method::ResourcesTemplatesList,
        Method::ResourcesRead,
        Method::CompletionComplete,
        Method::SkillsList,
        Method::SkillsGet,
        Method::ResourcesDirectoryRead,
    ];

    /// The wire name, e.g. `"tasks/get"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::ServerDiscover => "server/discover",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::TasksGet => "tasks/get",
            Method::TasksUpdate => "tasks/update",
            Method::TasksCancel => "tasks/cancel",
            Method::SubscriptionsListen => "subscriptions/listen",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::ResourcesList => "resources/list",
            Method::ResourcesTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::CompletionComplete => "completion/complete",
            Method::SkillsList => "skills/list",
            Method::SkillsGet => "skills/get",
            Method::ResourcesDirectoryRead => "resources/directory/read",
        }
    }

    /// The feature this method belongs to, for the methods served only with one.
    pub fn feature(self) -> Option<Feature> {
        match self {
            Method::PromptsList | Method::PromptsGet => Some(Feature::Prompts),
            Method::ResourcesList | Method::ResourcesTemplatesList | Method::ResourcesRead => {
                Some(Feature::Resources)
            }
            Method::CompletionComplete => Some(Feature::Completions),
            Method::SkillsList | Method::SkillsGet | Method::ResourcesDirectoryRead => {
                Some(Feature::Skills)
            }
            _ => None,
        }
    }

    /// The served method named `name` (exact, case-sensitive), if any.
    pub fn parse(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// Whether this is one of the task methods that address one task by `params.taskId`
    /// (`tasks/get`, `tasks/update`, `tasks/cancel`).
    pub fn is_task_method(self) -> bool {
        matches!(
            self,
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel
        )
    }

    /// The params field `Mcp-Name` mirrors (MCP 2026-07-28 streamable-http "Standard Request
    /// Headers"; SEP-2663 "Streamable HTTP: Routing Headers"): `name` for
    /// `tools/call` and `prompts/get`, `uri` for `resources/read`, `taskId` for the task
    /// methods; `None` for methods without `Mcp-Name`.
    pub fn name_field(self) -> Option<&'static str> {
        match self {
            Method::ToolsCall | Method::PromptsGet => Some("name"),
            Method::ResourcesRead => Some("uri"),
            m if m.is_task_method() => Some("taskId"),
            _ => None,
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_nothing_else_is_served() {
        for method in Method::ALL {
            assert_eq!(Method::parse(method.as_str()), Some(method));
        }
        for other in [
            "initialize",
            "ping",
            "tasks/result",
            "tasks/list",
            "TASKS/GET",
            "tasks/get ",
        ] {
            assert_eq!(Method::parse(other), None, "{other}");
        }
        let named: Vec<_> = Method::ALL
            .into_iter()
            .filter_map(|m| m.name_field().map(|f| (m, f)))
            .collect();
        assert_eq!(
            named,
            [
                (Method::ToolsCall, "name"),
                (Method::TasksGet, "taskId"),
                (Method::TasksUpdate, "taskId"),
                (Method::TasksCancel, "taskId"),
                (Method::PromptsGet, "name"),
                (Method::ResourcesRead, "uri"),
            ]
        );
    }
}
