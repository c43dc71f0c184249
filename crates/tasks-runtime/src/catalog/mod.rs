//! The server features beside tools: prompts, resources (static and templated) and the
//! completions of their arguments, as a [`Catalog`] the runtime serves
//! ([`TaskRuntime::catalog`](crate::TaskRuntime::catalog)).
//!
//! A catalog holds no task state: any node serves any request of it, and nothing of it is
//! stored. Its items are listed in registration order (stable across requests), a page of
//! [`tasks_core::catalog::DEFAULT_PAGE_SIZE`] items at a time. Register and remove items at run
//! time through the runtime ([`TaskRuntime::register_prompt`](crate::TaskRuntime::register_prompt)
//! and its siblings), which announces the change on the listen streams that asked for it.
//!
//! | request | answer |
//! |---|---|
//! | `prompts/list`, `resources/list`, `resources/templates/list` | a page and `nextCursor` when more follow; a cursor not issued is -32602 `Invalid cursor` |
//! | `resources/read` | the static resource of that URI, else the first template covering it; neither, or a reader answering [`ReadError::NotFound`] or no contents: -32602 `Resource not found` with `data.uri` |
//! | `prompts/get` | -32602 `Unknown prompt`; then the arguments checked ([`Prompt::check_arguments`]); then the handler's messages, or its input round |
//! | `completion/complete` | -32602 for an unknown prompt or template, or an argument it does not have; an argument without a completer has no suggestions |
//! | `skills/list` | a page of skill entries ([`Skill::to_entry`]) |
//! | `skills/get` | the entry of the skill whose `SKILL.md` is `uri`, else -32602 `Skill not found` with `data.uri` |
//! | `resources/directory/read` | a page of the direct children of a directory of the skills ([`tasks_core::skill::children`]): files with their `mimeType` and `size`, subdirectories as `inode/directory`; else -32602 `Not a directory resource` with `data.uri` |
//!
//! Skills are resources too: `resources/list` lists each skill's `SKILL.md` after the static
//! resources (named and described by its frontmatter), and `resources/read` reads every file of
//! every skill (a static resource of the same URI first, a template last).

mod completion;
mod prompt;
mod resource;
mod skill;
mod skill_dir;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use serde_json::{json, Value};
use tasks_core::catalog::{page, DEFAULT_PAGE_SIZE};
use tasks_core::catalog::{CatalogRequest, CompletionRef, CompletionRequest};
use tasks_core::exchange::SyncOutcome;
use tasks_core::skill::{Child, DIRECTORY_MIME_TYPE};
use tasks_core::{Feature, JsonObject, JsonRpcError, McpError};

pub use completion::{Completer, Completion};
pub use prompt::{Prompt, PromptArgument, PromptMessage, PromptResult, Role};
pub use resource::{
    Body, ReadError, ReadFuture, ReadRequest, Resource, ResourceContents, ResourceTemplate,
};
pub use skill::Skill;
use skill::SkillFile;
pub use skill_dir::SkillDirError;
pub use tasks_core::skill::SkillError;

use crate::scope::Principal;
use crate::sync::{Handler, HandlerEnd, SyncCall};

/// The prompts, resources and resource templates a server offers.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    prompts: Vec<Arc<Prompt>>,
    resources: Vec<Arc<Resource>>,
    templates: Vec<Arc<ResourceTemplate>>,
    skills: Vec<Arc<Skill>>,
    /// Every file of every skill by URI, for reads and directory listings in O(log n) (the
    /// first skill registered with a URI serves it, when nested skills share files).
    skill_files: BTreeMap<String, Arc<SkillFile>>,
    page_size: Option<usize>,
}

