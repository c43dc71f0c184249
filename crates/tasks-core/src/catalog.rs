//! The requests of the server features beside tools: prompts, resources and completion
//! (MCP 2026-07-28 server "Prompts", "Resources" and utilities "Completion":
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/prompts>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/resources>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/completion>).
//!
//! [`parse`] reads one request's params into a [`CatalogRequest`]; each failure is -32602
//! with a fixed message. What needs the server's catalog (does the prompt exist, which
//! resource a URI names, what completes an argument) is the runtime's, after the plan.
//!
//! * the list methods: `cursor` absent, `null` or a string ([`page`], [`parse_cursor`]);
//! * `resources/read`: `uri` a non-empty string of at most [`MAX_URI_BYTES`];
//! * `prompts/get`: `name` a string, `arguments` absent, `null` or an object of strings;
//!   then MRTR (MCP 2026-07-28 "Multi Round-Trip Requests": input rounds work on any request,
//!   runner scenario `input-required-result-non-tool-request`): `inputResponses` and
//!   `requestState` as for `tools/call`, the state verified against this prompt, its
//!   arguments and the caller;
//! * `completion/complete`: `ref` `{type: "ref/prompt", name}` or `{type: "ref/resource",
//!   uri}`, `argument` `{name, value}` strings, `context.arguments` absent or an object of
//!   strings;
//! * the Skills extension ([`crate::skill`]): `skills/list` a cursor; `skills/get` a `uri` as
//!   for `resources/read`; `resources/directory/read` both.

// Pagination and resource templates, used from here.
pub use crate::cursor::{
    invalid_cursor, page, parse_cursor, refuse_cursor, Page, DEFAULT_PAGE_SIZE,
};
pub use crate::uri_template::{is_segment, TemplateError, UriTemplate};

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::call::parse_call_inputs;
use crate::error::McpError;
use crate::method::{Feature, Method};
use crate::mrtr::{self, Binding, RequestState, StateKey};
use crate::time::Timestamp;
use crate::wire::CacheScope;
use crate::JsonObject;

/// The longest URI `resources/read` and completion references take, in bytes.
pub const MAX_URI_BYTES: usize = 2048;

/// The most values one `completion/complete` result carries (MCP 2026-07-28 schema,
/// `CompleteResult.completion.values`: `maxItems: 100`).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// A validated request of a feature beside tools.
#[derive(Debug, Clone, PartialEq)]
pub enum CatalogRequest {
    /// `prompts/list` from `cursor`.
    ListPrompts {
        /// The cursor, `None` for the first page.
        cursor: Option<String>,
    },
    /// `prompts/get`.
    GetPrompt(PromptRequest),
    /// `resources/list` from `cursor`.
    ListResources {
        /// The cursor, `None` for the first page.
        cursor: Option<String>,
    },
    /// `resources/templates/list` from `cursor`.
    ListResourceTemplates {
        /// The cursor, `None` for the first page.
        cursor: Option<String>,
    },
    /// `resources/read` of `uri`.
    ReadResource {
        /// The URI.
        uri: String,
    },
    /// `completion/complete`.
    Complete(CompletionRequest),
    /// `skills/list` from `cursor` (Skills extension).
    ListSkills {
        /// The cursor, `None` for the first page.
        cursor: Option<String>,
    },
    /// `skills/get` of the skill whose `SKILL.md` is `uri` (Skills extension).
    GetSkill {
        /// The URI.
        uri: String,
    },
    /// `resources/directory/read` of directory `uri` from `cursor` (Skills extension).
    ReadDirectory {
        /// The directory's URI.
        uri: String,
        /// The cursor, `None` for the first page.
        cursor: Option<String>,
    },
}

