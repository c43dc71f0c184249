//! Resources and resource templates (MCP 2026-07-28 resources:
//! <https://modelcontextprotocol.io/specification/2026-07-28/server/resources>).

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use futures_util::future::BoxFuture;
use futures_util::FutureExt as _;
use serde_json::{json, Value};
use tasks_core::catalog::UriTemplate;
use tasks_core::{JsonObject, JsonRpcError};

use super::completion::Completer;
use crate::scope::Principal;

/// What a resource's reader is handed.
#[derive(Debug, Clone)]
pub struct ReadRequest {
    /// The URI the client asked for.
    pub uri: String,
    /// For a template's reader, its variables read from the URI ([`UriTemplate::matches`]);
    /// empty for a static resource.
    pub variables: BTreeMap<String, String>,
    /// The caller, when the request was authenticated.
    pub principal: Option<Principal>,
}

impl ReadRequest {
    /// Variable `name` of a template's URI, checked to be one safe path segment
    /// ([`tasks_core::catalog::is_segment`]: not empty, not `.` or `..`, no `/`, `\` or control
    /// character). A simple variable is percent-decoded, so `docs://pages/%2e%2e%2Fsecret`
    /// hands `../secret` to a reader that reads [`variables`](Self::variables) directly; use
    /// this wherever a value names a file, a directory or a key in a tree.
    ///
    /// # Errors
    /// [`ReadError::NotFound`] when the template has no such variable or its value is not a
    /// segment, so the client gets -32602 `Resource not found` with `data.uri`, as for any URI
    /// nothing is at.
    pub fn segment(&self, name: &str) -> Result<&str, ReadError> {
        self.variables
            .get(name)
            .map(String::as_str)
            .filter(|value| tasks_core::catalog::is_segment(value))
            .ok_or(ReadError::NotFound)
    }
}

/// One item of a `resources/read` result's `contents`: text or bytes under a URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceContents {
    /// The URI of these contents (usually the one asked for).
    pub uri: String,
    /// The MIME type, e.g. `text/plain`.
    pub mime_type: Option<String>,
    /// The contents.
    pub body: Body,
}

/// The contents of a [`ResourceContents`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// UTF-8 text: `"text"` on the wire.
    Text(String),
    /// Bytes: `"blob"` on the wire, base64-encoded.
    Blob(Vec<u8>),
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, mime_type: &str, text: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.to_owned()),
            body: Body::Text(text.into()),
        }
    }

    /// Binary contents.
    pub fn blob(uri: impl Into<String>, mime_type: &str, bytes: impl Into<Vec<u8>>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.to_owned()),
            body: Body::Blob(bytes.into()),
        }
    }

    /// The wire shape: `{"uri", "mimeType"?, "text" | "blob"}`.
    pub fn to_json(&self) -> Value {
        let mut item = JsonObject::new();
        item.insert("uri".into(), Value::from(self.uri.as_str()));
        if let Some(mime) = &self.mime_type {
            item.insert("mimeType".into(), Value::from(mime.as_str()));
        }
        match &self.body {
            Body::Text(text) => item.insert("text".into(), Value::from(text.as_str())),
            Body::Blob(bytes) => item.insert("blob".into(), Value::from(STANDARD.encode(bytes))),
        };
        Value::Object(item)
    }
}

/// Why a read gave no contents.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    /// The resource does not exist (a template that covers the URI but has nothing there):
    /// -32602 `Resource not found` with `data.uri`.
    #[error("resource not found")]
    NotFound,
    /// Another JSON-RPC error: -32602 is answered with the reader's message (a request the
    /// reader refuses); any other code is -32603 `Resource read failed`, the reader's message
    /// kept from the client as exception text is.
    #[error("{}", .0.message)]
    Rpc(JsonRpcError),
}

/// The future a reader returns.
pub type ReadFuture = BoxFuture<'static, Result<Vec<ResourceContents>, ReadError>>;

/// A resource's reader.
pub(crate) type Reader = Arc<dyn Fn(ReadRequest) -> ReadFuture + Send + Sync>;

