//! The server features beside tools: prompts ([`Client::list_prompts`],
//! [`Client::get_prompt`]), resources ([`Client::list_resources`],
//! [`Client::list_resource_templates`], [`Client::read_resource`]) and completion
//! ([`Client::complete`]), with their typed results.
//!
//! Lists follow every page (`nextCursor`, bounded like `tools/list` by
//! [`MAX_TOOL_PAGES`](crate::MAX_TOOL_PAGES) and [`MAX_TOOLS`](crate::MAX_TOOLS)) and keep the
//! caching hints (`ttlMs`, `cacheScope`) as [`Caching`]. Items are read leniently (what MCP
//! makes optional may be absent; unknown members are ignored), so other servers' lists read
//! too. A server that does not offer a feature answers its methods with -32601, which is
//! [`ClientError::MethodNotFound`] naming the method.
//!
//! Sources: MCP 2026-07-28 server "Prompts" and "Resources", utilities "Completion" and
//! "Caching" (<https://modelcontextprotocol.io/specification/2026-07-28/server/prompts>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/resources>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/completion>).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tasks_core::catalog::CompletionRef;
use tasks_core::input::Role;
use tasks_core::wire::ResultType;
use tasks_core::JsonObject;

use crate::client::Client;
use crate::error::ClientError;
use crate::listing::{Caching, Listing};

/// One prompt of `prompts/list`: `{"name", "title"?, "description"?, "arguments"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Prompt {
    /// The prompt's name, what [`Client::get_prompt`] takes.
    pub name: String,
    /// A human-readable name, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for, if said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes (none when absent).
    #[serde(default)]
    pub arguments: Vec<PromptArgument>,
}

/// One argument of a [`Prompt`]: `{"name", "title"?, "description"?, "required"?}`. Every
/// prompt argument is a string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// A human-readable name, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it means, if said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether [`Client::get_prompt`] must give it (`false` when absent).
    #[serde(default)]
    pub required: bool,
}

/// One message of a rendered prompt: a role and one content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who says it: [`Role::User`] or [`Role::Assistant`].
    pub role: Role,
    /// The content block, as in a tool result: `{"type": "text", "text"}`, `image` or
    /// `audio` (`data` base64, `mimeType`), `resource` (an embedded resource's contents) or
    /// `resource_link`.
    pub content: Value,
}

impl PromptMessage {
    /// The text of a `text` content block.
    pub fn text(&self) -> Option<&str> {
        match self.content.get("type").and_then(Value::as_str) {
            Some("text") => self.content.get("text").and_then(Value::as_str),
            _ => None,
        }
    }
}

/// A `prompts/get` result: the prompt rendered with its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptResult {
    /// A description of the prompt as rendered, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
}

/// One resource of `resources/list`: `{"uri", "name", "title"?, "description"?,
/// "mimeType"?, "size"?, "annotations"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Resource {
    /// Its URI, what [`Client::read_resource`] takes.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A human-readable name, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is, if said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Its annotations (`audience`, `priority`, `lastModified`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<JsonObject>,
}

impl Resource {
    /// Whether it is a directory (`mimeType` `inode/directory`,
    /// [`DIRECTORY_MIME_TYPE`](crate::DIRECTORY_MIME_TYPE)), as
    /// [`Client::read_directory`] lists a skill's subdirectories.
    pub fn is_directory(&self) -> bool {
        self.mime_type.as_deref() == Some(tasks_core::skill::DIRECTORY_MIME_TYPE)
    }
}

/// One template of `resources/templates/list`: `{"uriTemplate", "name", "title"?,
/// "description"?, "mimeType"?, "annotations"?}`. Its variables may have completions
/// ([`CompletionRef::Resource`] with the template).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// The URI template (RFC 6570), e.g. `test://template/{id}/data`.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A human-readable name, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What its resources are, if said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of its resources, if they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its annotations, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<JsonObject>,
}

/// The body of one [`ResourceContents`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceBody {
    /// `text`.
    Text(String),
    /// `blob`, decoded from base64.
    Blob(Vec<u8>),
}