impl CatalogRequest {
    /// How its 2026-07-28 result may be cached (MCP 2026-07-28 "Caching"): `public` for the
    /// lists and a skill's entry, which are the same for every caller; `private` for a read,
    /// whose reader may answer by caller; `None` (no `ttlMs`, no `cacheScope`) for the others:
    /// `prompts/get`, completion, and a directory read (Skills extension).
    pub fn cache_scope(&self) -> Option<CacheScope> {
        match self {
            CatalogRequest::ListPrompts { .. }
            | CatalogRequest::ListResources { .. }
            | CatalogRequest::ListResourceTemplates { .. }
            | CatalogRequest::ListSkills { .. }
            | CatalogRequest::GetSkill { .. } => Some(CacheScope::Public),
            CatalogRequest::ReadResource { .. } => Some(CacheScope::Private),
            CatalogRequest::GetPrompt(_)
            | CatalogRequest::Complete(_)
            | CatalogRequest::ReadDirectory { .. } => None,
        }
    }
}

/// A validated `prompts/get`.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptRequest {
    /// The prompt name.
    pub name: String,
    /// The arguments, every value a string (`{}` when absent).
    pub arguments: JsonObject,
    /// The answers so far (a verified state's merged with `inputResponses`), if any.
    pub answers: Option<JsonObject>,
    /// The verified `requestState` of the round this request answers, if any.
    pub previous: Option<RequestState>,
}

/// What a completion request completes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// `{"type": "ref/prompt", "name": …}`: an argument of this prompt.
    Prompt(String),
    /// `{"type": "ref/resource", "uri": …}`: a variable of this resource template.
    Resource(String),
}

/// A validated `completion/complete`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    /// What is completed.
    pub reference: CompletionRef,
    /// The argument (or template variable) name.
    pub argument: String,
    /// Its partial value.
    pub value: String,
    /// `context.arguments`: the values of the other arguments already chosen.
    pub context: BTreeMap<String, String>,
}

/// The `server/discover` (and 2025 `initialize`) capabilities of the features offered:
/// `prompts: {listChanged}`, `resources: {listChanged, subscribe: true}`, `completions: {}`;
/// `list_changed` when the server announces list changes.
pub fn capabilities(offers: impl Fn(Feature) -> bool, list_changed: bool) -> JsonObject {
    let mut capabilities = JsonObject::new();
    if offers(Feature::Prompts) {
        capabilities.insert("prompts".into(), json!({"listChanged": list_changed}));
    }
    if offers(Feature::Resources) {
        capabilities.insert(
            "resources".into(),
            json!({"listChanged": list_changed, "subscribe": true}),
        );
    }
    if offers(Feature::Completions) {
        capabilities.insert("completions".into(), json!({}));
    }
    capabilities
}

/// The `capabilities.extensions` entries of the extensions offered beside Tasks: the Skills
/// extension with `directoryRead: true` (this server serves `resources/directory/read` for
/// every directory of its skills) when it serves a skill.
pub fn extensions(offers: impl Fn(Feature) -> bool) -> JsonObject {
    let mut extensions = JsonObject::new();
    if offers(Feature::Skills) {
        extensions.insert(
            crate::skill::SKILLS_EXTENSION.into(),
            json!({"directoryRead": true}),
        );
    }
    extensions
}

/// The `server/discover` capabilities: `tools` (with `listChanged: true` when `list_changed`,
/// the server announcing list changes), `extensions` (the Tasks extension, `{}`, never a
/// legacy `capabilities.tasks`; and [`extensions`]), then the features offered
/// ([`capabilities`]).
pub fn discover_capabilities(offers: impl Fn(Feature) -> bool, list_changed: bool) -> JsonObject {
    let tools = if list_changed {
        json!({"listChanged": true})
    } else {
        json!({})
    };
    let mut extensions = extensions(&offers);
    extensions.insert(crate::protocol::TASKS_EXTENSION.into(), json!({}));
    let mut result = JsonObject::new();
    result.insert("tools".into(), tools);
    result.insert("extensions".into(), Value::Object(extensions));
    result.extend(capabilities(offers, list_changed));
    result
}

/// What checking a `requestState` needs: the caller, the key and the time.
#[derive(Debug, Clone, Copy)]
pub struct StateCheck<'a> {
    /// The caller's scope (opaque).
    pub scope: &'a str,
    /// The `requestState` key.
    pub key: &'a StateKey,
    /// The current time.
    pub now: Timestamp,
}