fn reader<F, Fut>(read: F) -> Reader
where
    F: Fn(ReadRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ResourceContents>, ReadError>> + Send + 'static,
{
    Arc::new(move |request| read(request).boxed())
}

/// What `resources/list` and `resources/templates/list` show of an item.
#[derive(Debug, Clone, Default)]
struct Listing {
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
}

impl Listing {
    fn fill(&self, item: &mut JsonObject) {
        item.insert("name".into(), Value::from(self.name.as_str()));
        for (key, value) in [
            ("title", &self.title),
            ("description", &self.description),
            ("mimeType", &self.mime_type),
        ] {
            if let Some(value) = value {
                item.insert(key.into(), Value::from(value.as_str()));
            }
        }
    }
}

/// A resource with a fixed URI, listed in `resources/list`.
///
/// ```
/// use tasks_runtime::catalog::Resource;
///
/// let readme = Resource::text("docs://readme", "readme", "text/markdown", "# Hello")
///     .with_description("The project's README");
/// assert_eq!(readme.uri(), "docs://readme");
/// ```
#[derive(Clone)]
pub struct Resource {
    uri: String,
    listing: Listing,
    reader: Reader,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

impl Resource {
    /// A resource whose contents `read` produces on each `resources/read`.
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(ReadRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ReadError>> + Send + 'static,
    {
        Resource {
            uri: uri.into(),
            listing: Listing {
                name: name.into(),
                ..Listing::default()
            },
            reader: reader(read),
        }
    }

    /// A resource whose contents are always `text` of `mime_type`.
    pub fn text(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: &str,
        text: impl Into<String>,
    ) -> Self {
        let uri = uri.into();
        let contents = ResourceContents::text(uri.clone(), mime_type, text);
        Resource::new(uri, name, move |_| {
            let contents = contents.clone();
            async move { Ok(vec![contents]) }
        })
        .with_mime_type(mime_type)
    }

    /// A resource whose contents are always `bytes` of `mime_type`.
    pub fn blob(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: &str,
        bytes: impl Into<Vec<u8>>,
    ) -> Self {
        let uri = uri.into();
        let contents = ResourceContents::blob(uri.clone(), mime_type, bytes);
        Resource::new(uri, name, move |_| {
            let contents = contents.clone();
            async move { Ok(vec![contents]) }
        })
        .with_mime_type(mime_type)
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.listing.description = Some(description.into());
        self
    }

    /// Sets the title (a display name).
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.listing.title = Some(title.into());
        self
    }

    /// Sets the MIME type listed.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.listing.mime_type = Some(mime_type.into());
        self
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.listing.name
    }

    /// The `resources/list` entry: `{"uri", "name", "title"?, "description"?, "mimeType"?}`.
    pub fn to_json(&self) -> Value {
        let mut item = JsonObject::new();
        item.insert("uri".into(), Value::from(self.uri.as_str()));
        self.listing.fill(&mut item);
        Value::Object(item)
    }

    pub(crate) fn read(&self, request: ReadRequest) -> ReadFuture {
        (self.reader)(request)
    }
}

/// A family of resources under a URI template (RFC 6570 levels 1–2, read back as
/// [`UriTemplate`] says), listed in `resources/templates/list`; its variables may have
/// completions (`completion/complete` with `ref/resource`).
///
/// ```
/// use tasks_runtime::catalog::{ResourceContents, ResourceTemplate};
///
/// let rows = ResourceTemplate::new("db://tables/{table}", "table", |request| async move {
///     let table = &request.variables["table"];
///     Ok(vec![ResourceContents::text(request.uri.clone(), "text/plain", format!("rows of {table}"))])
/// });
/// assert_eq!(rows.uri_template(), "db://tables/{table}");
/// ```
#[derive(Clone)]
pub struct ResourceTemplate {
    template: UriTemplate,
    listing: Listing,
    reader: Reader,
    pub(crate) completers: BTreeMap<String, Completer>,
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("uri_template", &self.template.as_str())
            .finish_non_exhaustive()
    }
}

impl ResourceTemplate {
    /// A template whose resources `read` produces, handed the variables.
    ///
    /// # Panics
    /// When `uri_template` is not a template of RFC 6570 levels 1–2 as [`UriTemplate::parse`]
    /// reads them (a programming error, found when the server is built).
    pub fn new<F, Fut>(uri_template: &str, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(ReadRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ReadError>> + Send + 'static,
    {
        let template = match UriTemplate::parse(uri_template) {
            Ok(template) => template,
            Err(error) => panic!("{error}"),
        };
        ResourceTemplate {
            template,
            listing: Listing {
                name: name.into(),
                ..Listing::default()
            },
            reader: reader(read),
            completers: BTreeMap::new(),
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.listing.description = Some(description.into());
        self
    }

    /// Sets the title (a display name).
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.listing.title = Some(title.into());
        self
    }

    /// Sets the MIME type listed.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.listing.mime_type = Some(mime_type.into());
        self
    }

    /// Completes variable `variable` with `completer`.
    ///
    /// # Panics
    /// When the template has no such variable.
    pub fn complete(mut self, variable: &str, completer: Completer) -> Self {
        assert!(
            self.template.variables().any(|v| v == variable),
            "resource template {} has no variable {variable}",
            self.template.as_str()
        );
        self.completers.insert(variable.to_owned(), completer);
        self
    }

    /// The template text.
    pub fn uri_template(&self) -> &str {
        self.template.as_str()
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.listing.name
    }

    /// The template's variable names, in template order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.template.variables()
    }

    /// The variables' values when `uri` is one of this template's resources.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        self.template.matches(uri)
    }

    /// The `resources/templates/list` entry: `{"uriTemplate", "name", "title"?,
    /// "description"?, "mimeType"?}`.
    pub fn to_json(&self) -> Value {
        let mut item = JsonObject::new();
        item.insert("uriTemplate".into(), json!(self.template.as_str()));
        self.listing.fill(&mut item);
        Value::Object(item)
    }

    pub(crate) fn read(&self, request: ReadRequest) -> ReadFuture {
        (self.reader)(request)
    }
}