/// Which list of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogList {
    /// `prompts/list`: `{"prompts": [...]}`.
    Prompts,
    /// `resources/list`: `{"resources": [...]}`.
    Resources,
    /// `resources/templates/list`: `{"resourceTemplates": [...]}`.
    Templates,
    /// `skills/list`: `{"skills": [...]}`.
    Skills,
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Catalog::default()
    }

    /// Sets how many items one list page holds (at least 1; default
    /// [`DEFAULT_PAGE_SIZE`]).
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = Some(page_size.max(1));
        self
    }

    /// Adds `prompt`, replacing one of the same name in place.
    pub fn add_prompt(&mut self, prompt: Prompt) {
        replace_or_push(&mut self.prompts, Arc::new(prompt), |a, b| {
            a.name() == b.name()
        });
    }

    /// Adds `resource`, replacing one of the same URI in place.
    pub fn add_resource(&mut self, resource: Resource) {
        replace_or_push(&mut self.resources, Arc::new(resource), |a, b| {
            a.uri() == b.uri()
        });
    }

    /// Adds `template`, replacing one of the same template text in place.
    pub fn add_template(&mut self, template: ResourceTemplate) {
        replace_or_push(&mut self.templates, Arc::new(template), |a, b| {
            a.uri_template() == b.uri_template()
        });
    }

    /// Adds `skill`, replacing one of the same URI in place.
    pub fn add_skill(&mut self, skill: Skill) {
        replace_or_push(&mut self.skills, Arc::new(skill), |a, b| a.uri() == b.uri());
        self.index_skill_files();
    }

    /// Removes the skill whose `SKILL.md` is `uri`; whether it was there.
    pub fn remove_skill(&mut self, uri: &str) -> bool {
        let removed = remove(&mut self.skills, |s| s.uri() == uri);
        self.index_skill_files();
        removed
    }

    fn index_skill_files(&mut self) {
        self.skill_files.clear();
        for file in self.skills.iter().flat_map(|s| s.files()) {
            self.skill_files
                .entry(file.uri.clone())
                .or_insert_with(|| file.clone());
        }
    }

    /// Removes prompt `name`; whether it was there.
    pub fn remove_prompt(&mut self, name: &str) -> bool {
        remove(&mut self.prompts, |p| p.name() == name)
    }

    /// Removes the resource of `uri`; whether it was there.
    pub fn remove_resource(&mut self, uri: &str) -> bool {
        remove(&mut self.resources, |r| r.uri() == uri)
    }

    /// Removes the template `uri_template`; whether it was there.
    pub fn remove_template(&mut self, uri_template: &str) -> bool {
        remove(&mut self.templates, |t| t.uri_template() == uri_template)
    }

    /// Whether the server offers `feature`: prompts when it has one, resources when it has a
    /// resource, a template or a skill (whose files are resources), completion when it has a
    /// prompt or a template (whose arguments a client may complete), the Skills extension when
    /// it has a skill.
    pub fn offers(&self, feature: Feature) -> bool {
        match feature {
            Feature::Prompts => !self.prompts.is_empty(),
            Feature::Resources => {
                !self.resources.is_empty() || !self.templates.is_empty() || !self.skills.is_empty()
            }
            Feature::Completions => !self.prompts.is_empty() || !self.templates.is_empty(),
            Feature::Skills => !self.skills.is_empty(),
        }
    }

    /// Whether the server has list `kind`, so that its changes are announced: its tools
    /// always; its prompts and resources when it offers them.
    pub fn has_list(&self, kind: tasks_core::exchange::ListKind) -> bool {
        use tasks_core::exchange::ListKind;
        match kind {
            ListKind::Tools => true,
            ListKind::Prompts => self.offers(Feature::Prompts),
            ListKind::Resources => self.offers(Feature::Resources),
        }
    }

    /// Prompt `name`.
    pub fn prompt(&self, name: &str) -> Option<&Arc<Prompt>> {
        self.prompts.iter().find(|p| p.name() == name)
    }

    /// One page of `list` from `cursor`: `{"<items>": [...], "nextCursor"?}`.
    ///
    /// # Errors
    /// -32602 `Invalid cursor` ([`tasks_core::catalog::page`]).
    pub fn list(&self, list: CatalogList, cursor: Option<&str>) -> Result<JsonObject, McpError> {
        let size = self.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
        let len = match list {
            CatalogList::Prompts => self.prompts.len(),
            CatalogList::Resources => self.resources.len() + self.skills.len(),
            CatalogList::Templates => self.templates.len(),
            CatalogList::Skills => self.skills.len(),
        };
        let page = page(len, cursor, size)?;
        let range = page.range;
        let (key, items): (&str, Vec<Value>) = match list {
            CatalogList::Prompts => (
                "prompts",
                self.prompts[range].iter().map(|p| p.to_json()).collect(),
            ),
            CatalogList::Resources => (
                "resources",
                self.resources
                    .iter()
                    .map(|r| r.to_json())
                    .chain(self.skills.iter().map(|s| s.to_resource()))
                    .skip(range.start)
                    .take(range.len())
                    .collect(),
            ),
            CatalogList::Templates => (
                "resourceTemplates",
                self.templates[range].iter().map(|t| t.to_json()).collect(),
            ),
            CatalogList::Skills => (
                "skills",
                self.skills[range]
                    .iter()
                    .map(|s| self.skill_entry(s))
                    .collect(),
            ),
        };
        let mut result = JsonObject::new();
        result.insert(key.into(), Value::Array(items));
        if let Some(next) = page.next_cursor {
            result.insert("nextCursor".into(), Value::from(next));
        }
        Ok(result)
    }

    /// Answers `request`, for `principal`: the bare result (without the 2026-07-28 additions).
    /// `prompts/get` is not answered here: it runs like a tool call ([`render_prompt`]).
    ///
    /// # Errors
    /// As the module table says; -32603 for a `prompts/get`.
    pub async fn answer(
        &self,
        request: &CatalogRequest,
        principal: Option<Principal>,
    ) -> Result<JsonObject, McpError> {
        let list = |list, cursor: &Option<String>| self.list(list, cursor.as_deref());
        match request {
            CatalogRequest::ListPrompts { cursor } => list(CatalogList::Prompts, cursor),
            CatalogRequest::ListResources { cursor } => list(CatalogList::Resources, cursor),
            CatalogRequest::ListResourceTemplates { cursor } => {
                list(CatalogList::Templates, cursor)
            }
            CatalogRequest::ListSkills { cursor } => list(CatalogList::Skills, cursor),
            CatalogRequest::ReadResource { uri } => self.read(uri, principal).await,
            CatalogRequest::Complete(complete) => self.complete(complete),
            CatalogRequest::GetSkill { uri } => self.get_skill(uri),
            CatalogRequest::ReadDirectory { uri, cursor } => {
                self.read_directory(uri, cursor.as_deref())
            }
            CatalogRequest::GetPrompt(_) => Err(McpError::Internal("prompts/get runs as a call")),
        }
    }

    /// Reads `uri` for `principal`: `{"contents": [...]}`.
    ///
    /// # Errors
    /// As the module table says.
    pub async fn read(
        &self,
        uri: &str,
        principal: Option<Principal>,
    ) -> Result<JsonObject, McpError> {
        let mut request = ReadRequest {
            uri: uri.to_owned(),
            variables: Default::default(),
            principal,
        };
        let read = if let Some(resource) = self.resources.iter().find(|r| r.uri() == uri) {
            resource.read(request)
        } else if let Some(file) = self.skill_files.get(uri) {
            return Ok(contents_result(&[file.contents()]));
        } else {
            let Some((template, variables)) = self
                .templates
                .iter()
                .find_map(|t| t.matches(uri).map(|vars| (t, vars)))
            else {
                return Err(McpError::UnknownResource(uri.to_owned()));
            };
            request.variables = variables;
            template.read(request)
        };
        match read.await {
            Ok(contents) if !contents.is_empty() => Ok(contents_result(&contents)),
            Ok(_) | Err(ReadError::NotFound) => Err(McpError::UnknownResource(uri.to_owned())),
            Err(ReadError::Rpc(error)) => Err(rpc_error(error)),
        }
    }

    /// `skills/get` of `uri`: `{"skill": <entry>}` ([`Skill::to_entry`]).
    ///
    /// # Errors
    /// -32602 `Skill not found` ([`McpError::UnknownSkill`]) when no skill's `SKILL.md` is
    /// `uri`.
    pub fn get_skill(&self, uri: &str) -> Result<JsonObject, McpError> {
        let skill = self
            .skills
            .iter()
            .find(|s| s.uri() == uri)
            .ok_or_else(|| McpError::UnknownSkill(uri.to_owned()))?;
        let mut result = JsonObject::new();
        result.insert("skill".into(), self.skill_entry(skill));
        Ok(result)
    }

    /// The entry of `skill` as this catalog serves it: its `SKILL.md` first, then every file
    /// the catalog serves below the skill's root, in URI order. That is its own files and those
    /// of any skill registered below it: a nested skill's files are supporting files of the
    /// skill that encloses it, so a complete manifest lists them (Skills extension,
    /// "Resources": completeness extends to nested skills).
    pub fn skill_entry(&self, skill: &Skill) -> Value {
        let own = self.skill_files.get(skill.uri());
        let root = format!("{}/", skill.root_uri());
        let below = self.files_under(&root).filter(|f| f.uri != skill.uri());
        skill.entry_of(own.into_iter().chain(below))
    }

    /// The skill files whose URIs start with `prefix`, in URI order.
    fn files_under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a Arc<SkillFile>> {
        self.skill_files
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .take_while(move |(uri, _)| uri.starts_with(prefix))
            .map(|(_, file)| file)
    }

    /// `resources/directory/read` of `uri` from `cursor`: `{"resources": [...],
    /// "nextCursor"?}`, the directory's direct children in URI order (files with `name`,
    /// `mimeType` and `size`; subdirectories with `mimeType: "inode/directory"`).
    ///
    /// # Errors
    /// -32602 `Not a directory resource` ([`McpError::NotADirectory`]) when `uri` is no
    /// directory of the skills; -32602 `Invalid cursor`.
    pub fn read_directory(&self, uri: &str, cursor: Option<&str>) -> Result<JsonObject, McpError> {
        let prefix = format!("{uri}/");
        let under = self.files_under(&prefix).map(|f| f.uri.as_str());
        let children = tasks_core::skill::children(uri, under)
            .ok_or_else(|| McpError::NotADirectory(uri.to_owned()))?;
        let page = page(
            children.len(),
            cursor,
            self.page_size.unwrap_or(DEFAULT_PAGE_SIZE),
        )?;
        let items: Vec<Value> = children[page.range]
            .iter()
            .map(|child| match child {
                Child::File(uri) => {
                    let file = self.skill_files.get(uri);
                    json!({
                        "uri": uri,
                        "name": child.name(),
                        "mimeType": file.map(|f| f.mime_type.as_str()),
                        "size": file.map(|f| f.size()),
                    })
                }
                Child::Directory(uri) => json!({
                    "uri": uri,
                    "name": child.name(),
                    "mimeType": DIRECTORY_MIME_TYPE,
                }),
            })
            .collect();
        let mut result = JsonObject::new();
        result.insert("resources".into(), Value::Array(items));
        if let Some(next) = page.next_cursor {
            result.insert("nextCursor".into(), Value::from(next));
        }
        Ok(result)
    }

    /// Completes `request`: `{"completion": {...}}`.
    ///
    /// # Errors
    /// As the module table says.
    pub fn complete(&self, request: &CompletionRequest) -> Result<JsonObject, McpError> {
        let completer = match &request.reference {
            CompletionRef::Prompt(name) => {
                let prompt = self
                    .prompt(name)
                    .ok_or_else(|| McpError::invalid_params("Unknown prompt"))?;
                if !prompt
                    .arguments()
                    .iter()
                    .any(|a| a.name() == request.argument)
                {
                    return Err(McpError::invalid_params("The prompt has no such argument"));
                }
                prompt.completer(&request.argument)
            }
            CompletionRef::Resource(uri_template) => {
                let template = self
                    .templates
                    .iter()
                    .find(|t| t.uri_template() == uri_template)
                    .ok_or_else(|| McpError::invalid_params("Unknown resource template"))?;
                if !template.variables().any(|v| v == request.argument) {
                    return Err(McpError::invalid_params(
                        "The resource template has no such variable",
                    ));
                }
                template.completers.get(&request.argument)
            }
        };
        let completion = completer.map(|c| c.complete(request)).unwrap_or_default();
        match completion.to_json() {
            Value::Object(result) => Ok(result),
            _ => Err(McpError::Internal("Completion result")),
        }
    }
}