/// One item of a `resources/read` result: `{"uri", "mimeType"?, "text" | "blob"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "WireContents", into = "WireContents")]
#[non_exhaustive]
pub struct ResourceContents {
    /// The URI of these contents (a read may give several, e.g. the files of a directory).
    pub uri: String,
    /// Their MIME type, if known.
    pub mime_type: Option<String>,
    /// Text, or bytes.
    pub body: ResourceBody,
}

impl ResourceContents {
    /// The text, for text contents.
    pub fn text(&self) -> Option<&str> {
        match &self.body {
            ResourceBody::Text(text) => Some(text),
            ResourceBody::Blob(_) => None,
        }
    }

    /// The bytes: a blob's, or a text's UTF-8.
    pub fn bytes(&self) -> &[u8] {
        match &self.body {
            ResourceBody::Text(text) => text.as_bytes(),
            ResourceBody::Blob(bytes) => bytes,
        }
    }
}

/// [`ResourceContents`] as sent.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireContents {
    uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blob: Option<String>,
}

impl TryFrom<WireContents> for ResourceContents {
    type Error = String;

    fn try_from(wire: WireContents) -> Result<Self, String> {
        let body = match (wire.text, wire.blob) {
            (Some(text), None) => ResourceBody::Text(text),
            (None, Some(blob)) => ResourceBody::Blob(
                STANDARD
                    .decode(blob.as_bytes())
                    .map_err(|_| format!("the blob of {} is not base64", wire.uri))?,
            ),
            _ => return Err(format!("{} has not one of text and blob", wire.uri)),
        };
        Ok(ResourceContents {
            uri: wire.uri,
            mime_type: wire.mime_type,
            body,
        })
    }
}

impl From<ResourceContents> for WireContents {
    fn from(contents: ResourceContents) -> Self {
        let (text, blob) = match contents.body {
            ResourceBody::Text(text) => (Some(text), None),
            ResourceBody::Blob(bytes) => (None, Some(STANDARD.encode(bytes))),
        };
        WireContents {
            uri: contents.uri,
            mime_type: contents.mime_type,
            text,
            blob,
        }
    }
}

/// A `resources/read` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReadResult {
    /// The contents (usually one item, the resource itself).
    pub contents: Vec<ResourceContents>,
    /// How long it may be reused (a server of this project: `private`, per caller).
    pub caching: Caching,
}

/// A `completion/complete` result: `{"values", "total"?, "hasMore"?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// The suggested values, best first (at most 100).
    pub values: Vec<String>,
    /// How many values match in all, if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values match than `values` holds (`false` when absent).
    #[serde(default)]
    pub has_more: bool,
}

/// `value` as an object of strings (prompt arguments).
fn string_object(value: impl Serialize) -> Result<JsonObject, ClientError> {
    let invalid =
        || ClientError::InvalidArgument("prompt arguments must be an object of strings".into());
    match serde_json::to_value(value) {
        Ok(Value::Object(object)) if object.values().all(Value::is_string) => Ok(object),
        _ => Err(invalid()),
    }
}

/// Reads `result[key]` as a `T`.
pub(crate) fn member<T: serde::de::DeserializeOwned>(
    result: &mut JsonObject,
    key: &str,
    method: &str,
) -> Result<T, ClientError> {
    result
        .remove(key)
        .ok_or_else(|| ClientError::malformed(format!("a {method} result without {key}")))
        .and_then(|value| {
            serde_json::from_value(value).map_err(|error| {
                ClientError::malformed(format!("not a {method} result ({key}: {error})"))
            })
        })
}

impl Client {
    /// `prompts/list`, every page: the prompts and the list's caching hints.
    ///
    /// # Errors
    /// [`ClientError::MethodNotFound`] when the server offers no prompts; the request's
    /// error; [`ClientError::Malformed`] for a page that is not a prompt list, more than
    /// [`MAX_TOOL_PAGES`](crate::MAX_TOOL_PAGES) pages or
    /// [`MAX_TOOLS`](crate::MAX_TOOLS) prompts.
    pub async fn list_prompts(&self) -> Result<Listing<Prompt>, ClientError> {
        self.list_all("prompts/list", "prompts", "prompt").await
    }