/// Reads the params of `method`, one of the feature methods ([`Method::feature`]). `state`
/// checks a `prompts/get`'s `requestState`; without it (a 2025 session, which has no input
/// rounds) `inputResponses` and `requestState` are ignored.
///
/// # Errors
/// -32602 with a fixed message, as in the module docs; a `requestState` that fails
/// verification as in [`mrtr::verify`]; -32601 for a method outside the features.
pub fn parse(
    method: Method,
    params: &Value,
    state: Option<StateCheck<'_>>,
) -> Result<CatalogRequest, McpError> {
    Ok(match method {
        Method::PromptsList => CatalogRequest::ListPrompts {
            cursor: parse_cursor(params)?,
        },
        Method::ResourcesList => CatalogRequest::ListResources {
            cursor: parse_cursor(params)?,
        },
        Method::ResourcesTemplatesList => CatalogRequest::ListResourceTemplates {
            cursor: parse_cursor(params)?,
        },
        Method::ResourcesRead => CatalogRequest::ReadResource {
            uri: parse_uri(params.get("uri"), "resources/read requires a string uri")?,
        },
        Method::PromptsGet => CatalogRequest::GetPrompt(parse_prompt(params, state)?),
        Method::CompletionComplete => CatalogRequest::Complete(parse_completion(params)?),
        Method::SkillsList => CatalogRequest::ListSkills {
            cursor: parse_cursor(params)?,
        },
        Method::SkillsGet => CatalogRequest::GetSkill {
            uri: parse_uri(params.get("uri"), "skills/get requires a string uri")?,
        },
        Method::ResourcesDirectoryRead => CatalogRequest::ReadDirectory {
            uri: parse_uri(
                params.get("uri"),
                "resources/directory/read requires a string uri",
            )?,
            cursor: parse_cursor(params)?,
        },
        _ => return Err(McpError::MethodNotFound),
    })
}

fn parse_uri(value: Option<&Value>, missing: &'static str) -> Result<String, McpError> {
    let uri = value
        .and_then(Value::as_str)
        .filter(|uri| !uri.is_empty())
        .ok_or_else(|| McpError::invalid_params(missing))?;
    if uri.len() > MAX_URI_BYTES {
        return Err(McpError::invalid_params("uri is longer than 2048 bytes"));
    }
    Ok(uri.to_owned())
}

/// An object of strings (`{}` when absent or null).
fn string_map(value: Option<&Value>, invalid: &'static str) -> Result<JsonObject, McpError> {
    match value {
        None | Some(Value::Null) => Ok(JsonObject::new()),
        Some(Value::Object(map)) if map.values().all(Value::is_string) => Ok(map.clone()),
        Some(_) => Err(McpError::invalid_params(invalid)),
    }
}

fn parse_prompt(params: &Value, state: Option<StateCheck<'_>>) -> Result<PromptRequest, McpError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| McpError::invalid_params("prompts/get requires a string name"))?;
    let arguments = string_map(
        params.get("arguments"),
        "prompt arguments must be an object of strings",
    )?;
    let Some(state) = state else {
        return Ok(PromptRequest {
            name: name.to_owned(),
            arguments,
            answers: None,
            previous: None,
        });
    };
    let inputs = parse_call_inputs(params)?;
    let binding = Binding {
        method: Method::PromptsGet,
        name,
        arguments: &arguments,
        scope: state.scope,
    };
    let previous = match inputs.request_state {
        Some(text) => Some(mrtr::verify(state.key, binding, text, state.now)?),
        None => None,
    };
    let answers = match &previous {
        Some(verified) => Some(verified.merge(inputs.input_responses)?),
        None => inputs.input_responses.cloned(),
    };
    Ok(PromptRequest {
        name: name.to_owned(),
        arguments,
        answers,
        previous,
    })
}