/// Renders `prompt` once for a synchronous `prompts/get` (its arguments checked first by the
/// caller, [`Prompt::check_arguments`]): the `GetPromptResult` (`resultType: "complete"`
/// added), the input round its handler asked for, or an error. The handler's own failure
/// (`ToolError::Tool(message)`) is -32603 with that message.
pub async fn render_prompt(prompt: &Prompt, call: SyncCall) -> SyncOutcome {
    let run = Handler {
        name: prompt.name(),
        handler: prompt.handler(),
        forms: &prompt.forms,
        state: &prompt.state,
    };
    match run.run(call).await {
        Ok(result) if result.get("messages").is_some_and(Value::is_array) => {
            SyncOutcome::Complete(tasks_core::wire::complete(result))
        }
        Ok(_) => SyncOutcome::Error(JsonRpcError::internal("Prompt result has no messages")),
        Err(HandlerEnd::Tool(message)) => SyncOutcome::Error(JsonRpcError::internal(message)),
        Err(HandlerEnd::Outcome(outcome)) => outcome,
    }
}

/// `{"contents": [...]}`.
fn contents_result(contents: &[ResourceContents]) -> JsonObject {
    let contents: Vec<Value> = contents.iter().map(ResourceContents::to_json).collect();
    let mut result = JsonObject::new();
    result.insert("contents".into(), Value::Array(contents));
    result
}