    /// `prompts/get`: prompt `name` rendered with `arguments` (anything that serializes to a
    /// JSON object of strings: `json!({"arg1": "paris"})`, a `BTreeMap<String, String>`, …).
    ///
    /// A prompt may ask for input first (an MRTR `input_required` result): it is answered by
    /// the input handler and the request repeated with `inputResponses` and the echoed
    /// `requestState`, exactly as [`Client::call_tool`] does, at most
    /// [`MAX_INPUT_ROUNDS`](crate::MAX_INPUT_ROUNDS) times.
    ///
    /// # Errors
    /// [`ClientError::InvalidArgument`] for arguments that are not an object of strings;
    /// [`ClientError::MethodNotFound`] when the server offers no prompts; the server's refusal
    /// ([`ClientError::Rpc`], -32602: `Unknown prompt`, `Missing required prompt argument:
    /// …`, `Unknown prompt argument: …`); [`ClientError::NoHandler`] when the prompt asks for
    /// input this client has no handler for (or the server's -32021 when it knew first), the
    /// handler's error; [`ClientError::Malformed`].
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<PromptResult, ClientError> {
        let mut params = JsonObject::new();
        params.insert("name".into(), json!(name));
        params.insert("arguments".into(), Value::Object(string_object(arguments)?));
        let (kind, result) = self
            .request_answering_input("prompts/get", params, Vec::new())
            .await?;
        if kind != ResultType::Complete {
            return Err(ClientError::malformed("prompts/get answered with a task"));
        }
        serde_json::from_value(Value::Object(result))
            .map_err(|error| ClientError::malformed(format!("not a prompts/get result: {error}")))
    }

    /// `resources/list`, every page: the resources with a fixed URI (templates are
    /// [`Client::list_resource_templates`]) and the list's caching hints.
    ///
    /// # Errors
    /// As [`Client::list_prompts`], for resources.
    pub async fn list_resources(&self) -> Result<Listing<Resource>, ClientError> {
        self.list_all("resources/list", "resources", "resource")
            .await
    }

    /// `resources/templates/list`, every page: the resource templates and the list's caching
    /// hints.
    ///
    /// # Errors
    /// As [`Client::list_prompts`], for templates.
    pub async fn list_resource_templates(&self) -> Result<Listing<ResourceTemplate>, ClientError> {
        self.list_all(
            "resources/templates/list",
            "resourceTemplates",
            "resource template",
        )
        .await
    }