fn parse_completion(params: &Value) -> Result<CompletionRequest, McpError> {
    let reference = params
        .get("ref")
        .and_then(Value::as_object)
        .ok_or_else(|| McpError::invalid_params("completion/complete requires a ref object"))?;
    let reference = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => CompletionRef::Prompt(
            reference
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| McpError::invalid_params("ref/prompt requires a string name"))?
                .to_owned(),
        ),
        Some("ref/resource") => CompletionRef::Resource(parse_uri(
            reference.get("uri"),
            "ref/resource requires a string uri",
        )?),
        _ => {
            return Err(McpError::invalid_params(
                "ref.type must be ref/prompt or ref/resource",
            ))
        }
    };
    let argument = params.get("argument").and_then(Value::as_object);
    let field = |key: &str| argument.and_then(|a| a.get(key)).and_then(Value::as_str);
    let (Some(name), Some(value)) = (field("name"), field("value")) else {
        return Err(McpError::invalid_params(
            "completion/complete requires argument.name and argument.value strings",
        ));
    };
    let context = string_map(
        params.get("context").and_then(|c| c.get("arguments")),
        "context.arguments must be an object of strings",
    )?;
    Ok(CompletionRequest {
        reference,
        argument: name.to_owned(),
        value: value.to_owned(),
        context: context
            .into_iter()
            .filter_map(|(k, v)| v.as_str().map(|v| (k, v.to_owned())))
            .collect(),
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn discover_capabilities_name_tools_tasks_and_the_features_offered() {
        let none = discover_capabilities(|_| false, false);
        assert_eq!(
            Value::Object(none),
            json!({"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
        );
        let all = discover_capabilities(|_| true, true);
        let keys: Vec<&str> = all.keys().map(String::as_str).collect();
        for key in ["tools", "extensions", "prompts", "resources", "completions"] {
            assert!(keys.contains(&key), "{key}");
        }
        assert_eq!(all["tools"], json!({"listChanged": true}));
        assert_eq!(
            all["extensions"]["io.modelcontextprotocol/skills"],
            json!({"directoryRead": true})
        );
        assert_eq!(
            all["resources"],
            json!({"listChanged": true, "subscribe": true})
        );
        assert_eq!(all["completions"], json!({}));
        assert!(!all.contains_key("tasks"));
    }

    use super::*;
    use serde_json::json;

    static KEY: std::sync::LazyLock<StateKey> =
        std::sync::LazyLock::new(|| StateKey::from_bytes([7; 32]));

    fn check() -> Option<StateCheck<'static>> {
        Some(StateCheck {
            scope: "s",
            key: &KEY,
            now: Timestamp::from_unix_millis(1_000),
        })
    }

    fn now() -> Timestamp {
        Timestamp::from_unix_millis(1_000)
    }

    fn refusal(method: Method, params: Value) -> String {
        match parse(method, &params, check()) {
            Err(McpError::InvalidParams(message)) => message,
            other => panic!("{method} {params}: {other:?}"),
        }
    }

    #[test]
    fn each_method_reads_its_params() {
        assert_eq!(
            parse(Method::ResourcesRead, &json!({"uri": "test://x"}), check()).unwrap(),
            CatalogRequest::ReadResource {
                uri: "test://x".into()
            }
        );
        assert_eq!(
            parse(Method::PromptsList, &json!({}), check()).unwrap(),
            CatalogRequest::ListPrompts { cursor: None }
        );
        assert_eq!(
            parse(Method::SkillsList, &json!({"cursor": "c"}), check()).unwrap(),
            CatalogRequest::ListSkills {
                cursor: Some("c".into())
            }
        );
        assert_eq!(
            parse(
                Method::SkillsGet,
                &json!({"uri": "skill://a/SKILL.md"}),
                None
            )
            .unwrap(),
            CatalogRequest::GetSkill {
                uri: "skill://a/SKILL.md".into()
            }
        );
        assert_eq!(
            parse(
                Method::ResourcesDirectoryRead,
                &json!({"uri": "skill://a"}),
                check()
            )
            .unwrap(),
            CatalogRequest::ReadDirectory {
                uri: "skill://a".into(),
                cursor: None
            }
        );
        let CatalogRequest::GetPrompt(prompt) = parse(
            Method::PromptsGet,
            &json!({"name": "p", "arguments": {"a": "1"}, "inputResponses": {"k": {"action": "decline"}}}),
            check(),
        )
        .unwrap() else {
            panic!("not a prompt")
        };
        assert_eq!(prompt.name, "p");
        assert_eq!(prompt.arguments, *json!({"a": "1"}).as_object().unwrap());
        assert_eq!(
            prompt.answers,
            Some(
                json!({"k": {"action": "decline"}})
                    .as_object()
                    .unwrap()
                    .clone()
            )
        );
        assert_eq!(
            parse(
                Method::CompletionComplete,
                &json!({"ref": {"type": "ref/resource", "uri": "t://{id}"},
                        "argument": {"name": "id", "value": "1"},
                        "context": {"arguments": {"x": "y"}}}),
                check()
            )
            .unwrap(),
            CatalogRequest::Complete(CompletionRequest {
                reference: CompletionRef::Resource("t://{id}".into()),
                argument: "id".into(),
                value: "1".into(),
                context: [("x".to_owned(), "y".to_owned())].into(),
            })
        );
    }

    #[test]
    fn bad_params_are_refused_with_fixed_messages() {
        let cases = [
            (
                Method::ResourcesRead,
                json!({}),
                "resources/read requires a string uri",
            ),
            (
                Method::ResourcesRead,
                json!({"uri": ""}),
                "resources/read requires a string uri",
            ),
            (
                Method::ResourcesRead,
                json!({"uri": "x".repeat(MAX_URI_BYTES + 1)}),
                "uri is longer than 2048 bytes",
            ),
            (
                Method::ResourcesList,
                json!({"cursor": 1}),
                "Invalid cursor",
            ),
            (
                Method::PromptsGet,
                json!({}),
                "prompts/get requires a string name",
            ),
            (
                Method::PromptsGet,
                json!({"name": "p", "arguments": {"a": 1}}),
                "prompt arguments must be an object of strings",
            ),
            (
                Method::PromptsGet,
                json!({"name": "p", "requestState": 5}),
                "requestState must be a string",
            ),
            (
                Method::CompletionComplete,
                json!({"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "a", "value": ""}}),
                "ref.type must be ref/prompt or ref/resource",
            ),
            (
                Method::CompletionComplete,
                json!({"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a"}}),
                "completion/complete requires argument.name and argument.value strings",
            ),
            (
                Method::SkillsGet,
                json!({"uri": 5}),
                "skills/get requires a string uri",
            ),
            (Method::SkillsList, json!({"cursor": []}), "Invalid cursor"),
            (
                Method::ResourcesDirectoryRead,
                json!({"cursor": "x"}),
                "resources/directory/read requires a string uri",
            ),
            (
                Method::ResourcesDirectoryRead,
                json!({"uri": "skill://a", "cursor": 1}),
                "Invalid cursor",
            ),
        ];
        for (method, params, message) in cases {
            assert_eq!(
                refusal(method, params.clone()),
                message,
                "{method} {params}"
            );
        }
    }

    #[test]
    fn a_prompt_state_is_bound_to_its_prompt_and_arguments() {
        let arguments = json!({"a": "1"}).as_object().unwrap().clone();
        let binding = Binding {
            method: Method::PromptsGet,
            name: "p",
            arguments: &arguments,
            scope: "s",
        };
        let state = RequestState {
            round: 1,
            answers: JsonObject::new(),
            asked: Default::default(),
        };
        let text = mrtr::issue(&KEY, binding, state, now(), 60_000, [1; mrtr::NONCE_BYTES]);
        let ok = json!({"name": "p", "arguments": {"a": "1"}, "requestState": text});
        assert!(parse(Method::PromptsGet, &ok, check()).is_ok());
        for other in [
            json!({"name": "q", "arguments": {"a": "1"}, "requestState": text}),
            json!({"name": "p", "arguments": {"a": "2"}, "requestState": text}),
        ] {
            assert!(
                parse(Method::PromptsGet, &other, check()).is_err(),
                "{other}"
            );
        }
        // The same state on a tools/call of the same name is refused too.
        let tool_binding = Binding {
            method: Method::ToolsCall,
            name: "p",
            arguments: &arguments,
            scope: "s",
        };
        assert!(mrtr::verify(&KEY, tool_binding, &text, now()).is_err());
        // A session (no state check) ignores the state.
        assert!(parse(
            Method::PromptsGet,
            &json!({"name": "p", "requestState": 1}),
            None
        )
        .is_ok());
    }
}