/// A reader's own JSON-RPC error as an [`McpError`] the transport answers: -32602 keeps its
/// message; anything else is -32603 (its message is the reader's, not exception text).
fn rpc_error(error: JsonRpcError) -> McpError {
    if error.code == -32602 {
        McpError::invalid_params(error.message)
    } else {
        McpError::Internal("Resource read failed")
    }
}

fn replace_or_push<T>(items: &mut Vec<Arc<T>>, item: Arc<T>, same: impl Fn(&T, &T) -> bool) {
    match items.iter_mut().find(|known| same(known, &item)) {
        Some(known) => *known = item,
        None => items.push(item),
    }
}

fn remove<T>(items: &mut Vec<Arc<T>>, matches: impl Fn(&T) -> bool) -> bool {
    let before = items.len();
    items.retain(|item| !matches(item));
    items.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failing(uri: &str, error: Option<JsonRpcError>) -> Resource {
        Resource::new(uri, "r", move |_| {
            let error = error.clone();
            async move {
                match error {
                    Some(error) => Err(ReadError::Rpc(error)),
                    None => Ok(Vec::new()),
                }
            }
        })
    }

    #[tokio::test]
    async fn a_readers_errors_reach_the_client_without_its_internal_text() {
        let mut catalog = Catalog::new();
        let internal = JsonRpcError::internal("db password rejected at 10.0.0.7");
        let refused = JsonRpcError {
            code: -32602,
            message: "Page number out of range".into(),
            data: None,
        };
        catalog.add_resource(failing("r://internal", Some(internal)));
        catalog.add_resource(failing("r://refused", Some(refused)));
        catalog.add_resource(failing("r://empty", None));
        assert_eq!(
            catalog.read("r://internal", None).await,
            Err(McpError::Internal("Resource read failed"))
        );
        assert_eq!(
            catalog.read("r://refused", None).await,
            Err(McpError::invalid_params("Page number out of range"))
        );
        // Never an empty contents array: an empty read is not found.
        assert_eq!(
            catalog.read("r://empty", None).await,
            Err(McpError::UnknownResource("r://empty".into()))
        );
        // Registering the same URI again replaces it in place.
        catalog.add_resource(Resource::text("r://internal", "again", "text/plain", "ok"));
        let listed = catalog.list(CatalogList::Resources, None).unwrap();
        assert_eq!(listed["resources"][0]["name"], "again");
        assert!(catalog.remove_resource("r://empty"));
        assert!(!catalog.remove_resource("r://empty"));
    }

    #[tokio::test]
    async fn skills_are_listed_got_read_and_browsed_as_directories() {
        let md = |name: &str| format!("---\nname: {name}\ndescription: About {name}\n---\nBody");
        let mut catalog = Catalog::new().with_page_size(2);
        catalog.add_resource(Resource::text("r://plain", "plain", "text/plain", "p"));
        catalog.add_skill(
            Skill::new("acme/refunds", md("refunds"))
                .unwrap()
                .file("templates/a.md", "A")
                .unwrap()
                .file("templates/eu/b.md", "B")
                .unwrap(),
        );
        catalog.add_skill(Skill::new("git", md("git")).unwrap());
        assert!(catalog.offers(Feature::Skills));

        // resources/list: the static resource, then each SKILL.md, two to a page.
        let first = catalog.list(CatalogList::Resources, None).unwrap();
        let uris = |page: &JsonObject| -> Vec<String> {
            page["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["uri"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(uris(&first), ["r://plain", "skill://acme/refunds/SKILL.md"]);
        let next = first["nextCursor"].as_str().unwrap();
        let second = catalog.list(CatalogList::Resources, Some(next)).unwrap();
        assert_eq!(uris(&second), ["skill://git/SKILL.md"]);
        assert_eq!(second["resources"][0]["description"], "About git");

        let skills = catalog.list(CatalogList::Skills, None).unwrap();
        assert_eq!(
            skills["skills"][0]["resources"].as_array().unwrap().len(),
            3
        );
        assert!(skills.get("nextCursor").is_none());
        let got = catalog.get_skill("skill://git/SKILL.md").unwrap();
        assert_eq!(got["skill"]["frontmatter"]["name"], "git");
        for unknown in [
            "skill://git",
            "skill://acme/refunds/templates/a.md",
            "skill://nope/SKILL.md",
        ] {
            assert_eq!(
                catalog.get_skill(unknown),
                Err(McpError::UnknownSkill(unknown.into()))
            );
        }

        let read = catalog
            .read("skill://acme/refunds/templates/eu/b.md", None)
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["text"], "B");
        assert_eq!(read["contents"][0]["mimeType"], "text/markdown");

        let root = catalog
            .read_directory("skill://acme/refunds", None)
            .unwrap();
        assert_eq!(
            Value::Object(root),
            json!({"resources": [
                {"uri": "skill://acme/refunds/SKILL.md", "name": "SKILL.md",
                 "mimeType": "text/markdown", "size": md("refunds").len()},
                {"uri": "skill://acme/refunds/templates", "name": "templates",
                 "mimeType": "inode/directory"},
            ]})
        );
        let prefix = catalog.read_directory("skill://acme", None).unwrap();
        assert_eq!(prefix["resources"][0]["uri"], "skill://acme/refunds");
        for not_a_directory in [
            "skill://acme/refunds/SKILL.md",
            "skill://acme/ref",
            "r://plain",
            "skill://acme/",
        ] {
            assert_eq!(
                catalog.read_directory(not_a_directory, None),
                Err(McpError::NotADirectory(not_a_directory.into()))
            );
        }
        // A skill registered below another: its files are the enclosing skill's too.
        catalog.add_skill(
            Skill::new("acme/refunds/templates/eu", md("eu"))
                .unwrap()
                .file("rules.md", "R")
                .unwrap(),
        );
        let outer = catalog.get_skill("skill://acme/refunds/SKILL.md").unwrap();
        let listed: Vec<&str> = outer["skill"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uri"].as_str().unwrap())
            .collect();
        assert_eq!(
            listed,
            [
                "skill://acme/refunds/SKILL.md",
                "skill://acme/refunds/templates/a.md",
                "skill://acme/refunds/templates/eu/SKILL.md",
                "skill://acme/refunds/templates/eu/b.md",
                "skill://acme/refunds/templates/eu/rules.md",
            ]
        );
        let inner = catalog
            .get_skill("skill://acme/refunds/templates/eu/SKILL.md")
            .unwrap();
        assert_eq!(inner["skill"]["resources"].as_array().unwrap().len(), 3);
        assert!(catalog.remove_skill("skill://git/SKILL.md"));
        assert!(catalog.read("skill://git/SKILL.md", None).await.is_err());
    }
}