    /// `resources/read` of `uri` (a listed resource's, or one a template covers): its
    /// contents, text as text and blobs decoded from base64, and the caching hints.
    ///
    /// # Errors
    /// [`ClientError::MethodNotFound`] when the server offers no resources; the server's
    /// refusal ([`ClientError::Rpc`]: -32602 `Resource not found` with `data.uri`, or
    /// `resources/read requires a string uri` for an empty one); [`ClientError::Malformed`]
    /// for contents with neither (or both) of `text` and `blob`, or a blob that is not base64.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResult, ClientError> {
        let mut params = JsonObject::new();
        params.insert("uri".into(), json!(uri));
        let mut result = self
            .request_of("resources/read", params, Vec::new())
            .await?;
        let caching = Caching::of(&result);
        let contents = member(&mut result, "contents", "resources/read")?;
        Ok(ReadResult { contents, caching })
    }

    /// `completion/complete`: values for `argument` of `reference` (a prompt's argument, or a
    /// resource template's variable) that begins as `value`.
    ///
    /// ```no_run
    /// # async fn run(client: tasks_client::Client) -> Result<(), tasks_client::ClientError> {
    /// use tasks_client::CompletionRef;
    /// let reference = CompletionRef::Prompt("test_prompt_with_arguments".into());
    /// let completion = client.complete(&reference, "arg1", "par").await?;
    /// assert_eq!(completion.values, ["paris", "park", "party"]);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`ClientError::MethodNotFound`] when the server offers no completion; the server's
    /// refusal ([`ClientError::Rpc`], -32602: `Unknown prompt`, `The prompt has no such
    /// argument`, `Unknown resource template`, …); [`ClientError::Malformed`].
    pub async fn complete(
        &self,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
    ) -> Result<Completion, ClientError> {
        self.complete_with_context(reference, argument, value, [])
            .await
    }

    /// `completion/complete` with `context.arguments`: the values of the reference's other
    /// arguments (or template variables) already chosen, so that the server can suggest
    /// values that fit them (MCP 2026-07-28 utilities "Completion", `CompleteRequest`
    /// `context.arguments`). With no context it is [`Client::complete`].
    ///
    /// # Errors
    /// As [`Client::complete`].
    pub async fn complete_with_context<'a>(
        &self,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        context: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Completion, ClientError> {
        let reference = match reference {
            CompletionRef::Prompt(name) => json!({"type": "ref/prompt", "name": name}),
            CompletionRef::Resource(uri) => json!({"type": "ref/resource", "uri": uri}),
        };
        let mut params = JsonObject::new();
        params.insert("ref".into(), reference);
        params.insert("argument".into(), json!({"name": argument, "value": value}));
        let arguments: JsonObject = context
            .into_iter()
            .map(|(name, value)| (name.to_owned(), json!(value)))
            .collect();
        if !arguments.is_empty() {
            params.insert("context".into(), json!({"arguments": arguments}));
        }
        let mut result = self
            .request_of("completion/complete", params, Vec::new())
            .await?;
        member(&mut result, "completion", "completion/complete")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tasks_core::wire::CacheScope;

    #[test]
    fn contents_read_text_and_base64_blobs_and_refuse_the_rest() {
        let read = |value: Value| serde_json::from_value::<ResourceContents>(value);
        let text =
            read(json!({"uri": "a://x", "mimeType": "text/plain", "text": "hi"})).expect("text");
        assert_eq!(text.text(), Some("hi"));
        assert_eq!(text.mime_type.as_deref(), Some("text/plain"));
        let blob = read(json!({"uri": "a://y", "blob": "AAEC"})).expect("blob");
        assert_eq!(blob.body, ResourceBody::Blob(vec![0, 1, 2]));
        assert_eq!(blob.bytes(), [0, 1, 2]);
        assert_eq!(
            serde_json::to_value(&blob).expect("serializes"),
            json!({"uri": "a://y", "blob": "AAEC"})
        );
        for bad in [
            json!({"uri": "a://z", "blob": "not base64!"}),
            json!({"uri": "a://z"}),
            json!({"uri": "a://z", "text": "t", "blob": "AAEC"}),
        ] {
            assert!(read(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn caching_of_several_pages_is_what_holds_for_all() {
        let public = |ttl| Caching {
            ttl_ms: ttl,
            scope: CacheScope::Public,
        };
        assert_eq!(
            public(Some(5_000)).merge(public(Some(3_000))),
            public(Some(3_000))
        );
        assert_eq!(public(Some(5_000)).merge(public(None)).ttl_ms, None);
        assert_eq!(
            public(None).merge(Caching::default()).scope,
            CacheScope::Private
        );
        let object = json!({"ttlMs": 60_000, "cacheScope": "public"});
        assert_eq!(
            Caching::of(object.as_object().expect("object")),
            public(Some(60_000))
        );
        assert_eq!(Caching::of(&JsonObject::new()), Caching::default());
    }

    #[test]
    fn prompt_arguments_must_be_strings() {
        assert!(string_object(json!({"a": "1"})).is_ok());
        for bad in [json!({"a": 1}), json!(["a"]), json!("a")] {
            assert!(
                matches!(string_object(&bad), Err(ClientError::InvalidArgument(_))),
                "{bad}"
            );
        }
    }
}
